"""Time plan() the way a slider drag calls it, and auto_fit() the way the Auto-fit button and the quant table do.

plan(): ms per call against the 2 ms budget, same header and changing settings, on a V100 (fitting,
partly offloaded and not fitting, so the suggestion search is timed too) and CPU-only. auto_fit():
ms per call against 100 ms, with the context free and pinned. Shapes: a 64-block Qwen3.5-27B, an
80-block Llama-70B, a 48-block Qwen3-30B-A3B (the experts search) and a 512-block model, the most
blocks llama.cpp loads. Run: ``.venv/bin/python bench/planner_speed.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core.cards import find_card  # noqa: E402
from gui.core.gguf_reader import GGUFHeader, read_model  # noqa: E402
from gui.core.params import LoadSettings  # noqa: E402
from gui.core.planner import Device, auto_fit, model_shape, plan  # noqa: E402
from tests.model_shapes import SHAPES, write_shape  # noqa: E402

PLAN_BUDGET_MS = 2.0
FIT_BUDGET_MS = 100.0
CALLS = 2000
FITS = 20

# A 512-block model with a 1B's blocks: the per-block loops at their longest.
BLOCKS_512 = replace(SHAPES["llama-1b"], name="512-block", n_layer=512)
SHAPE_NAMES = ("qwen35-27b", "llama-70b", "qwen3moe-30b", "512-block")


def time_plan(header: GGUFHeader, devices: list[Device], n_layer: int) -> tuple[float, int]:
    ctxs = [256 * (1 + i % 128) for i in range(CALLS)]  # a slider sweeping 256..32768
    layers = [n_layer * (60 + i % 41) // 100 for i in range(CALLS)]  # and one sweeping 60-100% of the layers
    t0 = time.perf_counter()
    fits = 0
    for ctx, ngl in zip(ctxs, layers, strict=True):
        fits += plan(header, LoadSettings(n_ctx=ctx, n_gpu_layers=ngl), devices).fits
    return (time.perf_counter() - t0) * 1000 / CALLS, fits


def time_fit(header: GGUFHeader, devices: list[Device], pinned: frozenset[str]) -> float:
    t0 = time.perf_counter()
    for i in range(FITS):
        auto_fit(header, LoadSettings(n_ctx=4096 + 256 * i), devices, pinned=pinned)
    return (time.perf_counter() - t0) * 1000 / FITS


def main() -> None:
    card = find_card("v100-16gb")
    v100 = Device(card.name, card.vram_mib, card.vram_mib, card.bandwidth_gbs, card.sm_count)
    with tempfile.TemporaryDirectory() as tmp:
        for name in SHAPE_NAMES:
            shape = BLOCKS_512 if name == "512-block" else SHAPES[name]
            header = read_model(write_shape(Path(tmp) / f"{name}.gguf", shape))
            t0 = time.perf_counter()
            n_layer = model_shape(header).n_layer
            derive_ms = (time.perf_counter() - t0) * 1000
            for label, devices in (("V100", [v100]), ("CPU-only", [])):
                ms, fits = time_plan(header, devices, n_layer)
                print(
                    f"{name:12s} plan     {label:8s} {ms:7.3f} ms/call ({ms / PLAN_BUDGET_MS:4.2f} of the "
                    f"{PLAN_BUDGET_MS:g} ms budget; {fits}/{CALLS} fit; the shape took {derive_ms:.1f} ms once)"
                )
            for label, pinned in (("ctx free", frozenset()), ("ctx pinned", frozenset({"n_ctx"}))):
                ms = time_fit(header, [v100], pinned)
                print(
                    f"{name:12s} auto_fit {label:10s} {ms:7.2f} ms/call ({ms / FIT_BUDGET_MS:4.2f} of the "
                    f"{FIT_BUDGET_MS:g} ms budget)"
                )


if __name__ == "__main__":
    main()
