"""The monitor's chart stack: draws a TelemetryHistory's GPU and host series on one shared (linked) time axis.

The widget keeps only view state (window, follow, pause, which GPU, Y ranges) and pyqtgraph items; the
data, and the choice of raw samples or minute envelopes for a range, are gui.core.telemetry_history's. The GPU
charts and their lines are the declarations' (gui/core/telemetry_fields.py: a ChartGroup each, a Curve per
reading drawn in it); the host charts are declared here.
Each redraw hands pyqtgraph only what the view needs: the visible range (plus margins for panning), about
two points per pixel column. pyqtgraph's own clip-to-view and peak downsampling stay on for the moments
between a mouse zoom and the refetch it triggers. The X range is always set by us, never autoranged
(clip-to-view needs that), and Y ranges come from known scales (0-100 %, the card's limits, its VRAM), so
the charts do not jump about. Limit-like series (power limit, VRAM and RAM totals) are drawn dashed, as
steps. Missing readings are NaN and `connect="finite"` draws them as gaps.

With several GPUs (`set_gpus`) every GPU chart draws every card, one colour per GPU (the palette's gpu_*
series) named in one legend above the charts: temperature, power draw, GPU utilisation, VRAM used and
SM clock as one solid line per GPU, and the power limit and VRAM total as a dashed line per GPU in the
same colour (flat steps, so they stay readable). The second series of utilisation (memory) and clocks
(memory clock) are left out there: two lines per GPU would be eight on four cards; the readout has them.
"""

from __future__ import annotations

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
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.core.telemetry_fields import CHART_GROUPS, READINGS, ChartGroup, YRange
from gui.core.telemetry_history import DAY_S, Frame, Span, TelemetryHistory, TelemetryWindow, plan_span
from gui.core.theme import LIGHT, Palette, gpu_series
from gui.ui.background import Background
from gui.ui.i18n import Tr, error_text
from gui.ui.theme import current_palette, follow_theme

__all__ = [
    "WINDOWS",
    "ChartSpec",
    "CurveSpec",
    "TelemetryCharts",
    "colour_curve",
    "colour_plot",
]

tr = Tr("charts")
WINDOWS: dict[str, float] = {tr.mark("5 min"): 300.0, tr.mark("1 h"): 3_600.0, tr.mark("24 h"): float(DAY_S)}
DEFAULT_WINDOW = "5 min"
MAX_CHARTED_GPUS = 8  # GPUs drawn together on the shared charts: one colour each, and each costs every redraw
_MIB_PER_GIB = 1024.0


@dataclass(frozen=True)
class CurveSpec:
    field: str
    label: str
    level: bool = False  # a rarely changing limit: drawn dashed, as steps through its change points
    scale: float = 1.0  # stored value × scale = plotted value (MiB → GiB)
    colours: tuple[str, str] | None = None  # (light, dark) where the palettes have no colour for the field

    @property
    def colour(self) -> str:
        """Its colour in the palette in use (gui.core.theme, by field)."""
        return self.colour_in(current_palette())

    def colour_in(self, palette: Palette) -> str:
        """Its colour in `palette`: the palette's for its field, else its own."""
        if self.colours is not None and self.field not in palette.series:
            return self.colours[1] if palette.dark else self.colours[0]
        return palette.series[self.field]


@dataclass(frozen=True)
class ChartSpec:
    key: str
    title: str
    unit: str
    source: str  # "gpu" or "host"
    curves: tuple[CurveSpec, ...]
    row: int
    column: int
    y_range: YRange
    shared: tuple[str, ...] = ()  # the fields drawn per GPU when several GPUs share the chart


TEMPERATURE_COLOUR = LIGHT.series["temperature_c"]  # as drawn in the light palette
_GIB = 1.0 / _MIB_PER_GIB
# The host's charts, after the GPU charts (gui/core/telemetry_fields.py CHART_GROUPS).
_HOST_CHARTS: tuple[tuple[ChartGroup, tuple[CurveSpec, ...]], ...] = (
    (
        ChartGroup("cpu", tr.mark("Host CPU"), "%", YRange(top=103.0)),
        (CurveSpec("cpu_avg_pct", tr.mark("average")), CurveSpec("cpu_max_pct", tr.mark("busiest core"))),
    ),
    (
        ChartGroup("tokens", tr.mark("Engine"), "tok/s", YRange(least=10.0, headroom=1.15)),
        (CurveSpec("engine_tok_s", tr.mark("generation")),),
    ),
    (
        ChartGroup("memory", tr.mark("Host memory"), "GiB", YRange(least=1.0, headroom=1.08)),
        (
            CurveSpec("ram_used_mib", tr.mark("RAM"), scale=_GIB),
            CurveSpec("swap_used_mib", tr.mark("swap"), scale=_GIB),
            CurveSpec("ram_total_mib", tr.mark("RAM total"), level=True, scale=_GIB),
        ),
    ),
)


def _chart_specs() -> tuple[ChartSpec, ...]:
    """The GPU charts with their declared readings' curves, then the host charts, two to a row."""
    charts: list[tuple[ChartGroup, str, tuple[CurveSpec, ...], tuple[str, ...]]] = []
    for group in CHART_GROUPS:
        drawn = [(r.name, r.curve) for r in READINGS if r.curve is not None and r.curve.chart == group.key]
        curves = tuple(CurveSpec(name, c.label, c.level, c.scale, c.colours) for name, c in drawn)
        shared = tuple(name for name, c in drawn if c.shared)
        charts.append((group, "gpu", curves, shared))
    charts += [(group, "host", curves, ()) for group, curves in _HOST_CHARTS]
    return tuple(
        ChartSpec(group.key, group.title, group.unit, source, curves, *divmod(i, 2), group.y_range, shared)
        for i, (group, source, curves, shared) in enumerate(charts)
    )


CHARTS: tuple[ChartSpec, ...] = _chart_specs()
_BOTTOM_ROW = max(spec.row for spec in CHARTS)
_FIELD_CHART = {curve.field: spec.key for spec in CHARTS for curve in spec.curves}
_LEVEL_FIELDS = frozenset(curve.field for spec in CHARTS for curve in spec.curves if curve.level)


def colour_plot(plot: pg.PlotWidget, palette: Palette) -> None:
    """A plot's background, axes and legend in `palette`'s colours (its curves are its owner's)."""
    plot.setBackground(palette.chart_background)
    item = plot.getPlotItem()
    for name in ("left", "bottom"):
        ax = item.getAxis(name)
        ax.setPen(pg.mkPen(palette.chart_axis))
        ax.setTextPen(pg.mkPen(palette.chart_text))
    legend = item.legend
    if legend is not None:
        legend.setLabelTextColor(palette.chart_text)
        for _sample, label in legend.items:
            label.setText(label.text)  # setLabelTextColor keeps the colour for the next text; show it now


def colour_curve(curve: pg.PlotDataItem, palette: Palette, series: str, width: int = 2) -> None:
    """A curve and its symbols in the colour of `series` (a key of the palette's series)."""
    colour = palette.series[series]
    curve.setPen(pg.mkPen(colour, width=width))
    curve.setSymbolPen(pg.mkPen(colour))
    curve.setSymbolBrush(pg.mkBrush(colour))


def _finite_max(values: Iterable[np.ndarray], default: float) -> float:
    best = default
    for v in values:
        if v.size:
            with np.errstate(all="ignore"):
                m = np.nanmax(v) if not np.isnan(v).all() else math.nan
            if math.isfinite(m):
                best = max(best, float(m))
    return best


class TelemetryCharts(QWidget):
    follow_changed = Signal(bool)
    paused_changed = Signal(bool)
    exported = Signal(str)  # how an export went, in words

    def __init__(self, history: TelemetryHistory, *, parent: QWidget | None = None) -> None:
        """Draws `history`, which its owner records ticks into (then calls `request_redraw`)."""
        super().__init__(parent)
        self.history = history
        self._exporter = Background("csv-export", parent=self)
        self.gpu_index: int | None = None
        self._window_s = WINDOWS[DEFAULT_WINDOW]
        self._follow = True
        self._paused = False
        self._pause_t: float | None = None  # the live edge when paused: later ticks are not drawn
        self._gpu_charts_visible = True
        self._alert_threshold_c: float | None = None

        self.plots: dict[str, pg.PlotWidget] = {}
        self.curves: dict[str, pg.PlotDataItem] = {}  # by field name
        # With several GPUs: their legend names in drawing order, and a curve per (GPU, field).
        self.shared_gpus: dict[int, str] = {}
        self.gpu_curves: dict[tuple[int, str], pg.PlotDataItem] = {}
        # What each curve was last given, by (field, GPU index; None for the single-GPU and host curves).
        self._curve_data: dict[tuple[str, int | None], tuple[np.ndarray, np.ndarray]] = {}
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
            label=tr("slowdown {value:.0f} °C"),
            labelOpts={"position": 0.05, "anchors": [(0, 0), (0, 0)]},
        )
        self.alert_line = pg.InfiniteLine(angle=0)
        for line in (self.slowdown_line, self.alert_line):
            line.setVisible(False)
            temperature.addItem(line, ignoreBounds=True)

        # Controls: pause, follow with a window, export.
        self.pause_button = QPushButton(tr("Pause"))
        self.pause_button.setCheckable(True)
        self.pause_button.setToolTip(tr("Freeze the charts; readings keep being recorded"))
        self.pause_button.toggled.connect(self.set_paused)
        self.follow_box = QCheckBox(tr("Follow"))
        self.follow_box.setChecked(True)
        self.follow_box.setToolTip(tr("Keep the live edge in view (mouse zoom or pan turns this off)"))
        self.follow_box.toggled.connect(self.set_follow)
        self.window_combo = QComboBox()
        for label, seconds in WINDOWS.items():
            self.window_combo.addItem(tr(label), seconds)
        self.window_combo.setCurrentIndex(self.window_combo.findData(WINDOWS[DEFAULT_WINDOW]))
        self.window_combo.setToolTip(tr("How much history the live view shows"))
        self.window_combo.currentIndexChanged.connect(
            lambda position: self.set_window(float(self.window_combo.itemData(position)))
        )
        self.export_button = QPushButton(tr("Export visible…"))
        self.export_button.setToolTip(tr("Write the readings in the visible time range to a CSV file"))
        self.export_button.clicked.connect(self._ask_export)
        bar = QHBoxLayout()
        bar.setContentsMargins(0, 0, 0, 0)
        for widget in (self.pause_button, self.follow_box, self.window_combo, self.export_button):
            bar.addWidget(widget)
        bar.addStretch(1)
        self.controls = bar
        # Which colour is which GPU, for every chart at once (shown with several GPUs).
        self.gpu_legend = QLabel()
        self.gpu_legend.setWordWrap(True)
        self.gpu_legend.setVisible(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addLayout(bar)
        layout.addWidget(self.gpu_legend)
        layout.addLayout(grid, 1)

        # Many ticks can arrive before the UI gets round to drawing (a busy event loop): draw once for all.
        self._redraw_timer = QTimer(self)
        self._redraw_timer.setSingleShot(True)
        self._redraw_timer.setInterval(0)
        self._redraw_timer.timeout.connect(self.redraw)
        follow_theme(self, self.apply_palette)

    def apply_palette(self, palette: Palette) -> None:
        """Background, titles, axes, curves and limit lines in `palette`'s colours."""
        shared = self.shared
        for spec in CHARTS:
            plot = self.plots[spec.key]
            colour_plot(plot, palette)
            item = plot.getPlotItem()
            if shared and spec.source == "gpu":  # the colours are the GPUs' (gpu_legend): line styles only
                legend = " ".join(
                    f"{'┅' if c.level else '━'} {tr(c.label)}" for c in spec.curves if c.field in spec.shared
                )
            else:
                legend = " ".join(
                    f"<span style='color:{c.colour_in(palette)}'>{'┅' if c.level else '━'}</span> {tr(c.label)}"
                    for c in spec.curves
                )
            title = f"<b>{tr(spec.title)}</b> ({spec.unit}) &nbsp;{legend}"
            item.setTitle(title, size="8pt", color=palette.chart_text)
            for curve in spec.curves:
                pen = pg.mkPen(curve.colour_in(palette), width=1)  # width 1: a cosmetic pen, one fast polyline
                if curve.level:
                    pen.setStyle(Qt.PenStyle.DashLine)
                self.curves[curve.field].setPen(pen)
        for (index, field), data_item in self.gpu_curves.items():
            pen = pg.mkPen(palette.series[self._gpu_series(index)], width=1)
            if field in _LEVEL_FIELDS:
                pen.setStyle(Qt.PenStyle.DashLine)
            data_item.setPen(pen)
        self.gpu_legend.setText(
            " &nbsp; ".join(
                f"<span style='color:{palette.series[self._gpu_series(index)]}'>━━</span> {_escape(name)}"
                for index, name in self.shared_gpus.items()
            )
        )
        self.slowdown_line.setPen(pg.mkPen(palette.slowdown_line, width=1, style=Qt.PenStyle.DashLine))
        self.slowdown_line.label.setColor(palette.slowdown_line)
        self.alert_line.setPen(pg.mkPen(palette.alert_line, width=1, style=Qt.PenStyle.DotLine))

    def _make_plot(self, spec: ChartSpec) -> pg.PlotWidget:
        axis = pg.DateAxisItem(orientation="bottom")
        plot = pg.PlotWidget(axisItems={"bottom": axis})  # colours: apply_palette
        plot.setMinimumSize(160, 64)
        item = plot.getPlotItem()
        item.setTitle(f"<b>{tr(spec.title)}</b>", size="8pt")
        item.layout.setRowFixedHeight(0, 16)
        item.titleLabel.setMaximumHeight(16)
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
            data_item = pg.PlotDataItem(connect="finite", name=curve.label)
            item.addItem(data_item)
            self.curves[curve.field] = data_item
        return plot

    # --- view state -------------------------------------------------------------------------------

    def request_redraw(self) -> None:
        """Redraw once the event loop is free: a burst of queued ticks costs one redraw, not one each."""
        if not self._paused and not self._redraw_timer.isActive():
            self._redraw_timer.start()

    def select_gpu(self, index: int | None) -> None:
        self.gpu_index = index
        self.redraw()

    @property
    def shared(self) -> bool:
        """Whether the GPU charts draw several GPUs at once."""
        return len(self.shared_gpus) > 1

    def set_gpus(self, gpus: dict[int, str]) -> None:
        """The GPUs to draw, by index, with their legend names ("GPU 0 P40"), in drawing (colour) order.
        With two or more, every GPU chart draws all of them; with one, the selected GPU's series as before."""
        # Past MAX_CHARTED_GPUS the charts draw the first ones (this machine's come first): every curve costs
        # each redraw, and more lines than that do not read as separate GPUs anyway.
        gpus = dict(list(gpus.items())[:MAX_CHARTED_GPUS])
        if gpus == self.shared_gpus:
            return
        for (_index, field), data_item in self.gpu_curves.items():
            self.plots[_FIELD_CHART[field]].getPlotItem().removeItem(data_item)
        self.gpu_curves.clear()
        self._curve_data = {k: v for k, v in self._curve_data.items() if k[1] is None}
        self.shared_gpus = gpus if len(gpus) > 1 else {}
        for spec in CHARTS:
            for curve in spec.curves:
                # The single-GPU curves stay in place (their colours, their tests); empty while shared.
                if spec.source == "gpu" and self.shared:
                    self.curves[curve.field].setData([], [])
        for index in self.shared_gpus:
            for spec in CHARTS:
                for field in spec.shared:
                    data_item = pg.PlotDataItem(connect="finite")
                    self.plots[spec.key].getPlotItem().addItem(data_item)
                    self.gpu_curves[(index, field)] = data_item
        self.gpu_legend.setVisible(self.shared)
        self.apply_palette(current_palette())
        self.redraw()

    def _gpu_series(self, index: int) -> str:
        return gpu_series(list(self.shared_gpus).index(index))

    def gpu_colour(self, index: int) -> str:
        """The colour GPU `index` is drawn in while several GPUs share the charts."""
        return current_palette().series[self._gpu_series(index)]

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
        self._pause_t = self.history.last_t if paused else None
        self.pause_button.setChecked(paused)
        self.pause_button.setText(tr("Resume") if paused else tr("Pause"))
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
        position = self.window_combo.findData(float(seconds))
        if position >= 0 and self.window_combo.currentIndex() != position:
            self.window_combo.setCurrentIndex(position)
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
        end = self._pause_t if self._paused else self.history.last_t
        if self._follow and not self._paused:
            right = end if end is not None else time.time()
            left = right - self._window_s
            # A sliver to the left so the line reaches the edge; nothing to the right: it is the live edge.
            fetch = (left - 0.02 * self._window_s, right)
            self._master.setXRange(left, right, padding=0.0)
        else:
            left, right = self.visible_range()
            width = right - left
            fetch = (left - width, right + width)  # a width either side: a pan shows data before the refetch
        if end is not None:
            fetch = (fetch[0], min(fetch[1], end))
        pixels = max(int(self._master.getPlotItem().getViewBox().width()), 100)
        span = plan_span(fetch, (left, right), pixels)
        host = self.history.host_frame(span)
        gpu = self._gpu_frame_for(span)
        for spec in CHARTS:
            frame = host if spec.source == "host" else gpu
            for curve in spec.curves:
                self._set_curve(curve, frame)
        shown = gpu is not None
        if self.shared and self._gpu_charts_visible:
            for index in self.shared_gpus:
                frame = self.history.gpu_frame(index, span)
                shown = shown or frame is not None
                for spec in CHARTS:
                    for curve in spec.curves:
                        if curve.field in spec.shared:
                            self._set_curve(curve, frame, index)
        self._update_y_ranges(shown, left, right)
        self._update_threshold_lines()

    def _gpu_frame_for(self, span: Span) -> Frame | None:
        if self.gpu_index is None or not self._gpu_charts_visible or self.shared:
            return None
        return self.history.gpu_frame(self.gpu_index, span)

    def _selected_slowdown_c(self) -> float | None:
        """The slowdown line: the selected GPU's, or with several GPUs the lowest (the first card to slow)."""
        if self.shared:
            known = [c for c in (self.history.slowdown_c(i) for i in self.shared_gpus) if c is not None]
            return min(known) if known else None
        return self.history.slowdown_c(self.gpu_index) if self.gpu_index is not None else None

    def _set_curve(self, curve: CurveSpec, frame: Frame | None, gpu: int | None = None) -> None:
        item = self.curves[curve.field] if gpu is None else self.gpu_curves[(gpu, curve.field)]
        key = (curve.field, gpu)
        if frame is None or frame.empty():
            self._curve_data.pop(key, None)
            item.setData([], [])
            return
        x, y = frame.curve(curve.field, curve.level)
        if curve.scale != 1.0:
            y = y * curve.scale
        self._curve_data[key] = (x, y)
        item.setData(x, y, connect="finite")

    def _update_y_ranges(self, gpu_shown: bool, left: float, right: float) -> None:
        def drawn(fields: set[str]) -> float:
            """The highest value drawn in the visible range, as plotted (-inf where nothing is)."""
            best = -math.inf
            for (field, _gpu), (x, y) in self._curve_data.items():
                if field not in fields:
                    continue
                lo, hi = np.searchsorted(x, (left, right))
                best = _finite_max([y[max(lo - 1, 0) : hi + 1]], best)
            return best

        # Fixed scales (percentages) always; the rest scale to the larger of the card's limits and the data.
        for spec in CHARTS:
            if spec.y_range.top is None and spec.source == "gpu" and not gpu_shown:
                continue
            highest = drawn({curve.field for curve in spec.curves})
            if spec.key == "temperature":  # the slowdown and alert lines always have room
                highest = max(highest, self._alert_threshold_c or -math.inf, self._selected_slowdown_c() or -math.inf)
            box = self.plots[spec.key].getPlotItem().getViewBox()
            box.setYRange(spec.y_range.low, spec.y_range.high(highest), padding=0.0)

    def _update_threshold_lines(self) -> None:
        slowdown = self._selected_slowdown_c() if self._gpu_charts_visible else None
        self.slowdown_line.setVisible(slowdown is not None)
        if slowdown is not None:
            self.slowdown_line.setValue(slowdown)

    # --- export -----------------------------------------------------------------------------------

    def shutdown(self) -> None:
        """An export still being written finishes on its own; nobody is told."""
        self._exporter.shutdown()

    def visible_window(self) -> TelemetryWindow:
        """The ticks in the visible time range (the selected GPU, or every GPU drawn, and the host), copied."""
        gpus = list(self.shared_gpus) if self.shared else [self.gpu_index] if self.gpu_index is not None else []
        return self.history.window(*self.visible_range(), gpus=gpus)

    def export_visible_csv(self, path: str | Path) -> int:
        """Write every tick in the visible time range to a CSV file (here, at once); returns the rows written."""
        return self.visible_window().export_csv(path)

    def _ask_export(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self, tr("Export visible range"), "telemetry.csv", tr("CSV files (*.csv)")
        )
        if not path:
            return
        # A day of readings takes seconds to format: on a worker thread, from a copy taken now.
        window = self.visible_window()
        self.exported.emit(tr("exporting {rows} readings to {path}…").format(rows=f"{len(window):,}", path=path))
        self._exporter.run(
            lambda: window.export_csv(path),
            lambda rows: self.exported.emit(
                tr("exported {rows} readings to {path}").format(rows=f"{rows:,}", path=path)
            ),
            lambda exc: self.exported.emit(
                tr("cannot export to {path}: {error}").format(path=path, error=error_text(exc, "charts"))
            ),
        )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
