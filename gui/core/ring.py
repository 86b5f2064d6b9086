"""Fixed-capacity ring buffers for time series: a day of 1 s samples in one preallocated array.

Row 0 of the array holds the timestamps, one row per field after it, NaN where a value is missing (the
chart draws a gap). Rows are contiguous, so a window that does not cross the wrap point is a plain
slice of the storage (no copy); only a window that does cross it is stitched together into a copy.

Not thread-safe: one thread appends (the UI, from the telemetry adapter) and reads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["RingBuffer", "SeriesView"]


@dataclass(frozen=True, eq=False)
class SeriesView:
    """A time window: `t` plus one array per field (`view["temperature_c"]`), all as long as the window,
    read-only. Arrays that are slices of the buffer change when it wraps over them: copy what you keep
    past the next append."""

    t: np.ndarray
    columns: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.t if name == "t" else self.columns[name]

    def __len__(self) -> int:
        return int(self.t.shape[0])


class RingBuffer:
    def __init__(self, capacity: int, fields: Sequence[str]) -> None:
        if isinstance(capacity, bool) or not isinstance(capacity, int | np.integer):
            raise TypeError(f"capacity must be an integer (got {capacity!r})")
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1 (got {capacity})")
        if isinstance(fields, str):  # RingBuffer(10, "temp") would silently make fields t, e, m, p
            raise TypeError("fields must be a sequence of names, not one string")
        names = tuple(fields)
        for name in names:
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"field names must be identifiers (got {name!r})")
        if "t" in names:
            raise ValueError("'t' is the timestamp column; pick another field name")
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate field names in {names}")
        self._capacity = int(capacity)
        self._fields = names
        self._row = {name: i + 1 for i, name in enumerate(names)}
        self._data = np.full((len(names) + 1, self._capacity), np.nan, dtype=np.float64)
        self._start = 0  # physical index of the oldest sample
        self._size = 0

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def fields(self) -> tuple[str, ...]:
        return self._fields

    def __len__(self) -> int:
        return self._size

    def clear(self) -> None:
        self._start = 0
        self._size = 0

    def append(self, t: float, **values: float | None) -> None:
        """Add one sample; fields not given (or None) are NaN. Timestamps must not go backwards, so that
        windows can be found by binary search."""
        t = float(t)
        if not math.isfinite(t):
            raise ValueError(f"timestamp must be finite (got {t})")
        last_t = self._last_t()
        if last_t is not None and t < last_t:
            raise ValueError(f"timestamp {t} is before the last one ({last_t})")
        unknown = values.keys() - self._row.keys()
        if unknown:
            raise KeyError(f"unknown fields {sorted(unknown)}; this buffer has {list(self._fields)}")
        slot = (self._start + self._size) % self._capacity
        column = self._data[:, slot]
        column[:] = np.nan
        column[0] = t
        for name, value in values.items():
            if value is not None:
                column[self._row[name]] = value
        if self._size < self._capacity:
            self._size += 1
        else:
            self._start = (self._start + 1) % self._capacity  # the oldest sample was just overwritten

    @property
    def last(self) -> tuple[float, dict[str, float]] | None:
        """The newest sample as (t, {field: value}), or None when empty."""
        if self._size == 0:
            return None
        column = self._data[:, (self._start + self._size - 1) % self._capacity]
        return float(column[0]), {name: float(column[row]) for name, row in self._row.items()}

    def view(self, t0: float | None = None, t1: float | None = None) -> SeriesView:
        """Samples with t0 <= t <= t1 (either bound open when None), oldest first."""
        lo = 0 if t0 is None else self._bisect(t0, right=False)
        hi = self._size if t1 is None else self._bisect(t1, right=True)
        hi = max(hi, lo)  # t0 > t1: an empty window rather than an error
        block = self._logical_slice(lo, hi)
        block.flags.writeable = False
        return SeriesView(block[0], {name: block[row] for name, row in self._row.items()})

    # --- internals --------------------------------------------------------------------------------

    def _segments(self) -> tuple[np.ndarray, np.ndarray]:
        """The timestamp row as the two physically contiguous runs that make up logical order."""
        end = self._start + self._size
        times = self._data[0]
        if end <= self._capacity:
            return times[self._start : end], times[:0]
        return times[self._start :], times[: end - self._capacity]

    def _bisect(self, t: float, *, right: bool) -> int:
        side: Literal["left", "right"] = "right" if right else "left"
        first, second = self._segments()
        if first.size and (t < first[-1] or (not right and t == first[-1]) or not second.size):
            return int(np.searchsorted(first, t, side=side))
        return first.size + int(np.searchsorted(second, t, side=side))

    def _logical_slice(self, lo: int, hi: int) -> np.ndarray:
        a = self._start + lo
        b = self._start + hi
        if b <= self._capacity:
            return self._data[:, a:b]  # one run: a view
        if a >= self._capacity:
            return self._data[:, a - self._capacity : b - self._capacity]
        # The window crosses the wrap point: stitch the two runs (the only copy this class makes).
        return np.concatenate((self._data[:, a:], self._data[:, : b - self._capacity]), axis=1)

    def _last_t(self) -> float | None:
        if self._size == 0:
            return None
        return float(self._data[0, (self._start + self._size - 1) % self._capacity])
