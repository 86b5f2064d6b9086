"""Who holds the engine (gui/core/engine_use.py): each use waits for the ones its table names, the first under
way is the reason given, and listeners hear each change once."""

from __future__ import annotations

import pytest

from gui.core.engine_use import WAITS_FOR, EngineUse, Use


def test_a_use_may_go_when_nothing_it_waits_for_is_under_way() -> None:
    uses = EngineUse()
    assert all(uses.blocker(use) is None for use in Use)
    uses.set(Use.CHAT, True)
    assert uses.blocker(Use.LOAD) is None  # a load does not wait for a reply (the session refuses it itself)
    assert uses.blocker(Use.API) is Use.CHAT  # the API waits for what the window does
    assert uses.blocker(Use.BENCH) is Use.CHAT and uses.blocker(Use.POWER) is Use.CHAT


@pytest.mark.parametrize("use", list(Use))
def test_the_reason_is_the_first_use_under_way_in_the_table(use: Use) -> None:
    uses = EngineUse()
    others = [other for other in Use if other is not use]
    for other in reversed(others):
        uses.set(other, True)
    expected = next((other for other in WAITS_FOR[use] if other in others), None)
    assert uses.blocker(use) is expected


def test_one_sweep_at_a_time_and_the_chat_waits_for_the_api() -> None:
    uses = EngineUse()
    uses.set(Use.BENCH, True)
    assert uses.blocker(Use.BENCH) is Use.BENCH and uses.blocker(Use.POWER) is Use.BENCH
    assert uses.blocker(Use.CHAT) is Use.BENCH and uses.blocker(Use.LOAD) is Use.BENCH
    uses.set(Use.BENCH, False)
    uses.set(Use.API, True)
    assert uses.blocker(Use.CHAT) is Use.API and uses.blocker(Use.LOAD) is None


def test_listeners_hear_each_change_once_and_not_a_repeat() -> None:
    uses = EngineUse()
    heard: list[tuple[bool, ...]] = []
    uses.subscribe(lambda: heard.append(tuple(uses.active(use) for use in (Use.CHAT, Use.API))))
    uses.set(Use.CHAT, True)
    uses.set(Use.CHAT, True)  # already under way: nothing changes
    uses.set(Use.API, True)
    uses.set(Use.CHAT, False)
    uses.set(Use.API, False)
    uses.set(Use.API, False)
    assert heard == [(True, False), (True, True), (False, True), (False, False)]


def test_every_use_has_its_rule() -> None:
    assert set(WAITS_FOR) == set(Use)
