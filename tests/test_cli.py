"""The `tightfit` command as users and scripts call it: a real subprocess each time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gui import __version__

ROOT = Path(__file__).resolve().parent.parent


def tightfit(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gui", *args], capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT
    )


def bare_env() -> dict[str, str]:
    """No display, no Qt platform choice, and no NVIDIA driver on this machine either."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    return env


def test_version() -> None:
    result = tightfit("--version", env=bare_env())
    assert result.returncode == 0
    assert result.stdout.strip() == f"tightfit {__version__}"


def test_help_works_without_display_and_loads_no_heavy_modules() -> None:
    result = tightfit("--help", env=bare_env())
    assert result.returncode == 0
    assert "chat" in result.stdout and "--ngl" in result.stdout and "--screenshot" in result.stdout
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys, gui, gui.cli, gui.core.params, gui.core.protocol, gui.services.engine_client;"
         "heavy = [m for m in ('PySide6', 'llama_cpp', 'pynvml', 'pyqtgraph') if m in sys.modules];"
         "print(','.join(heavy))"],
        capture_output=True, text=True, env=bare_env(), cwd=ROOT,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == ""


@pytest.mark.engine
def test_chat_json_schema(demo_model: Path) -> None:
    result = tightfit(
        "chat", str(demo_model), "--prompt", "Say hello.", "--max-tokens", "16", "--threads", "2",
        "--ctx", "1024", "--temperature", "0", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    numeric = ("ttft_ms", "prompt_tok_s", "gen_tok_s", "engine_decode_tok_s")
    for key in numeric:
        assert isinstance(data[key], float) and data[key] > 0, key
    for key in ("n_prompt", "n_gen", "n_ctx"):
        assert isinstance(data[key], int) and data[key] > 0, key
    assert isinstance(data["text"], str) and data["text"].strip()
    assert 1 <= data["n_gen"] <= 16
    assert data["n_ctx"] == 1024
    assert data["settings"]["n_threads"] == 2 and data["settings"]["n_ctx"] == 1024
    assert data["engine"]["backend"] == "CPU" and data["engine"]["gpu_offload"] is False
    assert data["finish_reason"] in ("stop", "length")
    assert data["chat_format"] == "model" and data["chat_format_reason"] == ""  # the file's own template


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["chat", "models/absent.gguf", "--prompt", "hi", "--json"], "no such model file: models/absent.gguf"),
        (["chat", "pyproject.toml", "--prompt", "hi"], "pyproject.toml: not a GGUF file"),
        (["chat", "pyproject.toml", "--prompt", "hi", "--ubatch", "1024", "--batch", "512"],
         "Micro-batch (1024) cannot exceed batch (512)"),
        (["chat", "pyproject.toml", "--prompt", "hi", "--ctx", "12"], "Context must be between 256"),
    ],
)  # fmt: skip
def test_bad_input_is_one_clear_line(args: list[str], message: str) -> None:
    result = tightfit(*args, env=bare_env())
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert message in lines[0]


@pytest.mark.engine
def test_screenshot_renders_the_window(tmp_path: Path, demo_model: Path) -> None:
    from PySide6.QtGui import QImage

    shot = tmp_path / "shot.png"
    result = tightfit("--models", str(demo_model.parent), "--screenshot", str(shot), env=bare_env())
    assert result.returncode == 0, result.stderr
    image = QImage(str(shot))
    assert not image.isNull() and image.width() >= 800 and image.height() >= 500
    # A real rendering has many colours (text, widgets), not a blank canvas.
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 20
