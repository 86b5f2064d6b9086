"""The one CSV layout for telemetry, written by both the continuous log and the charts' "export visible range".

A row is one tick: its times and status, the host (engine rate, CPU average, busiest core, memory, then
each core), then each GPU's readings with its throttle reasons and lost/simulated flags, then each GPU's
readings added since that layout (gui/core/telemetry_fields.py ADDED_READINGS), so every older column keeps
its place. Missing values are empty cells, so spreadsheets read them as blanks rather than zeros.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import IO

from gui.core.gpu_sample import SERIES_FIELDS, GpuSample
from gui.core.telemetry_fields import ADDED_READINGS, FIRST_READINGS
from gui.core.tick import HostSample, Tick
from gui.core.words import english

__all__ = [
    "GPU_FIELDS",
    "HOST_FIELDS",
    "HOST_READINGS",
    "TEXT_FIELDS",
    "Cell",
    "TelemetryCsvWriter",
    "core_column",
    "core_values",
    "csv_columns",
    "csv_header",
    "csv_row",
    "format_cell",
    "gpu_column",
    "gpu_values",
    "host_values",
    "telemetry_row",
]

Cell = float | str | None  # None and NaN are both "no value"

HOST_READINGS: tuple[str, ...] = (
    "engine_tok_s",
    "cpu_avg_pct",
    "cpu_max_pct",
    "ram_used_mib",
    "ram_total_mib",
    "swap_used_mib",
    "swap_total_mib",
)
# Per tick, besides the per-core CPU and the GPUs: what `host_values` gives.
HOST_FIELDS: tuple[str, ...] = ("time_monotonic", "status", *HOST_READINGS)
# Per GPU and tick: what `gpu_values` gives.
GPU_FIELDS: tuple[str, ...] = (*SERIES_FIELDS, "throttle_reasons", "lost", "simulated")
# In the header: each GPU's first columns, then (after every GPU's) each GPU's readings added since.
_FIRST_GPU_COLUMNS: tuple[str, ...] = (*(r.name for r in FIRST_READINGS), "throttle_reasons", "lost", "simulated")
_ADDED_GPU_COLUMNS: tuple[str, ...] = tuple(r.name for r in ADDED_READINGS)
TEXT_FIELDS = frozenset({"status", "throttle_reasons"})
# The log's readers look for the status straight after the times; the local time is for people.
_LEADING: tuple[str, ...] = ("time_unix", "time_monotonic", "status", "time_local")
_SECONDS = frozenset({"time_unix", "time_monotonic"})  # millisecond precision, never exponent notation


def core_column(core: int) -> str:
    return f"cpu{core}_pct"


def gpu_column(index: int, field: str) -> str:
    return f"gpu{index}_{field}"


@functools.lru_cache(maxsize=64)
def _gpu_columns(index: int) -> dict[str, str]:
    # Built once per GPU: an export names every GPU cell of every row.
    return {field: gpu_column(index, field) for field in GPU_FIELDS}


def csv_columns(gpu_indices: Iterable[int], cores: int) -> list[str]:
    """The header for these GPUs and this many CPU cores."""
    columns = [*_LEADING, *HOST_READINGS]
    columns += [core_column(i) for i in range(cores)]
    indices = list(gpu_indices)
    for names in (_FIRST_GPU_COLUMNS, _ADDED_GPU_COLUMNS):
        for index in indices:
            columns += [gpu_column(index, field) for field in names]
    return columns


def host_values(tick: Tick) -> dict[str, Cell]:
    """The tick's host-level values, keyed by HOST_FIELDS."""
    host = tick.host
    cores = host.cpu_pct
    return {
        "time_monotonic": host.timestamp,
        "status": english(tick.status),
        "engine_tok_s": tick.engine_tok_s,
        "cpu_avg_pct": sum(cores) / len(cores) if cores else None,
        "cpu_max_pct": max(cores) if cores else None,
        "ram_used_mib": host.ram_used_mib,
        "ram_total_mib": host.ram_total_mib,
        "swap_used_mib": host.swap_used_mib,
        "swap_total_mib": host.swap_total_mib,
    }


def core_values(host: HostSample) -> dict[str, Cell]:
    return {core_column(i): value for i, value in enumerate(host.cpu_pct)}


def gpu_values(sample: GpuSample) -> dict[str, Cell]:
    """One GPU's values, keyed by GPU_FIELDS; the flags are 1.0 or 0.0 so they fit a numeric buffer."""
    values: dict[str, Cell] = dict(sample.series())
    values["throttle_reasons"] = "; ".join(sample.throttle_reasons or ())
    values["lost"] = float(sample.lost)
    values["simulated"] = float(sample.simulated)
    return values


def telemetry_row(t_unix: float, host: Mapping[str, Cell], gpus: Mapping[int, Mapping[str, Cell]]) -> dict[str, Cell]:
    """One row from its parts: `host` holds HOST_FIELDS and the per-core columns, `gpus` each GPU's
    GPU_FIELDS (a GPU with no reading this tick is simply absent: its cells stay empty)."""
    row: dict[str, Cell] = {"time_unix": t_unix, "time_local": _local_time(t_unix), **host}
    for index, values in gpus.items():
        names = _gpu_columns(index)
        row.update({names[field]: value for field, value in values.items()})
    return row


def csv_header(tick: Tick) -> list[str]:
    """Columns for a log that starts with this tick: the GPUs and cores present then stay the columns."""
    return csv_columns([gpu.index for gpu in tick.gpus], len(tick.host.cpu_pct))


def csv_row(tick: Tick, wall_time: float) -> dict[str, Cell]:
    """One tick as column -> value, stamped with `wall_time` (Unix seconds)."""
    host = {**host_values(tick), **core_values(tick.host)}
    return telemetry_row(wall_time, host, {gpu.index: gpu_values(gpu) for gpu in tick.gpus})


def format_cell(column: str, value: Cell) -> str:
    """The one cell format: text as it is, a missing or non-finite number as an empty cell."""
    if isinstance(value, str):
        return value
    if value is None or not math.isfinite(value):
        return ""
    return f"{value:.3f}" if column in _SECONDS else f"{value:g}"


def _local_time(t_unix: float) -> str:
    return dt.datetime.fromtimestamp(t_unix).isoformat(timespec="seconds")


class TelemetryCsvWriter:
    """Writes the header, then one row per `write`. Values for columns outside the header are dropped (a
    GPU or core that appears after a log started has no column); columns a row lacks are empty."""

    def __init__(self, handle: IO[str], columns: Sequence[str]) -> None:
        self.columns = tuple(columns)
        self._writer = csv.writer(handle)
        self._writer.writerow(self.columns)

    def write(self, row: Mapping[str, Cell]) -> None:
        self._writer.writerow([format_cell(column, row.get(column)) for column in self.columns])
