"""The workbench's keys: one list, in the order the footer shows them.

Descriptions are message ids (tui.locales), translated per app when it starts
(:func:`tui.i18n.localize_bindings`); each panel's digit key is added from its row in
:mod:`tui.panels`, so it is not listed here.
"""

from __future__ import annotations

from textual.binding import Binding, BindingType

BINDINGS: list[BindingType] = [
    # Help first: the footer lists it before the run's keys, where a newcomer looks.
    Binding("question_mark,f1,h", "help", "key.help", key_display="?"),
    Binding("escape", "hide_help", "key.hide_help", show=False),
    Binding("space", "toggle_play", "key.play"),
    Binding("s", "step", "key.step"),
    Binding("plus,equals_sign", "faster", "key.faster", key_display="+"),
    Binding("minus", "slower", "key.slower", key_display="-"),
    Binding("v", "toggle_view", "key.view"),
    Binding("o", "pick_scenario", "key.scenario"),
    Binding("l", "limits", "key.limits"),
    Binding("b", "breaks", "key.breaks"),
    Binding("c", "compare", "key.compare"),
    Binding("p", "system_prompt", "key.system_prompt"),
    Binding("t", "next_theme", "key.theme"),
    Binding("i", "inspect", "key.inspect"),
    Binding("n", "next_compaction", "key.next_compaction"),
    Binding("S", "step_back", "key.step_back", key_display="S"),
    Binding("g", "go_to", "key.go_to"),
    # the same keys where the run cannot go back (a live run): a notice says why
    Binding("S,g", "cannot_go_back", "key.step_back", show=False),
    Binding("right_square_bracket", "next_kind", "key.next_kind", key_display="]"),
    Binding("left_square_bracket", "previous_kind", "key.previous_kind", key_display="["),
    Binding("m", "meaning", "key.meaning"),
    Binding("ctrl+f", "search", "key.search", key_display="^f"),
    Binding("z", "zoom", "key.zoom"),
    Binding("w", "copy_workspace", "key.workspace", show=False),
    Binding("escape", "leave_prompt", "key.leave_prompt"),
    Binding("slash", "to_prompt", "key.to_prompt", key_display="/"),
    Binding("ctrl+q", "quit", "key.quit", priority=True),
    Binding("ctrl+p", "command_palette", "key.palette", show=False, priority=True,
            tooltip="key.palette_tip"),
]
