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

import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path

import trio
from prompt_toolkit.formatted_text import FormattedText
from rich.console import Console
from rich.text import Text

from orchestrator.build import resolve_model
from orchestrator.checkpoints.turns import TurnCheckpoints
from orchestrator.config.model import ResolvedConfig
from orchestrator.conversation.engine import ExecutorConversation, conversation_journal, last_conversation
from orchestrator.conversation.turn_log import TurnLog
from orchestrator.events import SubagentFinished
from orchestrator.executor_prompt import CHAT_SYSTEM, EXECUTOR_RUN_SYSTEM
from orchestrator.extensions.allowed_tools import CommandTools
from orchestrator.extensions.skill_watch import watch_for
from orchestrator.goal.store import RunStore
from orchestrator.hooks.turns import PromptBlocked
from orchestrator.launch import ConversationLaunch, open_conversation
from orchestrator.memory.notes import MemoryUpdates
from orchestrator.policy.commands import CommandSetup
from orchestrator.repl.mentions import attach
from orchestrator.repl.modes import Mode, apply_mode, mode_block, next_mode
from orchestrator.repl.preferences.price import price_parts
from orchestrator.repl.preferences.style import language_block, styled
from orchestrator.repl.typeahead import with_turn_keys
from orchestrator.text.wording import counted
from orchestrator.ui.stream import TerminalRenderer
from sessions import Session, SessionEvent
from sessions.prompt import TailBlock
from sessions.wire import DeepSeekClient, DeepSeekError

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


POINTER = (LAST_FILE, "run_id")


def last_run_id(workspace: Path) -> str | None:
    return last_conversation(workspace, *POINTER)


class Conversation:
    """The state of one ``reasonix code`` invocation; :meth:`run` is the loop."""

    offered: tuple[str, ...] | None = None
    """The slash commands /help lists (``None``: all of them; ``reasonix chat`` offers fewer)."""
    chat = False
    """A chat's session (``reasonix chat``): no tools, its own prefix."""
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
        talk = resolved.config.conversation
        self.language: str | None = talk.language
        self.sent_language: str | None = None
        """The language of replies (``/language``), sent as a tail block when it differs from the one last sent."""
        self.style = talk.style
        """The output style folded into the system prompt of the next session (``/style`` starts one)."""
        self.turn_cost_usd = 0.0
        self.balance: str | None = None
        """The account balance, once ``/cost`` has read it."""
        self.memory_updates = MemoryUpdates()
        """Notes written by ``/remember`` and ``/memory`` that the model hears of in front of the next message."""
        self.skill_watch = watch_for(workspace)
        """The skills the session's index holds; one added later is announced in the tail."""
        self.queued: list[str] = []
        """Messages typed while a turn ran (:mod:`orchestrator.repl.typeahead`), run after it, oldest first."""
        self.pending = ""
        """What was typed during the turn without Enter: the next prompt starts with it."""
        self.command_tools = CommandTools(commands.gate)
        """In front of the permission gate: a custom command's ``allowed-tools`` during its turn."""
        resume = None
        if options.resume:
            resume = options.run_id or last_run_id(workspace)
            if resume is None or not conversation_journal(workspace, resume).exists():
                raise NothingToContinueError(
                    "there is no earlier conversation in this workspace to continue; start one with `reasonix code`"
                )
        self.engine: ExecutorConversation = open_conversation(
            ConversationLaunch(
                workspace=workspace,
                model=options.model,
                resume=resume,
                pointer=None if self.chat else POINTER,
                chat=self.chat,
            ),
            env=os.environ,  # a [[providers]] entry's key is read from it when the client is built here
            on_event=self._event,
            on_notice=lambda text: self.say(text, "yellow"),
            resolved=resolved,
            commands=commands,
            client=client,
            wrap_gate=lambda _: self.command_tools,
            system_prompt=lambda: self.system_prompt(CHAT_SYSTEM if self.chat else EXECUTOR_RUN_SYSTEM),
        )
        self._opened(self.engine.start())

    # ------------------------------------------------------------------------------------------------ sessions

    @property
    def session(self) -> Session:
        return self.engine.session

    @property
    def client(self) -> DeepSeekClient:
        return self.engine.client

    @property
    def run_id(self) -> str:
        return self.engine.run_id

    @property
    def journal_path(self) -> Path:
        return self.engine.journal_path

    @property
    def turn_log(self) -> TurnLog:
        return self.engine.turn_log

    @property
    def events(self) -> RunStore | None:
        """The run's ``events.jsonl``: each subagent's end, for ``reasonix runs show``."""
        return self.engine.events

    @property
    def checkpoints(self) -> TurnCheckpoints:
        assert self.engine.checkpoints is not None
        return self.engine.checkpoints

    @property
    def subagent_cost_usd(self) -> float:
        """What the ``task`` tool's subagents spent in their own sessions, in this process."""
        return self.engine.subagent_cost_usd

    @property
    def subagent_requests(self) -> int:
        return self.engine.subagent_requests

    def _opened(self, session: Session) -> Session:
        apply_mode(session, self.commands.gate, self.mode)
        self.skill_watch.reset()
        return session

    def close_session(self) -> None:
        """The conversation ends: its journal is closed, its background jobs are killed."""
        self.engine.close()

    def _event(self, event: SessionEvent | SubagentFinished) -> None:
        """Every event is shown (the engine counts a subagent's requests and records its end)."""
        self.renderer(event)

    def new_session(self) -> None:
        """``/clear``: a new conversation (a new journal); the old one stays on disk."""
        self.sent_mode = self.sent_language = None
        self._opened(self.engine.restart())

    def system_prompt(self, base: str) -> str:
        """``base`` with the output style folded in (unchanged without one)."""
        return styled(base, self.style, self.resolved.config.conversation.styles)

    def reopen(self, run_id: str | None = None, *, keep_totals: bool = False) -> None:
        """Rebuild the session from its journal (after a cancelled turn: the journal mends what was cut off; after a
        rewind or a fork: the journal cut or copied). ``keep_totals``: what this process spent stays counted.
        The old session's background jobs die with it (Ctrl-C of a turn ends them too)."""
        self._opened(self.engine.reopen(run_id, keep_totals=keep_totals))

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
        sent_before = self.sent_mode
        cost_before = self.session.cost_usd + self.subagent_cost_usd
        with trio.CancelScope() as scope:
            self.turn_scope = scope
            try:
                sent = await self.engine.send(
                    attached.text,
                    tail=tail,
                    model=model,
                    note=text,
                    sent_mode=sent_before,
                    around=lambda go: with_turn_keys(self, scope, go),
                )
                if isinstance(sent, PromptBlocked):
                    self.say(f"not sent: a user_prompt hook blocked the message: {sent.reason}", "yellow")
            except DeepSeekError as exc:
                self.say(f"DeepSeek: {exc}", "red")
            finally:
                self.turn_scope = None
                self.sent_mode, self.sent_language = self.mode, self.language
                self.turn_cost_usd = self.session.cost_usd + self.subagent_cost_usd - cost_before
        cancelled = scope.cancelled_caught
        self.renderer.end_line()
        if cancelled:
            self.say("interrupted: the turn was cancelled; the conversation goes on", "yellow")
            self.reopen()

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
