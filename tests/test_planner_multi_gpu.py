"""Several GPUs: where llama.cpp puts each layer, and what each device then holds.

The expected placement is derived here from llama.cpp's rule as the vendored source writes it
(ggml-org/llama.cpp@0c1e57098, src/llama-model.cpp, load_tensors): the split points are the tensor
split's proportions (or each device's free memory), summed and divided by their sum in C floats;
i_gpu_start = max(n_layer + 1 - ngl, 0), act_gpu_layers = min(ngl, n_layer + 1), and slot il (the
output layer is slot n_layer) goes to device upper_bound(splits, float(il - i_gpu_start) / act_gpu_layers).
It is written with numpy's float32 and a plain loop over the slots, not with the planner's helpers.
llama.cpp's own dry run cannot check it here: the installed engine is the CPU build, which has no GPU
devices to place layers on (llama_prepare_model_devices finds none, so every layer is on the CPU).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from model_shapes import SHAPES, write_shape

from gui.core.cards import find_card
from gui.core.gguf_reader import GGUFHeader, read_model
from gui.core.params import LoadSettings
from gui.core.planner import Device, Plan, auto_fit, plan
from gui.services.devices import device_from_card

ROOT = Path(__file__).resolve().parent.parent


def expected_devices(n_layer: int, ngl: int, proportions: list[float]) -> list[int | None]:
    """For each slot 0..n_layer (the last is the output layer), the device llama.cpp puts it on, or None (CPU)."""
    splits = np.array(proportions, dtype=np.float32)
    splits = np.cumsum(splits, dtype=np.float32)
    splits = (splits / splits[-1]).astype(np.float32)
    start = max(n_layer + 1 - ngl, 0)
    act = min(ngl, n_layer + 1)
    out: list[int | None] = []
    for il in range(n_layer + 1):
        if il < start or il - start >= act:
            out.append(None)
            continue
        x = np.float32(il - start) / np.float32(act)
        out.append(int(np.searchsorted(splits, x, side="right")))
    return out


def planned_devices(p: Plan) -> list[int | None]:
    slots: list[int | None] = [None] * (p.n_layer + 1)
    for i, d in enumerate(p.devices):
        for il in range(d.first_block, d.first_block + d.layers):
            slots[il] = i
        if d.has_output:
            slots[p.n_layer] = i
    return slots


@pytest.fixture(scope="module")
def headers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GGUFHeader]:
    folder = tmp_path_factory.mktemp("shapes")
    return {
        key: read_model(str(write_shape(folder / f"{key}.gguf", SHAPES[key])))
        for key in ("llama-70b", "qwen35-27b", "gemma3-27b")
    }


def cards(*keys: str) -> list[Device]:
    return [device_from_card(find_card(k)) for k in keys]


CASES = [
    # (shape, cards, tensor split, ngl)
    ("llama-70b", ("p40", "p40"), "", 999),
    ("llama-70b", ("p40", "p40"), "3,1", 999),
    ("llama-70b", ("p40", "p40", "v100-16gb"), "1,1,1", 999),
    ("llama-70b", ("3090", "p40", "t4", "p100"), "5,3,2,1", 999),
    ("llama-70b", ("p40", "p40"), "1,2", 40),
    ("qwen35-27b", ("v100-16gb", "t4"), "", 999),
    ("qwen35-27b", ("v100-16gb", "t4"), "7/3", 50),
    ("qwen35-27b", ("t4", "t4", "t4"), "0,1,1", 999),
    ("gemma3-27b", ("p40", "v100-16gb", "t4", "t4"), "2.5,1,1,0.5", 999),
    ("gemma3-27b", ("p40", "v100-16gb"), "", 20),
]


@pytest.mark.parametrize(("key", "keys", "split", "ngl"), CASES)
def test_layers_land_where_llama_cpp_puts_them(
    headers: dict[str, GGUFHeader], key: str, keys: tuple[str, ...], split: str, ngl: int
) -> None:
    devices = cards(*keys)
    header = headers[key]
    s = LoadSettings(n_ctx=4096, tensor_split=split, n_gpu_layers=ngl).validated()
    p = plan(header, s, devices, suggest=False)
    n = p.n_layer
    proportions = (
        [float(v) for v in split.replace("/", ",").split(",")] if split else [d.free_mib * (1 << 20) for d in devices]
    )
    assert planned_devices(p) == expected_devices(n, min(ngl, n + 1), proportions)
    # the output layer on the device of the last slot, token_embd on the host
    assert sum(d.has_output for d in p.devices) == (1 if ngl >= 1 else 0)
    assert p.host.weights_mib > 0


def test_each_layers_kv_is_on_that_layers_device(headers: dict[str, GGUFHeader]) -> None:
    """llama-kv-cache.cpp: each layer's cache in the buffer of model.dev_layer(il). Llama-3-70B: 80 attention
    layers, 8 KV heads of 128, f16: 8192 cells x 2 x 1024 x 2 bytes = 32 MiB a layer."""
    header = headers["llama-70b"]
    p = plan(header, LoadSettings(n_ctx=8192, tensor_split="3,1"), cards("p40", "p40"), suggest=False)
    assert [d.layers for d in p.devices] == [61, 19]  # 81 slots x 3/4 = 60.75: blocks 0-60, then 61-79 + output
    assert [d.kv_mib for d in p.devices] == [61 * 32.0, 19 * 32.0]
    assert p.host.kv_mib == 0
    # qwen35: only every 4th block has attention KV (blocks 3, 7, ...), the others a recurrent state
    q = plan(headers["qwen35-27b"], LoadSettings(n_ctx=8192, tensor_split="1,1"), cards("t4", "t4"), suggest=False)
    first, second = q.devices
    kv_layers = lambda d: sum(1 for il in range(d.first_block, d.first_block + d.layers) if il % 4 == 3)  # noqa: E731
    per_layer = 512.0 / 16  # 16 attention layers hold 512 MiB at 8k (docs/memory-model.md)
    assert first.kv_mib == pytest.approx(kv_layers(first) * per_layer)
    assert second.kv_mib == pytest.approx(kv_layers(second) * per_layer)
    assert first.recurrent_mib > 0 and second.recurrent_mib > 0


def test_every_device_that_computes_has_a_compute_buffer_and_its_context(headers: dict[str, GGUFHeader]) -> None:
    p = plan(headers["llama-70b"], LoadSettings(n_ctx=4096), cards("3090", "p40", "t4"), suggest=False)
    for d in p.devices:
        assert d.layers > 0 and d.compute_mib > 0 and d.overhead_mib > 0
        assert d.needed_mib == pytest.approx(
            d.weights_mib + d.kv_mib + d.recurrent_mib + d.compute_mib + d.staged_mib + d.overhead_mib
        )
    # pipeline parallelism (every layer on several GPUs): each GPU keeps 4 copies of its inputs, so the
    # same load with fewer layers (no pipeline) has smaller buffers per computing GPU
    partial = plan(headers["llama-70b"], LoadSettings(n_ctx=4096, n_gpu_layers=80), cards("3090", "p40", "t4"))
    assert all(a.compute_mib > b.compute_mib for a, b in zip(p.devices, partial.devices, strict=True))


def test_split_mode_none_puts_everything_on_the_main_gpu(headers: dict[str, GGUFHeader]) -> None:
    header = headers["qwen35-27b"]
    devices = cards("t4", "p40", "t4")
    alone = plan(header, LoadSettings(n_ctx=4096), cards("p40"), suggest=False)
    p = plan(header, LoadSettings(n_ctx=4096, split_mode="none", main_gpu=1, tensor_split="1,1,1"), devices)
    unused = [p.devices[0], p.devices[2]]
    assert all(not d.in_use and d.needed_mib == 0 and d.layers == 0 and not d.has_output for d in unused)
    main = p.devices[1]
    assert main.in_use and main.has_output and main.layers == p.n_layer
    # the same as a load on that card alone
    assert main.needed_mib == pytest.approx(alone.devices[0].needed_mib)
    assert main.weights_mib == pytest.approx(alone.devices[0].weights_mib)
    with pytest.raises(ValueError, match=r"^main GPU 3 is not one of the 3 GPUs \(0-2\)"):
        plan(header, LoadSettings(split_mode="none", main_gpu=3), devices)


def test_row_split_is_refused_in_one_line(headers: dict[str, GGUFHeader]) -> None:
    """The vendored CUDA backend offers no split buffer type: llama.cpp throws "device CUDA0 does not support
    split buffers" when it builds the buffer lists (llama-model.cpp: make_gpu_buft_list)."""
    with pytest.raises(ValueError, match="row") as caught:
        plan(headers["llama-70b"], LoadSettings(split_mode="row"), cards("p40", "p40"))
    assert "\n" not in str(caught.value)
    # without GPUs the split mode is not read: a CPU plan
    assert plan(headers["llama-70b"], LoadSettings(split_mode="row"), []).devices == ()


def test_a_tensor_split_that_leaves_these_gpus_nothing_falls_back_to_free_memory(
    headers: dict[str, GGUFHeader],
) -> None:
    header = headers["llama-70b"]
    devices = cards("p40", "t4")
    by_memory = plan(header, LoadSettings(), devices, suggest=False)
    p = plan(header, LoadSettings(tensor_split="0,0,1"), devices, suggest=False)
    assert [d.layers for d in p.devices] == [d.layers for d in by_memory.devices]
    assert "layers split over 2 GPUs by free memory" in p.notes
    assert any("gives these 2 GPUs nothing: llama.cpp splits by free memory" in n for n in p.notes)


def test_auto_fit_keeps_the_margin_on_every_gpu(headers: dict[str, GGUFHeader]) -> None:
    header = headers["llama-70b"]
    devices = cards("p40", "t4", "t4")
    for split in ("", "3,1,1", "1,1,4"):
        s = auto_fit(header, LoadSettings(tensor_split=split), devices)
        p = plan(header, s, devices, suggest=False)
        assert all(d.free_after_mib >= d.margin_mib for d in p.devices), split
        more = plan(header, s.with_values(n_ctx=s.n_ctx + 256), devices, suggest=False)
        assert s.n_ctx == header.context_length or any(d.free_after_mib < d.margin_mib for d in more.devices)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("3,x", "'x' is not a number"),
        ("3,,1", "an empty item"),
        ("-1,2", "from 0 to"),
        ("nan,1", "from 0 to"),
        ("inf", "from 0 to"),
        ("0,0", "all zero"),
        (",".join(["1"] * 17), "at most 16"),
        ("1" * 600, "longer than"),
    ],
)
def test_bad_tensor_splits_are_one_line(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words) as caught:
        LoadSettings(tensor_split=text).validated()
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 200
    with pytest.raises(ValueError, match=words):
        LoadSettings.from_dict({"tensor_split": text})


def test_a_tensor_split_is_stored_in_llama_cpp_s_spelling() -> None:
    assert LoadSettings.from_dict({"tensor_split": " 3 / 1 "}).tensor_split == "3,1"
    assert LoadSettings.from_dict({"tensor_split": "0.5,0.25"}).tensor_split_values == (0.5, 0.25)
    with pytest.raises(ValueError, match="must be text"):
        LoadSettings.from_dict({"tensor_split": [3, 1]})
    with pytest.raises(ValueError, match="Split mode must be one of layer, row, none"):
        LoadSettings.from_dict({"split_mode": "tensor"})
    with pytest.raises(ValueError, match="Main GPU must be between 0 and 15"):
        LoadSettings.from_dict({"main_gpu": 16})


def tightfit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_plan_cli_prints_one_entry_per_device(tmp_path: Path) -> None:
    model = write_shape(tmp_path / "Llama-3-70B-Q4_K_M.gguf", SHAPES["llama-70b"])
    common = ("plan", str(model), "--gpu", "p40", "--gpu", "p40", "--gpu", "t4", "--ram-gbs", "50")
    result = tightfit(*common, "--tensor-split", "2,2,1", "--ctx", "2048", "--json")
    assert result.returncode in (0, 1), result.stderr
    data = json.loads(result.stdout)
    assert [d["name"] for d in data["devices"]] == ["Tesla P40 24GB", "Tesla P40 24GB", "Tesla T4 16GB"]
    expected = expected_devices(80, 81, [2, 2, 1])
    for i, d in enumerate(data["devices"]):
        blocks = [il for il in range(80) if expected[il] == i]
        assert (d["first_block"], d["last_block"], d["layers"]) == (blocks[0], blocks[-1], len(blocks))
        assert d["has_output"] == (i == 2) and d["in_use"] is True
        for key in ("weights_mib", "kv_mib", "compute_mib", "needed_mib"):
            assert d[key] > 0, key
    assert data["settings"]["tensor_split"] == "2,2,1"

    text = tightfit(*common, "--split-mode", "none", "--main-gpu", "1")
    lines = text.stdout.splitlines()
    assert [line.split(":")[0].strip() for line in lines if line.startswith("  GPU ")] == [
        "GPU 0 Tesla P40 24GB",
        "GPU 1 Tesla P40 24GB [blocks 0-79 + output]",
        "GPU 2 Tesla T4 16GB",
    ]
    assert sum("not used" in line for line in lines) == 2


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (("--tensor-split", "1,a"), "'a' is not a number"),
        (("--tensor-split", "1,1,1"), "3 proportions for 2 GPU(s)"),
        (("--split-mode", "row"), "split mode row"),
        (("--split-mode", "none", "--main-gpu", "2"), "main GPU 2 is not one of the 2 GPUs"),
        (("--gpu", "none"), "--gpu none cannot be given with other cards"),
    ],
)
def test_plan_cli_bad_split_input_is_one_line(tmp_path: Path, extra: tuple[str, ...], words: str) -> None:
    model = write_shape(tmp_path / "m.gguf", SHAPES["qwen35-27b"])
    result = tightfit("plan", str(model), "--gpu", "t4", "--gpu", "t4", *extra)
    assert result.returncode == 2 or result.returncode == 1, result
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith("tightfit: error:") and words in line
