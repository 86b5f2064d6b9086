"""Alert rules: each event is said once, re-arms only after its condition clears (with hysteresis for heat)."""

from __future__ import annotations

import dataclasses

import pytest
from fake_nvml import FakeNvml

from gui.core import gpu_sample as reasons
from gui.core.alerts import Alert, AlertRules
from gui.core.gpu_sample import GpuSample
from gui.services.nvml import Nvml


def sample(index: int = 0, **fields: object) -> GpuSample:
    return GpuSample(index=index, timestamp=0.0, **fields)  # type: ignore[arg-type]


def kinds(alerts: list[Alert]) -> list[str]:
    return [a.kind for a in alerts]


def run(rules: AlertRules, samples: list[GpuSample]) -> list[list[Alert]]:
    return [rules.check(s) for s in samples]


# --- temperature ------------------------------------------------------------------------------------


def test_temperature_fires_once_while_hot_and_rearms_only_below_the_hysteresis_band() -> None:
    rules = AlertRules(83, hysteresis_c=3)
    temps = [70, 82.9, 83, 85, 90, 82, 80.5, 80, 79.9, 81, 83, 84]
    fired = [bool(r) for r in run(rules, [sample(temperature_c=t) for t in temps])]
    # 83 reaches the threshold; 82 and 80.5 and 80 stay inside the band (83 - 3 = 80 is not below it);
    # 79.9 re-arms; 83 fires again.
    assert fired == [False, False, True, False, False, False, False, False, False, False, True, False]


def test_temperature_alert_words_and_severity_follow_the_slowdown_threshold() -> None:
    rules = AlertRules(83)
    (warm,) = rules.check(sample(temperature_c=84, slowdown_c=87))
    assert warm == Alert("temperature", 0, "GPU 0 is at 84 °C (alert threshold 83 °C)", "warning")
    rules = AlertRules(83)
    (hot,) = rules.check(sample(temperature_c=88, slowdown_c=87))
    assert hot.severity == "critical"


def test_missing_temperature_neither_fires_nor_rearms() -> None:
    rules = AlertRules(80, hysteresis_c=2)
    assert kinds(rules.check(sample(temperature_c=81))) == ["temperature"]
    assert rules.check(sample()) == []  # no reading: still counts as hot
    assert rules.check(sample(temperature_c=81)) == []
    assert rules.check(sample(temperature_c=77)) == []  # re-armed
    assert kinds(rules.check(sample(temperature_c=80))) == ["temperature"]


def test_raising_the_threshold_while_hot_lets_the_alert_rearm() -> None:
    rules = AlertRules(80)
    assert rules.check(sample(temperature_c=82))
    rules.temp_threshold_c = 90
    assert rules.check(sample(temperature_c=82)) == []  # 82 < 90 - 3: re-armed, quietly
    assert rules.check(sample(temperature_c=91))


def test_each_gpu_has_its_own_state() -> None:
    rules = AlertRules(80)
    assert kinds(rules.check(sample(0, temperature_c=85))) == ["temperature"]
    assert kinds(rules.check(sample(1, temperature_c=85))) == ["temperature"]
    assert rules.check(sample(0, temperature_c=85)) == []
    assert rules.check(sample(1, temperature_c=85)) == []


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "83", True])
def test_threshold_must_be_a_number(bad: object) -> None:
    with pytest.raises(ValueError):
        AlertRules(bad)  # type: ignore[arg-type]


def test_hysteresis_must_not_be_negative() -> None:
    with pytest.raises(ValueError):
        AlertRules(83, hysteresis_c=-1)


# --- throttling -------------------------------------------------------------------------------------


def test_throttle_fires_once_per_reason_and_rearms_when_it_clears() -> None:
    rules = AlertRules(83)
    seq = [
        (),
        (reasons.THERMAL_SLOWDOWN,),
        (reasons.THERMAL_SLOWDOWN,),
        (reasons.THERMAL_SLOWDOWN, reasons.HW_SLOWDOWN),  # a new word while the first persists
        (reasons.HW_SLOWDOWN,),
        None,  # unknown: not a clear
        (reasons.HW_SLOWDOWN,),
        (),
        (reasons.THERMAL_SLOWDOWN,),
    ]
    messages = [[a.message for a in r] for r in run(rules, [sample(throttle_reasons=s) for s in seq])]
    assert messages == [
        [],
        ["GPU 0 is throttling: thermal slowdown"],
        [],
        ["GPU 0 is throttling: HW slowdown"],
        [],
        [],
        [],
        [],
        ["GPU 0 is throttling: thermal slowdown"],
    ]


def test_normal_clock_reasons_never_alert_and_power_cap_is_only_info() -> None:
    rules = AlertRules(83)
    quiet = (reasons.IDLE, reasons.APPLICATION_CLOCKS, reasons.SYNC_BOOST, reasons.DISPLAY_CLOCKS)
    assert rules.check(sample(throttle_reasons=quiet)) == []
    (cap,) = rules.check(sample(throttle_reasons=(reasons.IDLE, reasons.POWER_CAP)))
    assert (cap.kind, cap.severity, cap.message) == ("throttle", "info", "GPU 0 is throttling: power cap")


def test_the_power_cap_is_said_once_not_on_every_busy_spell() -> None:
    """A capped card hits its cap whenever it works and leaves it when idle: said the first time only, while the
    reasons the user did not choose still alert each time they come back; a reset judges afresh."""
    rules = AlertRules(83)
    spells = [
        (reasons.POWER_CAP,),
        (reasons.IDLE,),
        (reasons.POWER_CAP,),
        (),
        (reasons.POWER_CAP, reasons.THERMAL_SLOWDOWN),
    ]
    said = [[a.message for a in rules.check(sample(throttle_reasons=s))] for s in spells]
    assert said == [
        ["GPU 0 is throttling: power cap"],
        [],
        [],
        [],
        ["GPU 0 is throttling: thermal slowdown"],
    ]
    rules.reset(0)
    (again,) = rules.check(sample(throttle_reasons=(reasons.POWER_CAP,)))
    assert again.message == "GPU 0 is throttling: power cap"


def test_several_new_reasons_in_one_tick_make_one_alert_at_the_worst_severity() -> None:
    rules = AlertRules(83)
    (alert,) = rules.check(sample(throttle_reasons=(reasons.POWER_CAP, reasons.HW_THERMAL_SLOWDOWN)))
    assert alert.message == "GPU 0 is throttling: power cap, HW thermal slowdown"
    assert alert.severity == "critical"


# --- ECC --------------------------------------------------------------------------------------------


def test_ecc_first_reading_is_the_baseline_and_each_increase_alerts() -> None:
    rules = AlertRules(83)
    counts = [(5, 0), (5, 0), (7, 0), (7, 0), (7, 1), (8, 1), (None, None), (8, 1), (0, 0), (1, 0)]
    out = run(rules, [sample(ecc_corrected=c, ecc_uncorrected=u) for c, u in counts])
    assert [[(a.severity, a.message) for a in r] for r in out] == [
        [],  # 5 errors from before we started watching are not new
        [],
        [("warning", "GPU 0: 2 new corrected ECC memory errors (7 since the driver loaded)")],
        [],
        [("critical", "GPU 0: 1 new uncorrected ECC memory error (1 since the driver loaded)")],
        [("warning", "GPU 0: 1 new corrected ECC memory error (8 since the driver loaded)")],
        [],  # unreadable: keeps the baseline
        [],
        [],  # went down: the driver reloaded; new baseline
        [("warning", "GPU 0: 1 new corrected ECC memory error (1 since the driver loaded)")],
    ]


def test_cards_without_ecc_never_alert() -> None:
    rules = AlertRules(83)
    assert run(rules, [sample(), sample(), sample()]) == [[], [], []]


# --- lost -------------------------------------------------------------------------------------------


def test_lost_then_back_then_lost_again_alerts_twice() -> None:
    rules = AlertRules(83)
    seq = [sample(temperature_c=60), sample(lost=True), sample(lost=True), sample(temperature_c=60)]
    seq += [sample(lost=True), sample(lost=True)]
    out = run(rules, seq)
    assert [kinds(r) for r in out] == [[], ["lost"], [], [], ["lost"], []]
    assert out[1][0].severity == "critical" and "fell off the bus" in out[1][0].message


def test_a_lost_tick_does_not_clear_other_events() -> None:
    rules = AlertRules(80)
    assert kinds(rules.check(sample(temperature_c=85, throttle_reasons=(reasons.THERMAL_SLOWDOWN,)))) == [
        "temperature",
        "throttle",
    ]
    assert kinds(rules.check(sample(lost=True))) == ["lost"]
    # Back, still hot and still slowing down: the same events, so nothing new.
    assert rules.check(sample(temperature_c=85, throttle_reasons=(reasons.THERMAL_SLOWDOWN,))) == []


def test_reset_forgets_one_gpu() -> None:
    rules = AlertRules(80)
    rules.check(sample(0, temperature_c=85))
    rules.check(sample(1, temperature_c=85))
    rules.reset(0)
    assert kinds(rules.check(sample(0, temperature_c=85))) == ["temperature"]
    assert rules.check(sample(1, temperature_c=85)) == []


# --- a recorded session ------------------------------------------------------------------------------


def test_recorded_v100_session_alerts_each_event_once() -> None:
    """A blower V100's recorded session (data/nvml_v100_session.json): heats to 83 °C, two ECC corrections,
    capped, falls off the bus for a tick, comes back still power-capped."""
    fake = FakeNvml.replay("nvml_v100_session.json")
    nvml = Nvml(fake)
    rules = AlertRules(83)
    per_tick = []
    for _ in range(len(fake.gpus[0].frames)):
        per_tick.append(rules.check(nvml.sample(0)))
        fake.step()
    flat = [a for r in per_tick for a in r]
    assert kinds(flat) == ["throttle", "temperature", "ecc", "lost"]
    assert [i for i, r in enumerate(per_tick) if r] == [3, 5, 9]  # power cap, 83 °C + ECC 0→2, lost
    assert flat[0].severity == "info" and flat[2].message.startswith("GPU 0: 2 new corrected")


def test_alerts_are_frozen_values() -> None:
    alert = Alert("lost", 0, "gone", "critical")
    with pytest.raises(dataclasses.FrozenInstanceError):
        alert.kind = "ecc"  # type: ignore[misc]
