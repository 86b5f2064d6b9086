"""Time reading a GGUF header with a 262144-token vocabulary (Gemma-3's, a ~6.7 MB header like a
27B model's), whole and cut off inside the header as a half-copied file is.

The reader skips the vocabulary without building Python objects for it, so either should take a small
part of 0.5 s, the most one file should cost a scan. Prints the best of five in ms, the ratio to
that budget and the peak allocation. Run: ``.venv/bin/python bench/header_speed.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core.gguf_reader import GGUFError, read_header  # noqa: E402
from tests.gguf_factory import write_llama_like  # noqa: E402

BUDGET_MS = 500.0
RUNS = 5


def timed(read: Callable[[], object]) -> tuple[float, int]:
    """Best wall time in ms over RUNS, and the peak allocation of one more run."""
    best = float("inf")
    for _ in range(RUNS):
        t0 = time.perf_counter()
        read()
        best = min(best, (time.perf_counter() - t0) * 1000)
    tracemalloc.start()
    read()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return best, peak


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_llama_like(Path(tmp) / "big.gguf", n_vocab=262144, n_layer=62, n_embd=512, n_ff=1024)
        header = read_header(path)
        cut = Path(tmp) / "cut.gguf"
        cut.write_bytes(path.read_bytes()[: header.header_size - 5])

        def read_cut() -> None:
            try:
                read_header(cut)
            except GGUFError:
                return
            raise SystemExit("the cut header was read without an error")

        print(f"262144-token vocabulary, {header.header_size / 2**20:.1f} MiB header, {len(header.tensors)} tensors")
        for label, read in (("whole header", lambda: read_header(path)), ("cut inside the header", read_cut)):
            ms, peak = timed(read)
            print(
                f"{label:22s} {ms:7.1f} ms  ({ms / BUDGET_MS:4.2f} of the {BUDGET_MS:g} ms budget; "
                f"peak allocation {peak / 2**20:.1f} MiB)"
            )


if __name__ == "__main__":
    main()
