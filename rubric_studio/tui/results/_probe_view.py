"""Bias probes in the inspector: after *Probe criterion for bias…* ran in the studio, a flipped
cell's inspector shows what the judge saw and how its verdict moved.

The probe screen hands its report to :class:`ProbeFindings` (one per studio window); the
inspector asks it for the findings of the selected sample × criterion and draws each as a
section — ``Probe: verbosity — unmet → met``, how that kind reads against the judge's own noise
(beyond it: a finding; "not distinguishable from this judge's own noise (noise 31%)": no
finding; a can't-tell or suggestive reading is shown as it is, since neither is "no finding"),
what the kind changes, and what the judge saw: the perturbed text with the **added** text marked
(padding, confident or hedging sentences around the output), the reworded outcome, the order the
criteria were judged in, or — for leniency — the content-free answer judged met in place of the
output ("(an empty answer)" for the empty one). A cell that flipped under every kind probed is
one section, *unstable*, not one per kind. A probe run again for the same criterion replaces its
findings; a finding whose sample's output has changed since is not shown (it describes text that
is no longer there). Probes never change the rubric or the labels, and neither do these
sections: they are only shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rich.text import Text

from rubric_studio.core.safe_text import terminal_safe

__all__ = ["ADDED_STYLE", "ProbeFinding", "ProbeFindings", "probe_text"]

ADDED_STYLE = "black on green"  # text a probe added around the output
_AROUND_OUTPUT = ("verbosity", "confidence", "hedging")
_CONTENT_FREE = "leniency"
#: What the inspector shows for the content-free answer that is no text at all.
EMPTY_ANSWER = "(an empty answer)"


@dataclass(frozen=True)
class ProbeFinding:
    """One flipped cell of one probe kind: the verdict before → after, what the judge saw, and the
    sample's output it was made from."""

    kind: str
    before: str
    after: str
    text: str
    output: str
    #: How the kind reads against the judge's noise (:func:`~rubric_studio.engine.probes.noise_verdict`);
    #: for an unstable cell, the kinds it flipped under.
    verdict: str = ""


class ProbeFindings:
    """The flipped cells of the probes run in this window, by (sample id, criterion id)."""

    def __init__(self) -> None:
        self._cells: dict[tuple[str, str], list[ProbeFinding]] = {}

    def take(self, criterion_id: str, report: Any, samples_by_id: Mapping[str, Any]) -> int:
        """Keep the flips of ``report`` (a probe report of ``criterion_id``) in place of that
        criterion's earlier ones; how many were kept. A cell that flipped under every kind
        probed is kept once, as ``unstable``."""
        from rubric_studio.engine.probes import noise_verdict

        self._cells = {key: found for key, found in self._cells.items() if key[1] != criterion_id}
        unstable = {sid: kinds for sid, cid, kinds in report.unstable() if cid == criterion_id}
        kept = 0
        for sid, kinds in unstable.items():
            sample = samples_by_id.get(sid)
            if sample is not None:
                self._cells[(sid, criterion_id)] = [ProbeFinding("unstable", "", "", "", sample.output, ", ".join(kinds))]
                kept += 1
        for probe in report.kinds.values():
            entry = probe.criteria.get(criterion_id)
            for flip in entry.flipped if entry is not None else []:
                sample = samples_by_id.get(flip.sample_id)
                if sample is None or flip.sample_id in unstable:
                    continue
                noise = entry.noise
                verdict = noise_verdict(entry.beyond_noise, None if noise is None else noise.noise_rate,
                                        None if noise is None else noise.to_dict())  # fmt: skip
                finding = ProbeFinding(probe.kind, flip.before, flip.after, flip.text, sample.output, verdict)
                self._cells.setdefault((flip.sample_id, criterion_id), []).append(finding)
                kept += 1
        return kept

    def of(self, sample: Any, criterion_id: str | None) -> list[ProbeFinding]:
        """The findings of ``sample`` × ``criterion_id`` still about the sample's current output."""
        if sample is None or criterion_id is None:
            return []
        return [f for f in self._cells.get((sample.id, criterion_id), []) if f.output == sample.output]


def probe_text(findings: list[ProbeFinding]) -> Text:
    """One section per finding: the heading, what the kind changes, and what the judge saw."""
    from rubric_studio.engine.probes import DESCRIPTIONS

    out = Text()
    for finding in findings:
        if finding.kind == "unstable":
            out.append("\nProbe: unstable — the verdict flipped under every kind probed\n", style="bold yellow")
            out.append(f"({terminal_safe(finding.verdict)}): listed once, not as a finding of any kind; "
                       "the judge is unsure of this cell\n", style="dim")  # fmt: skip
            continue
        if finding.kind == _CONTENT_FREE:
            out.append(f"\nProbe: {finding.kind} — a content-free answer judged {finding.after}\n", style="bold cyan")
        else:
            out.append(f"\nProbe: {finding.kind} — {finding.before} → {finding.after}\n", style="bold cyan")
        if finding.verdict:
            out.append_text(_verdict_text(finding.verdict))
        out.append(f"{DESCRIPTIONS.get(finding.kind, finding.kind)}\n", style="dim")
        if finding.kind in _AROUND_OUTPUT:
            out.append_text(marked_text(finding.text, finding.output))
            out.append("\n(the added text is marked)\n", style="dim italic")
        elif finding.kind == "paraphrase":
            out.append("the criterion as the judge saw it: ", style="bold")
            out.append(terminal_safe(finding.text, multiline=True) + "\n")
        elif finding.kind == _CONTENT_FREE:
            out.append("the answer the judge saw, in place of the output: ", style="bold")
            if finding.text:
                out.append(terminal_safe(finding.text, multiline=True) + "\n")
            else:
                out.append(f"{EMPTY_ANSWER}\n", style="dim italic")
        else:
            out.append("the criteria in the order judged: ", style="bold")
            out.append(terminal_safe(finding.text, multiline=True) + "\n")
    return out


def _verdict_text(verdict: str) -> Text:
    """How the kind reads against the noise: a finding in bold; "not distinguishable" marked as not a
    finding; a can't-tell or suggestive reading as it is (neither is "no finding")."""
    if verdict.startswith("beyond"):
        return Text(verdict + "\n", style="bold magenta")
    if verdict.startswith("not distinguishable"):
        return Text(verdict + ": not a finding\n", style="yellow")
    return Text(verdict + "\n", style="yellow")


def marked_text(text: str, output: str) -> Text:
    """``text`` (the output with text added around it) with what was added marked; unmarked when
    the output is not found in it."""
    at = text.find(output) if output else -1
    if at < 0:
        return Text(terminal_safe(text, multiline=True))
    out = Text()
    out.append(terminal_safe(text[:at], multiline=True), style=ADDED_STYLE)
    out.append(terminal_safe(output, multiline=True))
    out.append(terminal_safe(text[at + len(output):], multiline=True), style=ADDED_STYLE)
    return out
