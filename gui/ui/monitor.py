"""The GPU monitor view: live readout, GPU selector, charts, alert banner, power cap and CSV logging.

With one GPU the readout is a grid of that card's readings. With several, every GPU is watched at once:
a compact row per GPU (its colour, name and main readings; the rest in the row's tooltip), every GPU
chart draws all of them (gui/ui/charts.py), each GPU keeps its own alert state and the banner a line per
GPU that has alerted, and the selector picks the GPU the power cap acts on ("Cap all" caps every one).
Other machines' GPUs, read from their Prometheus exporter (gui/services/gpu_exporter.py, the URLs given under
"Other machines"), join them as rows, chart lines and alert states named by their machine; they are read-only:
never in the selector, never capped.

NVML is read on the telemetry thread; ticks reach this view through TelemetryBridge as a signal on the
UI thread, where they are recorded into the view's TelemetryHistory (cheap) and a chart redraw is
requested (coalesced: a burst of queued ticks costs one redraw). Alerts come from the pure rules in
gui.core.alerts, once per event; the view shows a banner and emits `alert` so the window can raise a
desktop notification.

Lifetime: `start()` starts sampling, `stop()` joins the telemetry thread. Call `stop()` before the widget
goes away; closing the view does it too. Hiding it (another tab) keeps recording, so the history has no
hole when it is shown again.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QCloseEvent, QShowEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFrame,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSystemTrayIcon,
    QVBoxLayout,
    QWidget,
)

from gui.core import gpu_sample as reasons
from gui.core.alerts import Alert, AlertRules
from gui.core.gpu_sample import GpuSample
from gui.core.preferences import ALERT_TEMPERATURE, SAMPLE_INTERVAL
from gui.core.telemetry_fields import READINGS, Readout
from gui.core.telemetry_history import TelemetryHistory, capacity_for
from gui.core.theme import Palette
from gui.services.bundle import GpuServices
from gui.services.gpu_exporter import ExporterPoller
from gui.services.telemetry import GpuSource, Tick
from gui.ui.charts import TelemetryCharts
from gui.ui.exporter_panel import ExporterPanel
from gui.ui.i18n import Tr, core_text, error_text
from gui.ui.plain import plain_label, plain_tip
from gui.ui.power_panel import PowerPanel
from gui.ui.spec_widgets import float_box
from gui.ui.telemetry_bridge import TelemetryBridge
from gui.ui.theme import current_palette, follow_theme, themed_style

__all__ = ["MonitorView", "describe_sample", "gpu_name", "notify_desktop"]

tr = Tr("monitor")
NA = tr.mark("n/a")  # as tests and logs read it; shown as tr(NA)


def _banner_style(palette: Palette, severity: str) -> str:
    banner = palette.banners[severity]
    return (
        f"QFrame {{ background:{banner.background}; color:{banner.text}; border:1px solid {banner.border};"
        " border-radius:3px; }"
    )


RECENT_SAMPLES = 300  # five minutes at the default interval
MAX_ROWS = 16  # GPUs given a readout row (a bound on widgets, far above any one box)
# A reading declared with a readout (gui/core/telemetry_fields.py) is shown in its row; the rows that put readings
# together under a sentence of their own (and the throttle reasons) are composed here, by describe_sample.
_DECLARED_ROWS: dict[str, tuple[Readout, list[str]]] = {}
for _reading in READINGS:
    if _reading.readout is not None:
        _DECLARED_ROWS.setdefault(_reading.readout.key, (_reading.readout, []))[1].append(_reading.name)
_COMPOSED_TITLES = {
    "util": tr.mark("Util GPU"),
    "vram": tr.mark("VRAM"),
    "clocks": tr.mark("SM/mem"),
    "throttle": tr.mark("Throttle"),
    "ecc": tr.mark("ECC"),
    "pcie": tr.mark("PCIe gen×w"),
}
# The rows in their places; a reading's own row not placed here comes after them, in declaration order.
_PLACED = ("temperature", "power", "limit", "util", "vram", "clocks", "fan", "pstate", "throttle", "ecc", "pcie")
READOUT_KEYS = (*_PLACED, *(key for key in _DECLARED_ROWS if key not in _PLACED))
_READOUT_TITLES = {**{key: readout.title for key, (readout, _names) in _DECLARED_ROWS.items()}, **_COMPOSED_TITLES}


# The clock-event reason words (gui.core.gpu_sample) as the readout shows them; an unknown one stays as it is.
_REASON_WORDS = {
    reasons.IDLE: tr.mark("idle"),
    reasons.APPLICATION_CLOCKS: tr.mark("application clocks"),
    reasons.POWER_CAP: tr.mark("power cap"),
    reasons.HW_SLOWDOWN: tr.mark("HW slowdown"),
    reasons.SYNC_BOOST: tr.mark("sync boost"),
    reasons.THERMAL_SLOWDOWN: tr.mark("thermal slowdown"),
    reasons.HW_THERMAL_SLOWDOWN: tr.mark("HW thermal slowdown"),
    reasons.HW_POWER_BRAKE: tr.mark("HW power brake"),
    reasons.DISPLAY_CLOCKS: tr.mark("display clocks"),
}


def _fmt(value: float | int | None, pattern: str) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return tr(NA)
    return pattern.format(value)


def describe_sample(sample: GpuSample | None) -> dict[str, str]:
    """The readout row's texts for one sample; "n/a" wherever a reading is missing."""
    if sample is None or sample.lost:
        return dict.fromkeys(READOUT_KEYS, tr(NA))
    s = sample
    used = s.memory_used_mib / 1024 if s.memory_used_mib is not None else None
    total = s.memory_total_mib / 1024 if s.memory_total_mib is not None else None
    words = [tr(_REASON_WORDS[r]) if r in _REASON_WORDS else r for r in s.throttle_reasons or ()]
    throttle = tr(NA) if s.throttle_reasons is None else (", ".join(words) or tr("none"))
    declared = {
        key: " / ".join(_fmt(s.value(name), readout.pattern) for name in names)
        for key, (readout, names) in _DECLARED_ROWS.items()
    }
    composed = {
        "util": tr("{gpu} (mem {memory})").format(
            gpu=_fmt(s.gpu_util_pct, "{:.0f}%"), memory=_fmt(s.mem_util_pct, "{:.0f}%")
        ),
        "vram": f"{_fmt(used, '{:.1f}')} / {_fmt(total, '{:.1f}')} GiB",
        "clocks": f"{_fmt(s.sm_clock_mhz, '{:.0f}')} / {_fmt(s.mem_clock_mhz, '{:.0f}')} MHz",
        "throttle": throttle,
        "ecc": tr("{corrected} corr., {uncorrected} uncorr.").format(
            corrected=_fmt(s.ecc_corrected, "{}"), uncorrected=_fmt(s.ecc_uncorrected, "{}")
        ),
        "pcie": tr("{gen}×{width} (max {gen_max}×{width_max})").format(
            gen=_fmt(s.pcie_gen, "{}"),
            width=_fmt(s.pcie_width, "{}"),
            gen_max=_fmt(s.pcie_gen_max, "{}"),
            width_max=_fmt(s.pcie_width_max, "{}"),
        ),
    }
    texts = {**declared, **composed}
    return {key: texts[key] for key in READOUT_KEYS}


COMPACT_KEYS = ("temperature", "power", "limit", "util", "vram", "clocks", "throttle")
_COMPACT_TITLES = {**_READOUT_TITLES, "clocks": tr.mark("SM")}
_VENDOR_WORDS = ("NVIDIA", "Tesla")  # said by every card here: the legend keeps the model


def gpu_name(sample: GpuSample) -> str:
    """A GPU's short name for legends and rows: "GPU 0 P40" for a "Tesla P40"; another machine's GPU with its
    machine and its whole name, "gpu-box GPU 0 · Tesla P40"."""
    if sample.remote:
        model = " ".join((sample.name or "").split())[:40]
        name = f"{sample.host} GPU {sample.host_gpu}"
        return f"{name} · {model}" if model else name
    words = (sample.name or "").split()
    while len(words) > 1 and words[0] in _VENDOR_WORDS:
        words = words[1:]
    model = " ".join(words)[:40]
    return f"GPU {sample.index} {model}" if model else f"GPU {sample.index}"


def compact_sample(sample: GpuSample | None) -> dict[str, str]:
    """A GPU's row when several are shown: the main readings, short (the rest is in the row's tooltip)."""
    texts = describe_sample(sample)
    if sample is None or sample.lost:
        return {key: texts[key] for key in COMPACT_KEYS}
    used = sample.memory_used_mib / 1024 if sample.memory_used_mib is not None else None
    total = sample.memory_total_mib / 1024 if sample.memory_total_mib is not None else None
    return {
        **{key: texts[key] for key in COMPACT_KEYS},
        "util": _fmt(sample.gpu_util_pct, "{:.0f}%"),
        "vram": f"{_fmt(used, '{:.1f}')}/{_fmt(total, '{:.1f}')} GiB",
        "clocks": _fmt(sample.sm_clock_mhz, "{:.0f} MHz"),
    }


def remote_id(sample: GpuSample) -> str:
    """How an alert names another machine's GPU: "gpu-box:0"."""
    return f"{sample.host}:{sample.host_gpu}"


def remote_alert(alert: Alert, sample: GpuSample) -> Alert:
    """An alert about another machine's GPU names it by its machine and number there, not by its index here."""
    if not sample.remote:
        return alert
    fields = {**alert.fields, "gpu": remote_id(sample)}
    message = alert.template.format(**fields, reasons=", ".join(alert.reasons)) if alert.template else alert.message
    return replace(alert, message=message, fields=fields)


def alert_text(alert: Alert) -> str:
    """An alert in the window's language: its template translated, the reason words each translated."""
    if not alert.template:
        return alert.message
    words = [tr(_REASON_WORDS[r]) if r in _REASON_WORDS else r for r in alert.reasons]
    return core_text("alerts", alert.template).format(**alert.fields, reasons=tr(", ").join(words))


def notify_desktop(tray: QSystemTrayIcon | None, alert: Alert) -> bool:
    """Show an alert as a desktop notification where the platform has a tray; False where it has none."""
    if tray is None or not QSystemTrayIcon.isSystemTrayAvailable() or not tray.supportsMessages():
        return False
    icon = {
        "info": QSystemTrayIcon.MessageIcon.Information,
        "warning": QSystemTrayIcon.MessageIcon.Warning,
        "critical": QSystemTrayIcon.MessageIcon.Critical,
    }[alert.severity]
    tray.showMessage(tr("Tightfit GPU alert"), alert_text(alert), icon)
    return True


class MonitorView(QWidget):
    alert = Signal(object)  # Alert, once per event
    message = Signal(str)  # something the user asked for finished (an export), in words
    threshold_changed = Signal(float)  # the alert temperature the user set, for the window to remember
    interval_changed = Signal(float)  # the sampling interval the user set
    cap_changed = Signal(int)
    exporters_changed = Signal(list)  # the exporter URLs the user watches, for the window to remember

    def __init__(
        self,
        gpu: GpuServices,
        *,
        parent: QWidget | None = None,
    ) -> None:
        """``gpu``: where readings come from (NVML or a simulated card), the telemetry thread that samples
        it and the power limiter, built by the composition root."""
        super().__init__(parent)
        self.source: GpuSource = gpu.source
        limiter = self.limiter = gpu.limiter
        nvml = gpu.nvml
        interval_s, clock = gpu.telemetry.interval_s, gpu.clock
        self.rules = AlertRules(ALERT_TEMPERATURE.default)
        self.samples: dict[int, GpuSample] = {}  # the latest of each GPU
        # The last minutes of each GPU's readings, whole, for checks that look at a run of them (the Doctor's
        # sustained thermal slowdown).
        self.recent: dict[int, deque[GpuSample]] = {}
        self.last_tick: Tick | None = None
        self.alerts: list[Alert] = []  # every alert raised, oldest first
        self.gpu_alerts: dict[int, tuple[str, Alert]] = {}  # each GPU's latest alert shown, with its time
        self._selected: int | None = None

        self.bridge = TelemetryBridge(gpu.telemetry, simulated=gpu.simulated, parent=self)
        # Other machines' GPUs, from their exporters: read on the poller's threads, added to every tick.
        self.exporters = ExporterPoller(clock=clock)
        gpu.telemetry.set_remote(self.exporters.samples)
        self._next_row = 1
        self.history = TelemetryHistory(capacity=capacity_for(interval_s), wall_offset=time.time() - clock())
        self.charts = TelemetryCharts(self.history)
        self.charts.exported.connect(self.message)
        self.charts.set_alert_threshold(ALERT_TEMPERATURE.default)

        def read_back(index: int) -> float | None:  # worker thread
            return limiter.read_back(nvml, index)

        self.power_panel = PowerPanel(limiter, read_back=read_back)
        self.power_panel.cap_changed.connect(self.cap_changed)

        # Header: what is shown, and the controls that pick it.
        self.title_label = plain_label(tr("GPU monitor"))  # the card's name, as the driver reports it
        self.title_label.setStyleSheet("font-weight:bold;")
        # A long card name must not widen the view: it has a line of its own and wraps there.
        self.title_label.setWordWrap(True)
        self.simulated_label = QLabel(tr("SIMULATED"))
        themed_style(
            self.simulated_label,
            lambda palette: (
                f"background:{palette.badge_background}; color:{palette.badge_text}; font-weight:bold;"
                " padding:1px 6px; border-radius:3px;"
            ),
        )
        self.simulated_label.setToolTip(tr("Readings come from a simulated card driven by the engine's real load"))
        self.simulated_label.setVisible(False)
        self.gpu_combo = QComboBox()
        self.gpu_combo.setToolTip(tr("Which GPU the power cap acts on (the readout and charts show every GPU)"))
        self.gpu_combo.setVisible(False)
        self.gpu_combo.currentIndexChanged.connect(self._on_gpu_chosen)
        self.threshold_spin = float_box(ALERT_TEMPERATURE)
        self.threshold_spin.valueChanged.connect(self._on_threshold)
        self.interval_spin = float_box(SAMPLE_INTERVAL)
        self.interval_spin.setValue(interval_s)
        self.interval_spin.valueChanged.connect(self._on_interval)
        self.threshold_spin.setAccessibleName(tr("Alert temperature"))
        self.log_box = QCheckBox(tr("Log to CSV"))
        self.log_box.setToolTip(tr("Append every reading to a CSV file, for long runs"))
        self.log_box.clicked.connect(self._on_log_clicked)
        title_row = QHBoxLayout()
        title_row.setContentsMargins(0, 0, 0, 0)
        title_row.addWidget(self.simulated_label)
        title_row.addWidget(self.title_label, 1)
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.addWidget(self.gpu_combo)
        header.addWidget(QLabel(tr("Every")))
        header.addWidget(self.interval_spin)
        header.addWidget(QLabel(tr("Alert at")))
        header.addWidget(self.threshold_spin)
        header.addWidget(self.log_box)
        header.addStretch(1)

        self.status_label = plain_label(tr("waiting for the first reading…"))
        themed_style(self.status_label, lambda palette: f"color:{palette.muted};")
        self.status_label.setWordWrap(True)

        self.banner = QFrame()
        self.banner.setVisible(False)
        self._banner_severity = "info"
        themed_style(self.banner, lambda palette: _banner_style(palette, self._banner_severity))
        self.banner_label = plain_label()
        self.banner_label.setWordWrap(True)
        dismiss = QPushButton("×")
        dismiss.setFlat(True)
        dismiss.setFixedWidth(24)
        dismiss.setToolTip(tr("Dismiss"))
        dismiss.clicked.connect(self._dismiss_banner)
        banner_layout = QHBoxLayout(self.banner)
        banner_layout.setContentsMargins(6, 2, 2, 2)
        banner_layout.addWidget(self.banner_label, 1)
        banner_layout.addWidget(dismiss)

        self.readout_frame = QWidget()
        readout = QGridLayout(self.readout_frame)
        readout.setContentsMargins(0, 0, 0, 0)
        readout.setHorizontalSpacing(10)
        readout.setVerticalSpacing(0)
        self.readout: dict[str, QLabel] = {}
        per_row = 4
        for i, key in enumerate(READOUT_KEYS):
            value = plain_label(tr(NA))
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            # Long values (several throttle reasons, a Chinese PCIe line) wrap rather than widen the view or
            # lose their end; the tooltip has the whole reading too.
            value.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
            value.setWordWrap(True)
            value.setMinimumWidth(70)
            self.readout[key] = value
            cell = QLabel(tr(_READOUT_TITLES[key]))
            themed_style(cell, lambda palette: f"color:{palette.muted};")
            row, column = divmod(i, per_row)
            readout.addWidget(cell, row, 2 * column, Qt.AlignmentFlag.AlignRight)
            readout.addWidget(value, row, 2 * column + 1)
            readout.setColumnStretch(2 * column + 1, 1)

        # Several GPUs: a compact row each, under one header row.
        self.gpu_rows_frame = QWidget()
        rows = self._rows_grid = QGridLayout(self.gpu_rows_frame)
        rows.setContentsMargins(0, 0, 0, 0)
        rows.setHorizontalSpacing(10)
        rows.setVerticalSpacing(0)
        for column, key in enumerate(("name", *COMPACT_KEYS)):
            head = QLabel(tr("GPU") if key == "name" else tr(_COMPACT_TITLES[key]))
            themed_style(head, lambda palette: f"color:{palette.muted};")
            rows.addWidget(head, 0, column)
        rows.setColumnStretch(len(COMPACT_KEYS), 1)
        self.gpu_rows: dict[int, dict[str, QLabel]] = {}
        self.gpu_rows_frame.setVisible(False)
        follow_theme(self.gpu_rows_frame, lambda _palette: self._update_labels(), now=False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.setSpacing(4)
        layout.addLayout(title_row)
        layout.addLayout(header)
        self.exporter_panel = ExporterPanel(self)
        self.exporter_panel.urls_changed.connect(self._on_exporters_edited)
        layout.addWidget(self.exporter_panel)
        layout.addWidget(self.status_label)
        layout.addWidget(self.banner)
        layout.addWidget(self.readout_frame)
        layout.addWidget(self.gpu_rows_frame)
        layout.addWidget(self.power_panel)
        # With another machine's GPUs: that they are only watched, in words (no cap buttons act on them).
        self.remote_note = plain_label(
            tr(
                "GPUs on other machines are read-only here: their readings come from their exporter, and their "
                "power cap is set on their own machine. The power cap here acts on this machine's GPUs."
            ),
            wrap=True,
        )
        themed_style(self.remote_note, lambda palette: f"color:{palette.muted};")
        self.remote_note.hide()
        layout.addWidget(self.remote_note)
        # Without a GPU: why there is no cap, and what would give one.
        self.no_gpu_label = plain_label(wrap=True)
        themed_style(self.no_gpu_label, lambda palette: f"color:{palette.muted};")
        self.no_gpu_label.hide()
        layout.addWidget(self.no_gpu_label)
        layout.addWidget(self.charts, 1)

        self.bridge.tick.connect(self._on_tick)
        self.setWindowTitle(tr("GPU monitor"))
        self._update_labels()

    # --- lifetime -----------------------------------------------------------------------------------

    def start(self) -> None:
        self.bridge.start()
        self.exporters.start()

    def stop(self) -> None:
        """Stop sampling and join the telemetry thread (and any CSV log); safe to call twice."""
        self.exporters.stop()
        self.bridge.stop()
        self.charts.shutdown()
        self.power_panel.shutdown()
        self.log_box.setChecked(False)

    @property
    def running(self) -> bool:
        return self.bridge.running

    def closeEvent(self, event: QCloseEvent) -> None:
        self.stop()
        super().closeEvent(event)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self.charts.request_redraw()  # ticks recorded while hidden were not drawn

    def sample_now(self) -> Tick:
        """Take one tick now, on this thread, and show it (charts included) before returning."""
        tick = self.bridge.sample_now()
        self.charts.redraw()
        return tick

    # --- public knobs -------------------------------------------------------------------------------

    def set_engine_rate(self, tok_s: float | None) -> None:
        """The engine's generation rate (0 when idle): charted, and the simulated card's load."""
        self.bridge.set_engine_rate(tok_s)

    @property
    def cap_watts(self) -> int:
        return self.power_panel.cap_watts

    @cap_watts.setter
    def cap_watts(self, watts: int) -> None:
        self.power_panel.cap_watts = watts

    @property
    def alert_threshold_c(self) -> float:
        return self.rules.temp_threshold_c

    @alert_threshold_c.setter
    def alert_threshold_c(self, celsius: float) -> None:
        self.threshold_spin.setValue(celsius)

    @property
    def selected_gpu(self) -> int | None:
        return self._selected

    def select_gpu(self, index: int) -> None:
        position = self.gpu_combo.findData(index)
        if position < 0:
            raise ValueError(f"no GPU {index} in this view")
        self.gpu_combo.setCurrentIndex(position)

    def set_csv_log(self, path: str | Path | None) -> None:
        """Log every tick to this CSV file (None: stop logging). Errors opening it raise to the caller."""
        if path is None:
            self.bridge.service.stop_csv_log()
        else:
            self.bridge.service.start_csv_log(path)
        self.log_box.setChecked(path is not None)
        idle = tr("Append every reading to a CSV file")
        self.log_box.setToolTip(plain_tip(tr("Logging to {path}").format(path=path)) if path is not None else idle)

    def exporter_urls(self) -> list[str]:
        return self.exporter_panel.urls()

    def set_exporters(self, urls: list[str]) -> None:
        """Watch these exporters (as stored: checked by gui/core/prometheus_text.py scrape_urls); nothing emitted."""
        self.exporters.set_urls(urls)
        self.exporter_panel.set_urls(self.exporters.urls)

    def _on_exporters_edited(self, urls: list[str]) -> None:
        self.exporters.set_urls(urls)
        self.exporter_panel.show_statuses(self.exporters.statuses())
        self.exporters_changed.emit(list(self.exporters.urls))

    def banner_text(self) -> str:
        return self.banner_label.text() if not self.banner.isHidden() else ""

    # --- ticks --------------------------------------------------------------------------------------

    def _on_tick(self, tick: Tick) -> None:
        self.last_tick = tick
        # A removed exporter's GPUs leave the view with it.
        ticked = {sample.index for sample in tick.gpus}
        self._forget([index for index, s in self.samples.items() if s.remote and index not in ticked])
        for sample in tick.gpus:
            self.samples[sample.index] = sample
            self.recent.setdefault(sample.index, deque(maxlen=RECENT_SAMPLES)).append(sample)
            if not sample.remote:  # the selector picks the GPU the power cap acts on: this machine's only
                self._ensure_in_combo(sample)
            self._ensure_row(sample)
            for alert in self.rules.check(sample):
                self._raise_alert(remote_alert(alert, sample))
        self.exporter_panel.show_statuses(self.exporters.statuses())
        self.history.record(tick)
        self.charts.set_gpus({index: gpu_name(self.samples[index]) for index in sorted(self.samples)})
        self.charts.request_redraw()
        has_gpus = bool(self.samples)
        if self.charts.gpu_charts_visible != has_gpus:
            self.charts.set_gpu_charts_visible(has_gpus)
        local = [sample for sample in tick.gpus if not sample.remote]
        if self._selected is None and local:
            self.select_gpu(local[0].index)
        elif self._selected is None and tick.gpus and self.charts.gpu_index is None:
            self.charts.select_gpu(tick.gpus[0].index)  # only other machines' GPUs: the charts show the first
        self.status_label.setText(self._status(tick))
        self._update_labels()

    def _status(self, tick: Tick) -> str:
        if tick.status:
            status = core_text("nvml", tick.status)
            if self.samples and all(s.remote for s in self.samples.values()):
                return tr("{status} here: showing other machines' GPUs").format(status=status)
            return tr("{status}: showing the host only").format(status=status) if not self.samples else status
        lost = [s.index for s in self.samples.values() if s.lost]
        if len(lost) == 1:
            return tr("GPU {index} fell off the bus; still watching for it to come back").format(index=lost[0])
        if lost:
            return tr("GPUs {indices} fell off the bus; still watching for them to come back").format(
                indices=", ".join(map(str, lost))
            )
        return ""

    def _ensure_in_combo(self, sample: GpuSample) -> None:
        if self.gpu_combo.findData(sample.index) >= 0:
            return
        words = tr("GPU {index}: {name} (SIMULATED)") if sample.simulated else tr("GPU {index}: {name}")
        label = words.format(index=sample.index, name=sample.name or tr("unknown"))
        self.gpu_combo.addItem(label, sample.index)
        self.gpu_combo.setVisible(self.gpu_combo.count() > 1)

    def _ensure_row(self, sample: GpuSample) -> None:
        if sample.index in self.gpu_rows or len(self.gpu_rows) >= MAX_ROWS:
            return
        row = self._next_row
        self._next_row += 1
        labels: dict[str, QLabel] = {}
        for column, key in enumerate(("name", *COMPACT_KEYS)):
            label = plain_label(NA)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            if key == "throttle":  # several reasons are cut rather than widening the view; the tooltip has them
                label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
                label.setMinimumWidth(40)
            self._rows_grid.addWidget(label, row, column)
            labels[key] = label
        labels["name"].setTextFormat(Qt.TextFormat.RichText)
        self.gpu_rows[sample.index] = labels

    def _forget(self, indices: list[int]) -> None:
        """GPUs no longer watched (their exporter was removed): out of the readout, the charts and the alerts."""
        for index in indices:
            self.samples.pop(index, None)
            self.recent.pop(index, None)
            self.gpu_alerts.pop(index, None)
            self.rules.reset(index)
            for label in self.gpu_rows.pop(index, {}).values():
                self._rows_grid.removeWidget(label)
                label.deleteLater()
        if indices and not self.gpu_alerts:
            self.banner.setVisible(False)

    def _update_rows(self) -> None:
        palette = current_palette()
        shared = self.charts.shared
        for index, labels in self.gpu_rows.items():
            sample = self.samples.get(index)
            texts = describe_sample(sample)
            for key, text in compact_sample(sample).items():
                labels[key].setText(text)
            name = gpu_name(sample) if sample is not None else f"GPU {index}"
            colour = self.charts.gpu_colour(index) if shared and index in self.charts.shared_gpus else palette.muted
            mark = "▶ " if index == self._selected else ""
            alerted = self.gpu_alerts.get(index)
            warn = ""
            if alerted is not None:
                warn = f" <span style='color:{palette.banners[alerted[1].severity].text}'>⚠</span>"
            labels["name"].setText(f"{mark}<span style='color:{colour}'>━━</span> {_escape(name)}{warn}")
            details = "\n".join(f"{tr(_READOUT_TITLES[key])}: {text}" for key, text in texts.items())
            if sample is not None and sample.remote:
                details += "\n" + tr("On {host}, read from its exporter: read-only here (no power cap)").format(
                    host=sample.host
                )
                if "exporter" in sample.errors:
                    details += "\n" + core_text("exporter", sample.errors["exporter"])
            if alerted is not None:
                details += f"\n{alerted[0]} — {alert_text(alerted[1])}"
            tip = plain_tip(f"{name}\n{details}")
            for label in labels.values():
                label.setToolTip(tip)

    def _on_gpu_chosen(self, position: int) -> None:
        index = self.gpu_combo.itemData(position)
        if index is None:
            return
        self._selected = int(index)
        self.charts.select_gpu(self._selected)
        self._update_labels()

    def _update_labels(self) -> None:
        sample = self.samples.get(self._selected) if self._selected is not None else None
        for key, text in describe_sample(sample).items():
            self.readout[key].setText(text)
            self.readout[key].setToolTip(plain_tip(f"{tr(_READOUT_TITLES[key])}: {text}"))
        if sample is not None and sample.slowdown_c is not None:
            self.readout["temperature"].setToolTip(
                tr("Slowdown at {celsius} °C").format(celsius=f"{sample.slowdown_c:.0f}")
            )
        simulated = sample is not None and sample.simulated
        has_gpu = sample is not None
        remote = any(s.remote for s in self.samples.values())
        several = len(self.gpu_rows) > 1 or remote  # another machine's GPU is always a row, named by its machine
        self.readout_frame.setVisible(has_gpu and not several)
        self.gpu_rows_frame.setVisible(several)
        if several:
            self._update_rows()
        self.power_panel.setVisible(has_gpu)
        self.power_panel.set_samples(s for s in self.samples.values() if not s.remote)
        self.remote_note.setVisible(remote)
        self.power_panel.set_sample(sample)
        host_only = not has_gpu and self.last_tick is not None and not self.samples
        self.no_gpu_label.setVisible(host_only)
        if host_only and self.last_tick is not None:
            why = f" ({core_text('nvml', self.last_tick.status)})" if self.last_tick.status else ""
            self.no_gpu_label.setText(
                tr(
                    "No NVIDIA GPU to watch or cap here{why}. The charts show this machine's CPU and memory. "
                    "Temperatures and the power cap need an NVIDIA card with its driver loaded (nvidia-smi works); "
                    "`tightfit --simulate v100-16gb` shows this tab on a simulated card."
                ).format(why=why)
            )
        self.simulated_label.setVisible(simulated)
        if sample is None:
            host_only = self.last_tick is not None and not self.samples
            title = tr("GPU monitor — host only") if host_only else tr("GPU monitor")
        else:
            words = tr("GPU {index}: {name} — SIMULATED") if simulated else tr("GPU {index}: {name}")
            title = words.format(index=sample.index, name=sample.name or tr("unknown GPU"))
        self.title_label.setText(title)
        self.title_label.setToolTip(plain_tip(title))
        self.setWindowTitle(title if sample is not None else tr("GPU monitor"))

    # --- alerts -------------------------------------------------------------------------------------

    def _raise_alert(self, alert: Alert) -> None:
        """The banner keeps each GPU's latest alert, a line per GPU; its colour is the newest alert's."""
        self.alerts.append(alert)
        stamp = time.strftime("%H:%M:%S")
        self.gpu_alerts[alert.gpu_index] = (stamp, alert)
        self.banner_label.setText(
            "\n".join(f"{when} — {alert_text(a)}" for _index, (when, a) in sorted(self.gpu_alerts.items()))
        )
        self._banner_severity = alert.severity
        self.banner.setStyleSheet(_banner_style(current_palette(), alert.severity))
        self.banner.setVisible(True)
        self.alert.emit(alert)

    def _dismiss_banner(self) -> None:
        self.banner.setVisible(False)
        self.gpu_alerts.clear()
        self._update_labels()

    def _on_interval(self, seconds: float) -> None:
        self.bridge.service.set_interval(seconds)
        self.interval_changed.emit(seconds)

    def _on_threshold(self, celsius: float) -> None:
        self.rules.temp_threshold_c = celsius
        self.charts.set_alert_threshold(celsius)
        self.charts.request_redraw()
        self.threshold_changed.emit(celsius)

    # --- CSV log ------------------------------------------------------------------------------------

    def _on_log_clicked(self, checked: bool) -> None:
        if not checked:
            self.set_csv_log(None)
            return
        path, _ = QFileDialog.getSaveFileName(
            self, tr("Log readings to"), "tightfit-telemetry.csv", tr("CSV files (*.csv)")
        )
        if not path:
            self.log_box.setChecked(False)
            return
        try:
            self.set_csv_log(path)
        except OSError as exc:
            self.log_box.setChecked(False)
            self.status_label.setText(
                tr("cannot log to {path}: {error}").format(path=path, error=error_text(exc, "monitor"))
            )


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
