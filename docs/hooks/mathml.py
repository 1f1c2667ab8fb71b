"""MkDocs hook: the site's formulas become MathML when the site is built, so a page needs no script
and nothing from another host to show them.

``pymdownx.arithmatex`` (``generic: true`` in ``mkdocs.yml``) finds the TeX written ``\\(...\\)``
inline and ``$$ ... $$`` on their own lines, and wraps it in ``<span class="arithmatex">`` and
``<div class="arithmatex">``. This hook replaces each wrapper with the ``<math>`` element
``latex2mathml`` writes from the TeX; browsers draw MathML themselves (Chromium 109+, Firefox,
Safari). A formula that cannot be converted is a warning, which ``mkdocs build --strict`` turns
into a failed build, so no page is published with raw TeX in it.

A browser draws MathML well only with a math font (one with an OpenType MATH table: where the
subscripts go, how a sum or a bracket grows), which few systems have. The site ships one, STIX Two
Math (SIL Open Font License), taken from the ``ziamath`` package that bundles it:
``stylesheets/math.css`` names it, and this hook copies it to ``assets/fonts/`` of the built site.
"""

from __future__ import annotations

import html
import logging
import re
import shutil
import xml.etree.ElementTree as ET
from importlib.util import find_spec
from pathlib import Path

from latex2mathml.converter import convert
from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.mathml")

#: The math font the site serves (``stylesheets/math.css`` loads it from here, under the site).
FONT = "STIXTwoMath-Regular.ttf"
FONT_DIR = "assets/fonts"

#: What arithmatex writes around a formula (its TeX is HTML-escaped inside).
_WRAPPED = re.compile(
    r'<span class="arithmatex">\\\((?P<inline>.*?)\\\)</span>'
    r'|<div class="arithmatex">\\\[(?P<block>.*?)\\\]</div>',
    re.DOTALL,
)


_NS = "http://www.w3.org/1998/Math/MathML"
ET.register_namespace("", _NS)

#: Accents latex2mathml writes with characters a math font does not place over a letter: ``\hat``
#: and ``\widehat`` as an ASCII ``^``, ``\overline`` as a horizontal bar. Each becomes the one the
#: font's MATH table positions: (narrow, wide) — the wide one stretches over the group it covers.
_ACCENTS = {"^": ("\u02c6", "\u0302"), "\u2015": ("\u203e", "\u203e")}


def _mark_accents(root: ET.Element) -> None:
    """Each accent of :data:`_ACCENTS` in ``root`` as the font places it, over its base."""
    for mover in root.iter(f"{{{_NS}}}mover"):
        script = mover[1] if len(mover) == 2 else None
        if script is None or script.tag != f"{{{_NS}}}mo" or script.text not in _ACCENTS:
            continue
        wide = mover.get("accent") != "true"  # \widehat, \overline: over a group, not one letter
        script.text = _ACCENTS[script.text][wide]
        script.attrib.pop("accent", None)
        script.set("stretchy", "true" if wide else "false")
        mover.set("accent", "true")


_CLOSING = {")", "]", "}", "|", "\u2016", "\u27e9", "!"}


def _mark_signs(root: ET.Element) -> None:
    """A minus or plus that opens a group or follows another operator (``[-1, 1]``, ``= -x``) is a
    sign, not a binary operator: written as a prefix it gets no space before its number, as in TeX
    (after a closing bracket it stays binary: ``(a + b) - c``)."""
    mo = f"{{{_NS}}}mo"
    for parent in root.iter():
        previous = None
        for child in parent:
            after_operator = previous is None or (previous.tag == mo and previous.text not in _CLOSING)
            if child.tag == mo and child.text in ("\u2212", "+", "-") and after_operator:
                child.set("form", "prefix")
            previous = child


def to_mathml(tex: str, *, block: bool) -> str:
    """The ``<math>`` element for ``tex`` (display style for a block), its TeX kept as an annotation
    so copying a formula or reading the page's source still gives what the author wrote."""
    root = ET.fromstring(convert(tex.strip(), display="block" if block else "inline"))
    _mark_accents(root)
    _mark_signs(root)
    semantics = ET.Element(f"{{{_NS}}}semantics")
    row = ET.SubElement(semantics, f"{{{_NS}}}mrow")
    row.extend(list(root))
    ET.SubElement(semantics, f"{{{_NS}}}annotation", encoding="application/x-tex").text = tex.strip()
    root[:] = [semantics]
    return ET.tostring(root, encoding="unicode", short_empty_elements=False)


def on_page_content(content: str, page, **_: object) -> str:
    """Every formula of the page as MathML; a formula that cannot be converted stays as it is, warned."""

    def replace(match: re.Match[str]) -> str:
        block = match["block"] is not None
        tex = html.unescape(match["block"] if block else match["inline"])
        try:
            math = to_mathml(tex, block=block)
            return f'<div class="math-display">{math}</div>' if block else math
        except Exception as exc:  # latex2mathml raises its own errors, and others on odd input
            why = str(exc) or type(exc).__name__
            log.warning("%s: a formula cannot be written as MathML (%s): %s", page.file.src_uri, why, tex.strip())
            return match[0]

    return _WRAPPED.sub(replace, content)


def on_post_build(config, **_: object) -> None:
    """The math font beside the site's other assets (its copyright and licence travel in the font's
    own name table, as the Open Font License allows)."""
    package = find_spec("ziamath")  # found, not imported: its import loads the whole renderer
    if package is None or not package.submodule_search_locations:
        raise PluginError("the math font comes from the ziamath package: pip install -e '.[docs]'")
    target = Path(config["site_dir"]) / FONT_DIR
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(package.submodule_search_locations[0]) / "fonts" / FONT, target / FONT)
