"""DESIGN §2: imports point only down the table. A module that wants to import upward is in the wrong package."""

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = ("orchestrator", "sessions", "plans", "scenarios")
ALLOWED = {
    "sessions": set(),
    "plans": set(),
    "scenarios": {"sessions"},
    "orchestrator": {"sessions", "plans", "scenarios"},
}


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found & set(OURS)


@pytest.mark.parametrize("package", OURS)
def test_imports_point_down_the_table(package: str) -> None:
    wrong = {
        str(path.relative_to(ROOT)): sorted(_imports(path) - ALLOWED[package] - {package})
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {k: v for k, v in wrong.items() if v} == {}


def _module_graph() -> dict[str, set[str]]:
    """Every module of ours (package ``__init__`` files aside: they only re-export) and the modules it imports, at
    module level, under ``TYPE_CHECKING`` or inside a function alike: a circle hidden in a function is still one."""
    modules: dict[str, Path] = {}
    for package in OURS:
        for path in (ROOT / package).rglob("*.py"):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] != "__init__":
                modules[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package_parts = name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package_parts[: len(package_parts) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets |= {base, *(f"{base}.{alias.name}" for alias in node.names)}
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def test_no_module_imports_itself_through_others() -> None:
    import networkx as nx

    circles = sorted(" -> ".join(c) for c in nx.simple_cycles(nx.DiGraph(_module_graph())))
    assert circles == []


# ------------------------------------------------------------------------------------------ public names (__all__)

PUBLIC: dict[str, list[str]] = {
    "orchestrator": [
        "branches",
        "build",
        "checkpoints",
        "cli",
        "config",
        "errors",
        "events",
        "goal",
        "mcp",
        "policy",
        "replay",
        "repl",
        "review",
        "serve",
        "summary",
        "task",
        "ui",
    ],
    "orchestrator.cli": ["commands", "main"],
    "orchestrator.extensions": ["CustomCommand", "find_custom_commands", "parse_front_matter"],
    "orchestrator.memory": ["MemoryUpdates", "RememberTool", "remember_note", "with_memory_tools"],
    "orchestrator.subagents": ["Profile", "TaskTool", "find_profiles", "subagent_figures", "with_agents"],
    "orchestrator.hooks": ["HookAnswer", "HookGate", "Hooks", "hooked_send"],
    "orchestrator.mcp": ["McpHub", "McpTool", "ServerReport"],
    "orchestrator.branches": ["BranchError", "BranchWorkspace", "MergeOutcome"],
    "orchestrator.goal.parallel": ["open_fork", "run_wave"],
    "orchestrator.checkpoints": [
        "Checkpoint",
        "CheckpointError",
        "GitUnavailableError",
        "Ledger",
        "NothingToUndoError",
        "RunSummary",
        "ShadowRepo",
        "StepCheckpoints",
        "apply_undo",
        "estimate_plan",
        "latest_resumable",
        "list_runs",
        "plan_undo",
        "resolve_run",
        "take_checkpoint",
    ],
    "orchestrator.cli.commands": [
        "checkpoints",
        "code",
        "completion",
        "doctor",
        "emulate",
        "exec_plan",
        "goal",
        "mcp",
        "plan",
        "plans",
        "replay",
        "run",
        "runs",
        "serve",
        "trust",
        "undo",
    ],
    "orchestrator.config": [
        "ClientConfig",
        "Config",
        "ModelsConfig",
        "PricesConfig",
        "ResolvedConfig",
        "load_config",
        "user_config_path",
    ],
    "orchestrator.goal": [
        "GoalOptions",
        "GoalOutcome",
        "GoalRecord",
        "GoalRunner",
        "RunNotFoundError",
        "RunStore",
        "executor_tools",
        "planner_tools",
    ],
    "orchestrator.policy": [
        "Budget",
        "BudgetExceeded",
        "BudgetTracker",
        "BudgetUsage",
        "EscalationPolicy",
        "Escalator",
        "MarkerDetector",
        "ProgressTracker",
        "StuckVerdict",
        "VerifyError",
        "find_marker",
        "run_verify",
        "verify_feedback",
        "workspace_fingerprint",
    ],
    "orchestrator.replay": ["Recorder", "ReplayReport", "replay", "replay_scenario"],
    "orchestrator.repl": [
        "CYCLE",
        "Conversation",
        "Mode",
        "NothingToContinueError",
        "ReplOptions",
        "apply_mode",
        "last_run_id",
        "mode_block",
        "next_mode",
        "run_loop",
    ],
    "orchestrator.review": [
        "AutoApprove",
        "PlanDocumentError",
        "ReviewDecision",
        "Reviewer",
        "ScriptedReviewer",
        "TerminalReviewer",
        "edit_plan",
        "make_reviewer",
        "require_interactive",
    ],
    "orchestrator.serve": [
        "ApiReviewer",
        "EventLog",
        "GoalManager",
        "ServeError",
        "create_app",
        "open_manager",
        "serve_app",
    ],
    "orchestrator.task": ["RunSummary", "TaskRun"],
    "orchestrator.ui": ["GoalTerminalUI", "JsonLinesRenderer", "TerminalRenderer", "counted", "summary_text"],
    "plans": [
        "IssueCode",
        "LenientPlan",
        "Plan",
        "PlanDiff",
        "PlanError",
        "PlanGraph",
        "PlanIssue",
        "PlanReadError",
        "PlanRevisionError",
        "PlanStorageError",
        "PlanValidationError",
        "REVISE_PLAN",
        "Risk",
        "SUBMIT_PLAN",
        "Step",
        "StepStatus",
        "VerifyCommand",
        "diff",
        "diff_text",
        "find_issues",
        "plan_tool_definitions",
        "plan_tool_schema",
        "plan_tool_schema_bytes",
        "read_plan",
        "revise",
        "validate",
    ],
    "scenarios": ["LoadedScenario", "Scenario", "ScenarioError", "library_paths", "load_scenario"],
    "scenarios.emulator": [
        "ApiError",
        "DEFAULT_MODELS",
        "Emulator",
        "EmulatorError",
        "LatencyModel",
        "ReplySpec",
        "RunningEmulator",
        "Script",
        "ScriptExhausted",
        "ScriptInvalid",
        "SessionSpec",
        "ToolCallSpec",
        "fingerprint",
        "open_emulator",
        "serve",
    ],
    "scenarios.library": [],
    "sessions": [
        "CacheTracker",
        "ClientSettings",
        "DeepSeekClient",
        "DeepSeekError",
        "Journal",
        "MessageLog",
        "Prefix",
        "PriceBook",
        "Reply",
        "ReplySource",
        "RequestDiagnostics",
        "Session",
        "SessionEvent",
        "SessionSettings",
        "StandingMemory",
        "StreamEvent",
        "TailBlock",
        "TurnResult",
        "build_prefix",
        "compose_user_turn",
        "default_price_book",
        "load_standing_memory",
        "read_journal",
        "stream_reply",
    ],
    "sessions.permissions": [
        "Answer",
        "ApprovalMode",
        "Asker",
        "PermissionGate",
        "Question",
        "Rule",
        "RuleError",
        "Rules",
        "Verdict",
        "split_command",
    ],
    "sessions.sandbox": [
        "BASE_ENV",
        "BubblewrapSandbox",
        "DEFAULT_FORBID_READ",
        "INSTALL_HINT",
        "Launch",
        "NoSandbox",
        "SANDBOX_MODES",
        "Sandbox",
        "SandboxMode",
        "SandboxPolicy",
        "command_env",
        "describe",
        "sandbox_for",
        "sandbox_unavailable_reason",
    ],
    "sessions.repair": [
        "BatchItem",
        "FlatMap",
        "ImmediateResult",
        "ModelArgumentsError",
        "ParsedArguments",
        "PreparedBatch",
        "RepairError",
        "RepairEvent",
        "RepairKind",
        "RepairedCall",
        "ScavengedCall",
        "StormGuard",
        "StormVerdict",
        "ToolSchemaError",
        "flatten_args",
        "flatten_schema",
        "parse_arguments",
        "prepare_calls",
        "repair_note",
        "scavenge_calls",
        "unflatten_args",
    ],
    "sessions.tools": [
        "DuplicateToolError",
        "EditMismatchError",
        "PreparedCall",
        "Tool",
        "ToolArgs",
        "ToolContext",
        "ToolError",
        "ToolInputError",
        "ToolLimits",
        "ToolRegistry",
        "ToolResult",
        "WorkspaceEscapeError",
        "default_registry",
        "dispatch",
    ],
}
"""Each package's public surface, sorted. A change to what a package exports shows up here as a visible diff."""

LIGHT_PACKAGES = sorted(p for p in PUBLIC if p.split(".")[0] in ("orchestrator", "sessions", "scenarios"))
EAGER = ("sessions.permissions", "sessions.repair", "sessions.tools", "scenarios.emulator")
"""Packages that import their modules at once: never imported by ``reasonix --help``."""
LIGHT_PACKAGES = [p for p in LIGHT_PACKAGES if p not in EAGER]
HEAVY = ("trio", "httpx", "pydantic", "rich", "tenacity", "tokenizers")


def _packages() -> list[str]:
    return sorted(
        ".".join(init.parent.relative_to(ROOT).parts)
        for package in OURS
        for init in (ROOT / package).rglob("__init__.py")
    )


def test_every_package_pins_its_public_names() -> None:
    assert _packages() == sorted(PUBLIC), "a package was added or removed: state its __all__ and pin it in PUBLIC"


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_public_names_are_exactly_the_pinned_ones(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__doc__ and len(module.__doc__.split()) >= 20, f"{package} needs a docstring saying what it holds"
    names = list(module.__all__)
    assert len(names) == len(set(names)), f"{package}.__all__ repeats a name"
    assert sorted(names) == sorted(PUBLIC[package])


def test_every_public_name_resolves() -> None:
    """``from package import *`` gives every name of ``__all__``, lazily loaded ones included (one fresh process)."""
    code = (
        "import importlib, json\n"
        "missing = {}\n"
        f"for package in {sorted(PUBLIC)!r}:\n"
        "    module = importlib.import_module(package)\n"
        "    namespace = {}\n"
        "    exec(f'from {package} import *', namespace)\n"
        "    gone = [n for n in module.__all__ if n not in namespace or namespace[n] is None]\n"
        "    if gone:\n"
        "        missing[package] = gone\n"
        "print(json.dumps(missing))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "{}"


def test_importing_a_package_and_building_the_cli_loads_nothing_heavy() -> None:
    """``reasonix --help`` imports the orchestrator packages and every command module: none may pull in a dependency."""
    code = (
        "import importlib, sys\n"
        f"for package in {LIGHT_PACKAGES!r}:\n"
        "    importlib.import_module(package)\n"
        "from orchestrator.cli.main import build_parser\n"
        "build_parser()\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# ------------------------------------------------------------------------------------------------ sizes

MAX_MODULES_PER_FOLDER = 12
MAX_MODULE_LINES = 450
MAX_CLASS_LINES = 300
COMMANDS_FOLDER = ROOT / "orchestrator" / "cli" / "commands"
"""One module per subcommand by design (its __init__ says so): it grows with the command line, not with a concern."""


ONE_MODULE_PER_COMMAND = ROOT / "orchestrator" / "cli" / "commands"
"""Exempt: it holds exactly one module per ``reasonix`` subcommand (pinned above), so its size is the CLI's."""


def test_orchestrator_folders_hold_at_most_twelve_modules() -> None:
    crowded = {}
    for folder in sorted({p.parent for p in (ROOT / "orchestrator").rglob("*.py")} - {ONE_MODULE_PER_COMMAND}):
        modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > MAX_MODULES_PER_FOLDER and folder != COMMANDS_FOLDER:
            crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert crowded == {}


def test_the_commands_folder_holds_one_module_per_command_and_nothing_else() -> None:
    from orchestrator.cli.main import COMMANDS

    modules = sorted(p.stem for p in ONE_MODULE_PER_COMMAND.glob("*.py") if p.name != "__init__.py")
    assert modules == sorted(module.rsplit(".", 1)[1] for module, _ in COMMANDS.values())


def test_no_orchestrator_module_is_over_450_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in sorted((ROOT / "orchestrator").rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


@pytest.mark.parametrize("package", OURS)
def test_no_class_is_over_300_lines(package: str) -> None:
    long = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_CLASS_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    assert long == {}


# ------------------------------------------------------------------------------------- the repository stands alone

DESIGN = ROOT / "docs" / "DESIGN.md"
TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".cfg", ".yml", ".yaml"}
_CITATION = re.compile(r"DESIGN(?:\.md)? §(\d+(?:\.\d+)?)")
_HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", re.MULTILINE)


def _text_files() -> list[Path]:
    roots = [ROOT / p for p in (*OURS, "tests", "bench", "docs")]
    files = [p for r in roots for p in r.rglob("*") if p.suffix in TEXT_SUFFIXES and p.is_file()]
    files += [ROOT / "README.md", ROOT / "pyproject.toml"]
    return sorted(p for p in files if "__pycache__" not in p.parts and "fixtures" not in p.parts)


def test_every_design_citation_names_a_section_of_the_design_document() -> None:
    sections = set(_HEADING.findall(DESIGN.read_text(encoding="utf-8")))
    dangling = {
        f"{path.relative_to(ROOT)}: §{number}"
        for path in _text_files()
        for number in _CITATION.findall(path.read_text(encoding="utf-8"))
        if number not in sections
    }
    assert dangling == set()


def test_nothing_refers_to_a_file_outside_the_repository() -> None:
    outside = re.compile("|".join([r"\.\./" + "shared", "/" + "work/", "shared/" + "DESIGN"]))
    found = {
        f"{path.relative_to(ROOT)}:{number}"
        for path in _text_files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if outside.search(line)
    }
    assert found == set()
