"""The one planning context (gui/core/planning_context.py): what it plans is the planner's answer for exactly
the model, settings, devices, margin, RAM bandwidth and link it holds, and its variants change one thing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from gui.core.gguf_reader import read_model
from gui.core.params import LoadSettings, NetworkLink
from gui.core.planner import Device, auto_fit, plan
from gui.core.planning_context import PlanningContext
from tests.model_shapes import SHAPES, write_shape

V100 = Device("Tesla V100-SXM2-16GB", 16384, 16000, 900, 80)
WORKER = Device("RPC0", 24576, 24000, None, remote="192.168.1.20:50052")


@pytest.fixture(scope="module")
def header(tmp_path_factory: pytest.TempPathFactory):
    path = write_shape(tmp_path_factory.mktemp("m") / "llama-13gb.gguf", SHAPES["llama-13gb"])
    return read_model(path)


def test_it_plans_with_everything_it_holds(header) -> None:
    link = NetworkLink("custom", 100.0, 2.0)
    settings = LoadSettings(n_ctx=4096, n_gpu_layers=30)
    context = PlanningContext(
        settings=settings, devices=(WORKER, V100), margin_mib=512, ram_bandwidth_gbs=40.0, link=link, header=header
    )
    mine = context.plan()
    theirs = plan(header, settings, (WORKER, V100), margin_mib=512, ram_bandwidth_gbs=40.0, link=link)
    assert mine == theirs
    assert mine.link_hops > 0 and mine.link_ms_per_token > 0
    # The link is part of the answer: a faster one, a shorter time per token.
    assert replace(context, link=NetworkLink("10gbe")).plan().link_ms_per_token < mine.link_ms_per_token


def test_auto_fit_uses_its_devices_and_margin(header) -> None:
    context = PlanningContext(settings=LoadSettings(n_ctx=4096), devices=(V100,), margin_mib=1024, header=header)
    assert context.auto_fit() == auto_fit(header, LoadSettings(n_ctx=4096), (V100,), margin_mib=1024)


def test_each_variant_changes_one_thing(header) -> None:
    context = PlanningContext(settings=LoadSettings(n_ctx=2048), devices=(V100,), margin_mib=700, header=header)
    other = LoadSettings(n_ctx=8192)
    assert context.with_settings(other).settings == other and context.with_settings(other).devices == (V100,)
    remote = context.with_devices((WORKER,), here=False)
    assert (remote.devices, remote.here, remote.margin_mib) == ((WORKER,), False, 700)
    assert context.for_model(None, None).plannable is False
    cpu = remote.cpu_only()
    assert (cpu.devices, cpu.margin_mib, cpu.here, cpu.settings) == ((), 0.0, True, context.settings)
    assert cpu.plan().layers_on_gpu == 0


def test_without_a_model_it_says_so(tmp_path: Path) -> None:
    context = PlanningContext(settings=LoadSettings())
    assert not context.plannable
    with pytest.raises(ValueError, match="no model"):
        context.plan()
    with pytest.raises(ValueError, match="no model"):
        context.auto_fit()
