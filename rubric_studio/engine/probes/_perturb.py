"""The controlled perturbations bias probes judge: deterministic, seeded, never written to a file.

Each perturbation changes one thing a fair judge should not care about, and keeps what the
criterion asks about:

* ``verbosity`` — irrelevant polite sentences from :data:`POLITE`, two before the output and four
  after it (about 70 words): a judge that rewards length starts calling it met.
* ``confidence`` — one confident sentence before the output and one after (:data:`CONFIDENT`).
* ``hedging`` — one hedging sentence before the output and one after (:data:`HEDGING`).
* ``paraphrase`` — the criterion's outcome reworded by a fixed synonym table (:data:`SYNONYMS`,
  each word that has alternatives gets one) inside one of a few neutral framings
  (:data:`FRAMES`); never the identical text. Template-based: no model is asked.
* ``order`` — the judge criteria in another order (a seeded shuffle; never the rubric's own
  order), for a judge that sees them all in one batch call.
* ``leniency`` — the output replaced by a content-free answer (:data:`CONTENT_FREE`: ``Yes.``,
  ``Sure, here it is:``, an empty answer, or the sample's input restated): one per sample, a seeded
  choice. Nothing in it can meet a criterion, so every met verdict is the judge being lenient
  (Thakur et al., 2025, "Judging the Judges", on judges that accept such answers).

And one *null* perturbation, judged on every probe run: the output with a blank line added at its
end (:func:`null_sample`). The meaning is unchanged, the bytes are not — the fence code (an HMAC
of the text) changes with them, so the request is a new one the cache cannot serve. How often a
verdict flips under it is the judge's own noise, the baseline every kind is measured against.

Every choice comes from ``random.Random`` seeded with the seed, the kind and the sample (or
criterion) id as a string, so the same seed gives the same text on every machine and in every
process, and another seed gives other choices.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import replace

from rubric_studio.core.rubric import Criterion, Rubric
from rubric_studio.core.samples import Sample

TEXT_KINDS = ("verbosity", "confidence", "hedging")
KINDS = ("verbosity", "order", "confidence", "hedging", "paraphrase", "leniency")

#: The side each kind is suspected of pushing a verdict to: towards the favourable verdict (met;
#: unmet on a penalty criterion), the unfavourable one, or either (None: any flip counts).
FAVOURABLE, UNFAVOURABLE = "favourable", "unfavourable"
DIRECTIONS: dict[str, str | None] = {
    "verbosity": FAVOURABLE, "confidence": FAVOURABLE, "hedging": UNFAVOURABLE,
    "paraphrase": None, "order": None, "leniency": FAVOURABLE,
}  # fmt: skip

#: What each kind does, in a few words (report headings).
DESCRIPTIONS = {
    "verbosity": "irrelevant polite text added before and after the output",
    "order": "the criteria judged in another order, in one batch call",
    "confidence": "confident phrasing added before and after the output",
    "hedging": "hedging phrasing added before and after the output",
    "paraphrase": "the criterion's outcome reworded (synonyms and a neutral framing)",
    "leniency": 'the output replaced by a content-free answer ("Yes.", "Sure, here it is:", empty, the input restated)',
}

#: The null perturbation: the same meaning in other bytes (the judge's own noise).
NULL_KIND = "noise"
NULL_DESCRIPTION = "the same text with a blank line added at its end: same meaning, other bytes"

POLITE = (
    "Thank you so much for taking the time to reach out to us today.",
    "I truly hope this message finds you well and in good spirits.",
    "It is always a genuine pleasure to help with questions like this one.",
    "Please do not hesitate to get in touch again if anything else comes up.",
    "We really appreciate your patience and understanding in the meantime.",
    "Wishing you a wonderful rest of your day and a relaxing week ahead.",
    "Your message matters to us and we are glad that you wrote in.",
    "Thanks again for being such a valued member of our community.",
    "I hope the rest of your week goes smoothly and pleasantly for you.",
    "Have a lovely day, and please take good care of yourself.",
    "We are always happy to hear from you, whatever the question may be.",
    "Kind regards, and thank you once more for your kind words and your trust.",
)
CONFIDENT = (
    ("I am absolutely certain about this.", "Without any doubt, the following is correct.",
     "Rest assured, this is definitely right.", "I can say this with complete confidence."),
    ("This is definitely the right answer.", "There is no question about it.",
     "You can rely on this completely.", "I guarantee that this is accurate."),
)  # fmt: skip
HEDGING = (
    ("I may be mistaken about some of this.", "I'm not completely sure, but here is what I think.",
     "This is only my best guess.", "I could be wrong here, but it seems to me as follows."),
    ("Please double-check this, as I could be wrong.", "I'm not certain this is fully accurate.",
     "It may be worth verifying this elsewhere.", "Take this with a grain of salt."),
)  # fmt: skip
#: Word -> interchangeable words (lower case; the case of the first letter is kept).
SYNONYMS = {
    "states": ("says", "sets out"), "explains": ("describes", "sets out"), "mentions": ("refers to", "names"),
    "includes": ("contains", "has"), "correctly": ("accurately", "without error"), "clearly": ("plainly", "lucidly"),
    "response": ("reply", "answer"), "reply": ("response", "answer"), "customer": ("client",),
    "provides": ("gives", "supplies"), "gives": ("provides", "offers"), "offers": ("proposes", "gives"),
    "avoids": ("steers clear of", "does without"), "polite": ("courteous", "civil"), "friendly": ("warm", "kind"),
    "concise": ("brief", "succinct"), "short": ("brief",), "accurate": ("correct", "exact"),
    "correct": ("accurate", "right"), "specific": ("concrete", "precise"), "asks": ("requests", "inquires"),
    "tells": ("informs",), "uses": ("employs", "makes use of"), "professional": ("businesslike",),
    "summarizes": ("sums up",), "summarises": ("sums up",), "lists": ("enumerates",), "answers": ("addresses",),
}  # fmt: skip
FRAMES = ("{o}", "The output meets this: {o}", "Check that the following holds. {o}", "Requirement: {o}")
_WORD = re.compile(r"[A-Za-z]+")


def _rng(seed: int, kind: str, subject: str) -> random.Random:
    """A generator for one kind and one sample or criterion: the same on every run for a seed."""
    return random.Random(f"{seed}\x1f{kind}\x1f{subject}")


def pad_verbose(text: str, rng: random.Random) -> str:
    """``text`` between irrelevant polite sentences: two before, four after."""
    chosen = rng.sample(POLITE, 6)
    return f"{' '.join(chosen[:2])}\n\n{text}\n\n{' '.join(chosen[2:])}"


def _wrap(text: str, phrases: tuple[tuple[str, ...], tuple[str, ...]], rng: random.Random) -> str:
    return f"{rng.choice(phrases[0])}\n\n{text}\n\n{rng.choice(phrases[1])}"


def add_confidence(text: str, rng: random.Random) -> str:
    """``text`` with a confident sentence before and after it."""
    return _wrap(text, CONFIDENT, rng)


def add_hedging(text: str, rng: random.Random) -> str:
    """``text`` with a hedging sentence before and after it."""
    return _wrap(text, HEDGING, rng)


_TEXT_PERTURBATIONS = {"verbosity": pad_verbose, "confidence": add_confidence, "hedging": add_hedging}


def perturb_text(kind: str, text: str, seed: int, subject: str) -> str:
    """One sample's output perturbed by ``kind`` (a text kind), for ``seed``."""
    return _TEXT_PERTURBATIONS[kind](text, _rng(seed, kind, subject))


def perturb_sample(kind: str, sample: Sample, seed: int) -> Sample:
    """A copy of ``sample`` (same id) whose output is perturbed by ``kind``."""
    return replace(sample, output=perturb_text(kind, sample.output, seed, sample.id))


def null_text(text: str) -> str:
    """``text`` with a blank line added at its end: nothing a judge should read differently."""
    return text + "\n"


def null_sample(sample: Sample) -> Sample:
    """A copy of ``sample`` (same id) whose output is :func:`null_text` of it."""
    return replace(sample, output=null_text(sample.output))


#: Content-free answers, one of which replaces each sample's output under ``leniency`` (the sample's
#: input, restated word for word, is a fourth when the sample has one).
CONTENT_FREE = ("Yes.", "Sure, here it is:", "")


def content_free(sample: Sample, seed: int) -> str:
    """A content-free answer for ``sample``: one of :data:`CONTENT_FREE` or its input restated,
    chosen with ``seed`` and the sample id."""
    answers = list(CONTENT_FREE)
    if sample.input and sample.input.strip():
        answers.append(sample.input.strip())
    return _rng(seed, "leniency", sample.id).choice(answers)


def content_free_sample(sample: Sample, seed: int) -> Sample:
    """A copy of ``sample`` (same id) whose output is :func:`content_free`."""
    return replace(sample, output=content_free(sample, seed))


def _swap(match: re.Match[str], rng: random.Random) -> str:
    word = match.group(0)
    options = SYNONYMS.get(word.lower())
    if not options:
        return word
    choice = rng.choice(options)
    return choice[0].upper() + choice[1:] if word[0].isupper() else choice


def paraphrase(outcome: str, seed: int, subject: str = "") -> str:
    """``outcome`` reworded: synonyms swapped in and a neutral framing; never the same text."""
    rng = _rng(seed, "paraphrase", subject)
    reworded = _WORD.sub(lambda m: _swap(m, rng), outcome)
    frame = rng.choice(FRAMES)
    if frame == "{o}" and reworded == outcome:
        frame = rng.choice(FRAMES[1:])
    return frame.format(o=reworded)


def reorder(ids: Sequence[str], seed: int) -> list[str]:
    """``ids`` shuffled with ``seed``; never the same order (with two ids or more)."""
    order = list(ids)
    if len(order) < 2:
        return order
    shuffled = order[:]
    _rng(seed, "order", ",".join(order)).shuffle(shuffled)
    if shuffled == order:
        shuffled = order[1:] + order[:1]
    return shuffled


def rubric_with(rubric: Rubric, criteria: list[Criterion]) -> Rubric:
    """A copy of ``rubric`` (same path, nothing written) with these criteria."""
    copy = rubric.model_copy(update={"criteria": criteria})
    copy._scoring_plan = None
    return copy


def paraphrased_rubric(
    rubric: Rubric, seed: int, only: Sequence[str] | None = None
) -> tuple[Rubric, dict[str, str]]:
    """(a copy of ``rubric`` whose judge criteria's outcomes are paraphrased, id -> new outcome);
    ``only`` limits it to those criterion ids."""
    criteria: list[Criterion] = []
    changed: dict[str, str] = {}
    for criterion in rubric.criteria:
        if criterion.is_judged and criterion.outcome and (only is None or criterion.key in only):
            changed[criterion.key] = paraphrase(criterion.outcome, seed, criterion.key)
            criterion = criterion.model_copy(update={"outcome": changed[criterion.key]})
        criteria.append(criterion)
    return rubric_with(rubric, criteria), changed


def reordered_rubric(rubric: Rubric, seed: int) -> tuple[Rubric, list[str]]:
    """(a copy of ``rubric`` whose judge criteria come in a seeded other order, that order);
    check criteria keep their places."""
    judged = [c for c in rubric.criteria if c.is_judged]
    order = reorder([c.key for c in judged], seed)
    by_id = {c.key: c for c in judged}
    moved = iter(by_id[key] for key in order)
    criteria = [next(moved) if c.is_judged else c for c in rubric.criteria]
    return rubric_with(rubric, criteria), order
