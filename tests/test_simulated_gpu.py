"""The simulated card: heat, power, clocks and the cap behave like a blower-cooled V100 (82 °C at 250 W,
70 °C capped at 200 W, a few percent fewer tokens/s when capped)."""

from __future__ import annotations

import math

import pytest

from gui.core.cards import CARDS
from gui.core.simulated_gpu import SimulatedGpu


def run(gpu: SimulatedGpu, seconds: float, load: float, dt: float = 1.0) -> None:
    for _ in range(round(seconds / dt)):
        gpu.step(dt, load)


def test_blower_v100_settles_in_the_low_80s_at_250_w_and_near_70_at_200_w() -> None:
    gpu = SimulatedGpu("v100-pcie-16gb")
    run(gpu, 600, 1.0)
    hot = gpu.sample()
    assert hot.power_w == 250.0 and 80.0 <= hot.temperature_c <= 84.0  # type: ignore[operator]
    assert gpu.set_power_limit(200) == 200.0
    run(gpu, 600, 1.0)
    capped = gpu.sample()
    assert capped.power_w == 200.0 and capped.temperature_c == pytest.approx(70.0, abs=1.0)
    assert capped.throttle_reasons == ("power cap",)


def test_temperature_is_first_order_with_the_time_constant() -> None:
    gpu = SimulatedGpu("v100-pcie-16gb", tau_s=30.0)
    start = gpu.temperature_c
    final = gpu.settled_temperature_c(250.0)
    run(gpu, 30, 1.0, dt=0.25)  # one time constant: 63.2% of the way
    assert (gpu.temperature_c - start) / (final - start) == pytest.approx(1 - math.exp(-1), abs=1e-9)
    run(gpu, 60, 1.0, dt=0.25)  # three time constants: 95%
    assert (gpu.temperature_c - start) / (final - start) == pytest.approx(1 - math.exp(-3), abs=1e-9)


def test_step_size_does_not_change_the_physics() -> None:
    coarse, fine = SimulatedGpu("p40"), SimulatedGpu("p40")
    coarse.step(90.0, 0.7)
    run(fine, 90, 0.7, dt=0.5)
    assert coarse.temperature_c == pytest.approx(fine.temperature_c, abs=1e-9)
    assert coarse.sample(0.0) == fine.sample(0.0)  # deterministic: same inputs, same reading


def test_power_tracks_load_from_idle_to_board_power_and_stops_at_the_cap() -> None:
    gpu = SimulatedGpu("v100-16gb")  # SXM2, 300 W board power
    readings = {}
    for load in (0.0, 0.25, 0.5, 1.0):
        gpu.step(1.0, load)
        readings[load] = gpu.sample().power_w
    assert 25 <= readings[0.0] <= 50  # type: ignore[operator]
    assert readings[0.0] < readings[0.25] < readings[0.5] < readings[1.0] == 300.0  # type: ignore[operator]
    gpu.set_power_limit(200)
    gpu.step(1.0, 1.0)
    assert gpu.sample().power_w == 200.0
    gpu.step(1.0, 0.25)  # under the cap the card draws what the work needs
    assert gpu.sample().power_w == readings[0.25] and "power cap" not in (gpu.sample().throttle_reasons or ())


def test_sm_clock_drops_as_the_cube_root_when_the_cap_binds() -> None:
    gpu = SimulatedGpu("v100-pcie-16gb")
    gpu.step(1.0, 1.0)
    free = gpu.sample().sm_clock_mhz
    gpu.set_power_limit(200)
    gpu.step(1.0, 1.0)
    capped = gpu.sample().sm_clock_mhz
    assert free == 1380
    assert capped == round(1380 * (200 / 250) ** (1 / 3))  # ~7% lower clock for 20% less power


def test_power_limit_is_clamped_to_the_cards_constraints() -> None:
    gpu = SimulatedGpu("v100-pcie-16gb")
    assert (gpu.min_limit_w, gpu.max_limit_w, gpu.default_limit_w) == (100.0, 250.0, 250.0)
    assert gpu.set_power_limit(50) == 100.0
    assert gpu.set_power_limit(400) == 250.0
    assert gpu.set_power_limit(199.5) == 199.5
    assert gpu.restore_default() == 250.0
    with pytest.raises(ValueError):
        gpu.set_power_limit(math.nan)
    t4 = SimulatedGpu("t4")
    assert t4.set_power_limit(200) == 70.0 and t4.sample().power_max_w == 70.0


def test_thermal_slowdown_above_the_threshold_with_hysteresis() -> None:
    gpu = SimulatedGpu("v100-pcie-16gb", ambient_c=35.0)  # a hot room: 250 W would settle at 95 °C
    run(gpu, 900, 1.0)
    sample = gpu.sample()
    assert "thermal slowdown" in (sample.throttle_reasons or ())
    assert sample.slowdown_c == 87 and 84.0 <= sample.temperature_c <= 87.5  # type: ignore[operator]
    assert sample.power_w < 250.0 and sample.sm_clock_mhz < 1380  # type: ignore[operator]
    run(gpu, 900, 0.0)  # idle: cools below the hysteresis band and the slowdown ends
    assert "thermal slowdown" not in (gpu.sample().throttle_reasons or ())


def test_idle_card_reports_idle_low_pstate_and_a_trained_down_link() -> None:
    gpu = SimulatedGpu("3090")
    gpu.step(5.0, 0.0)
    sample = gpu.sample()
    assert sample.throttle_reasons == ("idle",) and sample.pstate == 8 and sample.pcie_gen == 1
    assert sample.fan_pct == 30.0 and sample.gpu_util_pct == 0.0
    gpu.step(1.0, 0.8)
    busy = gpu.sample()
    assert busy.pstate == 0 and busy.pcie_gen == 4 and busy.gpu_util_pct == 80.0 and busy.mem_util_pct == 72.0


def test_the_sample_is_the_nvml_shape_labelled_simulated() -> None:
    gpu = SimulatedGpu("v100-16gb", index=1)
    gpu.set_memory_used(13_900, pid=4242, process_name="tightfit-engine")
    sample = gpu.sample(timestamp=123.0)
    assert sample.simulated and sample.index == 1 and sample.timestamp == 123.0
    assert sample.name == "Tesla V100-SXM2-16GB" and sample.memory_total_mib == CARDS["v100-16gb"].vram_mib
    assert (sample.memory_used_mib, sample.memory_free_mib) == (13_900, CARDS["v100-16gb"].vram_mib - 13_900)
    assert [(p.pid, p.name, p.used_mib) for p in sample.processes or ()] == [(4242, "tightfit-engine", 13_900)]
    assert sample.fan_pct is None and sample.errors["fan_pct"] == "not supported by this GPU"  # passive card
    assert (sample.ecc_corrected, sample.ecc_uncorrected) == (0, 0)
    gpu.set_memory_used(99_999)
    assert gpu.sample().memory_used_mib == CARDS["v100-16gb"].vram_mib and gpu.sample().processes == ()


def test_hours_above_80_c_wear_out_as_corrected_ecc_errors() -> None:
    gpu = SimulatedGpu("v100-16gb")
    gpu.step(3 * 3600.0, 1.0)  # 300 W: settles at 94 °C, held under 87 °C by the thermal slowdown
    assert gpu.sample().ecc_corrected == 5  # about 2.9 h above 80 °C at one error per 30 minutes


def test_lost_and_back() -> None:
    gpu = SimulatedGpu("t4")
    gpu.set_lost(True)
    lost = gpu.sample()
    assert lost.lost and lost.temperature_c is None and lost.errors == {"gpu": "the GPU fell off the bus"}
    gpu.set_lost(False)
    assert gpu.sample().temperature_c is not None


@pytest.mark.parametrize("key", ["v100-16gb", "p40", "t4", "3090", "a100-80gb"])
def test_every_card_idles_cool_and_runs_hot_within_its_limits(key: str) -> None:
    gpu = SimulatedGpu(key)
    run(gpu, 300, 0.0, dt=5.0)
    idle = gpu.sample()
    run(gpu, 900, 1.0, dt=5.0)
    busy = gpu.sample()
    assert idle.temperature_c < 45 < busy.temperature_c <= busy.shutdown_c  # type: ignore[operator]
    assert busy.power_w <= CARDS[key].board_power_w  # type: ignore[operator]


def test_bad_inputs() -> None:
    with pytest.raises(KeyError):
        SimulatedGpu("gtx-480")
    with pytest.raises(ValueError):
        SimulatedGpu("t4", tau_s=0)
    gpu = SimulatedGpu("t4")
    with pytest.raises(ValueError):
        gpu.step(-1.0, 0.5)
    with pytest.raises(ValueError):
        gpu.step(1.0, math.nan)
    gpu.step(1.0, 7.0)  # load is clamped to [0, 1]
    assert gpu.load == 1.0


def test_the_video_engines_stay_idle_while_the_engine_decodes() -> None:
    gpu = SimulatedGpu("v100-16gb")
    gpu.step(60.0, 1.0)
    sample = gpu.sample()
    assert (sample.value("encoder_util_pct"), sample.value("decoder_util_pct")) == (0.0, 0.0)
    assert "encoder_util_pct" not in sample.errors and sample.series()["decoder_util_pct"] == 0.0
