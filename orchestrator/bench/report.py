"""The HTML report beside the results JSONL: one self-contained page (inline CSS and SVG, no script, nothing
fetched) with the summary table, pass rate per class, cost per task, cache hit ratio per request, and the faults."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from orchestrator.bench.results import ClassFigures, FaultFigures, TaskResult, fault_costs, summarize

_W, _BAR, _GAP, _LABEL = 640, 18, 6, 170
_STYLE = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}
td,th{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}
h2{margin-top:2em}.note{color:#666}svg text{font:12px system-ui,sans-serif}"""


def _bars(rows: Sequence[tuple[str, float, str]], scale: float, unit: str) -> str:
    """Horizontal bars: (label, value, colour); ``scale`` is the value of a full bar."""
    height = len(rows) * (_BAR + _GAP) + _GAP
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height}" role="img">']
    for i, (label, value, colour) in enumerate(rows):
        y = _GAP + i * (_BAR + _GAP)
        width = 0 if scale <= 0 else max(1.0, (_W - _LABEL - 90) * value / scale)
        parts.append(f'<text x="0" y="{y + 13}">{escape(label)}</text>')
        parts.append(f'<rect x="{_LABEL}" y="{y}" width="{width:.1f}" height="{_BAR}" fill="{colour}"/>')
        parts.append(f'<text x="{_LABEL + width + 6:.1f}" y="{y + 13}">{escape(unit.format(value))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _hit_chart(results: Sequence[TaskResult]) -> str:
    """Every request's cache hit ratio, task after task, as dots on 0–100 %, each task's requests labelled below."""
    points = [(r.task, ratio) for r in results for ratio in r.request_hit_ratios]
    height, left = 180, 40
    step = (_W - left - 10) / max(len(points), 1)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{height + 40}" role="img">']
    for pct in (0, 50, 100):
        y = 10 + height * (1 - pct / 100)
        parts.append(f'<line x1="{left}" x2="{_W}" y1="{y}" y2="{y}" stroke="#ddd"/>')
        parts.append(f'<text x="0" y="{y + 4}">{pct} %</text>')
    first = 0
    for r in results:
        if not r.request_hit_ratios:
            continue
        x = left + step * first
        parts.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="10" y2="{height + 14}" stroke="#bbb"/>')
        parts.append(f'<text x="{x + 3:.1f}" y="{height + 30}">{escape(r.task)}</text>')
        first += len(r.request_hit_ratios)
    for i, (task, ratio) in enumerate(points):
        x, y = left + step * (i + 0.5), 10 + height * (1 - ratio)
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="#3b7dd8"><title>{escape(task)}: ')
        parts.append(f"{ratio:.1%}</title></circle>")
    parts.append("</svg>")
    return "".join(parts)


def _table(rows: Sequence[ClassFigures]) -> str:
    head = "<tr><th>class</th><th>tasks</th><th>solved</th><th>pass rate</th><th>cost/task</th>"
    head += "<th>cost/solved</th><th>hit ratio</th><th>s/task</th></tr>"
    body = "".join(
        f"<tr><td>{escape(r.name)}</td><td>{r.tasks}</td><td>{r.solved}</td><td>{r.pass_rate:.0%}</td>"
        f"<td>${r.cost_per_task:.4f}</td><td>{'—' if r.cost_per_solved is None else f'${r.cost_per_solved:.4f}'}</td>"
        f"<td>{r.mean_hit_ratio:.1%}</td><td>{r.seconds_per_task:.1f}</td></tr>"
        for r in rows
    )
    return f"<table>{head}{body}</table>"


def _faults_table(rows: Sequence[FaultFigures]) -> str:
    head = "<tr><th>fault</th><th>runs</th><th>solved</th><th>injected</th><th>extra requests</th>"
    head += "<th>extra attempts</th><th>extra cost</th><th>extra s</th></tr>"
    body = "".join(
        f"<tr><td>{escape(f.fault)}</td><td>{f.runs}</td><td>{f.solved}</td><td>{f.injected}</td>"
        f"<td>{f.extra_requests:+d}</td><td>{f.extra_attempts:+d}</td><td>{_signed_usd(f.extra_cost_usd)}</td>"
        f"<td>{f.extra_seconds:+.2f}</td></tr>"
        for f in rows
    )
    return f"<table>{head}{body}</table>"


def _signed_usd(value: float) -> str:
    return f"{'-' if value < 0 else '+'}${abs(value):.5f}"


def html_report(results: Sequence[TaskResult], *, title: str = "reasonix bench") -> str:
    clean = [r for r in results if r.fault is None]
    summary = summarize(results)
    per_class = [(f.name, f.pass_rate, "#2e9e5b" if f.name != "overall" else "#555") for f in summary]
    top = max((r.cost_usd for r in clean), default=0.0)
    costs = [(r.task, r.cost_usd, "#2e9e5b" if r.solved else "#d04a3c") for r in clean]
    modes = sorted({r.mode for r in results})
    note = ""
    if "oracle" in modes:
        note = (
            '<p class="note">Oracle runs play the reference patch: their figures measure the harness, not a model.</p>'
        )
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body><h1>{escape(title)}</h1>{note}",
        f"<p>{len(clean)} tasks, mode {escape(', '.join(modes))}.</p>",
        _table(summary),
        "<h2>Pass rate per class</h2>",
        _bars(per_class, 1.0, "{:.0%}"),
        "<h2>Cost per task</h2><p class='note'>green: solved, red: not solved</p>",
        _bars(costs, top, "${:.5f}"),
        "<h2>Cache hit ratio per request</h2>",
        _hit_chart(clean),
    ]
    faults = fault_costs(results)
    if faults:
        parts += ["<h2>What each fault cost</h2><p class='note'>against the clean run of the same tasks</p>"]
        parts += [_faults_table(faults)]
    parts.append("</body></html>\n")
    return "".join(parts)


def write_report(results: Sequence[TaskResult], jsonl: Path) -> Path:
    """Write the report beside ``jsonl`` (same name, ``.html``) and return its path."""
    path = jsonl.with_suffix(".html")
    path.write_text(html_report(results), encoding="utf-8")
    return path
