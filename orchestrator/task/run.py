"""One executor session on one task (``reasonix run``): build it, run the turn, summarize what it cost.

:class:`TaskRun` is built synchronously (the journal header is written then) and run with :meth:`TaskRun.execute`.
Whatever happens — a finished turn, a DeepSeek error, a cancellation — :meth:`TaskRun.summary` reports the figures
summed over every request, as the server reported them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from orchestrator.build import RunOptions, build_client, build_executor, run_dir
from orchestrator.checkpoints.turns import TurnCheckpoints
from orchestrator.config.model import ResolvedConfig
from orchestrator.events import SubagentFinished
from orchestrator.goal.store import RunStore, new_run_id, run_state_dir
from orchestrator.hooks.hooks import Hooks
from orchestrator.hooks.turns import PromptBlocked, hooked_send
from orchestrator.subagents.task_tool import subagent_figures
from orchestrator.summary import Summary, figures
from sessions import Session, SessionEvent
from sessions.wire import DeepSeekClient, DeepSeekError, ReplySource

RunStatus = Literal["done", "request_limit", "storm", "empty", "length", "content_filter", "error", "cancelled"]

WHAT_TO_DO: dict[str, str] = {
    "request_limit": "the task used every request it was allowed; run it again with a higher --max-requests, "
    "or split it into smaller tasks",
    "storm": "the model repeated the same tool call until the turn was ended; rephrase the task",
    "empty": "the model finished without an answer and without a tool call; run the task again",
    "length": "the reply was cut at the output limit (finish_reason length) before it was complete; ask for a "
    "smaller piece of work (one file or one function at a time)",
    "content_filter": "DeepSeek's content filter stopped the reply; rephrase the task",
}


class TaskSummary(Summary):
    """The last line of ``reasonix run --json``: a :class:`~orchestrator.summary.Summary`, with the advice for a run
    that did not finish."""

    def advice(self) -> str | None:
        """What the user should do about a run that did not finish, or None when it did."""
        if self.status == "done":
            return None
        if self.status == "error":
            return self.error
        if self.status == "cancelled":
            again = f"reasonix -p 'go on' --resume {self.run_id}" if self.run_id else "reasonix -p --resume RUN_ID"
            return f"interrupted; the run is journaled in {self.journal}; continue it with `{again}`"
        advice = WHAT_TO_DO.get(self.status, f"the turn ended with status {self.status}")
        if self.status in ("storm", "empty") and "pro" not in (self.model or ""):
            advice += ", or try --model pro"
        return advice


class TaskRun:
    """An executor session for one task, with its client and journal."""

    def __init__(
        self,
        task: str,
        *,
        resolved: ResolvedConfig,
        workspace: Path,
        options: RunOptions | None = None,
        on_event: Callable[[SessionEvent | SubagentFinished], None] | None = None,
        run_id: str | None = None,
        client: DeepSeekClient | None = None,
        reply_source: ReplySource | None = None,
        memory_config_dir: Path | None = None,
        hooks: Hooks | None = None,
        checkpoints: TurnCheckpoints | None = None,
    ) -> None:
        self.task = task
        self.hooks = hooks
        self.checkpoints = checkpoints
        """With it, the workspace is checkpointed around the turn (``reasonix undo`` takes it back)."""
        self.options = options or RunOptions()
        self.run_id = run_id or new_run_id()
        self.journal_path = run_dir(workspace, self.run_id) / "executor.jsonl"
        self.client = client or build_client(resolved)
        run_state_dir(workspace, self.run_id)  # the key is there: from here on the run is journaled
        self._events = RunStore(workspace, self.run_id)
        self._on_event = on_event
        if hooks is not None:
            hooks.run_id = hooks.session_id = self.run_id
        self.session: Session = build_executor(
            resolved,
            workspace,
            self.client,
            journal_path=self.journal_path,
            options=self.options,
            on_event=self._event,
            reply_source=reply_source,
            memory_config_dir=memory_config_dir,
        )

    def _event(self, event: SessionEvent | SubagentFinished) -> None:
        """What the task's subagents did goes to the run's ``events.jsonl`` too, for ``reasonix runs show``."""
        if isinstance(event, SubagentFinished):
            self._events.append_event(event.model_dump(mode="json"))
        if self._on_event is not None:
            self._on_event(event)

    async def execute(self) -> TaskSummary:
        """Run the task's turn. DeepSeek errors end the run with status ``error``; cancellation propagates (the
        session leaves its journal consistent), after which :meth:`summary` still reports what was spent."""
        before = await self.checkpoints.before() if self.checkpoints is not None else None
        try:
            result = await hooked_send(
                self.session, self.task, hooks=self.hooks, first=True, max_requests=self.options.max_requests
            )
        except DeepSeekError as exc:
            return self.summary("error", error=str(exc))
        finally:
            self._events.close()
            if self.checkpoints is not None:
                await self.checkpoints.after(before, run_id=self.run_id, number=1, note=self.task)
        if isinstance(result, PromptBlocked):
            return self.summary("error", error=f"a user_prompt hook blocked the task: {result.reason}")
        return self.summary(result.status, text=result.text)

    def summary(self, status: RunStatus, *, text: str = "", error: str | None = None) -> TaskSummary:
        session = self.session
        return TaskSummary(
            command="run",
            run_id=self.run_id,
            status=status,
            ok=status == "done",
            text=text,
            error=error,
            model=session.settings.model,
            journal=str(self.journal_path),
            **figures(
                {
                    session.name: (session.requests, session.usage, session.cost_usd),
                    **subagent_figures(session.registry),
                }
            ),
        )
