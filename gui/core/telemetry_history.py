"""A day of telemetry ticks in memory: what the monitor charts draw from and what "export visible range" writes.

Storage is one RingBuffer for the host, one for its per-core CPU and one per GPU, each holding at least a
day of ticks. Every tick appends one row to each of them, stamped with the tick's time (a GPU missing
from a tick gets a gap row), so a GPU's or the cores' rows are always the newest rows of the host's and
an export can line them up row by row. Text readings (status, throttle reasons) are kept as codes into
a small table, so that every column is a float array.

Drawing a day of data stays cheap because a redraw asks only for what the view needs (`Span`): the
fetched range, reduced to about two points (max, min) per pixel column by `peak_decimate`, so spikes
survive. Zoomed out past a minute per pixel column (24 h on screen), curves come from per-minute
envelopes (`MinuteBuckets`, 1,440 a day) instead of 86,400 raw samples; the raw rings remain the record.
Limit-like series change rarely and are drawn as steps through their change points only (`step_line`).
Missing readings are NaN; a pixel column (or a minute) is a gap only if every reading in it is missing,
so a lost GPU shows but one missed read does not perforate a day-long curve.

Not thread-safe: one thread records and reads (the UI thread, in the app).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gui.core.gpu_sample import GpuSample
from gui.core.ring import RingBuffer, SeriesView
from gui.core.telemetry_csv import (
    GPU_FIELDS,
    HOST_FIELDS,
    HOST_READINGS,
    TEXT_FIELDS,
    Cell,
    TelemetryCsvWriter,
    core_column,
    core_values,
    csv_columns,
    gpu_values,
    host_values,
    telemetry_row,
)
from gui.core.telemetry_fields import CHARTED
from gui.core.tick import Tick

__all__ = [
    "BUCKET_S",
    "CHART_GPU_FIELDS",
    "CHART_HOST_FIELDS",
    "DAY_S",
    "GPU_FORGET_S",
    "MAX_GPU_HISTORIES",
    "MIN_CAPACITY",
    "Frame",
    "MinuteBuckets",
    "Span",
    "TelemetryHistory",
    "capacity_for",
    "peak_decimate",
    "plan_span",
    "step_line",
]

DAY_S = 86_400
MIN_CAPACITY = DAY_S  # a day at 1 s; faster sampling gets a bigger buffer (capacity_for)
BUCKET_S = 60.0  # zoomed out past this many seconds per pixel column, curves come from per-minute envelopes
# A GPU's day of history is about 18 MiB. One missing from every tick for GPU_FORGET_S (an exporter that stopped
# naming it) is forgotten, its memory freed; and at most MAX_GPU_HISTORIES are kept (this machine's and other
# machines' together): past it, the one missing longest makes room, or a new GPU is not recorded.
GPU_FORGET_S = 120.0
MAX_GPU_HISTORIES = 160

# The series the charts draw (their declarations' curves), which get per-minute envelopes (the rest is kept raw,
# for exports).
CHART_GPU_FIELDS: tuple[str, ...] = CHARTED
# The host readings the charts keep minute envelopes of: every numeric host reading a tick carries.
CHART_HOST_FIELDS: tuple[str, ...] = HOST_READINGS


def capacity_for(interval_s: float) -> int:
    """Ring capacity that holds at least 24 h at this sampling interval (and never less than 86,400)."""
    return max(MIN_CAPACITY, math.ceil(DAY_S / interval_s) + 1)


# --- reducing series for drawing ------------------------------------------------------------------------


def step_line(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A step line through the change points of y: a handful of vertices for a series that is mostly
    constant, with NaN runs kept as gaps."""
    if y.size == 0:
        return x[:0], y[:0]
    nan = np.isnan(y)
    change = np.empty(y.size, dtype=bool)
    change[0] = True
    change[1:] = (y[1:] != y[:-1]) & ~(nan[1:] & nan[:-1])
    idx = np.flatnonzero(change)
    starts = x[idx]
    ends = np.append(x[idx[1:]], x[-1])
    return np.column_stack((starts, ends)).ravel(), np.repeat(y[idx], 2)


def peak_decimate(x: np.ndarray, y: np.ndarray, columns: int) -> tuple[np.ndarray, np.ndarray]:
    """At most about two points (max then min) per pixel column, so a day of 1 s data costs what a few
    thousand points cost. Blocks are aligned to the newest sample, so the live edge is exact. A block is a
    gap only when every reading in it is missing: at 24 h on screen one column is over a minute, and a
    single missed reading should not punch a hole in it (a lost GPU for minutes still shows)."""
    n = int(x.shape[0])
    if columns < 1 or n <= 4 * columns:
        return x, y
    block = n // columns
    blocks = n // block
    head = n - blocks * block  # the oldest few samples that do not fill a block: kept as they are
    ys = y[head:].reshape(blocks, block)
    xs = x[head:].reshape(blocks, block)
    with np.errstate(invalid="ignore"):
        high = np.fmax.reduce(ys, axis=1)  # fmax/fmin skip NaN unless the whole block is NaN
        low = np.fmin.reduce(ys, axis=1)
    out_x = np.empty(head + 2 * blocks)
    out_y = np.empty(head + 2 * blocks)
    out_x[:head], out_y[:head] = x[:head], y[:head]
    out_x[head::2] = xs[:, 0]
    out_x[head + 1 :: 2] = xs[:, -1]
    out_y[head::2] = high
    out_y[head + 1 :: 2] = low
    return out_x, out_y


class MinuteBuckets:
    """The highest and lowest value of every field per minute, kept beside a raw ring buffer.

    A zoomed-out view (a minute or more per pixel column, e.g. 24 h on screen) draws from these: 1,440
    buckets a day instead of 86,400 samples, which is what keeps a day-wide redraw inside one frame. The
    newest, still-open minute is not here yet; a Frame takes it from the raw buffer.
    """

    def __init__(self, capacity: int, fields: tuple[str, ...], seconds: float = BUCKET_S) -> None:
        self.seconds = seconds
        self.fields = fields
        self.ring = RingBuffer(capacity, [f"{f}_{end}" for f in fields for end in ("hi", "lo")])
        self.open_start: float | None = None  # start of the minute being filled
        self._hi = np.full(len(fields), np.nan)
        self._lo = np.full(len(fields), np.nan)

    def add(self, t: float, values: Mapping[str, float | None]) -> None:
        """Fold one sample in; fields it lacks (or has as None) count as missing."""
        start = math.floor(t / self.seconds) * self.seconds
        if start != self.open_start:
            self.close()
            self.open_start = start
        row = np.array([_nan_if_none(values.get(f)) for f in self.fields], dtype=float)
        self._hi = np.fmax(self._hi, row)  # fmax/fmin skip NaN: a bucket is a gap only if it is all gaps
        self._lo = np.fmin(self._lo, row)

    def close(self) -> None:
        """File the open minute (if any) into the ring."""
        if self.open_start is None:
            return
        values: dict[str, float | None] = {}
        for i, f in enumerate(self.fields):
            values[f"{f}_hi"] = float(self._hi[i])
            values[f"{f}_lo"] = float(self._lo[i])
        self.ring.append(self.open_start, **values)
        self._reset()

    def clear(self) -> None:
        self.ring.clear()
        self._reset()

    def _reset(self) -> None:
        self.open_start = None
        self._hi[:] = np.nan
        self._lo[:] = np.nan


@dataclass(frozen=True)
class Span:
    """What one redraw fetches: a time range, the pixel columns that range covers (about two points are
    drawn per column), and whether to draw minute envelopes instead of raw samples."""

    start: float
    end: float
    columns: int
    coarse: bool


def plan_span(fetch: tuple[float, float], visible: tuple[float, float], pixels: int) -> Span:
    """The Span for fetching `fetch` while `visible` (Unix seconds) spans `pixels` pixel columns."""
    width = max(visible[1] - visible[0], 1e-9)
    columns = int(pixels * (fetch[1] - fetch[0]) / width)
    return Span(fetch[0], fetch[1], columns, coarse=width / pixels >= BUCKET_S)


class Frame:
    """One source's data for one redraw: either raw samples, or minute buckets plus the raw open minute."""

    def __init__(self, ring: RingBuffer, buckets: MinuteBuckets, span: Span) -> None:
        self.span = span
        self.coarse = span.coarse and buckets.open_start is not None
        if self.coarse:
            assert buckets.open_start is not None
            self._buckets = buckets.ring.view(span.start - buckets.seconds, span.end)
            self._tail = ring.view(max(span.start, buckets.open_start), span.end)
            self._half = buckets.seconds / 2
        else:
            self._raw = ring.view(span.start, span.end)

    def empty(self) -> bool:
        return (len(self._buckets) + len(self._tail) == 0) if self.coarse else len(self._raw) == 0

    def curve(self, field: str, level: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """x and y to draw for `field`: peak-decimated, or for a `level` (a rarely changing limit) a step
        line. They are the caller's to keep: never views into a ring that later ticks overwrite."""
        x, y = self._series(field, level)
        x, y = step_line(x, y) if level else peak_decimate(x, y, self.span.columns)
        if not self.coarse:
            # Kept until the next redraw (forever while paused): slices of a full ring would be
            # overwritten under the caller by new ticks.
            x = x.copy() if np.shares_memory(x, self._raw.t) else x
            y = y.copy() if np.shares_memory(y, self._raw[field]) else y
        return x, y

    def _series(self, field: str, level: bool) -> tuple[np.ndarray, np.ndarray]:
        if not self.coarse:
            return self._raw.t, self._raw[field]
        t, hi, lo = self._buckets.t, self._buckets[f"{field}_hi"], self._buckets[f"{field}_lo"]
        if level:  # a limit line: its value per minute is enough
            x, y = t, hi
        else:  # max at the start of the minute, min at its middle: the envelope, as peak decimation draws it
            x = np.column_stack((t, t + self._half)).ravel()
            y = np.column_stack((hi, lo)).ravel()
        return np.concatenate((x, self._tail.t)), np.concatenate((y, self._tail[field]))


class _TextCodes:
    """Text readings as small numbers (0 is ''), so they fit the float ring buffers. The texts are few
    (status messages, combinations of throttle reasons), so the table stays small."""

    def __init__(self) -> None:
        self._texts: list[str] = [""]
        self._codes: dict[str, int] = {"": 0}

    def code(self, text: str) -> float:
        code = self._codes.get(text)
        if code is None:
            code = self._codes[text] = len(self._texts)
            self._texts.append(text)
        return float(code)

    def text(self, code: float) -> str | None:
        return None if math.isnan(code) else self._texts[int(code)]

    def copy(self) -> _TextCodes:
        twin = _TextCodes()
        twin._texts, twin._codes = list(self._texts), dict(self._codes)
        return twin


class TelemetryHistory:
    def __init__(self, *, capacity: int = MIN_CAPACITY, wall_offset: float | None = None) -> None:
        """`wall_offset` turns the telemetry clock (monotonic seconds) into Unix time, the time every row
        is stamped with; by default it is measured now."""
        if capacity < MIN_CAPACITY:
            raise ValueError(f"the history keeps at least a day of 1 s ticks ({MIN_CAPACITY}); got {capacity}")
        self.capacity = capacity
        self.wall_offset = time.time() - time.monotonic() if wall_offset is None else wall_offset
        self.host = RingBuffer(capacity, HOST_FIELDS)
        self.cores: RingBuffer | None = None  # made on the first tick that has per-core CPU readings
        self.gpus: dict[int, RingBuffer] = {}
        self._bucket_capacity = math.ceil(capacity / BUCKET_S) + 2
        self.host_buckets = MinuteBuckets(self._bucket_capacity, CHART_HOST_FIELDS)
        self.gpu_buckets: dict[int, MinuteBuckets] = {}
        self.last_t: float | None = None  # Unix time of the newest tick
        self._slowdown_c: dict[int, float] = {}
        self._gpu_seen: dict[int, float] = {}  # index -> Unix time of the last tick that had it
        self._texts = _TextCodes()

    # --- recording ----------------------------------------------------------------------------------

    def record(self, tick: Tick) -> float:
        """Append one tick (stamped with its host reading's time) and return its Unix time."""
        x = tick.host.timestamp + self.wall_offset
        if self.last_t is not None and x < self.last_t:
            x = self.last_t  # a clock step back must not break the buffers' ordering
        self.last_t = x
        host = self._numbers(host_values(tick))
        self.host.append(x, **host)
        self.host_buckets.add(x, host)
        self._record_cores(x, core_values(tick.host))
        self._record_gpus(x, tick.gpus)
        return x

    def clear(self) -> None:
        self.host.clear()
        self.host_buckets.clear()
        self.cores = None
        self.gpus.clear()
        self.gpu_buckets.clear()
        self._slowdown_c.clear()
        self._gpu_seen.clear()
        self.last_t = None

    def _record_cores(self, x: float, values: Mapping[str, Cell]) -> None:
        if self.cores is None:
            if not values:
                return
            self.cores = RingBuffer(self.capacity, [core_column(i) for i in range(len(values))])
        # Cores beyond those first seen have no column, as in a log started then.
        known = {name: value for name, value in self._numbers(values).items() if name in self.cores.fields}
        self.cores.append(x, **known)

    def _record_gpus(self, x: float, samples: Iterable[GpuSample]) -> None:
        samples = list(samples)
        seen = {sample.index for sample in samples}
        for index in [i for i in self.gpus if i not in seen and x - self._gpu_seen.get(i, x) > GPU_FORGET_S]:
            self._forget(index)
        for sample in samples:
            ring = self._gpu_ring(sample.index, seen)
            if ring is None:
                continue
            self._gpu_seen[sample.index] = x
            values = self._numbers(gpu_values(sample))
            ring.append(x, **values)
            self.gpu_buckets[sample.index].add(x, values)
            if sample.slowdown_c is not None:
                self._slowdown_c[sample.index] = sample.slowdown_c
        for index, ring in self.gpus.items():
            if index not in seen:  # a GPU missing from this tick is a gap, and keeps rows aligned
                ring.append(x)
                self.gpu_buckets[index].add(x, {})

    def _gpu_ring(self, index: int, ticked: set[int]) -> RingBuffer | None:
        ring = self.gpus.get(index)
        if ring is None:
            if len(self.gpus) >= MAX_GPU_HISTORIES:
                missing = [i for i in self.gpus if i not in ticked]
                if not missing:
                    return None  # every kept GPU is in this tick: this one is not recorded
                self._forget(min(missing, key=lambda i: self._gpu_seen.get(i, 0.0)))
            ring = self.gpus[index] = RingBuffer(self.capacity, GPU_FIELDS)
            self.gpu_buckets[index] = MinuteBuckets(self._bucket_capacity, CHART_GPU_FIELDS)
        return ring

    def _forget(self, index: int) -> None:
        """Free a GPU's history (its exports end with it)."""
        self.gpus.pop(index, None)
        self.gpu_buckets.pop(index, None)
        self._slowdown_c.pop(index, None)
        self._gpu_seen.pop(index, None)

    def _numbers(self, values: Mapping[str, Cell]) -> dict[str, float | None]:
        """Values as the rings hold them: texts as codes, and anything not finite as missing (an infinite
        reading would otherwise swamp every scale and envelope it lands in)."""
        return {name: self._number(value) for name, value in values.items()}

    def _number(self, value: Cell) -> float | None:
        if isinstance(value, str):
            return self._texts.code(value)
        return value if value is not None and math.isfinite(value) else None

    # --- reading ------------------------------------------------------------------------------------

    def slowdown_c(self, index: int) -> float | None:
        """The latest slowdown temperature GPU `index` reported (kept through ticks that lack one)."""
        return self._slowdown_c.get(index)

    def host_frame(self, span: Span) -> Frame:
        return Frame(self.host, self.host_buckets, span)

    def gpu_frame(self, index: int, span: Span) -> Frame | None:
        """None when GPU `index` has never been recorded."""
        ring = self.gpus.get(index)
        return Frame(ring, self.gpu_buckets[index], span) if ring is not None else None

    # --- export -------------------------------------------------------------------------------------

    def columns(self, gpus: Iterable[int] | None = None) -> list[str]:
        """The CSV header for these GPUs (default: every GPU recorded) and the cores recorded."""
        cores = len(self.cores.fields) if self.cores is not None else 0
        return csv_columns(self._known_gpus(gpus), cores)

    def window(self, start: float, end: float, gpus: Iterable[int] | None = None) -> TelemetryWindow:
        """A copy of the ticks with start <= Unix time <= end, for exporting on another thread while
        recording goes on (copying a day of readings takes milliseconds; formatting it, seconds)."""
        indices = self._known_gpus(gpus)
        cores = self.cores.view(start, end) if self.cores is not None else None
        return TelemetryWindow(
            self.columns(indices),
            _copy(self.host.view(start, end)),
            _copy(cores) if cores is not None else None,
            {i: _copy(self.gpus[i].view(start, end)) for i in indices},
            self._texts.copy(),
        )

    def rows(self, start: float, end: float, gpus: Iterable[int] | None = None) -> Iterator[dict[str, Cell]]:
        """The ticks with start <= Unix time <= end as CSV rows (see gui.core.telemetry_csv), oldest first."""
        return self.window(start, end, gpus).rows()

    def export_csv(self, path: str | Path, start: float, end: float, gpus: Iterable[int] | None = None) -> int:
        """Write the ticks in [start, end] to a CSV file; returns the number of rows."""
        return self.window(start, end, gpus).export_csv(path)

    def _known_gpus(self, gpus: Iterable[int] | None) -> list[int]:
        return sorted(self.gpus) if gpus is None else [i for i in gpus if i in self.gpus]


class TelemetryWindow:
    """A stretch of the history, copied out of the ring buffers: safe to read on any thread."""

    def __init__(
        self,
        columns: list[str],
        host: SeriesView,
        cores: SeriesView | None,
        gpus: dict[int, SeriesView],
        texts: _TextCodes,
    ) -> None:
        self.columns = columns
        self._host, self._cores, self._gpus, self._texts = host, cores, gpus, texts

    def __len__(self) -> int:
        return len(self._host)

    def rows(self) -> Iterator[dict[str, Cell]]:
        """The ticks as CSV rows (see gui.core.telemetry_csv), oldest first."""
        count = len(self._host)
        parts = [_Columns(self._host, HOST_FIELDS, self._texts, count)]
        if self._cores is not None:
            parts.append(_Columns(self._cores, list(self._cores.columns), self._texts, count))
        gpu_parts = {i: _Columns(view, GPU_FIELDS, self._texts, count) for i, view in self._gpus.items()}
        for row, t in enumerate(self._host.t.tolist()):
            merged: dict[str, Cell] = {}
            for part in parts:
                merged.update(part.row(row))
            gpu_rows = {i: part.row(row) for i, part in gpu_parts.items()}
            yield telemetry_row(t, merged, gpu_rows)

    def export_csv(self, path: str | Path) -> int:
        """Write the rows to a CSV file; returns how many."""
        count = 0
        with Path(path).open("w", newline="", encoding="utf-8") as handle:
            writer = TelemetryCsvWriter(handle, self.columns)
            for row in self.rows():
                writer.write(row)
                count += 1
        return count


def _copy(view: SeriesView) -> SeriesView:
    return SeriesView(view.t.copy(), {name: column.copy() for name, column in view.columns.items()})


class _Columns:
    """One ring's window as Python lists (texts decoded), lined up with the host's window of `count` rows.

    Every tick appends to every ring, so a ring that started later than the host holds the newest rows
    only: its window is the end of the host's window. Rows it does not have come out empty."""

    def __init__(self, view: SeriesView, fields: Sequence[str], texts: _TextCodes, count: int) -> None:
        self._offset = count - len(view)
        self._lists: dict[str, list[Cell]] = {}
        for name in fields:
            column = view[name]
            self._lists[name] = [texts.text(v) for v in column.tolist()] if name in TEXT_FIELDS else column.tolist()

    def row(self, host_row: int) -> dict[str, Cell]:
        i = host_row - self._offset
        if i < 0:
            return {}
        return {name: values[i] for name, values in self._lists.items()}


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else value
