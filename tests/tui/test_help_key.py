"""A help key: ``?``, F1 and ``h`` open Textual's keys panel, Esc closes it, and the
palette finds it by "help" (in Chinese by 帮助)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.widgets import HelpPanel

from tests.tui.conftest import TINY_ZH
from tui.app import CtxlabApp
from tui.commands import CtxlabCommands

pytestmark = pytest.mark.anyio


def help_open(app: CtxlabApp) -> bool:
    return bool(app.screen.query(HelpPanel))


@pytest.mark.parametrize("key", ["question_mark", "f1", "h"])
async def test_a_help_key_opens_the_keys_panel_and_esc_closes_it(
        make_app: Callable[..., CtxlabApp], key: str) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.1)
        assert not help_open(app)
        await pilot.press(key)
        await pilot.pause(0.1)
        assert help_open(app)
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not help_open(app)
        await pilot.press(key)  # the same key closes it too
        await pilot.press(key)
        await pilot.pause(0.1)
        assert not help_open(app)


async def test_f1_opens_help_while_the_prompt_has_the_keyboard(
        make_app: Callable[..., CtxlabApp]) -> None:
    app = make_app(scenario=None)  # live mode: letters type into the prompt
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("f1")
        await pilot.pause(0.1)
        assert help_open(app)
        await pilot.press("escape")
        await pilot.pause(0.1)
        assert not help_open(app)


@pytest.mark.parametrize(("scenario", "query"), [(None, "help"), (TINY_ZH, "帮助")])
async def test_the_palette_finds_help(make_app: Callable[..., CtxlabApp],
                                      scenario: str | None, query: str) -> None:
    app = make_app(paused=True, **({"scenario": scenario, "lang": "zh"} if scenario else {}))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.1)
        provider = CtxlabCommands(app.screen)
        hits = [hit async for hit in provider.search(query)]
        assert hits, f"nothing for {query!r}"
        await hits[0].command()
        await pilot.pause(0.1)
        assert help_open(app)


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_the_keys_panel_lists_the_navigation_keys(make_app: Callable[..., CtxlabApp],
                                                        lang: str) -> None:
    """Step back, go to, the next/previous stage of a kind, the meaning and the search are
    keys a demo offers, named in the UI's language."""
    from tui.i18n import t

    app = make_app(paused=True, **({"scenario": TINY_ZH, "lang": "zh"} if lang == "zh"
                                    else {}))
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.1)
        shown = {b.binding.key: b.binding.description for b in app.active_bindings.values()
                 if b.enabled}
        for key, text in [("S", "key.step_back"), ("g", "key.go_to"),
                          ("right_square_bracket", "key.next_kind"),
                          ("left_square_bracket", "key.previous_kind"),
                          ("m", "key.meaning"), ("ctrl+f", "key.search")]:
            assert shown.get(key) == t(text), key
