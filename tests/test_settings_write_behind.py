"""The window's settings store writes behind: changes coalesce, the file is written on the store's own thread
(atomically, as every write is), reads see a change at once, and a flush (the window's close) or the
interpreter's exit writes whatever is pending, so nothing is lost when the window closes right after a change."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from gui.core.params import LoadSettings
from gui.core.preferences import CAP_WATTS, LAST_SETTINGS, MARGIN_MIB, SAMPLING_PRESET, Preference
from gui.services.settings_store import SettingsStore

ROOT = Path(__file__).resolve().parents[1]
LONG_S = 60.0  # a coalescing window nothing in a test waits out: only a flush writes


class Writes:
    """The store's real atomic write, wrapped to see which thread runs each and what it wrote; with ``hold``,
    the first write waits (inside the writer thread) until ``release`` is set."""

    def __init__(self, store: SettingsStore, *, hold: bool = False) -> None:
        self.threads: list[threading.Thread] = []
        self.texts: list[dict[str, Any]] = []
        self.entered = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()
        real = store._write

        def write(text: str) -> None:
            self.threads.append(threading.current_thread())
            self.texts.append(json.loads(text))
            self.entered.set()
            assert self.release.wait(30)
            real(text)

        store._write = write  # type: ignore[method-assign]


def on_disk(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_a_burst_of_changes_is_one_write_of_the_last_values(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    store = SettingsStore(path, write_behind=True, delay_s=LONG_S)
    writes = Writes(store)
    for watts in range(100, 300):  # a spin box held down
        store.write(CAP_WATTS, watts)
        assert store.read(CAP_WATTS) == watts  # every read sees the change at once
    store.write_many({MARGIN_MIB: 512, SAMPLING_PRESET: "Precise"})
    assert store.pending and not path.exists() and writes.texts == []
    assert store.flush()
    assert len(writes.texts) == 1 and not store.pending
    assert on_disk(path)["cap_watts"] == 299 and on_disk(path)["margin_mib"] == 512
    again = SettingsStore(path)
    assert (again.read(CAP_WATTS), again.read(MARGIN_MIB), again.read(SAMPLING_PRESET)) == (299, 512, "Precise")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json"]  # no temporary file left


def test_changes_made_while_a_write_is_under_way_are_one_more_write(tmp_path: Path) -> None:
    """No delay at all: the writer starts at the first change; the 199 after it, made while that write is on the
    disk, become one write of the newest values."""
    path = tmp_path / "settings.json"
    store = SettingsStore(path, write_behind=True, delay_s=0)
    writes = Writes(store, hold=True)
    store.write(CAP_WATTS, 100)
    assert writes.entered.wait(30)
    for watts in range(101, 300):
        store.write(CAP_WATTS, watts)
        assert store.read(CAP_WATTS) == watts
    assert len(writes.texts) == 1 and writes.texts[0]["cap_watts"] == 100
    writes.release.set()
    assert store.flush()
    assert [text["cap_watts"] for text in writes.texts] == [100, 299]
    assert SettingsStore(path).read(CAP_WATTS) == 299


def test_the_disk_write_happens_on_the_writer_thread_not_the_callers(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json", write_behind=True, delay_s=0)
    writes = Writes(store)
    store.write(MARGIN_MIB, 768)
    assert store.flush()
    store.write(MARGIN_MIB, 512)
    assert store.flush()
    caller = threading.current_thread()
    assert writes.threads and all(t is not caller for t in writes.threads)
    assert {t.name for t in writes.threads} == {"settings-writer"}


def test_a_store_that_writes_through_writes_on_the_callers_thread(tmp_path: Path) -> None:
    """Without write_behind (tools, tests), each write is on disk before ``write`` returns."""
    path = tmp_path / "settings.json"
    store = SettingsStore(path)
    writes = Writes(store)
    store.write(MARGIN_MIB, 768)
    assert writes.threads == [threading.current_thread()] and on_disk(path)["margin_mib"] == 768
    assert not store.pending and store.flush()


def test_closing_right_after_a_change_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    store = SettingsStore(path, write_behind=True, delay_s=LONG_S)
    store.write(LAST_SETTINGS, {"m.gguf": LoadSettings(n_ctx=4096)})
    store.write(MARGIN_MIB, 1536)
    assert not path.exists()  # nothing written yet: the window closes now
    assert store.flush()  # what the window's close does
    again = SettingsStore(path)
    assert again.read(MARGIN_MIB) == 1536 and again.read(LAST_SETTINGS) == {"m.gguf": LoadSettings(n_ctx=4096)}


def test_the_interpreters_exit_writes_what_is_pending(tmp_path: Path) -> None:
    """A process that ends without flushing (a script, an exception past the window) still keeps the change."""
    path = tmp_path / "settings.json"
    script = (
        "import sys\n"
        "from gui.core.preferences import CAP_WATTS\n"
        "from gui.services.settings_store import SettingsStore\n"
        f"store = SettingsStore(sys.argv[1], write_behind=True, delay_s={LONG_S})\n"
        "store.write(CAP_WATTS, 177)\n"
        "assert store.pending\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path)], cwd=ROOT, check=True, timeout=60)
    assert SettingsStore(path).read(CAP_WATTS) == 177


def test_a_write_the_disk_refuses_is_reported_and_the_value_kept(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The config folder's name taken by a file: the write fails on the writer thread, which logs it as a
    write-through store does; ``flush`` says it did not reach the disk and ``write_error`` why."""
    folder = tmp_path / "config"
    path = folder / "settings.json"
    store = SettingsStore(path, write_behind=True, delay_s=0)
    folder.write_text("a file where the config folder should be", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        store.write(MARGIN_MIB, 768)
        assert not store.flush()
    assert store.read(MARGIN_MIB) == 768  # kept for the session
    assert store.write_error
    [record] = [r for r in caplog.records if "cannot write" in r.getMessage()]
    assert str(path) in record.getMessage() and record.threadName == "settings-writer"
    # The folder back: the next change writes everything, the one that failed included.
    folder.unlink()
    store.write(CAP_WATTS, 150)
    assert store.flush() and store.write_error is None
    again = SettingsStore(path)
    assert again.read(MARGIN_MIB) == 768 and again.read(CAP_WATTS) == 150


def test_a_write_through_store_reports_the_same_way(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    folder = tmp_path / "config"
    store = SettingsStore(folder / "settings.json")
    folder.write_text("in the way", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        store.write(MARGIN_MIB, 768)
    assert any("cannot write" in r.getMessage() for r in caplog.records)
    assert store.write_error and not store.flush()


def test_a_flush_waits_a_bounded_time_for_a_disk_that_hangs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "settings.json"
    store = SettingsStore(path, write_behind=True, delay_s=0)
    writes = Writes(store, hold=True)
    store.write(MARGIN_MIB, 768)
    assert writes.entered.wait(30)
    with caplog.at_level(logging.WARNING, logger="gui.services.settings_store"):
        assert not store.flush(timeout_s=0.05)  # the disk still holds the write: the close goes on
    assert any("not written within" in r.getMessage() for r in caplog.records)
    writes.release.set()
    assert store.flush()
    assert SettingsStore(path).read(MARGIN_MIB) == 768


def test_a_value_json_cannot_hold_raises_before_anything_changes(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json", write_behind=True, delay_s=LONG_S)
    store.write(CAP_WATTS, 150)
    unstorable: Preference[object] = Preference("unstorable", None, lambda v: v)
    with pytest.raises(TypeError):
        store.write_many({CAP_WATTS: 160, unstorable: object()})
    assert store.read(CAP_WATTS) == 150
    assert store.flush() and SettingsStore(store.path).read(CAP_WATTS) == 150


def test_writers_on_many_threads_lose_nothing(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path / "settings.json", write_behind=True, delay_s=0.01)
    prefs = [CAP_WATTS, MARGIN_MIB, SAMPLING_PRESET]
    values = [lambda i: 100 + i, lambda i: 64 * i, lambda i: f"preset {i}"]
    n = 50

    def writer(k: int) -> None:
        for i in range(n):
            store.write(prefs[k], values[k](i))

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(len(prefs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert store.flush()
    again = SettingsStore(store.path)
    assert [again.read(pref) for pref in prefs] == [value(n - 1) for value in values]


@pytest.mark.parametrize("behind", [False, True], ids=["write-through", "write-behind"])
@pytest.mark.parametrize("relative", [False, True], ids=["absolute-link", "relative-link"])
def test_a_settings_file_that_is_a_symlink_stays_one_and_its_target_gets_the_content(
    tmp_path: Path, behind: bool, relative: bool
) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "tightfit.json"
    target.write_text(json.dumps({"schema_version": 1, "margin_mib": 512}), encoding="utf-8")
    config = tmp_path / "config"
    config.mkdir()
    link = config / "settings.json"
    link.symlink_to(Path("..") / "dotfiles" / "tightfit.json" if relative else target)
    store = SettingsStore(link, write_behind=behind, delay_s=0.01)
    assert store.read(MARGIN_MIB) == 512
    store.write(MARGIN_MIB, 768)
    assert store.flush()
    assert link.is_symlink() and link.resolve() == target.resolve()
    assert json.loads(target.read_text(encoding="utf-8"))["margin_mib"] == 768
    assert SettingsStore(link).read(MARGIN_MIB) == 768
    # No temporary file is left in either folder.
    assert sorted(p.name for p in config.iterdir()) == ["settings.json"]
    assert sorted(p.name for p in dotfiles.iterdir()) == ["tightfit.json"]


def test_a_settings_link_through_a_chain_of_links_writes_the_last_one(tmp_path: Path) -> None:
    target = tmp_path / "real.json"
    middle = tmp_path / "middle.json"
    middle.symlink_to(target)
    link = tmp_path / "settings.json"
    link.symlink_to(middle)
    store = SettingsStore(link, write_behind=True, delay_s=0.01)  # the target does not exist yet
    store.write(CAP_WATTS, 150)
    assert store.flush()
    assert link.is_symlink() and middle.is_symlink() and not target.is_symlink()
    assert SettingsStore(target).read(CAP_WATTS) == 150
