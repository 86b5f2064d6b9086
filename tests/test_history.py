"""Chat history in a real SQLite file."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable
from copy import deepcopy
from dataclasses import asdict
from pathlib import Path

import pytest
from unprivileged import as_user, snapshot, user_folder

from gui.core.chat import Conversation, Turn
from gui.core.params import LoadSettings
from gui.core.protocol import ReplyStats, Sampling
from gui.services import history
from gui.services.history import SCHEMA_VERSION, HistoryStore

STATS = ReplyStats(
    n_prompt=42,
    n_prompt_evaluated=40,
    n_gen=17,
    ttft_ms=85.5,
    prompt_ms=60.25,
    gen_ms=410.0,
    engine_decode_tok_s=41.5,
    finish_reason="stop",
)


def reply(text: str, **kwargs: object) -> Turn:
    turn = Turn(
        "assistant",
        text,
        stats=STATS,
        model_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        settings=LoadSettings(n_ctx=8192, cache_type_k="q8_0").to_dict(),
        sampling=asdict(Sampling(temperature=0.2)),
    )
    for key, value in kwargs.items():
        setattr(turn, key, value)
    return turn


def conversation(*texts: str, system: str = "Be brief.") -> Conversation:
    conv = Conversation(system)
    for i, text in enumerate(texts):
        conv.turns.append(Turn("user", text) if i % 2 == 0 else reply(text))
    return conv


@pytest.fixture(params=[True, False], ids=["fts5", "like"])
def use_fts(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def store(tmp_path: Path, use_fts: bool):
    with HistoryStore(tmp_path / "history.sqlite3", use_fts=use_fts) as s:
        assert s.fts is use_fts
        yield s


def test_survives_a_restart_with_settings_sampling_and_stats(tmp_path: Path):
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as first:
        cid = first.create("Sizing a 70B model", system_prompt="Be brief.")
        first.save(cid, conversation("How much VRAM?", "About 40 GB at Q4.", "And the KV cache?"))
        first.set_last_opened(cid)

    with HistoryStore(path) as second:
        assert second.warning is None
        assert second.last_opened() == cid
        stored = second.load(cid)
        assert stored.title == "Sizing a 70B model"
        conv = stored.to_conversation()
        assert conv.system_prompt == "Be brief."
        assert [t.text for t in conv.turns] == ["How much VRAM?", "About 40 GB at Q4.", "And the KV cache?"]
        answer = conv.turns[1]
        assert answer.stats == STATS
        assert answer.model_file == "SmolLM2-135M-Instruct.Q4_1.gguf"
        assert answer.settings is not None
        assert LoadSettings.from_dict(answer.settings) == LoadSettings(n_ctx=8192, cache_type_k="q8_0")
        assert answer.sampling is not None and Sampling(**answer.sampling) == Sampling(temperature=0.2)
        assert conv.turns[0].stats is None and conv.turns[0].settings is None
        assert conv.messages() == conversation("How much VRAM?", "About 40 GB at Q4.", "And the KV cache?").messages()


def test_wal_mode_and_schema_version(tmp_path: Path):
    path = tmp_path / "history.sqlite3"
    HistoryStore(path).close()
    db = sqlite3.connect(path)
    try:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    finally:
        db.close()


def test_list_newest_first_with_paging(store: HistoryStore):
    ids = [store.create(f"chat {i}") for i in range(5)]
    store.append_turn(ids[1], Turn("user", "bump"))  # changing a conversation moves it to the top
    listed = store.list(limit=3)
    assert [c.id for c in listed] == [ids[1], ids[4], ids[3]]
    assert listed[0].n_turns == 1
    assert [c.id for c in store.list(limit=3, offset=3)] == [ids[2], ids[0]]


def test_save_is_idempotent_and_writes_only_changes(store: HistoryStore):
    texts = [f"message number {i}" for i in range(20)]
    full_start = store._db.total_changes
    store.save(store.create("reference"), conversation(*texts))
    full_write = store._db.total_changes - full_start

    cid = store.create("t")
    conv = conversation(*texts)
    store.save(cid, conv)
    before = store.list()[0].updated
    changes = store._db.total_changes
    store.save(cid, conv)  # nothing changed: nothing written, order unchanged
    assert store._db.total_changes == changes
    assert store.list()[0].updated == before

    conv.turns[-1].text = "a longer last reply"
    changes = store._db.total_changes
    store.save(cid, conv)
    # Only the last row (and its index entries) is written, not all twenty.
    assert store._db.total_changes - changes < full_write / 5
    assert store.load(cid).turns[-1].text == "a longer last reply"

    base = deepcopy(conv)
    conv.turns = conv.turns[:2]  # e.g. the user deleted the later exchanges
    conv.system_prompt = "New system"
    store.save(cid, conv, base)
    loaded = store.load(cid)
    assert [t.text for t in loaded.turns] == texts[:2]
    assert loaded.system_prompt == "New system"


def test_save_merges_with_turns_another_writer_stored(store: HistoryStore):
    cid = store.create("shared")
    mine = conversation("mine 1", "mine 1 reply", system="")
    store.save(cid, mine)
    theirs = store.load(cid).to_conversation()  # a second writer opens it

    base = deepcopy(mine)
    mine.turns += conversation("mine 2", "mine 2 reply").turns
    store.save(cid, mine, base)
    their_base = deepcopy(theirs)
    theirs.turns += conversation("theirs 1", "").turns  # a reply still streaming
    theirs.system_prompt = "Theirs."
    store.save(cid, theirs, their_base)
    assert [t.text for t in store.load(cid).turns] == [
        "mine 1", "mine 1 reply", "mine 2", "mine 2 reply", "theirs 1", "",
    ]  # fmt: skip

    # The first writer removes its last exchange (an edit); what it never saw stays. Its system prompt
    # did not change, so the other writer's stands.
    base = deepcopy(mine)
    del mine.turns[2:]
    store.save(cid, mine, base)
    stored = store.load(cid)
    assert [t.text for t in stored.turns] == ["mine 1", "mine 1 reply", "theirs 1", ""]
    assert stored.system_prompt == "Theirs."

    # The second writer finishes its reply; its copy still has the first writer's removed turns, unchanged
    # since it opened them, so they stay removed.
    their_base = deepcopy(theirs)
    theirs.turns[-1].text = "theirs 1 reply"
    store.save(cid, theirs, their_base)
    assert [t.text for t in store.load(cid).turns] == ["mine 1", "mine 1 reply", "theirs 1", "theirs 1 reply"]

    # A writer with no base (a script) adds and updates, and deletes nothing.
    store.save(cid, conversation("from a script"))
    assert len(store.load(cid).turns) == 5


def test_a_version_1_history_gets_turn_uids(tmp_path: Path):
    path = tmp_path / "history.sqlite3"
    db = sqlite3.connect(path, isolation_level=None)
    history._create_v1(db)
    db.execute("INSERT INTO conversations (title, created, updated) VALUES ('old', 0, 0)")
    for position, (role, text) in enumerate([("user", "old question"), ("assistant", "old answer")]):
        db.execute(
            "INSERT INTO messages (conversation_id, position, role, text, created) VALUES (1, ?, ?, ?, 0)",
            (position, role, text),
        )
    db.execute("PRAGMA user_version = 1")
    db.close()
    with HistoryStore(path) as store:
        assert store.warning is None
        turns = store.load(1).turns
        assert [t.text for t in turns] == ["old question", "old answer"]
        assert len({t.uid for t in turns}) == 2 and all(len(t.uid) == 32 for t in turns)
        conv = store.load(1).to_conversation()
        base = deepcopy(conv)
        conv.turns.append(Turn("user", "new question"))
        store.save(1, conv, base)
        assert [t.text for t in store.load(1).turns] == ["old question", "old answer", "new question"]


def test_append_and_update_last_turn_while_streaming(store: HistoryStore):
    cid = store.create("stream")
    assert store.append_turn(cid, Turn("user", "Tell me a story")) == 0
    assert store.append_turn(cid, Turn("assistant", "")) == 1
    for text in ("Once", "Once upon", "Once upon a time."):
        store.update_last_turn(cid, Turn("assistant", text))
    store.update_last_turn(cid, reply("Once upon a time.", note="stopped by you"))
    turns = store.load(cid).turns
    assert [t.text for t in turns] == ["Tell me a story", "Once upon a time."]
    assert turns[1].note == "stopped by you" and turns[1].stats == STATS
    with pytest.raises(KeyError):
        store.update_last_turn(store.create("empty"), Turn("assistant", "x"))
    with pytest.raises(KeyError):
        store.append_turn(9999, Turn("user", "x"))


def test_rename_delete_and_last_opened(store: HistoryStore):
    keep = store.create("keep")
    gone = store.create("gone")
    store.save(gone, conversation("secret words here", "reply"))
    store.rename(keep, "kept, renamed")
    store.set_last_opened(gone)
    store.delete(gone)
    assert [c.title for c in store.list()] == ["kept, renamed"]
    assert store.last_opened() is None  # a deleted conversation is not restored
    assert store.search("secret") == []
    with pytest.raises(KeyError):
        store.load(gone)
    with pytest.raises(KeyError):
        store.rename(gone, "x")
    store.set_last_opened(keep)
    assert store.last_opened() == keep
    store.set_last_opened(None)
    assert store.last_opened() is None


def test_search_messages_and_titles(store: HistoryStore):
    a = store.create("GPU sizing")
    store.save(a, conversation("How big is the KV cache at 32k context?", "About 4 GiB with an f16 cache."))
    b = store.create("Recipes")
    store.save(b, conversation("A soup with 100% tomatoes_and_basil", "Simmer it."))

    hits = store.search("kv cache")
    assert [h.conversation_id for h in hits] == [a]
    assert hits[0].title == "GPU sizing"
    assert "KV cache" in hits[0].snippet

    assert [h.conversation_id for h in store.search("recipes")] == [b]  # title match
    assert [h.conversation_id for h in store.search("simmer")] == [b]  # case-insensitive
    assert store.search("100%") != []  # LIKE wildcards and FTS syntax in the query are inert
    assert store.search('"unbalanced AND (') == []
    assert store.search("") == []
    assert store.search("nothing-like-this") == []


def test_search_prefix_and_snippet_is_short(store: HistoryStore):
    cid = store.create("long")
    long_text = "word " * 200 + "needle in the haystack " + "word " * 200
    store.save(cid, conversation(long_text))
    hits = store.search("needle")
    assert len(hits) == 1
    assert "needle" in hits[0].snippet
    assert len(hits[0].snippet) <= 122
    assert hits[0].snippet.startswith("…") and hits[0].snippet.endswith("…")


def test_index_written_without_fts_is_rebuilt_when_fts_returns(tmp_path: Path):
    path = tmp_path / "history.sqlite3"
    with HistoryStore(path) as with_index:
        cid = with_index.create("t")
        with_index.save(cid, conversation("alpha"))
    with HistoryStore(path, use_fts=False) as without:  # as on an SQLite built without FTS5
        without.append_turn(cid, Turn("assistant", "bravo"))
        assert [h.conversation_id for h in without.search("bravo")] == [cid]
    with HistoryStore(path) as again:
        assert again.fts
        assert [h.conversation_id for h in again.search("bravo")] == [cid]
        assert [h.conversation_id for h in again.search("alpha")] == [cid]


# ---- files the history cannot use: each must leave a working store and say why -------------------------

GARBAGE = b"this is not an sqlite database " * 200


def _stored_history(path: Path) -> None:
    with HistoryStore(path) as store:
        cid = store.create("old chats")
        store.save(cid, conversation(*(f"message {i} " * 50 for i in range(200))))
        store._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _not_sqlite(path: Path) -> None:
    path.write_bytes(GARBAGE)


def _damaged_pages(path: Path) -> None:
    _stored_history(path)
    data = bytearray(path.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    # Scribble over the second page (the first table's b-tree root), leaving the header valid.
    data[page_size : 2 * page_size] = b"\xa5" * page_size
    path.write_bytes(bytes(data))


def _folder(path: Path) -> None:
    path.mkdir()
    (path / "something.txt").write_text("not ours")


def _from_the_future(path: Path) -> None:
    _stored_history(path)
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()


def _read_only_file(path: Path) -> None:
    _stored_history(path)
    path.chmod(0o444)


def _read_only_folder(path: Path) -> None:
    _stored_history(path)
    path.parent.chmod(0o555)


def _read_only_folder_no_file(path: Path) -> None:
    path.parent.chmod(0o555)


def _unreadable_file(path: Path) -> None:
    _stored_history(path)
    path.chmod(0)


def _folder_is_a_file(path: Path) -> None:
    path.parent.rmdir()
    path.parent.write_text("a file where the data folder should be")


def _symlink_loop(path: Path) -> None:
    path.symlink_to(path.name)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


# name -> (make it, whether a fresh file replaces it; otherwise the history lives in memory this session)
BAD_FILES: dict[str, tuple[Callable[[Path], None], bool]] = {
    "not SQLite": (_not_sqlite, True),
    "damaged pages": (_damaged_pages, True),
    "a folder": (_folder, False),
    "from a newer Tightfit": (_from_the_future, False),
    "read-only file": (_read_only_file, False),
    "read-only folder": (_read_only_folder, False),
    "read-only folder, no file yet": (_read_only_folder_no_file, False),
    "unreadable file": (_unreadable_file, False),
    "data folder is a file": (_folder_is_a_file, False),
    "symlink loop": (_symlink_loop, False),
    "FIFO": (_fifo, False),
}


@pytest.mark.parametrize("name", BAD_FILES)
def test_a_history_file_that_cannot_be_used_never_stops_the_window(tmp_path: Path, name: str):
    make, replaced = BAD_FILES[name]
    with user_folder(tmp_path) as home:
        path = home / "data" / "history.sqlite3"
        with as_user():
            path.parent.mkdir()
            make(path)
        target = path.parent if name == "data folder is a file" else path
        before = snapshot(target)
        try:
            with as_user():
                store = HistoryStore(path, busy_timeout_s=0.05)
                with store:
                    # Whatever was there, this session's chats work.
                    cid = store.create("this session")
                    store.save(cid, conversation("still works?", "yes"))
                    assert [c.title for c in store.list()] == ["this session"]
                    assert [t.text for t in store.load(cid).turns] == ["still works?", "yes"]
        finally:
            if path.parent.is_dir():
                path.parent.chmod(0o755)
        assert store.warning
        assert store.persistent is replaced
        if replaced:
            assert "moved to history.sqlite3.corrupt-" in store.warning
            (moved,) = path.parent.glob("history.sqlite3.corrupt-*[0-9]")
            assert ("file", moved.read_bytes()) == before  # never lose the user's old file
            with HistoryStore(path) as again:  # the fresh file is the history from now on
                assert [c.title for c in again.list()] == ["this session"]
        else:
            assert store.warning.startswith("Chat history is off for this session")
            assert snapshot(target) == before  # left exactly as it was
            if path.parent.is_dir():
                assert not list(path.parent.glob("*.corrupt-*"))


def test_a_locked_history_is_not_treated_as_corrupt(tmp_path: Path):
    path = tmp_path / "history.sqlite3"
    _stored_history(path)
    blocker = sqlite3.connect(path, isolation_level=None)  # e.g. a second Tightfit window mid-write
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with HistoryStore(path, busy_timeout_s=0.05) as store:
            assert not store.persistent
            assert store.warning is not None and "database is locked" in store.warning
            store.create("kept in memory")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert not list(tmp_path.glob("*.corrupt-*"))
    with HistoryStore(path) as store:
        assert store.warning is None and store.persistent
        assert [c.title for c in store.list()] == ["old chats"]


def test_writer_thread_and_reader_thread_together(tmp_path: Path):
    store = HistoryStore(tmp_path / "history.sqlite3")
    cid = store.create("busy")
    store.append_turn(cid, Turn("user", "go"))
    store.append_turn(cid, Turn("assistant", ""))
    n_updates = 300
    done = threading.Event()
    errors: list[BaseException] = []
    seen_lengths: list[int] = []

    def writer() -> None:
        try:
            text = ""
            for i in range(n_updates):
                text += f"t{i} "
                store.update_last_turn(cid, Turn("assistant", text))
                if i % 50 == 0:
                    other = store.create(f"side {i}")
                    store.save(other, conversation("side question", "side answer"))
        except BaseException as e:
            errors.append(e)
        finally:
            done.set()

    def reader() -> None:
        try:
            while not done.is_set():
                turns = store.load(cid).turns
                seen_lengths.append(len(turns[-1].text))
                store.list(limit=10)
                store.search("side")
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    assert errors == []
    assert seen_lengths == sorted(seen_lengths)  # the reader never saw a reply go backwards
    with HistoryStore(tmp_path / "history.sqlite3") as reopened:
        assert reopened.load(cid).turns[-1].text.endswith(f"t{n_updates - 1} ")
        assert len(reopened.list()) == 1 + n_updates // 50


def test_search_shows_the_passage_that_matched_near_its_start(tmp_path: Path) -> None:
    with HistoryStore(tmp_path / "h.sqlite3") as store:
        cid = store.create("Lighthouses", "")
        long_text = "word " * 200 + "the lighthouse keeper climbed the stairs " + "word " * 200
        store.save(cid, Conversation(turns=[Turn("user", "Tell me about lighthouses"), Turn("assistant", long_text)]))
        (hit,) = store.search("keeper")
        assert hit.snippet.startswith("…") and "lighthouse keeper climbed" in hit.snippet[:40]
        (title_and_text,) = store.search("lighthouse")
        assert title_and_text.snippet != "Lighthouses"  # the passage, not the title again
