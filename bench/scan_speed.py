"""Time a library scan of 200 header-only GGUF files: cold (every header read) and warm (stat only).

The files are sparse, written with gguf-py: 50 small llama/qwen-shaped models of varied depth,
width and vocabulary, four quants each, a few of them split in two parts. Prints seconds and the
ratio to the 2 s budget. Run: ``.venv/bin/python bench/scan_speed.py``.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.services.library import Library  # noqa: E402
from tests.gguf_factory import write_llama_like  # noqa: E402

BUDGET_S = 2.0
N_MODELS = 50
QUANTS = (("Q8_0", "Q8_0"), ("Q6_K", "Q6_K"), ("Q4_K", "Q4_K_M"), ("Q3_K", "Q3_K_M"))


def write_files(folder: Path) -> int:
    rng = random.Random(7)
    count = 0
    for m in range(N_MODELS):
        n_layer = rng.choice((2, 4, 8, 16, 24, 32))
        n_embd = rng.choice((256, 512, 768, 1024))
        n_vocab = rng.choice((512, 2048, 8192, 32000))
        arch = rng.choice(("llama", "qwen2", "qwen3"))
        split = m % 10 == 9 and n_layer >= 4
        for quant, label in QUANTS:
            write_llama_like(
                folder / f"Bench{m:02d}-{n_layer}L-{label}.gguf",
                arch=arch,
                name=f"Bench Model {m}",
                n_layer=n_layer,
                n_embd=n_embd,
                n_head=n_embd // 64,
                n_head_kv=max(1, n_embd // 256),
                n_ff=n_embd * 3,
                n_vocab=n_vocab,
                quant=quant,
                n_parts=2 if split else 1,
            )
            count += 2 if split else 1
    return count


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = time.perf_counter()
        n_files = write_files(folder)
        took = time.perf_counter() - t0
        print(f"wrote {N_MODELS * len(QUANTS)} model files ({n_files} with split parts) in {took:.1f} s")

        lib = Library([folder])
        t0 = time.perf_counter()
        change = lib.scan_now()
        cold = time.perf_counter() - t0
        assert not change.errors, change.errors[:3]
        t0 = time.perf_counter()
        again = lib.scan_now()
        warm = time.perf_counter() - t0
        assert again.empty
        print(f"groups: {len(change.groups)}, variants: {sum(len(g.variants) for g in change.groups)}")
        print(f"cold scan: {cold:.3f} s  ({cold / BUDGET_S:.2f} of the {BUDGET_S:.0f} s budget)")
        print(f"warm rescan: {warm:.4f} s  ({warm / BUDGET_S:.4f} of the budget; {cold / max(warm, 1e-9):.0f}x faster)")


if __name__ == "__main__":
    main()
