"""What changed between two rubric versions: verdict and cell flips, fixed / broken disagreements.

:class:`VersionDiff` is the "this edit fixed 3 disagreements, broke 1" answer of
:meth:`rubric_studio.engine.versions._versions.VersionHistory.diff`; this module holds the diff
itself and the comparisons it is made of, so :mod:`~rubric_studio.engine.versions._versions` stays
about recording versions.

A disagreement counts as *fixed* when a sample (or cell) that disagreed with its
label in version a agrees in version b, and *broken* the other way round; items
compared in only one of the two versions (pending, unlabelled) count as neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rubric_studio.core.agreement import Agreement, AgreementReport

if TYPE_CHECKING:
    from rubric_studio.core.rubric import Rubric

FIGURES = ("accuracy", "kappa", "false_pass_rate", "false_fail_rate", "alignment")

LabelsSnapshot = dict[str, dict[str, Any]]
"""Human labels as a version saw them: sample id -> ``{"verdict": "pass"|"fail"|None, "criteria": {id: met|unmet}}``."""

Pairs = tuple[dict[str, tuple[str, str]], dict[str, dict[str, tuple[str, str]]]]
"""(human, rubric) per sample, and per criterion per sample, as in AgreementReport."""


@dataclass
class Fixes:
    """Disagreements with the labels fixed and broken between two versions."""

    fixed: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {"fixed": list(self.fixed), "broken": list(self.broken)}


@dataclass
class VersionDiff:
    """What changed from version ``a`` to version ``b``, and what kind of change it was
    (``kind``: "rubric edit", "samples change + judge change" ...; see versions.change_kind)."""

    a: int
    b: int
    kind: str = "rubric edit"
    to_pass: list[str] = field(default_factory=list)  # fail → pass
    to_fail: list[str] = field(default_factory=list)  # pass → fail
    other_changes: list[tuple[str, str, str]] = field(default_factory=list)  # (id, before, after)
    cell_flips: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # criterion -> (id, before, after)
    overall: Fixes = field(default_factory=Fixes)
    criteria: dict[str, Fixes] = field(default_factory=dict)
    deltas: dict[str, dict[str, tuple[float | None, float | None]]] = field(default_factory=dict)
    rubric_changes: list[str] = field(default_factory=list)
    #: What changed besides the rubric text, in words: panel members, annotators, who labelled.
    causes: list[str] = field(default_factory=list)

    @property
    def cells_fixed(self) -> int:
        return sum(len(f.fixed) for f in self.criteria.values())

    @property
    def cells_broken(self) -> int:
        return sum(len(f.broken) for f in self.criteria.values())

    @property
    def title(self) -> str:
        """"v3 → v4 (rubric edit)"."""
        return f"v{self.a} → v{self.b} ({self.kind})"

    def fixes_text(self) -> str:
        """"fixed 3 disagreements, broke 1" (against the labels)."""
        fixed = len(self.overall.fixed)
        return f"fixed {fixed} disagreement{'s' if fixed != 1 else ''}, broke {len(self.overall.broken)}"

    def summary_line(self) -> str:
        """One line: "v3 → v4 (rubric edit): fixed 3 disagreements, broke 1 · 1 fail→pass · kappa 0.40 → 0.62"."""
        parts = [self.fixes_text()]
        if self.cells_fixed or self.cells_broken:
            parts.append(f"cells: fixed {self.cells_fixed}, broke {self.cells_broken}")
        flips = []
        if self.to_pass:
            flips.append(f"{len(self.to_pass)} fail→pass")
        if self.to_fail:
            flips.append(f"{len(self.to_fail)} pass→fail")
        if self.other_changes:
            flips.append(f"{len(self.other_changes)} other")
        parts.append(", ".join(flips) if flips else "no verdict changes")
        before, after = self.deltas.get("overall", {}).get("kappa", (None, None))
        if before is not None or after is not None:
            parts.append(f"kappa {_fmt(before)} → {_fmt(after)}")
        return f"{self.title}: " + " · ".join(parts)

    def criterion_lines(self) -> list[str]:
        """Per criterion with any change: "tone: fixed 2, broke 0 · 3 cells flipped"."""
        lines = []
        for cid in sorted(set(self.criteria) | set(self.cell_flips)):
            fixes = self.criteria.get(cid, Fixes())
            flips = len(self.cell_flips.get(cid, []))
            if fixes.fixed or fixes.broken or flips:
                lines.append(f"{cid}: fixed {len(fixes.fixed)}, broke {len(fixes.broken)} · {flips} cells flipped")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "kind": self.kind,
            "summary": self.summary_line(),
            "fail_to_pass": list(self.to_pass),
            "pass_to_fail": list(self.to_fail),
            "other_changes": [list(c) for c in self.other_changes],
            "cell_flips": {k: [list(f) for f in v] for k, v in self.cell_flips.items()},
            "overall": self.overall.to_dict(),
            "criteria": {k: v.to_dict() for k, v in self.criteria.items()},
            "deltas": {k: {f: list(v) for f, v in d.items()} for k, d in self.deltas.items()},
            "rubric_changes": list(self.rubric_changes),
            "causes": list(self.causes),
        }


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def verdict_flips(out: VersionDiff, before: Mapping[str, str], after: Mapping[str, str]) -> None:
    """Fill ``out``'s fail→pass, pass→fail and other verdict changes."""
    for sid, now in after.items():
        was = before.get(sid)
        if was is None or was == now:
            continue
        if (was, now) == ("fail", "pass"):
            out.to_pass.append(sid)
        elif (was, now) == ("pass", "fail"):
            out.to_fail.append(sid)
        else:
            out.other_changes.append((sid, was, now))


def cell_flips(out: VersionDiff, before: Mapping[str, Mapping[str, str]], after: Mapping[str, Mapping[str, str]]) -> None:
    """Fill ``out``'s met ↔ unmet flips per criterion."""
    for sid, cells in after.items():
        for cid, now in cells.items():
            was = before.get(sid, {}).get(cid)
            if {was, now} == {"met", "unmet"}:
                out.cell_flips.setdefault(cid, []).append((sid, was, now))


def agreement_changes(out: VersionDiff, pa: Pairs, pb: Pairs) -> None:
    """Fill ``out``'s fixed / broken disagreements and the agreement figures before and after."""
    out.overall = _fixes(pa[0], pb[0])
    for cid in sorted(set(pa[1]) | set(pb[1])):
        fixes = _fixes(pa[1].get(cid, {}), pb[1].get(cid, {}))
        if fixes.fixed or fixes.broken:
            out.criteria[cid] = fixes
    out.deltas = _deltas(pa, pb)


def _fixes(before: dict[str, tuple[str, str]], after: dict[str, tuple[str, str]]) -> Fixes:
    fixes = Fixes()
    for sid, (human_b, rubric_b) in after.items():
        if sid not in before:
            continue
        human_a, rubric_a = before[sid]
        was_wrong, is_wrong = human_a != rubric_a, human_b != rubric_b
        if was_wrong and not is_wrong:
            fixes.fixed.append(sid)
        elif is_wrong and not was_wrong:
            fixes.broken.append(sid)
    return fixes


def pairs_from_labels(verdicts: Mapping[str, str], cells: Mapping[str, Mapping[str, str]], labels: LabelsSnapshot) -> Pairs:
    """(human, rubric) pairs of graded verdicts and cells against a labels snapshot."""
    pairs: dict[str, tuple[str, str]] = {}
    cell_pairs: dict[str, dict[str, tuple[str, str]]] = {}
    for sid, verdict in verdicts.items():
        label = labels.get(sid)
        if label is None:
            continue
        if label.get("verdict") is not None and verdict in ("pass", "fail"):
            pairs[sid] = (label["verdict"], verdict)
        for cid, state in (label.get("criteria") or {}).items():
            status = cells.get(sid, {}).get(cid)
            if status in ("met", "unmet"):
                cell_pairs.setdefault(cid, {})[sid] = (state, status)
    return pairs, cell_pairs


def pairs_from_report(report: AgreementReport | None) -> Pairs | None:
    return None if report is None else (report.pairs, report.cell_pairs)


def agreement_of(pairs: dict[str, tuple[str, str]], positive: str) -> Agreement:
    return Agreement.of((h == positive, r == positive) for h, r in pairs.values())


def figures_of(pairs: Pairs) -> dict[str, Any]:
    """Agreement figures (n and :data:`FIGURES`) overall and per criterion, rounded as in reports."""

    def row(value: Agreement) -> dict[str, Any]:
        data = value.to_dict()
        return {"n": data["n"], **{f: data[f] for f in FIGURES}}

    return {"overall": row(agreement_of(pairs[0], "pass")),
            "criteria": {cid: row(agreement_of(cells, "met")) for cid, cells in sorted(pairs[1].items())}}  # fmt: skip


def _deltas(a: Pairs, b: Pairs) -> dict[str, dict[str, tuple[float | None, float | None]]]:
    before, after = agreement_of(a[0], "pass"), agreement_of(b[0], "pass")
    out = {"overall": {f: (getattr(before, f), getattr(after, f)) for f in FIGURES}}
    for cid in sorted(set(a[1]) | set(b[1])):
        ca, cb = agreement_of(a[1].get(cid, {}), "met"), agreement_of(b[1].get(cid, {}), "met")
        out[cid] = {f: (getattr(ca, f), getattr(cb, f)) for f in FIGURES}
    return out


def rubric_changes(a: Rubric, b: Rubric) -> list[str]:
    """Human-readable changes of meaning between two rubrics."""
    changes = []
    if a.pass_threshold != b.pass_threshold:
        changes.append(f"pass_threshold {a.pass_threshold:g} → {b.pass_threshold:g}")
    old = {c.key: c for c in a.criteria}
    new = {c.key: c for c in b.criteria}
    for cid in new:
        if cid not in old:
            changes.append(f"added {cid}")
        elif old[cid].fingerprint() != new[cid].fingerprint():
            what = [f for f in ("outcome", "check", "weight", "required", "operator", "score_ranges", "min_score")
                    if getattr(old[cid], f) != getattr(new[cid], f)]  # fmt: skip
            changes.append(f"changed {cid} ({', '.join(what) or 'definition'})")
    changes.extend(f"removed {cid}" for cid in old if cid not in new)
    return changes
