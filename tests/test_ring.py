"""Ring buffers for the live charts: windows, wrap-around, gaps and the day-long capacity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gui.core.ring import RingBuffer


def filled(capacity: int, count: int) -> RingBuffer:
    ring = RingBuffer(capacity, ["temp", "power"])
    for i in range(count):
        ring.append(float(i), temp=40.0 + i, power=100.0 + i)
    return ring


def test_empty_buffer() -> None:
    ring = RingBuffer(4, ["temp"])
    assert len(ring) == 0 and ring.last is None
    view = ring.view()
    assert len(view) == 0 and view["temp"].shape == (0,) and view.t.dtype == np.float64
    assert len(ring.view(0.0, 10.0)) == 0


def test_one_item() -> None:
    ring = RingBuffer(4, ["temp", "power"])
    ring.append(5.0, temp=61.5)
    assert len(ring) == 1
    t, values = ring.last  # type: ignore[misc]
    assert t == 5.0 and values["temp"] == 61.5 and math.isnan(values["power"])  # not given -> gap
    view = ring.view()
    assert view.t.tolist() == [5.0] and view["temp"].tolist() == [61.5]


def test_exactly_full_keeps_everything_in_order_without_copying() -> None:
    ring = filled(5, 5)
    view = ring.view()
    assert view.t.tolist() == [0, 1, 2, 3, 4]
    assert view["power"].tolist() == [100, 101, 102, 103, 104]
    assert np.shares_memory(view.t, ring._data)  # not wrapped: a view into the storage


def test_wrap_around_drops_the_oldest() -> None:
    ring = filled(5, 8)
    assert len(ring) == 5
    view = ring.view()
    assert view.t.tolist() == [3, 4, 5, 6, 7] and view["temp"].tolist() == [43, 44, 45, 46, 47]
    assert all(a.flags.c_contiguous for a in (view.t, view["temp"], view["power"]))
    assert ring.last == (7.0, {"temp": 47.0, "power": 107.0})


def test_windows_across_the_wrap_copy_and_windows_inside_one_run_do_not() -> None:
    ring = filled(5, 8)  # physical order: 5 6 7 | 3 4
    across = ring.view(4.0, 6.0)
    assert across.t.tolist() == [4, 5, 6] and across["power"].tolist() == [104, 105, 106]
    assert not np.shares_memory(across.t, ring._data)
    inside = ring.view(5.0, 7.0)
    assert inside.t.tolist() == [5, 6, 7] and np.shares_memory(inside.t, ring._data)
    older = ring.view(None, 4.0)
    assert older.t.tolist() == [3, 4] and np.shares_memory(older.t, ring._data)
    assert ring.view(6.5).t.tolist() == [7]
    assert ring.view(3.5, 3.9).t.tolist() == []  # between samples
    assert ring.view(-10, 2.9).t.tolist() == []  # before the oldest kept sample
    assert ring.view(100.0).t.tolist() == []


def test_views_are_read_only() -> None:
    view = filled(4, 3).view()
    with pytest.raises(ValueError):
        view["temp"][0] = 0.0


def test_nan_gaps_for_missing_and_none_values() -> None:
    ring = RingBuffer(4, ["temp", "fan"])
    ring.append(0.0, temp=50.0, fan=None)
    ring.append(1.0, temp=None, fan=40.0)
    ring.append(2.0)
    view = ring.view()
    assert np.isnan(view["fan"][0]) and view["fan"][1] == 40.0
    assert np.isnan(view["temp"][1]) and np.isnan(view["temp"][2]) and np.isnan(view["fan"][2])


def test_reused_slots_do_not_keep_old_values() -> None:
    ring = RingBuffer(2, ["temp", "fan"])
    ring.append(0.0, temp=1.0, fan=2.0)
    ring.append(1.0, temp=1.0, fan=2.0)
    ring.append(2.0, temp=3.0)  # overwrites slot 0; fan was not given, so it must be a gap, not 2.0
    assert math.isnan(ring.view(2.0)["fan"][0])


def test_t0_after_t1_is_an_empty_window() -> None:
    assert len(filled(5, 5).view(3.0, 1.0)) == 0


def test_capacity_one() -> None:
    ring = RingBuffer(1, ["temp"])
    ring.append(0.0, temp=1.0)
    ring.append(1.0, temp=2.0)
    assert len(ring) == 1 and ring.view().t.tolist() == [1.0] and ring.view()["temp"].tolist() == [2.0]
    assert ring.view(0.0, 0.5).t.tolist() == []


def test_equal_timestamps_across_the_wrap_are_all_in_the_window() -> None:
    ring = RingBuffer(3, ["v"])
    for t, v in [(0.0, 0), (1.0, 1), (1.0, 2), (1.0, 3)]:  # physical: [1.0(3), 1.0(1), 1.0(2)]
        ring.append(t, v=v)
    assert ring.view(1.0, 1.0)["v"].tolist() == [1, 2, 3]


def test_clear() -> None:
    ring = filled(3, 5)
    ring.clear()
    assert len(ring) == 0 and ring.last is None
    ring.append(0.0, temp=1.0)  # time may restart after a clear
    assert ring.view().t.tolist() == [0.0]


@pytest.mark.parametrize(
    ("capacity", "fields", "error"),
    [
        (0, ["a"], ValueError),
        (-5, ["a"], ValueError),
        (2.5, ["a"], TypeError),
        (True, ["a"], TypeError),
        (3, "temp", TypeError),
        (3, ["a", "a"], ValueError),
        (3, ["t"], ValueError),
        (3, ["not valid"], ValueError),
    ],
)
def test_bad_constructor_arguments(capacity: object, fields: object, error: type[Exception]) -> None:
    with pytest.raises(error):
        RingBuffer(capacity, fields)  # type: ignore[arg-type]


def test_bad_appends() -> None:
    ring = filled(3, 2)
    with pytest.raises(KeyError, match="unknown fields"):
        ring.append(5.0, humidity=3.0)
    with pytest.raises(ValueError, match="before the last"):
        ring.append(0.5, temp=1.0)
    with pytest.raises(ValueError, match="finite"):
        ring.append(math.nan, temp=1.0)
    assert len(ring) == 2  # nothing half-written


def test_a_day_at_one_hertz_is_one_preallocated_array() -> None:
    ring = RingBuffer(86_400, ["temperature_c", "power_w", "gpu_util_pct", "memory_used_mib"])
    assert ring._data.shape == (5, 86_400) and ring._data.nbytes == 5 * 86_400 * 8
    for i in range(86_400 + 10):
        ring.append(float(i), power_w=float(i))
    window = ring.view(86_000.0)
    assert window.t[0] == 86_000.0 and window.t[-1] == 86_409.0 and len(window) == 410
    assert len(ring.view()) == 86_400 and ring.view().t[0] == 10.0


@given(
    capacity=st.integers(1, 12),
    count=st.integers(0, 40),
    t0=st.one_of(st.none(), st.floats(-5, 45, allow_nan=False)),
    t1=st.one_of(st.none(), st.floats(-5, 45, allow_nan=False)),
)
def test_views_match_a_plain_list(capacity: int, count: int, t0: float | None, t1: float | None) -> None:
    ring = RingBuffer(capacity, ["v"])
    kept: list[float] = []
    for i in range(count):
        ring.append(float(i), v=i * 10.0)
        kept = [*kept, float(i)][-capacity:]
    expected = [t for t in kept if (t0 is None or t >= t0) and (t1 is None or t <= t1)]
    view = ring.view(t0, t1)
    assert view.t.tolist() == expected and view["v"].tolist() == [t * 10.0 for t in expected]
