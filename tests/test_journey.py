"""The journey: every load, reply speed and benchmark row kept in SQLite, grouped into the user's own staged
table (the field notes' 4 → 8 → 35 → 64 tok/s), exported, shown in a view with editable notes, printed by
`tightfit journey`."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
from dataclasses import fields, replace
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog

from gui.cli import main
from gui.core import protocol as p
from gui.core.gguf_reader import read_model
from gui.core.journey import (
    CSV_COLUMNS,
    MEMORY_ONLY_SETTINGS,
    MIN_DECODE_TOKENS,
    NOTE_COLUMN,
    SPEED_SETTINGS,
    STAGE_COLUMNS,
    BuildInfo,
    JourneyData,
    LoadRecord,
    ReplyRecord,
    bench_record,
    configurations,
    load_record,
    stages,
    to_csv,
    to_json,
    to_markdown,
    what_changed,
)
from gui.core.load_state import LoadState, Phase
from gui.core.params import ALL_LAYERS, LoadSettings
from gui.core.planner import Device, plan
from gui.services.history import default_history_path
from gui.services.journey import SCHEMA_VERSION, JourneyStore, default_journey_path
from gui.ui.journey_view import JourneyView

V100 = "Tesla V100 SXM2 16GB"
CUDA = BuildInfo("CUDA", "0.3.16", (70,), True)
CPU_BUILD = BuildInfo("CPU", "0.3.16", (), False)
Q4 = "/models/Qwen3.5-27B-Q4_K_M.gguf"
Q3 = "/models/Qwen3.5-27B-Q3_K_S.gguf"
TIMEOUT = 10_000


def a_load(
    uid: str,
    when: float,
    model: str = Q4,
    *,
    layers: int = 40,
    n_layer: int = 64,
    build: BuildInfo = CUDA,
    card: str = V100,
    ceiling: float | None = 69.0,
    **settings: object,
) -> LoadRecord:
    values = LoadSettings(n_gpu_layers=layers, **settings).to_dict()  # type: ignore[arg-type]
    return LoadRecord(uid, when, model, Path(model).name, values, build, card, 1500.0, layers, n_layer, ceiling)


def replies(uid: str, when: float, *rates: float, n_gen: int = 128, ceiling: float | None = 69.0) -> list[ReplyRecord]:
    return [ReplyRecord(when + i, uid, 300, 300, n_gen, 400.0, rate, ceiling) for i, rate in enumerate(rates, 1)]


def seed_story() -> JourneyData:
    """The field notes' staged table, as the window would have recorded it."""
    loads = [
        a_load("s1", 100, layers=40, n_threads=16, ceiling=14.0),
        a_load("s2", 200, layers=48, n_threads=8, ceiling=17.0),
        a_load("s3", 300, Q3, layers=60, n_threads=8),
        a_load("s4", 400, Q3, layers=60, n_threads=8, cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on"),
    ]
    return JourneyData(
        loads=loads,
        replies=[
            *replies("s1", 100, 4.0, 3.8, 4.2, ceiling=14.0),
            *replies("s2", 200, 8.0, 7.9, ceiling=17.0),
            *replies("s3", 300, 35.0, 34.0, 36.0),
            *replies("s4", 400, 64.0, 63.0, 65.0, 64.5),
        ],
    )


# ---- declarations --------------------------------------------------------------------------------


def test_every_load_setting_is_either_about_speed_or_only_about_memory() -> None:
    names = {f.name for f in fields(LoadSettings)}
    assert set(SPEED_SETTINGS) | set(MEMORY_ONLY_SETTINGS) == names
    assert not set(SPEED_SETTINGS) & set(MEMORY_ONLY_SETTINGS)


# ---- grouping and what changed -------------------------------------------------------------------


def test_the_seed_story_becomes_its_staged_table() -> None:
    staged = stages(seed_story())
    assert [s.number for s in staged] == [1, 2, 3, 4]
    assert [s.configuration.typical_tok_s for s in staged] == [4.0, 7.95, 35.0, 64.25]
    assert [s.configuration.best_tok_s for s in staged] == [4.2, 8.0, 36.0, 65.0]
    assert [s.configuration.runs for s in staged] == [3, 2, 3, 4]
    assert staged[0].changed == (
        "baseline: GPU layers 40, context 4096, batch 512, micro-batch 512, threads 16, "
        f"flash attention auto, on {V100}, CUDA build 0.3.16 for 7.0"
    )
    assert staged[1].changed == "GPU layers 40 → 48; threads 16 → 8"
    assert staged[2].changed == "model Qwen3.5-27B-Q4_K_M.gguf → Qwen3.5-27B-Q3_K_S.gguf; GPU layers 48 → 60"
    assert staged[3].changed == "K cache type f16 → q8_0; V cache type f16 → q8_0; flash attention auto → on"
    # "64 tok/s is 93% of it": the typical speed against the planner's ceiling.
    assert staged[3].configuration.pct_of_ceiling == pytest.approx(100 * 64.25 / 69.0)
    assert round(staged[3].configuration.pct_of_ceiling or 0) == 93


def test_a_configuration_is_its_first_use_and_gathers_every_later_run() -> None:
    data = seed_story()
    back = a_load("again", 500, layers=40, n_threads=16, ceiling=14.0)  # stage 1's settings, loaded again later
    data = JourneyData(loads=[*data.loads, back], replies=[*data.replies, *replies("again", 500, 5.0, 5.0)])
    staged = stages(data)
    assert len(staged) == 4
    first = staged[0].configuration
    assert first.loads == 2 and first.runs == 5
    assert first.decode_tok_s == (4.0, 3.8, 4.2, 5.0, 5.0)
    assert first.typical_tok_s == 4.2 and first.best_tok_s == 5.0


def test_short_replies_and_replies_of_unknown_loads_measure_nothing() -> None:
    load = a_load("l", 10)
    data = JourneyData(
        loads=[load],
        replies=[
            ReplyRecord(11, "l", 20, 20, MIN_DECODE_TOKENS - 1, 100.0, 500.0, None),  # too short to be a rate
            ReplyRecord(12, "l", 20, 20, 64, 100.0, 0.0, None),  # no rate reported
            ReplyRecord(13, "gone", 20, 20, 64, 100.0, 999.0, None),  # its load was pruned
            *replies("l", 20, 30.0),
        ],
    )
    (only,) = configurations(data)
    assert only.decode_tok_s == (30.0,)
    # A load with no measured speed is not a stage: the table is of speeds.
    assert configurations(JourneyData(loads=[load])) == []


def test_gpu_layers_count_as_the_engine_placed_them() -> None:
    # --ngl 999 and --ngl 65 of a 64-block model put every layer on the card: one configuration.
    all_layers = a_load("a", 1, layers=65)
    also_all = LoadRecord(
        "b", 2, Q4, Path(Q4).name, LoadSettings(n_gpu_layers=ALL_LAYERS).to_dict(), CUDA, V100, 900.0, 65, 64, 69.0
    )
    data = JourneyData(loads=[all_layers, also_all], replies=[*replies("a", 1, 60.0), *replies("b", 2, 62.0)])
    (config,) = configurations(data)
    assert config.settings["n_gpu_layers"] == 65 and config.runs == 2
    assert "GPU layers 65 (all)" in stages(data)[0].changed


def test_engine_and_card_changes_are_said_in_words() -> None:
    cpu = a_load("cpu", 1, layers=0, build=CPU_BUILD, card="CPU", ceiling=None)
    gpu = a_load("gpu", 2, layers=65)
    data = JourneyData(loads=[cpu, gpu], replies=[*replies("cpu", 1, 4.5, ceiling=None), *replies("gpu", 2, 60.0)])
    second = stages(data)[1]
    assert second.changed == (
        f"GPU layers 0 → 65 (all); card CPU → {V100}; engine CPU build 0.3.16 → CUDA build 0.3.16 for 7.0"
    )
    assert stages(data)[0].configuration.pct_of_ceiling is None  # no ceiling known: no share of it


def test_same_name_in_another_folder_is_another_model_file() -> None:
    one = a_load("x", 1, "/a/model.gguf")
    other = a_load("y", 2, "/b/model.gguf")
    data = JourneyData(loads=[one, other], replies=[*replies("x", 1, 10.0), *replies("y", 2, 11.0)])
    assert stages(data)[1].changed == "model file /a/model.gguf → /b/model.gguf"
    assert what_changed(configurations(data)[0], configurations(data)[0]).startswith("no change")


def test_benchmark_rows_join_the_configuration_of_their_settings() -> None:
    load = a_load("l", 10, layers=65)
    row = {
        "test": "tg128",
        "n_prompt": 0,
        "n_gen": 128,
        "n_depth": 0,
        "avg_ts": 66.0,
        "stddev_ts": 0.4,
        "model_path": Q4,
        "settings": LoadSettings(n_gpu_layers=ALL_LAYERS).to_dict(),  # no n_layer: taken from the load of the file
        "backend": "CUDA",
        "llama_cpp_python": "0.3.16",
        "cuda_archs": [70],
        "gpu_offload": True,
        "card": V100,
        "ceiling_tok_s": 70.0,
    }
    tg = bench_record(row, now=20)
    pp = bench_record({**row, "test": "pp512", "n_prompt": 512, "n_gen": 0, "avg_ts": 900.0}, now=21)
    deep = bench_record({**row, "test": "tg128@d4096", "n_depth": 4096, "avg_ts": 40.0}, now=22)
    data = JourneyData(loads=[load], replies=replies("l", 10, 60.0), bench=[tg, pp, deep])
    (config,) = configurations(data)
    assert config.decode_tok_s == (60.0, 66.0)  # the tg at depth is slower by design: not a decode figure
    assert config.best_prompt_tok_s == 900.0
    assert config.ceiling_tok_s == 70.0  # the latest ceiling given


def test_a_benchmark_row_is_read_whichever_way_it_spells_its_settings() -> None:
    flat = bench_record({"test": "tg128", "n_gen": 128, "avg_ts": "12.5", "n_threads": 8, "model": Q3}, now=1)
    assert flat.settings == {"n_threads": 8} and flat.model_name == "Qwen3.5-27B-Q3_K_S.gguf" and flat.avg_ts == 12.5
    build = p.EngineBuild("CPU", False, "0.3.16", "AVX2 = 1")
    on_cpu = bench_record({"test": "tg128", "n_gen": 128, "avg_ts": 5}, now=1, model_path=Q4, build=build, card=V100)
    assert on_cpu.card == "CPU" and on_cpu.build == CPU_BUILD and on_cpu.model_path == Q4
    with pytest.raises(ValueError, match="test name and avg_ts"):
        bench_record({"test": "tg128", "avg_ts": "fast"}, now=1)


def test_a_load_record_is_made_from_the_windows_load_state(demo_model: Path) -> None:
    header = read_model(demo_model)
    settings = LoadSettings(n_ctx=1024, n_threads=2)
    card = Device(V100, 16160.0, 16160.0, bandwidth_gbs=900.0, sm_count=80, compute_capability="7.0")
    planned = plan(header, settings, (card,))
    build = p.EngineBuild("CUDA", True, "0.3.16", "CUDA : ARCHS = 700", cuda_archs=(70,))
    loaded = p.Loaded(str(demo_model), 1024, 30, ALL_LAYERS, 812.0, "model")
    state = LoadState(Phase.LOADED, demo_model, settings, header, planned, build, loaded)
    record = load_record(state, now=5.0)
    assert record.card == V100 and record.layers_on_gpu == 31 and record.n_layer == 30
    assert record.ceiling_tok_s == planned.predicted_tg_tok_s and record.ceiling_tok_s
    assert record.build == CUDA and record.settings == settings.to_dict() and record.load_ms == 812.0
    # A plan for a card the machine does not have: neither its card nor its ceiling is this load's.
    elsewhere = load_record(state, here=False, now=5.0)
    assert elsewhere.card == "GPU" and elsewhere.ceiling_tok_s is None
    # A build without GPU offload ran every layer on the CPU, whatever the slider said.
    on_cpu = load_record(replace(state, build=p.EngineBuild("CPU", False, "0.3.16", "")), now=5.0)
    assert on_cpu.card == "CPU" and on_cpu.layers_on_gpu == 0
    with pytest.raises(ValueError):
        load_record(LoadState(), now=5.0)


# ---- exports ---------------------------------------------------------------------------------------


def test_markdown_is_the_seeds_table_with_notes_that_cannot_break_it() -> None:
    data = seed_story()
    key = configurations(data)[3].key
    noted = JourneyData(data.loads, data.replies, notes={key: "numactl | <b>near</b> the\nlimit"})
    text = to_markdown(stages(noted))
    lines = text.splitlines()
    assert lines[0] == "| " + " | ".join(STAGE_COLUMNS) + " |"
    assert lines[1].startswith("|---:|---|---|---:|")
    body = lines[2:6]
    assert len(body) == 4 and lines[6] == ""
    assert body[1] == (
        "| 2 | Qwen3.5-27B-Q4_K_M.gguf | GPU layers 40 → 48; threads 16 → 8 | 8.0 | 8.0 | 47% | 400.0 | 2 |  |"
    )
    assert body[3].endswith("| 64.2 | 65.0 | 93% | 400.0 | 4 | numactl \\| \\<b\\>near\\</b\\> the limit |")


def test_csv_has_a_column_per_speed_setting_and_keeps_formulas_as_text() -> None:
    data = seed_story()
    key = configurations(data)[0].key
    staged = stages(JourneyData(data.loads, data.replies, notes={key: "=HYPERLINK(evil)"}))
    rows = list(csv.DictReader(io.StringIO(to_csv(staged))))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["stage"] for r in rows] == ["1", "2", "3", "4"]
    assert rows[0]["note"] == "'=HYPERLINK(evil)"
    assert rows[3]["typical_tok_s"] == "64.25" and rows[3]["pct_of_ceiling"] == "93.1"
    assert rows[3]["cache_type_k"] == "q8_0" and rows[3]["use_mmap"] == "on" and rows[1]["n_threads"] == "8"
    assert rows[2]["model_path"] == Q3 and rows[0]["engine"] == "CUDA build 0.3.16 for 7.0"


def test_json_is_a_list_of_stages() -> None:
    out = json.loads(to_json(stages(seed_story())))
    assert [s["stage"] for s in out] == [1, 2, 3, 4]
    assert out[3]["settings"]["flash_attn"] == "on" and out[3]["best_tok_s"] == 65.0
    assert out[0]["build"] == {"backend": "CUDA", "llama_cpp_python": "0.3.16", "cuda_archs": [70], "gpu_offload": True}


# ---- the store -------------------------------------------------------------------------------------


def fill(store: JourneyStore, data: JourneyData) -> None:
    for load in data.loads:
        store.add_load(load)
    for reply in data.replies:
        store.add_reply(reply)
    for row in data.bench:
        store.add_bench_row(row)


def test_the_store_keeps_everything_in_a_wal_file_beside_the_history(tmp_path: Path) -> None:
    assert default_journey_path().parent == default_history_path().parent
    db = tmp_path / "journey.sqlite3"
    data = seed_story()
    row = bench_record({"test": "tg128", "n_gen": 128, "avg_ts": 66.0, "model_path": Q3, "extra": {"x": 1}}, now=450)
    with JourneyStore(db) as store:
        assert store.persistent and store.warning is None
        fill(store, JourneyData(data.loads, data.replies, [row]))
        store.set_note(configurations(data)[1].key, "threads = physical cores", now=1.0)
    with JourneyStore(db) as again:
        stored = again.snapshot()
    assert stored.loads == data.loads and stored.replies == data.replies and stored.bench == [row]
    assert stored.bench[0].row["extra"] == {"x": 1}
    assert [s.note for s in stages(stored)][:2] == ["", "threads = physical cores"]
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_an_empty_note_removes_it(tmp_path: Path) -> None:
    with JourneyStore(tmp_path / "j.sqlite3") as store:
        store.set_note("k", "first", now=1.0)
        store.set_note("k", "second", now=2.0)
        assert store.notes() == {"k": "second"}
        store.set_note("k", "  ", now=3.0)
        assert store.notes() == {}


def test_the_store_is_bounded_and_a_reply_goes_with_its_load(tmp_path: Path) -> None:
    limits = {"loads": 3, "replies": 5, "bench_rows": 2, "notes": 2}
    with JourneyStore(tmp_path / "j.sqlite3", limits=limits) as store:
        for i in range(6):
            store.add_load(a_load(f"l{i}", i))
            store.add_reply(ReplyRecord(i + 0.5, f"l{i}", 10, 10, 64, 100.0, 10.0 + i, None))
            store.add_bench_row(bench_record({"test": "tg128", "n_gen": 128, "avg_ts": i + 1.0}, now=i))
            store.set_note(f"k{i}", "n", now=float(i))
        kept = store.snapshot()
        assert [load.uid for load in kept.loads] == ["l3", "l4", "l5"]
        assert [r.load_uid for r in kept.replies] == ["l3", "l4", "l5"]  # the others' loads were pruned
        assert [r.avg_ts for r in kept.bench] == [5.0, 6.0]
        assert sorted(kept.notes) == ["k4", "k5"]


def test_a_writer_thread_and_a_reader_share_the_store(tmp_path: Path) -> None:
    with JourneyStore(tmp_path / "j.sqlite3") as store:
        store.add_load(a_load("l", 1))
        errors: list[BaseException] = []

        def write(offset: int) -> None:
            try:
                for i in range(50):
                    store.add_reply(ReplyRecord(offset + i, "l", 10, 10, 64, 100.0, 20.0, None))
            except BaseException as exc:
                errors.append(exc)

        writers = [threading.Thread(target=write, args=(n * 100,)) for n in range(3)]
        for t in writers:
            t.start()
        seen = [len(store.snapshot().replies) for _ in range(20)]
        for t in writers:
            t.join()
        assert not errors
        assert seen == sorted(seen)  # reads are consistent snapshots while the writers go on
        assert store.counts()["replies"] == 150


@pytest.mark.parametrize("kind", ["garbage", "newer", "folder"])
def test_a_file_it_cannot_use_is_left_alone_with_a_message(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "journey.sqlite3"
    if kind == "garbage":
        db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    elif kind == "newer":
        with sqlite3.connect(db) as raw:
            raw.execute("CREATE TABLE future (x)")
            raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
        raw.close()
    else:
        db.mkdir()
    before = db.read_bytes() if db.is_file() else None
    with JourneyStore(db) as store:
        assert not store.persistent
        assert store.warning is not None and str(db) in store.warning and "left as it is" in store.warning
        if kind == "newer":
            assert "newer Tightfit" in store.warning
        # The session goes on in memory.
        fill(store, seed_story())
        assert len(stages(store.snapshot())) == 4
    if before is not None:
        assert db.read_bytes() == before
    assert sorted(f.name for f in tmp_path.iterdir()) == ["journey.sqlite3"]


# ---- the command -----------------------------------------------------------------------------------


def test_tightfit_journey_prints_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "journey.sqlite3"
    with JourneyStore(db) as store:
        fill(store, seed_story())
    assert main(["journey", "--file", str(db)]) == 0
    text = capsys.readouterr().out.splitlines()
    assert text[0].split() == ["stage", "model", "what", "changed", "tok/s", "best", "tok/s", "%", "of", "ceiling",
                               "prompt", "tok/s", "runs", "note"]  # fmt: skip
    assert len(text) == 5 and "GPU layers 40 → 48; threads 16 → 8" in text[2] and "64.2" in text[4]
    assert main(["journey", "--file", str(db), "--json"]) == 0
    assert [s["stage"] for s in json.loads(capsys.readouterr().out)] == [1, 2, 3, 4]
    assert main(["journey", "--file", str(db), "--md"]) == 0
    assert capsys.readouterr().out.startswith("| stage | model | what changed |")
    assert main(["journey", "--file", str(db), "--csv"]) == 0
    assert len(list(csv.reader(io.StringIO(capsys.readouterr().out)))) == 5


def test_tightfit_journey_without_a_file_creates_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "none" / "journey.sqlite3"
    assert main(["journey", "--file", str(db)]) == 0
    assert "Nothing recorded yet" in capsys.readouterr().out
    assert main(["journey", "--file", str(db), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []
    assert not db.parent.exists()


def test_tightfit_journey_on_a_damaged_file_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "journey.sqlite3"
    db.write_bytes(b"not a database at all" * 100)
    assert main(["journey", "--file", str(db), "--md"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tightfit journey: error: ") and str(db) in err and err.count("\n") == 1
    assert db.read_bytes() == b"not a database at all" * 100


def test_md_csv_and_json_are_one_choice(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["journey", "--md", "--csv"])
    assert "not allowed with argument" in capsys.readouterr().err


# ---- the view and the recorder -----------------------------------------------------------------------


@pytest.fixture
def view(qtbot, tmp_path: Path):
    store = JourneyStore(tmp_path / "journey.sqlite3")
    fill(store, seed_story())
    widget = JourneyView(store)
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.refreshed, timeout=TIMEOUT):
        widget.refresh()
    yield widget
    widget.shutdown()


def cells(view: JourneyView, row: int) -> list[str]:
    return [view.table.item(row, c).text() for c in range(view.table.columnCount())]


def test_the_view_shows_the_staged_table(view: JourneyView) -> None:
    assert view.table.rowCount() == 4
    assert cells(view, 1) == [
        "2", "Qwen3.5-27B-Q4_K_M.gguf", "GPU layers 40 → 48; threads 16 → 8", "8.0", "8.0", "47%", "400.0", "2", ""
    ]  # fmt: skip
    assert view.summary.text() == "4 configurations, 12 measured runs. Fastest: stage 4, 64.2 tok/s typical."
    assert view.summary.textFormat() == Qt.TextFormat.PlainText
    editable = [bool(view.table.item(0, c).flags() & Qt.ItemFlag.ItemIsEditable) for c in range(len(STAGE_COLUMNS))]
    assert editable == [c == NOTE_COLUMN for c in range(len(STAGE_COLUMNS))]
    assert not view.notice.isVisibleTo(view)


def test_a_note_typed_in_the_view_is_kept(qtbot, view: JourneyView, tmp_path: Path) -> None:
    key = view.stages[3].key
    with qtbot.waitSignal(view.note_saved, timeout=TIMEOUT) as saved:
        view.table.item(3, NOTE_COLUMN).setText("  numactl to the GPU's node  ")
    assert saved.args == [key]
    with qtbot.waitSignal(view.refreshed, timeout=TIMEOUT):
        view.refresh()
    assert view.table.item(3, NOTE_COLUMN).text() == "numactl to the GPU's node"
    with JourneyStore(tmp_path / "journey.sqlite3") as other:  # a second reader: it is on disk
        assert other.notes() == {key: "numactl to the GPU's node"}


def test_export_writes_the_file_off_the_ui_thread(qtbot, view: JourneyView, tmp_path: Path, monkeypatch) -> None:
    md = tmp_path / "journey.md"
    with qtbot.waitSignal(view.exported, timeout=TIMEOUT):
        view.export_markdown(md)
    assert md.read_text(encoding="utf-8") == to_markdown(view.stages)
    assert view.status.text() == f"Exported 4 stages to {md}."
    # The button asks where, then writes there.
    target = tmp_path / "journey.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: (str(target), ""))
    with qtbot.waitSignal(view.exported, timeout=TIMEOUT) as written:
        view.csv_button.click()
    assert written.args == [str(target)]
    assert list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"))))[4][0] == "4"
    # Cancelling the dialog writes nothing.
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *_a, **_k: ("", ""))
    view.markdown_button.click()
    assert sorted(f.name for f in tmp_path.iterdir() if f.suffix in (".md", ".csv")) == ["journey.csv", "journey.md"]


def test_an_export_that_fails_says_why_and_leaves_nothing(qtbot, view: JourneyView, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "journey.md"
    with qtbot.waitSignal(view.failed, timeout=TIMEOUT) as failed:
        view.export_markdown(target)
    assert failed.args[0].startswith(f"Cannot export the journey to {target}: ")
    assert view.status.text() == failed.args[0] and view.status.isVisibleTo(view)
    assert not target.parent.exists()


def test_the_recorder_turns_window_events_into_stages(qtbot, tmp_path: Path, demo_model: Path) -> None:
    store = JourneyStore(tmp_path / "journey.sqlite3")
    widget = JourneyView(store)
    qtbot.addWidget(widget)
    header = read_model(demo_model)
    settings = LoadSettings(n_ctx=1024, n_threads=2)
    planned = plan(header, settings, (), ram_bandwidth_gbs=20.0)
    assert planned.predicted_tg_tok_s
    build = p.EngineBuild("CPU", False, "0.3.16", "AVX2 = 1")
    loaded = p.Loaded(str(demo_model), 1024, 30, ALL_LAYERS, 300.0, "model")
    state = LoadState(Phase.LOADED, demo_model, settings, header, planned, build, loaded)
    stats = p.ReplyStats(40, 40, 32, 50.0, 40.0, 310.0, 100.0, "stop")
    widget.show()  # shown: what is recorded appears without a Refresh
    recorder = widget.recorder
    written: list[None] = []
    recorder.recorded.connect(lambda: written.append(None))
    # A reply before its load was recorded records the load first; a second record_load is the same load.
    recorder.record_reply(stats, state)
    qtbot.waitUntil(lambda: len(written) == 2, timeout=TIMEOUT)
    assert recorder.record_load(state) is recorder.record_load(state)
    with qtbot.waitSignal(recorder.recorded, timeout=TIMEOUT):
        recorder.record_bench_row(
            {"test": "tg128", "n_gen": 128, "avg_ts": 120.0, "settings": settings.to_dict()}, state
        )
    with qtbot.waitSignal(recorder.failed, timeout=TIMEOUT) as bad:
        recorder.record_bench_row({"avg_ts": 1.0}, state)
    assert "benchmark row not recorded" in bad.args[0]
    recorder.record_reply(stats, LoadState())  # no load (the engine died meanwhile): nothing to record
    qtbot.waitUntil(lambda: len(widget.stages) == 1 and widget.stages[0].configuration.runs == 2, timeout=TIMEOUT)
    assert widget.table.rowCount() == 1  # the reply and the row are the same configuration: the CPU, as it ran
    (stage,) = widget.stages
    assert stage.configuration.card == "CPU" and stage.configuration.decode_tok_s == (100.0, 120.0)
    assert stage.configuration.ceiling_tok_s == planned.predicted_tg_tok_s
    widget.shutdown()
    with JourneyStore(tmp_path / "journey.sqlite3") as again:
        assert again.counts() == {"loads": 1, "replies": 1, "bench_rows": 1, "notes": 0}


def test_a_view_on_a_file_it_cannot_use_says_so(qtbot, tmp_path: Path) -> None:
    db = tmp_path / "journey.sqlite3"
    db.write_bytes(b"\x00" * 512)
    store = JourneyStore(db)
    widget = JourneyView(store)
    qtbot.addWidget(widget)
    with qtbot.waitSignal(widget.failed, timeout=TIMEOUT) as failed:
        pass
    assert str(db) in failed.args[0]
    assert widget.notice.isVisibleTo(widget) and widget.notice.text() == store.warning
    with qtbot.waitSignal(widget.refreshed, timeout=TIMEOUT):
        widget.refresh()
    assert widget.table.rowCount() == 0 and "Nothing measured yet" in widget.summary.text()
    widget.shutdown()
    assert db.read_bytes() == b"\x00" * 512
