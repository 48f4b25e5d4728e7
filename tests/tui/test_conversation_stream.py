"""An answer's stream stopped before its task first ran: ``MarkdownStream.stop`` then raises
the task's ``CancelledError`` in its caller, which for a routing is the app's own message
loop; taken for the loop's own cancellation, it stopped the workbench for good."""

from __future__ import annotations

import asyncio

import pytest

from tui.widgets.conversation import Conversation

pytestmark = pytest.mark.anyio


async def answer_ended_at_once(conversation: Conversation) -> None:
    """An answer whose first text is empty, shown, then ended with no await between: its
    stream is made by the flush and stopped before its task took a step."""
    await conversation.assistant("")
    await conversation.flush()
    assert conversation._stream is not None  # the flush began streaming into it
    await conversation.end_assistant()


async def test_ending_it_does_not_cancel_the_caller(make_app) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(120, 40)):
        task = asyncio.create_task(answer_ended_at_once(app.query_one(Conversation)))
        await asyncio.wait([task], timeout=10)
        assert task.done() and not task.cancelled()
        task.result()


async def test_the_app_keeps_running_when_its_loop_ends_the_answer(make_app) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        ended = asyncio.Event()

        async def in_the_apps_loop() -> None:
            await answer_ended_at_once(app.query_one(Conversation))
            ended.set()

        app.call_later(in_the_apps_loop)
        await asyncio.wait_for(ended.wait(), timeout=10)
        await asyncio.sleep(0.05)
        assert app.is_running
        await pilot.press("7")  # it still takes keys
        assert app.query_one("#tabs").active == "tab-window"
