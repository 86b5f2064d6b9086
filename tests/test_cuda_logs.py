"""Published llama.cpp CUDA load logs (tests/data/cuda_logs): every record is complete, the header
written from its shape puts the logged bytes on each device by the planner's placement rule, and the
planner's GPU compute buffers meet their targets over the records.

Targets (docs/memory-model.md, "Recorded CUDA load logs"): no GPU compute buffer under-estimated by more
than 10% or 24 MiB, whichever is larger, and a median absolute error of at most 10%; each record is
planned with its build's rules and command line (tests/cuda_logs.py: planned). ``bench/cuda_log_errors.py``
prints the whole table.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

from gui.core.params import FLASH_ATTN_MODES
from gui.core.planner import plan
from tests.cuda_logs import (
    KINDS,
    LoggedLoad,
    build,
    build_all,
    expected_model_buffers,
    figures,
    load_records,
    logged_model_buffers,
    placed_weights,
    planned,
    record_tensors,
    type_counts,
)

RECORDS = load_records()
IDS = [r["id"] for r in RECORDS]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cuda_logs")


def test_the_records_cover_the_cases_the_planner_needs() -> None:
    assert len(RECORDS) >= 12
    assert len(set(IDS)) == len(IDS)
    cases = " | ".join(c for r in RECORDS for c in r["case"])
    for case in ("partial offload", "full offload", "flash attention off", "flash attention on"):
        assert case in cases, case
    assert {r["build"]["output_reserve"] for r in RECORDS} <= {"before", "after"}


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_record_is_complete_and_quotes_its_figures(record: dict[str, Any]) -> None:
    assert record["source"].startswith("https://github.com/")
    assert record["settings"]["flash_attn"] in FLASH_ATTN_MODES
    assert record["devices"] and all(d["name"].startswith("CUDA") for d in record["devices"])
    assert record["logged"]["model"] and record["logged"]["compute"]
    excerpt = "\n".join(record["excerpt"])
    # Every figure comes from a quoted line, as llama.cpp prints it (two decimals).
    for kind in KINDS:
        for buffer, mib in record["logged"].get(kind, {}).items():
            for part in mib if isinstance(mib, list) else [mib]:
                assert f"{part:.2f}" in excerpt, (kind, buffer, part)
        assert all(v > 0 for v in figures(record, kind).values()) or kind == "output"


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_header_has_the_logged_tensor_types(record: dict[str, Any], folder: Path) -> None:
    load = build(record, folder)
    assert type_counts(load.header) == record["model"]["type_counts"]
    assert len(load.header.tensors) == len(record_tensors(record))
    assert load.header.n_layer == record["model"]["n_layer"]


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_weights_per_device_match_the_logged_model_buffers(record: dict[str, Any], folder: Path) -> None:
    load = build(record, folder)
    expected = expected_model_buffers(load)
    logged = logged_model_buffers(load)
    assert set(expected) == set(logged)
    checks = record["weights_check"]
    for buffer, mib in logged.items():
        check = checks[buffer]
        if check is True:
            assert expected[buffer] == pytest.approx(mib, rel=0.005), buffer
        else:
            assert isinstance(check, str) and check, f"{buffer}: say why it is not checked"


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_the_planner_places_every_tensor_where_the_overrides_send_it(record: dict[str, Any], folder: Path) -> None:
    # The planner applies --n-cpu-moe and -ot itself; this module reads the same rules independently.
    load = build(record, folder)
    placed = placed_weights(load)
    for d in planned(load).devices:
        assert d.weights_mib == pytest.approx(placed[d.name], abs=0.01), d.name


@pytest.fixture(scope="module")
def loads(tmp_path_factory: pytest.TempPathFactory) -> list[LoggedLoad]:
    return build_all(tmp_path_factory.mktemp("cuda_logs_all"))


def _gpu_errors(loads: list[LoggedLoad]) -> list[tuple[str, float, float]]:
    """(record and buffer, logged MiB, planned MiB) for every logged GPU compute buffer."""
    out = []
    for load in loads:
        for d in planned(load).devices:
            logged = load.logged["compute"].get(d.name)
            if logged:
                out.append((f"{load.id} {d.name}", logged, d.compute_mib + d.staged_mib))
    return out


def test_gpu_compute_buffers_meet_the_targets(loads: list[LoggedLoad]) -> None:
    rows = _gpu_errors(loads)
    assert len(rows) == 15
    for name, logged, planned_mib in rows:
        # Never under by more than 10% or 24 MiB, whichever is larger.
        assert planned_mib >= logged - max(0.10 * logged, 24.0), (name, logged, planned_mib)
    median = statistics.median(abs(p - lg) / lg for _, lg, p in rows)
    assert median <= 0.10, median


def test_host_weights_are_staged_on_the_first_gpu_only(loads: list[LoggedLoad]) -> None:
    # Op offload copies weights in host memory to the first GPU for the prompt batch: the expert tensors
    # of the -ot records (630 MiB at Q6_K, 816 MiB at Q8_0), the output matrix of the -ngl 10 records.
    by_id = {load.id: load for load in loads}
    expected = {
        "ik357-qwen3-235b-a22b-q6_k-2gpu-ot": 630.0,
        "ik357-qwen3-235b-a22b-q6_k-ot-ffn-cuda0-cpu": 630.0,
        "ik357-qwen3-235b-a22b-q8_0-no-mmap-ot-ffn-cpu": 816.0,
        "ci-v100-pythia-2.8b-q4_0-ngl10": 100.74,
    }
    for rid, weight in expected.items():
        load = by_id[rid]
        first, *rest = planned(load).devices
        assert first.staged_mib > 0 and all(d.staged_mib == 0 for d in rest), rid
        assert first.compute_mib + first.staged_mib > weight, rid
        # --no-op-offload: nothing staged, the CPU computes with its own weights
        off = plan(
            load.header,
            load.plan_settings.with_values(op_offload=False),
            load.devices,
            rules=load.rules,
            tensor_overrides=load.planner_overrides,
            suggest=False,
        )
        assert all(d.staged_mib == 0 for d in off.devices), rid
        assert off.host.compute_mib > planned(load).host.compute_mib, rid
