"""What a long session keeps of what it was told, with one tier (today's compaction) and with the tiers (issue 28
item 4, DESIGN §3.6 "Tiers").

A scripted session of ``--turns`` (320) user turns against the emulator (its prefix cache, 128-token units, a cold
cache at the start). Each turn reads a notes file (``read_file``, about 1,900 tokens, a fact in its middle) and ends
with a decision that states a fact; every third user turn plants a fact of its own. Every 80th turn reads eight large
files at once, a jump in the context that passes the force share. The window (``--window``, 128,000 tokens) is
crossed again and again, so every tier fires.

After every rewrite (a compaction, a snip, a force) the next request's bytes are checked: a fact planted so far is
**present** when its bytes are in what that request sends, **recallable** when it is in an archived original that
the request names by a marker (directly, or through a marker inside an archived original: ``recall`` more than once).
The last request of the session is checked the same way against every fact planted.

The digest of each compaction is scripted (a fixed sentence that states no fact), so the figures measure what the
harness guarantees, not what a model would remember: with one tier, a fact survives a compaction only in a user
turn, which compaction keeps verbatim.

Printed per setting: facts kept at the end (present + recallable, of planted) by kind, the lowest share kept at any
check, the tiers that fired (snips taken and weighed), requests, prompt tokens, hit ratio, cost at flash's peak
prices. The settings: ``one tier`` (tiers off: today), ``tiers`` (the snip rule with the session's own estimate of
what remains: half as many requests as it made so far), ``tiers, remaining known`` (the bench tells the rule how many
requests are left), ``tiers, no snip`` (snip_ratio = compact_ratio: what the snips cost or saved).

Run: ``.venv/bin/python bench/compaction_bench.py [--turns 320] [--window 128000]``
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import trio

from scenarios.emulator import ReplySpec, Script, SessionSpec, ToolCallSpec, open_emulator
from sessions.events import Compacted, SessionEvent, ToolFinished, TurnFinished
from sessions.prompt.memory import load_standing_memory
from sessions.prompt.prefix import build_prefix
from sessions.session import Session, SessionSettings
from sessions.tiers import Archive, markers_in, tiered_registry
from sessions.tools.base import ToolContext
from sessions.tools.registry import default_registry
from sessions.wire.client import ClientSettings, DeepSeekClient
from sessions.wire.reply import ReplyRequest, stream_reply
from sessions.wire.stream import Reply, StreamEvent

SYSTEM = "You are the executor of a coding agent. Read what you are asked to, decide, and keep the facts you learn."
PEAK = datetime(2026, 11, 30, 2, 0, tzinfo=UTC)
"""A Monday at 02:00 UTC: flash at its peak prices."""
DIGEST = "Digest (scripted): notes files were read one after another and a decision was taken after each."
WORDS = ("amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "heron", "iris", "jade", "kelp", "lumen")
NOTE_LINES = 60
BIG_LINES = 300
BIG_EVERY = 80
BIG_FILES = 8


def _word(i: int) -> str:
    return WORDS[(i * 7) % len(WORDS)] + str(i % 97)


def _note(fact: str, n: int, lines: int) -> str:
    rows = [
        f"entry {k:03}: the module keeps its records sorted by key and writes them back in batches of {k + n % 9}\n"
        for k in range(lines)
    ]
    rows.insert(lines // 2, f"entry ***: {fact} is the value this part depends on\n")
    return "".join(rows)


@dataclass
class Plan:
    """The scripted session: its files, its replies and the facts each turn plants."""

    turns: int
    big_every: int = BIG_EVERY
    user_facts: dict[int, str] = field(default_factory=dict)
    tool_facts: dict[str, list[str]] = field(default_factory=dict)
    """Facts by the call id whose result holds them."""
    decision_facts: dict[int, str] = field(default_factory=dict)
    replies: list[ReplySpec] = field(default_factory=list)

    @classmethod
    def build(cls, turns: int, root: Path, big_every: int = BIG_EVERY) -> Plan:
        plan = cls(turns, big_every)
        (root / "notes").mkdir(parents=True, exist_ok=True)
        for i in range(turns):
            if i % 3 == 0:
                plan.user_facts[i] = f"FACT-U{i:03}-{_word(i)}"
            calls = []
            paths = [f"notes/n{i:03}.txt"]
            if i % big_every == big_every // 2:
                paths += [f"notes/b{i:03}-{k}.txt" for k in range(BIG_FILES)]
            for k, path in enumerate(paths):
                fact = f"FACT-T{i:03}{'' if k == 0 else f'-{k}'}-{_word(i + k)}"
                (root / path).write_text(_note(fact, i, NOTE_LINES if k == 0 else BIG_LINES), encoding="utf-8")
                call_id = f"call_{i:03}_{k}"
                plan.tool_facts[call_id] = [fact]
                calls.append(ToolCallSpec(id=call_id, name="read_file", arguments={"path": path}))
            plan.replies.append(ReplySpec(tool_calls=tuple(calls)))
            if i % 2 == 0:
                plan.decision_facts[i] = f"FACT-D{i:03}-{_word(i + 5)}"
                decision = f"Decision {i}: keep {plan.decision_facts[i]} as the rule for this part."
            else:
                decision = f"Read notes/n{i:03}.txt; nothing to decide."
            plan.replies.append(ReplySpec(content=decision))
        return plan

    def user_text(self, i: int) -> str:
        text = f"Turn {i}: read notes/n{i:03}.txt and decide what to keep."
        return text + (f" Remember {self.user_facts[i]} for later." if i in self.user_facts else "")

    def script(self) -> Script:
        return Script(
            sessions=(
                SessionSpec(key="digest", system_contains="You compress", replies=(ReplySpec(content=DIGEST),) * 200),
                SessionSpec(key="executor", replies=tuple(self.replies)),
            )
        )


class Keeper:
    """A reply source that keeps the body of the last request and of each request asked for."""

    def __init__(self) -> None:
        self.count = 0
        self.want = False
        self.kept: dict[int, bytes] = {}
        self.last = b""

    async def __call__(self, call: ReplyRequest, emit: Callable[[StreamEvent], None]) -> Reply:
        if self.want:
            self.kept[self.count] = call.body
            self.want = False
        self.last = call.body
        self.count += 1
        return await stream_reply(call, emit)


def sent_text(body: bytes) -> str:
    """Every text a request sends: the messages' contents and the tool calls' arguments."""
    parts: list[str] = []
    for m in json.loads(body)["messages"]:
        parts.append(m.get("content") or "")
        parts.extend(c["function"]["arguments"] for c in m.get("tool_calls") or ())
    return "\n".join(parts)


def kept_facts(body: bytes, facts: list[str], archive: Archive | None) -> tuple[set[str], set[str]]:
    """The facts present in ``body`` and those only recallable through the markers it sends (transitively)."""
    text = sent_text(body)
    present = {f for f in facts if f in text}
    if archive is None:
        return present, set()
    reachable: dict[str, str] = {}
    todo = markers_in(text)
    while todo:
        archive_id = todo.pop()
        if archive_id in reachable:
            continue
        original = archive.get(archive_id)
        if original is None:
            continue
        reachable[archive_id] = original
        todo.extend(markers_in(original))
    recallable = {f for f in facts if f not in present and any(f in o for o in reachable.values())}
    return present, recallable


@dataclass
class Outcome:
    label: str
    planted: dict[str, list[str]]
    present: set[str]
    recallable: set[str]
    checks: list[tuple[str, int, int]]
    """Per rewrite: its tier, the facts planted by then, the facts kept in the next request."""
    tiers: dict[str, int]
    snips_weighed: int
    requests: int
    prompt_tokens: int
    hit_ratio: float
    cost_usd: float

    def kept(self, kind: str | None = None) -> tuple[int, int]:
        facts = [f for k, fs in self.planted.items() if kind in (None, k) for f in fs]
        return sum(1 for f in facts if f in self.present or f in self.recallable), len(facts)


async def run_setting(
    label: str, plan: Plan, root: Path, settings: SessionSettings, *, known_remaining: bool = False
) -> Outcome:
    journal = root / ".reasonix" / f"{label.replace(' ', '-').replace(',', '')}.jsonl"
    registry = tiered_registry(default_registry(use_ripgrep=False), settings.tiers, journal)
    prefix = build_prefix(SYSTEM, Session.schemas_for(registry), load_standing_memory(root, stop_at=root))
    keeper = Keeper()
    planted: list[str] = []
    by_kind: dict[str, list[str]] = {"user": [], "tool": [], "decision": []}
    pending: list[tuple[str, int, int]] = []
    turn = 0

    def on_event(event: SessionEvent) -> None:
        if isinstance(event, ToolFinished):
            for fact in plan.tool_facts.get(event.call_id, []):
                planted.append(fact)
                by_kind["tool"].append(fact)
        elif isinstance(event, TurnFinished) and turn in plan.decision_facts:
            planted.append(plan.decision_facts[turn])
            by_kind["decision"].append(plan.decision_facts[turn])
        elif isinstance(event, Compacted):
            keeper.want = True
            pending.append((event.reason.split(":", 1)[0] if settings.tiers else "compact", keeper.count, len(planted)))

    async with open_emulator(script=plan.script()) as emu:
        client = DeepSeekClient(base_url=emu.base_url, api_key="bench", settings=ClientSettings())
        async with client:
            session = Session.start(
                journal_path=journal,
                name="executor",
                client=client,
                prefix=prefix,
                registry=registry,
                tool_context=ToolContext(root=root),
                settings=settings,
                on_event=on_event,
                reply_source=keeper,
                clock=lambda: PEAK,
            )
            if known_remaining:
                session.expected_requests = lambda: max(1, 2 * (plan.turns - turn))
            for turn in range(plan.turns):
                if turn in plan.user_facts:
                    planted.append(plan.user_facts[turn])
                    by_kind["user"].append(plan.user_facts[turn])
                await session.send(plan.user_text(turn))
    archive = session.tiers.archive if session.tiers is not None else None
    checks = []
    for tier, index, count in pending:
        body = keeper.kept.get(index)
        if body is None:
            continue
        present, recallable = kept_facts(body, planted[:count], archive)
        checks.append((tier, count, len(present) + len(recallable)))
    present, recallable = kept_facts(keeper.last, planted, archive)
    tiers: dict[str, int] = {}
    for tier, _, _ in pending:
        tiers[tier] = tiers.get(tier, 0) + 1
    usage = session.usage
    return Outcome(
        label=label,
        planted=by_kind,
        present=present,
        recallable=recallable,
        checks=checks,
        tiers=tiers,
        snips_weighed=session.tiers.weighed if session.tiers is not None else 0,
        requests=session.requests,
        prompt_tokens=usage.prompt_tokens,
        hit_ratio=usage.prompt_cache_hit_tokens / usage.prompt_tokens if usage.prompt_tokens else 0.0,
        cost_usd=session.cost_usd,
    )


SETTINGS: dict[str, tuple[dict[str, Any], bool]] = {
    "one tier": ({}, False),
    "tiers": ({"tiers": True}, False),
    "tiers, remaining known": ({"tiers": True}, True),
    "tiers, no snip": ({"tiers": True, "snip_ratio": 0.8}, False),
}


async def run_all(
    turns: int, window: int, labels: tuple[str, ...] = tuple(SETTINGS), big_every: int = BIG_EVERY
) -> list[Outcome]:
    outcomes = []
    for label in labels:
        extra, known = SETTINGS[label]
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            plan = Plan.build(turns, root, big_every)
            settings = SessionSettings(context_window=window, **extra)
            outcomes.append(await run_setting(label, plan, root, settings, known_remaining=known))
    return outcomes


def report(outcomes: list[Outcome], turns: int, window: int) -> None:
    print(f"{turns} scripted turns, a {window}-token window, the digest scripted (it states no fact); flash at peak")
    head = f"{'setting':24}{'kept':>10}{'user':>9}{'tool':>9}{'decision':>10}{'lowest':>8}"
    print(head + f"{'requests':>9}{'prompt':>11}{'hit ratio':>10}{'cost $':>10}  tiers fired")
    base = outcomes[0].cost_usd
    for o in outcomes:
        kept, total = o.kept()
        widths = (("user", 9), ("tool", 9), ("decision", 10))
        kinds = "".join(f"{'/'.join(map(str, o.kept(k))):>{w}}" for k, w in widths)
        lowest = min((k / n for _, n, k in o.checks if n), default=1.0)
        fired = ", ".join(f"{t} {n}" for t, n in sorted(o.tiers.items())) or "none"
        if o.label.startswith("tiers") and o.label != "tiers, no snip":
            fired += f" (snips weighed {o.snips_weighed})"
        print(
            f"{o.label:24}{f'{kept}/{total}':>10}{kinds}{lowest:>8.0%}{o.requests:>9}{o.prompt_tokens:>11}"
            f"{o.hit_ratio:>10.2%}{o.cost_usd:>10.5f}  {fired}"
        )
    for o in outcomes[1:]:
        print(f"{o.label}: cost {o.cost_usd / base - 1:+.1%} against one tier; recallable only {len(o.recallable)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=320)
    parser.add_argument("--window", type=int, default=128_000)
    args = parser.parse_args()
    outcomes = trio.run(run_all, args.turns, args.window)
    report(outcomes, args.turns, args.window)


if __name__ == "__main__":
    main()
