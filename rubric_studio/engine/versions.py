"""Rubric versions in a session, and what changed between any two of them.

Every save the studio grades becomes a :class:`Version`: the rubric, a hash of its
text, each sample's verdict and cell statuses, and the agreement with the human
labels at that moment. :meth:`VersionHistory.diff` says which verdicts flipped,
which cells flipped per criterion, which disagreements with the labels the edit
fixed or broke (overall and per criterion) and how agreement moved — the
"this edit fixed 3 disagreements, broke 1" line.

A disagreement counts as *fixed* when a sample (or cell) that disagreed with its
label in version a agrees in version b, and *broken* the other way round; items
compared in only one of the two versions (pending, unlabelled) count as neither.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rubric_studio.core.agreement import Agreement, AgreementReport
from rubric_studio.core.labels import Label
from rubric_studio.core.results import SampleResult
from rubric_studio.core.rubric import Rubric

FIGURES = ("accuracy", "kappa", "false_pass_rate", "false_fail_rate", "alignment")


@dataclass
class Version:
    """One graded save of the rubric."""

    number: int
    timestamp: float
    text_hash: str
    rubric: Rubric
    verdicts: dict[str, str]
    cells: dict[str, dict[str, str]]  # sample id -> criterion id -> status
    scores: dict[str, float | None]
    agreement: AgreementReport | None = None

    @property
    def label(self) -> str:
        return f"v{self.number} {time.strftime('%H:%M:%S', time.localtime(self.timestamp))}"


@dataclass
class Fixes:
    """Disagreements with the labels fixed and broken between two versions."""

    fixed: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, list[str]]:
        return {"fixed": list(self.fixed), "broken": list(self.broken)}


@dataclass
class VersionDiff:
    """What changed from version ``a`` to version ``b``."""

    a: int
    b: int
    to_pass: list[str] = field(default_factory=list)  # fail → pass
    to_fail: list[str] = field(default_factory=list)  # pass → fail
    other_changes: list[tuple[str, str, str]] = field(default_factory=list)  # (id, before, after)
    cell_flips: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # criterion -> (id, before, after)
    overall: Fixes = field(default_factory=Fixes)
    criteria: dict[str, Fixes] = field(default_factory=dict)
    deltas: dict[str, dict[str, tuple[float | None, float | None]]] = field(default_factory=dict)
    rubric_changes: list[str] = field(default_factory=list)

    @property
    def cells_fixed(self) -> int:
        return sum(len(f.fixed) for f in self.criteria.values())

    @property
    def cells_broken(self) -> int:
        return sum(len(f.broken) for f in self.criteria.values())

    def summary_line(self) -> str:
        """One line: "v3 → v4: fixed 3 disagreements, broke 1 · 1 fail→pass · kappa 0.40 → 0.62"."""
        parts = [f"fixed {len(self.overall.fixed)} disagreement{'s' if len(self.overall.fixed) != 1 else ''}, "
                 f"broke {len(self.overall.broken)}"]  # fmt: skip
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
        return f"v{self.a} → v{self.b}: " + " · ".join(parts)

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
            "summary": self.summary_line(),
            "fail_to_pass": list(self.to_pass),
            "pass_to_fail": list(self.to_fail),
            "other_changes": [list(c) for c in self.other_changes],
            "cell_flips": {k: [list(f) for f in v] for k, v in self.cell_flips.items()},
            "overall": self.overall.to_dict(),
            "criteria": {k: v.to_dict() for k, v in self.criteria.items()},
            "deltas": {k: {f: list(v) for f, v in d.items()} for k, d in self.deltas.items()},
            "rubric_changes": list(self.rubric_changes),
        }


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def text_hash(rubric: Rubric, text: str | None = None) -> str:
    """Hash of the rubric's file text (falls back to its content hash)."""
    source = text if text is not None else rubric._source_text
    if source is None:
        return rubric.content_hash()
    return hashlib.sha256(source.encode()).hexdigest()[:16]


class VersionHistory:
    """The versions of one studio session, oldest first (at most ``limit`` kept)."""

    def __init__(self, limit: int = 200):
        self.versions: list[Version] = []
        self.limit = limit
        self._next = 1

    def __len__(self) -> int:
        return len(self.versions)

    @property
    def latest(self) -> Version | None:
        return self.versions[-1] if self.versions else None

    def get(self, number: int) -> Version:
        for version in self.versions:
            if version.number == number:
                return version
        raise KeyError(number)

    def record(
        self,
        rubric: Rubric,
        results: list[SampleResult],
        agreement: AgreementReport | None = None,
        *,
        text: str | None = None,
        timestamp: float | None = None,
    ) -> Version:
        """Record graded results of a save. The same text as the latest version updates it."""
        digest = text_hash(rubric, text)
        verdicts = {r.id: str(r.verdict) for r in results}
        cells = {r.id: {c.id: str(c.status) for c in r.criteria} for r in results}
        scores = {r.id: r.score for r in results}
        latest = self.latest
        if latest is not None and latest.text_hash == digest:
            latest.rubric, latest.verdicts, latest.cells, latest.scores = rubric, verdicts, cells, scores
            latest.agreement = agreement
            return latest
        version = Version(self._next, time.time() if timestamp is None else timestamp, digest, rubric,
                          verdicts, cells, scores, agreement)  # fmt: skip
        self._next += 1
        self.versions.append(version)
        del self.versions[: max(0, len(self.versions) - self.limit)]
        return version

    def diff_latest(self, labels: Mapping[str, Label] | None = None) -> VersionDiff | None:
        """The diff of the latest version against the one before, if there are two."""
        if len(self.versions) < 2:
            return None
        return self.diff(self.versions[-2], self.versions[-1], labels)

    def diff(self, a: Version | int, b: Version | int, labels: Mapping[str, Label] | None = None) -> VersionDiff:
        """What changed from ``a`` to ``b`` (versions or their numbers).

        With ``labels``, both versions are compared against those labels (so a label
        edited between the saves is not credited to the rubric edit); without, each
        version's recorded agreement is used.
        """
        va = self.get(a) if isinstance(a, int) else a
        vb = self.get(b) if isinstance(b, int) else b
        out = VersionDiff(va.number, vb.number)
        for sid, after in vb.verdicts.items():
            before = va.verdicts.get(sid)
            if before is None or before == after:
                continue
            if (before, after) == ("fail", "pass"):
                out.to_pass.append(sid)
            elif (before, after) == ("pass", "fail"):
                out.to_fail.append(sid)
            else:
                out.other_changes.append((sid, before, after))
        for sid, cells in vb.cells.items():
            for cid, after in cells.items():
                before = va.cells.get(sid, {}).get(cid)
                if {before, after} == {"met", "unmet"}:
                    out.cell_flips.setdefault(cid, []).append((sid, before, after))
        pa, pb = _pairs(va, labels), _pairs(vb, labels)
        if pa is not None and pb is not None:
            out.overall = _fixes(pa[0], pb[0])
            for cid in sorted(set(pa[1]) | set(pb[1])):
                fixes = _fixes(pa[1].get(cid, {}), pb[1].get(cid, {}))
                if fixes.fixed or fixes.broken:
                    out.criteria[cid] = fixes
            out.deltas = _deltas(pa, pb)
        out.rubric_changes = rubric_changes(va.rubric, vb.rubric)
        return out


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


_Pairs = tuple[dict[str, tuple[str, str]], dict[str, dict[str, tuple[str, str]]]]


def _pairs(version: Version, labels: Mapping[str, Label] | None) -> _Pairs | None:
    """(human, rubric) per sample and per criterion cell, as in AgreementReport."""
    if labels is None:
        report = version.agreement
        return None if report is None else (report.pairs, report.cell_pairs)
    pairs: dict[str, tuple[str, str]] = {}
    cell_pairs: dict[str, dict[str, tuple[str, str]]] = {}
    for sid, verdict in version.verdicts.items():
        label = labels.get(sid)
        if label is None:
            continue
        if label.verdict is not None and verdict in ("pass", "fail"):
            pairs[sid] = (label.verdict, verdict)
        for cid, state in label.criteria.items():
            status = version.cells.get(sid, {}).get(cid)
            if status in ("met", "unmet"):
                cell_pairs.setdefault(cid, {})[sid] = (state, status)
    return pairs, cell_pairs


def _agreement(pairs: dict[str, tuple[str, str]], positive: str) -> Agreement:
    return Agreement.of((h == positive, r == positive) for h, r in pairs.values())


def _deltas(a: _Pairs, b: _Pairs) -> dict[str, dict[str, tuple[float | None, float | None]]]:
    before, after = _agreement(a[0], "pass"), _agreement(b[0], "pass")
    out = {"overall": {f: (getattr(before, f), getattr(after, f)) for f in FIGURES}}
    for cid in sorted(set(a[1]) | set(b[1])):
        ca, cb = _agreement(a[1].get(cid, {}), "met"), _agreement(b[1].get(cid, {}), "met")
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
