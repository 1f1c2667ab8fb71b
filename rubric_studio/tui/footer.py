"""The studio's footer: Textual's, rebuilt only when the keys it shows change.

Textual's :class:`~textual.widgets.Footer` recomposes all its keys whenever the screen's
bindings may have changed: every focus move, every binding refresh. Moving between two
fields of the same form, or from cell to cell, changes nothing it shows, yet rebuilding
and restyling its keys cost about a tenth of a second of CPU each time. This footer
compares what it would show with what it shows and keeps its keys when they are the same.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.widgets import Footer

__all__ = ["KeysFooter"]


class KeysFooter(Footer):
    """A :class:`~textual.widgets.Footer` that recomposes only when its keys would differ."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._shown: Hashable | None = None

    def keys_shown(self) -> Hashable:
        """What the footer would show now: each shown binding's key, action, label, state and
        tooltip, in order, and whether the command palette key is offered."""
        screen = self.screen
        shown = tuple(
            (binding.key, binding.action, binding.description, binding.key_display,
             binding.group.description if binding.group is not None else None, enabled, tooltip)
            for _node, binding, enabled, tooltip in screen.active_bindings.values()
            if binding.show
        )
        palette = self.app.ENABLE_COMMAND_PALETTE and self.show_command_palette
        palette_key = screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING) if palette else None
        return shown, self.compact, palette_key[2] if palette_key is not None else None

    async def recompose(self) -> None:
        """Rebuild the keys, unless they would be the ones shown already."""
        if not self.is_attached:
            return
        shown = self.keys_shown()
        if shown == self._shown and self.children:
            return
        await super().recompose()
        self._shown = shown if self.children else None
