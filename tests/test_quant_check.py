"""The quant a header names, checked against its tensors: header-only files of consistent and contradicting
mixes, llama.cpp's own mixes (model_shapes), and the tensors llama.cpp moves to a fallback type."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pytest
from gguf import GGMLQuantizationType, LlamaFileType

from gui.core.gguf_reader import GGUFHeader, TensorInfo, read_model
from gui.core.quant_check import MIXES, check_quant
from gui.core.quant_quality import QUALITY
from tests.gguf_factory import FTYPE_FOR_QUANT, TensorSpec, llama_like_metadata, write_gguf, write_llama_like
from tests.model_shapes import SHAPES, shape_tensors

SMALL = {"n_layer": 8, "n_embd": 256, "n_head": 4, "n_head_kv": 2, "n_ff": 768, "n_vocab": 512}


def in_memory(tensors: list[TensorSpec], ftype: int | None) -> GGUFHeader:
    """A header as the reader would return it, for shapes too large to be worth writing."""
    infos = [TensorInfo(name, tuple(shape), int(GGMLQuantizationType[kind]), 0) for name, shape, kind in tensors]
    metadata = {} if ftype is None else {"general.file_type": ftype}
    return GGUFHeader("test", 3, metadata, infos, 32, 0, 0, None)


def mixed(n_layer: int, n_embd: int, n_ff: int, roles: dict[str, str], default: str) -> list[TensorSpec]:
    """Block matrices of a llama-like model with a type per role (attn_q, attn_v, ffn_down, ...)."""
    shapes = {
        "attn_q": (n_embd, n_embd),
        "attn_k": (n_embd, n_embd // 2),
        "attn_v": (n_embd, n_embd // 2),
        "attn_output": (n_embd, n_embd),
        "ffn_gate": (n_embd, n_ff),
        "ffn_up": (n_embd, n_ff),
        "ffn_down": (n_ff, n_embd),
    }
    out: list[TensorSpec] = [("token_embd.weight", (n_embd, 512), "Q8_0")]
    for i in range(n_layer):
        out.append((f"blk.{i}.attn_norm.weight", (n_embd,), "F32"))
        out += [(f"blk.{i}.{role}.weight", shape, roles.get(role, default)) for role, shape in shapes.items()]
    return [*out, ("output.weight", (n_embd, 512), "Q8_0")]


def tiny(path: Path, quant: str, file_type: int | Literal["auto"] = "auto") -> Path:
    """Every block matrix in ``quant``; the file type llama.cpp would record for it, or the one given."""
    return write_llama_like(path, quant=quant, file_type=file_type, n_layer=8, n_ff=768)


def write_mixed(path: Path, ftype: LlamaFileType, roles: dict[str, str], default: str, **shape: int) -> Path:
    dims = {**SMALL, **shape}
    metadata = llama_like_metadata(ctx=2048, **dims)
    tensors = mixed(dims["n_layer"], dims["n_embd"], dims["n_ff"], roles, default)
    return write_gguf(path, "llama", metadata, tensors, file_type=int(ftype))


def test_a_file_whose_tensors_are_its_named_quant_passes(tmp_path: Path) -> None:
    path = tiny(tmp_path / "Tiny-Q4_K_M.gguf", "Q4_K")
    check = check_quant(read_model(path))
    assert not check.contradicts and check.problem == ""
    assert check.label == "Q4_K_M" and check.claimed == "Q4_K_M"
    assert check.dominant == "Q4_K" and check.share == 1.0 and check.bits_per_weight == pytest.approx(4.5)


def test_llama_cpps_own_q4_k_m_mix_passes(tmp_path: Path) -> None:
    # attn_v and half of ffn_down one step up (Q6_K), the output at Q6_K: what llama-quantize writes.
    path = write_mixed(tmp_path / "m.gguf", LlamaFileType.MOSTLY_Q4_K_M, {"attn_v": "Q6_K", "ffn_down": "Q6_K"}, "Q4_K")
    check = check_quant(read_model(path))
    assert not check.contradicts
    assert check.dominant == "Q4_K" and check.bits_per_weight is not None and 4.5 < check.bits_per_weight < 6.6


def test_a_header_that_says_q4_k_m_over_q8_0_tensors_says_so(tmp_path: Path) -> None:
    path = tiny(tmp_path / "Tiny-Q4_K_M.gguf", "Q8_0", LlamaFileType.MOSTLY_Q4_K_M)
    header = read_model(path)
    assert header.quant_name == "Q4_K_M"  # the field alone would have been shown as fact
    check = check_quant(header)
    assert check.contradicts
    assert check.label == "Q8_0" and check.dominant == "Q8_0"
    assert check.bits_per_weight == pytest.approx(8.5) and check.expected == (4.5, 6.5625)
    for words in ("Q4_K_M", "general.file_type 15", "100% of the weights", "Q8_0", "8.50", "4.50 to 6.56"):
        assert words in check.problem, words


def test_too_few_bits_for_the_name_is_a_contradiction_too(tmp_path: Path) -> None:
    # Says Q8_0; the layers are Q4_0 (4.5 bits per weight, half of what Q8_0 keeps).
    path = tiny(tmp_path / "x.gguf", "Q4_0", LlamaFileType.MOSTLY_Q8_0)
    check = check_quant(read_model(path))
    assert check.contradicts and check.label == "Q4_0" and "Q8_0" in check.problem


def test_the_right_type_at_the_wrong_bits_keeps_the_name_with_the_problem(tmp_path: Path) -> None:
    # Q4_K is the plurality, but the rest is F16: far above anything a Q4_K_M mix reaches.
    roles = {"ffn_down": "F16", "ffn_up": "F16"}
    path = write_mixed(tmp_path / "m.gguf", LlamaFileType.MOSTLY_Q4_K_M, roles, "Q4_K", n_ff=512)
    check = check_quant(read_model(path))
    assert check.dominant == "Q4_K" and check.bits_per_weight is not None and check.bits_per_weight > 7
    assert check.contradicts and check.label == "Q4_K_M"


def test_a_hand_made_mix_that_keeps_the_name_passes(tmp_path: Path) -> None:
    # Dynamic quants keep attention at Q8_0 and ffn_down a step up, and still say Q4_K_M.
    roles = {"attn_q": "Q8_0", "attn_k": "Q8_0", "attn_v": "Q8_0", "attn_output": "Q8_0", "ffn_down": "Q5_K"}
    path = write_mixed(tmp_path / "UD-Q4_K_XL.gguf", LlamaFileType.MOSTLY_Q4_K_M, roles, "Q4_K", n_ff=1024)
    assert not check_quant(read_model(path)).contradicts


def test_q3_k_l_may_be_mostly_q5_k() -> None:
    # A GPT-2/StarCoder-style block (fused attn_qkv, no ffn_gate, ffn_up 4x wide): llama.cpp's Q3_K_L
    # puts attn_qkv at Q4_K and attn_output and ffn_down at Q5_K, which then outnumber the Q3_K ffn_up.
    n_embd = 256
    tensors: list[TensorSpec] = []
    for i in range(8):
        tensors += [
            (f"blk.{i}.attn_qkv.weight", (n_embd, 3 * n_embd), "Q4_K"),
            (f"blk.{i}.attn_output.weight", (n_embd, n_embd), "Q5_K"),
            (f"blk.{i}.ffn_up.weight", (n_embd, 4 * n_embd), "Q3_K"),
            (f"blk.{i}.ffn_down.weight", (4 * n_embd, n_embd), "Q5_K"),
        ]
    check = check_quant(in_memory(tensors, int(LlamaFileType.MOSTLY_Q3_K_L)))
    assert check.dominant == "Q5_K" and not check.contradicts


def test_tensors_llama_cpp_moved_to_a_fallback_type_are_not_held_against_the_name(tmp_path: Path) -> None:
    # 576 wide (SmolLM2-135M): rows of 576 are not whole Q4_K blocks, so llama.cpp stores those
    # matrices as Q5_0; only ffn_down (rows of 1536) is Q4_K/Q6_K. Mostly Q5_0 by count, and right.
    tensors = mixed(8, 576, 1536, {"ffn_down": "Q4_K"}, "Q5_0")
    tensors = [(n, s, "Q6_K" if "blk.0.ffn_down" in n else k) for n, s, k in tensors]
    path = write_gguf(tmp_path / "smol.gguf", "llama", {"general.name": "Smol"}, tensors, file_type=15)
    check = check_quant(read_model(path))
    assert not check.contradicts and check.dominant == "Q4_K"


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_model_shape_mix_passes(name: str) -> None:
    # The shapes follow llama.cpp's own mixes (Q4_K_M with Q6_K attn_v and ffn_down, Q3_K_S, Q8_0, Q4_0).
    shape = SHAPES[name]
    ftype = LlamaFileType[f"MOSTLY_{shape.file_type}"] if shape.file_type else FTYPE_FOR_QUANT[shape.quant]
    check = check_quant(in_memory(shape_tensors(shape), int(ftype)))
    assert check.claimed is not None and not check.contradicts, check.problem


def test_no_file_type_or_an_unknown_one_gets_no_verdict() -> None:
    tensors: list[TensorSpec] = [("blk.0.ffn_up.weight", (256, 256), "Q8_0")]
    guessed = check_quant(in_memory(tensors, None))
    assert guessed.label == "Q8_0 (guessed)" and guessed.claimed is None and not guessed.contradicts
    unknown = check_quant(in_memory(tensors, 999))
    assert unknown.claimed is None and not unknown.contradicts
    nothing_to_judge = check_quant(in_memory([("token_embd.weight", (256, 512), "Q8_0")], 15))
    assert nothing_to_judge.claimed == "Q4_K_M" and nothing_to_judge.dominant is None
    assert not nothing_to_judge.contradicts


def test_every_quant_the_quality_table_knows_has_a_mix() -> None:
    assert set(QUALITY) <= set(MIXES)
    for name, mix in MIXES.items():
        low, high = mix.bpw_range
        assert set(mix.dominant) <= set(mix.types) and low <= high, name
