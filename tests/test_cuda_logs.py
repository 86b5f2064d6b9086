"""Published llama.cpp CUDA load logs (tests/data/cuda_logs): every record is complete, and the header
written from its shape puts the logged bytes on each device by the planner's placement rule.

How far the planner's compute, KV and output figures are from the logged ones is not asserted here:
``bench/cuda_log_errors.py`` prints it (docs/memory-model.md keeps the current table).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gui.core.params import FLASH_ATTN_MODES
from tests.cuda_logs import (
    KINDS,
    build,
    expected_model_buffers,
    figures,
    load_records,
    logged_model_buffers,
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
