"""The power-cap sweep in the window (Tune tab, "Power caps"): which caps, how long each is measured and about how
long the whole sweep takes before it starts; a row and a chart point per cap as it is measured; the lowest cap
within the chosen loss of the best speed, applied with one click through the Monitor's power panel.

The sweep itself is gui/services/power_sweep.py: it runs on its own thread (PowerSweepRunner), decodes on the
window's one engine (its events reach it through the engine bridge's tap, on the reader thread), samples the
card, and restores the limit it found however it ends — Stop, an error, the engine dying. On a real card a
watchdog process started before the first cap restores it even if the window itself dies.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from dataclasses import dataclass
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui.core.gpu_sample import GpuSample
from gui.core.power_sweep import (
    DEFAULT_LOSS_PCT,
    LIST_EXAMPLE,
    SIMULATED_NOTE,
    CapLimits,
    SweepResult,
    SweepRow,
    check_loss,
    default_caps,
    parse_caps,
    recommend,
    row_cells,
    table_header,
)
from gui.core.theme import Palette
from gui.core.words import message_of
from gui.services.power_sweep import (
    DEFAULT_MEASURE_S,
    PowerSweep,
    SweepProgress,
    Workload,
)
from gui.ui.charts import colour_curve, colour_plot
from gui.ui.i18n import Tr, core_text, error_text
from gui.ui.plain import plain_label
from gui.ui.theme import follow_theme, themed_style

__all__ = ["PowerSweepRunner", "PowerSweepView", "SweepPlan"]

log = logging.getLogger(__name__)
tr = Tr("power_sweep_view")

MAX_PHASE_S = 3600.0  # a warm-up or measurement longer than an hour per cap is a typing mistake
PHASES = {"capping": tr.mark("applying the cap"), "warm-up": tr.mark("warming up"), "measuring": tr.mark("measuring")}


@dataclass(frozen=True)
class SweepPlan:
    """What the controls describe: the caps (ascending), the allowed loss and the workload at each cap."""

    caps: tuple[int, ...]
    loss_pct: float
    workload: Workload


class PowerSweepRunner(QObject):
    """One PowerSweep on a thread of its own; its rows, progress and result come back as signals (queued to the
    UI thread). ``wait`` lets the window give the restore a moment when it closes mid-sweep."""

    row = Signal(object)  # SweepRow
    progress = Signal(object)  # SweepProgress
    finished = Signal(object)  # SweepResult
    failed = Signal(object)  # str: could not start (caps against the card, no readable limit, no watchdog), or crashed

    def __init__(self, sweep: PowerSweep, plan: SweepPlan, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.sweep = sweep
        self.plan = plan
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="power-sweep", daemon=True)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.sweep.stop()

    def wait(self, timeout_s: float) -> bool:
        """Block until the sweep ended (limit restored) or ``timeout_s`` passed; True if it ended."""
        return self._done.wait(timeout_s)

    def _run(self) -> None:  # the sweep's thread
        try:
            result = self.sweep.run(
                self.plan.caps, on_row=self._emit_row, on_progress=self._emit_progress, loss_pct=self.plan.loss_pct
            )
        except Exception as exc:  # SweepError/ValueError before the card was touched; anything else is a bug
            if not isinstance(exc, ValueError):
                log.exception("the power sweep could not run")
            self._emit(self.failed, message_of(exc))  # a Words stays translatable (Signal(str) would copy it)
        else:
            self._emit(self.finished, result)
        finally:
            self._done.set()

    def _emit_row(self, row: SweepRow) -> None:
        self._emit(self.row, row)

    def _emit_progress(self, progress: SweepProgress) -> None:
        self._emit(self.progress, progress)

    @staticmethod
    def _emit(signal: Any, value: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the window went away as the sweep ended: nobody left to tell
            signal.emit(value)


class PowerSweepView(QWidget):
    """Controls, table, chart and the recommendation. The window owns the runner and feeds the view."""

    start_requested = Signal()
    stop_requested = Signal()
    apply_requested = Signal(int)  # the recommended cap in watts, for the power panel to apply
    plan_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.limits: CapLimits | None = None
        self.simulated = False
        self.card_name = ""
        self._card: tuple[Any, CapLimits | None, str] | None = None  # what set_card last saw
        self.caps = QLineEdit(self)
        self.caps.setAccessibleName(tr("Power caps to sweep"))
        self.caps.setToolTip(
            tr("Whole watts, e.g. {example}; empty: 5 steps from the card's minimum to its default").format(
                example=core_text("power_sweep", LIST_EXAMPLE)
            )
        )
        # Created in the order they are laid out, which is the order Tab visits them.
        self.warmup = self._seconds_box(0.0, MAX_PHASE_S, 90.0, " s", tr("Warm-up at each cap (discarded)"))
        self.measure = self._seconds_box(1.0, MAX_PHASE_S, DEFAULT_MEASURE_S, " s", tr("Measured time at each cap"))
        self.loss = self._seconds_box(0.0, 50.0, DEFAULT_LOSS_PCT, " %", tr("Speed the recommended cap may cost"))
        self.loss.setDecimals(1)
        self.loss.setSingleStep(0.5)
        self.summary = plain_label(tr("Waiting for a reading of the card."), self, wrap=True)
        self.summary.setAccessibleName(tr("Power sweep summary"))
        self.start_button = QPushButton(tr("Start &power sweep"), self)
        self.start_button.setEnabled(False)
        self.stop_button = QPushButton(tr("Stop"), self)
        self.stop_button.setEnabled(False)
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName(tr("Power sweep progress"))
        self.progress.setFormat(tr("%v of %m caps"))
        self.phase = QLabel("", self)
        self.table = QTableWidget(0, 0, self)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setAccessibleName(tr("Power sweep results"))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)  # the throttle reasons take what is left
        self.simulated_note = plain_label(core_text("power_sweep", SIMULATED_NOTE), self, wrap=True)
        themed_style(self.simulated_note, lambda palette: f"color: {palette.simulated}")
        self.simulated_note.setVisible(False)
        self.recommendation = plain_label("", self, wrap=True)
        self._recommended = ""  # the recommendation as shown, before what applying it did
        self.recommendation.setAccessibleName(tr("Recommended cap"))
        self.apply_button = QPushButton(tr("Cap at the recommended"), self)
        self.apply_button.setToolTip(tr("Set the card's power limit to the recommended cap (the Monitor's Cap button)"))
        self.apply_button.setEnabled(False)
        self.chart = pg.PlotWidget(self)
        self.chart.setLabel("left", tr("% of the best"))
        self.chart.setLabel("bottom", tr("power cap (W)"))
        self.chart.addLegend()
        self.chart.setMinimumHeight(140)
        self._speed = self.chart.plot([], [], symbol="o", name="tok/s")
        self._efficiency = self.chart.plot([], [], symbol="t", name="tok/J")
        self._chosen = pg.InfiniteLine(angle=90)
        self._chosen.setVisible(False)
        self.chart.addItem(self._chosen)
        follow_theme(self, self._colour_chart)
        self.rows: list[SweepRow] = []
        self.result: SweepResult | None = None

        form = QGridLayout()
        form.addWidget(QLabel(tr("Caps"), self), 0, 0)
        form.addWidget(self.caps, 0, 1, 1, 6)
        for column, (label, box) in enumerate(
            ((tr("Warm-up"), self.warmup), (tr("Measure"), self.measure), (tr("Allowed loss"), self.loss))
        ):
            form.addWidget(QLabel(label, self), 1, 2 * column)
            form.addWidget(box, 1, 2 * column + 1)
        form.setColumnStretch(6, 1)  # the boxes keep their size; the space is left over on the right
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addWidget(self.progress, 1)
        buttons.addWidget(self.phase)
        chosen = QHBoxLayout()
        chosen.addWidget(self.recommendation, 1)
        chosen.addWidget(self.apply_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.simulated_note)
        layout.addLayout(chosen)
        layout.addWidget(self.chart, 1)
        self._set_columns()

        self.caps.textChanged.connect(lambda _: self.plan_changed.emit())
        for box in (self.loss, self.warmup, self.measure):
            box.valueChanged.connect(lambda _: self.plan_changed.emit())
        self.loss.valueChanged.connect(lambda _: self._recommend())
        self.start_button.clicked.connect(self.start_requested)
        self.stop_button.clicked.connect(self.stop_requested)
        self.apply_button.clicked.connect(self._apply)
        self.plan_changed.connect(self.describe)

    def _colour_chart(self, palette: Palette) -> None:
        colour_plot(self.chart, palette)
        colour_curve(self._speed, palette, "sweep_speed")
        colour_curve(self._efficiency, palette, "sweep_efficiency")
        self._chosen.setPen(pg.mkPen(palette.chosen_line, style=Qt.PenStyle.DashLine))

    def _seconds_box(self, low: float, high: float, value: float, suffix: str, name: str) -> QDoubleSpinBox:
        box = QDoubleSpinBox(self)
        box.setRange(low, high)
        box.setDecimals(0 if suffix == " s" else 1)
        box.setValue(value)
        box.setSuffix(suffix)
        box.setAccessibleName(name)
        return box

    # ---- what the window tells it ------------------------------------------------------------------

    def set_card(self, sample: GpuSample | None, warmup_s: float, no_card: str = "") -> None:
        """The latest reading of the GPU the sweep acts on, and the warm-up its heat needs to settle; without
        one, ``no_card`` says why. Called after every reading; only a change shows."""
        limits, why = None, no_card
        if sample is not None:
            try:
                limits = CapLimits.from_sample(sample)
            except ValueError as exc:
                why = tr("This card cannot be swept: {reason}.").format(reason=error_text(exc, "power_sweep"))
        card = (sample.index, sample.name or f"GPU {sample.index}", sample.simulated) if sample is not None else None
        if (card, limits, why) == self._card:
            return
        new_card = card is not None and card != (self._card[0] if self._card else None)
        self._card = (card, limits, why)
        self.limits = limits
        if card is not None:
            _, self.card_name, self.simulated = card
        if new_card:
            self.warmup.setValue(warmup_s)  # the heat of this card settles in its own time
            self._set_columns()
        if limits is not None:
            self.caps.setPlaceholderText(", ".join(map(str, sorted(default_caps(limits), reverse=True))) + " W")
        if why:
            self.summary.setText(why)
        self.describe()

    def plan(self) -> SweepPlan:
        """The sweep the controls describe; ValueError (one line) says what is wrong."""
        if self.limits is None:
            raise ValueError(tr("no reading of a card whose power limit can be set"))
        text = self.caps.text()
        caps = parse_caps(text, self.limits) if text.strip() else default_caps(self.limits)
        workload = Workload(self.warmup.value(), self.measure.value()).validated()
        return SweepPlan(caps, check_loss(self.loss.value()), workload)

    def describe(self) -> bool:
        """Say what Start would run (caps, time) or why it cannot; True when it can."""
        if self.running:
            return False
        if self.limits is None:
            self.start_button.setEnabled(False)
            why = self._card[2] if self._card is not None else ""
            self.summary.setText(why or tr("Waiting for a reading of a card whose power limit can be set."))
            return False
        try:
            plan = self.plan()
        except ValueError as exc:
            self.summary.setText(error_text(exc, "power_sweep"))
            self.start_button.setEnabled(False)
            return False
        order = ", ".join(map(str, sorted(plan.caps, reverse=True)))
        estimate = plan.workload.estimate_s(len(plan.caps)) or 0.0
        card = tr("{card} (SIMULATED)").format(card=self.card_name) if self.simulated else self.card_name
        # The card's limits are a sentence of gui/core; the workload is described by gui/services, in English.
        self.summary.setText(
            tr(
                "{count} caps on {card}: {caps} W ({limits}); {workload}; about {time} in all. "
                "The limit the card has now is put back when the sweep ends."
            ).format(
                count=len(plan.caps),
                card=card,
                caps=order,
                limits=core_text("power_sweep", self.limits.describe()),
                workload=core_text("power_sweep", plan.workload.describe()),
                time=_minutes(estimate),
            )
        )
        self.start_button.setEnabled(True)
        return True

    @property
    def running(self) -> bool:
        return self.stop_button.isEnabled()

    def set_running(self, running: bool) -> None:
        self.stop_button.setEnabled(running)
        self.start_button.setEnabled(not running)
        for widget in (self.caps, self.loss, self.warmup, self.measure):
            widget.setEnabled(not running)
        if not running:
            self.phase.setText("")

    def clear(self, count: int) -> None:
        self.rows.clear()
        self.result = None
        self.table.setRowCount(0)
        self._speed.setData([], [])
        self._efficiency.setData([], [])
        self._chosen.setVisible(False)
        self._say_recommended("")
        self.apply_button.setEnabled(False)
        self.progress.setRange(0, max(count, 1))
        self.progress.setValue(0)

    def show_progress(self, progress: SweepProgress) -> None:
        self.progress.setRange(0, progress.count)
        self.progress.setValue(progress.position)
        self.phase.setText(
            f"{progress.cap_w} W ({progress.position + 1}/{progress.count}): {tr(PHASES[progress.phase])}"
        )

    def add_row(self, row: SweepRow) -> None:
        self.rows.append(row)
        self.progress.setValue(len(self.rows))
        self._fill()
        self._recommend()

    def show_result(self, result: SweepResult) -> None:
        """The sweep ended: every finished row (it may have missed the last ones), and what was restored."""
        self.result = result
        self.rows = list(result.rows)
        self._fill()
        self._recommend()
        ended = (
            tr("Partial: {measured} of {caps} caps measured ({reason}).").format(
                measured=len(result.rows),
                caps=len(result.caps),
                reason=core_text("power_sweep", result.reason) if result.reason else tr("stopped"),
            )
            if result.partial
            else tr("Done: {measured} caps measured.").format(measured=len(result.rows))
        )
        restored = (tr("{message}.") if result.restored else tr("{message}. Check the Monitor tab's limit.")).format(
            message=core_text("power_sweep", result.restore_message)
        )
        self.summary.setText(f"{ended} {restored}")

    def say(self, text: str) -> None:
        self.summary.setText(text)

    def say_applied(self, text: str) -> None:
        """What applying the recommended cap did, after the recommendation."""
        self.recommendation.setText(
            tr("{recommendation} — {applied}").format(recommendation=self._recommended, applied=text)
        )

    def _say_recommended(self, text: str) -> None:
        self._recommended = text
        self.recommendation.setText(text)

    # ---- looks -----------------------------------------------------------------------------------

    def _set_columns(self) -> None:
        header = table_header(self.simulated)
        self.simulated_note.setVisible(self.simulated)
        self.table.setColumnCount(len(header))
        self.table.setHorizontalHeaderLabels([core_text("power_sweep", word) for word in header])

    def _fill(self) -> None:
        best = max((row.tok_s for row in self.rows), default=0.0)
        self.table.setRowCount(len(self.rows))
        for index, row in enumerate(self.rows):
            for column, text in enumerate(row_cells(row, best, self.simulated)):
                self.table.setItem(index, column, QTableWidgetItem(core_text("power_sweep", text)))  # plain text
        ordered = sorted(self.rows, key=lambda r: r.cap_w)
        xs = [float(r.cap_w) for r in ordered]
        self._speed.setData(xs, _percent_of_best([r.tok_s for r in ordered]))
        joules = [r.tokens_per_joule for r in ordered]
        if all(j is not None for j in joules):
            self._efficiency.setData(xs, _percent_of_best([float(j or 0.0) for j in joules]))
        else:
            self._efficiency.setData([], [])

    def _recommend(self) -> None:
        try:
            chosen = recommend(self.rows, self.loss.value())
        except ValueError as exc:
            self._say_recommended(error_text(exc, "power_sweep"))
            chosen = None
        if chosen is None:
            self._chosen.setVisible(False)
            self.apply_button.setEnabled(False)
            if not self.rows:
                self._say_recommended("")
            return
        self._chosen.setPos(chosen.cap_w)
        self._chosen.setVisible(True)
        said = tr("Recommended: {message}.") if not self.running else tr("So far: {message}.")
        self._say_recommended(said.format(message=core_text("power_sweep", chosen.message)))
        self.apply_button.setText(tr("Cap at {watts} W").format(watts=chosen.cap_w))
        self.apply_button.setEnabled(not self.running)

    def _apply(self) -> None:
        chosen = recommend(self.rows, self.loss.value())
        if chosen is not None:
            self.apply_requested.emit(chosen.cap_w)


def _percent_of_best(values: list[float]) -> list[float]:
    best = max(values, default=0.0)
    return [100.0 * v / best if best > 0 else 0.0 for v in values]


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else tr("{minutes} min").format(minutes=f"{seconds / 60:.0f}")
