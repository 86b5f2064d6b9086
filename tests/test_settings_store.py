"""The JSON settings store: persistence, atomic writes, corrupt files set aside, typed model folders, and
settings written by earlier versions read whole."""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from unprivileged import as_user, snapshot, user_folder

from gui.core.params import LOAD_SPECS, LoadSettings
from gui.core.preferences import (
    ALERT_C,
    ALL_PREFERENCES,
    CAP_WATTS,
    CHAT_FORMATS,
    INTERVAL_S,
    LAST_SETTINGS,
    MARGIN_MIB,
    MEMORY_CHECKS,
    MODEL_FOLDERS,
    NUMA_PINS,
    SAMPLING_PRESET,
    SAMPLING_PRESETS,
    SERVE_HOST,
    SERVE_PORT_NUMBER,
    SERVE_REMOTE,
    Preference,
)
from gui.core.protocol import Sampling
from gui.core.specs import specs_of
from gui.services import settings_store
from gui.services.settings_store import (
    MAX_BYTES,
    MIGRATIONS,
    SCHEMA_KEY,
    SCHEMA_VERSION,
    SettingsStore,
    default_settings_path,
)

DATA = Path(__file__).parent / "data"


def set_aside(folder: Path) -> list[Path]:
    """Bad settings files moved aside in ``folder`` (settings.json.<date>-<time>.bad)."""
    return sorted(folder.glob("settings.json.*.bad"))


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
def test_corrupt_file_gives_defaults_and_is_set_aside_with_a_timestamp(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(content)
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        store = SettingsStore(path)
    assert store.model_folders == []
    [backup] = set_aside(tmp_path)
    assert backup.read_bytes() == content
    assert not path.exists()
    assert any("corrupt" in r.getMessage() and backup.name in r.getMessage() for r in caplog.records)
    # One line for the window: what happened, and where the file went.
    assert store.warning is not None and "\n" not in store.warning
    assert "damaged" in store.warning and str(backup) in store.warning
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
    assert path.exists() and not set_aside(tmp_path)  # bad values, not a bad file
    assert store.warning is None


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


# name -> (make it, whether it is set aside as settings.json.<date>-<time>.bad; otherwise it is left as it is)
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
    store: SettingsStore | None = None
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
        assert store.warning  # and the window can say so
        if kept_as_bak:
            [backup] = set_aside(path.parent)
            assert ("file", backup.read_bytes()) == before
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


# ---- upgrades: what an earlier version wrote is read whole ------------------------------------------------

# tests/data/settings-0.1.0.json was written by Tightfit 0.1.0's own SettingsStore (before the file carried a
# schema version), every preference set to something other than its default, as below.
BIG = LoadSettings(
    n_gpu_layers=40, n_ctx=16384, n_batch=1024, n_ubatch=256, n_threads=8, n_parallel=2, cache_type_k="q8_0",
    cache_type_v="q8_0", flash_attn="on", use_mmap=False, swa_full=True, n_cpu_moe=4, cpu_moe=False,
    n_outputs_max=2, kv_unified=True, op_offload=False,
)  # fmt: skip
WRITTEN_BY_0_1_0: dict[Preference[Any], Any] = {
    MODEL_FOLDERS: ["/data/gguf", "/mnt/big disk/models"],
    SAMPLING_PRESETS: {
        "Code": Sampling(
            temperature=0.2,
            top_k=20,
            top_p=0.9,
            min_p=0.0,
            repeat_penalty=1.0,
            repeat_last_n=128,
            presence_penalty=0.1,
            frequency_penalty=0.2,
            seed=42,
        ),
        "Wild": Sampling(temperature=1.3),
    },
    SAMPLING_PRESET: "Code",
    MARGIN_MIB: 768,
    CAP_WATTS: 180,
    ALERT_C: 78.0,
    INTERVAL_S: 0.5,
    LAST_SETTINGS: {"Qwen3-27B-Q4_K_M.gguf": BIG, "SmolLM2-135M-Instruct.Q4_1.gguf": LoadSettings(n_ctx=2048)},
    CHAT_FORMATS: {"Qwen3-27B-Q4_K_M.gguf": "chatml", "gemma-3-27b-it-Q4_0.gguf": "gemma"},
    NUMA_PINS: {"0123456789abcdef0123456789abcdef": 1},
    MEMORY_CHECKS: {"Tesla V100-SXM2-16GB|550.54|cuda-12.4": [12.5, -3.0]},
    SERVE_HOST: "0.0.0.0",
    SERVE_PORT_NUMBER: 8123,
    SERVE_REMOTE: True,
}


@pytest.fixture
def settings_0_1_0(tmp_path: Path) -> Path:
    """A copy of the 0.1.0 file (the store may rewrite it; the committed one stays as it was)."""
    path = tmp_path / "settings.json"
    shutil.copyfile(DATA / "settings-0.1.0.json", path)
    return path


def test_the_0_1_0_fixture_sets_every_preference_it_had() -> None:
    raw = json.loads((DATA / "settings-0.1.0.json").read_text(encoding="utf-8"))
    assert SCHEMA_KEY not in raw  # written before versions were kept
    assert set(raw) == {pref.key for pref in WRITTEN_BY_0_1_0}
    assert all(value != pref.default for pref, value in WRITTEN_BY_0_1_0.items())


def test_settings_from_0_1_0_read_whole(settings_0_1_0: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        store = SettingsStore(settings_0_1_0)
        for pref, value in WRITTEN_BY_0_1_0.items():
            assert store.read(pref) == value, pref.key
    assert not caplog.records and store.warning is None
    assert not set_aside(settings_0_1_0.parent)


def test_settings_from_0_1_0_are_written_in_the_new_form_with_the_next_change(settings_0_1_0: Path) -> None:
    before = settings_0_1_0.read_bytes()
    store = SettingsStore(settings_0_1_0)
    assert settings_0_1_0.read_bytes() == before  # reading writes nothing
    store.write(CAP_WATTS, 190)
    raw = json.loads(settings_0_1_0.read_text(encoding="utf-8"))
    assert raw[SCHEMA_KEY] == SCHEMA_VERSION
    again = SettingsStore(settings_0_1_0)
    assert again.read(CAP_WATTS) == 190
    for pref, value in WRITTEN_BY_0_1_0.items():
        assert pref is CAP_WATTS or again.read(pref) == value, pref.key


def test_a_new_file_carries_the_schema_version(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    store.write(MARGIN_MIB, 512)
    assert json.loads(store.path.read_text(encoding="utf-8"))[SCHEMA_KEY] == SCHEMA_VERSION
    assert SCHEMA_KEY not in ALL_PREFERENCES  # no preference can overwrite it


def test_every_older_version_has_a_migration_step() -> None:
    assert sorted(MIGRATIONS) == list(range(SCHEMA_VERSION))


def test_migration_steps_run_in_order_from_the_files_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A later version renaming a key: the step runs on a file of the version before, and only on it."""

    def rename_margin(data: dict[str, Any]) -> dict[str, Any]:
        data["margin_mib"] = data.pop("old_margin", data.get("margin_mib"))
        return data

    monkeypatch.setattr(settings_store, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setattr(settings_store, "MIGRATIONS", {**MIGRATIONS, SCHEMA_VERSION: rename_margin})
    old = tmp_path / "old.json"
    old.write_text(json.dumps({SCHEMA_KEY: SCHEMA_VERSION, "old_margin": 640}), encoding="utf-8")
    assert SettingsStore(old).read(MARGIN_MIB) == 640
    unversioned = tmp_path / "unversioned.json"
    unversioned.write_text(json.dumps({"old_margin": 320}), encoding="utf-8")
    store = SettingsStore(unversioned)
    assert store.read(MARGIN_MIB) == 320
    store.write(CAP_WATTS, 150)
    assert json.loads(unversioned.read_text(encoding="utf-8"))[SCHEMA_KEY] == SCHEMA_VERSION + 1


def test_a_file_from_a_newer_version_keeps_its_version_and_keys(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({SCHEMA_KEY: SCHEMA_VERSION + 5, "margin_mib": 640, "later": [1]}), encoding="utf-8")
    store = SettingsStore(path)
    assert store.read(MARGIN_MIB) == 640 and store.warning is None
    store.write(CAP_WATTS, 150)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert raw[SCHEMA_KEY] == SCHEMA_VERSION + 5 and raw["later"] == [1] and raw["cap_watts"] == 150


@pytest.mark.parametrize("version", ['"2"', "-1", "1.5", "true", "null", "[1]", "{}", str(2**80)[:-3] + "e99"])
def test_a_schema_version_that_is_not_one_sets_the_file_aside(tmp_path: Path, version: str) -> None:
    path = tmp_path / "settings.json"
    content = f'{{"{SCHEMA_KEY}": {version}, "margin_mib": 640}}'.encode()
    path.write_bytes(content)
    store = SettingsStore(path)
    assert store.read(MARGIN_MIB) == MARGIN_MIB.default
    [backup] = set_aside(tmp_path)
    assert backup.read_bytes() == content
    assert store.warning is not None and SCHEMA_KEY in store.warning


def test_bad_files_set_aside_in_the_same_second_keep_distinct_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(settings_store.time, "strftime", lambda _format: "20260102-030405")
    path = tmp_path / "settings.json"
    for i in range(3):
        path.write_bytes(b"\x00binary %d" % i)
        SettingsStore(path)
    assert [p.name for p in set_aside(tmp_path)] == [
        "settings.json.20260102-030405-1.bad",
        "settings.json.20260102-030405-2.bad",
        "settings.json.20260102-030405.bad",
    ]
    assert sorted(p.read_bytes() for p in set_aside(tmp_path)) == [b"\x00binary %d" % i for i in range(3)]


def test_a_good_file_gives_no_warning(tmp_path: Path) -> None:
    SettingsStore(tmp_path / "settings.json").write(MARGIN_MIB, 512)
    assert SettingsStore(tmp_path / "settings.json").warning is None
