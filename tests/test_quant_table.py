"""The quant table on real header-only files of real model shapes, and the quality ranking."""

from __future__ import annotations

from pathlib import Path

import pytest
from gguf import LlamaFileType

from gui.core.cards import find_card
from gui.core.gguf_reader import read_model
from gui.core.params import CONTEXT, LoadSettings
from gui.core.planner import Device, Verdict, plan
from gui.core.quant_quality import QUALITY, SOURCE, normalize_quant_name, quality_of
from gui.services.devices import device_from_card
from gui.services.models import ModelEntry, describe_file
from gui.services.quant_table import QuantSource, quant_rows
from tests.gguf_factory import write_gguf, write_llama_like
from tests.model_shapes import SHAPES, shape_metadata, shape_tensors

V100 = device_from_card(find_card("v100-16gb"))
AT_8K = LoadSettings(n_ctx=8192)


@pytest.fixture(scope="module")
def qwen27b(tmp_path_factory: pytest.TempPathFactory) -> list[ModelEntry]:
    """Qwen3.5-27B-shaped Q4_K_M and Q3_K_S, sparse files of their true size, with their file types."""
    folder = tmp_path_factory.mktemp("qwen27b")
    out = []
    for key, ftype, label in (
        ("qwen35-27b", LlamaFileType.MOSTLY_Q4_K_M, "Q4_K_M"),
        ("qwen35-27b-q3ks", LlamaFileType.MOSTLY_Q3_K_S, "Q3_K_S"),
    ):
        s = SHAPES[key]
        path = write_gguf(
            folder / f"Qwen3.5-27B-{label}.gguf", s.arch, shape_metadata(s), shape_tensors(s), True, ftype
        )
        out.append(describe_file(path))
    return out


def test_the_users_case_on_a_v100(qwen27b: list[ModelEntry]) -> None:
    rows = quant_rows(qwen27b, AT_8K, [V100])
    assert [r.quant for r in rows] == ["Q4_K_M", "Q3_K_S"]  # largest first
    q4, q3 = rows
    assert q4.size_bytes > q3.size_bytes
    assert 4.5 < q4.bits_per_weight < 5.5 and 3.3 < q3.bits_per_weight < 4.0

    # Q4_K_M does not fit fully at 8k: only some layers go on the GPU, and no context is small enough.
    assert q4.fits is Verdict.WONT_FIT and q4.ctx == 8192
    assert q4.max_ctx_full_offload is None
    assert 0 < q4.gpu_layers < q4.n_layer + 1 == 65
    assert q4.tok_s is None  # host-resident weights at an unknown RAM bandwidth
    full_q4 = plan(q4.source.header, AT_8K, [V100])
    assert full_q4.verdict == "will not fit"

    # Q3_K_S fits with room for a long context, on the GPU entirely, at a ceiling near 78 tok/s.
    assert q3.fits is Verdict.FITS and q3.all_layers
    assert q3.max_ctx_full_offload is not None and q3.max_ctx_full_offload >= 32768
    assert q3.max_ctx_full_offload % CONTEXT.step == 0
    assert q3.max_ctx_full_offload <= (q3.source.context_length or 0)
    assert q3.tok_s is not None and 60 < q3.tok_s < 90  # ~900 GB/s over ~11-12 GB read per token
    # The answer is the planner's: one step of 256 more context no longer keeps the margin.
    more = plan(q3.source.header, AT_8K.with_values(n_ctx=q3.max_ctx_full_offload + 256), [V100])
    assert more.verdict != "fits"

    # Quality: Q4_K_M ranks above Q3_K_S, and the hints say why.
    assert q4.quality_rank is not None and q3.quality_rank is not None and q4.quality_rank < q3.quality_rank
    assert q4.quality_level == "low loss" and q3.quality_level == "medium loss"
    assert "+1.6321 ppl" in q3.quality_hint


def test_partial_offload_speed_needs_and_uses_the_ram_bandwidth(qwen27b: list[ModelEntry]) -> None:
    rows = quant_rows(qwen27b, AT_8K, [V100], ram_bandwidth_gbs=50.0)
    q4, q3 = rows
    assert q4.tok_s is not None and q3.tok_s is not None
    assert q4.tok_s < q3.tok_s / 2  # offloaded layers are read from host memory at 50 GB/s, not 900 GB/s
    part = plan(q4.source.header, AT_8K.with_values(n_gpu_layers=q4.gpu_layers), [V100], ram_bandwidth_gbs=50.0)
    assert q4.tok_s == pytest.approx(part.predicted_tg_tok_s)
    assert part.verdict == "fits"
    one_more = plan(q4.source.header, AT_8K.with_values(n_gpu_layers=q4.gpu_layers + 1), [V100])
    assert one_more.verdict != "fits"


def test_tight_when_only_the_margin_is_eaten(qwen27b: list[ModelEntry]) -> None:
    q3 = qwen27b[1]
    (row,) = quant_rows([q3], AT_8K, [V100])
    card = Device("squeezed V100", V100.total_mib, row.needed_mib + 600, V100.bandwidth_gbs, V100.sm_count)
    (tight,) = quant_rows([q3], AT_8K, [card], margin_mib=1024, ram_bandwidth_gbs=50.0)
    assert tight.fits is Verdict.TIGHT
    assert tight.max_ctx_full_offload is not None and tight.max_ctx_full_offload < 8192
    # Its speed is that of the layers that keep the margin, not of a full offload it does not recommend.
    assert tight.gpu_layers < tight.n_layer + 1
    at_fit = plan(tight.source.header, AT_8K.with_values(n_gpu_layers=tight.gpu_layers), [card], ram_bandwidth_gbs=50.0)
    assert tight.tok_s == pytest.approx(at_fit.predicted_tg_tok_s)
    assert row.tok_s is not None and tight.tok_s < row.tok_s


def test_nothing_fits_on_a_small_card(qwen27b: list[ModelEntry]) -> None:
    small = Device("8 GB card", 8192, 8192, 448.0, 40)
    rows = quant_rows(qwen27b, AT_8K, [small])
    assert [r.fits for r in rows] == [Verdict.WONT_FIT, Verdict.WONT_FIT]
    assert all(r.max_ctx_full_offload is None for r in rows)
    assert all(0 <= r.gpu_layers < r.n_layer + 1 for r in rows)


def test_trained_context_caps_the_search(tmp_path: Path) -> None:
    path = write_llama_like(tmp_path / "tiny.gguf", ctx=2048, quant="Q8_0")
    (row,) = quant_rows([describe_file(path)], LoadSettings(n_ctx=32768), [V100])
    assert row.fits is Verdict.FITS
    assert row.ctx == 2048  # the settings asked for more than the model was trained on
    assert row.max_ctx_full_offload == 2048


def test_cpu_only_rows(qwen27b: list[ModelEntry]) -> None:
    rows = quant_rows(qwen27b, AT_8K, [], ram_bandwidth_gbs=50.0)
    assert all(r.fits is Verdict.WONT_FIT and r.gpu_layers == 0 and r.max_ctx_full_offload is None for r in rows)
    assert all(r.tok_s is not None and r.tok_s < 5 for r in rows)  # 50 GB/s over 11-16 GB
    # Said as the fact it is, not as a red "no" against a file that runs here on the CPU.
    assert all(not r.on_gpu and r.fit_words == "no GPU" for r in rows)
    assert all(r.on_gpu for r in quant_rows(qwen27b, AT_8K, [V100]))


def test_headers_and_sources_work_like_entries(qwen27b: list[ModelEntry]) -> None:
    header = read_model(qwen27b[1].path)
    src = QuantSource("remote Q3_K_S", header, url="http://example.invalid/x.gguf")
    rows = quant_rows([header, src], AT_8K, [V100])
    assert [r.label for r in rows] == ["Qwen3.5-27B-Q3_K_S.gguf", "remote Q3_K_S"]
    assert rows[1].url == "http://example.invalid/x.gguf" and rows[1].source is src
    assert rows[0].fits == rows[1].fits is Verdict.FITS


def test_bad_items_become_error_rows(tmp_path: Path) -> None:
    broken = ModelEntry(path=tmp_path / "bad.gguf", name="bad.gguf", size_bytes=10, error="bad.gguf: not a GGUF file")
    good = describe_file(write_llama_like(tmp_path / "tiny.gguf", quant="Q4_K"))
    rows = quant_rows([broken, good, object()], AT_8K, [V100])
    assert len(rows) == 3
    errors = [r for r in rows if r.error]
    assert {r.label for r in errors} >= {"bad.gguf"} and len(errors) == 2
    assert rows[0].label == "tiny.gguf" and rows[0].error is None


# ---- the quality ranking --------------------------------------------------------------------


def test_the_ranking_follows_the_perplexity_table() -> None:
    measured = sorted((q for q in QUALITY.values() if q.ppl_increase is not None), key=lambda q: q.rank)
    ppl = [q.ppl_increase for q in measured if q.level != "reference"]
    assert ppl == sorted(ppl)  # every ranked pair with figures is ordered by its perplexity increase
    ranks = [q.rank for q in QUALITY.values()]
    assert sorted(ranks) == list(range(1, len(ranks) + 1))
    for name in ("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "Q3_K_S", "IQ3_XXS", "Q2_K", "IQ2_XXS", "IQ1_S"):
        assert name in QUALITY
    assert QUALITY["Q5_K_M"].rank < QUALITY["Q4_K_M"].rank < QUALITY["Q4_K_S"].rank < QUALITY["Q3_K_S"].rank
    assert QUALITY["Q3_K_S"].rank < QUALITY["IQ3_XXS"].rank < QUALITY["Q2_K"].rank
    assert "quantize" in SOURCE


@pytest.mark.parametrize(
    ("name", "expected"),
    [("q4_k_m", "Q4_K_M"), ("Q4_K", "Q4_K_M"), ("Q6_K (guessed)", "Q6_K"), ("iq3-xxs", "IQ3_XXS")],
)
def test_quant_names_are_normalised(name: str, expected: str) -> None:
    assert normalize_quant_name(name) == expected
    quality = quality_of(name)
    assert quality is not None and quality.name == expected


def test_unknown_quants_have_no_rank() -> None:
    assert quality_of("MXFP4_MOE") is None
    assert quality_of(None) is None


def test_a_moe_model_fits_with_some_layers_experts_on_the_cpu(tmp_path: Path) -> None:
    s = SHAPES["qwen3moe-30b"]  # 15.8 GiB of Q4_0: every layer's attention fits a V100, not every expert
    path = write_gguf(tmp_path / "Qwen3-30B-A3B-Q4_0.gguf", s.arch, shape_metadata(s), shape_tensors(s), True)
    entry = describe_file(path)
    (row,) = quant_rows([entry], AT_8K, [V100], ram_bandwidth_gbs=50.0)
    assert row.fits is Verdict.WONT_FIT and row.all_layers
    k = row.cpu_expert_layers
    assert 0 < k < 48 and row.fits_with_experts_on_cpu
    assert row.fit_words == f"with {k} layers' experts on the CPU"
    chosen = AT_8K.with_values(n_cpu_moe=k)
    assert plan(entry.header, chosen, [V100]).fits
    assert not plan(entry.header, chosen.with_values(n_cpu_moe=k - 1), [V100]).fits
    # the ceiling is that placement's: the active experts of k blocks read from RAM at 50 GB/s
    assert row.tok_s == pytest.approx(plan(entry.header, chosen, [V100], ram_bandwidth_gbs=50.0).predicted_tg_tok_s)
    # the window's own experts setting for one file does not change the table's answer
    (same,) = quant_rows([entry], AT_8K.with_values(cpu_moe=True), [V100], ram_bandwidth_gbs=50.0)
    assert (same.fits, same.cpu_expert_layers, same.tok_s) == (row.fits, k, row.tok_s)
