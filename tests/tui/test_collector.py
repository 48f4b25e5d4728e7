"""The workbench keeps full collections out of its frames, and gives the collector back."""

from __future__ import annotations

import gc
from collections.abc import Callable

import pytest

from tui.app import CtxlabApp
from tui.collector import FULL_EVERY, QuietCollector


@pytest.fixture
def default_collector():
    threshold = gc.get_threshold()
    yield threshold
    gc.set_threshold(*threshold)
    gc.unfreeze()


def test_start_freezes_and_slows_full_collections_and_stop_undoes_both(default_collector):
    before = gc.get_freeze_count()
    quiet = QuietCollector()
    quiet.start()
    assert gc.get_freeze_count() > before
    assert gc.get_threshold() == (*default_collector[:2], FULL_EVERY)
    quiet.stop()
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == default_collector


def test_two_users_share_it_until_the_last_one_stops(default_collector):
    first, second = QuietCollector(), QuietCollector()
    first.start()
    second.start()
    first.stop()
    assert gc.get_threshold()[2] == FULL_EVERY  # the second app still runs
    second.stop()
    second.stop()  # stopping twice changes nothing
    assert gc.get_threshold() == default_collector


@pytest.mark.anyio
async def test_the_app_holds_it_while_it_runs(make_app: Callable[..., CtxlabApp],
                                              default_collector) -> None:
    app = make_app(paused=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(0.1)
        assert gc.get_threshold()[2] == FULL_EVERY
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == default_collector
    assert gc.get_freeze_count() == 0


def test_settle_freezes_what_survives_only_while_started(default_collector):
    quiet = QuietCollector()
    quiet.settle()  # not started: the process's collector is left alone
    assert gc.get_freeze_count() == 0
    quiet.start()
    frozen = gc.get_freeze_count()
    kept = [[n] for n in range(1000)]  # survivors: frozen by the next settle
    quiet.settle()
    assert gc.get_freeze_count() >= frozen + len(kept)
    quiet.stop()
    assert gc.get_freeze_count() == 0


def test_garbage_frozen_during_a_stream_is_freed_once_it_relaxes(default_collector):
    """settle() freezes what is alive; a cycle dropped after that is invisible to every
    collection until relax() thaws it (the app calls it once a stream has gone quiet)."""
    import weakref

    class Node:
        pass

    quiet = QuietCollector()
    quiet.start()
    try:
        node = Node()
        node.me = node  # a cycle: only the cyclic collector frees it
        alive = weakref.ref(node)
        quiet.settle()  # frozen mid-stream
        del node
        gc.collect()
        assert alive() is not None  # frozen: no collection sees it
        quiet.relax()
        assert alive() is None
        assert not quiet.settled
        quiet.relax()  # nothing settled since: nothing to do
    finally:
        quiet.stop()
