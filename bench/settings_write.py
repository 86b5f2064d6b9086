"""A spin box stepped 200 times, each step kept: the caller's time and the file writes, with the settings store
writing through (each change on disk before ``write`` returns, as the CLI does) and writing behind (the window's:
one background thread, coalesced), side by side on the same disk. Run: ``.venv/bin/python bench/settings_write.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core.preferences import INTERVAL_S  # noqa: E402
from gui.services.settings_store import SettingsStore  # noqa: E402

STEPS = 200


def run(folder: Path, behind: bool) -> tuple[float, int]:
    store = SettingsStore(folder / f"settings-{'behind' if behind else 'through'}.json", write_behind=behind)
    writes = 0
    write = store._write  # the atomic write + fsync the store does, counted

    def counted(text: str) -> None:
        nonlocal writes
        writes += 1
        write(text)

    store._write = counted  # type: ignore[method-assign]
    low, high = INTERVAL_S.spec.minimum, INTERVAL_S.spec.maximum  # type: ignore[union-attr]
    start = time.perf_counter()
    for step in range(STEPS):
        store.write(INTERVAL_S, low + step % max(1, int(high - low)))
    caller_s = time.perf_counter() - start
    store.flush()
    return caller_s, writes


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        through_s, through_writes = run(Path(folder), behind=False)
        behind_s, behind_writes = run(Path(folder), behind=True)
    print(f"{STEPS} steps kept   caller ms   file writes")
    print(f"write-through   {through_s * 1000:9.1f}   {through_writes:11d}")
    print(f"write-behind    {behind_s * 1000:9.1f}   {behind_writes:11d}")
    print(f"caller time ratio behind/through: {behind_s / through_s:.4f}")


if __name__ == "__main__":
    main()
