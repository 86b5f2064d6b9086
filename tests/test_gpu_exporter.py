"""Other machines' GPUs read from their Prometheus exporter (gui/services/gpu_exporter.py), over real HTTP on
127.0.0.1: recorded dcgm-exporter and nvitop-exporter answers become the same GpuSample readings NVML gives here,
marked with their machine; an exporter that cannot be reached, answers an error or a hostile body is said in
words within its deadline; the telemetry service adds the remote GPUs to every tick without waiting on them."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator

import pytest
from exporter_server import (
    DCGM_P40X2,
    NVITOP_V100,
    Answer,
    ExporterServer,
    endless,
    exporter_server,
    free_port,
    trickle,
)
from fake_nvml import FakeGpu, FakeNvml

from gui.core.gpu_sample import GpuSample
from gui.core.tick import HostSample
from gui.services.gpu_exporter import REMOTE_INDEX, ExporterPoller, fetch_exposition
from gui.services.nvml import Nvml
from gui.services.telemetry import TelemetryService


@pytest.fixture
def server() -> Iterator[ExporterServer]:
    with exporter_server() as running:
        yield running


def by_number(samples: tuple[GpuSample, ...]) -> dict[str, GpuSample]:
    return {str(s.host_gpu): s for s in samples}


def test_dcgm_exporter_gpus_become_samples(server: ExporterServer) -> None:
    url = server.serve("/metrics", DCGM_P40X2)
    poller = ExporterPoller(clock=lambda: 123.0)
    poller.set_urls([url])
    status = poller.poll(url)
    assert (status.host, status.gpus, status.problem, status.warnings) == ("gpu-box", 2, "", ())
    gpus = by_number(poller.samples())
    busy, idle = gpus["0"], gpus["1"]
    assert busy.remote and busy.host == "gpu-box" and busy.name == "Tesla P40" and busy.timestamp == 123.0
    assert (busy.temperature_c, busy.power_w, busy.gpu_util_pct, busy.mem_util_pct) == (78.0, 187.436, 97.0, 61.0)
    assert (busy.memory_used_mib, busy.memory_free_mib, busy.memory_total_mib) == (21706.0, 2741.0, 24447.0)
    assert (busy.sm_clock_mhz, busy.mem_clock_mhz) == (1531.0, 3615.0)
    assert (idle.temperature_c, idle.power_w, idle.memory_used_mib) == (41.0, 49.892, 214.0)
    # What DCGM does not give stays "no value", as an NVML reading the driver refuses.
    assert busy.power_limit_w is None and busy.throttle_reasons is None and not busy.lost
    # Indices of their own, above this machine's, and the same at the next answer.
    assert sorted(s.index for s in poller.samples()) == [REMOTE_INDEX, REMOTE_INDEX + 1]
    poller.poll(url)
    assert by_number(poller.samples())["1"].index == idle.index
    assert server.requests == ["/metrics", "/metrics"]


def test_nvitop_exporter_gpus_become_samples(server: ExporterServer) -> None:
    url = server.serve("/metrics", NVITOP_V100)
    poller = ExporterPoller()
    poller.set_urls([url])
    assert poller.poll(url).host == "10.0.0.7"
    (v100,) = poller.samples()
    assert (v100.host, v100.host_gpu, v100.name) == ("10.0.0.7", "0", "Tesla V100-SXM2-16GB")
    assert (v100.temperature_c, v100.power_w, v100.power_limit_w) == (86.0, 241.87, 300.0)
    assert (v100.memory_used_mib, v100.memory_total_mib, v100.gpu_util_pct) == (14012.375, 16384.0, 88.0)
    assert (v100.sm_clock_mhz, v100.mem_clock_mhz) == (1380.0, 877.0)
    assert v100.fan_pct is None and v100.errors["fan_pct"] == "the exporter gives no value"  # nvitop's NaN


def test_two_exporters_at_once_keep_their_gpus_apart(server: ExporterServer) -> None:
    dcgm = server.serve("/dcgm", DCGM_P40X2)
    nvitop = server.serve("/nvitop", NVITOP_V100)
    poller = ExporterPoller()
    poller.set_urls([dcgm, nvitop])
    poller.poll(nvitop)
    poller.poll(dcgm)
    samples = poller.samples()
    assert [(s.host, s.host_gpu) for s in samples] == [("gpu-box", "0"), ("gpu-box", "1"), ("10.0.0.7", "0")]
    assert len({s.index for s in samples}) == 3
    poller.set_urls([nvitop])  # one removed: its GPUs go with it
    assert [s.host for s in poller.samples()] == ["10.0.0.7"]
    assert [s.url for s in poller.statuses()] == [nvitop]


def test_an_unreachable_exporter_is_said_in_words_and_its_gpus_lose_their_readings(server: ExporterServer) -> None:
    url = server.serve("/metrics", DCGM_P40X2)
    poller = ExporterPoller(timeout_s=2.0)
    poller.set_urls([url])
    poller.poll(url)
    server.httpd.shutdown()
    server.httpd.server_close()
    started = time.monotonic()
    status = poller.poll(url)
    assert time.monotonic() - started < 3.0
    assert status.gpus == 0 and status.problem.startswith("127.0.0.1 cannot be read: ")
    assert "refused" in status.problem
    # The two P40s stay listed, with nothing read and why (the charts get a gap, the rows n/a).
    kept = poller.samples()
    assert [s.host_gpu for s in kept] == ["0", "1"]
    assert all(s.temperature_c is None and s.errors["exporter"] == status.problem for s in kept)


def test_nothing_listening_and_a_name_that_does_not_resolve() -> None:
    poller = ExporterPoller(timeout_s=2.0)
    nobody = f"http://127.0.0.1:{free_port()}/metrics"
    nowhere = "http://no-such-host.invalid:9400/metrics"
    poller.set_urls([nobody, nowhere])
    assert [s.answered for s in poller.statuses()] == [False, False]
    assert "cannot be read" in poller.poll(nobody).problem
    lookup = poller.poll(nowhere)
    assert lookup.problem.startswith("no-such-host.invalid cannot be read: ") and lookup.gpus == 0
    assert poller.samples() == ()


def test_error_answers_and_web_pages_are_said(server: ExporterServer) -> None:
    poller = ExporterPoller()
    missing = server.url("/nothing-here")
    page = server.serve("/d/gpu", Answer(b"<html><body>Grafana</body></html>", content_type="text/html; charset=utf-8"))
    other = server.serve("/other", b"# HELP up up\nup 1\nnode_load1 0.42\n")
    poller.set_urls([missing, page, other])
    assert poller.poll(missing).problem == f"{missing} answered HTTP 404"
    assert "it answers text/html, not Prometheus text: is the path /metrics?" in poller.poll(page).problem
    assert "has no GPU metric this monitor reads" in poller.poll(other).problem


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (Answer(stream=endless(b"DCGM_FI_DEV_GPU_TEMP 1\n", 6 << 20)), "larger than 4 MiB"),
        (Answer(b"\x00\x01\x02\xff" * 1000, content_type="application/octet-stream"), "binary data"),
        (Answer(stream=endless(b"9" * 4096, 3 << 20)), "has no GPU metric"),
    ],
    ids=["huge", "binary", "endless-line"],
)
def test_hostile_bodies_are_bounded_and_said(server: ExporterServer, answer: Answer, why: str) -> None:
    url = server.serve("/metrics", answer)
    poller = ExporterPoller()
    poller.set_urls([url])
    status = poller.poll(url)
    assert why in status.problem and poller.samples() == ()


def test_malformed_numbers_are_skipped_and_the_rest_is_read(server: ExporterServer) -> None:
    text = DCGM_P40X2.read_text().replace("} 187.436000", "} 187,4").replace("} 1531\n", "} 0x5fb\n")
    url = server.serve("/metrics", text.encode())
    poller = ExporterPoller()
    poller.set_urls([url])
    status = poller.poll(url)
    assert status.gpus == 2 and status.problem == ""
    assert [w.split(":")[1].strip() for w in status.warnings] == ["'0x5fb' is not a number", "'187,4' is not a number"]
    busy = by_number(poller.samples())["0"]
    assert busy.power_w is None and busy.sm_clock_mhz is None and busy.temperature_c == 78.0


def test_a_server_that_trickles_is_cut_at_the_deadline(server: ExporterServer) -> None:
    url = server.serve("/metrics", Answer(stream=trickle(b"# still here\n", 0.2, 30.0)))
    poller = ExporterPoller(timeout_s=1.0)
    poller.set_urls([url])
    started = time.monotonic()
    status = poller.poll(url)
    assert time.monotonic() - started < 2.5
    assert status.problem.startswith("127.0.0.1 cannot be read: ")


def test_fetch_refuses_what_is_not_http() -> None:
    with pytest.raises(Exception, match="not an http"):
        fetch_exposition("file:///etc/hostname")


def test_the_poller_threads_keep_the_latest_and_stop(server: ExporterServer) -> None:
    url = server.serve("/metrics", DCGM_P40X2)
    poller = ExporterPoller(interval_s=0.1)
    poller.start()
    try:
        poller.set_urls([url])
        deadline = time.monotonic() + 10
        while len(server.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.requests) >= 3 and len(poller.samples()) == 2
    finally:
        poller.stop()
    time.sleep(0.3)
    asked = len(server.requests)
    time.sleep(0.4)
    assert len(server.requests) == asked  # stopped: no one asks any more
    assert not [t for t in threading.enumerate() if t.name == "gpu-exporter" and t.is_alive()]


def test_a_bad_url_changes_nothing() -> None:
    poller = ExporterPoller()
    poller.set_urls(["http://gpu-box:9400"])
    with pytest.raises(ValueError, match="only http and https"):
        poller.set_urls(["http://gpu-box:9400", "ftp://gpu-box/"])
    assert poller.urls == ("http://gpu-box:9400/metrics",)


def test_telemetry_ticks_carry_the_remote_gpus_after_this_machines(server: ExporterServer) -> None:
    url = server.serve("/metrics", NVITOP_V100)
    local = FakeGpu(name="Tesla P40", total_mib=24576.0, used_mib=512.0, readings={"temperature_c": 40})
    host = HostSample(0.0, (1.0,), 1.0, 2.0, 0.0, 0.0)
    service = TelemetryService(source=Nvml(FakeNvml([local])), host_sampler=lambda: host)
    poller = ExporterPoller()
    poller.set_urls([url])
    service.set_remote(poller.samples)
    assert [s.index for s in service.sample_now().gpus] == [0]  # not read yet: nothing waited for
    poller.poll(url)
    tick = service.sample_now()
    assert [(s.index, s.host, s.temperature_c) for s in tick.gpus] == [
        (0, None, 40.0),
        (REMOTE_INDEX, "10.0.0.7", 86.0),
    ]
    assert math.isnan(tick.gpus[1].series()["fan_pct"]) and "host" not in tick.gpus[1].series()
    service.stop()
