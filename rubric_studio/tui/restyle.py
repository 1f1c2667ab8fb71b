"""Set a class on a pane without restyling every widget inside it.

When a class on a node changes, Textual restyles that node and every node below it; a
``:focus-within`` rule does the same for the whole subtree on every focus move inside it. The
studio's editor holds about 250 widgets, so marking the focused pane that way cost 0.3–0.6 s of
CPU per focus change: a pane switch took over a second, a Tab between two form fields 0.3 s
(BENCHMARKS.md, Studio, "A focus change").

:func:`set_class_restyling` sets the class and restyles only the nodes a rule naming that class
can match, before or after the change. That is exact as long as those rules only set
properties no descendant reads from its ancestors (sizes, display, borders, layout): for any
other rule it restyles the whole subtree, as Textual would.
"""

from __future__ import annotations

from textual.css.match import match
from textual.css.model import CombinatorType, Selector, SelectorSet, SelectorType
from textual.dom import DOMNode
from textual.widget import Widget

__all__ = ["BOX_PROPERTIES", "set_class_restyling"]

#: Properties a widget's descendants never read from it (Textual walks the ancestors for colours,
#: background, opacity, text style and layers, never for these): what a partial restyle may change.
BOX_PROPERTIES = frozenset({
    "display", "layout", "dock",
    "width", "min_width", "max_width", "height", "min_height", "max_height",
    "margin", "padding", "offset", "text_align",
    "border_top", "border_right", "border_bottom", "border_left",
})


def _rules_naming(node: DOMNode, class_name: str) -> tuple[list[SelectorSet], bool]:
    """The selector sets of the stylesheet that name ``class_name`` and whether every rule they
    belong to sets box properties only."""
    sets: list[SelectorSet] = []
    box_only = True
    for rule in node.app.stylesheet.rules:
        naming = [selector_set for selector_set in rule.selector_set
                  if any(selector.type == SelectorType.CLASS and selector.name == class_name
                         for selector in selector_set.selectors)]
        if naming:
            sets.extend(naming)
            box_only = box_only and set(rule.styles.get_rules()) <= BOX_PROPERTIES
    return sets, box_only


def _last_compound(selector_set: SelectorSet, class_name: str) -> list[Selector]:
    """The selectors of the last compound of ``selector_set`` (those naming the node itself), less
    any naming ``class_name``."""
    selectors = selector_set.selectors
    start = len(selectors) - 1
    while start > 0 and selectors[start].combinator == CombinatorType.SAME:
        start -= 1
    return [selector for selector in selectors[start:]
            if not (selector.type == SelectorType.CLASS and selector.name == class_name)]


def set_class_restyling(node: Widget, add: bool, class_name: str) -> None:
    """Add (or remove) ``class_name`` on ``node``, restyling only the nodes it can change."""
    if node.has_class(class_name) == add:
        return
    if not node.is_attached:
        node.set_class(add, class_name)
        return
    sets, box_only = _rules_naming(node, class_name)
    if not box_only:
        node.set_class(add, class_name)
        return
    # a node can match a rule only if it matches the rule's last compound selector (``#right.-focused``),
    # whatever the class being set: a cheap test that leaves few nodes for the full match
    heads = [_last_compound(selector_set, class_name) for selector_set in sets]
    subtree = [n for n in node.walk_children(with_self=True)
               if any(all(selector.check(n) for selector in head) for head in heads)]
    before = {id(n) for n in subtree if match(sets, n)}
    node.set_class(add, class_name, update=False)
    changed = [n for n in subtree if id(n) in before or match(sets, n)]
    if changed:
        node.app.stylesheet.update_nodes(changed, animate=True)
        node.refresh(layout=True)
