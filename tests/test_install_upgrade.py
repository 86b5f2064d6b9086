"""An upgrade keeps the chat history: a history file written by Tightfit 0.1.0 opens whole in this version.

tests/data/history-0.1.0.sqlite3 was written by 0.1.0's own HistoryStore (schema 2): two conversations, one with
a system prompt, reply statistics, the model file, load and sampling settings and a note, one with non-ASCII
text, and the conversation open at close. (The settings file's counterpart is in test_settings_store.py.)
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from gui.core.params import LoadSettings
from gui.core.protocol import ReplyStats
from gui.services.history import SCHEMA_VERSION, HistoryStore

FIXTURE = Path(__file__).parent / "data" / "history-0.1.0.sqlite3"
BIG = LoadSettings(
    n_gpu_layers=40, n_ctx=16384, n_batch=1024, n_ubatch=256, n_threads=8, n_parallel=2, cache_type_k="q8_0",
    cache_type_v="q8_0", flash_attn="on", use_mmap=False, swa_full=True, n_cpu_moe=4, cpu_moe=False,
    n_outputs_max=2, kv_unified=True, op_offload=False,
)  # fmt: skip


@pytest.fixture
def history_0_1_0(tmp_path: Path) -> Path:
    """A copy (opening may migrate it; the committed file stays as 0.1.0 wrote it)."""
    path = tmp_path / "history.sqlite3"
    shutil.copyfile(FIXTURE, path)
    return path


def _version(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        return int(db.execute("PRAGMA user_version").fetchone()[0])
    finally:
        db.close()


def test_the_fixture_is_a_0_1_0_history() -> None:
    assert _version(FIXTURE) == 2


@pytest.mark.parametrize("use_fts", [None, False])
def test_a_0_1_0_history_opens_whole(history_0_1_0: Path, use_fts: bool | None) -> None:
    with HistoryStore(history_0_1_0, use_fts=use_fts) as store:
        assert store.persistent and store.warning is None
        listed = {c.title: c for c in store.list()}
        assert set(listed) == {"Fit a 27B on a V100", "Ünïcode ✓ title"}
        first = store.load(listed["Fit a 27B on a V100"].id)
        assert first.system_prompt == "You are terse."
        assert [(t.role, t.text) for t in first.turns] == [
            ("user", "Which quant fits 16 GB?"),
            ("assistant", "Q4_K_M with 40 layers on the GPU."),
            ("user", "And the context?"),
            ("assistant", "16k, with q8_0 cache."),
        ]
        reply = first.turns[1]
        assert reply.stats == ReplyStats(31, 31, 12, 41.5, 38.0, 120.0, 95.2, "stop")
        assert reply.model_file == "Qwen3-27B-Q4_K_M.gguf"
        assert reply.settings is not None and LoadSettings.from_dict(reply.settings) == BIG
        assert reply.sampling == {"temperature": 0.2, "seed": 42}
        assert first.turns[3].note == "stopped by you"
        assert len({t.uid for t in first.turns}) == 4
        second = store.load(listed["Ünïcode ✓ title"].id)
        assert [t.text for t in second.turns] == ["héllo — 日本語"]
        assert store.last_opened() == first.id
        assert [hit.conversation_id for hit in store.search("quant fits")] == [first.id]
    assert _version(history_0_1_0) == SCHEMA_VERSION


def test_a_0_1_0_history_takes_new_turns(history_0_1_0: Path) -> None:
    with HistoryStore(history_0_1_0) as store:
        first = next(c for c in store.list() if c.title == "Fit a 27B on a V100")
        conversation = store.load(first.id).to_conversation()
        conversation.add_user("Thanks")
        store.save(first.id, conversation)
    with HistoryStore(history_0_1_0) as again:
        assert [t.text for t in again.load(first.id).turns][-1] == "Thanks"
