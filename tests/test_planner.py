"""The memory planner's arithmetic (docs/memory-model.md), on header-only model files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gui.core.cards import CARDS, UnknownCardError, custom_card, find_card
from gui.core.gguf_reader import GGUFHeader, read_model
from gui.core.params import ALL_LAYERS, CACHE_TYPES, LoadSettings
from gui.core.planner import (
    OLDER_BUILDS,
    Device,
    auto_fit,
    cuda_overhead_mib,
    model_shape,
    plan,
    plan_to_json,
)
from tests.model_shapes import SHAPES, ModelShape, write_shape

MiB = 1 << 20
V100 = find_card("v100-16gb")


def v100(free: float | None = None) -> Device:
    return Device(V100.name, V100.vram_mib, V100.vram_mib if free is None else free, V100.bandwidth_gbs, V100.sm_count)


@pytest.fixture(scope="module")
def headers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GGUFHeader]:
    root = tmp_path_factory.mktemp("shapes")
    names = (
        "qwen35-27b",
        "qwen35-27b-q3ks",
        "gemma3-27b",
        "gemma2-2b",
        "qwen3moe-30b",
        "gpt-oss-20b",
        "llama-13gb",
        "llama-1b",
        "llama31-8b",
    )
    return {n: read_model(write_shape(root / f"{n}.gguf", SHAPES[n])) for n in names}


# ---- KV and recurrent state ------------------------------------------------------------------


def test_qwen35_27b_kv_counts_only_the_16_attention_layers(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    shape = model_shape(h)
    assert [il for il, *_ in shape.kv_layers] == list(range(3, 64, 4))
    p = plan(h, LoadSettings(n_ctx=8192), [])
    # 16 layers x 8192 cells x 4 KV heads x 256 x (2 + 2) bytes
    assert p.kv_mib == 16 * 8192 * 4 * 256 * 4 / MiB == 512.0


def test_qwen35_27b_recurrent_state_is_fixed_per_sequence(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    # (d_conv-1)(d_inner + 2 n_group d_state) + d_state d_inner floats per recurrent layer, F32.
    # This llama.cpp multiplies the rows by (1 + n_rs_seq); llama-cpp-python leaves n_rs_seq at 0.
    floats = 3 * (6144 + 2 * 16 * 128) + 128 * 6144
    one = 48 * floats * 4 / MiB
    assert round(one, 2) == 149.62
    for ctx in (4096, 8192, 65536):
        assert plan(h, LoadSettings(n_ctx=ctx), []).recurrent_mib == pytest.approx(one)
    assert plan(h, LoadSettings(n_ctx=8192, n_parallel=4), []).recurrent_mib == pytest.approx(4 * one)


@pytest.mark.parametrize("cache_type", CACHE_TYPES)
def test_kv_size_follows_the_element_size_of_each_cache_type(headers: dict[str, GGUFHeader], cache_type: str) -> None:
    bytes_per_32 = {
        "f16": 64,
        "bf16": 64,
        "f32": 128,
        "q8_0": 34,
        "q5_1": 24,
        "q5_0": 22,
        "q4_1": 20,
        "q4_0": 18,
        "iq4_nl": 18,
    }[cache_type]
    s = LoadSettings(n_ctx=8192, cache_type_k=cache_type, cache_type_v=cache_type, flash_attn="on")
    p = plan(headers["qwen35-27b"], s, [])
    assert p.kv_mib == pytest.approx(16 * 8192 * 2 * 4 * 256 * bytes_per_32 / 32 / MiB)


def test_context_is_padded_to_256_and_split_per_sequence(headers: dict[str, GGUFHeader]) -> None:
    h = headers["llama-1b"]  # 16 layers, 8 KV heads x 64: 4 KiB of f16 K+V per cell per layer
    per_cell = 16 * 8 * 64 * 2 * 2
    assert plan(h, LoadSettings(n_ctx=1000), []).kv_mib == 1024 * per_cell / MiB
    # 3 sequences: 8192 / 3 = 2730 cells each, padded to 2816, in three streams
    assert plan(h, LoadSettings(n_ctx=8192, n_parallel=3), []).kv_mib == 3 * 2816 * per_cell / MiB


def test_a_unified_cache_is_one_stream_of_the_whole_context(headers: dict[str, GGUFHeader]) -> None:
    h = headers["llama-1b"]
    per_cell = 16 * 8 * 64 * 2 * 2
    # 3 slots sharing 8192 cells: no per-sequence padding (3 x 2816 = 8448 without it)
    assert plan(h, LoadSettings(n_ctx=8192, n_parallel=3, kv_unified=True), []).kv_mib == 8192 * per_cell / MiB
    # a sliding window keeps every sequence's window in the one stream: pad256(3 x 1024 + 512) cells
    g = headers["gemma3-27b"]
    shape = model_shape(g)
    n_full = sum(1 for *_, swa in shape.kv_layers if not swa)
    unified = plan(g, LoadSettings(n_ctx=16384, n_parallel=3, kv_unified=True), [])
    cells = n_full * 16384 + (62 - n_full) * 3584
    assert unified.kv_mib == cells * 16 * 128 * 2 * 2 / MiB


def test_sliding_window_layers_keep_window_plus_ubatch_cells(headers: dict[str, GGUFHeader]) -> None:
    h = headers["gemma3-27b"]  # 62 blocks, every 6th global; window 1024; 16 KV heads x 128
    shape = model_shape(h)
    full = [il for il, _, _, swa in shape.kv_layers if not swa]
    assert full == list(range(5, 62, 6))
    per_cell = 16 * 128 * 2 * 2
    s = LoadSettings(n_ctx=8192, n_ubatch=512)
    swa_cells = 1536  # pad256(min(8192, 1024 + 512))
    want = (len(full) * 8192 + (62 - len(full)) * swa_cells) * per_cell / MiB
    assert plan(h, s, []).kv_mib == want
    # --swa-full gives every layer the whole context
    assert plan(h, s.with_values(swa_full=True), []).kv_mib == 62 * 8192 * per_cell / MiB
    # a context smaller than the window caps the window cache too
    assert plan(h, LoadSettings(n_ctx=1024, n_ubatch=512), []).kv_mib == 62 * 1024 * per_cell / MiB


def test_gemma2_alternates_local_and_global_layers(headers: dict[str, GGUFHeader]) -> None:
    shape = model_shape(headers["gemma2-2b"])
    assert [swa for *_, swa in shape.kv_layers] == [il % 2 == 0 for il in range(26)]
    assert shape.n_swa == 4096


# ---- placement -------------------------------------------------------------------------------


def test_ngl_puts_the_output_layer_and_the_last_blocks_on_the_gpu(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    shape = model_shape(h)
    big = Device("big", 80_000, 80_000, 2000, 108)
    for k in (1, 2, 40, 64):
        p = plan(h, LoadSettings(n_ctx=4096, n_gpu_layers=k), [big])
        d = p.devices[0]
        assert d.has_output and d.layers == k - 1
        on_gpu = range(64 - (k - 1), 64)
        want = sum(shape.layer_bytes[il] for il in on_gpu) + shape.output_bytes
        assert d.weights_mib * MiB == want
        assert p.layers_on_gpu == k
        # attention KV of an offloaded block goes with it
        assert d.kv_mib == pytest.approx(sum(1 for il in on_gpu if (il + 1) % 4 == 0) * 4096 * 4096 / MiB)
    p0 = plan(h, LoadSettings(n_ctx=4096, n_gpu_layers=0), [big])
    assert p0.devices[0].weights_mib == 0 and not p0.devices[0].has_output
    assert p0.host.weights_mib * MiB == shape.total_bytes
    # token_embd never leaves the host
    pall = plan(h, LoadSettings(n_ctx=4096), [big])
    assert pall.host.weights_mib * MiB == shape.embd_bytes
    assert pall.weights_bytes == shape.total_bytes


def test_a_tied_output_layer_is_copied_to_the_gpu(headers: dict[str, GGUFHeader]) -> None:
    h = headers["gemma2-2b"]
    shape = model_shape(h)
    assert shape.tied_output_bytes == shape.embd_bytes > 0
    p = plan(h, LoadSettings(n_ctx=4096), [Device("big", 80_000, 80_000, 2000)])
    assert p.weights_bytes == shape.total_bytes + shape.embd_bytes
    assert any("copy" in n for n in p.notes)


def test_two_gpus_split_the_layers_by_free_memory(headers: dict[str, GGUFHeader]) -> None:
    h = headers["llama-13gb"]
    a, b = Device("a", 24_000, 24_000, 900), Device("b", 24_000, 8_000, 900)
    p = plan(h, LoadSettings(n_ctx=4096), [a, b])
    assert p.devices[0].layers + p.devices[1].layers == 38
    # 39 slots (38 blocks + output) cut at 3/4: the first 30 blocks, then 8 blocks and the output
    assert (p.devices[0].layers, p.devices[1].layers) == (30, 8)
    assert p.devices[1].has_output and p.devices[1].other_mib == 16_000


# ---- the user's case -------------------------------------------------------------------------


def test_q4_k_m_27b_fully_offloaded_at_8k_does_not_fit_a_v100(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    assert 15.5 < h.tensor_bytes / (1 << 30) < 16.0
    p = plan(h, LoadSettings(n_ctx=8192), [v100()])
    assert not p.fits
    assert p.devices[0].free_after_mib < p.devices[0].margin_mib
    assert p.verdict in ("tight", "will not fit")
    assert p.suggestions


@pytest.mark.parametrize("ctx", [4096, 32768])
def test_q3_k_s_27b_fits_a_v100_at_4k_and_32k(headers: dict[str, GGUFHeader], ctx: int) -> None:
    h = headers["qwen35-27b-q3ks"]
    assert 11.0 < h.tensor_bytes / (1 << 30) < 12.0
    p = plan(h, LoadSettings(n_ctx=ctx), [v100()])
    assert p.fits and p.verdict == "fits"
    d = p.devices[0]
    assert d.free_after_mib >= 1024
    assert d.needed_mib == pytest.approx(d.weights_mib + d.kv_mib + d.recurrent_mib + d.compute_mib + d.overhead_mib)


def test_other_processes_memory_counts_against_the_card(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b-q3ks"]
    alone = plan(h, LoadSettings(n_ctx=4096), [v100()])
    shared = plan(h, LoadSettings(n_ctx=4096), [v100(free=V100.vram_mib - 3500)])
    assert shared.devices[0].other_mib == 3500
    assert shared.devices[0].free_after_mib == pytest.approx(alone.devices[0].free_after_mib - 3500)
    assert not shared.fits


def test_flash_attention_shrinks_the_compute_buffer_at_long_context(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b-q3ks"]
    on = plan(h, LoadSettings(n_ctx=32768, flash_attn="on"), [v100()]).devices[0].compute_mib
    off = plan(h, LoadSettings(n_ctx=32768, flash_attn="off"), [v100()]).devices[0].compute_mib
    # without FA the F32 scores [n_kv, n_ubatch, n_head] = 32768 x 512 x 24 x 4 bytes dominate
    assert off > 32768 * 512 * 24 * 4 / MiB > on
    # Room for one output (the default, one per slot) against llama.cpp's own default of logits for every
    # token of the micro-batch: 248320 x 512 floats, 485 MiB, of which the buffer's peak keeps most.
    whole = plan(h, LoadSettings(n_ctx=8192, n_outputs_max=0), [v100()]).devices[0].compute_mib
    one = plan(h, LoadSettings(n_ctx=8192), [v100()]).devices[0].compute_mib
    assert 380 <= whole <= 600
    # then the FFN of a block is the peak: 3 x 17408 x 512 floats, 3 hidden states and the F16 mask
    assert one == (3 * 17408 + 3 * 5120) * 512 * 4 / MiB + 8192 * 512 * 2 / MiB == 140.0


# ---- suggestions and auto-fit ----------------------------------------------------------------


def test_suggestions_are_checked_by_replanning(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    s = LoadSettings(n_ctx=8192, n_parallel=2)
    p = plan(h, s, [v100()])
    assert not p.fits
    text = "\n".join(map(str, p.suggestions))
    ngl = int(re.search(r"--ngl (\d+)", text).group(1))  # type: ignore[union-attr]
    assert plan(h, s.with_values(n_gpu_layers=ngl), [v100()]).fits
    assert not plan(h, s.with_values(n_gpu_layers=ngl + 1), [v100()]).fits
    m = re.search(r"--ctx (\d+)", text)
    if m:
        ctx = int(m.group(1))
        assert ctx % 256 == 0 and plan(h, s.with_values(n_ctx=ctx), [v100()]).fits
    assert "smaller quant" in text


def test_auto_fit_takes_the_most_layers_then_the_most_context(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    start = LoadSettings(n_ctx=8192)
    fit = auto_fit(h, start, [v100()])
    p = plan(h, fit, [v100()])
    assert p.fits
    assert fit.n_gpu_layers < 65
    assert not plan(h, fit.with_values(n_gpu_layers=fit.n_gpu_layers + 1, n_ctx=256), [v100()]).fits
    assert fit.n_ctx % 256 == 0
    assert not plan(h, fit.with_values(n_ctx=fit.n_ctx + 256), [v100()]).fits


def test_auto_fit_respects_pins_and_margin(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b-q3ks"]
    fit = auto_fit(h, LoadSettings(), [v100()], max_ctx=65536)
    assert fit.n_gpu_layers == ALL_LAYERS
    p = plan(h, fit, [v100()])
    assert p.devices[0].free_after_mib >= 1024
    assert fit.n_ctx < 65536
    # a bigger margin gives a smaller context
    roomy = auto_fit(h, LoadSettings(), [v100()], max_ctx=65536, margin_mib=3000)
    assert roomy.n_ctx < fit.n_ctx
    assert plan(h, roomy, [v100()], margin_mib=3000).fits
    # pinned fields stay as they are
    pinned = auto_fit(h, LoadSettings(n_ctx=2048, n_gpu_layers=30), [v100()], pinned=frozenset({"n_ctx"}))
    assert pinned.n_ctx == 2048 and pinned.n_gpu_layers == ALL_LAYERS
    both = auto_fit(h, LoadSettings(n_ctx=2048, n_gpu_layers=30), [v100()], pinned=frozenset({"n_ctx", "n_gpu_layers"}))
    assert (both.n_ctx, both.n_gpu_layers) == (2048, 30)
    capped = auto_fit(h, LoadSettings(), [v100()], max_ctx=3000)
    assert capped.n_ctx == 2816


def test_auto_fit_keeps_attention_on_the_gpu_and_moves_experts_first(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen3moe-30b"]  # 15.8 GiB of Q4_0: too big for a V100 whole
    at_8k = LoadSettings(n_ctx=8192)
    assert not plan(h, at_8k, [v100()]).fits
    fit = auto_fit(h, at_8k, [v100()], pinned=frozenset({"n_ctx"}))
    k = fit.n_cpu_moe
    assert fit.n_gpu_layers == ALL_LAYERS and 0 < k < 48 and not fit.cpu_moe
    placed = plan(h, fit, [v100()])
    assert placed.fits and placed.partial
    assert not plan(h, fit.with_values(n_cpu_moe=k - 1), [v100()]).fits
    # what buys room then is said in experts: a q8_0 cache frees 360 MiB of KV on the card
    q8 = next(line for line in placed.suggestions if line.startswith("q8_0 KV cache"))
    assert "\u2212360 MiB, then only" in q8 and "blocks' experts need host memory" in q8
    # too many experts in host memory: the suggestion is the fewest that fit
    roomy = plan(h, fit.with_values(n_cpu_moe=30), [v100()])
    assert f"(--n-cpu-moe {k})" in roomy.suggestions[0]
    # context unpinned: the fewest host experts at the smallest context, then the most context
    free = auto_fit(h, at_8k, [v100()])
    assert free.n_cpu_moe <= k and plan(h, free, [v100()]).fits
    assert not plan(h, free.with_values(n_ctx=free.n_ctx + 256), [v100()]).fits
    # pinned experts, or --cpu-moe: only the layers are searched
    pinned = auto_fit(h, at_8k.with_values(n_cpu_moe=2), [v100()], pinned=frozenset({"n_ctx", "n_cpu_moe"}))
    assert pinned.n_cpu_moe == 2 and pinned.n_gpu_layers < 49
    # a card too small even for the dense weights of every layer: fewer layers, all their experts on the CPU
    tiny = Device("tiny", 2200, 2200, 300, 20)
    small = auto_fit(h, at_8k, [tiny], pinned=frozenset({"n_ctx"}))
    assert small.n_cpu_moe == 48 and 0 < small.n_gpu_layers < 49
    assert plan(h, small, [tiny]).fits


def test_suggestions_say_what_each_change_frees(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    # The user's case: Q4_K_M at 8k on a V100 with the layers that fit; llama.cpp's whole-batch outputs.
    s = LoadSettings(n_ctx=8192, n_outputs_max=0)
    ngl = auto_fit(h, s, [v100()], pinned=frozenset({"n_ctx"})).n_gpu_layers
    p = plan(h, s.with_values(n_gpu_layers=ngl), [v100()])
    assert p.fits and p.partial
    text = {str(line).split(":")[0]: line for line in p.suggestions}
    kv = text["q8_0 KV cache (--cache-type-k q8_0 --cache-type-v q8_0)"]
    gpu_kv = p.devices[0].kv_mib
    # q8_0 is 34 bytes per 32 values against f16's 64
    assert f"\u2212{gpu_kv * (1 - 34 / 64):,.0f} MiB" in kv
    assert "Context 4096 (--ctx 4096)" in text
    outputs = text["Room for one output per slot (--n-outputs-max 1)"]
    one = plan(h, s.with_values(n_gpu_layers=ngl, n_outputs_max=1), [v100()]).devices[0]
    # the compute buffer, with what the copies of host weights staged for a prompt batch add to it
    freed = p.devices[0].compute_mib + p.devices[0].staged_mib - one.compute_mib - one.staged_mib
    assert f"\u2212{freed:,.0f} MiB" in outputs and "layers fit" in outputs
    assert freed > 300


# ---- speed ceiling ---------------------------------------------------------------------------


def test_decode_ceiling_of_13_gb_on_a_v100_is_about_69_tok_s(headers: dict[str, GGUFHeader]) -> None:
    h = headers["llama-13gb"]
    shape = model_shape(h)
    p = plan(h, LoadSettings(n_ctx=2048), [Device("V100", 32_000, 32_000, 900, 80)])
    read = shape.total_bytes - shape.embd_bytes + shape.embd_row_bytes
    assert p.predicted_tg_tok_s == pytest.approx(900e9 / read)
    assert 66 < p.predicted_tg_tok_s < 72  # type: ignore[operator]


def test_partial_offload_needs_the_ram_bandwidth(headers: dict[str, GGUFHeader]) -> None:
    h = headers["llama-13gb"]
    s = LoadSettings(n_ctx=2048, n_gpu_layers=20)
    gpu = Device("V100", 16_000, 16_000, 900, 80)
    assert plan(h, s, [gpu]).predicted_tg_tok_s is None
    slow = plan(h, s, [gpu], ram_bandwidth_gbs=50).predicted_tg_tok_s
    fast = plan(h, s.with_values(n_gpu_layers=ALL_LAYERS), [gpu]).predicted_tg_tok_s
    assert slow is not None and fast is not None and slow < fast / 3
    assert plan(h, s, [Device("unknown", 16_000, 16_000)]).predicted_tg_tok_s is None
    assert plan(h, s, [], ram_bandwidth_gbs=50).predicted_tg_tok_s == pytest.approx(
        50e9 / (model_shape(h).total_bytes - model_shape(h).embd_bytes + model_shape(h).embd_row_bytes)
    )


def test_experts_of_the_first_blocks_stay_in_host_memory(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen3moe-30b"]
    shape = model_shape(h)
    experts = {il: 0 for il in range(48)}
    for t in h.tensors:
        if "_exps." in t.name:
            experts[int(t.name.split(".")[1])] += t.nbytes
    assert tuple(experts.values()) == shape.expert_bytes
    big = Device("A100", 80_000, 80_000, 1935, 108)
    whole = plan(h, LoadSettings(n_ctx=4096), [big])
    for k in (1, 12, 48):
        p = plan(h, LoadSettings(n_ctx=4096, n_cpu_moe=k), [big])
        moved = sum(experts[il] for il in range(k))
        assert p.devices[0].weights_mib * MiB == whole.devices[0].weights_mib * MiB - moved
        assert p.host.weights_mib * MiB == shape.embd_bytes + moved
        assert p.weights_bytes == whole.weights_bytes
        assert p.cpu_expert_layers == k and p.layers_on_gpu == 49
        # the blocks' KV stays with their attention, on the GPU
        assert p.devices[0].kv_mib == whole.devices[0].kv_mib
    assert plan(h, LoadSettings(n_ctx=4096, cpu_moe=True), [big]).host.weights_mib * MiB == (
        shape.embd_bytes + sum(experts.values())
    )
    # over two cards each keeps the rest of its own blocks: 49 slots cut at 3/4, blocks 0-36 on the first
    a, b = Device("a", 24_000, 24_000, 900), Device("b", 24_000, 8_000, 900)
    two = plan(h, LoadSettings(n_ctx=4096, n_cpu_moe=40), [a, b])
    assert (two.devices[0].layers, two.devices[1].layers) == (37, 11)
    assert two.devices[0].weights_mib * MiB == sum(shape.layer_bytes[:37]) - sum(experts[il] for il in range(37))
    assert two.devices[1].weights_mib * MiB == (
        sum(shape.layer_bytes[37:]) - sum(experts[il] for il in range(37, 40)) + shape.output_bytes
    )
    # blocks already on the CPU (-ngl) have their experts there anyway: n_cpu_moe adds the GPU ones only
    both = plan(h, LoadSettings(n_ctx=4096, n_gpu_layers=30, n_cpu_moe=24), [big])
    assert both.cpu_expert_layers == 24 - (49 - 30)
    assert both.host.weights_mib * MiB == shape.total_bytes - both.devices[0].weights_mib * MiB


def test_gpt_oss_expert_biases_move_with_the_experts(headers: dict[str, GGUFHeader]) -> None:
    h = headers["gpt-oss-20b"]
    shape = model_shape(h)
    block0 = sum(t.nbytes for t in h.tensors if t.name.startswith("blk.0.ffn_") and "_exps." in t.name)
    assert shape.expert_bytes[0] == block0
    assert any(t.name == "blk.0.ffn_up_exps.bias" for t in h.tensors)


def test_the_ceiling_reads_the_active_experts_of_host_blocks_from_ram(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen3moe-30b"]
    shape = model_shape(h)
    gpu = Device("A100", 80_000, 80_000, 1935, 108)
    k = 20
    s = LoadSettings(n_ctx=4096, n_cpu_moe=k)
    assert plan(h, s, [gpu]).predicted_tg_tok_s is None  # host-resident experts, RAM bandwidth unknown
    active = sum(shape.expert_bytes[:k]) * 8 / 128
    assert active == pytest.approx(sum(shape.expert_read_bytes[:k]))
    on_gpu = sum(shape.layer_read_bytes) - active + shape.output_bytes
    want = 1 / (on_gpu / 1935e9 + (active + shape.embd_row_bytes) / 50e9)
    assert plan(h, s, [gpu], ram_bandwidth_gbs=50).predicted_tg_tok_s == pytest.approx(want)


def test_moe_ceiling_reads_only_the_active_experts(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen3moe-30b"]
    shape = model_shape(h)
    expert = sum(t.nbytes for t in h.tensors if "_exps." in t.name)
    dense = shape.total_bytes - expert - shape.embd_bytes + shape.embd_row_bytes
    p = plan(h, LoadSettings(n_ctx=2048), [Device("A100", 80_000, 80_000, 1935, 108)])
    assert p.predicted_tg_tok_s == pytest.approx(1935e9 / (dense + expert * 8 / 128))
    assert p.predicted_tg_tok_s > 5 * 1935e9 / shape.total_bytes  # type: ignore[operator]


# ---- JSON and the catalog ---------------------------------------------------------------------


def test_plan_json_has_the_design_contract_keys(headers: dict[str, GGUFHeader]) -> None:
    doc = plan_to_json(plan(headers["qwen35-27b"], LoadSettings(n_ctx=8192), [v100()]))
    for key in (
        "weights_mib",
        "kv_mib",
        "recurrent_mib",
        "compute_mib",
        "devices",
        "host",
        "fits",
        "verdict",
        "predicted_tg_tok_s",
    ):
        assert key in doc
    dev = doc["devices"][0]
    for key in (
        "name",
        "total_mib",
        "weights_mib",
        "kv_mib",
        "recurrent_mib",
        "compute_mib",
        "overhead_mib",
        "needed_mib",
        "free_after_mib",
    ):
        assert key in dev
    for key in ("weights_mib", "kv_mib", "recurrent_mib", "compute_mib"):
        assert key in doc["host"]
    assert doc["kv_mib"] == 512.0 and doc["recurrent_mib"] == 149.62
    assert doc["fits"] is False and doc["settings"]["n_ctx"] == 8192


def test_cpu_only_plan_puts_everything_on_the_host(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen35-27b"]
    p = plan(h, LoadSettings(n_ctx=8192), [])
    assert p.devices == () and p.fits and p.layers_on_gpu == 0
    assert p.host.weights_mib * MiB == h.tensor_bytes
    assert p.host.kv_mib == 512.0 and p.host.compute_mib > 0
    assert p.predicted_tg_tok_s is None  # no RAM bandwidth given


def test_cards_catalog() -> None:
    for key in ("v100-16gb", "v100-pcie-16gb", "p40", "t4", "p100", "3090", "4090", "a100-40gb", "a100-80gb"):
        assert find_card(key).key == key
    assert find_card("v100-16gb").vram_mib == 16160
    assert find_card("Tesla P40 24GB") is CARDS["p40"]
    with pytest.raises(UnknownCardError) as err:
        find_card("v200")
    assert "v100-16gb" in str(err.value) and "t4" in str(err.value)
    c = custom_card(12_000, 400, name="mine")
    assert (c.vram_mib, c.bandwidth_gbs, c.name) == (12_000, 400, "mine")
    with pytest.raises(ValueError):
        custom_card(0, 400)


def test_cuda_overhead_scales_with_sm_count() -> None:
    v = cuda_overhead_mib(Device("V100", 16160, 16160, sm_count=80))
    t = cuda_overhead_mib(Device("T4", 15360, 15360, sm_count=40))
    assert 300 <= t < v <= 500


def test_shape_is_derived_once_per_header(headers: dict[str, GGUFHeader], tmp_path: Path) -> None:
    h = headers["llama-1b"]
    assert model_shape(h) is model_shape(h)
    other = read_model(write_shape(tmp_path / "x.gguf", SHAPES["llama-1b"]))
    assert model_shape(other) is not model_shape(h)
    assert model_shape(other) == model_shape(h)


# ---- GPU compute buffer: calibration against published CUDA logs ---------------------------
# Each row: a log line someone posted, with the settings it was logged under. Shapes are the
# models' published hyper-parameters; the planner only needs the header, written here sparse.
# (source, shape, n_ctx, n_ubatch, flash_attn, logged CUDA0 MiB, logged CUDA_Host MiB or None)
CUDA_LOGS = [
    # llama.cpp server log in fedora-copr/logdetective PR #106: a 7B llama-architecture model with
    # 32 layers and 8 KV heads x 128 (KV 256 MiB at n_ctx 2048), freq_base 1e6 (Mistral-7B-class).
    ("https://github.com/fedora-copr/logdetective/pull/106", "mistral-7b", 2048, 512, "off", 164.00, 12.01),
    ("https://github.com/fedora-copr/logdetective/pull/106", "mistral-7b", 32768, 512, "off", 2144.00, 72.01),
    # llamafile PR #552 (TriLM 3.9B, RTX 4080, all 31 layers offloaded), n_ctx 512, KV 180 MiB.
    ("https://github.com/mozilla-ai/llamafile/pull/552", "trilm-3.9b", 512, 512, "off", 105.00, None),
]
_LOG_SHAPES = {
    "mistral-7b": SHAPES["llama-1b"].__class__("llama", "Mistral-7B-class", 32, 4096, 32, 8, 14336, 32000),
    "trilm-3.9b": SHAPES["llama-1b"].__class__(
        "llama", "TriLM-3.9B-class", 30, 3072, 24, 24, 9216, 50688, quant="Q8_0"
    ),
}


@pytest.mark.parametrize("row", CUDA_LOGS, ids=[f"{r[1]}-ctx{r[2]}" for r in CUDA_LOGS])
def test_gpu_compute_buffer_against_published_cuda_logs(
    row: tuple[str, str, int, int, str, float, float | None], tmp_path: Path
) -> None:
    _, name, ctx, ub, fa, cuda0, host = row
    h = read_model(write_shape(tmp_path / f"{name}.gguf", _LOG_SHAPES[name]))
    # The llama.cpp builds that wrote these logs reserved logits for every token of the micro-batch.
    settings = LoadSettings(n_ctx=ctx, n_batch=max(512, ub), n_ubatch=ub, flash_attn=fa, n_outputs_max=0)
    p = plan(h, settings, [Device("CUDA0", 80_000, 80_000, 900, 80)])
    assert p.devices[0].compute_mib == pytest.approx(cuda0, rel=0.10)
    if host is not None:
        assert p.host.compute_mib == pytest.approx(host, rel=0.10)


# ---- on a GPU: what llama.cpp's CPU dry run cannot show --------------------------------------------


def gpu(name: str = "CUDA0", free: float = 80_000) -> Device:
    return Device(name, free, free, 900, 80)


def test_op_offload_stages_the_largest_host_weight_on_the_first_gpu(headers: dict[str, GGUFHeader]) -> None:
    h = headers["llama31-8b"]
    shape = model_shape(h)
    s = LoadSettings(n_ctx=8192, n_gpu_layers=20)  # blocks 13-31 and the output on the GPUs, 0-12 on the host
    p = plan(h, s, [gpu(), gpu("CUDA1")])
    first, second = p.devices
    # The largest tensor of a host block, copied for the prompt batch on top of the FFN phase it feeds.
    assert first.staged_mib == pytest.approx(max(shape.dense_max_bytes[:13]) / MiB)
    assert second.staged_mib == 0
    assert first.needed_mib == pytest.approx(
        first.weights_mib + first.kv_mib + first.compute_mib + first.staged_mib + first.overhead_mib
    )
    assert p.staged_mib == first.staged_mib and plan_to_json(p)["devices"][0]["staged_mib"] > 0
    # Every layer on the GPU: nothing to copy. No op offload: nothing copied, the CPU computes those blocks.
    assert plan(h, s.with_values(n_gpu_layers=ALL_LAYERS), [gpu()]).staged_mib == 0
    off = plan(h, s.with_values(op_offload=False), [gpu(), gpu("CUDA1")])
    assert off.staged_mib == 0
    assert off.host.compute_mib > p.host.compute_mib
    assert any("--no-op-offload" in line for line in plan(h, s, [gpu(free=6000)]).suggestions)


def test_a_host_blocks_kv_is_copied_for_its_attention(headers: dict[str, GGUFHeader]) -> None:
    # At 128k one f16 layer's K and V are 512 MiB: the attention of a host block reads copies of them.
    h = headers["llama31-8b"]
    p = plan(h, LoadSettings(n_ctx=131072, flash_attn="on", n_gpu_layers=20), [gpu()])
    layer_kv = 131072 * 8 * 128 * 2 * 2 / MiB
    assert layer_kv == 512
    d = p.devices[0]
    assert d.compute_mib + d.staged_mib > layer_kv + 131072 * 512 * 2 / MiB  # + its F16 mask


def test_experts_in_host_memory_are_staged_and_ot_matches_cpu_moe(headers: dict[str, GGUFHeader]) -> None:
    h = headers["qwen3moe-30b"]
    shape = model_shape(h)
    s = LoadSettings(n_ctx=8192)
    moe = plan(h, s.with_values(cpu_moe=True), [gpu()])
    assert moe.devices[0].staged_mib > 0
    assert moe.devices[0].compute_mib + moe.devices[0].staged_mib > max(shape.expert_max_bytes) / MiB
    # llama.cpp's -ot ".ffn_.*_exps.=CPU" is --cpu-moe's pattern for these tensors: the same plan.
    ot = plan(h, s, [gpu()], tensor_overrides=[(r".ffn_.*_exps.", "CPU")])
    for a, b in zip(ot.devices, moe.devices, strict=True):
        assert (a.weights_mib, a.compute_mib, a.staged_mib) == pytest.approx(
            (b.weights_mib, b.compute_mib, b.staged_mib)
        )
    assert ot.host.weights_mib == pytest.approx(moe.host.weights_mib)
    with pytest.raises(ValueError, match="CUDA0"):
        plan(h, s, [gpu()], tensor_overrides=[("exps", "CUDA3")])


def test_the_output_matrix_is_staged_only_for_a_batch_of_outputs(headers: dict[str, GGUFHeader]) -> None:
    # -ngl 0: the output layer in host memory. With llama.cpp's whole batch of outputs the output matrix
    # goes to the GPU for the prompt; with one output per slot (fewer than 32 rows) the CPU computes it.
    h = headers["llama31-8b"]
    out = model_shape(h).output_matrix_bytes / MiB
    whole = plan(h, LoadSettings(n_ctx=4096, n_gpu_layers=0, n_outputs_max=0), [gpu()])
    assert whole.devices[0].compute_mib + whole.devices[0].staged_mib > out + 128256 * 512 * 4 / MiB
    one = plan(h, LoadSettings(n_ctx=4096, n_gpu_layers=0), [gpu()])
    assert one.devices[0].compute_mib + one.devices[0].staged_mib < out


def test_host_compute_holds_the_masks_f16_with_flash_attention(headers: dict[str, GGUFHeader]) -> None:
    h = headers["llama31-8b"]
    hidden = 4096 * 512 * 4 / MiB
    for fa, elt in (("on", 2), ("off", 4)):
        p = plan(h, LoadSettings(n_ctx=32768, flash_attn=fa), [gpu()])
        assert p.host.compute_mib == pytest.approx(hidden + 32768 * 512 * elt / MiB)
    # Builds before llama.cpp#23764 kept the mask's F32 input on the host and cast it on the GPU.
    old = plan(h, LoadSettings(n_ctx=131072, flash_attn="on"), [gpu()], rules=OLDER_BUILDS)
    new = plan(h, LoadSettings(n_ctx=131072, flash_attn="on"), [gpu()])
    assert old.host.compute_mib == pytest.approx(hidden + 131072 * 512 * 4 / MiB)
    assert old.devices[0].compute_mib >= 131072 * 512 * (4 + 2) / MiB > new.devices[0].compute_mib


def test_cuda_flash_attention_converts_a_quantized_cache_in_the_buffer(headers: dict[str, GGUFHeader]) -> None:
    # llama.cpp#23907: the F16 copies of a q8_0 K and V (every cell of the widest layer) sit in the
    # compute buffer; the CPU reads q8_0 directly, and older builds took the copies from CUDA's pool.
    h = headers["llama31-8b"]
    s = LoadSettings(n_ctx=65536, flash_attn="on", cache_type_k="q8_0", cache_type_v="q8_0")
    f16 = plan(h, s.with_values(cache_type_k="f16", cache_type_v="f16"), [gpu()]).devices[0].compute_mib
    q8 = plan(h, s, [gpu()]).devices[0].compute_mib
    copies = 65536 * 8 * 128 * 2 * 2 / MiB
    assert q8 >= copies > f16 / 2
    older = plan(h, s, [gpu()], rules=OLDER_BUILDS).devices[0].compute_mib
    assert older == pytest.approx(
        plan(h, s.with_values(cache_type_k="f16", cache_type_v="f16"), [gpu()], rules=OLDER_BUILDS)
        .devices[0]
        .compute_mib
    )
    assert plan(h, s, []).host.compute_mib == pytest.approx(
        plan(h, s.with_values(cache_type_k="f16"), []).host.compute_mib
    )


def test_flash_attention_auto_follows_the_cuda_kernels(tmp_path: Path) -> None:
    # CUDA has flash-attention kernels for head sizes 40-256 (K = V) and a few wider grouped ones; a
    # layer with another size leaves "auto" off on a GPU. The CPU has every size; a quantized V cache
    # turns it on regardless.
    odd = read_model(
        write_shape(
            tmp_path / "h120.gguf",
            ModelShape("llama", "head-120", 8, 1920, 16, 4, 5120, 32000, head_dim=120, quant="Q8_0"),
        )
    )
    s = LoadSettings(n_ctx=16384)
    auto = plan(odd, s, [gpu()]).devices[0].compute_mib
    assert auto == plan(odd, s.with_values(flash_attn="off"), [gpu()]).devices[0].compute_mib
    assert auto > plan(odd, s.with_values(flash_attn="on"), [gpu()]).devices[0].compute_mib
    assert plan(odd, s, []).host.compute_mib == plan(odd, s.with_values(flash_attn="on"), []).host.compute_mib
    quantized_v = s.with_values(cache_type_v="q8_0")
    assert plan(odd, quantized_v, [gpu()]).devices[0].compute_mib == (
        plan(odd, quantized_v.with_values(flash_attn="on"), [gpu()]).devices[0].compute_mib
    )
    # head size 128 has a kernel: auto is on
    h128 = read_model(write_shape(tmp_path / "h128.gguf", ModelShape("llama", "head-128", 8, 2048, 16, 4, 5120, 32000)))
    assert (
        plan(h128, s, [gpu()]).devices[0].compute_mib
        == plan(h128, s.with_values(flash_attn="on"), [gpu()]).devices[0].compute_mib
    )
