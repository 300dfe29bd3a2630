"""Writes the scripted scenarios of this library as JSON (``python3 -m scenarios.library._build [NAME ...]``).

The JSON files are what ``reasonix replay`` and the tests read; the builders are how they are written, one module a
family of scenarios (``_build_flagship``, ``_build_plans``, ``_build_escalations``, ``_build_faults``, ``_build_long``,
``_build_regressions``, ``_build_repairs``), all of them written with the pieces of ``_script``;
the repositories they work on are in ``_repos`` (and ``_conf_rules``, ``_conf_repo`` for the long session). A change
to a workspace or a reply is made there and the files regenerated here. Stdlib only. Every scenario is ``origin:
scripted``: the replies are written by hand to exercise one behaviour of the orchestrator; they are not a model.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

from scenarios.library._build_escalations import executor_escalation, failure_escalation, planner_escalation
from scenarios.library._build_faults import (
    api_faults,
    budget_pause_resume,
    call_storm,
    reasoning_scavenge,
    truncated_arguments,
)
from scenarios.library._build_flagship import flagship
from scenarios.library._build_long import long_session
from scenarios.library._build_plans import EVIDENCE, cyclic_plan, review_revise, verify_retry_replan
from scenarios.library._build_regressions import BUILDERS as REGRESSIONS
from scenarios.library._build_repairs import BUILDERS as REPAIRS
from scenarios.library._script import HERE, J

BUILDERS: list[Callable[[], J]] = [
    flagship,
    verify_retry_replan,
    planner_escalation,
    executor_escalation,
    failure_escalation,
    review_revise,
    cyclic_plan,
    truncated_arguments,
    reasoning_scavenge,
    call_storm,
    api_faults,
    budget_pause_resume,
    long_session,
    *REGRESSIONS,
    *REPAIRS,
    *EVIDENCE,
]


def main(argv: list[str]) -> int:
    wanted = set(argv)
    for build in BUILDERS:
        data = build()
        if wanted and data["name"] not in wanted:
            continue
        path = HERE / f"{data['name']}.json"
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(HERE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
