"""Tuning cards: written for the demo model, read back, and refused in one line when they are not cards,
are hostile, or are for another file."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from gui.core.params import LoadSettings
from gui.core.tuning_card import (
    CARD_FORMAT,
    MAX_CARD_BYTES,
    CardError,
    CardFacts,
    CardMismatch,
    TuningCard,
    card_to_json,
    parse_card,
)
from gui.core.words import Words
from gui.services.tuning_card import HashCancelled, make_card, open_card, read_card, sha256_file, write_card

ROOT = Path(__file__).resolve().parent.parent
TUNED = LoadSettings(n_gpu_layers=20, n_ctx=8192, n_batch=1024, n_ubatch=256, n_threads=6, cache_type_k="q8_0",
                     cache_type_v="q8_0", flash_attn="on", use_mmap=False)  # fmt: skip


def real_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def good_card(**changes: object) -> dict[str, object]:
    card: dict[str, object] = {
        "format": CARD_FORMAT,
        "version": 1,
        "model_file": "a.gguf",
        "model_sha256": "ab" * 32,
        "settings": TUNED.to_dict(),
    }
    card.update(changes)
    return card


def test_a_card_for_the_demo_model_round_trips_through_a_file(demo_model: Path, tmp_path: Path) -> None:
    facts = CardFacts("Tesla V100-PCIE-16GB", "550.163.01", "llama-cpp-python 0.3.36", 41.5, 1200.0, 812.0, 190.5)
    card = make_card(demo_model, TUNED, facts)
    assert card.model_sha256 == real_sha256(demo_model)
    assert card.model_file == demo_model.name and card.model_bytes == demo_model.stat().st_size
    path = write_card(tmp_path / "smol.tuning.json", card)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["format"] == CARD_FORMAT and data["version"] == 1 and data["settings"]["n_ctx"] == 8192
    assert read_card(path) == card
    assert read_card(path).facts == facts
    opened = open_card(path, demo_model)
    assert opened.matches and opened.settings == TUNED
    assert not list(tmp_path.glob(".*partial"))


def test_a_card_without_measurements_leaves_them_out(demo_model: Path) -> None:
    card = make_card(demo_model, LoadSettings())
    data = json.loads(card_to_json(card))
    assert set(data) == {"format", "version", "model_file", "model_sha256", "settings", "model_bytes"}
    assert parse_card(card_to_json(card)) == card


def test_a_card_for_another_file_says_so_and_applies_only_when_asked(demo_model: Path, tmp_path: Path) -> None:
    card = TuningCard("SmolLM2-135M-Instruct.Q4_1.gguf", "0" * 64, TUNED, demo_model.stat().st_size)
    path = write_card(tmp_path / "other.json", card)
    with pytest.raises(CardMismatch) as caught:
        open_card(path, demo_model)
    message = str(caught.value)
    assert "SHA-256 does not match" in message and real_sha256(demo_model)[:16] in message and "\n" not in message
    opened = open_card(path, demo_model, apply_anyway=True)
    assert not opened.matches and opened.settings == TUNED and "anyway" in opened.message
    # A different size is a different file: said without reading the model.
    sized = write_card(tmp_path / "sized.json", TuningCard("x.gguf", real_sha256(demo_model), TUNED, 12345))
    with pytest.raises(CardMismatch, match="cannot match"):
        open_card(sized, demo_model)


HOSTILE: list[tuple[str, bytes, str]] = [
    ("not json", b"settings: fast", "not JSON"),
    ("not utf-8", b"\xff\xfe{}", "not UTF-8"),
    ("a list", b"[1, 2]", "not an object"),
    ("another format", json.dumps(good_card(format="kcpps")).encode(), "format"),
    ("newer version", json.dumps(good_card(version=2)).encode(), "newer Tightfit"),
    ("version as text", json.dumps(good_card(version="1")).encode(), "version"),
    ("deeply nested", b'{"settings": ' + b"[" * 200_000 + b"]" * 200_000 + b"}", "nested too deeply"),
    ("nested settings", json.dumps(good_card(settings={"n_ctx": [[[[4096]]]]})).encode(), "Context"),
    ("huge integer", json.dumps(good_card(settings={"n_ctx": 10**4000})).encode(), "Context"),
    ("integer past Python's limit", b'{"version": 1' + b"9" * 5000 + b"}", "not JSON"),
    ("huge float", json.dumps(good_card(gen_tok_s=1e308)).encode(), "gen_tok_s"),
    ("infinity", json.dumps(good_card()).replace('"version": 1', '"version": Infinity').encode(), "Infinity"),
    ("wrong type", json.dumps(good_card(settings={"use_mmap": "yes"})).encode(), "true or false"),
    ("bool for a number", json.dumps(good_card(settings={"n_threads": True})).encode(), "whole number"),
    ("bad choice", json.dumps(good_card(settings={"cache_type_k": "q9" * 50_000})).encode(), "K cache type"),
    ("rules between fields", json.dumps(good_card(settings={"n_batch": 256, "n_ubatch": 512})).encode(), "batch"),
    ("short sha", json.dumps(good_card(model_sha256="abc")).encode(), "model_sha256"),
    ("sha as number", json.dumps(good_card(model_sha256=12)).encode(), "model_sha256"),
    ("a path for a name", json.dumps(good_card(model_file="../../etc/passwd")).encode(), "file name"),
    ("a control character", json.dumps(good_card(card_name="V100\x1b[2J")).encode(), "control character"),
    ("long text", json.dumps(good_card(driver="5" * 10_000)).encode(), "longer than"),
    ("negative size", json.dumps(good_card(model_bytes=-1)).encode(), "model_bytes"),
    ("settings a list", json.dumps(good_card(settings=[1])).encode(), "settings must be an object"),
]


@pytest.mark.parametrize(("data", "expected"), [(d, e) for _, d, e in HOSTILE], ids=[n for n, _, _ in HOSTILE])
def test_hostile_cards_are_refused_in_one_clear_line(data: bytes, expected: str, tmp_path: Path) -> None:
    path = tmp_path / "hostile.json"
    path.write_bytes(data)
    with pytest.raises(CardError) as caught:
        read_card(path)
    message = str(caught.value)
    assert expected in message
    assert "\n" not in message and len(message) < 300
    assert message.startswith("hostile.json: ")


def test_a_file_over_one_mib_is_refused_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_bytes(b" " * (2 << 20) + json.dumps(good_card()).encode())  # 2 MiB of padding, then a card
    with pytest.raises(CardError, match="larger than 1024 KiB"):
        read_card(path)
    with pytest.raises(CardError, match="larger than"):
        parse_card(b" " * (MAX_CARD_BYTES + 1))


def test_a_missing_card_or_model_is_one_line(demo_model: Path, tmp_path: Path) -> None:
    with pytest.raises(CardError, match="cannot be read"):
        read_card(tmp_path / "none.json")
    path = write_card(tmp_path / "c.json", TuningCard("a.gguf", "ab" * 32, TUNED))
    with pytest.raises(CardError, match="cannot be read"):
        open_card(path, tmp_path / "missing.gguf")


def test_hashing_is_chunked_and_stops_when_asked(demo_model: Path) -> None:
    seen: list[tuple[int, int]] = []
    digest = sha256_file(demo_model, progress=lambda done, total: seen.append((done, total)), chunk_bytes=1 << 20)
    assert digest == real_sha256(demo_model)
    size = demo_model.stat().st_size
    assert len(seen) == -(-size // (1 << 20)) and seen[-1] == (size, size)  # one report per MiB read
    cancel = threading.Event()

    def stop_after_two(done: int, _total: int) -> None:
        if done >= 2 << 20:
            cancel.set()

    with pytest.raises(HashCancelled):
        sha256_file(demo_model, cancel, progress=stop_after_two)


def tightfit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui", *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_cli_writes_a_card_and_applies_it_to_the_matching_model_only(demo_model: Path, tmp_path: Path) -> None:
    card_path = tmp_path / "smol.json"
    result = tightfit("export", str(demo_model), "--format", "card", "--ctx", "2048", "--threads", "3",
                      "-o", str(card_path))  # fmt: skip
    assert result.returncode == 0, result.stderr
    card = read_card(card_path)
    assert card.model_sha256 == real_sha256(demo_model) and card.settings.n_ctx == 2048
    assert card.engine_build is not None and card.engine_build.startswith("llama-cpp-python ")
    result = tightfit("export", str(demo_model), "--card", str(card_path), "--format", "llama-server", "--no-numa")
    assert result.returncode == 0, result.stderr
    assert "--ctx-size 2048 " in result.stdout and "--threads 3 " in result.stdout and "applied" in result.stderr
    # The same card, edited to another file's hash: refused, then applied when asked.
    data = json.loads(card_path.read_text())
    data["model_sha256"] = "f" * 64
    card_path.write_text(json.dumps(data))
    result = tightfit("export", str(demo_model), "--card", str(card_path), "--format", "llama-server")
    assert result.returncode == 2 and "SHA-256 does not match" in result.stderr and "--apply-anyway" in result.stderr
    assert result.stdout == ""
    result = tightfit("export", str(demo_model), "--card", str(card_path), "--apply-anyway", "--format", "llama-cli",
                      "--threads", "5")  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "--ctx-size 2048 " in result.stdout and "--threads 5 " in result.stdout  # the flag given wins


def test_settings_that_send_data_off_this_machine_are_kept_apart() -> None:
    """Every text setting is either an address of another machine or one known to stay here: a new one must be
    classed (an address in a card is applied only once the user says yes)."""
    from dataclasses import fields as dataclass_fields

    from gui.core.params import LoadSettings
    from gui.core.tuning_card import OFF_MACHINE_SETTINGS, off_machine, without_off_machine

    here_only = {"cache_type_k", "cache_type_v", "flash_attn", "split_mode", "tensor_split"}
    texts = {f.name for f in dataclass_fields(LoadSettings) if isinstance(getattr(LoadSettings(), f.name), str)}
    assert texts == here_only | set(OFF_MACHINE_SETTINGS)
    current = LoadSettings(n_ctx=512, rpc_servers="10.0.0.1:50052")
    card = LoadSettings(n_ctx=4096, rpc_servers="10.0.0.9:50052,gpubox:50052")
    assert off_machine(card, current) == {"rpc_servers": "10.0.0.9:50052,gpubox:50052"}
    assert off_machine(card, card) == {} and off_machine(LoadSettings(), current) == {}
    kept = without_off_machine(card, current)
    assert kept.n_ctx == 4096 and kept.rpc_servers == "10.0.0.1:50052"


def _bounded(call, fifo: Path | None = None, timeout_s: float = 10.0) -> BaseException | None:
    """What ``call()`` raised (None when it returned), failing the test if it is still running after
    ``timeout_s``; a reader stuck on ``fifo`` is then let go (a writer opens it), so the suite never hangs."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
        except BaseException as exc:
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        if fifo is not None:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(timeout_s)
        pytest.fail(f"still waiting after {timeout_s} s")
    return outcome[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_refused_as_a_card_and_as_a_model_without_waiting_on_it(
    demo_model: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "card.json"
    os.mkfifo(fifo)
    error = _bounded(lambda: read_card(fifo), fifo)
    assert isinstance(error, CardError)
    assert str(error) == "card.json is not a tuning card: it is a named pipe, not a regular file"
    assert isinstance(error.args[0], Words) and error.args[0].fields["kind"] == "a named pipe"
    card = write_card(tmp_path / "c.json", TuningCard("a.gguf", "ab" * 32, TUNED))
    error = _bounded(lambda: open_card(card, fifo), fifo)
    assert isinstance(error, CardError) and str(error) == "card.json: cannot be read (a named pipe)"
    error = _bounded(lambda: sha256_file(fifo), fifo)
    assert isinstance(error, OSError) and str(error) == "card.json is a named pipe, not a regular file"
    error = _bounded(lambda: make_card(fifo, TUNED), fifo)
    assert isinstance(error, OSError) and "named pipe" in str(error)


def test_a_folder_or_a_device_is_refused_as_a_card_in_one_line(tmp_path: Path) -> None:
    folder = tmp_path / "card.json"
    folder.mkdir()
    error = _bounded(lambda: read_card(folder))
    assert (
        isinstance(error, CardError)
        and str(error) == "card.json is not a tuning card: it is a folder, not a regular file"
    )
    if Path("/dev/zero").exists():
        error = _bounded(lambda: read_card("/dev/zero"))
        assert isinstance(error, CardError) and "it is a device" in str(error)
