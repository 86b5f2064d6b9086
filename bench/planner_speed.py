"""Time plan() the way a slider drag calls it: same header, changing settings.

Prints ms per call and the ratio to the 2 ms budget for a 64-block Qwen3.5-27B shape and an
80-block Llama-70B shape, on a V100 (fitting and not fitting, so the suggestion search is timed
too) and CPU-only. Run: ``.venv/bin/python bench/planner_speed.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core.cards import find_card  # noqa: E402
from gui.core.gguf_reader import read_model  # noqa: E402
from gui.core.params import LoadSettings  # noqa: E402
from gui.core.planner import Device, model_shape, plan  # noqa: E402
from tests.model_shapes import SHAPES, write_shape  # noqa: E402

BUDGET_MS = 2.0
CALLS = 2000


def main() -> None:
    card = find_card("v100-16gb")
    v100 = Device(card.name, card.vram_mib, card.vram_mib, card.bandwidth_gbs, card.sm_count)
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("qwen35-27b", "llama-70b"):
            header = read_model(write_shape(Path(tmp) / f"{name}.gguf", SHAPES[name]))
            t0 = time.perf_counter()
            model_shape(header)
            derive_ms = (time.perf_counter() - t0) * 1000
            for label, devices in (("V100", [v100]), ("CPU-only", [])):
                ctxs = [256 * (1 + i % 128) for i in range(CALLS)]  # a slider sweeping 256..32768
                t0 = time.perf_counter()
                fits = 0
                for ctx in ctxs:
                    fits += plan(header, LoadSettings(n_ctx=ctx, n_gpu_layers=40 + ctx % 25), devices).fits
                ms = (time.perf_counter() - t0) * 1000 / CALLS
                print(
                    f"{name:11s} {label:8s} {ms:6.3f} ms/call  ({ms / BUDGET_MS:4.2f} of the {BUDGET_MS:g} ms budget; "
                    f"{fits}/{CALLS} fit; first call derived the shape in {derive_ms:.1f} ms)"
                )


if __name__ == "__main__":
    main()
