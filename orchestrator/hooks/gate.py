"""The permission gate with hooks: ``pre_tool`` hooks are asked before the rules, ``post_tool`` hooks see the result.

A ``pre_tool`` hook that blocks (exit 2, ``deny``) refuses the call with its reason, which the model reads as the
call's error result; ``allow`` lets the call run without asking (a ``deny`` rule still refuses it); ``ask`` asks the
user even where the rules would not (without a terminal, the call is refused). With no decision the rules decide as
before. What a ``post_tool`` hook says is appended to the tool result in a ``<hook-context>`` block: appended bytes,
never the prefix.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from orchestrator.hooks.hooks import Hooks
from sessions.permissions import PermissionGate, Question
from sessions.sandbox import describe
from sessions.tools import ToolResult, current_call_id


def _subject(tool: Any, args: BaseModel) -> str:
    data = args.model_dump(mode="json")
    if tool.name == "bash" and isinstance(data.get("command"), str):
        return str(data["command"])
    return json.dumps(data, sort_keys=True, ensure_ascii=False)[:1000]


@dataclass
class HookGate(PermissionGate):
    hooks: Hooks | None = None

    async def check(self, tool: Any, args: BaseModel, ctx: Any) -> str | None:
        if self.hooks is None or not self.hooks.matching("pre_tool", tool.name):
            return await super().check(tool, args, ctx)
        fields = {"tool_name": tool.name, "tool_input": args.model_dump(mode="json"), "tool_use_id": current_call_id()}
        answer = await self.hooks.fire("pre_tool", fields, tool=tool.name)
        if answer.blocks:
            reason = answer.reason or "no reason given"
            return f"refused by a pre_tool hook: {reason}"
        if answer.decision == "allow":
            return self.deny_refusal(tool, args, ctx)
        if answer.decision == "ask":
            denied = self.deny_refusal(tool, args, ctx)
            return denied if denied is not None else await self._hook_ask(tool, args, ctx, answer.reason)
        return await super().check(tool, args, ctx)

    async def _hook_ask(self, tool: Any, args: BaseModel, ctx: Any, reason: str) -> str | None:
        subject = _subject(tool, args)
        why = f" ({reason})" if reason else ""
        if self.asker is None:
            return (
                f"refused: a pre_tool hook asks for approval of {tool.name} `{subject}`{why} and there is no one to ask"
            )
        answer = await self.asker(
            Question(
                tool=tool.name,
                subject=subject,
                cwd=str(ctx.root),
                sandbox=describe(ctx.sandbox),
                rule=f"a pre_tool hook asks{why}",
                can_save=False,
            )
        )
        if answer.allow:
            return None
        note = f" The user says: {answer.note}" if answer.note.strip() else ""
        return f"refused: the user declined {tool.name} `{subject}`.{note}"

    async def after(self, tool: Any, args: BaseModel, result: ToolResult, ctx: Any) -> ToolResult:
        """The result with what the ``post_tool`` hooks said appended (unchanged when none matched or said nothing)."""
        if self.hooks is None or not self.hooks.matching("post_tool", tool.name):
            return result
        answer = await self.hooks.fire(
            "post_tool",
            {
                "tool_name": tool.name,
                "tool_input": args.model_dump(mode="json"),
                "tool_response": {"content": result.content, "is_error": result.is_error},
                "tool_use_id": current_call_id(),
            },
            tool=tool.name,
        )
        said = "\n".join(t for t in (answer.reason, answer.context) if t)
        if not said:
            return result
        return result.model_copy(update={"content": f"{result.content}\n\n<hook-context>\n{said}\n</hook-context>"})
