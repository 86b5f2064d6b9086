"""The JSON settings store: persistence, atomic writes, corrupt files, typed model folders."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from unprivileged import as_user, snapshot, user_folder

from gui.core.params import LOAD_SPECS, LoadSettings
from gui.core.preferences import (
    ALL_PREFERENCES,
    CAP_WATTS,
    LAST_SETTINGS,
    MARGIN_MIB,
    SAMPLING_PRESET,
    SAMPLING_PRESETS,
    Preference,
)
from gui.core.protocol import Sampling
from gui.core.specs import specs_of
from gui.services.settings_store import MAX_BYTES, SettingsStore, default_settings_path


def test_missing_file_gives_defaults_and_nothing_is_written(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "cfg" / "settings.json")
    assert store.model_folders == []
    assert store.read(MARGIN_MIB) == 1024 and store.read(SAMPLING_PRESET) == "Balanced"
    assert not store.path.exists()


def test_values_persist_across_instances(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "settings.json"
    store = SettingsStore(path)
    store.model_folders = ["/data/models", "/data/models", "/mnt/gguf"]
    store.write(SAMPLING_PRESET, "Precise")
    store.write_many({MARGIN_MIB: 768, LAST_SETTINGS: {"m.gguf": LoadSettings(n_ctx=4096)}})

    again = SettingsStore(path)
    assert again.model_folders == ["/data/models", "/mnt/gguf"]  # duplicates dropped, order kept
    assert again.read(SAMPLING_PRESET) == "Precise"
    assert again.read(LAST_SETTINGS) == {"m.gguf": LoadSettings(n_ctx=4096)}
    on_disk = json.loads(path.read_text(encoding="utf-8"))
    assert on_disk["margin_mib"] == 768 and on_disk["last_settings"]["m.gguf"]["n_ctx"] == 4096


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
        store.write(CAP_WATTS, 100 + i)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]
    assert SettingsStore(store.path).read(CAP_WATTS) == 119


def test_a_value_json_cannot_hold_changes_nothing(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.write(CAP_WATTS, 150)
    before = store.path.read_bytes()
    unstorable: Preference[object] = Preference("unstorable", None, lambda v: v)
    with pytest.raises(TypeError):
        store.write_many({CAP_WATTS: 160, unstorable: object()})
    assert store.path.read_bytes() == before
    assert store.read(CAP_WATTS) == 150
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
    path.write_text(json.dumps({"model_folders": "/not/a/list", "from_a_newer_version": 1}), encoding="utf-8")
    store = SettingsStore(path)
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        assert store.model_folders == []
    assert caplog.records
    store.write(CAP_WATTS, 150)  # a key nothing here declares is kept as it was
    assert json.loads(path.read_text(encoding="utf-8"))["from_a_newer_version"] == 1


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    n = 25
    prefs = [CAP_WATTS, MARGIN_MIB, SAMPLING_PRESET, LAST_SETTINGS]
    values = [
        lambda i: 100 + i,
        lambda i: 256 * i,
        lambda i: f"preset {i}",
        lambda i: {"m": LoadSettings(n_ctx=256 * (i + 1))},
    ]

    def writer(k: int) -> None:
        for i in range(n):
            store.write(prefs[k], values[k](i))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    again = SettingsStore(store.path)
    assert [again.read(pref) for pref in prefs] == [value(n - 1) for value in values]


def test_bad_stored_values_fall_back_to_their_defaults_one_by_one(tmp_path: Path) -> None:
    """A hand-edited file: a bad margin, a preset list with one bad entry, settings with a bad field."""
    path = tmp_path / "settings.json"
    stored = {
        "margin_mib": "lots",
        "cap_watts": 99999,
        "sampling_presets": {"Good": {"temperature": 0.3}, "Bad": {"top_k": "many"}},
        "last_settings": {"ok.gguf": {"n_ctx": 2048}, "bad.gguf": {"n_ctx": 3.5}, "worse.gguf": [1, 2]},
    }
    path.write_text(json.dumps(stored), encoding="utf-8")
    store = SettingsStore(path)
    assert store.read(MARGIN_MIB) == MARGIN_MIB.default
    assert store.read(CAP_WATTS) == CAP_WATTS.default
    presets = store.read(ALL_PREFERENCES["sampling_presets"])
    assert list(presets) == ["Good"] and presets["Good"].temperature == 0.3
    assert store.read(LAST_SETTINGS) == {"ok.gguf": LoadSettings(n_ctx=2048)}


def test_every_preference_default_survives_a_round_trip(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.write_many({pref: pref.default for pref in ALL_PREFERENCES.values()})
    again = SettingsStore(store.path)
    assert all(again.read(pref) == pref.default for pref in ALL_PREFERENCES.values())


def test_default_path_is_under_the_user_config_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = default_settings_path()
    assert path.name == "settings.json"
    assert path.parent.name == "tightfit"
    assert SettingsStore().path == path


# ---- hostile input: nothing in the file may stop the window or break it later ------------------------

# JSON no preference accepts, anywhere a value goes. Python's json reads NaN and the infinities, 1e400 as
# infinity and an integer of any length.
HOSTILE = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e308": "1e308",
    "-1e308": "-1e308",
    "1e400": "1e400",
    "2**80": str(2**80),
    "-2**80": str(-(2**80)),
    "400 digits": "9" * 400,
    "NUL in text": '"a\\u0000b"',
    "null": "null",
    "a list": "[1]",
    "an object": '{"a": 1}',
}
SAMPLING_FIELDS = [spec.key for spec in specs_of(Sampling)]
LOAD_FIELDS = [spec.key for spec in LOAD_SPECS]


def _hostile_file(value: str) -> str:
    """Every preference given ``value``, and every field of every table entry given it, beside good entries."""
    presets = ", ".join(f'"bad {key}": {{"{key}": {value}}}' for key in SAMPLING_FIELDS)
    last = ", ".join(f'"bad-{key}.gguf": {{"{key}": {value}}}' for key in LOAD_FIELDS)
    return (
        f'{{"margin_mib": {value}, "cap_watts": {value}, "sampling_preset": {value}, '
        f'"model_folders": ["/good", {value}, "/bad\\u0000folder"], '
        f'"sampling_presets": {{"good": {{}}, "bad\\u0000name": {{}}, {presets}}}, '
        f'"last_settings": {{"good.gguf": {{}}, {last}}}}}'
    )


@pytest.mark.parametrize("value", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_values_fall_back_to_defaults_one_by_one(
    tmp_path: Path, value: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_text(_hostile_file(value), encoding="utf-8")
    store = SettingsStore(path)
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        assert store.read(MARGIN_MIB) == MARGIN_MIB.default
        assert store.read(CAP_WATTS) == CAP_WATTS.default
        assert store.read(SAMPLING_PRESET) == SAMPLING_PRESET.default
    assert len(caplog.records) == 3  # each bad value is named in the log
    assert store.model_folders == ["/good"]
    assert store.read(SAMPLING_PRESETS) == {"good": Sampling()}
    assert store.read(LAST_SETTINGS) == {"good.gguf": LoadSettings()}
    assert path.exists() and not (tmp_path / "settings.json.bak").exists()  # bad values, not a bad file


def _nested(depth: int) -> str:
    return '{"sampling_presets": ' + "[" * depth + "]" * depth + ', "margin_mib": 512}'


def _folder(path: Path) -> None:
    path.mkdir()


def _unreadable(path: Path) -> None:
    path.write_text('{"margin_mib": 512}', encoding="utf-8")
    path.chmod(0)


def _symlink_loop(path: Path) -> None:
    path.symlink_to(path.name)


def _folder_is_a_file(path: Path) -> None:
    path.parent.rmdir()
    path.parent.write_text("a file where the config folder should be", encoding="utf-8")


# name -> (make it, whether it is kept as settings.json.bak; otherwise it is left as it is)
BAD_FILES: dict[str, tuple[Callable[[Path], object], bool]] = {
    "nested past the recursion limit": (lambda p: p.write_text(_nested(100_000), encoding="utf-8"), True),
    "nested 500 deep": (lambda p: p.write_text(_nested(500), encoding="utf-8"), True),
    "larger than MAX_BYTES": (
        lambda p: p.write_text('{"margin_mib": 512, "pad": "' + "x" * MAX_BYTES + '"}', encoding="utf-8"),
        True,
    ),
    "NaN alone": (lambda p: p.write_text("NaN", encoding="utf-8"), True),
    "a folder": (_folder, False),
    "unreadable": (_unreadable, False),
    "symlink loop": (_symlink_loop, False),
    "FIFO": (lambda p: os.mkfifo(p), False),
    "config folder is a file": (_folder_is_a_file, False),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", BAD_FILES)
def test_a_bad_settings_file_gives_defaults_and_never_raises(
    tmp_path: Path, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    make, kept_as_bak = BAD_FILES[name]
    with user_folder(tmp_path) as home:
        path = home / "config" / "settings.json"
        with as_user():
            path.parent.mkdir()
            make(path)
        target = path.parent if name == "config folder is a file" else path
        before = snapshot(target)
        with as_user(), caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
            store = SettingsStore(path)
            assert all(store.read(pref) == pref.default for pref in ALL_PREFERENCES.values())
            # Later changes work for the session, whether or not they can reach the disk.
            store.write_many({MARGIN_MIB: 768, CAP_WATTS: 150})
            store.add_model_folder("/more/models")
            assert store.read(MARGIN_MIB) == 768 and store.model_folders == ["/more/models"]
        assert caplog.records  # the user can find out why
        if kept_as_bak:
            assert ("file", (path.parent / "settings.json.bak").read_bytes()) == before
            assert SettingsStore(path).read(MARGIN_MIB) == 768  # the fresh file holds the change
        else:
            assert snapshot(target) == before  # what could not be read is never written over


def test_a_folder_that_cannot_be_written_keeps_changes_for_the_session(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with user_folder(tmp_path) as home, as_user():
        path = home / "config" / "settings.json"
        path.parent.mkdir()
        SettingsStore(path).write(MARGIN_MIB, 512)
        path.parent.chmod(0o555)
        try:
            store = SettingsStore(path)
            assert store.read(MARGIN_MIB) == 512
            with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
                store.write(MARGIN_MIB, 768)  # a read-only folder: logged, not raised
            assert store.read(MARGIN_MIB) == 768
            assert any("cannot write" in r.getMessage() for r in caplog.records)
        finally:
            path.parent.chmod(0o755)
        assert SettingsStore(path).read(MARGIN_MIB) == 512
