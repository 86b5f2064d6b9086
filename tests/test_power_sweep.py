"""The power-cap sweep: cap lists and their errors, rows and the recommendation from constructed and recorded
samples, the runner on a simulated card (a fake clock drives both its physics and a fake decoder, so no test
sleeps or times anything), the real-card path through a fake helper, the watchdog restoring the limit after
its sweep is killed with SIGKILL, the engine decoder against scripted events, and the CLI.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fake_nvml import FakeNvml
from hypothesis import given
from hypothesis import strategies as st

from gui.core import gpu_sample as reasons
from gui.core import protocol as p
from gui.core.gpu_sample import GpuSample
from gui.core.power_sweep import (
    CapLimits,
    SweepRow,
    Window,
    aggregate,
    check_loss,
    default_caps,
    parse_caps,
    recommend,
)
from gui.core.simulated_gpu import DECODE_CLOCK_EXPONENT, SimulatedGpu
from gui.services import power_limit
from gui.services.engine_client import EngineUnavailable, WorkerExited
from gui.services.nvml import Nvml
from gui.services.power_limit import PowerLimiter, RunOutput
from gui.services.power_restore import Watchdog, WatchdogError
from gui.services.power_sweep import (
    EngineDecoder,
    EngineFeed,
    PowerSweep,
    SweepError,
    SweepProgress,
    Workload,
    default_warmup_s,
)
from gui.services.telemetry import SimulatedSource

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent
CHILD = TESTS / "power_sweep_child.py"

V100_SXM2 = CapLimits(min_w=150, max_w=300, default_w=300)
V100_PCIE = CapLimits(min_w=100, max_w=250, default_w=250)


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 60.0) -> None:
    """Wait for something another process does (not a timing assertion: the deadline only ends a hang)."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what} after {timeout_s:g} s")
        time.sleep(0.05)


# --- cap lists ----------------------------------------------------------------------------------------------


def test_default_caps_step_from_the_minimum_to_the_default_in_round_watts() -> None:
    assert default_caps(V100_SXM2) == (150, 190, 225, 265, 300)
    assert default_caps(V100_PCIE) == (100, 140, 175, 215, 250)
    assert default_caps(CapLimits(125, 250, 250)) == (125, 155, 190, 220, 250)  # P40
    assert default_caps(V100_SXM2, steps=4) == (150, 200, 250, 300)
    assert default_caps(V100_SXM2, steps=6) == (150, 180, 210, 240, 270, 300)


def test_default_caps_on_narrow_ranges_use_whole_watts() -> None:
    assert default_caps(CapLimits(60, 70, 70)) == (60, 63, 65, 68, 70)  # T4: too narrow for 5 W steps
    assert default_caps(CapLimits(100, 110, 102)) == (100, 101, 102)  # fewer watts than steps
    assert default_caps(CapLimits(200, 250, 200)) == (200,)  # default at the minimum: nothing to sweep below it


def test_default_caps_take_four_to_six_steps() -> None:
    with pytest.raises(ValueError, match="4 to 6 steps"):
        default_caps(V100_SXM2, steps=3)


@given(
    low=st.integers(1, 600),
    span=st.integers(0, 600),
    above=st.integers(0, 100),
    steps=st.integers(4, 6),
)
def test_default_caps_are_distinct_whole_watts_in_range(low: int, span: int, above: int, steps: int) -> None:
    limits = CapLimits(low, low + span + above, low + span)
    caps = default_caps(limits, steps)
    assert list(caps) == sorted(set(caps))
    assert caps[0] == limits.min_w and caps[-1] == limits.default_w
    assert all(isinstance(c, int) and limits.min_w <= c <= limits.max_w for c in caps)
    assert len(caps) == min(steps, span + 1)


def test_limits_come_from_a_reading_in_whole_watts_inside_the_constraints() -> None:
    sample = GpuSample(index=0, timestamp=0.0, power_min_w=99.5, power_max_w=250.4, power_default_w=250.0)
    assert CapLimits.from_sample(sample) == CapLimits(100, 250, 250)
    no_range = GpuSample(index=0, timestamp=0.0, errors={"power_min_w": "not supported by this GPU"})
    with pytest.raises(ValueError, match=r"cannot be changed \(not supported by this GPU\)"):
        CapLimits.from_sample(no_range)
    with pytest.raises(ValueError, match="fell off the bus"):
        CapLimits.from_sample(GpuSample(index=0, timestamp=0.0, lost=True))


@pytest.mark.parametrize(
    ("text", "caps"),
    [
        ("150,175,200", (150, 175, 200)),
        ("150-250/25", (150, 175, 200, 225, 250)),
        ("250-150/50", (150, 200, 250)),  # a range either way round
        ("200, 150 ,200", (150, 200)),  # spaces and repeats
        ("150-200/30,250", (150, 180, 250)),  # the end is included only where a step lands on it
        ("200W, 250 w", (200, 250)),
        ("300", (300,)),  # up to the card's maximum, even above its default
    ],
)
def test_cap_lists_in_both_spellings(text: str, caps: tuple[int, ...]) -> None:
    assert parse_caps(text, V100_SXM2) == caps


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "no caps given"),
        ("   ", "no caps given"),
        ("150,,200", "an empty item"),
        ("abc", "'abc' is not a number of watts"),
        ("187.5", "187.5: caps are whole watts"),
        ("2e2", "2e2: caps are whole watts"),
        ("-100", "-100: a power cap is a positive number of watts"),
        ("100", "100 W is below this card's minimum power limit (150-300 W, default 300 W)"),
        ("200,400", "400 W is above this card's maximum power limit (150-300 W, default 300 W)"),
        ("150-250", "needs a step in watts"),
        ("150-250/0", "the step of '150-250/0' must be at least 1 W"),
        ("150-/25", "is not a range of watts"),
        ("150-200-250/25", "is not a range of watts"),
        ("a-b/c", "'a' is not a number of watts"),
        ("150-300/1", "'150-300/1' is 151 caps, too many for one sweep (at most 12)"),
        ("150,160,170,180,190,200,210,220,230,240,250,260,270", "13 caps is too many"),
    ],
)
def test_impossible_cap_lists_are_one_line_errors(text: str, error: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_caps(text, V100_SXM2)
    message = str(raised.value)
    assert error in message
    assert "\n" not in message


@pytest.mark.parametrize(("loss", "error"), [(-1.0, "from 0 to under 100%"), (100.0, "from 0 to under 100%"),
                                             (float("nan"), "must be a percentage")])  # fmt: skip
def test_the_allowed_loss_is_a_percentage_under_100(loss: float, error: str) -> None:
    assert check_loss(0) == 0.0 and check_loss(5) == 5.0
    with pytest.raises(ValueError, match=error):
        check_loss(loss)


# --- rows and the recommendation -----------------------------------------------------------------------------


def sample(t: float, power: float | None, *, temp: float | None = 70.0, clock: float | None = 1300.0,
           why: tuple[str, ...] | None = (), limit: float | None = 200.0, lost: bool = False) -> GpuSample:  # fmt: skip
    return GpuSample(
        index=0, timestamp=t, power_w=power, temperature_c=temp, sm_clock_mhz=clock, throttle_reasons=why,
        power_limit_w=limit, lost=lost,
    )  # fmt: skip


def test_a_row_from_constructed_samples() -> None:
    samples = (
        sample(0.0, 200.0, temp=80.0, clock=1300.0, why=(reasons.POWER_CAP,)),
        sample(1.0, 210.0, temp=81.0, clock=1250.0, why=(reasons.POWER_CAP, reasons.THERMAL_SLOWDOWN)),
        sample(2.0, None, temp=None, clock=None, why=None),  # a tick where the driver gave nothing
        sample(3.0, 999.0, lost=True),  # off the bus: not a reading of the card
        sample(4.0, 190.0, temp=82.5, clock=1350.0, why=(reasons.POWER_CAP,)),
        sample(5.0, 200.0, temp=82.0, clock=1300.0, why=()),
    )
    row = aggregate(200, Window(tokens=600, seconds=10.0, samples=samples))
    assert row.tok_s == row.engine_tok_s == 60.0
    assert row.mean_power_w == 200.0
    assert row.tokens_per_joule == pytest.approx(0.3)
    assert row.end_temperature_c == 82.0
    assert row.mean_sm_clock_mhz == 1300.0
    assert row.throttle == {reasons.POWER_CAP: 0.75, reasons.THERMAL_SLOWDOWN: 0.25}
    assert row.samples == 5 and row.enforced_w == 200.0 and row.reasons_known


def test_a_later_simulated_row_scales_the_first_caps_engine_rate_not_its_own() -> None:
    """The host's own ups and downs (here the engine at 26 tok/s instead of 20) are not what the cap cost."""
    window = Window(52, 2.0, (sample(0, 150.0), sample(2, 150.0)), speed_factor=0.85, reference_tok_s=20.0)
    row = aggregate(150, window, simulated=True)
    assert (row.engine_tok_s, row.tok_s) == (26.0, pytest.approx(17.0))
    assert row.tokens_per_joule == pytest.approx(17.0 / 150.0)


def test_a_simulated_row_scales_the_engine_rate_by_the_cards_speed_factor() -> None:
    row = aggregate(150, Window(40, 2.0, (sample(0, 150.0), sample(2, 150.0)), speed_factor=0.85), simulated=True)
    assert (row.engine_tok_s, row.tok_s, row.simulated, row.speed_factor) == (20.0, pytest.approx(17.0), True, 0.85)
    assert row.tokens_per_joule == pytest.approx(17.0 / 150.0)


def test_a_row_without_readings_says_so_rather_than_inventing_them() -> None:
    row = aggregate(200, Window(10, 1.0, (sample(0, None, temp=None, clock=None, why=None, limit=None),)),
                    enforced_w=199.0)  # fmt: skip
    assert (row.mean_power_w, row.tokens_per_joule, row.end_temperature_c, row.mean_sm_clock_mhz) == (None,) * 4
    assert row.throttle == {} and not row.reasons_known
    assert row.enforced_w == 199.0  # the helper's read-back where the samples have none


def recorded_v100_samples() -> list[GpuSample]:
    """The recorded V100 session, read through the NVML service tick by tick."""
    fake = FakeNvml.replay("nvml_v100_session.json")
    nvml = Nvml(module=fake)
    samples = [nvml.sample(0)]
    while fake.step():
        samples.append(nvml.sample(0))
    return samples


def test_rows_and_recommendation_from_the_recorded_v100() -> None:
    """The seed's story: a V100 at 250 W passing 80 °C, then capped to 200 W settling near 70 °C, ~5% slower."""
    samples = recorded_v100_samples()
    at_250 = tuple(samples[3:6])  # under load at the default limit, clocks held by the power cap
    at_200 = tuple(samples[6:])  # capped, one tick off the bus
    full = aggregate(250, Window(tokens=1920, seconds=30.0, samples=at_250))
    capped = aggregate(200, Window(tokens=1830, seconds=30.0, samples=at_200))
    assert full.mean_power_w == pytest.approx((249.65 + 250.11 + 249.87) / 3)
    assert capped.mean_power_w == pytest.approx((199.62 + 199.91 + 199.48 + 199.75) / 4)
    assert (full.end_temperature_c, capped.end_temperature_c) == (83.0, 70.0)
    assert capped.samples == 4  # the lost tick is not a reading
    assert full.throttle == {reasons.POWER_CAP: 1.0}
    assert (full.enforced_w, capped.enforced_w) == (250.0, 200.0)
    assert capped.tokens_per_joule > full.tokens_per_joule
    chosen = recommend([full, capped])
    assert chosen is not None and chosen.cap_w == 200
    assert chosen.loss_pct == pytest.approx(100 * (1 - 61 / 64))
    assert chosen.message.startswith("200 W: 61.0 tok/s, 4.7% below the best (64.0 tok/s at 250 W), 20% less power")


def row(cap: int, tok_s: float, power: float | None = None) -> SweepRow:
    return SweepRow(cap, float(cap), tok_s, tok_s, 100, 1.0, power if power is not None else float(cap), None,
                    None, None)  # fmt: skip


def test_the_recommendation_is_the_lowest_cap_within_the_loss() -> None:
    rows = [row(300, 64.0), row(250, 63.0), row(200, 61.0), row(150, 50.0)]
    assert recommend(rows).cap_w == 200  # type: ignore[union-attr]  # 4.7% below the best
    assert recommend(rows, 2.0).cap_w == 250  # type: ignore[union-attr]
    assert recommend(rows, 1.0).cap_w == 300  # type: ignore[union-attr]
    assert recommend(rows, 25.0).cap_w == 150  # type: ignore[union-attr]
    fastest = recommend(rows, 0.0)
    assert fastest is not None and fastest.cap_w == 300 and "the fastest cap" in fastest.message


def test_the_recommendation_follows_the_measured_best_not_the_highest_cap() -> None:
    noisy = [row(300, 60.0), row(250, 62.0), row(200, 59.5), row(150, 40.0)]  # 250 W measured fastest
    chosen = recommend(noisy)
    assert chosen is not None and (chosen.best_cap_w, chosen.cap_w) == (250, 200)
    tied = [row(300, 60.0), row(250, 60.0)]
    assert recommend(tied, 0.0).cap_w == 250  # type: ignore[union-attr]


def test_no_recommendation_without_a_measured_row() -> None:
    assert recommend([]) is None
    assert recommend([row(200, 0.0)]) is None


# --- the runner on a simulated card, with a fake clock --------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


class FakeDecoder:
    """Tokens at a fixed rate of the fake clock. `on_token(total)` may stop the sweep or raise, to interrupt it."""

    def __init__(self, clock: FakeClock, rate: float = 50.0, on_token: Callable[[int], None] | None = None) -> None:
        self.clock = clock
        self.rate = rate
        self.on_token = on_token
        self.total = 0
        self.runs = 0

    def run(self, keep_going: Callable[[int], bool]) -> None:
        self.runs += 1
        tokens = 0
        while True:
            self.clock.advance(1.0 / self.rate)
            tokens += 1
            self.total += 1
            if self.on_token is not None:
                self.on_token(self.total)
            if not keep_going(tokens):
                return


def no_watchdog(gpu: int, watts: int) -> Watchdog:
    raise AssertionError("a simulated card needs no watchdog")


class SimulatedRig:
    """A simulated V100 SXM2 (300 W) with a 1 s thermal time constant, at a user's 250 W cap before the sweep."""

    def __init__(self, on_token: Callable[[int], None] | None = None, workload: Workload | None = None) -> None:
        self.clock = FakeClock()
        self.gpu = SimulatedGpu("v100-16gb", tau_s=1.0)
        self.gpu.set_power_limit(250)
        self.source = SimulatedSource([self.gpu], clock=self.clock)
        self.decoder = FakeDecoder(self.clock, on_token=on_token)
        self.sweep = PowerSweep(
            source=self.source,
            limiter=PowerLimiter(simulators={0: self.gpu}),
            decoder=self.decoder,
            workload=workload,
            sample_interval_s=0.1,
            clock=self.clock,
            watchdog=no_watchdog,
        )


def test_the_default_warm_up_is_three_time_constants_of_a_simulated_card() -> None:
    rig = SimulatedRig()
    assert rig.sweep.workload == Workload(warmup_s=3.0)
    assert default_warmup_s(SimulatedSource([SimulatedGpu("v100-16gb")])) == 90.0


def test_a_simulated_sweep_measures_every_cap_and_restores_the_limit() -> None:
    rig = SimulatedRig(workload=Workload(warmup_s=3.0, measure_s=2.0))
    seen: list[SweepRow] = []
    progress: list[SweepProgress] = []
    result = rig.sweep.run(on_row=seen.append, on_progress=progress.append)

    assert result.caps == (300, 265, 225, 190, 150)  # highest first
    assert [r.cap_w for r in result.rows] == [300, 265, 225, 190, 150] and list(result.rows) == seen
    assert not result.partial and result.reason == ""
    assert (result.original_w, result.restored, result.simulated) == (250, True, True)
    assert rig.gpu.power_limit_w == 250  # the user's cap, not the default
    assert "back at 250 W" in result.restore_message
    assert rig.source.sample(0).gpu_util_pct == 0.0  # idle again: the load followed the decoding

    for r in result.rows:
        assert r.engine_tok_s == pytest.approx(50.0)  # the decoder's rate, exactly: nothing here is timed
        assert r.seconds == pytest.approx(2.0, abs=0.02) and r.samples >= 20
        assert r.enforced_w == r.cap_w and r.simulated
    for r in result.rows[1:]:  # below the card's 300 W demand, the cap holds the draw and the clocks
        assert r.mean_power_w == pytest.approx(r.cap_w)
        assert r.throttle[reasons.POWER_CAP] == 1.0
    top = result.rows[0]
    assert top.throttle[reasons.THERMAL_SLOWDOWN] > 0  # uncapped, the blower V100 reaches its slowdown line
    assert top.end_temperature_c is not None and top.end_temperature_c > 80
    factors = [r.speed_factor for r in result.rows[1:]]  # the card's own physics: (cap / 300 W demand)^(0.69/3)
    assert factors == pytest.approx([(cap / 300) ** (DECODE_CLOCK_EXPONENT / 3) for cap in (265, 225, 190, 150)])
    speeds = [r.tok_s for r in result.rows[1:]]
    assert speeds == sorted(speeds, reverse=True)
    clocks = [r.mean_sm_clock_mhz for r in result.rows[1:]]
    assert clocks == sorted(clocks, reverse=True)  # type: ignore[type-var]
    efficiency = [r.tokens_per_joule for r in result.rows[1:]]
    assert efficiency == sorted(efficiency)  # type: ignore[type-var]

    chosen = result.recommendation
    assert chosen is not None and chosen == recommend(result.rows)
    best = max(r.tok_s for r in result.rows)
    assert chosen.tok_s >= 0.95 * best
    assert all(r.tok_s < 0.95 * best for r in result.rows if r.cap_w < chosen.cap_w)

    phases = list(dict.fromkeys((e.cap_w, e.phase) for e in progress))
    assert phases[:3] == [(300, "capping"), (300, "warm-up"), (300, "measuring")] and len(phases) == 15
    at_300 = [e for e in progress if e.cap_w == 300 and e.phase != "capping"]
    assert len(at_300) >= 5  # about once a (fake) second for a progress bar, over its 3 s + 2 s
    elapsed = [e.elapsed_s for e in at_300]
    assert elapsed == sorted(elapsed) and elapsed[-1] < 5.0
    assert Workload(3.0, 2.0).estimate_s(5) == 25.0 and Workload(3.0, tokens=100).estimate_s(5, 50.0) == 25.0


def test_a_simulated_sweep_gives_the_same_rows_every_time() -> None:
    first = SimulatedRig(workload=Workload(warmup_s=3.0, measure_s=1.0)).sweep.run([250, 200])
    second = SimulatedRig(workload=Workload(warmup_s=3.0, measure_s=1.0)).sweep.run([250, 200])
    assert first.rows == second.rows


def test_a_token_count_fixes_the_measured_work() -> None:
    rig = SimulatedRig(workload=Workload(warmup_s=1.0, tokens=75))
    result = rig.sweep.run([250, 200])
    assert [r.tokens for r in result.rows] == [75, 75]
    assert all(r.seconds == pytest.approx(1.5) for r in result.rows)


def test_stop_between_caps_keeps_the_rows_marks_partial_and_restores() -> None:
    rig = SimulatedRig(workload=Workload(warmup_s=1.0, measure_s=1.0))
    result = rig.sweep.run(on_row=lambda _row: rig.sweep.stop())
    assert [r.cap_w for r in result.rows] == [300]
    assert (result.partial, result.reason, result.restored) == (True, "stopped", True)
    assert rig.gpu.power_limit_w == 250
    assert result.recommendation is not None and result.recommendation.cap_w == 300


def test_stop_before_the_first_cap_changes_nothing() -> None:
    events: list[tuple[Any, ...]] = []
    card = HelperCard(events)
    sweep = helper_sweep(card, events)
    sweep.stop()
    result = sweep.run([200, 250])
    assert events == [("watchdog", 0, 230), ("release",)]  # no cap, so no restore through the helper either
    assert (result.rows, result.partial, result.reason, result.restored) == ((), True, "stopped", True)
    assert result.restore_message == "GPU 0 was not changed; it is still at 230 W"


def test_stop_mid_cap_drops_that_cap_and_restores() -> None:
    rig = SimulatedRig(workload=Workload(warmup_s=1.0, measure_s=1.0))
    per_cap = 100  # 2 s of tokens at 50 tok/s
    rig.decoder.on_token = lambda total: rig.sweep.stop() if total == per_cap + 30 else None
    result = rig.sweep.run([250, 200, 150])
    assert [r.cap_w for r in result.rows] == [250]
    assert result.partial and result.reason == "stopped"
    assert rig.gpu.power_limit_w == 250 and rig.decoder.runs == 2


def test_an_exception_mid_sweep_keeps_the_rows_and_restores() -> None:
    def fail(total: int) -> None:
        if total == 250:
            raise RuntimeError("the decoder broke")

    rig = SimulatedRig(on_token=fail, workload=Workload(warmup_s=1.0, measure_s=1.0))
    result = rig.sweep.run([250, 200, 150])
    assert [r.cap_w for r in result.rows] == [250, 200]
    assert result.partial and result.reason == "the sweep failed: the decoder broke"
    assert (result.restored, rig.gpu.power_limit_w) == (True, 250)


def test_the_engine_dying_mid_sweep_keeps_the_rows_and_restores() -> None:
    def die(total: int) -> None:
        if total == 150:
            raise EngineUnavailable("The engine process was killed (signal 9).")

    rig = SimulatedRig(on_token=die, workload=Workload(warmup_s=1.0, measure_s=1.0))
    result = rig.sweep.run([250, 200])
    assert [r.cap_w for r in result.rows] == [250]
    assert result.partial and result.reason == "the engine stopped: The engine process was killed (signal 9)."
    assert rig.gpu.power_limit_w == 250


def test_an_interrupt_restores_the_limit_before_it_goes_on() -> None:
    def interrupt(total: int) -> None:
        if total == 10:
            raise KeyboardInterrupt

    rig = SimulatedRig(on_token=interrupt)
    with pytest.raises(KeyboardInterrupt):
        rig.sweep.run([200])
    assert rig.gpu.power_limit_w == 250


def test_caps_the_card_cannot_take_are_refused_before_anything_changes() -> None:
    rig = SimulatedRig()
    with pytest.raises(ValueError, match="400 W is above this card's maximum"):
        rig.sweep.run([250, 400])
    with pytest.raises(ValueError, match="allowed loss"):
        rig.sweep.run([250], loss_pct=100.0)
    assert rig.decoder.runs == 0 and rig.gpu.power_limit_w == 250


# --- the real-card path: the helper (faked at the process edge) and the watchdog -------------------------------


class HelperCard:
    """A real card as the sweep sees it: NVML readings, and a helper run through `sudo -n` that sets the limit."""

    def __init__(self, events: list[tuple[Any, ...]], original_w: float | None = 230.0, refuse: int | None = None):
        self.events = events
        self.limit_w = original_w
        self.refuse = refuse
        self.helper = Path(sys.executable)  # any executable: the runner below stands in for running it

    def device_count(self) -> tuple[int, str]:
        return 1, ""

    def sample(self, index: int) -> GpuSample:
        return GpuSample(
            index=index, timestamp=0.0, power_w=min(self.limit_w or 250.0, 240.0), power_limit_w=self.limit_w,
            power_min_w=100.0, power_max_w=250.0, power_default_w=250.0, throttle_reasons=(reasons.POWER_CAP,),
        )  # fmt: skip

    def shutdown(self) -> None:
        pass

    def run(self, argv: Sequence[str], timeout_s: float) -> RunOutput:
        assert list(argv[:3]) == ["/usr/bin/sudo", "-n", "--"] and argv[3] == str(self.helper)
        gpu, watts = int(argv[4]), int(argv[5])
        self.events.append(("helper", gpu, watts))
        if watts == self.refuse:
            return RunOutput(4, '{"status": "out of range"}\n', "tightfit-power-helper: refused\n")
        self.limit_w = float(watts)
        return RunOutput(0, json.dumps({"status": "applied", "enforced_w": watts}) + "\n", "")

    def limiter(self) -> PowerLimiter:
        return PowerLimiter(helper=self.helper, method="sudo", runner=self.run, which=lambda name: f"/usr/bin/{name}")


class FakeWatchdog(Watchdog):
    def __init__(self, events: list[tuple[Any, ...]]) -> None:  # no process: records what the sweep asks of it
        self.events = events

    def release(self, timeout_s: float = 5.0) -> None:
        self.events.append(("release",))


def helper_sweep(card: HelperCard, events: list[tuple[Any, ...]]) -> PowerSweep:
    def watchdog(gpu: int, watts: int) -> Watchdog:
        events.append(("watchdog", gpu, watts))
        return FakeWatchdog(events)

    clock = FakeClock()
    return PowerSweep(
        source=card, limiter=card.limiter(), decoder=FakeDecoder(clock), workload=Workload(1.0, 1.0),
        clock=clock, watchdog=watchdog,
    )  # fmt: skip


def test_a_real_card_is_watched_capped_through_the_helper_and_restored() -> None:
    events: list[tuple[Any, ...]] = []
    card = HelperCard(events)
    result = helper_sweep(card, events).run([200, 250])
    assert events == [("watchdog", 0, 230), ("helper", 0, 250), ("helper", 0, 200), ("helper", 0, 230), ("release",)]
    assert [r.enforced_w for r in result.rows] == [250.0, 200.0]
    assert not result.simulated and not result.partial and result.restored
    assert result.restore_message == "GPU 0 is back at 230 W, its limit before the sweep (via sudo -n)"


def test_a_cap_the_helper_refuses_ends_the_sweep_and_still_restores() -> None:
    events: list[tuple[Any, ...]] = []
    card = HelperCard(events, refuse=200)
    result = helper_sweep(card, events).run([200, 250])
    assert events[-2:] == [("helper", 0, 230), ("release",)]
    assert [r.cap_w for r in result.rows] == [250]
    assert result.partial and result.reason.startswith("could not cap at 200 W: ")
    assert card.limit_w == 230.0


def test_a_card_that_hides_its_limit_is_not_swept() -> None:
    events: list[tuple[Any, ...]] = []
    with pytest.raises(SweepError, match="enforced power limit cannot be read"):
        helper_sweep(HelperCard(events, original_w=None), events).run([200])
    assert events == []


def test_no_watchdog_no_sweep() -> None:
    events: list[tuple[Any, ...]] = []
    card = HelperCard(events)

    def broken(gpu: int, watts: int) -> Watchdog:
        raise WatchdogError("could not start the watchdog that restores the power limit: no Python")

    clock = FakeClock()
    sweep = PowerSweep(source=card, limiter=card.limiter(), decoder=FakeDecoder(clock), clock=clock, watchdog=broken)
    with pytest.raises(SweepError, match="could not start the watchdog"):
        sweep.run([200])
    assert events == []


@pytest.fixture
def helper_path(tmp_path: Path) -> Iterator[tuple[Path, Path, dict[str, str]]]:
    """A fake `sudo` first on PATH and a fake helper that writes each `GPU WATTS` it is given to a log, so the
    real limiter runs the real helper path without privileges. Yields (helper, log, environment)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "helper.log"
    sudo = bin_dir / "sudo"
    sudo.write_text('#!/bin/sh\n[ "$1" = "-n" ] && shift\n[ "$1" = "--" ] && shift\nexec "$@"\n')
    helper = tmp_path / "tightfit-power-helper"
    helper.write_text(
        f'#!/bin/sh\necho "$1 $2" >> {log}\necho "{{\\"status\\": \\"applied\\", \\"enforced_w\\": $2}}"\n'
    )
    for script in (sudo, helper):
        script.chmod(0o755)
    # pkexec and sudo are looked for only in the system's folders (/usr/bin, /bin), never on PATH: every process
    # of the test (the child, the watchdog it starts) looks in bin_dir instead, set before anything is imported.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "from pathlib import Path\nfrom gui.services import power_limit\n"
        f"power_limit.SYSTEM_BIN = (Path({str(bin_dir)!r}),)\n"
    )
    env = dict(
        os.environ,
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        PYTHONPATH=f"{site}{os.pathsep}{ROOT}",
    )
    yield helper, log, env


def helper_calls(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_the_watchdog_restores_the_limit_after_its_sweep_is_killed(
    helper_path: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    helper, log, env = helper_path
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    watchdog_log = tmp_path / "watchdog.log"
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(helper), str(tokens), str(watchdog_log)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        wait_until(lambda: helper_calls(log) == ["0 250"] or child.poll() is not None, "the first cap")
        assert child.poll() is None, child.stderr.read().decode() if child.stderr else ""
        assert len(list(tokens.glob("*.token"))) == 1  # the watchdog is armed
        child.send_signal(signal.SIGKILL)  # no finally, no atexit: only the watchdog can restore now
        child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stderr is not None:
            child.stderr.close()
    wait_until(lambda: len(helper_calls(log)) >= 2, "the watchdog's restore")
    assert helper_calls(log) == ["0 250", "0 230"]  # back at the card's limit before the sweep, not its default
    wait_until(lambda: not list(tokens.glob("*.token")), "the watchdog to remove its token")
    assert "restoring GPU 0 to 230 W" in watchdog_log.read_text()


def test_a_sweep_that_ends_in_order_releases_its_watchdog_without_a_second_restore(
    helper_path: tuple[Path, Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    helper, log, env = helper_path
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.setenv("PYTHONPATH", env["PYTHONPATH"])  # the watchdog's process finds the fake sudo too
    monkeypatch.setattr(power_limit, "SYSTEM_BIN", (Path(env["PATH"].split(os.pathsep)[0]),))
    from power_sweep_child import FakeCard

    started: list[Watchdog] = []

    def watchdog(gpu: int, watts: int) -> Watchdog:
        started.append(Watchdog.start(gpu, watts, helper=helper, method="sudo", token_dir=tmp_path))
        return started[0]

    clock = FakeClock()
    limiter = PowerLimiter(helper=helper, method="sudo")
    sweep = PowerSweep(source=FakeCard(), limiter=limiter, decoder=FakeDecoder(clock),
                       workload=Workload(1.0, 1.0), clock=clock, watchdog=watchdog)  # fmt: skip
    result = sweep.run([200, 250])
    assert result.restored and not result.partial
    (dog,) = started
    assert dog.process.poll() == 0 and not dog.armed  # released: it ended on its own, having done nothing
    assert helper_calls(log) == ["0 250", "0 200", "0 230"]


# --- the engine decoder, against scripted engine events --------------------------------------------------------


class ScriptedEngine:
    """Answers each Generate with its tokens (and a held-back tail at index == max_tokens), then Done."""

    def __init__(self, feed: EngineFeed, fail_on: int | None = None) -> None:
        self.feed = feed
        self.fail_on = fail_on
        self.requests: list[int] = []
        self.stopped: list[int] = []

    def generate(
        self,
        messages: tuple[p.ChatMessage, ...],
        max_tokens: int = 512,
        sampling: p.Sampling | None = None,
        ignore_eos: bool = False,
        chat_format: str = "",
    ) -> int:
        assert ignore_eos and messages[0].role == "user"
        rid = len(self.requests) + 1
        self.requests.append(rid)
        if rid == self.fail_on:
            self.feed.feed(p.GenerateFailed(rid, "llama_decode failed (status -3)", kind="decode"))
            return rid
        for i in range(max_tokens):
            self.feed.feed(p.Token(rid, "x", i))
        self.feed.feed(p.Token(rid, "é", max_tokens))  # held-back text: not a token
        self.feed.feed(p.Notice(rid, "a note on the reply"))
        self.feed.feed(p.Done(rid, p.ReplyStats(0, 0, max_tokens, 0, 0, 0, 0, "length")))
        return rid

    def stop(self, request_id: int) -> None:
        self.stopped.append(request_id)


def test_the_engine_decoder_chains_replies_and_stops_when_told() -> None:
    feed = EngineFeed()
    engine = ScriptedEngine(feed)
    seen: list[int] = []

    def keep_going(tokens: int) -> bool:
        seen.append(tokens)
        return tokens < 20

    EngineDecoder(engine, feed, reply_tokens=8).run(keep_going)
    assert seen == list(range(1, 21))  # every token counted once, the tails not at all
    assert engine.requests == [1, 2, 3] and engine.stopped == [3]


def test_the_engine_decoder_reports_a_failed_reply_and_a_dead_worker() -> None:
    feed = EngineFeed()
    with pytest.raises(EngineUnavailable, match="status -3"):
        EngineDecoder(ScriptedEngine(feed, fail_on=2), feed, reply_tokens=4).run(lambda _n: True)
    dead = EngineFeed()
    dead.feed(WorkerExited(-9, "The engine process was killed (signal 9).", expected=False))
    with pytest.raises(EngineUnavailable, match="killed"):
        EngineDecoder(ScriptedEngine(EngineFeed()), dead).run(lambda _n: True)


# --- the CLI ---------------------------------------------------------------------------------------------------


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from gui.cli import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
        if isinstance(exc.code, str):
            print(exc.code, file=sys.stderr)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("flags", "error"),
    [
        (["--caps", "100"], "100 W is below this card's minimum power limit (150-300 W, default 300 W)"),
        (["--caps", "150-250"], "needs a step in watts"),
        (["--caps", "abc"], "'abc' is not a number of watts"),
        (["--caps", ""], "no caps given"),
        (["--loss", "100"], "the allowed loss must be from 0 to under 100%"),
        (["--tokens", "0"], "the tokens measured at each cap must be a whole number"),
        (["--seconds", "0"], "the measured time at each cap must be more than 0 seconds"),
        (["--warmup", "-1"], "the warm-up must be zero or more seconds"),
    ],
)
def test_cli_bad_input_is_one_line_before_the_engine_starts(
    flags: list[str], error: str, demo_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["power-sweep", str(demo_model), "--simulate", "v100-16gb", *flags], capsys)
    assert code == 2 and out == ""
    assert err.strip() == f"tightfit: error: {error}" or (error in err and len(err.strip().splitlines()) == 1)


def test_cli_unknown_card_and_missing_model(
    tmp_path: Path, demo_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run_cli(["power-sweep", str(demo_model), "--simulate", "gtx-480"], capsys)
    assert code == 2 and "gtx-480" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli(["power-sweep", str(tmp_path / "none.gguf"), "--simulate", "v100-16gb"], capsys)
    assert code == 2 and "no such model file" in err


def test_cli_on_a_real_card_checks_caps_against_nvml_first(
    demo_model: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gui.services.nvml as nvml_service

    monkeypatch.setattr(nvml_service, "Nvml", lambda: Nvml(module=FakeNvml.replay("nvml_v100_session.json")))
    code, _, err = run_cli(["power-sweep", str(demo_model), "--caps", "200,260"], capsys)
    assert code == 2
    assert err.strip() == "tightfit: error: 260 W is above this card's maximum power limit (100-250 W, default 250 W)"
    monkeypatch.setattr(nvml_service, "Nvml", lambda: Nvml(module=FakeNvml.replay("nvml_no_driver.json")))
    code, _, err = run_cli(["power-sweep", str(demo_model)], capsys)
    assert code == 1 and err.startswith("tightfit: error: no NVIDIA GPU to sweep (")
    assert "--simulate CARD" in err


@pytest.mark.engine
def test_cli_sweeps_a_simulated_v100_with_the_real_engine(demo_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["power-sweep", str(demo_model), "--simulate", "v100-16gb", "--caps", "200,300", "--warmup", "0.5",
            "--tokens", "24", "--threads", "1", "--ctx", "512", "--json"]  # fmt: skip
    code, out, err = run_cli(argv, capsys)
    assert code == 0, err
    report = json.loads(out)
    assert report["card"] == "Tesla V100-SXM2-16GB (SIMULATED)" and report["simulated"]
    assert report["limits"] == {"min_w": 150, "max_w": 300, "default_w": 300}
    assert [r["cap_w"] for r in report["rows"]] == [300, 200]
    capped = report["rows"][1]
    assert capped["tokens"] == 24 and capped["engine_tok_s"] > 0
    assert capped["mean_power_w"] == 200.0  # the engine's decoding loads the card past 200 W: the cap holds it
    assert capped["throttle"]["power cap"] == 1.0
    assert report["recommendation"]["cap_w"] in (200, 300)
    assert (report["partial"], report["restored"], report["original_limit_w"]) == (False, True, 300)
    assert "300 W (1/2): warming up" in err and "200 W (2/2): measuring" in err
