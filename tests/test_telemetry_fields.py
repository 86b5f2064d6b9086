"""The declared GPU readings (gui/core/telemetry_fields.py): checked against pynvml, the sample type, the palettes,
the charts and the simulated cards, and followed by the NVML reader and the fake."""

from __future__ import annotations

import inspect
import logging
import math
from dataclasses import fields

import pynvml
import pytest
from fake_nvml import FakeGpu, FakeNvml

from gui.core.gpu_sample import SERIES_FIELDS, GpuSample
from gui.core.simulated_gpu import PROFILES, SimulatedGpu
from gui.core.telemetry_fields import CHART_GROUPS, FIRST_READINGS, READINGS, YRange, reading
from gui.core.theme import DARK, LIGHT, NON_TEXT_AA, contrast_ratio
from gui.services.nvml import Nvml
from gui.ui.charts import CHARTS

_NOT_READINGS = {"index", "timestamp", "name", "throttle_reasons", "processes", "lost", "simulated", "errors"}
_NOT_READINGS |= {"host", "host_gpu", "readings"}


def test_names_are_unique_and_the_series_follow_the_declarations() -> None:
    names = [r.name for r in READINGS]
    assert len(names) == len(set(names)) and list(SERIES_FIELDS) == names
    fan = reading("fan_pct").readout
    assert fan is not None and fan.key == "fan"
    with pytest.raises(KeyError):
        reading("no_such_reading")


def test_every_numeric_attribute_of_a_sample_is_a_reading_of_the_first_layout() -> None:
    attributes = [f.name for f in fields(GpuSample) if f.name not in _NOT_READINGS]
    assert attributes == [r.name for r in FIRST_READINGS]


def test_every_nvml_call_is_one_pynvml_has_with_those_arguments() -> None:
    for declared in READINGS:
        call = declared.nvml
        constants = [getattr(pynvml, name) for name in call.args]  # AttributeError: no such constant
        if call.unknown is not None:
            assert isinstance(getattr(pynvml, call.unknown), int)
        for function in call.functions:
            inspect.signature(getattr(pynvml, function)).bind(object(), *constants)  # TypeError: not its arguments


def test_every_curve_is_in_a_chart_of_its_unit_with_a_colour_that_reads_in_both_palettes() -> None:
    groups = {group.key: group for group in CHART_GROUPS}
    for declared in READINGS:
        if declared.curve is None:
            continue
        group = groups[declared.curve.chart]
        if declared.curve.scale == 1.0:
            assert declared.unit == group.unit, declared.name
    curves = [curve for spec in CHARTS for curve in spec.curves]
    failures = [
        f"{curve.field} in {palette.name}: {curve.colour_in(palette)}"
        for curve in curves
        for palette in (LIGHT, DARK)
        if contrast_ratio(curve.colour_in(palette), palette.chart_background) < NON_TEXT_AA
    ]
    assert not failures, "\n".join(failures)
    for spec in CHARTS:  # the lines of one chart are told apart by colour
        for palette in (LIGHT, DARK):
            colours = [curve.colour_in(palette) for curve in spec.curves if not curve.level]
            assert len(colours) == len(set(colours)), spec.key


def test_charts_keep_their_places_and_gpu_lines_are_the_declared_curves() -> None:
    places = {spec.key: (spec.row, spec.column) for spec in CHARTS}
    assert places == {
        "temperature": (0, 0), "power": (0, 1), "utilisation": (1, 0), "vram": (1, 1), "clocks": (2, 0),
        "cpu": (2, 1), "tokens": (3, 0), "memory": (3, 1),
    }  # fmt: skip
    clocks = next(spec for spec in CHARTS if spec.key == "clocks")
    assert [c.field for c in clocks.curves] == ["sm_clock_mhz", "mem_clock_mhz"] and clocks.shared == ("sm_clock_mhz",)


def test_a_y_range_is_fixed_or_scaled_from_what_is_drawn() -> None:
    assert YRange(top=103.0).high(250.0) == 103.0
    assert YRange(least=100.0, headroom=1.08).high(-math.inf) == 100.0 * 1.08
    assert YRange(least=100.0, headroom=1.08).high(250.0) == 250.0 * 1.08
    assert YRange(low=20.0, least=90.0, margin=5.0).high(87.0) == 95.0


@pytest.mark.parametrize("card", sorted(PROFILES))
def test_a_simulated_card_models_every_reading_or_says_it_has_none(card: str) -> None:
    gpu = SimulatedGpu(card)
    gpu.step(60.0, 1.0)
    sample = gpu.sample()
    for name in SERIES_FIELDS:
        assert sample.value(name) is not None or sample.errors[name] == "not supported by this GPU", name
    assert set(sample.errors) <= {"fan_pct", "ecc_corrected", "ecc_uncorrected"}


def test_the_fake_answers_a_declared_function_by_its_arguments_and_pynvmls_signature() -> None:
    gpu = FakeGpu(readings={"sm_clock_mhz": 1380, "slowdown_c": 87})
    fake = FakeNvml([gpu])
    assert fake.nvmlDeviceGetClockInfo(gpu, pynvml.NVML_CLOCK_SM) == 1380
    assert fake.nvmlDeviceGetTemperatureThreshold(gpu, threshold=pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN) == 87
    with pytest.raises(pynvml.NVMLError) as refused:  # a clock no reading is declared for
        fake.nvmlDeviceGetClockInfo(gpu, pynvml.NVML_CLOCK_GRAPHICS)
    assert refused.value.value == pynvml.NVML_ERROR_NOT_SUPPORTED
    with pytest.raises(TypeError):  # pynvml's own function takes a clock type
        fake.nvmlDeviceGetClockInfo(gpu)
    gpu.lost = True
    with pytest.raises(pynvml.NVMLError) as lost:
        fake.nvmlDeviceGetClockInfo(gpu, pynvml.NVML_CLOCK_SM)
    assert lost.value.value == pynvml.NVML_ERROR_GPU_IS_LOST


def test_readings_of_one_answer_are_read_with_one_call_and_share_its_failure(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gui.services.nvml")
    gpu = FakeGpu(failures={"nvmlDeviceGetMemoryInfo": pynvml.NVML_ERROR_NO_PERMISSION})
    fake = FakeNvml([gpu])
    sample = Nvml(fake).sample(0)
    memory = ("memory_used_mib", "memory_free_mib", "memory_total_mib")
    assert all(sample.value(name) is None for name in memory)
    assert {sample.errors[name] for name in memory} == {"no permission to read the GPU"}
    assert fake.calls.count("nvmlDeviceGetMemoryInfo") == 1
    assert [m for m in caplog.messages if "memory_" in m] == [
        "GPU 0: memory_used_mib has no value: no permission to read the GPU"
    ]


def test_a_pstate_nvml_does_not_know_is_no_value() -> None:
    gpu = FakeGpu(readings={"pstate": pynvml.NVML_PSTATE_UNKNOWN, "pcie_gen": 3})
    sample = Nvml(FakeNvml([gpu])).sample(0)
    assert sample.pstate is None and sample.pcie_gen == 3 and isinstance(sample.pcie_gen, int)
