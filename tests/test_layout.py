"""DESIGN §2: imports point only down the table. A module that wants to import upward is in the wrong package."""

import ast
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.module_graph import DESIGN, OURS, ROOT, module_graph, room_of

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


def test_no_module_imports_itself_through_others() -> None:
    import networkx as nx

    circles = sorted(" -> ".join(c) for c in nx.simple_cycles(nx.DiGraph(module_graph())))
    assert circles == []


def test_no_arrow_inside_the_orchestrator_runs_back_up() -> None:
    """DESIGN §2: the orchestrator's rooms (its folders and top-level modules) import one another in one direction
    only, so they stack into floors. Two rooms that import each other, directly or around a loop, mean a concept
    in the wrong room. Each such pair is named here with its reason, or it fails."""
    import networkx as nx

    rooms: nx.DiGraph[str] = nx.DiGraph()
    arrows: dict[tuple[str, str], list[str]] = {}
    for module, targets in module_graph().items():
        if not module.startswith("orchestrator."):
            continue
        for target in targets:
            if target.startswith("orchestrator.") and room_of(target) != room_of(module):
                rooms.add_edge(room_of(module), room_of(target))
                arrows.setdefault((room_of(module), room_of(target)), []).append(f"{module} -> {target}")
    circles = [
        [f"{a} -> {b}: {', '.join(sorted(arrows[a, b]))}" for a, b in zip(c, [*c[1:], c[0]], strict=True)]
        for c in nx.simple_cycles(rooms)
    ]
    assert circles == []


ASYNCIO_EXEMPT = {"tests/support/acp_sdk_client.py"}
"""The ACP SDK's client side, asyncio only, which the ACP tests run in a process of its own (it is no part of the
product)."""


def test_nothing_imports_asyncio() -> None:
    """Trio only: no module of the product or of the tests imports asyncio, except the one exempt file."""
    found = []
    for path in sorted(ROOT.glob("*/**/*.py")):
        rel = str(path.relative_to(ROOT))
        if rel.split("/")[0] not in (*OURS, "tests", "bench", "examples") or rel in ASYNCIO_EXEMPT:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            if any(n == "asyncio" or n.startswith("asyncio.") for n in names):
                found.append(rel)
    assert found == []


def test_no_two_public_classes_share_a_name() -> None:
    """One name per concept: a public class name (no leading ``_``) is defined in one module of the four packages,
    so an import, a traceback or a search names one thing. Two concepts that want one name want two names."""
    homes: dict[str, list[str]] = {}
    for package in OURS:
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    homes.setdefault(node.name, []).append(str(path.relative_to(ROOT)))
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


# ------------------------------------------------------------------------------------------ public names (__all__)

PUBLIC: dict[str, list[str]] = {
    "orchestrator": [
        "acp",
        "api",
        "bench",
        "branches",
        "build",
        "checkpoints",
        "cli",
        "config",
        "conversation",
        "errors",
        "events",
        "goal",
        "headless",
        "mcp",
        "policy",
        "repl",
        "replay",
        "review",
        "runs",
        "serve",
        "summary",
        "text",
        "ui",
    ],
    "orchestrator.cli": ["commands", "main"],
    "orchestrator.acp": ["AcpAgent", "Connection", "RpcError", "serve_stdio"],
    "orchestrator.api": [
        "ApiConversation",
        "AssistantLine",
        "GoalHandle",
        "ResultLine",
        "ReviewDecision",
        "StreamEventLine",
        "StreamJsonEvent",
        "Summary",
        "SystemInit",
        "SystemNotice",
        "UserLine",
        "approve",
        "cancel",
        "open_conversation",
        "parse_event",
        "revise",
        "run_goal",
        "run_goal_sync",
        "run_task",
        "run_task_sync",
    ],
    "orchestrator.conversation": [
        "ExecutorConversation",
        "conversation_journal",
        "last_conversation",
        "run_task",
        "task_summary",
    ],
    "orchestrator.headless": [
        "SCHEMA_VERSION",
        "HeadlessConversation",
        "HeadlessOptions",
        "ResultLine",
        "StreamJsonEvent",
        "json_schema",
        "parse_event",
    ],
    "orchestrator.extensions": ["CustomCommand", "find_custom_commands", "parse_front_matter"],
    "orchestrator.memory": ["MemoryUpdates", "RememberTool", "remember_note", "with_memory_tools"],
    "orchestrator.subagents": ["Profile", "TaskTool", "find_profiles", "subagent_figures", "with_agents"],
    "orchestrator.repl.slash": [],
    "orchestrator.repl.preferences": [],
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
        "ShadowRepo",
        "StepCheckpoints",
        "apply_undo",
        "plan_undo",
        "take_checkpoint",
    ],
    "orchestrator.runs": ["RunSummary", "estimate_plan", "latest_resumable", "list_runs", "resolve_run"],
    "orchestrator.batch": [
        "BatchError",
        "BatchLedger",
        "BatchRun",
        "GoalResult",
        "GoalSpec",
        "Progress",
        "load_goals",
        "run_local",
        "run_on_ray",
        "run_one_goal",
    ],
    "orchestrator.cli.commands": [
        "acp",
        "batch",
        "bench",
        "chat",
        "checkpoints",
        "code",
        "completion",
        "doctor",
        "emulate",
        "exec_plan",
        "goal",
        "headless",
        "mcp",
        "plan",
        "plans",
        "replay",
        "run",
        "runs",
        "serve",
        "setup",
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
    "orchestrator.unattended": ["UnattendedRun", "notify", "summary_markdown", "write_summary"],
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
    "orchestrator.bench": [
        "BenchError",
        "BenchOptions",
        "Task",
        "TaskCheck",
        "TaskResult",
        "check_suite",
        "check_task",
        "compare",
        "load_suite",
        "load_task",
        "mcnemar_exact",
        "read_results",
        "run_suite",
        "run_task",
        "summarize",
    ],
    "orchestrator.replay": [
        "Recorder",
        "ReplayReport",
        "replay",
        "replay_scenario",
    ],
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
    "orchestrator.text": ["counted", "neutralise", "neutralise_model", "neutralise_text", "shorten"],
    "orchestrator.ui": ["GoalTerminalUI", "JsonLinesRenderer", "TerminalRenderer", "summary_text"],
    "plans": [
        "NO_VERIFY_HINT",
        "acceptance_commands",
        "evidence_problems",
        "unverified_writers",
        "IssueCode",
        "LenientPlan",
        "PLANNER_STEP_FIELDS",
        "Plan",
        "PlanDiff",
        "PlanError",
        "PlanFileError",
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
        "dump_plan",
        "find_issues",
        "load_latest",
        "load_plan_file",
        "paths_overlap",
        "plan_tool_definitions",
        "plan_tool_schema",
        "plan_tool_schema_bytes",
        "plan_tree",
        "prompt_text",
        "read_plan",
        "render_terminal",
        "revise",
        "revision_path",
        "save_revision",
        "step_prompt_text",
        "to_markdown",
        "to_mermaid",
        "validate",
        "verify_text",
        "write_atomic",
    ],
    "scenarios": [
        "Expectations",
        "LIBRARY",
        "LoadedScenario",
        "RecordedExchange",
        "ReviewAnswer",
        "Scenario",
        "ScenarioError",
        "ScenarioSettings",
        "library_paths",
        "load_scenario",
    ],
    "scenarios.emulator": [
        "ModelLimits",
        "ApiError",
        "DEFAULT_MODELS",
        "DropFault",
        "Emulator",
        "EmulatorError",
        "HttpStatusFault",
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
        "Compacted",
        "DiagnosticsReported",
        "JournalRecovered",
        "MessageLog",
        "RepairApplied",
        "RequestStarted",
        "Session",
        "SessionEvent",
        "SessionSettings",
        "StreamUpdate",
        "ToolFinished",
        "ToolStarted",
        "TurnFinished",
        "TurnResult",
        "UsageReported",
    ],
    "sessions.accounting": [
        "CACHE_UNIT_TOKENS",
        "CacheTracker",
        "FamilyPrice",
        "PriceBook",
        "PriceError",
        "RequestDiagnostics",
        "default_price_book",
        "tokens",
    ],
    "sessions.journal": [
        "Journal",
        "read_journal",
    ],
    "sessions.prompt": [
        "Prefix",
        "StandingMemory",
        "TailBlock",
        "build_prefix",
        "compose_user_turn",
        "load_standing_memory",
        "user_config_dir",
    ],
    "sessions.tiers": [
        "Archive",
        "Ladder",
        "RECALL_TOOL",
        "RecallTool",
        "SnipChoice",
        "TokenPrices",
        "markers_in",
        "tiered_registry",
        "with_recall",
    ],
    "sessions.tools.files": [],
    "sessions.tools.gateway": [
        "GIT_DIR",
        "KEPT_OUTPUTS",
        "RESERVED",
        "STATE_DIR",
        "GatewayRoot",
        "Located",
        "Read",
        "ReservedPathError",
    ],
    "sessions.tools.search": [
        "find_rg",
    ],
    "sessions.tools.shell": [
        "HeadTail",
        "JobTable",
        "jobs_of",
        "run_shell",
        "with_jobs",
    ],
    "sessions.tools.web": [
        "WebFetchArgs",
        "WebFetchTool",
    ],
    "sessions.wire": [
        "DEEPSEEK",
        "AssistantMessage",
        "AuthenticationError",
        "Balance",
        "ChatCompletion",
        "ChatRequest",
        "ClientSettings",
        "Completed",
        "ContentDelta",
        "DeepSeekClient",
        "DeepSeekError",
        "FunctionSchema",
        "Message",
        "Provider",
        "ProviderKind",
        "ReasoningDelta",
        "ReasoningEffort",
        "Reply",
        "ReplyRequest",
        "ReplySource",
        "RequestEstimate",
        "RequestGate",
        "RetriesExhaustedError",
        "SseData",
        "SseParser",
        "StreamAssembler",
        "StreamEvent",
        "StreamRestarted",
        "ToolCallArgumentsDelta",
        "ToolCallStarted",
        "ToolSchema",
        "Usage",
        "UserMessage",
        "cache_reported",
        "decode_chunk",
        "is_outage",
        "read_usage",
        "reply_from_completion",
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
        "Bounds",
        "BubblewrapSandbox",
        "DEFAULT_FORBID_READ",
        "DEFAULT_MAX_PROCESSES",
        "DEFAULT_MEMORY_MB",
        "DEFAULT_TMP_MB",
        "INSTALL_HINT",
        "Launch",
        "NoSandbox",
        "SANDBOX_MODES",
        "Sandbox",
        "SandboxMode",
        "SandboxPolicy",
        "Spawned",
        "armed",
        "command_env",
        "describe",
        "executed",
        "kill_launch",
        "read_status",
        "release",
        "sandbox_for",
        "sandbox_unavailable_reason",
        "spawn_server",
        "with_status_pipe",
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
        "Gate",
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
        "current_call_id",
        "default_registry",
        "dispatch",
    ],
}
"""Each package's public surface, sorted. A change to what a package exports shows up here as a visible diff."""

LIGHT_PACKAGES = sorted(p for p in PUBLIC if p.split(".")[0] in ("orchestrator", "sessions", "scenarios", "plans"))
EAGER = (
    "sessions.permissions",
    "sessions.repair",
    "sessions.tools",
    "sessions.tools.files",
    "sessions.tools.gateway",
    "sessions.tools.search",
    "sessions.tools.shell",
    "sessions.tools.web",
    "scenarios.emulator",
)
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


# ------------------------------------------------------------------------------------- the public-surface rule


def _our_modules() -> list[tuple[str, Path]]:
    """Every module of ours but the package faces (``__init__.py``), as (dotted name, path)."""
    return sorted(
        (".".join(path.relative_to(ROOT).with_suffix("").parts), path)
        for package in OURS
        for path in (ROOT / package).rglob("*.py")
        if path.name != "__init__.py"
    )


def _is_module(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _absolute_imports(name: str, path: Path) -> list[tuple[int, str, list[str]]]:
    """(line, module, names) for every import of one of our packages in a module; ``import a.b`` gives names []."""
    package_parts = name.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, []) for alias in node.names if alias.name.split(".")[0] in OURS]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                up = package_parts[: len(package_parts) - node.level + 1]
                module = ".".join([*up, module] if module else up)
            if module.split(".")[0] in OURS:
                found.append((node.lineno, module, [alias.name for alias in node.names]))
    return found


def test_imports_between_packages_name_a_public_surface() -> None:
    """DESIGN §2: an import from another top-level package is ``from P import NAME`` where P is a package of it and NAME
    is in P's ``__all__`` (pinned in PUBLIC above): never a module path, never a name the package does not export."""
    wrong = []
    for name, path in _our_modules():
        for line, module, names in _absolute_imports(name, path):
            if module.split(".")[0] == name.split(".")[0]:
                continue
            where = f"{path.relative_to(ROOT)}:{line}"
            if module not in PUBLIC:
                wrong.append(f"{where}: {module} is a module path, not a package's public surface")
            elif not names:
                wrong.append(f"{where}: import {module}: name what you use, from {module} import NAME")
            else:
                wrong += [f"{where}: {module}.{n} is not in {module}.__all__" for n in names if n not in PUBLIC[module]]
    assert wrong == []


def test_inside_a_package_modules_import_the_module_that_holds_a_name() -> None:
    """A package's face is for the other packages. Inside its own top-level package a module imports from the module
    that defines a name (or names a submodule), so the circle test above sees every arrow that runs."""
    wrong = []
    for name, path in _our_modules():
        for line, module, names in _absolute_imports(name, path):
            if module.split(".")[0] != name.split(".")[0] or module not in PUBLIC:
                continue
            faces = [n for n in names if not _is_module(f"{module}.{n}")]
            if faces:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: from {module} import {', '.join(faces)}")
    assert wrong == []


FACADES = ("orchestrator.api",)
"""Packages whose surface is for programs outside the project (the Python API): they re-export, by design, the
types their users handle (the stream-json events, the review decision, the summary), so a script imports one package."""


def test_every_public_name_lives_in_the_package_that_exports_it() -> None:
    """One home a name: a package exports what its own modules define (or a submodule), so each import has one
    spelling and a name is found in the folder of the package that exports it (the facades excepted)."""
    code = (
        "import importlib, inspect, json\n"
        "wrong = []\n"
        f"for package in {sorted(set(PUBLIC) - set(FACADES))!r}:\n"
        "    module = importlib.import_module(package)\n"
        "    for n in module.__all__:\n"
        "        obj = getattr(module, n)\n"
        "        if inspect.ismodule(obj):\n"
        "            home = obj.__name__.rsplit('.', 1)[0]\n"
        "        elif inspect.isclass(obj) or inspect.isfunction(obj):\n"
        "            defined = importlib.import_module(obj.__module__)\n"
        "            home = obj.__module__ if hasattr(defined, '__path__') else obj.__module__.rsplit('.', 1)[0]\n"
        "        else:\n"
        "            continue\n"
        "        if home != package:\n"
        "            wrong.append(f'{package}.{n} is defined in {home}')\n"
        "print(json.dumps(wrong))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


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
ONE_MODULE_PER_COMMAND = ROOT / "orchestrator" / "cli" / "commands"
"""Exempt from the folder rule: it holds exactly one module per ``reasonix`` subcommand (pinned below), so its size is
the CLI's, not a concern's."""

LONG_MODULES = {"scenarios/library/_repos.py": 514}
"""Modules named past the bound, each held to the size it has (DESIGN §2): the scenarios' repositories are file
texts, one family after another. Delete a row when its module is split."""


def _folders(package: str) -> list[Path]:
    return sorted({p.parent for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts})


@pytest.mark.parametrize("package", OURS)
def test_every_folder_holds_at_most_twelve_modules(package: str) -> None:
    crowded = {}
    for folder in _folders(package):
        modules = [p.name for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > MAX_MODULES_PER_FOLDER and folder != ONE_MODULE_PER_COMMAND:
            crowded[str(folder.relative_to(ROOT))] = len(modules)
    assert crowded == {}


def test_the_commands_folder_holds_one_module_per_command_and_nothing_else() -> None:
    from orchestrator.cli.main import COMMANDS

    modules = sorted(p.stem for p in ONE_MODULE_PER_COMMAND.glob("*.py") if p.name != "__init__.py")
    assert modules == sorted(module.rsplit(".", 1)[1] for module, _ in COMMANDS.values())


@pytest.mark.parametrize("package", OURS)
def test_no_module_is_over_450_lines(package: str) -> None:
    long = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        name = str(path.relative_to(ROOT))
        if lines > LONG_MODULES.get(name, MAX_MODULE_LINES):
            long[name] = lines
    assert long == {}


@pytest.mark.parametrize("package", [*OURS, "tests"])
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

TEXT_SUFFIXES = {".py", ".md", ".toml", ".json", ".txt", ".cfg", ".yml", ".yaml"}
_CITATION = re.compile(r"DESIGN(?:\.md)? §(\d+(?:\.\d+)?)")
_HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", re.MULTILINE)


def _text_files() -> list[Path]:
    roots = [ROOT / p for p in (*OURS, "tests", "bench", "docs")]
    files = [p for r in roots for p in r.rglob("*") if p.suffix in TEXT_SUFFIXES and p.is_file()]
    files += [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "pyproject.toml"]
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


# ------------------------------------------------------------------------------------ one conversation engine

CONVERSATION_ENGINE = "orchestrator/conversation/engine.py"
"""The one module that builds the executor conversation's session (and a chat's), through
:func:`orchestrator.launch.open_conversation`."""
JOURNAL_NAMERS = {
    "orchestrator/conversation/turn_log.py": "defines the conversation's journal name",
    "orchestrator/goal/store.py": "a goal's own executor journal",
    "orchestrator/runs/history.py": "reads journals for `reasonix runs`",
}


def _calls_and_names(path: Path) -> tuple[set[str], set[str]]:
    """The names ``path`` calls, and the string constants it holds outside docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    called, strings = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            called.add(func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else "")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            strings.add(node.value)
    return called, strings


def test_the_executor_conversation_is_built_in_one_module() -> None:
    """Every front end opens its conversation through ``open_conversation``; no second module builds the executor
    session (``build_executor``, a chat's ``build_chat``) or names its journal (``executor.jsonl``)."""
    builders, namers = {}, {}
    for path in sorted((ROOT / "orchestrator").rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        called, strings = _calls_and_names(path)
        found = called & {"build_executor", "build_chat"}
        if found and rel != CONVERSATION_ENGINE:
            builders[rel] = sorted(found)
        if any(s.endswith("executor.jsonl") for s in strings) and rel not in JOURNAL_NAMERS:
            namers[rel] = "executor.jsonl"
    assert builders == {}
    assert namers == {}
    assert not (ROOT / "orchestrator" / "task").exists()


def test_the_one_module_check_sees_a_second_builder(tmp_path: Path) -> None:
    """The check above would see a front end that built the session itself (it reads calls and strings)."""
    rogue = tmp_path / "rogue.py"
    rogue.write_text(
        '"""executor.jsonl in a docstring is no journal."""\n'
        "def f(build_executor, run_dir):\n"
        '    return build_executor(journal_path=run_dir / "executor.jsonl")\n'
    )
    called, strings = _calls_and_names(rogue)
    assert "build_executor" in called and "executor.jsonl" in strings
    quiet = tmp_path / "quiet.py"
    quiet.write_text('"""executor.jsonl"""\n')
    assert _calls_and_names(quiet) == (set(), set())
