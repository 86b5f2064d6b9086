"""Many other machines' GPUs in the Monitor: any number draws (colours repeat past the palette's), the GPUs watched
are bounded per exporter and in all, and a GPU its exporter stops naming is forgotten and its history freed, so
an exporter that renames its GPUs on every answer cannot take the window's memory. (The time a tick holds the UI
thread with 75 remote GPUs is measured by bench/monitor_gpus.py.)"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from monitor_kit import FakeClock, MakeView

from gui.core.simulated_gpu import SimulatedGpu
from gui.core.telemetry_history import GPU_FORGET_S, MAX_GPU_HISTORIES
from gui.core.theme import GPU_COLOURS, LIGHT, gpu_series
from gui.services.gpu_exporter import MAX_GPUS_PER_EXPORTER, MAX_REMOTE_GPUS, ExporterPoller
from gui.services.telemetry import SimulatedSource
from gui.ui.charts import MAX_CHARTED_GPUS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from monitor_gpus import exposition


def test_every_gpu_position_has_a_colour() -> None:
    assert GPU_COLOURS == 8  # gpu_0..gpu_7, not gpu_util_pct
    assert all(gpu_series(n) in LIGHT.series for n in range(3 * GPU_COLOURS + 1))


def watch(view, clock: FakeClock, answers: dict[str, bytes]) -> None:
    view.exporters._fetch = lambda url, _timeout, _stop: answers[url]
    view.set_exporters(list(answers))
    for url in answers:
        view.exporters.poll(url)
    clock.t += 1.0
    view.sample_now()


@pytest.mark.parametrize("remote", [8, MAX_REMOTE_GPUS])
def test_any_number_of_gpus_draws(make_view: MakeView, clock: FakeClock, remote: int) -> None:
    """8 from an exporter and the local card (nine: the count that raised KeyError 'gpu_8'), and the bound."""
    view = make_view(SimulatedSource([SimulatedGpu("p40")], clock=clock))
    view.show()
    per = MAX_GPUS_PER_EXPORTER
    answers = {
        f"http://box{n}.example:9400/metrics": exposition(min(per, remote - n * per), f"box{n}")
        for n in range(-(-remote // per))
    }
    watch(view, clock, answers)
    clock.t += 1.0
    view.sample_now()
    assert len(view.samples) == remote + 1 and len(view.history.gpus) == remote + 1
    drawn = list(view.charts.shared_gpus)
    assert len(drawn) == min(remote + 1, MAX_CHARTED_GPUS) and drawn[0] == 0  # this machine's first
    assert all(view.charts.gpu_colour(i) in LIGHT.series.values() for i in drawn)
    view.grab()


def test_an_exporter_renaming_its_gpus_is_bounded_and_forgotten(make_view: MakeView, clock: FakeClock) -> None:
    view = make_view(SimulatedSource([SimulatedGpu("p40")], clock=clock))
    url = "http://renamer.example:9400/metrics"
    answer = [exposition(MAX_GPUS_PER_EXPORTER, "renamer", "r0-")]
    view.exporters._fetch = lambda _url, _timeout, _stop: answer[0]
    view.set_exporters([url])
    for step in range(10):  # new names on every answer, a second apart
        answer[0] = exposition(MAX_GPUS_PER_EXPORTER, "renamer", f"r{step}-")
        view.exporters.poll(url)
        clock.t += 1.0
        view.sample_now()
    # The first answer's GPUs keep their places; the renamed ones wait for them to be forgotten.
    assert len(view.exporters._indices) == MAX_GPUS_PER_EXPORTER
    assert len(view.history.gpus) <= MAX_GPUS_PER_EXPORTER + 1
    clock.t += GPU_FORGET_S + 1
    view.exporters.poll(url)
    clock.t += 1.0
    view.sample_now()
    clock.t += GPU_FORGET_S + 1
    view.exporters.poll(url)
    clock.t += 1.0
    view.sample_now()
    # The old names are forgotten by the poller and their histories freed; the new names are watched.
    names = {s.index for s in view.exporters.samples()}
    assert len(names) == MAX_GPUS_PER_EXPORTER and set(view.history.gpus) == names | {0}
    assert len(view.history.gpus) <= MAX_GPU_HISTORIES


def test_the_poller_bounds_gpus_in_all() -> None:
    poller = ExporterPoller(clock=lambda: 1.0)
    urls = [f"http://box{n}.example:9400/metrics" for n in range(MAX_REMOTE_GPUS // MAX_GPUS_PER_EXPORTER + 2)]
    answers = {url: exposition(MAX_GPUS_PER_EXPORTER, f"box{n}") for n, url in enumerate(urls)}
    poller._fetch = lambda url, _timeout, _stop: answers[url]
    poller.set_urls(urls)
    for url in urls:
        poller.poll(url)
    assert len(poller.samples()) == MAX_REMOTE_GPUS
    poller.set_urls(urls[1:])  # a removed exporter's places are free again
    poller.poll(urls[-1])
    assert len(poller.samples()) == MAX_REMOTE_GPUS
