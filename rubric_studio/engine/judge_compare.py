"""Choosing the judge: the same labelled samples graded by several judges, compared.

Each judge grades through its own :class:`~rubric_studio.engine.grader.Grader` and the
persistent cache, so a judge already run costs no calls. Judges run one after another:
each one's wall time is then its own (no contention for the event loop, the network or
a local server that would have to hold several models at once).

Per judge: agreement with the human labels (:mod:`rubric_studio.core.agreement`, exactly
as plain ``calibrate`` computes it), flip rate with repeats, cost and wall time per 100
samples, calls, cache hits and errored cells. **Cost per 100 samples** is what judging
them costs with this judge: the run's ``cost_usd`` plus the replies it took from the
cache priced from the tokens recorded with them, so a fully cached run reports the same
cost as the run that paid; ``None`` when the model has no known price (never 0).

Only a judge whose kappa 95% interval lies above chance (lower bound > 0) is recommended.
When the intervals of several such judges overlap the best one's, they are indistinguishable
on these labels and the cheapest of them is the default, said as such; when no interval lies
above chance, nothing is recommended. Only judges that judged every labelled sample without
an errored cell are considered: a judge with errors is never recommended on partial data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rubric_studio.core.agreement import Agreement, AgreementReport, agreement
from rubric_studio.core.labels import Label
from rubric_studio.core.rubric import Rubric
from rubric_studio.core.samples import Sample
from rubric_studio.engine.report import Report


def parse_judges(text: str) -> list[str]:
    """``provider:model`` specs from a comma-separated list, a judge panel written ``A+B+C``
    (:mod:`rubric_studio.core.panel`); ValueError naming the bad one."""
    from rubric_studio.core.panel import check_judge_spec

    specs: list[str] = []
    for raw in text.split(","):
        spec = "+".join(part.strip() for part in raw.split("+"))
        for member in spec.split("+"):
            if not member:
                raise ValueError("--judges: an empty entry; expected provider:model,provider:model,... "
                                 "(a panel: provider:model+provider:model)")
            check_judge_spec(member, "--judges")
        if spec in specs:
            raise ValueError(f"--judges: {spec} is listed twice")
        specs.append(spec)
    return specs


def parse_judge_base_urls(entries: Sequence[str], judges: Sequence[str], flag: str = "--judges") -> dict[str, str]:
    """Each judge's own endpoint from ``JUDGE=URL`` entries (``--judge-base-url``), the judge as
    written in ``judges`` (given by ``flag``: ``--judges`` or ``--switch-to``): an entry, or a member
    of a panel entry ``A+B`` (that member's endpoint wherever it is listed); ValueError naming a bad
    entry. A URL is http(s); a judge is named once."""
    names = list(dict.fromkeys([*judges, *(member for judge in judges for member in judge.split("+"))]))
    found: dict[str, str] = {}
    for entry in entries:
        name, sep, url = entry.partition("=")
        name = "+".join(part.strip() for part in name.split("+"))
        url = url.strip()
        if not sep or not name or not url:
            raise ValueError(f"--judge-base-url: {entry!r} is not JUDGE=URL; e.g. "
                             f"--judge-base-url '{judges[0] if judges else 'openai:gpt-4o-mini'}=http://127.0.0.1:8080/v1'")
        if name not in names:
            raise ValueError(f"--judge-base-url: {name!r} is not one of the judges of {flag} "
                             f"({', '.join(judges)}) nor a member of a panel there; name it as written there")
        if not url.lower().startswith(("http://", "https://")) or len(url.split("://", 1)[1].strip("/")) == 0:
            raise ValueError(f"--judge-base-url: {url!r} for {name} is not an http(s) URL, e.g. http://127.0.0.1:8080/v1")
        if name in found:
            raise ValueError(f"--judge-base-url: {name} is given two base URLs")
        found[name] = url
    return found


def member_base_urls(judge: str, base_urls: Mapping[str, str]) -> dict[str, str]:
    """The endpoint of each member of entry ``judge`` (one judge, or a panel ``A+B``) that has one:
    the member's own ``--judge-base-url``, else the one given to the whole entry."""
    entry = base_urls.get(judge)
    found = {}
    for member in judge.split("+"):
        url = base_urls.get(member, entry)
        if url is not None:
            found[member] = url
    return found


def labelled(samples: Sequence[Sample], labels: Mapping[str, Label]) -> tuple[list[Sample], dict[str, Label]]:
    """The samples a person labelled with a verdict or a criterion (the only ones worth paying to
    compare), and those labels (a note or score alone takes no part in agreement)."""
    useful = {sid: label for sid, label in labels.items() if label.verdict is not None or label.criteria}
    return [s for s in samples if s.id in useful], useful


@dataclass
class JudgeRun:
    """One judge's grading of the labelled samples."""

    judge: str
    report: Report
    #: Replies served from the persistent cache, priced from their recorded tokens (None: no known price).
    cached_cost: float | None = 0.0


@dataclass
class JudgeFigures:
    """What the comparison shows for one judge."""

    judge: str
    samples: int
    agreement: Agreement
    flip_rate: float | None
    cost_usd: float | None  # what this run spent
    cost_per_100: float | None
    wall_seconds: float
    judge_calls: int
    cache_hits: int
    errors: int
    note: str | None = None  # why its cells were not judged, or why judging stopped
    #: A judge panel's cells pooled without a member that errored on them (their verdict is the
    #: other members'), and those members.
    member_errors: int = 0
    errored_members: tuple[str, ...] = ()

    @property
    def kappa(self) -> float | None:
        return self.agreement.kappa

    @property
    def kappa_ci(self) -> tuple[float, float] | None:
        return self.agreement.kappa_ci

    @property
    def latency_per_100_s(self) -> float | None:
        return self.wall_seconds / self.samples * 100 if self.samples else None

    @property
    def usable(self) -> bool:
        """Judged every labelled sample, no cell errored (nor a panel member on one), and kappa
        measures something: it is defined and the human verdicts hold both classes (with one, kappa
        is 0 or undefined whatever the judge does)."""
        a = self.agreement
        whole = self.errors == 0 and self.member_errors == 0 and self.note is None
        return whole and self.kappa_ci is not None and a.human_pass * a.human_fail > 0

    def to_dict(self) -> dict[str, Any]:
        full = self.agreement.to_dict()
        return {
            "judge": self.judge,
            "n": full["n"],
            "kappa": full["kappa"],
            "kappa_ci": full["kappa_ci"],
            "accuracy": full["accuracy"],
            "false_pass_rate": full["false_pass_rate"],
            "false_fail_rate": full["false_fail_rate"],
            "flip_rate": None if self.flip_rate is None else round(self.flip_rate, 4),
            "cost_per_100": _money(self.cost_per_100),
            "cost_usd": _money(self.cost_usd),
            "latency_per_100_s": None if self.latency_per_100_s is None else round(self.latency_per_100_s, 3),
            "wall_seconds": round(self.wall_seconds, 3),
            "judge_calls": self.judge_calls,
            "cache_hits": self.cache_hits,
            "errors": self.errors,
            "member_errors": self.member_errors,
            "note": self.note,
        }


def _money(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


class CloudFallback(ValueError):
    """An entry of ``--judges`` that would go to its provider's cloud endpoint while the user named
    endpoints for other judges: refused before any call (the model name was likely meant for a
    local server, and the samples would leave the machine)."""


async def grade_each(rubric: Rubric, samples: Sequence[Sample], judges: Sequence[str], options: Mapping[str, Any],
                     base_urls: Mapping[str, str] | None = None) -> list[JudgeRun]:
    """Grade ``samples`` with each judge in turn; ``options`` as :func:`~rubric_studio.engine.api.make_grader`,
    ``base_urls`` a judge's own endpoint, by the judge or panel member as written (the others use
    ``options``'). Raises :class:`CloudFallback`, before any call, when ``base_urls`` names endpoints
    and some judge or member without one would go to its provider's cloud endpoint."""
    base_urls = base_urls or {}
    if base_urls:
        refusal = await cloud_fallback(rubric, judges, options, base_urls)
        if refusal is not None:
            raise CloudFallback(refusal)
    runs = []
    for judge in judges:
        grader = entry_grader(rubric, judge, options, base_urls)
        grader.one_invocation()
        try:
            cached = _cached_cost(grader, rubric, samples)
            report = await grader.run(rubric, list(samples))
        finally:
            await grader.aclose()
        runs.append(JudgeRun(judge, report, cached))
    return runs


def entry_grader(rubric: Rubric, judge: str, options: Mapping[str, Any], base_urls: Mapping[str, str]) -> Any:
    """The grader of one entry of ``--judges``: one judge, or a panel ``A+B`` whose members each
    get their own endpoint (:func:`member_base_urls`)."""
    from rubric_studio.engine.api import make_grader

    urls = member_base_urls(judge, base_urls)

    def with_endpoint(member_rubric: Rubric, *, judge: str | None = None, **given: Any) -> Any:
        own = urls.get(judge or "")
        return make_grader(member_rubric, judge=judge, **{**given, **({"base_url": own} if own else {})})

    members = judge.split("+")
    settings = {key: value for key, value in options.items() if key != "judge"}
    if len(members) == 1:
        return with_endpoint(rubric, judge=judge, **settings)
    from rubric_studio.engine.panel import make_panel_grader

    return make_panel_grader(rubric, members, with_endpoint, judge=judge, **settings)


async def cloud_fallback(rubric: Rubric, judges: Sequence[str], options: Mapping[str, Any],
                         base_urls: Mapping[str, str]) -> str | None:
    """Why one entry of ``judges`` cannot run as written, or None: with ``--judge-base-url`` given,
    a judge or panel member that has no endpoint (nor ``--base-url``, ``judge.base_url``, the
    provider's variable) would go to its provider's cloud default although it was meant for a
    local server — a member of an entry the user named endpoints for, or a model the provider's
    price table does not know (a local model's name). A known cloud model as an entry of its own
    is compared where it lives. Resolves each judge; sends nothing."""
    quiet = {**options, "use_cache": False}
    for judge in judges:
        grader = entry_grader(rubric, judge, quiet, base_urls)
        named = bool(member_base_urls(judge, base_urls))
        try:
            members = getattr(grader, "members", None) or [(judge, grader)]
            for _, member_grader in members:
                default = _cloud_default(member_grader.config)
                if default is not None and (named or not _known_cloud_model(member_grader.config)):
                    return _fallback_text(judge, member_grader.config, default, base_urls)
        finally:
            await grader.aclose()
    return None


def _cloud_default(config: Any) -> str | None:
    """The provider's own host a judge would be sent to for want of a base URL, or None."""
    if config is None or config.base_url:
        return None
    from rubric_studio.core.providers import get

    provider = get(config.provider)
    return provider.official_url if provider is not None else None


def _known_cloud_model(config: Any) -> bool:
    """True when the provider's price table (built in, or the user's) knows the model: a cloud model."""
    from rubric_studio.judges.pricing import price_for

    return price_for(config.provider, config.model) is not None


def _fallback_text(judge: str, config: Any, default: str, base_urls: Mapping[str, str]) -> str:
    name = f"{config.alias or config.provider}:{config.model}"
    where = f"--judges entry {judge}" + (f": its member {name}" if name != judge else "")
    return (f"{where} has no --judge-base-url and would be sent to {config.provider}'s own endpoint {default}, "
            f"while --judge-base-url names endpoints for {', '.join(base_urls)}; give it one "
            f"(--judge-base-url '{name}=URL'), or name that endpoint to mean it "
            f"(--judge-base-url '{name}={default}')")


def cached_cost(grader: Any, rubric: Rubric, samples: Sequence[Sample]) -> float | None:
    """What the replies the cache holds for grading ``samples`` cost when they were bought (None: no
    known price): the part of a run's cost its ``usage.cost_usd`` does not show."""
    return _cached_cost(grader, rubric, samples)


def _cached_cost(grader: Any, rubric: Rubric, samples: Sequence[Sample]) -> float | None:
    """What the replies the cache holds for this run cost when they were bought (None: no known price)."""
    if hasattr(grader, "members"):  # a judge panel: each member at its own price
        costs = [_cached_cost(member, rubric, samples) for _, member in grader.members]
        return None if any(cost is None for cost in costs) else sum(c for c in costs if c is not None)
    if grader.cache is None:
        return 0.0
    tokens_in = tokens_out = hits = 0
    for key in grader.request_keys(rubric, samples):
        hit = grader.cache.get(key)
        if hit is not None:
            hits += 1
            tokens_in += hit.input_tokens
            tokens_out += hit.output_tokens
    if not hits:
        return 0.0
    from rubric_studio.judges.pricing import cost_usd

    config = grader.config
    cost = cost_usd(config.alias or config.provider, config.model, tokens_in, tokens_out)
    return None if cost is None else cost * config.price_factor


def figures(run: JudgeRun, labels: Mapping[str, Label], rubric: Rubric) -> tuple[JudgeFigures, AgreementReport]:
    """One judge's figures, and its full agreement report (for the detailed sections)."""
    report = run.report
    result = agreement(report.samples, labels, rubric)
    usage = report.usage
    samples = len(report.samples)
    spent = usage.cost_usd if usage.cost_known else None
    total = None if spent is None or run.cached_cost is None or report.judge_note else spent + run.cached_cost
    flips = report.flip_rates()
    cells = sum(v["cells"] for v in flips.values())
    flip_rate = sum(v["flipped"] for v in flips.values()) / cells if report.repeat > 1 and cells else None
    note = report.judge_note or report.judge_stopped
    return JudgeFigures(
        judge=run.judge, samples=samples, agreement=result.overall, flip_rate=flip_rate, cost_usd=spent,
        cost_per_100=None if total is None or not samples else total / samples * 100,
        wall_seconds=usage.wall_seconds, judge_calls=usage.judge_calls, cache_hits=usage.cache_hits,
        errors=report.errored_cells, note=note, member_errors=pooled_without_members(report),
        errored_members=tuple(usage.failed_members()),
    ), result  # fmt: skip


def pooled_without_members(report: Report) -> int:
    """A judge panel's cells that were pooled without a member that errored on them (0 for one judge)."""
    from rubric_studio.core.results import pooled_without

    return sum(1 for sample in report.samples for cell in sample.criteria if pooled_without(cell))


def _overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _ci_text(f: JudgeFigures) -> str:
    ci = f.kappa_ci
    return f"kappa {f.kappa:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]" if ci and f.kappa is not None else "kappa undefined"


def _why_not(f: JudgeFigures) -> str:
    if f.errors:
        return f"{f.judge}: {f.errors} errored cells"
    if f.member_errors:
        return f"{f.judge}: {f.member_errors} cells pooled without a panel member that errored ({', '.join(f.errored_members)})"
    if f.note:
        return f"{f.judge}: not judged ({f.note})"
    if not f.agreement.n:
        return f"{f.judge}: no labelled verdicts compared"
    if not f.agreement.human_pass * f.agreement.human_fail:
        return f"{f.judge}: the human verdicts compared are all one class, so kappa measures nothing"
    return f"{f.judge}: kappa undefined (the judge gave one verdict to every sample, as did the human)"


def _cost_text(f: JudgeFigures) -> str:
    return f"${f.cost_per_100:.4f} per 100 samples" if f.cost_per_100 is not None else "cost unknown"


def _names(judges: Sequence[JudgeFigures]) -> str:
    return ", ".join(f.judge for f in judges)


@dataclass(frozen=True)
class Recommendation:
    """The judge to use by default (None: none), one sentence why, and the rule that decided:
    ``only_above_chance`` (one judge's kappa interval lies above 0 and above every other's),
    ``cheapest_indistinguishable`` (several intervals above chance overlap: the cheapest of them),
    ``best_indistinguishable_unpriced`` (they overlap but none has a known price: the highest kappa),
    ``none_above_chance`` (every usable judge's interval reaches 0), ``none_usable``."""

    judge: str | None
    why: str
    basis: str
    indistinguishable: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"judge": self.judge, "basis": self.basis, "reason": self.why,
                "indistinguishable": list(self.indistinguishable)}


def recommendation(judges: Sequence[JudgeFigures]) -> Recommendation:
    """Only a judge whose kappa 95% interval lies above chance (lower bound > 0) is recommended.
    Among those, the judges whose intervals overlap the best one's cannot be told apart on these
    labels: the cheapest of them is the default (unknown costs are never taken for cheap). A judge
    with errors or partial data is never recommended."""
    usable = [f for f in judges if f.usable]
    left_out = "; ".join(_why_not(f) for f in judges if not f.usable)
    if not usable:
        return Recommendation(None, "no judge can be recommended: " + (left_out or "no judges were run"), "none_usable")
    order = {f.judge: i for i, f in enumerate(judges)}
    above = [f for f in usable if f.kappa_ci is not None and f.kappa_ci[0] > 0]
    at_chance = [f for f in usable if f not in above]
    if not above:
        why = ("no judge agrees with these labels beyond chance: every kappa interval reaches 0 ("
               + "; ".join(f"{f.judge}: {_ci_text(f)}" for f in usable) + "); none is recommended — label more samples"
               " or improve the rubric")
        if left_out:
            why += f"; not considered: {left_out}"
        return Recommendation(None, why, "none_above_chance")
    best = max(above, key=lambda f: (f.kappa, -order[f.judge]))
    assert best.kappa_ci is not None
    close = [f for f in above if f.kappa_ci is not None and _overlaps(f.kappa_ci, best.kappa_ci)]
    if len(close) == 1:
        why = f"{best.judge}'s {_ci_text(best)} lies above chance and above every other judge's interval ({_cost_text(best)})"
        pick, basis = best, "only_above_chance"
    else:
        priced = [f for f in close if f.cost_per_100 is not None]
        unpriced = [f.judge for f in close if f.cost_per_100 is None]
        lead = (f"{_names(close)} are indistinguishable on these labels: their kappa intervals overlap ("
                + "; ".join(f"{f.judge}: {_ci_text(f)}" for f in close) + ")")
        if priced:
            pick = min(priced, key=lambda f: (f.cost_per_100, -(f.kappa or 0.0), order[f.judge]))
            why = f"{lead}; the default is {pick.judge}, the cheapest of them ({_cost_text(pick)})"
            basis = "cheapest_indistinguishable"
            if unpriced:
                why += f"; price unknown, not compared: {', '.join(unpriced)} (add it to prices.yaml)"
        else:
            pick, basis = best, "best_indistinguishable_unpriced"
            why = f"{lead}; none has a known price, so the default is {best.judge}, the highest kappa"
    if at_chance:
        why += "; not above chance (interval reaches 0): " + ", ".join(f"{f.judge} ({_ci_text(f)})" for f in at_chance)
    if left_out:
        why += f"; not considered: {left_out}"
    return Recommendation(pick.judge, why, basis, tuple(f.judge for f in close) if len(close) > 1 else ())


def recommend(judges: Sequence[JudgeFigures]) -> tuple[str | None, str]:
    """(recommended judge or None, one sentence why): see :func:`recommendation`."""
    found = recommendation(judges)
    return found.judge, found.why
