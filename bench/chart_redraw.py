"""How long one chart redraw takes with a full day of 1 s readings in every series, against a 16 ms frame.

Fills a telemetry history with 24 h of ticks (86,400 per series: one GPU and the host, realistic values,
NaN gaps where readings were missing, a GPU-lost stretch) and draws it with the monitor's chart stack,
then measures ~50 live redraws, each after one new tick, as the monitor does: `redraw()` alone (data
handed to pyqtgraph, view moved) and `redraw()` plus the paint that follows (the widget rendered into a
pixmap, every chart drawn). Offscreen, with the widget at 1200×800, once with the view on the whole 24 h
and once on the 5-minute follow window.

Run: `.venv/bin/python bench/chart_redraw.py` (prints ms and the ratio to the 16 ms budget).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_API", "pyside6")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from PySide6.QtWidgets import QApplication

from gui.core.gpu_sample import GpuSample
from gui.core.telemetry_history import DAY_S, TelemetryHistory
from gui.core.tick import HostSample, Tick
from gui.ui.charts import TelemetryCharts

BUDGET_MS = 16.0
REDRAWS = 50
SIZE = (1200, 800)


def synthetic_day(seed: int = 7) -> tuple[list[GpuSample], list[HostSample]]:
    """A day of a V100 alternating between decode bursts and idle, with sensor dropouts."""
    rng = np.random.default_rng(seed)
    t = np.arange(DAY_S, dtype=float)
    busy = (np.sin(t / 900.0) + 0.3 * rng.standard_normal(DAY_S)) > 0.1
    load = np.where(busy, 0.97, 0.02)
    power = 40 + load * 210 + rng.normal(0, 4, DAY_S)
    temperature = 30 + 0.2 * power + rng.normal(0, 0.5, DAY_S)
    limit = np.where(t < DAY_S / 2, 250.0, 200.0)
    power = np.minimum(power, limit)
    missing = rng.random(DAY_S) < 0.002  # the odd failed read
    missing[40_000:40_120] = True  # two minutes off the bus
    gpus = []
    hosts = []
    for i in range(DAY_S):
        ok = not missing[i]
        lost = 40_000 <= i < 40_120
        gpus.append(
            GpuSample(
                index=0,
                timestamp=float(i),
                temperature_c=float(temperature[i]) if ok else None,
                slowdown_c=None if lost else 87.0,
                power_w=float(power[i]) if ok else None,
                power_limit_w=None if lost else float(limit[i]),
                power_max_w=None if lost else 250.0,
                gpu_util_pct=float(load[i] * 100) if ok else None,
                mem_util_pct=float(load[i] * 90) if ok else None,
                memory_used_mib=None if lost else 14_212.0,
                memory_total_mib=None if lost else 16_384.0,
                sm_clock_mhz=float(135 + load[i] * 1245) if ok else None,
                mem_clock_mhz=None if lost else 877.0,
                lost=lost,
            )
        )
        cores = tuple(float(c) for c in np.clip(rng.normal(20 + 40 * load[i], 10, 8), 0, 100))
        hosts.append(HostSample(float(i), cores, 20_000 + 3_000 * load[i], 64_000.0, 512.0, 8_192.0))
    return gpus, hosts


def measure(
    app: QApplication, charts: TelemetryCharts, t_next: float
) -> tuple[list[float], list[float], list[float], float]:
    """Per redraw: ms for redraw() alone, ms for redraw() + paint, and CPU ms of the latter (a fairer figure
    on a busy machine). A new tick comes before each."""
    data_ms, frame_ms, cpu_ms = [], [], []
    for _ in range(REDRAWS):
        sample = GpuSample(index=0, timestamp=t_next, temperature_c=70.0, power_w=199.0, power_limit_w=200.0)
        host = HostSample(t_next, (30.0,) * 8, 21_000.0, 64_000.0, 512.0, 8_192.0)
        charts.history.record(Tick((sample,), host, engine_tok_s=60.0))
        charts.request_redraw()
        t_next += 1.0
        app.processEvents()  # let the coalescing timer fire, so the timed call below does the work
        cpu_start = time.process_time()
        start = time.perf_counter()
        charts.redraw()
        mid = time.perf_counter()
        charts.grab()  # renders every chart, as the next paint would
        end = time.perf_counter()
        cpu_ms.append((time.process_time() - cpu_start) * 1e3)
        data_ms.append((mid - start) * 1e3)
        frame_ms.append((end - start) * 1e3)
    return data_ms, frame_ms, cpu_ms, t_next


def report(label: str, values: list[float]) -> None:
    median, worst = statistics.median(values), max(values)
    print(
        f"  {label:<22} median {median:6.2f} ms ({median / BUDGET_MS:4.2f}× budget)   "
        f"worst {worst:6.2f} ms ({worst / BUDGET_MS:4.2f}×)"
    )


def main() -> None:
    app = QApplication.instance() or QApplication([])
    assert isinstance(app, QApplication)
    print("building 24 h of synthetic readings…", flush=True)
    gpus, hosts = synthetic_day()
    history = TelemetryHistory(wall_offset=time.time() - DAY_S)
    charts = TelemetryCharts(history)
    charts.resize(*SIZE)
    charts.show()
    fill_start = time.perf_counter()
    for gpu, host in zip(gpus, hosts, strict=True):
        rate = 55.0 if gpu.gpu_util_pct and gpu.gpu_util_pct > 50 else 0.0
        history.record(Tick((gpu,), host, engine_tok_s=rate))
    charts.select_gpu(0)
    print(f"filled {len(history.host):,} ticks per series in {time.perf_counter() - fill_start:.1f} s")
    t_next = float(DAY_S)
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} (wall times suffer when busy)")
    print(f"redraw with 24 h in every series, widget {SIZE[0]}×{SIZE[1]}, {REDRAWS} redraws, budget {BUDGET_MS} ms")
    for window_label, seconds in (("24 h view", float(DAY_S)), ("5 min follow window", 300.0)):
        charts.set_window(seconds)
        app.processEvents()
        *_, t_next = measure(app, charts, t_next)  # warm-up (caches, first paints); not reported
        data_ms, frame_ms, cpu_ms, t_next = measure(app, charts, t_next)
        x0, x1 = charts.visible_range()
        print(f"{window_label} (visible span {x1 - x0:,.0f} s):")
        report("redraw() only", data_ms)
        report("redraw() + paint", frame_ms)
        report("redraw() + paint, CPU", cpu_ms)
    charts.close()


if __name__ == "__main__":
    main()
