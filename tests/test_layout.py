"""The real window, at a usual size and on a small screen at scale 2, has nothing a user cannot read or reach:
no text cut off by its widget, the plan's bar and verdict in view, every button inside the window. Each
size runs in a process of its own (the scale factor is fixed when Qt starts); the screenshots are kept in
build/layout/ to look at."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.model_shapes import QWEN35_27B_Q3_K_S, QWEN35_27B_Q4_K_M, SHAPES, write_shape

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "build" / "layout"


@pytest.fixture(scope="module", params=["dense", "moe"])
def library(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two quants of a dense model, or a mixture-of-experts model (its expert settings show)."""
    folder = tmp_path_factory.mktemp(f"layout-{request.param}")
    if request.param == "dense":
        write_shape(folder / "Qwen3.5-27B-Q4_K_M.gguf", QWEN35_27B_Q4_K_M)
        write_shape(folder / "Qwen3.5-27B-Q3_K_S.gguf", QWEN35_27B_Q3_K_S)
    else:
        write_shape(folder / "gpt-oss-20b-MXFP4.gguf", SHAPES["gpt-oss-20b"])
    return folder


@pytest.mark.parametrize(
    ("scale", "width", "height"),
    [(1, 1024, 700), (2, 800, 500)],  # a laptop; a 1600x1000 screen at 200 %
    ids=["1024x700", "800x500@2x"],
)
def test_nothing_is_cut_off_or_out_of_reach(library: Path, tmp_path: Path, scale: int, width: int, height: int) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    png = SHOTS / f"window-{library.name.split('-')[1]}-{width}x{height}@{scale}x.png"
    report = tmp_path / "report.json"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QT_SCALE_FACTOR=str(scale))
    done = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "layout_check.py"), str(library), str(width), str(height), str(png),
         str(report)],
        env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(report.read_text())
    assert found["size"] == [width, height], f"the window will not shrink to {width}x{height}: {found['minimum']}"
    assert found["clipped"] == []
    assert found["bar_in_view"] and found["verdict_in_view"]
    assert found["buttons_outside"] == []
    assert png.stat().st_size > 10_000  # a real picture of the window
