"""The monitor's chart stack: GPU and host readings over time, on one shared (linked) time axis.

Storage is one RingBuffer per GPU plus one for the host, each holding at least a day of 1 s ticks. Every
series of a tick is stamped with the tick's time, so all charts line up exactly and a CSV export can join
them row by row.

Drawing a day of data stays cheap because each redraw hands pyqtgraph only what the view needs: the
visible range (plus margins for panning), reduced to about two points (max, min) per pixel column by
`peak_decimate`, so spikes survive. Zoomed out past a minute per pixel column (24 h on screen), the curves
come from per-minute envelopes (`MinuteBuckets`, 1,440 a day) instead of 86,400 raw samples; the raw
rings remain the record (exports, zooming in). pyqtgraph's own clip-to-view and peak downsampling stay on
for the moments between a mouse zoom and the refetch it triggers. The X range is always set by us, never
autoranged (clip-to-view needs that), and Y ranges come from known scales (0-100 %, the card's limits,
its VRAM), so the charts do not jump about. Limit-like series (power limit, VRAM and RAM totals) change
rarely and are drawn dashed as steps through their change points only.

Missing readings are NaN and `connect="finite"` draws them as gaps; when zoomed out, a pixel column (or a
minute) is a gap only if every reading in it is missing, so a lost GPU shows but one missed read does not
perforate a day-long curve.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QGridLayout,
    QHBoxLayout,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.core.gpu_sample import GpuSample
from gui.core.ring import RingBuffer
from gui.services.telemetry import HostSample

__all__ = [
    "DAY_S",
    "GPU_FIELDS",
    "HOST_FIELDS",
    "MIN_CAPACITY",
    "WINDOWS",
    "ChartSpec",
    "CurveSpec",
    "MinuteBuckets",
    "TelemetryCharts",
    "capacity_for",
    "peak_decimate",
]

DAY_S = 86_400
MIN_CAPACITY = DAY_S  # a day at 1 s; faster sampling gets a bigger buffer (capacity_for)
WINDOWS: dict[str, float] = {"5 min": 300.0, "1 h": 3_600.0, "24 h": float(DAY_S)}
DEFAULT_WINDOW = "5 min"
BUCKET_S = 60.0  # zoomed out past this many seconds per pixel column, charts draw per-minute envelopes
_MIB_PER_GIB = 1024.0

# What the charts keep per GPU (a subset of GpuSample's series, in its units) and for the host.
GPU_FIELDS: tuple[str, ...] = (
    "temperature_c",
    "slowdown_c",
    "power_w",
    "power_limit_w",
    "power_max_w",
    "gpu_util_pct",
    "mem_util_pct",
    "memory_used_mib",
    "memory_total_mib",
    "sm_clock_mhz",
    "mem_clock_mhz",
)
HOST_FIELDS: tuple[str, ...] = (
    "cpu_avg_pct",
    "cpu_max_pct",
    "ram_used_mib",
    "ram_total_mib",
    "swap_used_mib",
    "swap_total_mib",
    "engine_tok_s",
)


def capacity_for(interval_s: float) -> int:
    """Ring capacity that holds at least 24 h at this sampling interval (and never less than 86,400)."""
    return max(MIN_CAPACITY, math.ceil(DAY_S / interval_s) + 1)


@dataclass(frozen=True)
class CurveSpec:
    field: str
    label: str
    colour: str
    level: bool = False  # a rarely changing limit: drawn dashed, as steps through its change points
    scale: float = 1.0  # stored value × scale = plotted value (MiB → GiB)


@dataclass(frozen=True)
class ChartSpec:
    key: str
    title: str
    unit: str
    source: str  # "gpu" or "host"
    curves: tuple[CurveSpec, ...]
    row: int
    column: int


TEMPERATURE_COLOUR = "#d32f2f"
_GIB = 1.0 / _MIB_PER_GIB
CHARTS: tuple[ChartSpec, ...] = (
    ChartSpec(
        "temperature", "Temperature", "°C", "gpu", (CurveSpec("temperature_c", "GPU", TEMPERATURE_COLOUR),), 0, 0
    ),
    ChartSpec(
        "power",
        "Power",
        "W",
        "gpu",
        (CurveSpec("power_w", "draw", "#ef6c00"), CurveSpec("power_limit_w", "enforced limit", "#37474f", level=True)),
        0,
        1,
    ),
    ChartSpec(
        "utilisation",
        "Utilisation",
        "%",
        "gpu",
        (CurveSpec("gpu_util_pct", "GPU", "#1e88e5"), CurveSpec("mem_util_pct", "memory", "#43a047")),
        1,
        0,
    ),
    ChartSpec(
        "vram",
        "VRAM",
        "GiB",
        "gpu",
        (
            CurveSpec("memory_used_mib", "used", "#8e24aa", scale=_GIB),
            CurveSpec("memory_total_mib", "total", "#616161", level=True, scale=_GIB),
        ),
        1,
        1,
    ),
    ChartSpec(
        "clocks",
        "Clocks",
        "MHz",
        "gpu",
        (CurveSpec("sm_clock_mhz", "SM", "#00897b"), CurveSpec("mem_clock_mhz", "memory", "#6d4c41")),
        2,
        0,
    ),
    ChartSpec(
        "cpu",
        "Host CPU",
        "%",
        "host",
        (CurveSpec("cpu_avg_pct", "average", "#3949ab"), CurveSpec("cpu_max_pct", "busiest core", "#f06292")),
        2,
        1,
    ),
    ChartSpec(
        "tokens",
        "Engine",
        "tok/s",
        "host",
        (CurveSpec("engine_tok_s", "generation", "#2e7d32"),),
        3,
        0,
    ),
    ChartSpec(
        "memory",
        "Host memory",
        "GiB",
        "host",
        (
            CurveSpec("ram_used_mib", "RAM", "#5e35b1", scale=_GIB),
            CurveSpec("swap_used_mib", "swap", "#c0ca33", scale=_GIB),
            CurveSpec("ram_total_mib", "RAM total", "#616161", level=True, scale=_GIB),
        ),
        3,
        1,
    ),
)
_BOTTOM_ROW = max(spec.row for spec in CHARTS)
SLOWDOWN_COLOUR = "#7b1fa2"
ALERT_COLOUR = "#ef6c00"


def _steps(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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


def _finite_max(values: Iterable[np.ndarray], default: float) -> float:
    best = default
    for v in values:
        if v.size:
            with np.errstate(all="ignore"):
                m = np.nanmax(v) if not np.isnan(v).all() else math.nan
            if math.isfinite(m):
                best = max(best, float(m))
    return best


class MinuteBuckets:
    """The highest and lowest value of every field per minute, kept beside a raw ring buffer.

    A zoomed-out view (a minute or more per pixel column, e.g. 24 h on screen) draws from these: 1,440
    buckets a day instead of 86,400 samples, which is what keeps a day-wide redraw inside one frame. The
    newest, still-open minute is not here yet; the chart takes it from the raw buffer.
    """

    def __init__(self, capacity: int, fields: tuple[str, ...], seconds: float = BUCKET_S) -> None:
        self.seconds = seconds
        self.fields = fields
        self.ring = RingBuffer(capacity, [f"{f}_{end}" for f in fields for end in ("hi", "lo")])
        self.open_start: float | None = None  # start of the minute being filled
        self._hi = np.full(len(fields), np.nan)
        self._lo = np.full(len(fields), np.nan)

    def add(self, t: float, values: dict[str, float | None]) -> None:
        start = math.floor(t / self.seconds) * self.seconds
        if start != self.open_start:
            self.close()
            self.open_start = start
        row = np.array([np.nan if values.get(f) is None else values[f] for f in self.fields], dtype=float)
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
        self.open_start = None
        self._hi[:] = np.nan
        self._lo[:] = np.nan

    def clear(self) -> None:
        self.ring.clear()
        self.open_start = None
        self._hi[:] = np.nan
        self._lo[:] = np.nan


class _Frame:
    """One source's data for one redraw: either raw samples, or minute buckets plus the raw open minute."""

    def __init__(self, ring: RingBuffer, buckets: MinuteBuckets, fetch: tuple[float, float], coarse: bool) -> None:
        self.coarse = coarse and buckets.open_start is not None
        if self.coarse:
            assert buckets.open_start is not None
            self.buckets = buckets.ring.view(fetch[0] - buckets.seconds, fetch[1])
            self.tail = ring.view(max(fetch[0], buckets.open_start), fetch[1])
            self.half = buckets.seconds / 2
        else:
            self.raw = ring.view(*fetch)

    def empty(self) -> bool:
        return (len(self.buckets) + len(self.tail) == 0) if self.coarse else len(self.raw) == 0

    def series(self, field: str, level: bool) -> tuple[np.ndarray, np.ndarray, bool]:
        """x, y and whether they are (possibly) views of a ring buffer."""
        if not self.coarse:
            return self.raw.t, self.raw[field], True
        t, hi, lo = self.buckets.t, self.buckets[f"{field}_hi"], self.buckets[f"{field}_lo"]
        if level:  # a limit line: its value per minute is enough
            x, y = t, hi
        else:  # max at the start of the minute, min at its middle: the envelope, as peak decimation draws it
            x = np.column_stack((t, t + self.half)).ravel()
            y = np.column_stack((hi, lo)).ravel()
        return np.concatenate((x, self.tail.t)), np.concatenate((y, self.tail[field])), False


class TelemetryCharts(QWidget):
    follow_changed = Signal(bool)
    paused_changed = Signal(bool)

    def __init__(
        self, *, capacity: int = MIN_CAPACITY, wall_offset: float | None = None, parent: QWidget | None = None
    ) -> None:
        """`wall_offset` turns the telemetry clock (monotonic seconds) into Unix time for the time axis and
        for exports; by default it is measured now."""
        super().__init__(parent)
        if capacity < MIN_CAPACITY:
            raise ValueError(f"charts keep at least a day of 1 s ticks ({MIN_CAPACITY}); got {capacity}")
        self.capacity = capacity
        self.wall_offset = time.time() - time.monotonic() if wall_offset is None else wall_offset
        self.host = RingBuffer(capacity, HOST_FIELDS)
        self.gpus: dict[int, RingBuffer] = {}
        bucket_capacity = math.ceil(capacity / BUCKET_S) + 2
        self._bucket_capacity = bucket_capacity
        self.host_buckets = MinuteBuckets(bucket_capacity, HOST_FIELDS)
        self.gpu_buckets: dict[int, MinuteBuckets] = {}
        self.gpu_index: int | None = None
        self._window_s = WINDOWS[DEFAULT_WINDOW]
        self._follow = True
        self._paused = False
        self._pause_t: float | None = None  # the live edge when paused: later ticks are not drawn
        self._gpu_charts_visible = True
        self._last_t: float | None = None
        self._alert_threshold_c: float | None = None
        self._slowdown_c: float | None = None

        self.plots: dict[str, pg.PlotWidget] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}  # by field name
        self._curve_data: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # what each curve was last given
        self._specs = {spec.key: spec for spec in CHARTS}
        grid = self._grid = QGridLayout()
        grid.setContentsMargins(0, 0, 0, 0)
        grid.setSpacing(2)
        for spec in CHARTS:
            plot = self._make_plot(spec)
            self.plots[spec.key] = plot
            grid.addWidget(plot, spec.row, spec.column)
        self._master = self.plots[CHARTS[0].key]
        self._link_x(self._master)
        for column in (0, 1):
            grid.setColumnStretch(column, 1)

        temperature = self.plots["temperature"].getPlotItem()
        self.slowdown_line = pg.InfiniteLine(
            angle=0,
            pen=pg.mkPen(SLOWDOWN_COLOUR, width=1, style=Qt.PenStyle.DashLine),
            label="slowdown {value:.0f} °C",
            labelOpts={"position": 0.05, "color": SLOWDOWN_COLOUR, "anchors": [(0, 0), (0, 0)]},
        )
        self.alert_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(ALERT_COLOUR, width=1, style=Qt.PenStyle.DotLine))
        for line in (self.slowdown_line, self.alert_line):
            line.setVisible(False)
            temperature.addItem(line, ignoreBounds=True)

        # Controls: pause, follow with a window, export.
        self.pause_button = QPushButton("Pause")
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip("Freeze the charts; readings keep being recorded")
        self.pause_button.toggled.connect(self.set_paused)
        self.follow_box = QCheckBox("Follow")
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip("Keep the live edge in view (mouse zoom or pan turns this off)")
        self.follow_box.toggled.connect(self.set_follow)
        self.window_combo = QComboBox()
        self.window_combo.addItems(list(WINDOWS))
        self.window_combo.setCurrentText(DEFAULT_WINDOW)
        self.window_combo.setToolTip("How much history the live view shows")
        self.window_combo.currentTextChanged.connect(lambda text: self.set_window(WINDOWS[text]))
        self.export_button = QPushButton("Export visible…")
        self.export_button.setToolTip("Write the readings in the visible time range to a CSV file")
        self.export_button.clicked.connect(self._ask_export)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        for widget in (self.pause_button, self.follow_box, self.window_combo, self.export_button):
            bar.addWidget(widget)
        bar.addStretch(1)
        self.controls = bar

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addLayout(grid, 1)

        # Many ticks can arrive before the UI gets round to drawing (a busy event loop): draw once for all.
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(0)
        self._redraw_timer.timeout.connect(self.redraw)

    def _make_plot(self, spec: ChartSpec) -> pg.PlotWidget:
        axis = pg.DateAxisItem(orientation="bottom")
        plot = pg.PlotWidget(background="w", axisItems={"bottom": axis})
        plot.setMinimumSize(200, 96)
        item = plot.getPlotItem()
        legend = " ".join(
            f"<span style='color:{c.colour}'>{'┅' if c.level else '━'} {c.label}</span>" for c in spec.curves
        )
        item.setTitle(f"<b>{spec.title}</b> ({spec.unit}) &nbsp;{legend}", size="8pt", color="#212121")
        item.layout.setRowFixedHeight(0, 16)
        item.titleLabel.setMaximumHeight(16)
        for name in ("left", "bottom"):
            ax = item.getAxis(name)
            ax.setPen(pg.mkPen("#9e9e9e"))
            ax.setTextPen(pg.mkPen("#424242"))
        left = item.getAxis("left")
        left.setWidth(40)
        left.enableAutoSIPrefix(False)
        # No grid: pyqtgraph draws it as part of the axes, and re-playing it every tick (the X range moves)
        # cost more than all the curves together in bench/chart_redraw.py.
        item.showAxis("bottom", spec.row == _BOTTOM_ROW)
        item.hideButtons()
        item.setMenuEnabled(False)  # its "View All"/transform menu would fight the follow logic
        view = item.getViewBox()
        view.setMouseEnabled(x=True, y=False)  # Y is set from known scales; zoom and pan are in time
        view.enableAutoRange(x=False, y=False)  # clip-to-view only clips when X is not autoranged
        view.setDefaultPadding(0.0)
        view.sigRangeChangedManually.connect(self._user_moved_view)
        # Set on the PlotItem before adding curves: PlotItem.addItem gives each curve the plot's own clip and
        # downsampling modes, overwriting whatever the curve was set to.
        item.setClipToView(True)
        item.setDownsampling(auto=True, mode="peak")
        for curve in spec.curves:
            pen = pg.mkPen(curve.colour, width=1)  # width 1 is a cosmetic pen: drawn as one fast polyline
            if curve.level:
                pen.setStyle(Qt.PenStyle.DashLine)
            data_item = pg.PlotDataItem(pen=pen, connect="finite", name=curve.label)
            item.addItem(data_item)
            self.curves[curve.field] = data_item
        return plot

    # --- data in ----------------------------------------------------------------------------------

    def add_tick(self, t: float, gpus: Iterable[GpuSample], host: HostSample, engine_tok_s: float) -> None:
        """Record one tick at telemetry time `t` (monotonic seconds) and ask for a redraw."""
        x = t + self.wall_offset
        if self._last_t is not None and x < self._last_t:
            x = self._last_t  # a clock step back must not break the buffers' ordering
        self._last_t = x
        seen = set()
        for sample in gpus:
            seen.add(sample.index)
            ring = self.gpus.get(sample.index)
            if ring is None:
                ring = self.gpus[sample.index] = RingBuffer(self.capacity, GPU_FIELDS)
                self.gpu_buckets[sample.index] = MinuteBuckets(self._bucket_capacity, GPU_FIELDS)
            values = {name: getattr(sample, name) for name in GPU_FIELDS}
            ring.append(x, **values)
            self.gpu_buckets[sample.index].add(x, values)
            if sample.index == self.gpu_index and sample.slowdown_c is not None:
                self._slowdown_c = sample.slowdown_c
        for index, ring in self.gpus.items():
            if index not in seen:  # a GPU missing from this tick is a gap, and keeps rows aligned for export
                ring.append(x)
                self.gpu_buckets[index].add(x, {})
        cores = host.cpu_pct
        host_values = {
            "cpu_avg_pct": sum(cores) / len(cores) if cores else None,
            "cpu_max_pct": max(cores) if cores else None,
            "ram_used_mib": _finite_or_none(host.ram_used_mib),
            "ram_total_mib": _finite_or_none(host.ram_total_mib),
            "swap_used_mib": _finite_or_none(host.swap_used_mib),
            "swap_total_mib": _finite_or_none(host.swap_total_mib),
            "engine_tok_s": _finite_or_none(engine_tok_s),
        }
        self.host.append(x, **host_values)
        self.host_buckets.add(x, host_values)
        self.request_redraw()

    def request_redraw(self) -> None:
        """Redraw once the event loop is free: a burst of queued ticks costs one redraw, not one each."""
        if not self._paused and not self._redraw_timer.isActive():
            self._redraw_timer.start()

    def clear(self) -> None:
        self.host.clear()
        self.host_buckets.clear()
        self.gpus.clear()
        self.gpu_buckets.clear()
        self._last_t = None
        self.redraw()

    # --- view state -------------------------------------------------------------------------------

    def select_gpu(self, index: int | None) -> None:
        self.gpu_index = index
        self._slowdown_c = None
        ring = self.gpus.get(index) if index is not None else None
        if ring is not None and ring.last is not None:
            value = ring.last[1]["slowdown_c"]
            self._slowdown_c = value if math.isfinite(value) else None
        self.redraw()

    def set_gpu_charts_visible(self, visible: bool) -> None:
        """Hide the GPU charts (no driver, no GPU): the host charts are then stacked full width."""
        self._gpu_charts_visible = visible
        host = [spec for spec in CHARTS if spec.source == "host"]
        for spec in CHARTS:
            plot = self.plots[spec.key]
            if spec.source == "gpu":
                plot.setVisible(visible)
                continue
            self._grid.removeWidget(plot)
            if visible:
                self._grid.addWidget(plot, spec.row, spec.column)
            else:
                self._grid.addWidget(plot, host.index(spec), 0, 1, 2)
        self._grid.activate()  # now, not at the next event loop pass: a screenshot may come first
        # pyqtgraph lines up linked views that overlap on screen by pixels, so the X master must be a chart
        # that is shown, with the same width as the others in its column.
        previous = self.visible_range()
        self._master = self.plots[CHARTS[0].key if visible else host[0].key]
        self._link_x(self._master)
        self._master.setXRange(*previous, padding=0.0)
        # The time axis belongs on the lowest visible chart of each column.
        for spec in CHARTS:
            bottom = spec.row == _BOTTOM_ROW if visible else spec is host[-1]
            self.plots[spec.key].getPlotItem().showAxis("bottom", bottom)

    def _link_x(self, master: pg.PlotWidget) -> None:
        master.setXLink(None)
        for plot in self.plots.values():
            if plot is not master:
                plot.setXLink(master)

    @property
    def gpu_charts_visible(self) -> bool:
        return self._gpu_charts_visible

    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        """Freeze the charts at the current live edge; ticks keep being recorded, and zoom and pan still
        work on what was recorded up to the pause."""
        if paused == self._paused:
            return
        self._paused = paused
        self._pause_t = self._last_t if paused else None
        self.pause_button.setChecked(paused)
        self.pause_button.setText("Resume" if paused else "Pause")
        self._redraw_timer.stop()
        if not paused:
            self.redraw()
        self.paused_changed.emit(paused)

    @property
    def follow(self) -> bool:
        return self._follow

    def set_follow(self, follow: bool) -> None:
        if follow == self._follow:
            return
        self._follow = follow
        self.follow_box.setChecked(follow)
        if not self._paused:
            self.redraw()
        self.follow_changed.emit(follow)

    @property
    def window_s(self) -> float:
        return self._window_s

    def set_window(self, seconds: float) -> None:
        """The span the live view shows; choosing one also returns to the live edge."""
        if not seconds > 0:
            raise ValueError(f"window must be positive (got {seconds})")
        self._window_s = float(seconds)
        label = next((k for k, v in WINDOWS.items() if v == seconds), None)
        if label is not None and self.window_combo.currentText() != label:
            self.window_combo.setCurrentText(label)
        if self._follow:
            if not self._paused:
                self.redraw()
        else:
            self.set_follow(True)

    def set_alert_threshold(self, celsius: float | None) -> None:
        self._alert_threshold_c = celsius
        self.alert_line.setVisible(celsius is not None)
        if celsius is not None:
            self.alert_line.setValue(celsius)

    def visible_range(self) -> tuple[float, float]:
        """The X range on screen, in Unix seconds."""
        (x0, x1), _ = self._master.getPlotItem().getViewBox().viewRange()
        return float(x0), float(x1)

    def _user_moved_view(self, *_: object) -> None:
        # Mouse zoom or pan means "let me look at this": stop chasing the live edge, and fetch the data for
        # the new range (the curves only hold the old range, decimated).
        if self._follow:
            self.set_follow(False)
        self._redraw_timer.start()

    # --- drawing ----------------------------------------------------------------------------------

    def redraw(self) -> None:
        """Hand the curves the data of the visible range (reduced to about two points per pixel column)
        and move the view; the paint follows in the event loop. While paused, nothing after the pause is
        drawn and the live edge stays where it was."""
        self._redraw_timer.stop()
        end = self._pause_t if self._paused else self._last_t
        if self._follow and not self._paused:
            right = end if end is not None else time.time()
            left = right - self._window_s
            # A sliver to the left so the line reaches the edge; nothing to the right: it is the live edge.
            fetch = (left - 0.02 * self._window_s, right)
            self._master.setXRange(left, right, padding=0.0)
        else:
            left, right = self.visible_range()
            span = right - left
            fetch = (left - span, right + span)  # a span either side: a pan shows data before the refetch
        if end is not None:
            fetch = (fetch[0], min(fetch[1], end))
        pixels = max(int(self._master.getPlotItem().getViewBox().width()), 100)
        # Two points (max, min) per pixel column, over the fetched span's share of the pixels.
        columns = int(pixels * (fetch[1] - fetch[0]) / max(right - left, 1e-9))
        coarse = (right - left) / pixels >= BUCKET_S
        index = self.gpu_index
        host = _Frame(self.host, self.host_buckets, fetch, coarse)
        gpu: _Frame | None = None
        if index is not None and index in self.gpus and self._gpu_charts_visible:
            gpu = _Frame(self.gpus[index], self.gpu_buckets[index], fetch, coarse)
        for spec in CHARTS:
            frame = host if spec.source == "host" else gpu
            for curve in spec.curves:
                self._set_curve(curve, frame, columns)
        self._update_y_ranges(gpu is not None, left, right)
        self._update_threshold_lines()

    def _set_curve(self, curve: CurveSpec, frame: _Frame | None, columns: int) -> None:
        item = self.curves[curve.field]
        if frame is None or frame.empty():
            self._curve_data.pop(curve.field, None)
            item.setData([], [])
            return
        x, y, shared = frame.series(curve.field, curve.level)
        if curve.level:
            x, y = _steps(x, y)
        else:
            x, y = peak_decimate(x, y, columns)
        if curve.scale != 1.0:
            y = y * curve.scale
        if shared and np.shares_memory(x, frame.raw.t):
            # The curve keeps its arrays until the next redraw (forever while paused); slices of a full ring
            # buffer would be overwritten under it by new ticks.
            x = x.copy()
        if shared and np.shares_memory(y, frame.raw[curve.field]):
            y = y.copy()
        self._curve_data[curve.field] = (x, y)
        item.setData(x, y, connect="finite")

    def _update_y_ranges(self, gpu_shown: bool, left: float, right: float) -> None:
        def top(*fields: str, default: float) -> float:
            """The highest value drawn in the visible range (in stored units), or `default` if higher."""
            best = default
            for field in fields:
                data = self._curve_data.get(field)
                if data is None:
                    continue
                x, y = data
                lo, hi = np.searchsorted(x, (left, right))
                best = _finite_max([y[max(lo - 1, 0) : hi + 1]], best)
            return best

        def set_range(key: str, low: float, high: float) -> None:
            self.plots[key].getPlotItem().getViewBox().setYRange(low, high, padding=0.0)

        # Percentages have a fixed scale; the rest scale to the larger of the card's limits and the data.
        set_range("utilisation", 0, 103)
        set_range("cpu", 0, 103)
        if gpu_shown:
            floor = max(95.0, (self._alert_threshold_c or 0) + 5.0, (self._slowdown_c or 0) + 5.0)
            set_range("temperature", 20.0, max(floor, top("temperature_c", default=0.0) + 5.0))
            set_range("power", 0, top("power_w", "power_limit_w", default=100.0) * 1.08)
            set_range("vram", 0, top("memory_used_mib", "memory_total_mib", default=1.0) * 1.08)
            set_range("clocks", 0, top("sm_clock_mhz", "mem_clock_mhz", default=500.0) * 1.1)
        set_range("memory", 0, top("ram_used_mib", "swap_used_mib", "ram_total_mib", default=1.0) * 1.08)
        set_range("tokens", 0, top("engine_tok_s", default=10.0) * 1.15)

    def _update_threshold_lines(self) -> None:
        slowdown = self._slowdown_c if self._gpu_charts_visible else None
        self.slowdown_line.setVisible(slowdown is not None)
        if slowdown is not None:
            self.slowdown_line.setValue(slowdown)

    # --- export -----------------------------------------------------------------------------------

    def export_visible_csv(self, path: str | Path) -> int:
        """Write every tick in the visible time range (selected GPU and host) to a CSV file; returns the
        number of rows. Missing values are empty cells."""
        left, right = self.visible_range()
        host = self.host.view(left, right)
        gpu_ring = self.gpus.get(self.gpu_index) if self.gpu_index is not None else None
        gpu = gpu_ring.view(left, right) if gpu_ring is not None else None
        prefix = f"gpu{self.gpu_index}_"
        gpu_columns = [prefix + name for name in GPU_FIELDS] if gpu is not None else []
        # Both kinds of ring are stamped with the same tick times: join them on the timestamp.
        gpu_rows: dict[float, int] = {}
        if gpu is not None:
            gpu_rows = {float(t): i for i, t in enumerate(gpu.t)}
        with Path(path).open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(["time_unix", "time_local", *gpu_columns, *HOST_FIELDS])
            for i, t in enumerate(host.t):
                row = [f"{t:.3f}", dt.datetime.fromtimestamp(float(t)).isoformat(timespec="seconds")]
                if gpu is not None:
                    j = gpu_rows.get(float(t))
                    row += [_cell(gpu[name][j]) if j is not None else "" for name in GPU_FIELDS]
                row += [_cell(host[name][i]) for name in HOST_FIELDS]
                writer.writerow(row)
        return len(host)

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Export visible range", "telemetry.csv", "CSV files (*.csv)")
        if path:
            self.export_visible_csv(path)


def _finite_or_none(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _cell(value: float) -> str:
    return "" if not math.isfinite(value) else f"{value:g}"
