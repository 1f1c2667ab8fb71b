"""Writing a switched judge into the rubric file, and refreshing the rubric's card.

Only the judge changes: ``judge.model`` for one judge, ``judge.panel`` (written ``[A, B]``) for a
panel, the other one of the two removed; every other key, comment and quote stays as written
(round-trip YAML, as ``calibrate --fit --apply`` edits weights). Comment lines that followed the
replaced key stay where they were. The file is written only over the exact version that was read,
and only when its content is still the rubric that was graded (same content hash): a change on
disk the user has not seen is never overwritten. The edited text is loaded again before it is
written, so a switch never leaves a rubric that does not load or names another judge.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any


def _comment_after(mapping: Any, key: Any) -> Any:
    """The comment token after ``mapping[key]``: its end-of-line comment and the comment / blank
    lines that follow (for a block sequence, those after its last item), or None."""
    from ruamel.yaml.comments import CommentedSeq

    slot = mapping.ca.items.get(key)
    token = slot[2] if slot and len(slot) > 2 else None
    value = mapping[key]
    if isinstance(value, CommentedSeq) and len(value) and not value.fa.flow_style():
        last = value.ca.items.get(len(value) - 1)
        following = last[0].value.partition("\n")[2] if last and last[0] is not None else ""
        if token is not None and following:
            token.value = token.value.rstrip("\n") + "\n" + following
        elif following:
            from ruamel.yaml.error import CommentMark
            from ruamel.yaml.tokens import CommentToken

            token = CommentToken("\n" + following, CommentMark(0), None)
    return token


def _replace_key(mapping: Any, old: str, new: str, value: Any) -> None:
    """``mapping[old]`` becomes ``mapping[new] = value`` at the same place; its end-of-line comment
    and the lines after it stay."""
    position = list(mapping).index(old)
    token = _comment_after(mapping, old)
    del mapping[old]
    mapping.insert(position, new, value)
    if token is not None:
        mapping.ca.items[new] = [None, None, token, None]


def _judge_value(candidate: str) -> tuple[str, Any]:
    """The key and value naming ``candidate``: ``model: P:M``, or ``panel: [A, B]`` for ``A+B``."""
    from ruamel.yaml.comments import CommentedSeq

    members = candidate.split("+")
    if len(members) == 1:
        return "model", candidate
    panel = CommentedSeq(members)
    panel.fa.set_flow_style()
    return "panel", panel


def _set_judge(data: Any, candidate: str) -> None:
    """Name ``candidate`` in the rubric's ``judge:`` block (created after name / description /
    pass_threshold when there is none)."""
    from ruamel.yaml.comments import CommentedMap

    from rubric_studio.core.labels import insert_key

    key, value = _judge_value(candidate)
    judge = data.get("judge")
    if not isinstance(judge, dict):
        block = CommentedMap([(key, value)])
        if "judge" in data:
            data["judge"] = block
            return
        keys = list(data)
        after = max((keys.index(k) for k in ("name", "description", "pass_threshold") if k in data), default=-1)
        insert_key(data, after + 1, "judge", block)
        return
    other = "panel" if key == "model" else "model"
    if key in judge:
        _replace_key(judge, key, key, value)
    elif other in judge:
        _replace_key(judge, other, key, value)
    else:
        insert_key(judge, 0, key, value)
    if other in judge:
        del judge[other]


def _names(rubric: Any) -> str | None:
    settings = rubric.judge
    if settings is None:
        return None
    if settings.panel:
        return "+".join(member.model for member in settings.panel)
    return settings.model


def apply_switch(rubric_path: str | Path, candidate: str, rubric_hash: str) -> list[str]:
    """Write ``candidate`` as the rubric's judge; what changed, in words. ValueError when the
    rubric's content is no longer ``rubric_hash`` (the one graded) or the edit would not load as
    naming ``candidate``; :class:`~rubric_studio.core.atomic.ChangedOnDisk` (an OSError) when the
    file changed between reading and writing it."""
    from rubric_studio.core.atomic import write_text_safely
    from rubric_studio.core.files import read_user_file_state
    from rubric_studio.core.labels import round_trip_yaml
    from rubric_studio.core.loading import parse_rubric

    path = Path(rubric_path)
    text, seen = read_user_file_state(path)  # written back only over exactly this version
    if text is None:
        raise ValueError(f"{path}: no such file")
    before = parse_rubric(text, str(path))
    if before.content_hash() != rubric_hash:
        raise ValueError(f"{path} changed since it was graded; run the comparison again")
    was = _names(before)
    if was == candidate:
        return []
    yaml = round_trip_yaml(text)
    data = yaml.load(text)
    _set_judge(data, candidate)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    new_text = buffer.getvalue()
    if _names(parse_rubric(new_text, str(path))) != candidate:  # RubricError if it does not load
        raise ValueError("the edited rubric does not name the candidate as its judge")
    write_text_safely(path, new_text, expect=seen)  # ChangedOnDisk if edited meanwhile: nothing written
    return [f"judge {was or '(none: the default)'} → {candidate}"]


def refresh_card(rubric_path: str | Path, report: Any, labels: dict, *, by_annotator: Any = None,
                 cached: float | None = 0.0, samples: Any = None, sources: dict[str, Any] | None = None,
                 judge_options: dict[str, Any] | None = None) -> Path | None:
    """Rewrite the rubric's card, when it has one, from ``report`` (the new judge's run over
    ``samples``) and the rubric as it is now on disk, as ``card`` builds it (``sources``: where the
    samples and labels were read; ``judge_options``: ``batch`` / ``reuse_batch``); the card's path,
    or None when there is no card. OSError / RubricError when it cannot be read or written."""
    from rubric_studio.core.atomic import write_text_safely
    from rubric_studio.core.card import card_path_for, card_yaml
    from rubric_studio.core.loading import load_rubric
    from rubric_studio.engine.card import card_from_report

    card_path = card_path_for(rubric_path)
    if not card_path.exists():
        return None
    rubric = load_rubric(rubric_path)
    card = card_from_report(rubric, report, labels, by_annotator=by_annotator, cached=cached, samples=samples,
                            sources=sources, judge={**(judge_options or {}), "judge": None})
    write_text_safely(card_path, card_yaml(card))
    return card_path
