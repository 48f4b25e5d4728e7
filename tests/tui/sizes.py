"""The terminal sizes a layout sweep covers: from the smallest supported (80×24) to a large
monitor (240×70), with the sizes people actually report — a laptop split, a projector at
100 columns, the browser's 142×34 at 1280×720 and 213×51 at 1920×1080, wide-but-short panes.
The browser's two are what tests/tui/cli/test_serve_browser.py measures in headless Chromium."""

from __future__ import annotations

REPORTED = [(80, 24), (100, 30), (142, 34), (150, 34), (160, 36), (160, 48), (200, 55),
            (213, 51)]
GRID = [(width, height) for width in (80, 110, 140, 180, 240)
        for height in (24, 30, 40, 55, 70)]
SIZES: list[tuple[int, int]] = sorted(set(REPORTED + GRID))
