"""The rubric model: criteria, weights, required flags, score ranges, checks, judge settings.

Every model forbids unknown keys. A criterion is either a judge criterion
(``outcome``: checklist, or analytic when it has ``score_ranges``) or a
deterministic one (``check``). Plain strings in ``criteria`` are outcomes.
Semantics of the numbers are in :mod:`rubric_studio.core.scoring`.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator
from pydantic_core import PydanticCustomError

from rubric_studio.core.checks import CheckSpec
from rubric_studio.core.examples import CriterionExample, check_examples_fit
from rubric_studio.core.numbers import MAX_WEIGHT, Integer, Number

ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$"
PROMPT_PLACEHOLDERS = ("input", "submission", "ground_truth", "criterion", "score_ranges")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_ANALYTIC_MIN_SCORE = 0.7
DEFAULT_CHECK_MIN_SCORE = 1.0
AGGREGATE_NAMES = ("majority", "mean", "all", "any", "median")
#: How a panel's even split on a met/unmet criterion counts (``judge.ties``): ``against_pass``
#: (default) as the verdict that does not help the sample pass - unmet on an ordinary criterion,
#: met on a penalty (a negative weight: met means the bad thing is there); ``unmet`` or ``met``
#: whatever the criterion's weight.
TIE_RULES = ("against_pass", "unmet", "met")
TieRule = Literal["against_pass", "unmet", "met"]
DEFAULT_TIE_RULE: TieRule = "against_pass"


def unique_id(wanted: str, taken: set[str] | frozenset[str]) -> str:
    """``wanted``, or ``wanted-2``, ``wanted-3`` ... : the first that is not ``taken``."""
    if wanted not in taken:
        return wanted
    number = 2
    while f"{wanted}-{number}" in taken:
        number += 1
    return f"{wanted}-{number}"


def prompt_placeholders(template: str) -> list[str]:
    """Names of ``{placeholder}`` fields used in a prompt template, in order."""
    return _PLACEHOLDER.findall(template)


def score_range_key(raw: Any) -> Any:
    """A ``score_ranges`` key as the band's integer lower bound: ``'5'`` (quoted in YAML) is 5."""
    if isinstance(raw, str) and raw.strip().isdecimal() and len(raw.strip()) <= 9:
        return int(raw)
    return raw


def unknown_placeholders(template: str) -> list[str]:
    return [name for name in prompt_placeholders(template) if name not in PROMPT_PLACEHOLDERS]


#: The most judges a panel may have (``judge.panel``, ``--judge A,B,C``).
MAX_PANEL = 16


class JudgeSettings(BaseModel):
    """How judge criteria are graded. The CLI's ``--judge`` / ``--base-url`` override these."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, description='"provider:model", e.g. openai:gpt-4o-mini')
    base_url: str | None = None
    temperature: Number = Field(default=0.0, ge=0, le=2)
    timeout: Number = Field(default=60.0, gt=0, le=3600)
    max_retries: Integer = Field(default=3, ge=0, le=20)
    #: Longest wait honoured between retries (a longer Retry-After stops the run instead).
    max_retry_wait: Number = Field(default=30.0, gt=0, le=3600)
    concurrency: Integer = Field(default=8, ge=1, le=256)
    max_tokens: Integer = Field(default=1024, ge=16, le=65536)
    mode: Literal["per_criterion", "batch"] = "per_criterion"
    #: A per-criterion run may serve verdicts cached from batch calls; false judges those cells again.
    reuse_batch: bool = True
    reasoning_effort: Literal["minimal", "low", "medium", "high"] | None = None
    #: How the reply's JSON shape is enforced; default: the provider's strongest (OpenAI json_schema, Anthropic tool).
    structured_output: Literal["json_schema", "json_object", "tool", "none"] | None = None
    #: Seconds a whole grading run may take; calls still unanswered then end as errors.
    deadline: Number | None = Field(default=None, gt=0, le=604800)
    prompt: str | None = None
    prompt_path: str | None = None
    #: A panel of judges (:mod:`rubric_studio.core.panel`): "provider:model" strings or mappings of these same keys.
    panel: list[PanelMember] | None = Field(default=None, min_length=1, max_length=MAX_PANEL)
    #: How a panel's verdicts are pooled: a name, or {checklist: ..., analytic: ...}.
    aggregate: PanelAggregate | None = None
    #: How a panel's even split (1–1, 2–2) on a met/unmet criterion counts: against_pass, unmet or met.
    ties: TieRule = DEFAULT_TIE_RULE

    @field_validator("panel", mode="before")
    @classmethod
    def _member_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"model": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("aggregate", mode="before")
    @classmethod
    def _aggregate_name(cls, value: Any) -> Any:
        """A name sets the rule of the kinds it applies to: majority/all/any checklist, median
        analytic, mean both."""
        if not isinstance(value, str):
            return value
        if value not in AGGREGATE_NAMES:
            raise PydanticCustomError(
                "aggregate_name",
                "unknown aggregate {value}; expected one of {names}",
                {"value": repr(value), "names": ", ".join(AGGREGATE_NAMES)},
            )
        if value == "mean":
            return {"checklist": "mean", "analytic": "mean"}
        return {"analytic": value} if value == "median" else {"checklist": value}

    @field_validator("ties", mode="before")
    @classmethod
    def _tie_rule(cls, value: Any) -> Any:
        if not isinstance(value, str) or value not in TIE_RULES:
            raise PydanticCustomError(
                "tie_rule",
                "unknown tie rule {value}; expected against_pass (a tie counts against the sample: unmet, or "
                "met on a penalty), unmet or met",
                {"value": repr(value)},
            )
        return value

    @field_validator("model")
    @classmethod
    def _model_format(cls, value: str | None) -> str | None:
        if value is None:
            return value
        provider, sep, name = value.partition(":")
        if not sep or not provider or not name:
            raise PydanticCustomError(
                "judge_model", 'expected "provider:model" (e.g. openai:gpt-4o-mini), got {value}', {"value": repr(value)}
            )
        from rubric_studio.core.providers import unknown

        problem = unknown(provider)
        if problem is not None:  # refused here: a run would leave every cell unjudged
            raise PydanticCustomError("judge_provider", "{problem}", {"problem": problem})
        return value

    @field_validator("prompt")
    @classmethod
    def _prompt_placeholders(cls, value: str | None) -> str | None:
        if value is not None:
            check_prompt_template(value)
        return value

    @model_validator(mode="after")
    def _one_prompt(self) -> JudgeSettings:
        if self.prompt is not None and self.prompt_path is not None:
            raise ValueError("set either 'prompt' or 'prompt_path', not both")
        if self.panel is not None and self.model is not None:
            raise PydanticCustomError(
                "panel_and_model", "set either 'model' (one judge) or 'panel' (several), not both", {}
            )
        return self


class PanelAggregate(BaseModel):
    """``judge.aggregate`` as a mapping: the rule for checklist (met/unmet) and for analytic (0-10) criteria.

    Analytic criteria pool by ``median`` unless told otherwise: with three or more members one
    outlying score cannot overrule the others (9, 9, 1 → 9, where the mean says 6.33), and with
    two members the median is their mean.
    """

    model_config = ConfigDict(extra="forbid")

    checklist: Literal["majority", "mean", "all", "any"] = "majority"
    analytic: Literal["mean", "median"] = "median"


class PanelMember(JudgeSettings):
    """One judge of a panel: the keys of ``judge:`` (those it leaves out come from the ``judge:`` block)."""

    @model_validator(mode="after")
    def _no_nested_panel(self) -> PanelMember:
        if self.model is None:
            raise PydanticCustomError("member_model", 'a panel member needs a "model" (provider:model)', {})
        if self.panel is not None or self.aggregate is not None or "ties" in self.model_fields_set:
            raise PydanticCustomError(
                "nested_panel", "'panel', 'aggregate' and 'ties' belong to the judge block, not to one member", {}
            )
        return self


JudgeSettings.model_rebuild()


def check_prompt_template(template: str) -> None:
    unknown = unknown_placeholders(template)
    if unknown:
        raise PydanticCustomError(
            "prompt_placeholder",
            "unknown placeholder {names} in the judge prompt; expected only {allowed}",
            {
                "names": ", ".join("{" + n + "}" for n in unknown),
                "allowed": ", ".join("{" + n + "}" for n in PROMPT_PLACEHOLDERS),
            },
        )


class Criterion(BaseModel):
    """One criterion. Exactly one of ``outcome`` (judge) or ``check`` (deterministic)."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = Field(default=None, pattern=ID_PATTERN)
    outcome: str | None = None
    check: CheckSpec | None = None
    weight: Number = Field(default=1.0, ge=-MAX_WEIGHT, le=MAX_WEIGHT)
    required: bool = False
    operator: Literal["correctness", "contradiction"] | None = None
    score_ranges: dict[int, str] | None = None
    min_score: Number | None = Field(default=None, ge=0, le=1)
    tags: list[str] = Field(default_factory=list)
    #: Few-shot corrections rendered after the criterion in its judge requests.
    examples: list[CriterionExample] = Field(default_factory=list, max_length=50)

    @field_validator("outcome")
    @classmethod
    def _outcome_text(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("outcome is empty; write what a good output does")
        return value

    @field_validator("score_ranges", mode="before")
    @classmethod
    def _range_keys(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        bands: dict[int, Any] = {}
        for raw, text in value.items():
            key = score_range_key(raw)
            if isinstance(key, bool) or not isinstance(key, int) or not 0 <= key <= 10:
                raise PydanticCustomError(
                    "score_range_key",
                    "score_ranges keys must be integers from 0 to 10 (lower bounds of each band), got {key}",
                    {"key": repr(raw)},
                )
            if key in bands:
                raise PydanticCustomError(
                    "score_range_duplicate",
                    "score_ranges has two bands starting at {key}; keep one",
                    {"key": key},
                )
            bands[key] = text
        if 0 not in bands:
            raise PydanticCustomError(
                "score_range_start", "score_ranges must start at 0 (the lowest band's lower bound)", {}
            )
        return {k: bands[k] for k in sorted(bands)}

    @model_validator(mode="after")
    def _outcome_or_check(self) -> Criterion:
        if (self.outcome is None) == (self.check is None):
            which = "both" if self.outcome is not None else "neither"
            raise PydanticCustomError(
                "outcome_or_check",
                "a criterion needs exactly one of 'outcome' (judged) or 'check' (deterministic); it has {which}",
                {"which": which},
            )
        if self.check is not None and (self.score_ranges is not None or self.operator is not None):
            raise PydanticCustomError(
                "check_judge_fields", "'score_ranges' and 'operator' apply to judge criteria, not to checks", {}
            )
        check_examples_fit(self.examples, analytic=bool(self.score_ranges), judged=self.check is None)
        if self.weight == 0:
            raise PydanticCustomError("zero_weight", "weight 0 has no effect; remove the criterion or give it a weight", {})
        return self

    # -- derived -----------------------------------------------------------
    @property
    def key(self) -> str:
        """The criterion id (always set once it belongs to a Rubric)."""
        assert self.id is not None
        return self.id

    @property
    def kind(self) -> Literal["check", "analytic", "checklist"]:
        if self.check is not None:
            return "check"
        return "analytic" if self.score_ranges else "checklist"

    @property
    def is_judged(self) -> bool:
        return self.check is None

    @property
    def is_penalty(self) -> bool:
        return self.weight < 0

    @property
    def effective_min_score(self) -> float:
        if self.min_score is not None:
            return self.min_score
        if self.kind == "analytic":
            return DEFAULT_ANALYTIC_MIN_SCORE
        return DEFAULT_CHECK_MIN_SCORE

    def fingerprint(self) -> str:
        """Hash of everything about this criterion that can change its verdicts."""
        data = self.model_dump(mode="json", exclude={"tags"}, by_alias=True)
        if not self.examples:
            del data["examples"]  # hashes of rubrics without examples stay what they were before the field
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def summary(self) -> str:
        """One line describing the criterion, for lists and exports."""
        if self.check is not None:
            params = self.check.model_dump(exclude={"type", "timeout"}, exclude_none=True, by_alias=True)
            inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
            return f"{self.check.type}({inner})"
        return self.outcome or ""


class Rubric(BaseModel):
    """A rubric: name, threshold, judge settings and criteria."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    pass_threshold: Number = Field(default=0.8, ge=0, le=1)
    on_error: Literal["error", "ignore"] = "error"
    judge: JudgeSettings | None = None
    criteria: list[Criterion] = Field(min_length=1)

    _path: str | None = PrivateAttr(default=None)
    _source_text: str | None = PrivateAttr(default=None)
    _scoring_plan: list[tuple[str, float, bool]] | None = PrivateAttr(default=None)

    @field_validator("criteria", mode="before")
    @classmethod
    def _plain_strings(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"outcome": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("criteria")
    @classmethod
    def _ids(cls, criteria: list[Criterion]) -> list[Criterion]:
        taken = {c.id for c in criteria if c.id is not None}
        counter = 0
        for criterion in criteria:
            if criterion.id is None:
                counter += 1
                while f"c{counter}" in taken:
                    counter += 1
                criterion.id = f"c{counter}"
                taken.add(criterion.id)
        seen: dict[str, int] = {}
        for index, criterion in enumerate(criteria):
            if criterion.id in seen:
                raise PydanticCustomError(
                    "duplicate_id",
                    "duplicate criterion id {id} (criteria[{index}] repeats criteria[{first}]); ids must be unique",
                    {"id": repr(criterion.id), "index": index, "first": seen[criterion.id]},
                )
            seen[criterion.key] = index
        if not any(c.weight > 0 for c in criteria):
            raise PydanticCustomError(
                "no_positive_weight", "at least one criterion needs a positive weight (penalties alone cannot score)", {}
            )
        return criteria

    # -- accessors ---------------------------------------------------------
    @property
    def path(self) -> str | None:
        """The file this rubric was loaded from, if any."""
        return self._path

    def scoring_plan(self) -> list[tuple[str, float, bool]]:
        """(id, weight, required) per criterion, computed once (rubrics are not edited in place)."""
        if self._scoring_plan is None:
            self._scoring_plan = [(c.key, c.weight, c.required) for c in self.criteria]
        return self._scoring_plan

    def criterion(self, criterion_id: str) -> Criterion:
        for criterion in self.criteria:
            if criterion.id == criterion_id:
                return criterion
        raise KeyError(criterion_id)

    @property
    def judge_criteria(self) -> list[Criterion]:
        return [c for c in self.criteria if c.is_judged]

    @property
    def check_criteria(self) -> list[Criterion]:
        return [c for c in self.criteria if not c.is_judged]

    @property
    def code_criteria(self) -> list[Criterion]:
        """Criteria whose checks run the author's code; they need trust."""
        return [c for c in self.criteria if c.check is not None and c.check.runs_code]

    def content_hash(self) -> str:
        """Hash of the rubric's meaning (comments and formatting do not change it)."""
        data = self.model_dump(mode="json", by_alias=True)
        if data["judge"] is not None:  # rubrics without a panel hash as they did before the keys existed
            for key in ("panel", "aggregate"):
                if data["judge"][key] is None:
                    del data["judge"][key]
            if data["judge"]["ties"] == DEFAULT_TIE_RULE:  # written or not, the default means the same
                del data["judge"]["ties"]
        for criterion in data["criteria"]:
            if not criterion["examples"]:
                del criterion["examples"]  # as in Criterion.fingerprint: stable across the field's arrival
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]
