"""Several simulated cards (`tightfit --simulate p40 --simulate v100-16gb`): the window plans for all of them,
watches each in the Monitor (a row, a series and a cap of its own, plus Cap all) and says they are simulated."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_engine import FakeEngine
from window_kit import open_window

from gui.cli import build_parser
from gui.commands.flags import simulated_cards
from gui.core.cards import find_card
from gui.services.telemetry import SimulatedSource


def test_the_flag_takes_several_cards_in_order_and_refuses_an_unknown_one() -> None:
    parser = build_parser()
    args = parser.parse_args(["--simulate", "p40", "--simulate", "v100-16gb"])
    assert [c.key for c in simulated_cards(args)] == ["p40", "v100-16gb"]
    assert simulated_cards(parser.parse_args([])) == ()
    with pytest.raises(ValueError, match="gtx-9999"):
        simulated_cards(parser.parse_args(["--simulate", "p40", "--simulate", "gtx-9999"]))
    with pytest.raises(ValueError, match="at most 16"):
        simulated_cards(parser.parse_args([a for _ in range(17) for a in ("--simulate", "p40")]))
    # A sub-command's --simulate stays one card.
    assert parser.parse_args(["doctor", "--simulate", "p40"]).simulate == "p40"


def test_the_window_plans_and_watches_every_simulated_card(qtbot, demo_model: Path) -> None:
    cards = (find_card("p40"), find_card("v100-16gb"))
    win = open_window(qtbot, demo_model.parent, demo_model, simulate=cards, engine=FakeEngine())
    assert win.windowTitle().endswith("SIMULATED Tesla P40 24GB + Tesla V100 SXM2 16GB")
    target = win.plan_panel.current_target()
    assert target.simulated and [d.total_mib for d in target.devices] == [c.vram_mib for c in cards]
    assert win.features.load.plan is not None and len(win.features.load.plan.devices) == 2
    source = win.monitor.source
    assert isinstance(source, SimulatedSource) and [g.key for g in source.gpus] == ["p40", "v100-16gb"]
    qtbot.waitUntil(lambda: len(win.monitor.samples) == 2, timeout=10_000)
    assert all(s.simulated for s in win.monitor.samples.values())
    assert sorted(win.monitor.gpu_rows) == [0, 1] and win.monitor.charts.shared
    assert not win.monitor.power_panel.cap_all_button.isHidden()
    win.close()
