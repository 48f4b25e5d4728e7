"""Where each keyed panel is on the screen, as a person sees it: its visible region and how
many of its content rows show, or that the strip names it with its key.

A panel can be composed, displayed and focused yet drawn off the bottom of the screen, so
"is it shown" is read from the compositor's map of what it actually drew (a widget's region
clipped by its containers and the screen), not from ``display``. The layout sweep asserts
with it that no panel is hidden silently; other layout tests can ask where a panel is (the
Context meter's rows, say) without repeating the geometry.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import ContentSwitcher, Tabs

from tui import panels
from tui.app import CtxlabApp
from tui.app_panels import PanelStrip
from tui.i18n import t

MIN_ROWS = 3  # content rows a shown panel must give, or it is as good as hidden


@dataclass(frozen=True)
class PanelPlace:
    """One keyed panel: where it shows on screen (empty when it does not) and whether the
    strip names it with its key."""

    name: str
    key: str
    region: Region  # the part of the panel drawn on screen, border included
    content_rows: int  # rows of its content (inside border and padding) on screen
    in_strip: bool  # the strip is on screen and names it with its key

    @property
    def visible(self) -> bool:
        return self.content_rows >= MIN_ROWS

    @property
    def accounted_for(self) -> bool:
        """Shown with enough rows to read, or named (with its key) where the eye can find it."""
        return self.visible or self.in_strip


def drawn(widget: Widget) -> tuple[Region, Region]:
    """``widget``'s region on screen clipped by its containers, and its content's; empty
    regions when the compositor did not draw it."""
    found = widget.screen._compositor.visible_widgets.get(widget)
    if found is None:
        return Region(), Region()
    region, clip = found
    content = region.shrink(widget.styles.gutter)
    return region.intersection(clip), content.intersection(clip)


def content_widget(app: CtxlabApp, panel: panels.Panel) -> Widget:
    """The widget whose rows a panel shows: a tab's pane (when it is the active tab), else
    the panel's own box."""
    if panel.place == "tab":
        switcher = app.query_one("#tabs").query_one(ContentSwitcher)
        pane = f"tab-{panel.name}"
        return switcher.get_child_by_id(pane) if switcher.current == pane else switcher
    return app.query_one(f"#{panel.id}")


def strip_names(app: CtxlabApp) -> str:
    """The strip's text when it is wholly on screen, else nothing."""
    strip = app.query_one(PanelStrip)
    region, _ = drawn(strip)
    if not strip.display or region.height < strip.region.height or region.height == 0:
        return ""
    return str(strip.render())


def panel_places(app: CtxlabApp) -> dict[str, PanelPlace]:
    """Every keyed panel by name, with where it is on screen and whether the strip names it.

    A tab counts as shown when it is the active tab and its pane shows; the inactive tab is
    one click or key away on the tab bar, so it counts as named when the tab bar shows."""
    keys = panels.keys()
    strip = strip_names(app)
    places: dict[str, PanelPlace] = {}
    for panel in panels.keyed():
        region, content = drawn(content_widget(app, panel))
        key, label = keys[panel.name], t(f"panel.{panel.name}")
        if panel.place == "tab":
            switcher = app.query_one("#tabs").query_one(ContentSwitcher)
            shown = switcher.current == f"tab-{panel.name}"
            rows = content.height if shown else 0
            named = not shown and drawn(app.query_one("#tabs").query_one(Tabs))[0].height > 0
        else:
            rows, named = content.height, f"{key} {label}" in strip
        places[panel.name] = PanelPlace(panel.name, key, region, rows if content.width else 0,
                                        named)
    return places
