"""The interactive conversation (``reasonix code``): one executor session, built exactly as ``reasonix run`` builds
it, fed one user turn at a time from the input line, its replies streamed by the same renderer as ``run``.

* Ctrl-C during a turn cancels the turn and keeps the session (it is rebuilt from its journal, which mends a turn cut
  off mid-way by appending, so the next request still hits the cache; the cache tracker of the session goes on, so
  the next turn is not explained as the first after a resume); a second Ctrl-C before the turn has unwound exits at
  once. At the prompt Ctrl-C clears the line; on an empty line it asks for a second press, which exits,
  like Ctrl-D on an empty line.
* ``--continue`` reopens the last conversation of the workspace from its journal (``.reasonix/repl.json`` names it).
"""

from __future__ import annotations

import json
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

import trio
from prompt_toolkit.formatted_text import FormattedText
from rich.console import Console
from rich.text import Text

from orchestrator.build import RunOptions, build_client, build_executor, resolve_model, run_dir
from orchestrator.checkpoints.turns import TurnCheckpoints, TurnRef
from orchestrator.config.files import read_state_bytes
from orchestrator.config.model import ResolvedConfig
from orchestrator.events import SubagentFinished
from orchestrator.executor_prompt import EXECUTOR_RUN_SYSTEM
from orchestrator.extensions.allowed_tools import CommandTools
from orchestrator.extensions.skill_watch import watch_for
from orchestrator.goal.store import RunStore, new_run_id, run_state_dir, state_subdir
from orchestrator.hooks.turns import PromptBlocked, hooked_send
from orchestrator.memory.notes import MemoryUpdates
from orchestrator.policy.commands import CommandSetup
from orchestrator.repl.mentions import attach
from orchestrator.repl.modes import Mode, apply_mode, mode_block, next_mode
from orchestrator.repl.preferences.price import price_parts
from orchestrator.repl.preferences.style import language_block, styled
from orchestrator.repl.turn_log import TurnLog, TurnRecord
from orchestrator.repl.typeahead import with_turn_keys
from orchestrator.subagents.runner import SESSION_PREFIX
from orchestrator.text.wording import counted
from orchestrator.ui.stream import TerminalRenderer
from plans import write_atomic
from sessions import Session, SessionEvent, UsageReported
from sessions.prompt import TailBlock
from sessions.tools.shell import jobs_of
from sessions.wire import DeepSeekClient, DeepSeekError

MAX_FILES_KEPT = 8
"""Files a turn changed, named in its record (the picker of /rewind shows them)."""
LAST_FILE = "repl.json"
"""Under ``.reasonix/``: the run id of the workspace's latest conversation, for ``--continue``."""


class NothingToContinueError(Exception):
    """The user is at fault: ``--continue`` in a workspace without an earlier conversation."""


@dataclass
class ReplOptions:
    model: str = "flash"
    mode: Mode = "ask"
    resume: bool = False
    run_id: str | None = None
    """With ``resume``: the conversation to reopen (None: the last one)."""
    base_url: str | None = None
    sandbox: str | None = None


def last_run_id(workspace: Path) -> str | None:
    path = workspace / ".reasonix" / LAST_FILE
    try:
        data = json.loads(read_state_bytes(workspace, path).decode("utf-8"))
    except (OSError, ValueError):
        return None
    run_id = data.get("run_id") if isinstance(data, dict) else None
    return run_id if isinstance(run_id, str) else None


class Conversation:
    """The state of one ``reasonix code`` invocation; :meth:`run` is the loop."""

    offered: tuple[str, ...] | None = None
    """The slash commands /help lists (``None``: all of them; ``reasonix chat`` offers fewer)."""
    has_modes = True
    """Shift+Tab cycles modes and Esc Esc rewinds (``reasonix chat`` has neither)."""

    def __init__(
        self,
        *,
        workspace: Path,
        resolved: ResolvedConfig,
        commands: CommandSetup,
        console: Console,
        options: ReplOptions,
        client: DeepSeekClient | None = None,
    ) -> None:
        self.workspace = workspace
        self.resolved = resolved
        self.commands = commands
        self.console = console
        self.options = options
        self.renderer = TerminalRenderer(console, footer_per_turn=True)  # the status line has the running figures
        self.client: DeepSeekClient = client or build_client(resolved, model=options.model)
        self.model = resolve_model(resolved.config, options.model)
        self.mode: Mode = options.mode
        self.sent_mode: Mode | None = None
        """The mode the model last heard of (None: not yet in this process)."""
        self.pro_next = False
        self.preset: str | None = None
        """The escalation preset of /plan and /goal (flash, auto, pro); ``None``: the configured default."""
        self.turn_scope: trio.CancelScope | None = None
        self.goal_cost_usd = 0.0
        self.goal_requests = 0
        """What ``/plan`` and ``/goal`` spent in their own sessions (planner, executor) from this conversation."""
        self.subagent_cost_usd = 0.0
        self.subagent_requests = 0
        """What the ``task`` tool's subagents spent in their own sessions, this conversation's and its earlier ones."""
        self.events: RunStore | None = None
        """The run's ``events.jsonl``: each subagent's end, for ``reasonix runs show``."""
        talk = resolved.config.conversation
        self.language: str | None = talk.language
        self.sent_language: str | None = None
        """The language of replies (``/language``), sent as a tail block when it differs from the one last sent."""
        self.style = talk.style
        """The output style folded into the system prompt of the next session (``/style`` starts one)."""
        self.turn_cost_usd = 0.0
        self.balance: str | None = None
        """The account balance, once ``/cost`` has read it."""
        self.run_id = ""
        self.memory_updates = MemoryUpdates()
        """Notes written by ``/remember`` and ``/memory`` that the model hears of in front of the next message."""
        self.skill_watch = watch_for(workspace)
        """The skills the session's index holds; one added later is announced in the tail."""
        self.checkpoints = TurnCheckpoints(workspace, notify=lambda text: self.say(text, "yellow"))
        self.queued: list[str] = []
        """Messages typed while a turn ran (:mod:`orchestrator.repl.typeahead`), run after it, oldest first."""
        self.pending = ""
        """What was typed during the turn without Enter: the next prompt starts with it."""
        self.command_tools = CommandTools(commands.gate)
        """In front of the permission gate: a custom command's ``allowed-tools`` during its turn."""
        self.session: Session = self._open(resume=options.resume, run_id=options.run_id)

    # ------------------------------------------------------------------------------------------------ sessions

    @property
    def journal_path(self) -> Path:
        return run_dir(self.workspace, self.run_id) / "executor.jsonl"

    @property
    def turn_log(self) -> TurnLog:
        return TurnLog(run_dir(self.workspace, self.run_id))

    def _open(self, *, resume: bool, run_id: str | None = None) -> Session:
        if resume:
            found = run_id or last_run_id(self.workspace)
            if found is None or not (run_dir(self.workspace, found) / "executor.jsonl").exists():
                raise NothingToContinueError(
                    "there is no earlier conversation in this workspace to continue; start one with `reasonix code`"
                )
            self.run_id = found
            run_state_dir(self.workspace, self.run_id)
            write_atomic(state_subdir(self.workspace) / LAST_FILE, json.dumps({"run_id": self.run_id}) + "\n")
        else:
            self.run_id = new_run_id()
            run_state_dir(self.workspace, self.run_id)
            write_atomic(state_subdir(self.workspace) / LAST_FILE, json.dumps({"run_id": self.run_id}) + "\n")
        self.events = RunStore(self.workspace, self.run_id)
        session = build_executor(
            self.resolved,
            self.workspace,
            self.client,
            journal_path=self.journal_path,
            options=RunOptions(model=self.options.model, sandbox=self.commands.sandbox, gate=self.command_tools),
            on_event=self._event,
            resume=resume,
            system_prompt=self.system_prompt(EXECUTOR_RUN_SYSTEM),
        )
        apply_mode(session, self.commands.gate, self.mode)
        self.skill_watch.reset()
        return session

    def close_session(self) -> None:
        """The session ends: its journal is closed and its background jobs are killed."""
        jobs = jobs_of(self.session.registry)
        if jobs is not None:
            jobs.close()
        if self.session.journal is not None:
            self.session.journal.close()
        if self.events is not None:
            self.events.close()

    def _event(self, event: SessionEvent | SubagentFinished) -> None:
        """Every event is shown; a subagent's requests count in the conversation's cost, and its end is recorded."""
        if isinstance(event, SubagentFinished) and self.events is not None:
            self.events.append_event(event.model_dump(mode="json"))
        elif isinstance(event, UsageReported) and event.session.startswith(SESSION_PREFIX):
            self.subagent_cost_usd += event.cost_usd
            self.subagent_requests += 1
        self.renderer(event)

    def new_session(self) -> None:
        """``/clear``: a new conversation (a new journal); the old one stays on disk."""
        self.close_session()
        self.sent_mode = self.sent_language = None
        self.session = self._open(resume=False)

    def system_prompt(self, base: str) -> str:
        """``base`` with the output style folded in (unchanged without one)."""
        return styled(base, self.style, self.resolved.config.conversation.styles)

    def reopen(self, run_id: str | None = None, *, keep_totals: bool = False) -> None:
        """Rebuild the session from its journal (after a cancelled turn: the journal mends what was cut off; after a
        rewind or a fork: the journal cut or copied). ``keep_totals``: what this process spent stays counted.
        The old session's background jobs die with it (Ctrl-C of a turn ends them too)."""
        self.close_session()
        old = self.session.ledger
        self.session = self._open(resume=True, run_id=run_id or self.run_id)
        # Nothing was resumed: the same process goes on, and the server still caches what it was sent. The rebuilt
        # session's tracker would explain the next request as the first after a resume; this one expects the hits.
        self.session.ledger.tracker = old.tracker
        if keep_totals:
            new = self.session.ledger
            new.requests, new.usage, new.cost_usd = old.requests, old.usage, old.cost_usd

    # ------------------------------------------------------------------------------------------------ status

    def cycle_mode(self) -> None:
        self.mode = next_mode(self.mode)

    def hit_ratio(self) -> float:
        """The conversation's cumulative cache-hit ratio: the same figure as each turn's footer (a request cut off
        by Ctrl-C has no reported hits and is left out of both)."""
        return self.session.ledger.tracker.hit_ratio

    @property
    def total_cost_usd(self) -> float:
        """The conversation's cost, its subagents' and what its ``/plan`` and ``/goal`` runs spent."""
        return self.session.cost_usd + self.subagent_cost_usd + self.goal_cost_usd

    def add_goal_costs(self, cost_usd: float, requests: int) -> None:
        self.goal_cost_usd += cost_usd
        self.goal_requests += requests

    def status(self) -> FormattedText:
        model = self.resolved.config.models.pro if self.pro_next else self.model
        mode_style = {"ask": "ansicyan", "auto": "ansigreen", "plan": "ansiyellow"}[self.mode]
        return FormattedText(
            [
                ("", f" {model}{' (next turn)' if self.pro_next else ''} · "),
                (f"bold {mode_style}", f"{self.mode} mode"),
                *price_parts(self.turn_cost_usd, self.total_cost_usd, self.resolved.config.conversation),
                ("", f" (goals ${self.goal_cost_usd:.4f})" if self.goal_requests else ""),
                ("", f" · cache {self.hit_ratio() * 100:.1f}%"),
                ("", f" · {counted(self.session.requests + self.subagent_requests + self.goal_requests, 'request')}"),
                ("", " · Shift+Tab: mode · /help"),
                ("", f" · balance {self.balance}" if self.balance else ""),
            ]
        )

    def prompt_text(self) -> FormattedText:
        style = {"ask": "ansicyan", "auto": "ansigreen", "plan": "ansiyellow"}[self.mode]
        return FormattedText([(f"bold {style}", f"{self.mode} ❯ ")])

    # ------------------------------------------------------------------------------------------------ turns

    def say(self, text: str, style: str = "dim") -> None:
        self.renderer.end_line()
        self.console.print(Text(text, style=style), soft_wrap=True, highlight=False)

    async def turn(self, text: str) -> None:
        """Send one user message and stream the turn to its end (or to Ctrl-C)."""
        attached = attach(text, self.workspace)
        for problem in attached.problems:
            self.say(problem, "yellow")
        if attached.files:
            self.say("attached: " + ", ".join(attached.files))
        tail: list[TailBlock] = []
        if self.mode != self.sent_mode:
            tail.append(mode_block(self.mode))
        if self.language is not None and self.language != self.sent_language:
            tail.append(language_block(self.language))
        tail.extend(self.memory_updates.drain())
        tail.extend(self.skill_watch.news())
        apply_mode(self.session, self.commands.gate, self.mode)
        model = self.resolved.config.models.pro if self.pro_next else self.model
        self.pro_next = False
        number = len(self.turn_log.read()) + 1
        offset = self.journal_path.stat().st_size if self.journal_path.exists() else 0
        sent_before = self.sent_mode
        before = None
        cancelled, cost_before = False, self.session.cost_usd + self.subagent_cost_usd
        with trio.CancelScope() as scope:
            self.turn_scope = scope
            try:
                hooks = self.commands.hooks
                if hooks is not None:
                    hooks.run_id = hooks.session_id = self.run_id
                first = not self.session.log.messages
                if self.mode != "plan":  # plan mode cannot write: no checkpoint
                    before = await self.checkpoints.before()
                sent = await with_turn_keys(
                    self,
                    scope,
                    lambda: hooked_send(self.session, attached.text, hooks=hooks, tail=tail, model=model, first=first),
                )
                if isinstance(sent, PromptBlocked):
                    self.say(f"not sent: a user_prompt hook blocked the message: {sent.reason}", "yellow")
            except DeepSeekError as exc:
                self.say(f"DeepSeek: {exc}", "red")
            finally:
                self.turn_scope = None
                self.sent_mode, self.sent_language = self.mode, self.language
                self.turn_cost_usd = self.session.cost_usd + self.subagent_cost_usd - cost_before
                ref = await self.checkpoints.after(before, run_id=self.run_id, number=number, note=text)
                self._record(TurnRecord(number=number, text=text, offset=offset, sent_mode=sent_before), ref)
        cancelled = scope.cancelled_caught
        self.renderer.end_line()
        if cancelled:
            self.say("interrupted: the turn was cancelled; the conversation goes on", "yellow")
            self.reopen()

    def _record(self, record: TurnRecord, ref: TurnRef | None) -> None:
        if ref is not None:
            from orchestrator.checkpoints.ledger import Ledger

            entries = Ledger(self.workspace).read()
            changes = next((cp.changes for cp in entries if cp.seq == ref.seq + 1 and cp.run_id == ref.run_id), ())
            files = tuple(f"{c.status} {c.path}" for c in changes[:MAX_FILES_KEPT])
            record = record.model_copy(update={"run_id": ref.run_id, "step_id": ref.step_id, "seq": ref.seq})
            record = record.model_copy(update={"files": files})
        self.turn_log.append(record)

    async def watch_sigint(self) -> None:
        """SIGINT (Ctrl-C while a turn runs): cancel the turn; a second one before it has unwound exits at once."""
        if threading.current_thread() is not threading.main_thread():
            await trio.sleep_forever()
        from orchestrator.signals import hard_exit

        with trio.open_signal_receiver(signal.SIGINT) as signals:
            async for _ in signals:
                scope = self.turn_scope
                if scope is None:
                    continue
                if scope.cancel_called:
                    hard_exit(130)
                scope.cancel()
