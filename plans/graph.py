"""A plan as a dependency DAG: validation that names each problem, and scheduling.

Edges run from a dependency to the step that depends on it (``S1 → S2`` when S2 depends on S1), so a topological
order is an execution order. Cycles are reported the other way round, as a chain of "depends on" links that the
reader can follow in the document: ``S2 → S4 → S2`` means S2 depends on S4, which depends on S2.

Everything here is deterministic: ties are broken by the steps' order in the document, never by set or dict order.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections import defaultdict
from collections.abc import Iterator, Mapping

import networkx as nx

from .errors import IssueCode, PlanIssue, PlanValidationError
from .paths import _glob_overlaps_path, _is_glob, _literal_prefix, _overlap, normalize_path
from .paths import paths_overlap as paths_overlap  # re-exported: plans.paths_overlap was always here
from .schema import SATISFIED, Plan, StepStatus

ARROW = " → "


# ------------------------------------------------------------------------------------------------ validation


def _dependency_graph(plan: Plan) -> nx.DiGraph:
    """Known, non-self dependencies as edges dependency → dependent. Duplicated ids are merged into one node."""
    graph = nx.DiGraph()
    known = set(plan.ids)
    for step in plan.steps:
        graph.add_node(step.id)
    for step in plan.steps:
        for dep in step.depends_on:
            if dep in known and dep != step.id:  # pragma: no mutate  — an unknown or self edge: no cycle, no reach
                graph.add_edge(dep, step.id)
    return graph


def _index(plan: Plan) -> dict[str, int]:
    index: dict[str, int] = {}
    for i, step in enumerate(plan.steps):
        index.setdefault(step.id, i)
    return index


def _cycles(graph: nx.DiGraph, index: Mapping[str, int]) -> Iterator[tuple[str, ...]]:
    """One cycle per strongly connected component, as a closed "depends on" path starting at its earliest step."""
    components = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
    components.sort(key=lambda c: min(index[n] for n in c))
    reverse = graph.reverse(copy=False)  # pragma: no mutate - a copy or a view: the same edges dependent → dependency
    for component in components:
        start = min(component, key=index.__getitem__)
        edges = nx.find_cycle(reverse.subgraph(component), source=start)
        nodes = [edge[0] for edge in edges]  # pragma: no mutate - edge[1]: the same cycle, turned to its start below
        first = min(range(len(nodes)), key=lambda i: index[nodes[i]])
        nodes = nodes[first:] + nodes[:first]
        yield (*nodes, nodes[0])


def _write_conflicts(plan: Plan, graph: nx.DiGraph) -> Iterator[PlanIssue]:
    writers: list[tuple[int, str, str]] = []  # (step index, step id, normalized path)
    for i, step in enumerate(plan.steps):
        for path in dict.fromkeys(normalize_path(p) for p in step.writes):
            if path:
                writers.append((i, step.id, path))
    literal: dict[str, list[tuple[int, str]]] = defaultdict(list)
    globs: list[tuple[int, str, str]] = []
    for i, sid, path in writers:
        if _is_glob(path):
            globs.append((i, sid, path))
        else:
            literal[path].append((i, sid))
    candidates: dict[tuple[int, int], str] = {}

    def note(a: tuple[int, str], b: tuple[int, str], path: str) -> None:
        if a[1] == b[1]:
            return
        key = (a[0], b[0]) if a[0] < b[0] else (b[0], a[0])  # pragma: no mutate - equal is one step, returned above
        candidates.setdefault(key, path)

    for path, owners in literal.items():
        for first, second in itertools.combinations(owners, 2):
            note(first, second, path)
        if path.endswith("/"):  # "src" and "src/" name one directory
            for owner in literal.get(path.rstrip("/"), ()):
                for mine in owners:
                    note(owner, mine, path)
        parts = path.rstrip("/").split("/")  # pragma: no mutate  — rstrip(): "a/"'s extra "" part, noted above
        for cut in range(1, len(parts)):  # pragma: no mutate  — cut 0: "" and "/", never a path written
            parent = "/".join(parts[:cut])
            for parent_key in (parent, parent + "/"):
                for owner in literal.get(parent_key, ()):
                    for mine in owners:
                        note(owner, mine, path)
    # A glob overlaps only paths that start with its literal prefix (the text before its first wildcard) and the
    # directories its prefix lies in: compare it with that range of the sorted paths and those few ancestors, not with
    # every path, so the check stays near linear in the plan's size.
    sorted_paths = sorted(literal)
    prefixes = [_literal_prefix(pattern) for _, _, pattern in globs]
    for g, (i, sid, pattern) in enumerate(globs):
        prefix = prefixes[g]
        for k in range(bisect.bisect_left(sorted_paths, prefix), len(sorted_paths)):
            path = sorted_paths[k]
            if not path.startswith(prefix):
                break
            if _glob_overlaps_path(pattern, path):
                for owner in literal[path]:
                    note((i, sid), owner, path)
        for cut in (n + 1 for n, ch in enumerate(prefix) if ch == "/"):
            for parent_key in (prefix[: cut - 1], prefix[:cut]):
                if parent_key.startswith(prefix):
                    continue  # pragma: no mutate - in the range above; only the last key can be (break: the same)
                for owner in literal.get(parent_key, ()):
                    note((i, sid), owner, parent_key)
        for h in range(g + 1, len(globs)):  # pragma: no mutate  — h <= g: a pair noted before, or g itself
            j, other_sid, other = globs[h]
            if (prefix.startswith(prefixes[h]) or prefixes[h].startswith(prefix)) and _overlap(pattern, other):
                note((i, sid), (j, other_sid), pattern)

    descendants: dict[str, set[str]] = {}

    def reaches(a: str, b: str) -> bool:
        if a not in descendants:
            descendants[a] = nx.descendants(graph, a)
        return b in descendants[a]

    for (i, j), path in sorted(candidates.items()):
        a, b = plan.steps[i].id, plan.steps[j].id
        if reaches(a, b) or reaches(b, a):
            continue
        yield PlanIssue(
            IssueCode.WRITE_CONFLICT,
            f"steps {a} and {b} both write {path} but neither depends on the other; "
            f"make one depend on the other or split the file between them",
            (a, b),
        )


def find_issues(plan: Plan) -> list[PlanIssue]:
    """Every problem with the plan's graph, in a fixed order (an empty list means valid)."""
    issues: list[PlanIssue] = []
    if not plan.steps:
        issues.append(
            PlanIssue(IssueCode.NO_STEPS, f"the plan has no steps for the objective {plan.objective!r}; add steps")
        )
        return issues
    positions: dict[str, list[int]] = defaultdict(list)
    for i, step in enumerate(plan.steps):
        positions[step.id].append(i + 1)
    for sid, where in positions.items():
        if len(where) > 1:
            issues.append(
                PlanIssue(
                    IssueCode.DUPLICATE_ID,
                    f"step id {sid} is used by {len(where)} steps (positions {', '.join(map(str, where))}); "
                    f"give each step its own id",
                    (sid,),
                )
            )
    known = set(positions)
    for step in plan.steps:
        if step.id in step.depends_on:
            issues.append(
                PlanIssue(
                    IssueCode.SELF_DEPENDENCY,
                    f"step {step.id} depends on itself; remove {step.id} from its depends_on",
                    (step.id,),
                )
            )
        for dep in dict.fromkeys(step.depends_on):
            if dep not in known:
                issues.append(
                    PlanIssue(
                        IssueCode.UNKNOWN_DEPENDENCY,
                        f"step {step.id} depends on {dep}, which is not a step in this plan; "
                        f"use one of the plan's step ids or drop it",
                        (step.id, dep),
                    )
                )
    graph = _dependency_graph(plan)
    index = _index(plan)
    for cycle in _cycles(graph, index):
        issues.append(
            PlanIssue(
                IssueCode.CYCLE,
                f"dependency cycle: {ARROW.join(cycle)} (each step depends on the next); "
                f"remove one of these dependencies",
                cycle,
            )
        )
    issues.extend(_write_conflicts(plan, graph))
    return issues


def validate(plan: Plan) -> None:
    """Raise :class:`PlanValidationError` with every issue, or return if the plan is a valid DAG."""
    issues = find_issues(plan)
    if issues:
        raise PlanValidationError(issues)


# ------------------------------------------------------------------------------------------------ scheduling


def _bits(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


class PlanGraph:
    """Scheduling views of a valid plan. Building one validates the plan (raising :class:`PlanValidationError`).

    Building, :meth:`order`, :meth:`generations`, :meth:`ready` and :meth:`critical_path` are linear in the plan's
    size (steps plus dependencies); :meth:`schedule` follows a run step by step at a cost per step of that step's
    dependents. Only :meth:`depends_on` and :meth:`parallel_pairs` need the transitive closure, which is computed on
    first use as one bitset per step (``bench/plans_scale_bench.py`` measures all of these up to 10,000 steps).
    """

    def __init__(self, plan: Plan) -> None:
        validate(plan)
        self.plan = plan
        self.graph: nx.DiGraph = _dependency_graph(plan)
        self._index = _index(plan)
        self._order: tuple[str, ...] = tuple(
            nx.lexicographical_topological_sort(self.graph, key=self._index.__getitem__)
        )
        self._closure: tuple[list[int], list[int]] | None = None

    def _reach(self) -> tuple[list[int], list[int]]:
        """(ancestors, descendants) of each step as bitsets over document positions, built once in execution order."""
        if self._closure is None:
            n = len(self.plan.steps)
            ancestors = [0] * n
            descendants = [0] * n  # pragma: no mutate - bit 0: only later steps' bits are read
            for sid in self._order:
                i = self._index[sid]
                for dep in self.graph.predecessors(sid):
                    d = self._index[dep]
                    ancestors[i] |= ancestors[d] | (1 << d)
            for sid in reversed(self._order):
                i = self._index[sid]
                for succ in self.graph.successors(sid):
                    s = self._index[succ]
                    descendants[i] |= descendants[s] | (1 << s)
            self._closure = (ancestors, descendants)
        return self._closure

    def order(self) -> tuple[str, ...]:
        """A topological execution order; among steps free to go, the earlier in the document goes first."""
        return self._order

    def generations(self) -> tuple[tuple[str, ...], ...]:
        """Waves of steps: each wave depends only on earlier waves (each wave in document order)."""
        return tuple(tuple(sorted(gen, key=self._index.__getitem__)) for gen in nx.topological_generations(self.graph))

    def ready(self, statuses: Mapping[str, StepStatus] | None = None) -> tuple[str, ...]:
        """Pending steps whose dependencies are all done or skipped, in execution order.

        ``statuses`` overrides the steps' own ``status`` for the ids it names. To follow a run step by step, build a
        :meth:`schedule` once instead of calling this after every step.
        """
        given = statuses or {}

        def status(sid: str) -> StepStatus:
            return given.get(sid, self.plan.steps[self._index[sid]].status)

        return tuple(
            sid
            for sid in self._order
            if status(sid) is StepStatus.PENDING
            and all(status(dep) in SATISFIED for dep in self.graph.predecessors(sid))
        )

    def schedule(self, statuses: Mapping[str, StepStatus] | None = None) -> Schedule:
        """An incremental view of :meth:`ready` that is updated as steps change status."""
        return Schedule(self, statuses)

    def critical_path(self) -> tuple[str, ...]:
        """The longest chain of dependent steps (by number of steps), first step first; of equally long chains, the one
        whose last step comes first in :meth:`order`."""
        return tuple(nx.dag_longest_path(self.graph, topo_order=self._order))

    def depends_on(self, a: str, b: str) -> bool:
        """Whether step ``a`` depends on step ``b``, directly or through others."""
        return bool(self._reach()[0][self._index[a]] >> self._index[b] & 1)

    def may_run_in_parallel(self, a: str, b: str) -> bool:
        """Two distinct steps with no path between them (validation already made their writes disjoint)."""
        return a != b and not self.depends_on(a, b) and not self.depends_on(b, a)

    def parallel_pairs(self) -> tuple[tuple[str, str], ...]:
        """Every pair that :meth:`may_run_in_parallel`, each pair and the list in document order."""
        ancestors, descendants = self._reach()
        steps = self.plan.steps
        n = len(steps)
        everyone = (1 << n) - 1  # pragma: no mutate - bit 0 is no later step's: -2 is the same
        pairs: list[tuple[str, str]] = []
        for i in range(n):
            later = everyone & ~((1 << (i + 1)) - 1)
            free = later & ~(ancestors[i] | descendants[i])
            pairs.extend((steps[i].id, steps[j].id) for j in _bits(free))
        return tuple(pairs)


class Schedule:
    """Which steps may start, kept current as steps change status: :meth:`set_status` costs the step's number of
    dependents, so following a whole run is linear in the plan's size (the graph is never rebuilt per step).

    It always agrees with ``PlanGraph.ready`` given the same statuses (a property test holds it to that).
    """

    def __init__(self, graph: PlanGraph, statuses: Mapping[str, StepStatus] | None = None) -> None:
        given = statuses or {}
        self._graph = graph
        self._position = {sid: i for i, sid in enumerate(graph.order())}
        self._status: dict[str, StepStatus] = {
            sid: given.get(sid, graph.plan.steps[graph._index[sid]].status) for sid in graph.order()
        }
        self._waiting: dict[str, int] = {
            sid: sum(1 for dep in graph.graph.predecessors(sid) if self._status[dep] not in SATISFIED)
            for sid in graph.order()
        }
        self._ready: set[str] = {sid for sid in graph.order() if self._free(sid)}
        self._heap: list[tuple[int, str]] = sorted((self._position[sid], sid) for sid in self._ready)

    def _free(self, sid: str) -> bool:
        return self._status[sid] is StepStatus.PENDING and self._waiting[sid] == 0

    def _update(self, sid: str) -> None:
        if self._free(sid):
            if sid not in self._ready:
                self._ready.add(sid)
                heapq.heappush(self._heap, (self._position[sid], sid))
        else:
            self._ready.discard(sid)  # its heap entry is dropped when it comes up

    def status(self, sid: str) -> StepStatus:
        return self._status[sid]

    def set_status(self, sid: str, status: StepStatus) -> None:
        """Record a step's new status; its dependents become ready (or stop being ready) accordingly."""
        before = self._status[sid]
        self._status[sid] = status
        change = (status in SATISFIED) - (before in SATISFIED)
        if change:
            for succ in self._graph.graph.successors(sid):
                self._waiting[succ] -= change
                self._update(succ)
        self._update(sid)

    def next(self) -> str | None:
        """The first step that may start, in execution order (``None`` when none may)."""
        while self._heap:
            _, sid = self._heap[0]
            if sid in self._ready:
                return sid
            heapq.heappop(self._heap)
        return None

    def ready(self) -> tuple[str, ...]:
        """Every step that may start, in execution order (as ``PlanGraph.ready``)."""
        return tuple(sorted(self._ready, key=self._position.__getitem__))
