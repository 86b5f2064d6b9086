"""The Tune tab: measure instead of guessing. Pick what to sweep, see how many runs and about how long before
starting, then watch rows and a chart fill in; Apply puts a row's settings on the sliders, Stop keeps what was
measured.

The sweep runs on the window's own engine (one model in memory), one benchmark test at a time (llama-bench's
semantics, ``protocol.Bench``), reloading only when a setting other than the threads changes: the same runner as
`tightfit bench` (gui/services/bench_run.py), driven here by the engine's events; nothing here blocks the UI
thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gui.core.bench import (
    GEN_TOKENS,
    PROMPT_TOKENS,
    REPETITIONS,
    BenchRow,
    BenchTest,
    Job,
    bench_tests,
    count_loads,
    parse_grid,
)
from gui.core.load_state import LoadState, Phase
from gui.core.params import LoadSettings
from gui.core.theme import Palette
from gui.core.words import Text, message_of
from gui.services.bench_run import Action, BenchRun, LoadModel, RunTest, StopTest
from gui.services.engine_client import EngineUnavailable
from gui.ui.charts import colour_curve, colour_plot
from gui.ui.i18n import Tr, error_text, sentence_text
from gui.ui.plain import plain_label
from gui.ui.theme import follow_theme

__all__ = ["SWEEPS", "TuneRunner", "TuneView", "estimate_s"]

tr = Tr("tune_view")

# What to sweep, each as the grid it starts from (the user may edit it: any setting by its flag's name).
SWEEPS: dict[str, Callable[[LoadSettings, int, int], str]] = {
    tr.mark("Threads"): lambda s, layers, cores: (
        "threads=" + ",".join(str(n) for n in sorted({1, max(1, cores // 2), cores}))
    ),
    tr.mark("GPU layers"): lambda s, layers, cores: "ngl=" + ",".join(str(n) for n in sorted({0, layers // 2, layers})),
    tr.mark("Batch and micro-batch"): lambda s, layers, cores: "batch=128,256,512",
    tr.mark("Flash attention and KV type"): lambda s, layers, cores: "flash-attn=on,off; cache-type-k=f16,q8_0",
    tr.mark("Context depth"): lambda s, layers, cores: "depth=0,512,2048",
    tr.mark("Custom grid"): lambda s, layers, cores: "threads=1,2; flash-attn=on,off",
}
COLUMNS = (
    tr.mark("Settings"),
    tr.mark("Test"),
    "tok/s",
    tr.mark("± sd"),
    tr.mark("% of ceiling"),
    tr.mark("Peak RSS MiB"),
    tr.mark("Peak GPU MiB"),
    tr.mark("Note"),
)


def estimate_s(
    tests: Sequence[BenchTest], reps: int, runs: int, loads: int, tg_tok_s: float, pp_tok_s: float, load_s: float
) -> float:
    """About how long a sweep takes: each test's tokens at the speeds measured last (warm-up included), plus
    the loads. A guess to plan by, said as one."""
    per_config = sum(
        (reps + 1)
        * (t.n_prompt / max(pp_tok_s, 1e-3) + t.n_gen / max(tg_tok_s, 1e-3) + t.n_depth / max(pp_tok_s, 1e-3))
        for t in tests
    )
    return runs * per_config + loads * load_s


class TuneRunner(QObject):
    """One sweep on the window's engine: gui/services/bench_run.py's BenchRun, driven by the window's load state
    and engine events. ``load(settings)`` asks the window to load (it answers through its LoadSession); the
    runner follows the engine's events for its own bench requests. An engine that dies in a test ends the sweep
    (the window starts a fresh one itself), keeping what was measured."""

    row = Signal(object)  # BenchRow
    progress = Signal(int, int, float)  # tests done, tests in all, seconds left (estimate)
    finished = Signal(bool)  # True: stopped before the end (partial)

    def __init__(
        self,
        *,
        client: Any,
        model: Path,
        jobs: Sequence[Job],
        tests: Sequence[BenchTest],
        reps: int,
        load: Callable[[LoadSettings], None],
        state: Callable[[], LoadState],
        nvml: Any = None,
        gpu_count: int = 0,
        n_layer: int | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.client = client
        self.model = model
        self._load = load
        self._state = state
        self.running = False
        self._run = BenchRun(
            model,
            jobs,
            tests,
            reps,
            n_layer=n_layer,
            nvml=nvml,
            gpu_count=gpu_count,
            restart_after_crash=False,
            on_row=lambda row, _ran: self.row.emit(row),
            on_progress=self.progress.emit,
        )

    @property
    def rows(self) -> list[BenchRow]:
        return self._run.rows

    # ---- control ------------------------------------------------------------------------------

    def start(self) -> None:
        self.running = True
        state = self._state()
        self._run.note_build(self.client.build)
        self._do(self._run.start(state.settings if state.phase is Phase.LOADED else None))

    def stop(self) -> None:
        """End after the repetition under way; what was measured stays."""
        self._do(self._run.stop())

    # ---- the engine's answers (connected by the window) ----------------------------------------

    def on_state(self, state: LoadState, _before: LoadState) -> None:
        if not self.running:
            return
        wanted = self._run.loading
        if state.phase is Phase.ENGINE_DEAD:
            self._do(self._run.engine_died(state.error))
        elif wanted is not None and state.phase is Phase.LOADED and state.settings == wanted:
            self._do(self._run.loaded())
        elif wanted is not None and state.phase is Phase.FAILED:
            self._do(self._run.load_failed(state.error))

    def on_event(self, event: Any) -> None:
        if self.running:
            self._do(self._run.on_event(event))

    # ---- the run's actions --------------------------------------------------------------------

    def _do(self, action: Action | None) -> None:
        run = self._run
        while action is not None:
            if isinstance(action, LoadModel):
                try:
                    self._load(action.settings)
                except (ValueError, EngineUnavailable) as exc:  # refused at once: as a load that failed
                    action = run.load_failed(message_of(exc))
                    continue
                return
            if isinstance(action, RunTest):
                run.note_build(self.client.build)
                test = action.test
                try:
                    request = self.client.bench(test.n_prompt, test.n_gen, test.n_depth, action.reps, action.n_threads)
                except EngineUnavailable as exc:
                    action = run.engine_died(message_of(exc))
                    continue
                action = run.sent(request, self.client.pid)
            elif isinstance(action, StopTest):
                with contextlib.suppress(EngineUnavailable):  # an engine gone ends the test as it is
                    self.client.stop(action.request_id)
                return
            else:
                if self.running:
                    self.running = False
                    self.finished.emit(action.partial)
                return


class TuneView(QWidget):
    """The controls, the table and the chart. The window owns the runner and feeds the view its rows."""

    start_requested = Signal()
    stop_requested = Signal()
    apply_requested = Signal(object)  # LoadSettings of the selected row
    grid_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sweep = QComboBox(self)
        for name in SWEEPS:
            self.sweep.addItem(tr(name), name)  # the preset's key travels as the item's data
        self.sweep.setAccessibleName(tr("What to sweep"))
        self.sweep.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.sweep.setMinimumContentsLength(12)
        self.grid = QLineEdit(self)
        self.grid.setAccessibleName(tr("Sweep grid"))
        self.grid.setToolTip(
            tr("Each setting by its flag's name with its values: threads=1,2; flash-attn=on,off; depth=0,512")
        )
        # Up to a 64k-token test here (the CLI takes more); a wide box would widen the window.
        self.pp = self._spin(PROMPT_TOKENS.minimum, 65536, PROMPT_TOKENS.default, tr("Prompt tokens (pp)"))
        self.tg = self._spin(GEN_TOKENS.minimum, 65536, GEN_TOKENS.default, tr("Generated tokens (tg)"))
        self.reps = self._spin(REPETITIONS.minimum, 50, 3, tr("Repetitions"))
        self.summary = plain_label(tr("Select a model to plan a sweep."), self, wrap=True)
        self.summary.setAccessibleName(tr("Sweep summary"))
        self.start_button = QPushButton(tr("&Start sweep"), self)
        self.stop_button = QPushButton(tr("S&top"), self)
        self.stop_button.setEnabled(False)
        self.apply_button = QPushButton(tr("A&pply row"), self)
        self.apply_button.setToolTip(tr("Put the selected row's settings on the sliders (load to use them)"))
        self.apply_button.setEnabled(False)
        self.progress = QProgressBar(self)
        self.progress.setAccessibleName(tr("Sweep progress"))
        self.progress.setFormat(tr("%v of %m tests"))
        self.time_left = QLabel("", self)
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels([tr(name) for name in COLUMNS])
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAccessibleName(tr("Sweep results"))
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)  # the note takes what is left
        self.chart = pg.PlotWidget(self)
        self.chart.setLabel("left", "tok/s")
        self.chart.setLabel("bottom", tr("run"))
        self.chart.addLegend()
        self.chart.setMinimumHeight(140)
        self._curves = {
            "pp": self.chart.plot([], [], symbol="o", name=tr("prompt (pp)")),
            "tg": self.chart.plot([], [], symbol="t", name=tr("generation (tg)")),
        }
        follow_theme(self, self._colour_chart)
        self._points: dict[str, tuple[list[float], list[float]]] = {"pp": ([], []), "tg": ([], [])}
        self.rows: list[BenchRow] = []

        # One thing per row, so the tab fits a small screen.
        form = QGridLayout()
        form.addWidget(QLabel(tr("Sweep"), self), 0, 0)
        form.addWidget(self.sweep, 0, 1)
        form.addWidget(self.grid, 1, 0, 1, 2)
        sizes = QHBoxLayout()
        for label, box in (("pp", self.pp), ("tg", self.tg), (tr("Repetitions"), self.reps)):
            sizes.addWidget(QLabel(label, self))
            sizes.addWidget(box)
        sizes.addStretch(1)
        form.addLayout(sizes, 2, 0, 1, 2)
        form.setColumnStretch(1, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        buttons.addWidget(self.apply_button)
        running = QHBoxLayout()
        running.addWidget(self.progress, 1)
        running.addWidget(self.time_left)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addLayout(form)
        layout.addWidget(self.summary)
        layout.addLayout(buttons)
        layout.addLayout(running)
        layout.addWidget(self.table, 2)
        layout.addWidget(self.chart, 1)

        self.sweep.currentIndexChanged.connect(lambda _: self.reset_grid())
        self.grid.textChanged.connect(lambda _: self.grid_changed.emit())
        for box in (self.pp, self.tg, self.reps):
            box.valueChanged.connect(lambda _: self.grid_changed.emit())
        self.start_button.clicked.connect(self.start_requested)
        self.stop_button.clicked.connect(self.stop_requested)
        self.apply_button.clicked.connect(self._apply)
        self.table.itemSelectionChanged.connect(lambda: self.apply_button.setEnabled(bool(self.table.selectedItems())))
        self._defaults: tuple[LoadSettings, int, int] = (LoadSettings(), 1, 1)

    def _colour_chart(self, palette: Palette) -> None:
        colour_plot(self.chart, palette)
        for key, curve in self._curves.items():
            colour_curve(curve, palette, f"bench_{key}")

    def _spin(self, low: int, high: int, value: int, name: str) -> QSpinBox:
        box = QSpinBox(self)
        box.setRange(low, high)
        box.setValue(value)
        box.setAccessibleName(name)
        return box

    # ---- what the window tells it ----------------------------------------------------------------

    def set_defaults(self, settings: LoadSettings, layers: int, cores: int) -> None:
        """The model's layer count and this machine's cores, for the preset grids."""
        self._defaults = (settings, layers, cores)
        if not self.grid.text():
            self.reset_grid()

    def reset_grid(self) -> None:
        self.grid.setText(SWEEPS[str(self.sweep.currentData())](*self._defaults))

    def parsed(self) -> tuple[dict[str, list[Any]], list[BenchTest], int]:
        """The value lists, the tests and the repetitions; a ValueError says what is wrong."""
        lists, depths = parse_grid(self.grid.text())
        pp = [self.pp.value()] if self.pp.value() else []
        tg = [self.tg.value()] if self.tg.value() else []
        if not pp and not tg:
            raise ValueError(tr("nothing to measure: set pp or tg above 0"))
        return lists, bench_tests(pp or [0], tg or [0], depths), self.reps.value()

    def say(self, text: str) -> None:
        self.summary.setText(text)

    def say_error(self, exc: ValueError) -> None:
        """Why the sweep cannot be planned: a grid or a test gui/core refused, in the window's language."""
        self.say(error_text(exc, "bench"))

    def say_finished(self, partial: bool, summary: Text) -> None:
        """A sweep ended: ``summary`` (gui/core/bench.py ``time_summary``) says where its time went."""
        what = tr("Stopped: {summary}.") if partial else tr("Done: {summary}.")
        self.say(
            what.format(summary=sentence_text(summary))
            + " "
            + tr("Select a row and Apply to put its settings on the sliders.")
        )

    def set_running(self, running: bool) -> None:
        self.start_button.setEnabled(not running)
        self.stop_button.setEnabled(running)
        for widget in (self.sweep, self.grid, self.pp, self.tg, self.reps):
            widget.setEnabled(not running)

    def clear(self, total: int) -> None:
        self.rows.clear()
        self.table.setRowCount(0)
        for key, (xs, ys) in self._points.items():
            xs.clear()
            ys.clear()
            self._curves[key].setData([], [])
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(0)
        self.time_left.setText("")

    def show_progress(self, done: int, total: int, left_s: float) -> None:
        self.progress.setRange(0, max(total, 1))
        self.progress.setValue(done)
        self.time_left.setText(tr("about {time} left").format(time=_duration(left_s)) if done < total else "")

    def add_row(self, row: BenchRow, label: str) -> None:
        self.rows.append(row)
        values = row.to_dict()
        avg = values["avg_ts"]
        cells = (
            label,
            row.test.name,
            "" if avg is None else f"{avg:,.1f}",
            "" if values["stddev_ts"] is None else f"{values['stddev_ts']:,.1f}",
            "" if values["pct_of_ceiling"] is None else f"{values['pct_of_ceiling']:.0f}%",
            "" if values["peak_rss_mib"] is None else f"{values['peak_rss_mib']:,.0f}",
            "" if values["peak_gpu_mib"] is None else f"{values['peak_gpu_mib']:,.0f}",
            sentence_text(row.reason) if row.reason else (tr("partial") if row.partial else ""),
        )
        index = self.table.rowCount()
        self.table.insertRow(index)
        for column, text in enumerate(cells):
            self.table.setItem(index, column, QTableWidgetItem(text))  # plain text items
        if avg is not None:
            key = "tg" if row.test.is_generation else "pp"
            xs, ys = self._points[key]
            xs.append(float(len(self.rows)))
            ys.append(float(avg))
            self._curves[key].setData(xs, ys)

    def _apply(self) -> None:
        selected = self.table.selectedItems()
        if selected:
            self.apply_requested.emit(self.rows[selected[0].row()].settings)


def describe_config(settings: LoadSettings, lists: dict[str, list[Any]]) -> str:
    """The swept settings of a row, by their flags' names: "threads 2, flash-attn on"."""
    from gui.core.params import SPECS_BY_KEY

    parts = []
    for key in lists:
        spec = SPECS_BY_KEY[key]
        name = spec.flag.lstrip("-") if spec.flag else key
        parts.append(f"{name} {getattr(settings, key)}")
    return ", ".join(parts) or tr("as loaded")


def plan_summary(runs: int, loads: int, tests: int, skipped: int, estimate: float | None) -> str:
    """The plan in one line: 4 configurations × 2 tests, 2 loads; …; about 3 min at the speeds measured last.
    One template per part, so each language orders its own words."""
    configurations = (tr("{n} configuration") if runs == 1 else tr("{n} configurations")).format(n=runs)
    measured = (tr("{n} test") if tests == 1 else tr("{n} tests")).format(n=tests)
    reloads = (tr("{n} load") if loads == 1 else tr("{n} loads")).format(n=loads)
    text = tr("{configurations} × {tests}, {loads}").format(
        configurations=configurations, tests=measured, loads=reloads
    )
    if skipped:
        text += tr("; {n} will not fit and will be listed as skipped").format(n=skipped)
    if estimate is not None:
        text += tr("; about {time} at the speeds measured last").format(time=_duration(estimate))
    return tr("{plan}.").format(plan=text)


def loads_for(jobs: Sequence[Job]) -> int:
    return count_loads(j.config.settings for j in jobs if not j.skip)


def _duration(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return f"{seconds:.0f} s"
    return tr("{minutes} min").format(minutes=f"{seconds / 60:.0f}")
