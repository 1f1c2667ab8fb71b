"""Structured edits of a YAML text that change only what they say.

:class:`RoundTripYaml` loads the text with ruamel.yaml in round-trip mode (comments, key
order, quoting and folded scalars survive), lets an edit change that data, renders it, and
merges the change back onto the original text line by line
(:func:`~rubric_studio.core.document._merge.merge3`, base = ruamel's rendering of the text before
the edit): a file whose formatting ruamel would not reproduce exactly still changes only
around the edit. ruamel bounds neither aliases nor nesting, so it only reads text the
bounded loader (:mod:`~rubric_studio.core.yamlpos._load`) accepted.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rubric_studio.core.document._merge import merge3
from rubric_studio.core.document._schema import EditError
from rubric_studio.core.document._style import detect_style, make_yaml
from rubric_studio.core.problems import Problem

if TYPE_CHECKING:  # ruamel is loaded by the first edit, not by opening a rubric to read it
    from ruamel.yaml import YAML

__all__ = ["RoundTripYaml"]

_BASES_KEPT = 16


class RoundTripYaml:
    """ruamel.yaml set up to reproduce one file's formatting, and the edit cycle on its text.

    ``refuse(text)`` is the bounded loader's objection to ``text`` (None when it passes).
    """

    def __init__(self, file: str, refuse: Callable[[str], Problem | None]):
        self.file = file
        self._refuse = refuse
        self._styled: YAML | None = None  # set up on first use (:attr:`_yaml`)
        self._style_of: str | None = None  # the text whose indentation that takes
        self._bases: dict[str, str] = {}  # text -> ruamel's rendering of it, for recent texts

    def restyle(self, text: str) -> None:
        """Take the indentation that reproduces ``text`` best (the text was replaced as a whole).

        Found when an edit first needs it: opening a file only to read it does not pay for it.
        """
        self._bases.clear()
        self._styled, self._style_of = None, text

    @property
    def _yaml(self) -> YAML:
        """ruamel set up to reproduce the text given to :meth:`restyle` (the default without one)."""
        if self._styled is None:
            text, self._style_of = self._style_of, None
            if text is None or self._refuse(text) is not None:  # not YAML (yet) or out of bounds: the default
                self._styled = make_yaml()
            else:
                self._styled, rendered = detect_style(text)
                if rendered is not None:
                    self.remember(text, rendered)
        return self._styled

    def load(self, text: str) -> Any:
        """ruamel data of ``text``; :class:`EditError` (to fix the YAML first) when it cannot be read."""
        from ruamel.yaml.error import YAMLError as RuamelYAMLError

        problem = self._refuse(text)
        if problem is not None:
            raise EditError(f"{problem}; fix the YAML first")
        try:
            return self._yaml.load(text)
        except RuamelYAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{self.file}:{mark.line + 1}:{mark.column + 1}" if mark is not None else self.file
            raise EditError(f"{where}: {getattr(exc, 'problem', None) or exc}; fix the YAML first") from None

    def dump(self, data: Any) -> str:
        """``data`` rendered in the file's style."""
        out = io.StringIO()
        self._yaml.dump(data, out)
        return out.getvalue()

    def base(self, text: str) -> str:
        """ruamel's rendering of ``text`` (remembered for recent texts: undo goes back)."""
        rendered = self._bases.get(text)
        if rendered is None:
            rendered = self.dump(self.load(text))
            self.remember(text, rendered)
        return rendered

    def remember(self, text: str, rendered: str) -> None:
        """Note ruamel's rendering of ``text`` (the oldest of more than a few are forgotten)."""
        self._bases[text] = rendered
        while len(self._bases) > _BASES_KEPT:
            del self._bases[next(iter(self._bases))]

    def edit(self, text: str, mutate: Callable[[Any], Any]) -> tuple[str, Any]:
        """Load fresh data of ``text``, ``mutate`` it, render, merge onto ``text``.

        Returns the new text and what ``mutate`` returned; line endings stay as they were.
        """
        data = self.load(text)
        result = mutate(data)
        rendered = self.dump(data)
        crlf = "\r\n" in text
        original = text.replace("\r\n", "\n") if crlf else text
        # Where ruamel renders the user's text differently (base != original) the user's lines
        # are kept, unless the edit itself rewrote those very lines.
        new_text = merge3(self.base(text), rendered, original).text
        if crlf:
            new_text = new_text.replace("\r\n", "\n").replace("\n", "\r\n")
        if new_text == rendered:
            self.remember(new_text, rendered)  # ruamel renders its own output unchanged
        return new_text, result
