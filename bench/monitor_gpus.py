"""How long the Monitor holds the UI thread per tick with many other machines' GPUs, against a 30 ms budget.

A MonitorView on a simulated local card watches exporters whose answers describe ``N`` GPUs in all (DCGM's
format, as dcgm-exporter writes it, split over exporters of at most 64 GPUs), read here on this thread, not
over the network. Each tick is what the telemetry bridge hands the view on the UI thread (rows, alerts, the
history, the charts' redraw); the figure is the median and the worst of ``TICKS`` ticks after a warm-up,
for none, 8 and 75 remote GPUs (the charts draw the first MAX_CHARTED_GPUS of them).
It also prints how many GPU histories the view keeps and their memory once an
exporter has renamed its GPUs on every answer for a while.

Run: `.venv/bin/python bench/monitor_gpus.py` (prints ms per tick and the ratio to the 30 ms budget).
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

from PySide6.QtWidgets import QApplication

from gui.core.simulated_gpu import SimulatedGpu
from gui.services.bundle import GpuServices
from gui.services.gpu_exporter import MAX_GPUS_PER_EXPORTER
from gui.services.telemetry import SimulatedSource
from gui.ui.monitor import MonitorView

BUDGET_MS = 30.0
WARM_UP = 5
TICKS = 30


class Clock:
    def __init__(self) -> None:
        self.t = 10_000.0

    def __call__(self) -> float:
        return self.t


def exposition(gpus: int, host: str, tag: str = "", load: int = 0) -> bytes:
    """A dcgm-exporter answer for ``gpus`` GPUs of one machine (``tag`` renames them: new UUIDs)."""
    metrics = (
        ("DCGM_FI_DEV_GPU_TEMP", lambda i: 40 + (i + load) % 40),
        ("DCGM_FI_DEV_POWER_USAGE", lambda i: 60.0 + (i * 7 + load) % 180),
        ("DCGM_FI_DEV_POWER_MGMT_LIMIT", lambda i: 250.0),
        ("DCGM_FI_DEV_FB_USED", lambda i: 1000 + (i * 97 + load) % 20000),
        ("DCGM_FI_DEV_FB_FREE", lambda i: 4000),
        ("DCGM_FI_DEV_GPU_UTIL", lambda i: (i * 13 + load) % 100),
        ("DCGM_FI_DEV_SM_CLOCK", lambda i: 1300),
    )
    lines = []
    for name, value in metrics:
        lines.append(f"# TYPE {name} gauge")
        for i in range(gpus):
            labels = f'gpu="{i}",UUID="GPU-{tag}{host}-{i:04d}",modelName="Tesla P40",Hostname="{host}"'
            lines.append(f"{name}{{{labels}}} {value(i)}")
    return ("\n".join(lines) + "\n").encode()


def local_card(clock: Clock) -> SimulatedSource:
    return SimulatedSource([SimulatedGpu("p40")], clock=clock)


def monitor(remote: int, clock: Clock) -> tuple[MonitorView, list[str]]:
    view = MonitorView(GpuServices.create(local_card(clock), clock=clock))
    view.resize(1200, 900)
    view.show()
    counts = [MAX_GPUS_PER_EXPORTER] * (remote // MAX_GPUS_PER_EXPORTER)
    if remote % MAX_GPUS_PER_EXPORTER:
        counts.append(remote % MAX_GPUS_PER_EXPORTER)
    urls = [f"http://box{n}.example:9400/metrics" for n in range(len(counts))]
    answers = {url: exposition(count, f"box{n}") for n, (url, count) in enumerate(zip(urls, counts, strict=True))}
    view.exporters._fetch = lambda url, _timeout, _stop: answers[url]
    view.set_exporters(urls)
    return view, urls


def one_tick(app: QApplication, view: MonitorView, clock: Clock, urls: list[str]) -> float:
    for url in urls:  # the exporters' threads' work, done before the tick is timed
        view.exporters.poll(url)
    clock.t += 1.0
    start = time.perf_counter()
    view.sample_now()
    app.processEvents()  # the paint the redraw asked for
    return (time.perf_counter() - start) * 1000


def ui_stall(app: QApplication, remote: int) -> tuple[float, float]:
    clock = Clock()
    view, urls = monitor(remote, clock)
    for _ in range(WARM_UP):
        one_tick(app, view, clock, urls)
    times = [one_tick(app, view, clock, urls) for _ in range(TICKS)]
    view.stop()
    view.close()
    view.deleteLater()
    app.processEvents()
    return statistics.median(times), max(times)


def renaming(app: QApplication, answers: int = 20) -> tuple[int, float]:
    """An exporter that names its 64 GPUs anew on every answer: the histories kept, and their MiB."""
    clock = Clock()
    view = MonitorView(GpuServices.create(local_card(clock), clock=clock))
    url = "http://renamer.example:9400/metrics"
    n = [0]
    view.exporters._fetch = lambda _url, _timeout, _stop: exposition(MAX_GPUS_PER_EXPORTER, "renamer", f"r{n[0]}-")
    view.set_exporters([url])
    for step in range(answers):
        n[0] = step
        view.exporters.poll(url)
        clock.t += 1.0
        view.sample_now()
    rings = view.history.gpus
    mib = sum(ring._data.nbytes for ring in rings.values()) / 2**20
    view.stop()
    view.close()
    return len(rings), mib


def main() -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    print(f"UI thread per tick (median, worst of {TICKS}) against a {BUDGET_MS:.0f} ms budget:")
    for remote in (0, 8, 75):
        median, worst = ui_stall(app, remote)
        print(
            f"  {remote:4d} remote GPUs + 1 local: {median:7.1f} ms median ({median / BUDGET_MS:4.2f}x budget), "
            f"{worst:7.1f} ms worst ({worst / BUDGET_MS:4.2f}x)"
        )
    kept, mib = renaming(app)
    print(f"an exporter renaming its 64 GPUs on 20 answers: {kept} GPU histories kept, {mib:,.0f} MiB")


if __name__ == "__main__":
    main()
