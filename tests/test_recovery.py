from __future__ import annotations

import pytest
from model_shapes import SHAPES, write_shape

from gui.core.cards import find_card
from gui.core.gguf_reader import read_model
from gui.core.params import LoadSettings
from gui.core.planner import plan
from gui.core.recovery import EXTRA_MARGIN_MIB, safer_settings
from gui.services.devices import device_from_card


@pytest.fixture(scope="module")
def q4km(tmp_path_factory: pytest.TempPathFactory):
    return read_model(write_shape(tmp_path_factory.mktemp("m") / "q4km.gguf", SHAPES["qwen35-27b"]))


def test_on_a_gpu_it_takes_layers_off_and_keeps_the_context(q4km) -> None:
    v100 = [device_from_card(find_card("v100-16gb"))]
    settings = LoadSettings(n_ctx=8192)  # all layers of a 27B Q4_K_M at 8k: more than a V100 16GB holds
    safer = safer_settings(q4km, settings, v100, margin_mib=1024, gpu_ran_out=True)
    assert safer.settings.n_ctx == 8192
    assert safer.settings.n_gpu_layers < 65
    assert safer.change == f"{safer.settings.n_gpu_layers} GPU layers instead of 65"
    device = plan(q4km, safer.settings, v100).devices[0]
    assert device.free_after_mib >= 1024 + EXTRA_MARGIN_MIB - 1  # more room than the estimate that failed


def test_when_host_memory_ran_out_it_never_moves_layers_to_the_host(q4km) -> None:
    """A CPU-only build, or RAM that ran out: fewer bytes on the host, cheapest change first."""
    v100 = [device_from_card(find_card("v100-16gb"))]
    start = LoadSettings(n_ctx=8192, use_mmap=False)
    steps = []
    settings = start
    for _ in range(4):
        safer = safer_settings(q4km, settings, v100, margin_mib=1024, gpu_ran_out=False)
        assert safer.settings.n_gpu_layers == start.n_gpu_layers
        steps.append(safer.change)
        settings = safer.settings
    assert steps == [
        "the file memory-mapped instead of read into RAM",
        "a q8_0 KV cache instead of f16",
        "context 4,096 instead of 8,192",
        "context 2,048 instead of 4,096",
    ]


def test_without_flash_attention_only_the_k_cache_shrinks(q4km) -> None:
    safer = safer_settings(q4km, LoadSettings(n_ctx=8192, flash_attn="off"), [], margin_mib=1024, gpu_ran_out=False)
    assert (safer.settings.cache_type_k, safer.settings.cache_type_v) == ("q8_0", "f16")
    safer.settings.validated()  # a quantised V cache would need flash attention


def test_at_the_smallest_context_it_shrinks_the_micro_batch(q4km) -> None:
    small = LoadSettings(n_ctx=256, n_batch=512, n_ubatch=512, cache_type_k="q8_0", cache_type_v="q8_0")
    safer = safer_settings(q4km, small, [], margin_mib=1024, gpu_ran_out=False)
    assert safer.settings.n_ubatch == 256 and safer.settings.n_ctx == 256
