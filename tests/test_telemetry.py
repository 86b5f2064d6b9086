"""Telemetry: NVML samples from recorded sessions, the sampling thread, and the CSV log."""

from __future__ import annotations

import csv
import datetime
import itertools
import logging
import math
import threading
import time
from pathlib import Path

import pynvml
import pytest
from fake_nvml import FakeGpu, FakeNvml

from gui.core.gpu_sample import SERIES_FIELDS, GpuSample
from gui.core.simulated_gpu import SimulatedGpu
from gui.services.nvml import Nvml, decode_clock_event_reasons
from gui.services.telemetry import HostSample, SimulatedSource, TelemetryService, Tick, sample_host


def host_at(t: float) -> HostSample:
    return HostSample(t, (12.5, 80.0), 20_000.0, 64_000.0, 0.0, 8_192.0)


def replay_samples(recording: str, ticks: int) -> list[GpuSample]:
    fake = FakeNvml.replay(recording)
    nvml = Nvml(fake)
    samples = []
    for _ in range(ticks):
        samples.append(nvml.sample(0))
        fake.step()
    return samples


# --- NVML sampling, from recorded readings ------------------------------------------------------------


def test_v100_session_reads_in_human_units() -> None:
    idle, loaded, busy, capped_hot, hot, ecc, capped, *_ = replay_samples("nvml_v100_session.json", 9)
    assert (idle.name, idle.temperature_c, idle.power_w, idle.power_limit_w) == ("Tesla V100-PCIE-16GB", 36, 25.87, 250)
    assert (idle.power_min_w, idle.power_max_w, idle.power_default_w) == (100.0, 250.0, 250.0)
    assert (idle.slowdown_c, idle.shutdown_c, idle.pstate) == (87.0, 90.0, 0)
    assert idle.throttle_reasons == ("idle",) and (idle.pcie_gen, idle.pcie_width) == (1, 16)
    assert (idle.pcie_gen_max, idle.pcie_width_max) == (3, 16)
    assert (loaded.memory_used_mib, loaded.memory_total_mib, loaded.memory_free_mib) == (14212.0, 16384.0, 2172.0)
    assert (busy.gpu_util_pct, busy.mem_util_pct, busy.sm_clock_mhz, busy.mem_clock_mhz) == (97, 88, 1380, 877)
    assert busy.throttle_reasons == ()  # readable and nothing holding the clocks back
    assert capped_hot.throttle_reasons == ("power cap",) and hot.temperature_c == 81
    assert (ecc.ecc_corrected, ecc.ecc_uncorrected) == (2, 0)
    assert capped.power_limit_w == 200.0 and capped.power_w == pytest.approx(199.62)
    assert not any(s.simulated or s.lost for s in (idle, busy, capped))


def test_unsupported_and_forbidden_fields_are_none_with_words() -> None:
    sample = replay_samples("nvml_v100_session.json", 1)[0]
    assert sample.fan_pct is None and sample.errors["fan_pct"] == "not supported by this GPU"
    assert sample.processes is None and sample.errors["processes"] == "no permission to read the GPU"
    assert set(sample.errors) == {"fan_pct", "processes"}
    series = sample.series()
    assert list(series) == list(SERIES_FIELDS) and math.isnan(series["fan_pct"]) and series["temperature_c"] == 36


def test_a_gpu_lost_mid_run_is_flagged_and_later_samples_work_again(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gui.services.nvml")
    samples = replay_samples("nvml_v100_session.json", 12)
    lost, back = samples[9], samples[10]
    assert lost.lost and lost.errors == {"gpu": "the GPU fell off the bus"}
    assert lost.temperature_c is None and lost.power_w is None and math.isnan(lost.series()["power_w"])
    assert not back.lost and back.temperature_c == 70 and back.power_limit_w == 200
    messages = [r.getMessage() for r in caplog.records]
    assert sum("fell off the bus" in m for m in messages) == 1
    assert sum("answers again" in m for m in messages) == 1


def test_each_missing_field_is_logged_once_not_per_tick(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="gui.services.nvml")
    replay_samples("nvml_v100_session.json", 9)
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "GPU 0: fan_pct has no value: not supported by this GPU",
        "GPU 0: processes has no value: no permission to read the GPU",
    ]


def test_processes_merge_graphics_and_compute_and_names_are_optional() -> None:
    idle, busy = replay_samples("nvml_3090_desktop.json", 2)
    assert idle.fan_pct == 30 and idle.pstate == 8
    assert idle.ecc_corrected is None and idle.errors["ecc_corrected"] == "not supported by this GPU"
    xorg, unnamed = idle.processes  # type: ignore[misc]
    assert (xorg.pid, xorg.name, xorg.used_mib) == (1234, "/usr/lib/xorg/Xorg", 420.0)
    assert (unnamed.pid, unnamed.name, unnamed.used_mib) == (5678, None, None)  # no permission, no accounting
    assert "process_name" not in idle.errors
    assert [(p.pid, p.name, p.used_mib) for p in busy.processes or ()] == [
        (1234, "/usr/lib/xorg/Xorg", 420.0), (4242, "python3", 21100.0),
    ]  # fmt: skip


def test_no_driver_sample_is_empty_with_the_reason() -> None:
    for nvml in (Nvml(), Nvml(FakeNvml.replay("nvml_no_driver.json"))):  # the real pynvml: no driver here
        sample = nvml.sample(0)
        assert sample.errors == {"nvml": "no NVIDIA driver found (NVML library missing)"}
        assert all(math.isnan(v) for v in sample.series().values())


def test_newer_calls_fall_back_to_older_ones_when_the_driver_lacks_them() -> None:
    gpu = FakeGpu(
        readings={"temperature_c": 64, "clock_event_reasons": 0x24},
        failures={
            "nvmlDeviceGetTemperature": pynvml.NVML_ERROR_FUNCTION_NOT_FOUND,
            "nvmlDeviceGetCurrentClocksEventReasons": pynvml.NVML_ERROR_FUNCTION_NOT_FOUND,
        },
    )
    fake = FakeNvml([gpu])
    sample = Nvml(fake).sample(0)
    assert sample.temperature_c == 64 and "nvmlDeviceGetTemperatureV" in fake.calls
    assert sample.throttle_reasons == ("power cap", "thermal slowdown")
    assert "nvmlDeviceGetCurrentClocksThrottleReasons" in fake.calls
    assert "temperature_c" not in sample.errors and "throttle_reasons" not in sample.errors


def test_encoder_and_decoder_utilisation_are_read_and_missing_ones_are_gaps_with_words() -> None:
    idle = replay_samples("nvml_v100_session.json", 1)[0]
    assert (idle.value("encoder_util_pct"), idle.value("decoder_util_pct")) == (0.0, 0.0)
    streaming = FakeGpu(readings={"encoder_util_pct": [35, 167000], "decoder_util_pct": [12, 167000]})
    sliced = FakeGpu(readings={"decoder_util_pct": [0, 167000]})  # a MIG slice: NVML gives no encoder reading
    refused = FakeGpu(failures={"nvmlDeviceGetDecoderUtilization": pynvml.NVML_ERROR_NO_PERMISSION})
    busy, mig, forbidden = (Nvml(FakeNvml([gpu])).sample(0) for gpu in (streaming, sliced, refused))
    assert busy.readings == {"encoder_util_pct": 35.0, "decoder_util_pct": 12.0}
    assert "encoder_util_pct" not in busy.errors and "decoder_util_pct" not in busy.errors
    assert busy.series()["encoder_util_pct"] == 35.0 and busy.series()["decoder_util_pct"] == 12.0
    assert mig.value("encoder_util_pct") is None and mig.errors["encoder_util_pct"] == "not supported by this GPU"
    assert math.isnan(mig.series()["encoder_util_pct"]) and mig.value("decoder_util_pct") == 0.0
    assert forbidden.errors["decoder_util_pct"] == "no permission to read the GPU"


def test_a_gpu_index_nvml_does_not_have_is_an_error_not_an_exception() -> None:
    sample = Nvml(FakeNvml([FakeGpu()])).sample(3)
    assert not sample.lost and "Invalid Argument" in sample.errors["gpu"]


def test_clock_event_reasons_decode_every_known_bit_and_keep_unknown_ones() -> None:
    words = decode_clock_event_reasons(pynvml, 0x1FF | 0x4000)
    assert words == (
        "idle", "application clocks", "power cap", "HW slowdown", "sync boost", "thermal slowdown",
        "HW thermal slowdown", "HW power brake", "display clocks", "other (0x4000)",
    )  # fmt: skip
    assert decode_clock_event_reasons(pynvml, 0) == ()


def test_power_limits_read_back() -> None:
    fake = FakeNvml.replay("nvml_v100_session.json")
    limits = Nvml(fake).power_limits(0)
    assert (limits.enforced_w, limits.min_w, limits.max_w, limits.default_w, limits.error) == (250, 100, 250, 250, "")


# --- the service ----------------------------------------------------------------------------------------


class FakeTime:
    """A clock that moves only when the service samples (by `cost`) or waits (by the timeout)."""

    def __init__(self, cost: float) -> None:
        self.now = 0.0
        self.cost = cost
        self.waits: list[float] = []

    def clock(self) -> float:
        return self.now

    def host(self) -> HostSample:
        self.now += self.cost  # sampling takes time
        return host_at(self.now)

    def wait(self, timeout: float) -> None:
        self.waits.append(timeout)
        self.now += timeout


def run_until(service: TelemetryService, ticks: list[Tick], count: int, enough: threading.Event) -> None:
    service.start()
    assert enough.wait(5.0), f"only {len(ticks)} ticks arrived"
    service.stop()
    assert not service.running


def collector(count: int) -> tuple[list[Tick], threading.Event, object]:
    ticks: list[Tick] = []
    enough = threading.Event()

    def listener(tick: Tick) -> None:
        ticks.append(tick)
        if len(ticks) >= count:
            enough.set()

    return ticks, enough, listener


def test_ticks_keep_to_the_interval_without_drift() -> None:
    fake_time = FakeTime(cost=0.1)
    ticks, enough, listener = collector(5)
    service = TelemetryService(
        listener,  # type: ignore[arg-type]
        source=Nvml(FakeNvml.replay("nvml_v100_session.json")),
        interval_s=1.0,
        clock=fake_time.clock,
        host_sampler=fake_time.host,
        wait=fake_time.wait,
    )
    run_until(service, ticks, 5, enough)
    assert fake_time.waits[:4] == pytest.approx([0.9, 0.9, 0.9, 0.9])  # interval minus the sampling time
    assert [t.host.timestamp for t in ticks[:5]] == pytest.approx([0.1, 1.1, 2.1, 3.1, 4.1])
    assert all(len(t.gpus) == 1 and t.status == "" for t in ticks)


def test_a_slow_sample_restarts_the_schedule_instead_of_bursting() -> None:
    fake_time = FakeTime(cost=2.5)  # each sample takes longer than the interval
    ticks, enough, listener = collector(4)
    service = TelemetryService(
        listener,  # type: ignore[arg-type]
        source=SimulatedSource([SimulatedGpu("t4")], clock=fake_time.clock),
        interval_s=1.0,
        clock=fake_time.clock,
        host_sampler=fake_time.host,
        wait=fake_time.wait,
    )
    run_until(service, ticks, 4, enough)
    assert fake_time.waits == []
    assert [t.host.timestamp for t in ticks[:4]] == pytest.approx([2.5, 5.0, 7.5, 10.0])


def test_real_thread_delivers_ticks_and_stops_promptly_mid_wait(caplog: pytest.LogCaptureFixture) -> None:
    ticks, enough, listener = collector(3)
    service = TelemetryService(
        listener,  # type: ignore[arg-type]
        source=Nvml(FakeNvml.replay("nvml_v100_session.json")),
        interval_s=0.25,
        host_sampler=lambda: host_at(time.monotonic()),
    )
    service.start()
    assert enough.wait(5.0)
    service.set_interval(5.0)  # now it sits in a 5 s wait...
    with caplog.at_level(logging.WARNING, logger="gui.services.telemetry"):
        service.stop(timeout_s=4.0)  # ...which stop must cut short: the thread ends within the join
    assert "did not stop" not in caplog.text and not service.running
    stamps = [t.gpus[0].timestamp for t in ticks[:3]]
    assert all(later > earlier for earlier, later in itertools.pairwise(stamps))


class ThreadNotingNvml(FakeNvml):
    init_thread: threading.Thread | None = None

    def nvmlInit(self) -> None:
        self.init_thread = threading.current_thread()
        super().nvmlInit()


def test_nvml_starts_on_the_telemetry_thread_not_the_callers() -> None:
    fake = ThreadNotingNvml([FakeGpu()])
    ticks, enough, listener = collector(1)
    service = TelemetryService(listener, source=Nvml(fake), host_sampler=lambda: host_at(0.0))  # type: ignore[arg-type]
    assert fake.calls == []  # constructing the service touches nothing
    run_until(service, ticks, 1, enough)
    assert fake.init_thread is not None and fake.init_thread.name == "telemetry"
    assert fake.calls[0] == "nvmlInit" and fake.calls[-1] == "nvmlShutdown"


def test_no_driver_gives_ticks_without_gpus_and_one_status() -> None:
    service = TelemetryService(lambda tick: None, source=Nvml(), host_sampler=lambda: host_at(1.0))
    tick = service.sample_now()
    assert tick.gpus == () and tick.status == "no NVIDIA driver found (NVML library missing)"
    assert tick.host.ram_total_mib == 64_000.0


def test_select_limits_the_sampled_gpus() -> None:
    fake = FakeNvml([FakeGpu(name="A"), FakeGpu(name="B"), FakeGpu(name="C")])
    service = TelemetryService(lambda tick: None, source=Nvml(fake), host_sampler=lambda: host_at(0.0))
    assert [g.name for g in service.sample_now().gpus] == ["A", "B", "C"]
    service.select([2, 0, 7])  # 7 does not exist: ignored
    assert [g.index for g in service.sample_now().gpus] == [0, 2]
    service.select(None)
    assert len(service.sample_now().gpus) == 3
    with pytest.raises(ValueError):
        service.select([-1])


@pytest.mark.parametrize("bad", [0.1, 0.2499, 5.01, 60, math.nan, math.inf, "1", True, None])
def test_interval_is_validated_with_a_clear_message(bad: object) -> None:
    with pytest.raises(ValueError, match="interval"):
        TelemetryService(lambda tick: None, interval_s=bad)  # type: ignore[arg-type]
    service = TelemetryService(lambda tick: None, source=Nvml(FakeNvml([])))
    with pytest.raises(ValueError, match="interval"):
        service.set_interval(bad)  # type: ignore[arg-type]
    assert service.interval_s == 1.0


@pytest.mark.parametrize("good", [0.25, 1, 5.0])
def test_interval_bounds_are_allowed(good: float) -> None:
    assert TelemetryService(lambda tick: None, interval_s=good).interval_s == good


def test_a_failing_listener_is_logged_once_and_sampling_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[Tick] = []
    enough = threading.Event()

    def listener(tick: Tick) -> None:
        calls.append(tick)
        if len(calls) >= 3:
            enough.set()
        raise RuntimeError("widget gone")

    fake_time = FakeTime(cost=0.1)
    service = TelemetryService(
        listener, source=Nvml(FakeNvml([FakeGpu()])), clock=fake_time.clock, host_sampler=fake_time.host,
        wait=fake_time.wait,
    )  # fmt: skip
    run_until(service, calls, 3, enough)
    assert len([r for r in caplog.records if r.getMessage() == "telemetry listener failed"]) == 1


def test_simulated_source_advances_with_the_clock_at_the_reported_load() -> None:
    now = [0.0]
    source = SimulatedSource([SimulatedGpu("v100-pcie-16gb")], clock=lambda: now[0])
    idle = source.sample(0)
    source.set_load(1.0)
    now[0] = 600.0
    busy = source.sample(0)
    assert busy.simulated and busy.timestamp == 600.0 and busy.power_w == 250.0
    assert (
        busy.temperature_c == pytest.approx(82.0, abs=0.1)
        and idle.temperature_c is not None
        and idle.temperature_c < 30
    )


def test_host_sample_from_psutil() -> None:
    host = sample_host()
    assert len(host.cpu_pct) >= 1 and all(0.0 <= c <= 100.0 for c in host.cpu_pct)
    assert 0 < host.ram_used_mib <= host.ram_total_mib and host.swap_used_mib <= max(host.swap_total_mib, 0.0)


# --- CSV log --------------------------------------------------------------------------------------------


def test_csv_log_has_one_header_and_empty_cells_for_missing_values(tmp_path: Path) -> None:
    fake = FakeNvml.replay("nvml_v100_session.json")
    service = TelemetryService(lambda tick: None, source=Nvml(fake), host_sampler=lambda: host_at(3.0))
    path = tmp_path / "run.csv"
    service.start_csv_log(path)
    assert service.csv_path == path
    for _ in range(11):
        service._deliver(service.sample_now())
        fake.step()
    # Flushed every tick: readable while the log is still open.
    rows = list(csv.DictReader(path.open(newline="")))
    service.stop_csv_log()
    assert len(rows) == 11 and path.read_text().count("time_unix") == 1
    first = rows[0]
    assert first["gpu0_temperature_c"] == "36" and first["gpu0_power_w"] == "25.87"
    assert first["gpu0_fan_pct"] == "" and first["gpu0_throttle_reasons"] == "idle"
    assert first["cpu0_pct"] == "12.5" and first["cpu1_pct"] == "80" and first["ram_total_mib"] == "64000"
    assert rows[6]["gpu0_power_limit_w"] == "200" and rows[3]["gpu0_throttle_reasons"] == "power cap"
    assert rows[9]["gpu0_lost"] == "1" and rows[9]["gpu0_temperature_c"] == ""
    assert rows[10]["gpu0_lost"] == "0" and rows[10]["gpu0_temperature_c"] == "70"
    assert "n/a" not in path.read_text() and "nan" not in path.read_text().lower()
    assert list(first)[:3] == ["time_unix", "time_monotonic", "status"]
    assert {f"gpu0_{name}" for name in SERIES_FIELDS} <= set(first)


def test_csv_log_has_the_video_engines_after_every_older_column(tmp_path: Path) -> None:
    streaming = FakeGpu(readings={"encoder_util_pct": [35, 167000], "decoder_util_pct": [0, 167000]})
    source = Nvml(FakeNvml([streaming, FakeGpu(name="Tesla P40")]))
    service = TelemetryService(lambda tick: None, source=source, host_sampler=lambda: host_at(0.0))
    path = tmp_path / "video.csv"
    service.start_csv_log(path)
    service._deliver(service.sample_now())
    service.stop_csv_log()
    with path.open(newline="") as handle:
        header = next(csv.reader(handle))
    (row,) = csv.DictReader(path.open(newline=""))
    video = ["gpu0_encoder_util_pct", "gpu0_decoder_util_pct", "gpu1_encoder_util_pct", "gpu1_decoder_util_pct"]
    assert header[-4:] == video and header[-5] == "gpu1_simulated"
    assert [row[column] for column in video] == ["35", "0", "", ""]  # the P40 here gives none: empty cells


def test_csv_log_without_gpus_writes_the_status(tmp_path: Path) -> None:
    service = TelemetryService(lambda tick: None, source=Nvml(), host_sampler=lambda: host_at(0.0))
    path = tmp_path / "nodriver.csv"
    service.start_csv_log(path)
    service._deliver(service.sample_now())
    service.stop()  # also closes the log
    (row,) = csv.DictReader(path.open(newline=""))
    assert row["status"] == "no NVIDIA driver found (NVML library missing)"
    assert not any(key.startswith("gpu") for key in row)


def test_csv_log_to_an_unwritable_place_raises_to_the_caller(tmp_path: Path) -> None:
    service = TelemetryService(lambda tick: None, source=Nvml(FakeNvml([])))
    with pytest.raises(OSError):
        service.start_csv_log(tmp_path / "missing-dir" / "run.csv")
    assert service.csv_path is None


def test_engine_rate_is_stamped_on_every_tick() -> None:
    service = TelemetryService(lambda tick: None, source=Nvml(FakeNvml([])), host_sampler=lambda: host_at(0.0))
    assert math.isnan(service.sample_now().engine_tok_s)  # never reported
    service.set_engine_rate(12.5)
    assert service.sample_now().engine_tok_s == 12.5 and service.engine_rate == 12.5
    service.set_engine_rate(None)
    assert math.isnan(service.sample_now().engine_tok_s)
    with pytest.raises(ValueError, match="negative"):
        service.set_engine_rate(-1.0)


def test_csv_log_has_the_engine_rate_and_the_host_summary(tmp_path: Path) -> None:
    service = TelemetryService(lambda tick: None, source=Nvml(FakeNvml([])), host_sampler=lambda: host_at(0.0))
    path = tmp_path / "rate.csv"
    service.start_csv_log(path)
    service.set_engine_rate(12.5)
    service._deliver(service.sample_now())
    service.set_engine_rate(None)
    service._deliver(service.sample_now())
    service.stop_csv_log()
    rows = list(csv.DictReader(path.open(newline="")))
    assert [row["engine_tok_s"] for row in rows] == ["12.5", ""]
    assert rows[0]["cpu_avg_pct"] == "46.25" and rows[0]["cpu_max_pct"] == "80"
    local = datetime.datetime.fromisoformat(rows[0]["time_local"])
    assert local.timestamp() == pytest.approx(float(rows[0]["time_unix"]), abs=1.0)
