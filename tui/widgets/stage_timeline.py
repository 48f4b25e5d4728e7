"""The "Stages" panel: every compaction stage that changed something, in firing order.

One row per ``stage`` event, named as in the course (``snip_compact``, ``micro_compact``…),
with chars and messages before → after and how many files it wrote — the one timeline of
all stages that peers lack. Selecting a row asks the app to open the inspector on it.
"""

from __future__ import annotations

from textual.message import Message
from textual.widgets import DataTable

from tui.screens.stage_diff import StageRecord

STAGE_HINT = {
    "tool_result_budget": "big results → files + previews",
    "snip_compact": "middle → transcript + marker",
    "micro_compact": "old results → placeholders",
    "fit_tool_results": "results → 1k previews",
    "compact_history": "history → one summary",
    "reactive_compact": "too long → summary + tail",
    "manual_compact": "compact tool → summary",
}


class StageTimeline(DataTable):
    """A row per stage; Enter (or a click) inspects it."""

    class Inspect(Message):
        def __init__(self, record: StageRecord) -> None:
            super().__init__()
            self.record = record

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.border_title = "Stages"
        self.records: dict[str, StageRecord] = {}

    def on_mount(self) -> None:
        self.add_column("#", key="n", width=3)
        self.add_column("stage", key="stage", width=18)
        self.add_column("chars before → after", key="chars", width=20)
        self.add_column("msgs", key="msgs", width=6)
        self.add_column("files", key="files", width=5)
        self.add_column("what happened", key="hint", width=30)

    def reset(self) -> None:
        self.clear()
        self.records.clear()
        self.border_subtitle = ""

    def add_stage(self, record: StageRecord) -> None:
        e = record.event
        key = str(record.index)
        self.records[key] = record
        self.add_row(
            str(record.index), e.stage, f"{e.before_chars:>8,} → {e.after_chars:<8,}",
            f"{e.before_messages}→{e.after_messages}", str(len(e.files)),
            STAGE_HINT.get(e.stage, ""), key=key,
        )
        self.move_cursor(row=self.row_count - 1)
        saved = sum(r.event.before_chars - r.event.after_chars for r in self.records.values())
        self.border_subtitle = f"{len(self.records)} stages · {saved:,} chars taken out"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        record = self.records.get(str(event.row_key.value))
        if record is not None:
            self.post_message(self.Inspect(record))
