"""Header values no model has are refused with one line naming the key, before any planning."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gui.core.cards import find_card
from gui.core.gguf_reader import (
    DEFAULT_LIMITS,
    GGML_MAX_NAME,
    ArraySummary,
    GGUFError,
    GGUFHeader,
    HeaderValueError,
    ValueType,
    read_model,
)
from gui.core.params import LoadSettings
from gui.core.planner import Device, auto_fit, model_shape, plan
from tests.gguf_factory import write_gguf, write_llama_like
from tests.hostile_headers import EXTREMES, HOSTILE_HEADERS, HostileHeader, write_hostile
from tests.model_shapes import write_shape

CARD = find_card("v100-16gb")
V100 = Device(CARD.name, CARD.vram_mib, CARD.vram_mib, CARD.bandwidth_gbs, CARD.sm_count)


def _plan_everything(header: GGUFHeader) -> None:
    model_shape(header)
    plan(header, LoadSettings(), [V100])
    plan(header, LoadSettings(n_ctx=256), [])
    auto_fit(header, LoadSettings(), [V100])


@pytest.mark.parametrize("case", HOSTILE_HEADERS, ids=lambda c: c.name)
def test_reading_refuses_the_value_and_names_its_key(tmp_path: Path, case: HostileHeader):
    path = write_hostile(tmp_path / "hostile.gguf", case)
    with pytest.raises(HeaderValueError) as caught:
        read_model(path)
    error = caught.value
    assert error.key == f"llama.{case.key}" and error.source == "hostile.gguf"
    message = str(error)
    assert message.startswith(f"hostile.gguf: llama.{case.key} is ") and "\n" not in message
    # The window shows planner ValueErrors as "Cannot plan: ..."; the library and CLI catch GGUFError.
    assert isinstance(error, ValueError) and isinstance(error, GGUFError)


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> GGUFHeader:
    return read_model(write_llama_like(tmp_path_factory.mktemp("sound") / "sound.gguf"))


@pytest.mark.parametrize("case", HOSTILE_HEADERS, ids=lambda c: c.name)
def test_planning_a_header_built_without_the_reader_refuses_it_too(sound: GGUFHeader, case: HostileHeader):
    # A header assembled in memory (by a test, a tool, the hub) never went through the reader's check.
    values = {**case.extra, f"llama.{case.key}": case.value}
    metadata = {**sound.metadata, **{k: getattr(v, "value", v) for k, v in values.items()}}
    header = replace(sound, metadata=metadata)
    for action in (model_shape, _plan_everything):
        with pytest.raises(HeaderValueError, match=rf"^sound\.gguf: llama\.{case.key} "):
            action(header)


def test_a_million_tensors_are_refused_before_any_is_read(tmp_path: Path):
    too_many = DEFAULT_LIMITS.max_tensors + 1
    path = write_gguf(tmp_path / "tensors.gguf", tensors=[(f"t{i}", (32,), "F32") for i in range(too_many)])
    with pytest.raises(GGUFError, match=f"claims {too_many} tensors, more than the 65536 allowed"):
        read_model(path)


def test_tensor_names_are_as_short_as_llama_cpp_needs(tmp_path: Path):
    longest = "n" * (GGML_MAX_NAME - 1)
    assert read_model(write_gguf(tmp_path / "ok.gguf", tensors=[(longest, (32,), "F32")])).tensors[0].name == longest
    with pytest.raises(GGUFError, match="is 64 bytes, more than the 63 allowed"):
        read_model(write_gguf(tmp_path / "long.gguf", tensors=[(longest + "n", (32,), "F32")]))


def test_the_error_survives_a_trip_between_processes(tmp_path: Path):
    with pytest.raises(HeaderValueError) as caught:
        read_model(write_hostile(tmp_path / "h.gguf", HOSTILE_HEADERS[0]))
    copy = pickle.loads(pickle.dumps(caught.value))
    assert type(copy) is HeaderValueError and copy.key == "llama.block_count" and str(copy) == str(caught.value)


@pytest.mark.parametrize("name", list(EXTREMES))
def test_shapes_at_llama_cpps_limits_are_planned(tmp_path: Path, name: str):
    header = read_model(write_shape(tmp_path / "edge.gguf", EXTREMES[name]))
    _plan_everything(header)
    assert plan(header, LoadSettings(), []).n_layer == 512


# Every key the planner reads, with values of every type a header can hold.
_KEYS = [
    "block_count",
    "context_length",
    "embedding_length",
    "feed_forward_length",
    "expert_feed_forward_length",
    "expert_count",
    "expert_used_count",
    "attention.head_count",
    "attention.head_count_kv",
    "attention.key_length",
    "attention.value_length",
    "attention.key_length_swa",
    "attention.value_length_swa",
    "attention.sliding_window",
    "attention.sliding_window_pattern",
    "full_attention_interval",
    "nextn_predict_layers",
    "ssm.conv_kernel",
    "ssm.inner_size",
    "ssm.state_size",
    "ssm.group_count",
]
_NUMBERS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 1, 2, 3, 511, 512, 513, 2**20, 2**30, 2**31, 2**32 - 1, 2**63]),
    st.integers(-3, 600),
)
_VALUES = st.one_of(
    _NUMBERS,
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=4),
    st.lists(st.one_of(_NUMBERS, st.booleans(), st.floats(), st.text(max_size=2)), max_size=5),
    st.builds(ArraySummary, st.just(ValueType.INT32), st.integers(0, 10_000)),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(_KEYS), _VALUES, min_size=1, max_size=4))
def test_only_header_value_errors_escape_planning(sound: GGUFHeader, changes: dict[str, Any]):
    header = replace(sound, metadata={**sound.metadata, **{f"llama.{k}": v for k, v in changes.items()}})
    try:
        _plan_everything(header)
    except HeaderValueError as e:
        assert any(f"llama.{k} " in str(e) for k in changes), str(e)
