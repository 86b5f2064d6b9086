"""The JSON settings store: persistence, atomic writes, corrupt files, typed model folders."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path

import pytest

from gui.services.settings_store import SettingsStore, default_settings_path


def test_missing_file_gives_defaults_and_nothing_is_written(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "cfg" / "settings.json")
    assert store.model_folders == []
    assert store.get("theme", "dark") == "dark"
    assert not store.path.exists()


def test_values_persist_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "settings.json"
    store = SettingsStore(path)
    store.model_folders = ["/data/models", "/data/models", "/mnt/gguf"]
    store.set("last_card", "v100-16gb")
    store.update({"margin_mib": 768, "presets": {"fast": {"n_ctx": 4096}}})

    again = SettingsStore(path)
    assert again.model_folders == ["/data/models", "/mnt/gguf"]  # duplicates dropped, order kept
    assert again.get("last_card") == "v100-16gb"
    assert again.get("presets") == {"fast": {"n_ctx": 4096}}
    on_disk = json.loads(path.read_text(encoding="utf-8"))
    assert on_disk["margin_mib"] == 768


def test_add_and_remove_model_folders(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.add_model_folder(tmp_path / "a")
    store.add_model_folder(str(tmp_path / "b"))
    store.add_model_folder(tmp_path / "a")
    assert store.model_folders == [str(tmp_path / "a"), str(tmp_path / "b")]
    store.remove_model_folder(tmp_path / "a")
    assert SettingsStore(store.path).model_folders == [str(tmp_path / "b")]


def test_returned_values_are_copies(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.model_folders = ["/x"]
    folders = store.model_folders
    folders.append("/y")
    assert store.model_folders == ["/x"]


def test_writes_are_atomic_and_leave_no_temporary_files(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    for i in range(20):
        store.set("counter", i)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    assert SettingsStore(store.path).get("counter") == 19


def test_a_value_json_cannot_hold_changes_nothing(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.set("a", 1)
    before = store.path.read_bytes()
    with pytest.raises(TypeError):
        store.set("b", object())
    assert store.path.read_bytes() == before
    assert store.get("b") is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]


@pytest.mark.parametrize("content", [b"{not json", b"[1, 2, 3]", b"\xff\xfe garbage", b""])
def test_corrupt_file_gives_defaults_and_is_kept_as_bak(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        store = SettingsStore(path)
    assert store.model_folders == []
    backup = tmp_path / "settings.json.bak"
    assert backup.read_bytes() == content
    assert not path.exists()
    assert any("corrupt" in r.getMessage() and "settings.json.bak" in r.getMessage() for r in caplog.records)
    # The store works normally afterwards.
    store.model_folders = ["/m"]
    assert SettingsStore(path).model_folders == ["/m"]


def test_a_model_folders_value_of_the_wrong_type_reads_as_empty(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"model_folders": "/not/a/list", "other": 1}), encoding="utf-8")
    store = SettingsStore(path)
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        assert store.model_folders == []
    assert store.get("other") == 1
    assert caplog.records


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    n = 25

    def writer(k: int) -> None:
        for i in range(n):
            store.set(f"w{k}", i)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    again = SettingsStore(store.path)
    assert [again.get(f"w{k}") for k in range(4)] == [n - 1] * 4


def test_default_path_is_under_the_user_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = default_settings_path()
    assert path.name == "settings.json"
    assert path.parent.name == "tightfit"
    assert SettingsStore().path == path
