"""The planner against the installed llama.cpp's own dry run, over header-only model files.

The dry run (no_alloc, LLAMA_LOAD_MODE_NONE) reads no weights and allocates nothing, so it works on
sparse files and takes tens of milliseconds. This build is CPU-only: every buffer is on the host,
which checks KV, recurrent state, weights, output and the CPU compute buffer exactly as llama.cpp
sizes them. KV, recurrent and output must agree to the logged 0.01 MiB, weights to the byte; the
compute buffer is a calibrated model and must land within 10%. Every row runs with the engine's
default of one output per slot unless it names n_outputs_max (0 is llama.cpp's own default, a
whole batch).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from gui.core import protocol as p
from gui.core.gguf_reader import read_model
from gui.core.params import LoadSettings
from gui.core.planner import model_shape, plan
from gui.services.engine_client import SyncEngine
from tests.model_shapes import SHAPES, write_shape

pytestmark = pytest.mark.engine

# Each family with the settings that exercise its peculiarities. The 27B-class shapes carry a
# 248k/262k vocabulary, so they get fewer rows (each dry run builds the full vocabulary).
_COMMON: list[dict[str, object]] = [
    {"n_ctx": 8192},
    {"n_ctx": 4096, "n_ubatch": 128, "flash_attn": "off"},
    {"n_ctx": 16384, "n_batch": 1024, "n_ubatch": 1024, "flash_attn": "on", "n_parallel": 2},
    {"n_ctx": 6000, "cache_type_k": "q8_0", "cache_type_v": "q8_0", "flash_attn": "on"},
    {"n_ctx": 5000, "cache_type_k": "q4_0", "cache_type_v": "q5_1", "flash_attn": "on", "n_parallel": 3},
    {"n_ctx": 3000, "cache_type_k": "bf16", "cache_type_v": "f32", "flash_attn": "off", "n_ubatch": 256},
    {
        "n_ctx": 10000,
        "swa_full": True,
        "n_ubatch": 256,
        "n_parallel": 4,
        "cache_type_k": "iq4_nl",
        "cache_type_v": "q4_1",
    },
    # Outputs reserved: llama.cpp's whole batch, and a few per slot.
    {"n_ctx": 8192, "n_outputs_max": 0},
    {"n_ctx": 4096, "n_ubatch": 256, "n_parallel": 4, "n_outputs_max": 64, "flash_attn": "off"},
    # One KV cache shared by every slot.
    {"n_ctx": 8192, "n_parallel": 4, "kv_unified": True},
    {"n_ctx": 16384, "n_ubatch": 256, "n_parallel": 2, "kv_unified": True, "flash_attn": "off", "n_outputs_max": 8},
]
_BIG: list[dict[str, object]] = [
    {"n_ctx": 8192},
    {"n_ctx": 16384, "flash_attn": "off", "n_ubatch": 256},
    {"n_ctx": 32768, "cache_type_k": "q8_0", "cache_type_v": "q8_0", "n_parallel": 2},
    {"n_ctx": 8192, "n_outputs_max": 0},
    {"n_ctx": 8192, "n_parallel": 4, "kv_unified": True, "n_outputs_max": 16},
]
CASES = [
    (name, kw)
    for name in (
        "llama-1b",
        "qwen2-0.5b",
        "qwen3-4b",
        "qwen3moe-30b",
        "mixtral-8x7b",
        "qwen35-2b",
        "gemma2-2b",
        "gemma3-4b",
    )
    for kw in _COMMON
]
CASES += [(name, kw) for name in ("qwen35-27b", "gemma3-27b", "gpt-oss-20b") for kw in _BIG]
# Long context, 64k-128k, with K and V caches of different types: the masks grow with the context while
# the logits do not, so these check which of them the peak holds. A whole batch of outputs
# (n_outputs_max 0) makes the logits the peak.
_LONG: list[dict[str, object]] = [
    {"n_ctx": 65536, "flash_attn": "on", "cache_type_k": "q8_0", "cache_type_v": "f16"},
    {"n_ctx": 131072, "flash_attn": "on", "cache_type_k": "q8_0", "cache_type_v": "f16"},
    {"n_ctx": 65536, "flash_attn": "on", "cache_type_k": "q8_0", "cache_type_v": "f16", "n_outputs_max": 0},
    {"n_ctx": 131072, "flash_attn": "on", "cache_type_k": "q8_0", "cache_type_v": "f16", "n_outputs_max": 0},
    {
        "n_ctx": 131072,
        "flash_attn": "on",
        "cache_type_k": "f16",
        "cache_type_v": "q4_0",
        "n_batch": 1024,
        "n_ubatch": 1024,
    },
    {"n_ctx": 131072, "flash_attn": "on", "cache_type_k": "q4_0", "cache_type_v": "q8_0", "n_parallel": 2},
    {
        "n_ctx": 98304,
        "flash_attn": "on",
        "cache_type_k": "q8_0",
        "cache_type_v": "f16",
        "n_parallel": 4,
        "kv_unified": True,
    },
    {"n_ctx": 65536, "flash_attn": "off", "cache_type_k": "q8_0", "n_ubatch": 256},
]
CASES += [("llama31-8b", kw) for kw in _LONG]
# A hybrid recurrent model whose logits (248k vocabulary) go above the masks' freed block.
CASES += [("qwen35-27b", {"n_ctx": 131072, "n_outputs_max": 0})]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("shapes")
    names = {name for name, _ in CASES}
    return {name: write_shape(root / f"{name}.gguf", SHAPES[name]) for name in sorted(names)}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SyncEngine]:
    with SyncEngine(log_dir=tmp_path_factory.mktemp("logs")) as eng:
        yield eng


def dry_run(engine: SyncEngine, path: Path, settings: LoadSettings) -> p.DryRunResult:
    engine.client.dry_run(path, settings)
    result = engine.expect(p.DryRunResult, 120)
    assert result.ok, f"llama.cpp refused {path.name} with {settings}: {result.error}\n" + "\n".join(result.log)
    return result


def _id(case: tuple[str, dict[str, object]]) -> str:
    name, kw = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_planner_matches_the_dry_run(
    case: tuple[str, dict[str, object]], files: dict[str, Path], engine: SyncEngine
) -> None:
    name, kw = case
    settings = LoadSettings(**kw).validated()  # type: ignore[arg-type]
    header = read_model(files[name])
    r = dry_run(engine, files[name], settings)
    got = plan(header, settings, [])

    assert got.weights_bytes == r.weights_bytes
    assert got.kv_mib == pytest.approx(r.kv_mib, abs=0.01)
    assert got.recurrent_mib == pytest.approx(r.recurrent_mib, abs=0.01)
    assert got.host.output_mib == pytest.approx(r.output_mib["CPU"], abs=0.01)
    cpu = r.compute_mib["CPU"]
    assert got.host.compute_mib == pytest.approx(cpu, rel=0.10), (
        f"compute {got.host.compute_mib:.2f} MiB vs llama.cpp {cpu:.2f} MiB"
    )
    # CPU-only: nothing is placed on a device.
    assert got.devices == ()
    assert got.host.weights_mib * (1 << 20) == pytest.approx(r.weights_bytes)


# On this CPU-only build the experts stay in host memory either way, so the sizes must not move; what
# the log shows is which tensors llama.cpp moved, and they must be the ones the planner moves.
EXPERTS_ON_CPU = [
    ("qwen3moe-30b", {"n_cpu_moe": 12}),
    ("qwen3moe-30b", {"n_cpu_moe": 48}),
    ("gpt-oss-20b", {"cpu_moe": True}),
    ("gpt-oss-20b", {"n_cpu_moe": 1}),
]
_OVERRIDDEN = re.compile(r"tensor (\S+) \(.*\) buffer type overridden to (\S+)")


@pytest.mark.parametrize("case", EXPERTS_ON_CPU, ids=[_id(c) for c in EXPERTS_ON_CPU])
def test_experts_on_the_cpu_are_the_tensors_llama_cpp_moves(
    case: tuple[str, dict[str, object]], files: dict[str, Path], engine: SyncEngine
) -> None:
    name, moe = case
    base = LoadSettings(n_ctx=4096)
    settings = base.with_values(**moe).validated()
    log = engine.client.log_path
    assert log is not None
    before = log.stat().st_size
    r = dry_run(engine, files[name], settings)
    with log.open("rb") as fh:
        fh.seek(before)
        moved = {m.group(1) for m in _OVERRIDDEN.finditer(fh.read().decode("utf-8", "replace"))}
    plain = dry_run(engine, files[name], base)
    assert (r.weights_bytes, r.kv_mib, r.compute_mib, r.output_mib) == (
        plain.weights_bytes,
        plain.kv_mib,
        plain.compute_mib,
        plain.output_mib,
    )
    header = read_model(files[name])
    shape = model_shape(header)
    k = settings.cpu_expert_layers(shape.n_layer)
    planned = {
        t.name
        for t in header.tensors
        if (m := re.match(r"blk\.(\d+)\.(.+)", t.name)) and int(m.group(1)) < k and "_exps." in m.group(2)
    }
    assert moved == planned
    assert sum(t.nbytes for t in header.tensors if t.name in planned) == sum(shape.expert_bytes[:k])


def test_the_demo_model_matches_its_dry_run(demo_model: Path, engine: SyncEngine) -> None:
    settings = LoadSettings(n_ctx=8192)
    r = dry_run(engine, demo_model, settings)
    got = plan(read_model(demo_model), settings, [])
    assert r.kv_mib == 180.0
    assert got.kv_mib == pytest.approx(180.0, abs=0.01)
    assert got.weights_bytes == r.weights_bytes
    assert got.host.compute_mib == pytest.approx(r.compute_mib["CPU"], rel=0.10)
