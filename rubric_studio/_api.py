"""The notebook and pytest surface beyond grading: agreement with human labels, fitting, ``improve``,
comparing judges, export. Each takes what a notebook has at hand — a rubric or its path, a report,
labels as a mapping or a labels file — and options as keywords, and returns the engine's own
result objects (with ``to_dict()``). Read through :mod:`rubric_studio` (``rubric_studio.agreement``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from rubric_studio.core.agreement import AgreementReport
    from rubric_studio.core.labels import Label
    from rubric_studio.core.rubric import Rubric
    from rubric_studio.engine.fit import FitResult
    from rubric_studio.engine.improve import ImproveReport
    from rubric_studio.engine.judge_compare import JudgeFigures
    from rubric_studio.engine.report import Report
    from rubric_studio.interop import ExportResult

LabelsLike = Mapping[str, Any] | str | Path


def _rubric(rubric: Rubric | str | Path) -> Rubric:
    """``rubric``, loaded first when it is a path."""
    if isinstance(rubric, str | Path):
        from rubric_studio.core.loading import load_rubric

        return load_rubric(rubric)
    return rubric


def as_labels(labels: LabelsLike) -> dict[str, Label]:
    """Labels by sample id from a labels file path, a :class:`LabelSet`, or a mapping of sample id to
    a :class:`Label`, ``"pass"`` / ``"fail"`` / a bool, or a mapping like a labels file entry
    (``verdict``, ``score``, ``criteria``, ``note``). ValueError names the sample id that is wrong."""
    from rubric_studio.core.labels import Label, load_labels, parse_label

    if isinstance(labels, str | Path):
        loaded = load_labels(labels, missing_ok=False)
        if loaded.problems:
            raise ValueError("; ".join(str(p) for p in loaded.problems))
        return dict(loaded.labels)
    labels = getattr(labels, "labels", labels)  # a LabelSet
    return {str(sid): value if isinstance(value, Label) else parse_label(value, where=f"labels[{sid!r}]")
            for sid, value in labels.items()}


def agreement(rubric: Rubric | str | Path, report: Report, labels: LabelsLike) -> AgreementReport:
    """How far the rubric's verdicts in ``report`` agree with human ``labels``: ``.overall.kappa``,
    ``.overall.accuracy``, per criterion in ``.criteria``, the disagreeing samples, ``to_dict()``
    (the object ``calibrate --format json`` prints)."""
    from rubric_studio.core.agreement import agreement as compute

    return compute(report.samples, as_labels(labels), _rubric(rubric))


def fit(rubric: Rubric | str | Path, report: Report, labels: LabelsLike, *, seed: int = 0, holdout: float = 0.3,
        weights: bool = True) -> FitResult:
    """Fit ``pass_threshold`` (and the weights unless ``weights=False``) to the labels, checked on a
    ``holdout`` share of them; ``.fitted_rubric(rubric)`` is the rubric with the fit applied."""
    from rubric_studio.engine.fit import fit as compute

    return compute(_rubric(rubric), report.samples, as_labels(labels), seed=seed, holdout=holdout, weights=weights)


def improve(rubric: Rubric | str | Path, samples: Iterable[Any], labels: LabelsLike, *, judge: str | None = None,
            base_url: str | None = None, criterion: str | None = None, kinds: Sequence[str] | None = None,
            seed: int = 0, cache: bool = True, cache_path: str | Path | None = None,
            allow_code: bool = False) -> ImproveReport:
    """Suggested fixes for the criterion the judge and the labels disagree on most (or ``criterion``),
    each measured on held-out labels; ``kinds`` limits them (reword, examples, check, required,
    scoring). Rewordings need a model: the judge writes them. Samples as for :func:`grade`."""
    from rubric_studio.engine.api import check_judge_text, run_blocking

    check_judge_text(judge)
    return run_blocking(lambda: _improve(_rubric(rubric), samples, as_labels(labels), judge, base_url, criterion,
                                         kinds, seed, cache, cache_path, allow_code))


async def _improve(rubric: Rubric, samples: Iterable[Any], labels: dict[str, Label], judge: str | None,
                   base_url: str | None, criterion: str | None, kinds: Sequence[str] | None, seed: int, cache: bool,
                   cache_path: str | Path | None, allow_code: bool) -> ImproveReport:
    from rubric_studio.core.samples import as_samples
    from rubric_studio.engine.api import make_grader
    from rubric_studio.engine.assistant import make_assistant
    from rubric_studio.engine.improve import KINDS
    from rubric_studio.engine.improve import improve as run
    from rubric_studio.judges.base import JudgeError

    chosen = list(KINDS if kinds is None else kinds)
    grader = make_grader(rubric, judge=judge, base_url=base_url, use_cache=cache, cache_path=cache_path,
                         allow_code=allow_code)
    assistant = None
    if "reword" in chosen:
        try:
            from rubric_studio.engine.improve._meaning import reworder_of

            judge_model, judge_url = reworder_of(grader)  # the judge grading (a panel's first member)
            assistant = make_assistant(rubric, model=judge_model, base_url=base_url or judge_url, cache_path=cache_path,
                                       use_cache=cache, allow_code=allow_code)
        except JudgeError:
            chosen.remove("reword")  # no model to write rewordings: the other kinds still run
    try:
        return await run(rubric, as_samples(samples), labels, grader=grader, assistant=assistant,
                         criterion_id=criterion, seed=seed, kinds=chosen)
    finally:
        await grader.aclose()
        if assistant is not None:
            await assistant.aclose()


@dataclass
class JudgeComparison:
    """Several judges graded the same labelled samples: figures per judge, the one to use and why."""

    judges: list[JudgeFigures]
    recommended: str | None
    why: str
    #: the rule that decided (:class:`~rubric_studio.engine.judge_compare.Recommendation`)
    basis: str = ""
    indistinguishable: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"judges": [f.to_dict() for f in self.judges], "recommended": self.recommended,
                "recommendation": self.why, "recommendation_basis": self.basis,
                "indistinguishable": list(self.indistinguishable)}


def compare_judges(rubric: Rubric | str | Path, samples: Iterable[Any], labels: LabelsLike, *,
                   judges: Sequence[str], base_url: str | None = None, repeat: int = 1, cache: bool = True,
                   cache_path: str | Path | None = None, allow_code: bool = False) -> JudgeComparison:
    """Grade the labelled samples with each judge (``provider:model``) and compare their agreement
    with the labels (kappa with its interval), cost and speed, as ``calibrate --judges`` does."""
    from rubric_studio.core.samples import as_samples
    from rubric_studio.engine.api import check_judge_text, run_blocking
    from rubric_studio.engine.judge_compare import figures, grade_each, labelled, recommendation

    if isinstance(judges, str):
        raise ValueError("judges: expected a list of provider:model names, got one string")
    for judge in judges:
        check_judge_text(judge)
    loaded = _rubric(rubric)
    chosen, kept = labelled(as_samples(samples), as_labels(labels))
    options = {"base_url": base_url, "repeat": repeat, "use_cache": cache, "cache_path": cache_path,
               "allow_code": allow_code}
    runs = run_blocking(lambda: grade_each(loaded, chosen, list(judges), options))
    compared = [figures(run, kept, loaded)[0] for run in runs]
    found = recommendation(compared)
    return JudgeComparison(compared, found.judge, found.why, found.basis, found.indistinguishable)


def export(rubric: Rubric | str | Path, target: str, *, samples: Iterable[Any] | None = None,
           agentv_version: int | None = None) -> ExportResult:
    """The rubric written for another tool (``target`` a name of :data:`rubric_studio.interop.FORMATS`):
    ``.text``, ``.warnings`` (what the target cannot express), ``.files`` (companions to write beside
    it). ``samples`` become the test cases of a target that runs them (promptfoo, AgentV)."""
    from rubric_studio.core.samples import as_samples
    from rubric_studio.interop import FORMATS, export_rubric

    options: dict[str, Any] = {}
    if samples is not None:
        if target in FORMATS and not FORMATS[target].samples:
            raise ValueError(f"{target} does not carry samples; export without samples=")
        options["samples"] = as_samples(samples)
    if agentv_version is not None:
        if target != "agentv":
            raise ValueError("agentv_version= applies to target 'agentv' only")
        options["agentv_version"] = agentv_version
    return export_rubric(_rubric(rubric), target, **options)
