"""The footer is rebuilt only when the keys it shows change (tui/widgets/keys_footer.py)."""

from __future__ import annotations

from typing import ClassVar

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button
from textual.widgets._footer import FooterKey

from tui.widgets.keys_footer import KeysFooter

pytestmark = pytest.mark.anyio


class WithKey(Button):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("k", "press", "Press it")]


class Host(App[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("q", "quit", "Quit"),
                                             Binding("p", "pause", "Pause")]

    def compose(self) -> ComposeResult:
        yield Button("one", id="one")
        yield Button("two", id="two")
        yield WithKey("three", id="three")
        yield KeysFooter()

    def action_pause(self) -> None:
        pass


def keys(app: Host) -> list[FooterKey]:
    return list(app.query(FooterKey))


async def test_the_footer_is_rebuilt_only_when_its_keys_change() -> None:
    app = Host()
    async with app.run_test(size=(80, 10)) as pilot:
        app.query_one("#one").focus()
        await pilot.pause()
        first = keys(app)
        assert [k.description for k in first] == ["Quit", "Pause", "palette"]
        app.query_one("#two").focus()  # the same keys: the same widgets
        app.refresh_bindings()
        await pilot.pause()
        assert keys(app) == first
        app.query_one("#three").focus()  # a key more: rebuilt
        await pilot.pause()
        assert [k.description for k in keys(app)] == ["Press it", "Quit", "Pause", "palette"]
        app.query_one("#one").focus()
        await pilot.pause()
        assert [k.description for k in keys(app)] == ["Quit", "Pause", "palette"]
        assert keys(app) != first  # rebuilt again, as it had changed since
