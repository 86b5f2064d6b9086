"""Two windows on one history, in two processes: neither loses the other's turns, and what a user deletes
in one (editing the last message, regenerating) is deleted. Each window is a real HistoryPanel on a real
HistoryStore (tests/history_window.py); the second runs in a second Python process."""

from __future__ import annotations

import json
import selectors
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from history_window import ChatWindow

from gui.services.history import HistoryStore

HERE = Path(__file__).resolve().parent
ANSWER_TIMEOUT_S = 120


class OtherProcess:
    """The second window: tests/history_window.py in its own process, driven one command at a time."""

    def __init__(self, db: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "history_window.py"), str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=HERE.parent,
        )
        self._selector = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        assert self._answer() == "ready"

    def start(self, method: str, *args: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"do": method, "args": list(args)}) + "\n")
        self.proc.stdin.flush()

    def _answer(self) -> Any:
        assert self.proc.stdout is not None
        if not self._selector.select(ANSWER_TIMEOUT_S):
            raise TimeoutError("the second window did not answer")
        answer = json.loads(self.proc.stdout.readline() or '{"error": "the second window exited"}')
        if "error" in answer:
            raise AssertionError(f"second window: {answer['error']}")
        return answer["ok"]

    def __getattr__(self, method: str) -> Any:
        def call(*args: Any) -> Any:
            self.start(method, *args)
            return self._answer()

        return call

    def wait(self) -> Any:
        return self._answer()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.close()
            self.proc.wait(30)
        self._selector.close()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "history.sqlite3"


@pytest.fixture
def windows(qapp: Any, db: Path) -> Iterator[tuple[ChatWindow, OtherProcess]]:
    here = ChatWindow(db)
    there: OtherProcess | None = None
    try:
        there = OtherProcess(db)
        yield here, there
    finally:
        if there is not None:
            there.stop()
        here.close()


def stored_texts(db: Path) -> list[str]:
    with HistoryStore(db) as store:
        (summary,) = store.list()
        return [t.text for t in store.load(summary.id).turns]


def test_both_windows_keep_their_turns_and_deletions_stay_deleted(
    windows: tuple[ChatWindow, OtherProcess], db: Path
) -> None:
    here, there = windows
    cid = here.send("A1?", "A1!")
    assert there.restore_last() == cid  # both windows now have the same conversation open
    assert there.texts() == ["A1?", "A1!"]

    # Turns from both windows, interleaved.
    here.send("A2?", "A2!")
    there.send("B1?", "B1!")
    here.send("A3?", "A3!")
    there.send("B2?", "B2!")
    assert stored_texts(db) == ["A1?", "A1!", "A2?", "A2!", "B1?", "B1!", "A3?", "A3!", "B2?", "B2!"]

    # Edit the last message over there: its last exchange goes, nothing of this window's does.
    assert there.edit_last() == "B2?"
    assert stored_texts(db) == ["A1?", "A1!", "A2?", "A2!", "B1?", "B1!", "A3?", "A3!"]
    # Regenerate here: the old reply goes, the new one comes; the other window's turns stay.
    here.regenerate("A3! again")
    assert stored_texts(db) == ["A1?", "A1!", "A2?", "A2!", "B1?", "B1!", "A3?", "A3! again"]
    # Edit here twice: the first edit drops A3, the second A2 (the one before it in this window).
    assert here.edit_last() == "A3?"
    assert here.edit_last() == "A2?"
    assert stored_texts(db) == ["A1?", "A1!", "B1?", "B1!"]

    # The other window still shows what it knew; its next save neither brings back what was deleted
    # here nor removes what this window keeps.
    there.send("B3?", "B3!")
    assert stored_texts(db) == ["A1?", "A1!", "B1?", "B1!", "B3?", "B3!"]


def test_a_stale_copy_does_not_overwrite_a_finished_reply_or_system_prompt(
    windows: tuple[ChatWindow, OtherProcess], db: Path
) -> None:
    here, there = windows
    here.send("First?", "First!")
    here.ask("Tell me a long story")  # the question and the empty reply are stored at once
    assert there.restore_last() is not None
    assert there.texts() == ["First?", "First!", "Tell me a long story", ""]  # it opened mid-reply
    here.finish("Once upon a time.")
    here.set_system_prompt("Be brief.")

    there.send("Meanwhile?", "Meanwhile!")  # its copy still has the empty reply and no system prompt
    assert stored_texts(db) == [
        "First?", "First!", "Tell me a long story", "Once upon a time.", "Meanwhile?", "Meanwhile!",
    ]  # fmt: skip
    with HistoryStore(db) as store:
        assert store.load(store.list()[0].id).system_prompt == "Be brief."


def test_a_chat_deleted_in_one_window_is_kept_as_new_if_the_other_goes_on(
    windows: tuple[ChatWindow, OtherProcess], db: Path
) -> None:
    here, there = windows
    cid = here.send("Keep going?", "Yes.")
    assert there.restore_last() == cid
    here.panel.delete(cid)
    here.panel.delete_for_good()  # no undo
    here.restore_last()  # waits for the delete, queued before it
    there.save()  # nothing new over there: the deleted chat does not come back
    with HistoryStore(db) as store:
        assert store.list() == []
    there.send("Still here?", "Still here.")
    assert stored_texts(db) == ["Keep going?", "Yes.", "Still here?", "Still here."]


def test_two_processes_saving_at_once_lose_nothing(windows: tuple[ChatWindow, OtherProcess], db: Path) -> None:
    here, there = windows
    here.send("start?", "start!")
    there.restore_last()
    n = 15
    there.start("burst", "there", n)  # runs while this window saves its own burst
    here.burst("here", n)
    there.wait()
    texts = stored_texts(db)
    assert len(texts) == 2 + 4 * n
    for prefix in ("here", "there"):
        mine = [t for t in texts if t.startswith(prefix)]
        expected = [f"{prefix} {kind} {i}" for i in range(n) for kind in ("question", "answer")]
        assert mine == expected  # every turn, each window's in its own order
