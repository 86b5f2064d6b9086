"""The monitor's telemetry history without Qt: recording, row alignment, drawing data, and the shared CSV layout."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest
from fake_nvml import FakeNvml

from gui.core.gpu_sample import SERIES_FIELDS, GpuSample
from gui.core.ring import RingBuffer
from gui.core.simulated_gpu import SimulatedGpu
from gui.core.telemetry_csv import csv_columns
from gui.core.telemetry_fields import ADDED_READINGS
from gui.core.telemetry_history import (
    BUCKET_S,
    MIN_CAPACITY,
    Frame,
    MinuteBuckets,
    Span,
    TelemetryHistory,
    capacity_for,
    peak_decimate,
    plan_span,
    step_line,
)
from gui.core.tick import HostSample, Tick
from gui.services.nvml import Nvml
from gui.services.telemetry import SimulatedSource, TelemetryService

# Each GPU's readings in the CSV's first layout, as logs written before any reading was added have them.
FIRST_LAYOUT = [
    "temperature_c", "slowdown_c", "shutdown_c", "power_w", "power_limit_w", "power_min_w", "power_max_w",
    "power_default_w", "gpu_util_pct", "mem_util_pct", "memory_used_mib", "memory_free_mib", "memory_total_mib",
    "sm_clock_mhz", "mem_clock_mhz", "fan_pct", "pstate", "ecc_corrected", "ecc_uncorrected", "pcie_gen",
    "pcie_width", "pcie_gen_max", "pcie_width_max",
]  # fmt: skip
OFFSET = 1_700_000_000.0  # telemetry clock -> Unix time, fixed so rows can be named by time


def host(t: float, cores: tuple[float, ...] = (10.0, 30.0)) -> HostSample:
    return HostSample(t, cores, 20_000.0, 64_000.0, 0.0, 8_192.0)


def gpu(index: int, t: float, temperature: float = 50.0, **kwargs: object) -> GpuSample:
    return GpuSample(index=index, timestamp=t, temperature_c=temperature, **kwargs)  # type: ignore[arg-type]


def tick(t: float, *gpus: GpuSample, status: str = "", rate: float = math.nan) -> Tick:
    return Tick(gpus=gpus, host=host(t), status=status, engine_tok_s=rate)


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with path.open(newline="") as handle:
        reader = csv.DictReader(handle)
        rows = list(reader)
        return list(reader.fieldnames or []), rows


@pytest.fixture
def history() -> TelemetryHistory:
    return TelemetryHistory(wall_offset=OFFSET)


# --- recording ------------------------------------------------------------------------------------------


def test_a_gpu_missing_from_a_tick_gets_a_gap_row_and_stays_aligned(history: TelemetryHistory, tmp_path: Path) -> None:
    history.record(tick(1.0, gpu(0, 1.0, 40.0), gpu(1, 1.0, 60.0)))
    history.record(tick(2.0, gpu(1, 2.0, 61.0)))  # GPU 0 failed to read
    history.record(tick(3.0, gpu(0, 3.0, 42.0), gpu(1, 3.0, 62.0)))
    assert len(history.host) == len(history.gpus[0]) == len(history.gpus[1]) == 3
    assert np.isnan(history.gpus[0].view()["temperature_c"][1])
    assert history.gpus[0].view().t.tolist() == history.host.view().t.tolist()
    path = tmp_path / "gap.csv"
    assert history.export_csv(path, OFFSET, OFFSET + 10) == 3
    _, rows = read_csv(path)
    assert [r["gpu0_temperature_c"] for r in rows] == ["40", "", "42"]
    assert [r["gpu0_lost"] for r in rows] == ["0", "", "0"]  # not read at all: unknown, not "not lost"
    assert [r["gpu1_temperature_c"] for r in rows] == ["60", "61", "62"]


def test_a_gpu_that_appears_later_lines_up_with_the_newest_rows(history: TelemetryHistory, tmp_path: Path) -> None:
    for t in (1.0, 2.0, 2.0, 3.0):  # a repeated time (clock step back) must not confuse the alignment
        history.record(tick(t))
    history.record(tick(4.0, gpu(0, 4.0, 70.0)))
    history.record(tick(5.0, gpu(0, 5.0, 71.0)))
    path = tmp_path / "late.csv"
    assert history.export_csv(path, OFFSET, OFFSET + 10) == 6
    _, rows = read_csv(path)
    assert [r["gpu0_temperature_c"] for r in rows] == ["", "", "", "", "70", "71"]
    assert [r["time_monotonic"] for r in rows] == ["1.000", "2.000", "2.000", "3.000", "4.000", "5.000"]


def test_a_clock_step_back_keeps_the_time_order(history: TelemetryHistory) -> None:
    assert history.record(tick(10.0)) == OFFSET + 10
    assert history.record(tick(9.0)) == OFFSET + 10  # held, not reordered
    assert history.last_t == OFFSET + 10 and len(history.host) == 2


def test_host_values_derive_from_the_tick(history: TelemetryHistory) -> None:
    history.record(Tick(gpus=(), host=host(1.0, (10.0, 30.0, 80.0)), engine_tok_s=42.0))
    _, values = history.host.last  # type: ignore[misc]
    assert values["cpu_avg_pct"] == pytest.approx(40.0) and values["cpu_max_pct"] == 80.0
    assert values["engine_tok_s"] == 42.0 and values["ram_total_mib"] == 64_000.0
    assert history.cores is not None and history.cores.last[1]["cpu2_pct"] == 80.0  # type: ignore[index]


def test_non_finite_readings_are_recorded_as_missing(history: TelemetryHistory) -> None:
    history.record(Tick(gpus=(gpu(0, 1.0, math.inf),), host=host(1.0, ()), engine_tok_s=math.inf))
    assert math.isnan(history.host.last[1]["engine_tok_s"])  # type: ignore[index]
    assert math.isnan(history.host.last[1]["cpu_avg_pct"])  # type: ignore[index]  # no cores read
    assert math.isnan(history.gpus[0].last[1]["temperature_c"])  # type: ignore[index]
    assert history.cores is None  # made once a tick has per-core readings


def test_slowdown_temperature_is_the_latest_known(history: TelemetryHistory) -> None:
    assert history.slowdown_c(0) is None
    history.record(tick(1.0, gpu(0, 1.0, slowdown_c=87.0)))
    history.record(tick(2.0, gpu(0, 2.0)))  # a tick without it keeps the last one
    assert history.slowdown_c(0) == 87.0
    history.record(tick(3.0, gpu(0, 3.0, slowdown_c=85.0)))
    assert history.slowdown_c(0) == 85.0 and history.slowdown_c(1) is None


def test_capacity_holds_at_least_a_day() -> None:
    assert capacity_for(1.0) == MIN_CAPACITY + 1 and capacity_for(0.25) == 345_601
    with pytest.raises(ValueError, match="at least a day"):
        TelemetryHistory(capacity=1_000)


def test_clear_forgets_everything(history: TelemetryHistory) -> None:
    history.record(tick(1.0, gpu(0, 1.0, slowdown_c=87.0)))
    history.clear()
    assert len(history.host) == 0 and not history.gpus and history.cores is None
    assert history.last_t is None and history.slowdown_c(0) is None


# --- drawing data ---------------------------------------------------------------------------------------


def test_peak_decimation_keeps_a_one_sample_spike() -> None:
    x = np.arange(86_400, dtype=float)
    y = np.full(86_400, 50.0)
    y[43_210] = 95.0
    y[10_000] = 5.0
    dx, dy = peak_decimate(x, y, 1_000)
    assert dx.size < 2_100 and np.nanmax(dy) == 95.0 and np.nanmin(dy) == 5.0
    assert dx[-1] == x[-1]  # blocks end at the live edge
    assert np.all(np.diff(dx) >= 0)


def test_peak_decimation_gaps_only_whole_missing_blocks() -> None:
    x = np.arange(10_000, dtype=float)
    y = np.full(10_000, 50.0)
    y[::7] = np.nan  # the odd failed read
    y[5_000:5_500] = np.nan  # the GPU fell off the bus
    _, dy = peak_decimate(x, y, 100)
    assert np.isnan(dy).sum() == 2 * 5  # (max, min) of the five blocks inside the lost stretch, nothing else


def test_few_samples_are_not_decimated() -> None:
    x = np.arange(300, dtype=float)
    y = np.sin(x)
    dx, dy = peak_decimate(x, y, 100)
    assert dx is x and dy is y


def test_step_line_has_vertices_only_at_changes() -> None:
    x = np.arange(10, dtype=float)
    y = np.array([250.0] * 4 + [np.nan] * 2 + [200.0] * 4)
    sx, sy = step_line(x, y)
    assert sx.tolist() == [0.0, 4.0, 4.0, 6.0, 6.0, 9.0]
    assert sy[:2].tolist() == [250.0, 250.0] and np.isnan(sy[2:4]).all() and sy[4:].tolist() == [200.0, 200.0]


def test_plan_span_switches_to_minute_envelopes_past_a_minute_per_column() -> None:
    assert not plan_span((0.0, 300.0), (0.0, 300.0), 1_000).coarse
    day = plan_span((-86_400.0, 172_800.0), (0.0, 86_400.0), 1_000)
    assert day.coarse and day.columns == 3_000  # the fetched span is three visible widths


def test_coarse_frame_draws_minute_envelopes_plus_the_open_minute(history: TelemetryHistory) -> None:
    for i in range(3_600):
        history.record(tick(float(i), gpu(0, float(i), 90.0 if i == 1_234 else 50.0)))
    start = OFFSET - 10
    fine = history.gpu_frame(0, Span(start, OFFSET + 3_600, 10_000, coarse=False))
    coarse = history.gpu_frame(0, Span(start, OFFSET + 3_600, 1_000, coarse=True))
    assert fine is not None and coarse is not None and not fine.coarse and coarse.coarse
    fx, fy = fine.curve("temperature_c")
    assert np.nanmax(fy) == 90.0
    cx, cy = coarse.curve("temperature_c")
    assert fx.size == 3_600 and cx.size < 200  # 60 minutes as (max, min) pairs plus the open minute
    assert np.nanmax(cy) == 90.0 and cx[-1] == OFFSET + 3_599  # the spike, and the live edge
    assert history.gpu_frame(1, Span(start, OFFSET, 10, coarse=True)) is None


def test_frame_curves_are_not_overwritten_by_later_ticks() -> None:
    ring = RingBuffer(5, ["v"])
    for i in range(5):
        ring.append(float(i), v=float(i))  # full: the next append overwrites the oldest row in place
    frame = Frame(ring, MinuteBuckets(2, ("v",)), Span(0.0, 4.0, 100, coarse=False))
    x, y = frame.curve("v")
    ring.append(5.0, v=99.0)
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0] and y.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_minute_buckets_close_on_the_minute(history: TelemetryHistory) -> None:
    for i in range(int(BUCKET_S) * 2 + 1):
        history.record(tick(float(i), gpu(0, float(i), float(i))))
    buckets = history.gpu_buckets[0]
    view = buckets.ring.view()
    assert len(view) >= 2 and buckets.open_start is not None
    hi, lo = view["temperature_c_hi"], view["temperature_c_lo"]
    assert hi[-1] - lo[-1] == BUCKET_S - 1  # a whole minute of a rising reading: its first and last


# --- one CSV layout -------------------------------------------------------------------------------------


def replay_ticks(count: int) -> list[Tick]:
    fake = FakeNvml.replay("nvml_v100_session.json")
    service = TelemetryService(lambda _tick: None, source=Nvml(fake), host_sampler=lambda: host(3.0, (12.5, 80.0)))
    service.set_engine_rate(33.0)
    ticks = []
    for _ in range(count):
        ticks.append(service.sample_now())
        fake.step()
    return ticks


def test_export_and_continuous_log_write_the_same_columns_and_cells(tmp_path: Path) -> None:
    ticks = replay_ticks(11)
    service = TelemetryService(lambda _tick: None, source=Nvml(FakeNvml([])))
    log_path = tmp_path / "log.csv"
    service.start_csv_log(log_path)
    history = TelemetryHistory(wall_offset=OFFSET)
    for t in ticks:
        service._deliver(t)
        history.record(t)
    service.stop_csv_log()
    export_path = tmp_path / "export.csv"
    assert history.export_csv(export_path, OFFSET, OFFSET + 100) == 11
    log_columns, log_rows = read_csv(log_path)
    export_columns, export_rows = read_csv(export_path)
    assert log_columns == export_columns == csv_columns([0], 2)
    wall = {"time_unix", "time_local"}  # the log stamps the time it writes; the history the tick's time
    for logged, exported in zip(log_rows, export_rows, strict=True):
        assert {k: v for k, v in logged.items() if k not in wall} == {
            k: v for k, v in exported.items() if k not in wall
        }
    assert export_rows[0]["gpu0_throttle_reasons"] == "idle" and export_rows[3]["gpu0_throttle_reasons"] == "power cap"
    assert export_rows[9]["gpu0_lost"] == "1" and export_rows[0]["engine_tok_s"] == "33"


def test_columns_put_times_and_status_first_then_host_cores_and_gpus() -> None:
    columns = csv_columns([0, 2], 2)
    assert columns[:4] == ["time_unix", "time_monotonic", "status", "time_local"]
    assert columns[4:13] == [
        "engine_tok_s",
        "cpu_avg_pct",
        "cpu_max_pct",
        "ram_used_mib",
        "ram_total_mib",
        "swap_used_mib",
        "swap_total_mib",
        "cpu0_pct",
        "cpu1_pct",
    ]
    gpu_part = columns[13:]
    # Every GPU's columns of the first layout, byte for byte where they always were, then the readings added since.
    first = [*FIRST_LAYOUT, "throttle_reasons", "lost", "simulated"]
    assert gpu_part[: 2 * len(first)] == [f"gpu{index}_{name}" for index in (0, 2) for name in first]
    assert gpu_part[2 * len(first) - 1] == "gpu2_simulated"
    added = [f"gpu{index}_{r.name}" for index in (0, 2) for r in ADDED_READINGS]
    assert gpu_part[2 * len(first) :] == added and "gpu0_encoder_util_pct" in added
    assert [*FIRST_LAYOUT, *(r.name for r in ADDED_READINGS)] == list(SERIES_FIELDS)
    assert len(columns) == len(set(columns))


def test_export_of_a_range_has_the_status_and_only_the_chosen_gpus(history: TelemetryHistory, tmp_path: Path) -> None:
    history.record(tick(1.0, status="no GPU found"))
    history.record(tick(2.0, gpu(0, 2.0), gpu(1, 2.0)))
    history.record(tick(3.0, gpu(0, 3.0), gpu(1, 3.0)))
    path = tmp_path / "range.csv"
    assert history.export_csv(path, OFFSET + 1, OFFSET + 2, gpus=[1, 7]) == 2  # GPU 7 was never seen
    columns, rows = read_csv(path)
    assert columns == csv_columns([1], 2)
    assert [r["status"] for r in rows] == ["no GPU found", ""]
    assert [r["time_unix"] for r in rows] == [f"{OFFSET + 1:.3f}", f"{OFFSET + 2:.3f}"]
    assert "nan" not in path.read_text().lower()


# --- moved from the monitor's widget tests: the cells of an export ------------------------------------------


def test_export_cells_of_a_simulated_card(tmp_path: Path) -> None:
    clock = [5_000.0]
    source = SimulatedSource([SimulatedGpu("v100-16gb")], clock=lambda: clock[0])
    service = TelemetryService(lambda _tick: None, source=source, clock=lambda: clock[0])
    history = TelemetryHistory(wall_offset=OFFSET)

    def ticks(n: int) -> None:
        for _ in range(n):
            clock[0] += 1.0
            history.record(service.sample_now())

    ticks(15)  # the engine has not reported a rate yet: a gap
    service.set_engine_rate(20.0)
    ticks(25)
    times = list(history.host.view().t)
    path = tmp_path / "visible.csv"
    assert history.export_csv(path, times[10], times[19], gpus=[0]) == 10
    _, rows = read_csv(path)
    assert [float(r["time_unix"]) for r in rows] == pytest.approx(times[10:20])
    assert all(float(r["gpu0_temperature_c"]) > 20 for r in rows)
    assert [r["engine_tok_s"] for r in rows] == [""] * 5 + ["20"] * 5  # missing is an empty cell
    assert all(r["gpu0_power_limit_w"] == "300" for r in rows)
    assert all(r["gpu0_simulated"] == "1" for r in rows)
