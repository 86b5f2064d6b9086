"""The hint for a reply far slower than its ceiling names the likely cause and the change to try."""

from __future__ import annotations

from dataclasses import replace

from gui.core.speed_hint import SpeedFacts, speed_hint

SLOW = SpeedFacts(decode_tok_s=4.0, n_gen=200, ceiling_tok_s=40.0, threads=8, logical_cores=16, physical_cores=8)


def test_near_the_ceiling_or_too_short_to_tell_there_is_no_hint() -> None:
    assert speed_hint(replace(SLOW, decode_tok_s=30.0)) is None
    assert speed_hint(replace(SLOW, n_gen=5)) is None
    assert speed_hint(replace(SLOW, ceiling_tok_s=None)) is None


def test_threads_on_every_logical_core_are_named_first() -> None:
    hint = speed_hint(replace(SLOW, threads=16))
    assert hint is not None and hint.startswith("4.0 tok/s is 10% of this load's ceiling (40 tok/s)")
    assert "16 threads use every logical core" in hint and "Try 7 threads" in hint
    two_cores = speed_hint(replace(SLOW, threads=2, logical_cores=2, physical_cores=2))
    assert two_cores is not None and "Try 1 thread." in two_cores


def test_layers_in_host_memory_and_a_throttled_gpu() -> None:
    hint = speed_hint(
        replace(SLOW, gpu_offload=True, layers_on_gpu=48, n_layers=65, throttle_reasons=("sw_power_cap",))
    )
    assert hint is not None and "17 of 65 layers run from host memory" in hint and "held back (sw_power_cap)" in hint


def test_a_cpu_only_engine_is_not_told_about_the_gpus_power_cap() -> None:
    """The card is capped, but the engine computes on the CPU: the cap is not why the reply is slow."""
    capped = replace(SLOW, gpu_offload=False, threads=16, throttle_reasons=("sw_power_cap", "hw_thermal_slowdown"))
    hint = speed_hint(capped)
    assert hint is not None and "16 threads use every logical core" in hint and "held back" not in hint
    assert speed_hint(replace(capped, threads=8)) is None  # nothing else to blame: no hint at all


def test_a_busy_cpu_when_nothing_else_explains_it() -> None:
    assert "other programs keep the CPU busy" in (speed_hint(replace(SLOW, cpu_busy_pct=(99.0, 10.0))) or "")
    assert speed_hint(SLOW) is None  # nothing known to blame: no guess


def test_a_small_model_on_the_cpu_alone_is_not_called_slow_at_its_arithmetic_bound() -> None:
    """The demo model on two idle cores: ~120 tok/s of a ~380 tok/s bandwidth ceiling, and one thread is slower
    (measured), so no advice to drop a thread; a third of the ceiling on a GPU is still worth a word."""
    demo = SpeedFacts(decode_tok_s=117.0, n_gen=20, ceiling_tok_s=384.0, threads=2, logical_cores=2, physical_cores=2)
    assert speed_hint(demo) is None
    assert speed_hint(replace(demo, decode_tok_s=12.0)) is not None  # the tenfold stall
    assert speed_hint(replace(demo, gpu_offload=True, layers_on_gpu=31, n_layers=31)) is not None
