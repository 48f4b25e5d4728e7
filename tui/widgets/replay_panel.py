"""The "Replay" panel: what a recorded session is, where the replay stands, and the original.

Hidden until a ``replay_start`` arrives, so ctxlab's own runs never see it. It says what the
meter alone cannot: which agent and format was read (and what was skipped), the session's
measured chars-per-token ratio and the unit the context limit was given in, the limits
ctxlab's side runs at (scaled to the model's window, or the course's), the conversation of a
watch recording being replayed and the others it holds, the recorded
request being shown beside ctxlab's, the original history by category (``replay_step``'s
breakdown, in the Context meter's vocabulary: the meter shows ctxlab's side, this panel the
original's), the original agent's last compaction, and the subagent transcripts
— each a session of its own, listed with its path so it can be opened with
``ctxlab replay PATH``, and with its type, task, requests, compactions and tokens, which the
session's own transcript does not hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.content import Content
from textual.widgets import Static

from core import events as ev
from core.compact.breakdown import CATEGORIES
from core.events import Manager
from tui.i18n import t
from tui.managers import manager_label
from tui.routing import OFF, Routed, RunInfo, handles
from tui.widgets.redraw import update_if_changed


def beside(path: str, session: str) -> str:
    """A subagent transcript's path from the session file's folder (where Claude Code keeps
    it: ``<session>/subagents/…``), else as given; the full paths are in ``replay_start``."""
    try:
        return str(Path(path).relative_to(Path(session).parent))
    except ValueError:
        return path


def subagent_row(path: str, session: str, totals: dict[str, Any] | None) -> Content:
    """One subagent: its path, then who it was and its own requests, compactions and
    tokens (they are not in the session's transcript, yet they were sent)."""
    line = Content.styled(f"  {beside(path, session)}", "dim")
    if totals is None:
        return line
    if totals.get("error"):
        return Content.assemble(line, "  ", (t("replay.subagent_unread"), "$error"))
    kind = totals.get("agent_type") or t("replay.subagent_unnamed")  # no meta file
    about = f" “{totals['description']}”" if totals.get("description") else ""
    return Content.assemble(line, "  ", t(
        "replay.subagent", kind=kind, about=about, n=int(totals.get("requests") or 0),
        compactions=t("count.compactions", n=int(totals.get("compactions") or 0)),
        tokens=int(totals.get("input_tokens") or 0)))


def conversation_lines(s: ev.ReplayStart) -> list[Content | str]:
    """A watch recording's conversation replayed, the others by id, and its side calls."""
    if len(s.conversations) < 2 and not s.side_calls:
        return []
    chosen = next((c for c in s.conversations if c["id"] == s.conversation), None)
    out: list[Content | str] = []
    if chosen is not None:
        out.append(t("replay.conversation", id=chosen["id"], n=len(s.conversations),
                     label=chosen["label"]))
    others = [c["id"] for c in s.conversations if c["id"] != s.conversation]
    if others:
        out.append(Content.styled(t("replay.others", ids=", ".join(others)), "dim"))
    if s.side_calls:
        out.append(Content.styled(t("replay.side", n=s.side_calls), "dim"))
    return out


def limits_words(start: ev.ReplayStart) -> str:
    """``ReplayStart.limits_line`` in the active language."""
    if start.max_messages is None or start.limits not in ("window", "tokens", "course",
                                                          "given"):
        return start.limits_line()
    sizes = t("replay.limits.sizes", chars=start.context_limit, messages=start.max_messages,
              n=start.max_messages)  # n: "1 message" when the limit is one
    return t(f"replay.limits.{start.limits}", sizes=sizes,
             tokens=start.context_limit_tokens or 0)


class ReplayPanel(Routed, Static):
    """A few lines about the replay; redrawn on every replay event."""

    DEFAULT_CSS = """
    ReplayPanel { height: auto; max-height: 15; border: round $primary; padding: 0 1; }
    ReplayPanel.-off { display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, markup=False)
        self.border_title = t("panel.replay")
        self.add_class(OFF)  # until a replay's view turns it on
        self.start: ev.ReplayStart | None = None
        self.step: ev.ReplayStep | None = None
        self.original_stage: ev.Stage | None = None

    def reset(self, run: RunInfo | None = None) -> None:
        self.start = self.step = self.original_stage = None
        self.add_class(OFF)

    @handles(ev.ReplayStart)
    def show_start(self, event: ev.ReplayStart) -> None:
        self.start = event
        self.remove_class(OFF)
        self.redraw_once(self.redraw)

    @handles(ev.ReplayStep)
    def show_step(self, event: ev.ReplayStep) -> None:
        self.step = event
        self.redraw_once(self.redraw)

    @handles(ev.Stage)
    def show_original_stage(self, event: ev.Stage) -> None:
        if event.by != Manager.PIPELINE:
            self.original_stage = event
            self.redraw_once(self.redraw)

    def lines(self) -> list[Content | str]:
        """The panel's text (also what tests read)."""
        s = self.start
        if s is None:
            return []
        step = self.step
        limit = (f"{s.context_limit_tokens:,} tokens = {s.context_limit:,} chars"
                 if s.unit == "tokens" else f"{s.context_limit:,} chars")
        out: list[Content | str] = [
            Content.styled(t("replay.head", agent=manager_label(s.agent),
                             format="" if s.format == s.agent else f" {s.format}",
                             i=step.index if step else 0, n=s.requests), "bold"),
            t("replay.ratio", ratio=s.chars_per_token, source=s.ratio_source, unit=s.unit,
              limit=limit)]
        if s.limits is not None:
            out.append(t("replay.limits", text=limits_words(s)))
        out += conversation_lines(s)
        if s.skipped:
            skipped = ", ".join(f"{n:,} {k}" for k, n in sorted(s.skipped.items()))
            out.append(Content.styled(t("replay.skipped", read=s.lines_read,
                                        total=s.lines_total, skipped=skipped), "dim"))
        if step is not None:
            tokens = t("replay.tokens", n=step.original_tokens) if step.original_tokens else ""
            out.append(t("replay.sizes", chars=step.original_chars, tokens=tokens,
                         msgs=t("count.msgs", n=step.original_messages),
                         cchars=step.ctxlab_chars,
                         cmsgs=t("count.msgs", n=step.ctxlab_messages)))
            cats = " · ".join(f"{t(f'cat.{k}')} {int(step.breakdown[k]):,}"
                              for k in CATEGORIES if step.breakdown.get(k))
            out.append(f"{t('replay.cats')} {cats}")
        if (o := self.original_stage) is not None:
            at = f" ({o.trigger})" if o.trigger else ""
            at += f" at {o.pre_tokens:,} tokens" if o.pre_tokens else ""
            at += f" → {o.post_tokens:,} tokens" if o.post_tokens else ""
            out.append(Content.styled(
                t("replay.last", by=manager_label(o.by), stage=o.stage, at=at,
                  before=o.before_chars,
                  after=o.after_chars), "bold $warning"))
        if s.subagents:
            out.append(t("replay.subagents", n=len(s.subagents)))
            read = {str(row.get("path")): row for row in s.subagent_totals}
            out += [subagent_row(path, s.path, read.get(path)) for path in s.subagents]
        return out

    def text(self) -> str:
        return "\n".join(str(line) for line in self.lines())

    def redraw(self) -> None:
        update_if_changed(self, Content("\n").join(
            [line if isinstance(line, Content) else Content(line) for line in self.lines()]))
