from __future__ import annotations

from dataclasses import fields

import pytest

from gui.core.params import (
    ALL_LAYERS,
    BATCH,
    CONTEXT,
    GPU_LAYERS,
    LOAD_SPECS,
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
    with pytest.raises(ValueError, match="Flash attention must be one of"):
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


def test_the_engine_applies_every_declared_load_setting() -> None:
    """A new setting is a declaration plus the engine line that applies it; forgetting the line fails here."""
    from gui.services.engine_worker import CONTEXT_FIELDS, MODEL_FIELDS

    def followed(fields: dict) -> set[str]:
        return {key for keys, _ in fields.values() for key in keys}

    declared = {spec.key for spec in LOAD_SPECS}
    assert followed(MODEL_FIELDS) | followed(CONTEXT_FIELDS) == declared
    assert not followed(MODEL_FIELDS) & followed(CONTEXT_FIELDS)


def test_every_declaration_has_a_flag_a_label_and_a_valid_default() -> None:
    for spec in LOAD_SPECS:
        assert spec.key and spec.label and spec.help and spec.flag.startswith("--"), spec
        spec.check(spec.default)
        assert spec.parse(spec.default) == spec.default
    assert len({spec.flag for spec in LOAD_SPECS}) == len(LOAD_SPECS)
    LoadSettings().validated()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"n_ctx": "4096"}, "Context must be a whole number"),
        ({"n_ctx": 4096.5}, "Context must be a whole number"),
        ({"n_ctx": True}, "Context must be a whole number"),
        ({"n_ctx": 16}, "Context must be between 256"),
        ({"use_mmap": "yes"}, "Memory-map the file must be true or false"),
        ({"cache_type_k": 8}, "K cache type must be one of"),
        ({"flash_attn": "sometimes"}, "Flash attention must be one of"),
    ],
)
def test_values_from_outside_are_checked_by_their_declaration(data: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LoadSettings.from_dict(data)


def test_sampling_is_declared_with_its_ranges() -> None:
    from gui.core.protocol import MAX_TOKENS, RANDOM_SEED, Sampling
    from gui.core.specs import specs_of

    specs = {spec.key: spec for spec in specs_of(Sampling)}
    assert set(specs) == {f.name for f in fields(Sampling)}
    assert Sampling().seed == RANDOM_SEED and MAX_TOKENS.default == 512
    with pytest.raises(ValueError, match="Temperature must be between 0 and 5"):
        Sampling(temperature=7.0).validated()
    with pytest.raises(ValueError, match="Top-k must be between 0 and 1000"):
        Sampling(top_k=-1).validated()


def test_cli_flags_come_from_the_declarations() -> None:
    import argparse

    from gui.commands.flags import add_sizing_flags, settings_from_args

    parser = argparse.ArgumentParser()
    add_sizing_flags(parser)
    args = parser.parse_args(["--ctx", "2048", "--no-mmap", "--swa-full", "--cache-type-v", "q8_0", "--threads", "3"])
    settings = settings_from_args(args)
    assert (settings.n_ctx, settings.use_mmap, settings.swa_full, settings.cache_type_v) == (2048, False, True, "q8_0")
    assert settings.n_threads == 3
    flags = {a.option_strings[0] for a in parser._actions if a.option_strings and a.dest != "help"}
    assert flags == {spec.flag for spec in LOAD_SPECS}


def test_the_tensor_split_flag_comes_from_its_declaration() -> None:
    import argparse

    from gui.commands.flags import add_sizing_flags, settings_from_args

    parser = argparse.ArgumentParser()
    add_sizing_flags(parser)
    assert settings_from_args(parser.parse_args(["--tensor-split", "3,1"])).tensor_split == "3,1"


def test_expert_pattern_names_exactly_the_first_blocks_experts() -> None:
    import re

    from gui.services.engine_worker import expert_pattern

    experts = [f"ffn_{role}_{kind}" for role in ("up", "down", "gate", "gate_up") for kind in ("exps", "chexps")]
    names = [f"blk.{i}.{t}.{w}" for i in range(512) for t in experts for w in ("weight", "bias")]
    others = ["blk.3.ffn_up_shexp.weight", "blk.3.ffn_gate_inp.weight", "blk.3.attn_q.weight", "token_embd.weight"]
    for n in (1, 9, 10, 11, 48, 100, 512):
        pattern = expert_pattern(LoadSettings(n_cpu_moe=n))
        assert pattern is not None
        moved = {name for name in names + others if re.search(pattern, name)}
        assert moved == {name for name in names if int(name.split(".")[1]) < n}, n
    assert expert_pattern(LoadSettings()) is None
    every = expert_pattern(LoadSettings(cpu_moe=True, n_cpu_moe=3))
    assert every is not None and {name for name in names + others if re.search(every, name)} == set(names)


def test_the_engine_struct_fields_follow_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    import llama_cpp

    from gui.services import engine_worker

    monkeypatch.setattr(engine_worker, "llama", llama_cpp)
    s = LoadSettings(n_parallel=3, kv_unified=True, op_offload=False)
    ctx = engine_worker.context_params(s)
    assert (ctx.n_outputs_max, ctx.n_seq_max, ctx.kv_unified, ctx.op_offload) == (3, 3, True, False)
    assert engine_worker.context_params(s.with_values(n_outputs_max=0)).n_outputs_max == 0  # llama.cpp's n_batch
    assert engine_worker.model_params(s).tensor_buft_overrides is None
    model = engine_worker.model_params(s.with_values(n_cpu_moe=4))
    overrides = ctypes.cast(model.tensor_buft_overrides, ctypes.POINTER(engine_worker._BufferTypeOverride))
    assert overrides[0].pattern.decode() == engine_worker.expert_pattern(s.with_values(n_cpu_moe=4))
    # the CPU buffer type of the ggml that libllama itself uses, then the NULL that ends the list
    own = llama_cpp.llama_cpp._lib.ggml_backend_cpu_buffer_type
    own.restype = ctypes.c_void_p
    assert overrides[0].buft == own() and overrides[1].pattern is None
