"""Keep a double-width character whole where an overlay crosses a widget's edge beneath it.

Textual's compositor paints each screen line in "chops": the line is cut at every column
where *any* visible widget starts or ends, including widgets hidden under an overlay, and
each widget's line is divided at those cuts (``Strip.divide``). Rich replaces a 2-cell
character that a cut falls inside with two spaces. So a toast in Chinese drawn over a panel
border lost exactly the characters that straddled the border's column (第, 字符, 命令…),
while the same text over a plain screen stayed whole. This is Textual's bug, open upstream
as https://github.com/Textualize/textual/issues/6357.

The workaround here is correct for every overlay, not only notices: when one widget owns
the chops on both sides of a cut and a wide character of its line straddles that cut, the
cut is not used to divide that widget's line — the chop left of it takes the whole
character and the chop right of it becomes empty, so no widget behind can claim it. Cuts
where ownership changes are kept (a character half-covered by another widget must still
be cut). Runs never extend past the area being redrawn, so a partial update cannot write
over a widget in front that was not redrawn.

The replacement is a modified copy of a private method, so it is installed only over the
exact method it was written against (its source's digest): a Textual that changed the
method keeps its own, and the Chinese-notice tests then fail and say the copy needs a look,
instead of an old copy silently replacing newer code.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import cast

from rich.cells import cell_len
from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip

_EMPTY = Strip([], 0)
_NONE: frozenset[int] = frozenset()
_ORIGINAL = Compositor._render_chops
# sha256 of Compositor._render_chops's source in Textual 8.2.8, the copy's starting point
WRITTEN_FOR = "ca8c3359d7afd017"


def source_digest(method: object) -> str | None:
    """The first 16 hex digits of the sha256 of ``method``'s source; None without source."""
    try:
        source = inspect.getsource(method)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return None
    return hashlib.sha256(source.encode()).hexdigest()[:16]


# Characters one cell wide (as Rich measures them; a test checks every one): Latin, Greek
# and Cyrillic, general punctuation, arrows, box drawing and blocks, braille. Most lines of
# the workbench hold nothing else — borders, "→", "…", "▌" — and are passed over in one match
# instead of measuring each character on every frame.
NARROW_RANGES = ((0x20, 0x7E), (0xA0, 0x2FF), (0x370, 0x482), (0x2010, 0x2027),
                 (0x2030, 0x205E), (0x2190, 0x21FF), (0x2500, 0x25FC), (0x2800, 0x28FF))
NARROW = re.compile(
    "[" + "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in NARROW_RANGES)
    + "]*").fullmatch


def wide_spans(strip: Strip) -> list[tuple[int, int]]:
    """The cell spans ``(start, end)`` of the characters wider than one cell in ``strip``."""
    spans: list[tuple[int, int]] = []
    text = strip.text
    if text.isascii() or NARROW(text):
        return spans
    x = 0
    for segment in strip:
        if segment.control:
            continue
        if NARROW(segment.text):
            x += len(segment.text)
            continue
        for char in segment.text:
            width = cell_len(char)
            if width > 1:
                spans.append((x, x + width))
            x += width
    return spans


def straddled(cuts: Sequence[int], spans: list[tuple[int, int]]) -> set[int]:
    """The cuts (relative to the strip) that fall inside one of the wide ``spans``."""
    return {cut for cut in cuts for start, end in spans if start < cut < end}


def _render_chops(self: Compositor, crop: Region,
                  is_rendered_line: Callable[[int], bool]) -> Sequence[Mapping[int, Strip]]:
    """:meth:`Compositor._render_chops`, dividing a widget's line only where it must."""
    cuts = self.cuts
    chops: list[dict[int, Strip | None]] = [dict.fromkeys(cut_set[:-1]) for cut_set in cuts]
    crop_start, crop_end = crop.column_span
    for region, clip, strips in self._get_renders(crop):
        render_region = region.intersection(clip)
        render_x = render_region.x
        first_cut, last_cut = render_region.column_span
        for y, strip in zip(render_region.line_range, strips, strict=False):
            if not is_rendered_line(y):
                continue
            line = chops[y]
            final_cuts = [cut for cut in cuts[y] if last_cut >= cut >= first_cut]
            kept: list[int] = final_cuts
            merged: AbstractSet[int] = _NONE
            # most lines have no inner cut, or no wide character: nothing to look at
            spans = wide_spans(strip) if len(final_cuts) > 2 else None
            if spans:
                inner = final_cuts[1:-1]
                wide = straddled([cut - render_x for cut in inner], spans)
                merged = {
                    cut for before, cut in zip(final_cuts, inner, strict=False)
                    if cut - render_x in wide and crop_start < cut < crop_end
                    and line.get(before) is None and line.get(cut) is None
                }
                kept = [cut for cut in final_cuts if cut not in merged]
            for cut, piece in zip(kept, strip.divide([cut - render_x for cut in kept[1:]]),
                                  strict=False):
                if line.get(cut) is None:
                    line[cut] = piece
            for cut in merged:  # the character lives in the chop on its left
                line[cut] = _EMPTY
    return cast("Sequence[Mapping[int, Strip]]", chops)


def keep_wide_characters_whole() -> None:
    """Install the workaround (idempotent) over the method it was written for; any other
    Textual is left alone."""
    if getattr(Compositor, "_render_chops", None) is _ORIGINAL \
            and source_digest(_ORIGINAL) == WRITTEN_FOR:
        Compositor._render_chops = _render_chops  # type: ignore[method-assign]
