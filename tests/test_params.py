from __future__ import annotations

import pytest

from gui.core.params import (
    ALL_LAYERS,
    BATCH,
    CONTEXT,
    GPU_LAYERS,
    SIZING_PARAMS,
    LoadSettings,
    default_settings,
    describe,
    llama_gpu_layers,
)


def test_every_spec_default_lies_in_its_range() -> None:
    for spec in SIZING_PARAMS:
        assert spec.minimum <= spec.default <= spec.maximum, spec.key
        assert spec.flag.startswith("--")


def test_settings_fields_match_spec_keys() -> None:
    settings = LoadSettings()
    for spec in SIZING_PARAMS:
        assert getattr(settings, spec.key) == spec.default


def test_clamp_respects_a_narrower_model_maximum() -> None:
    assert GPU_LAYERS.clamp(999, maximum=31) == 31
    assert GPU_LAYERS.clamp(-5) == 0
    assert CONTEXT.clamp(10) == CONTEXT.minimum


def test_validation_names_the_bad_field() -> None:
    with pytest.raises(ValueError, match=r"Micro-batch \(1024\) cannot exceed batch \(512\)"):
        LoadSettings(n_batch=512, n_ubatch=1024).validated()
    with pytest.raises(ValueError, match="Context must be between 256"):
        LoadSettings(n_ctx=16).validated()
    with pytest.raises(ValueError, match="flash attention"):
        LoadSettings(flash_attn="maybe").validated()
    with pytest.raises(ValueError, match="Batch must be between"):
        LoadSettings(n_batch=BATCH.maximum * 2).validated()


def test_round_trip_through_dict_ignores_unknown_keys() -> None:
    settings = LoadSettings(n_ctx=8192, n_threads=8, use_mmap=False)
    data = settings.to_dict() | {"from_the_future": 1}
    assert LoadSettings.from_dict(data) == settings


def test_default_threads_follow_physical_cores() -> None:
    assert default_settings(8).n_threads == 8
    assert default_settings(None).n_threads >= 1
    assert default_settings(1000).n_threads == 256


def test_gpu_layers_translate_to_llama_cpp_all() -> None:
    assert llama_gpu_layers(ALL_LAYERS, None) == -1
    assert llama_gpu_layers(65, 64) == -1  # output layer + 64 blocks is everything
    assert llama_gpu_layers(40, 64) == 40
    assert llama_gpu_layers(0, 64) == 0


def test_describe_lists_every_sizing_parameter() -> None:
    text = describe(LoadSettings(n_ctx=4096, n_threads=2))
    assert "context 4096" in text and "threads 2" in text and "gpu layers" in text
