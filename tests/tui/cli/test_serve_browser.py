"""``ctxlab serve`` in a real browser: headless Chromium at 1280×720 (a common projector) and
1920×1080 loads the page, and the tests read what its terminal shows.

A Pilot test sets the terminal size itself; in a browser the size comes from the window, the
font and xterm.js's fit, and a layout that holds at every Pilot size can still hide a panel at
the size a projector gives. So each window size is visited once (the real command on a free
port, :mod:`tests.support.served_page`), a PNG of it is kept in the test's temporary folder,
and the tests check the terminal's size, that the workbench is drawn, that every right-hand
panel is on screen or named in the strip with its key, and that stopping the browser and the
server left no process and no file.

Skipped only where Chromium is not installed; ``.ci/run`` installs it and sets
``CTXLAB_REQUIRE_BROWSER``, which turns that skip into a failure.
"""

from __future__ import annotations

import sys

import pytest

from tests.support.chromium import Unavailable, chromium_binary
from tests.support.required import require
from tests.support.served_page import MONITOR, PROJECTOR, Visit, visit
from tests.tui.sizes import REPORTED
from tui import panels
from tui.i18n import t

pytest.importorskip("textual_serve")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

# The terminal each window gets (Roboto Mono at textual-serve's font size), also listed
# among the layout sweep's sizes in tests/tui/sizes.py.
TERMINAL = {PROJECTOR: (142, 34), MONITOR: (213, 51)}


@pytest.fixture(scope="module")
def browser() -> None:
    require(chromium_binary, Unavailable, "CTXLAB_REQUIRE_BROWSER", "the browser check")


@pytest.fixture(scope="module")
def seen(request: pytest.FixtureRequest, browser: None,
         tmp_path_factory: pytest.TempPathFactory) -> Visit:
    size: tuple[int, int] = request.param
    return visit(tmp_path_factory.mktemp(f"browser-{size[0]}x{size[1]}"), size)


BOTH = pytest.mark.parametrize("seen", [PROJECTOR, MONITOR], indirect=True,
                               ids=["1280x720", "1920x1080"])


@BOTH
def test_the_terminal_fills_the_window_at_the_size_the_layout_sweep_covers(seen: Visit):
    screen = seen.screen
    assert (screen.cols, screen.rows) == TERMINAL[seen.size], screen.text
    assert TERMINAL[seen.size] in REPORTED
    assert seen.screenshot.stat().st_size > 10_000, "a PNG of the drawn page"


@BOTH
def test_the_workbench_is_drawn_with_its_title_and_panels(seen: Visit):
    lines = seen.screen.lines
    assert "ctxlab ·" in lines[0] and "provider scripted" in lines[0], lines[0]
    assert t("panel.history") in lines[1], lines[1]
    assert f"─ {t('panel.context')}" in seen.screen.text, seen.screen.text


@pytest.mark.parametrize("seen", [PROJECTOR, MONITOR],
                         indirect=True, ids=["1280x720", "1920x1080"])
def test_every_right_hand_panel_is_on_screen_or_named_in_the_strip(seen: Visit):
    """A panel's border title (``─ Memory``) on screen, or ``6 Memory`` in the strip."""
    text, keys = seen.screen.text, panels.keys()
    missing = [t(f"panel.{panel.name}") for panel in panels.in_strip()
               if f"─ {t(f'panel.{panel.name}')}" not in text
               and f"{keys[panel.name]} {t(f'panel.{panel.name}')}" not in text]
    assert not missing, f"neither shown nor named: {missing}\n{text}"


@BOTH
def test_closing_the_browser_and_stopping_the_server_leave_nothing(seen: Visit):
    assert seen.server_exit == 0
    assert not seen.demos_left, "every served demo ended"
    assert not seen.browser_left, "every Chromium process ended"
    assert not seen.files_left, "no workspace or temporary file is left"
    assert not seen.profile_left, "nor the browser's profile"
