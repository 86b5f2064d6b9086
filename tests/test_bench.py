"""`tightfit bench`: the lists and their product, the planner's skip rule, reloads only where a setting needs one,
bad input in one line, a stopped run that keeps its rows; and llama-bench's tests on the real engine (the rows'
schema and formats, threads changed without a reload, a Stop between repetitions). No timing is asserted:
bench/llama_bench_compare.py measures speed against llama-bench."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import queue
from pathlib import Path
from typing import Any

import pytest
from fake_engine import FakeEngine
from model_shapes import SHAPES, write_shape

from gui.cli import main
from gui.commands.bench import BenchSweep
from gui.core import protocol as p
from gui.core.bench import (
    REPETITIONS,
    ROW_KEYS,
    BenchRow,
    BenchTest,
    Job,
    bench_tests,
    context_for,
    count_loads,
    format_csv,
    format_markdown,
    needs_reload,
    plan_jobs,
    sweep_grid,
    time_summary,
)
from gui.core.gguf_reader import read_model
from gui.core.params import SPECS_BY_KEY, LoadSettings
from gui.core.planner import Device
from gui.core.specs import parse_value_list
from gui.services.engine_client import SyncEngine

BASE = LoadSettings(n_threads=2, n_ctx=1024)


# ---- lists, tests and the grid -----------------------------------------------------------------


def test_lists_are_parsed_by_their_declarations() -> None:
    assert parse_value_list(SPECS_BY_KEY["n_gpu_layers"], "40,48,999") == [40, 48, 999]
    assert parse_value_list(SPECS_BY_KEY["n_threads"], " 4, 8 ,4") == [4, 8]  # spaces and repeats
    assert parse_value_list(SPECS_BY_KEY["flash_attn"], "on,off") == ["on", "off"]
    assert parse_value_list(SPECS_BY_KEY["use_mmap"], "on,off") == [True, False]
    assert parse_value_list(SPECS_BY_KEY["cache_type_k"], "f16,q8_0") == ["f16", "q8_0"]
    assert parse_value_list(SPECS_BY_KEY["tensor_split"], "3/1,1/1") == ["3/1", "1/1"]  # one split: "/" within
    for spec, text, words in [
        ("n_threads", "4,x", "'x' is not a whole number"),
        ("n_gpu_layers", "-5", "between 0 and 999"),
        ("n_threads", "", "no value"),
        ("n_threads", "4,,8", "empty item"),
        ("flash_attn", "on,maybe", "one of auto, on, off"),
        ("use_mmap", "perhaps", "not on or off"),
        ("tensor_split", "3/1,3/x", "'x' is not a number"),
    ]:
        with pytest.raises(ValueError, match=words) as caught:
            parse_value_list(SPECS_BY_KEY[spec], text)
        assert str(caught.value).startswith(SPECS_BY_KEY[spec].flag + ": ")


def test_tests_follow_llama_bench_names_and_order() -> None:
    tests = bench_tests([512], [128], [0, 4096])
    assert [t.name for t in tests] == ["pp512", "tg128", "pp512@d4096", "tg128@d4096"]
    assert [t.name for t in bench_tests([0], [64])] == ["tg64"]
    assert BenchTest(512, 128).name == "pp512+tg128"
    with pytest.raises(ValueError, match="nothing to measure"):
        bench_tests([0], [0])
    assert context_for(tests) == 4608  # the longest test: 4096 + 512
    assert context_for([BenchTest(16, 0)]) == 256


def test_the_grid_is_the_product_with_threads_varying_fastest() -> None:
    configs = sweep_grid(BASE, {"n_threads": [1, 2], "n_gpu_layers": [40, 999], "flash_attn": ["on", "off"]})
    assert len(configs) == 8 and not any(c.invalid for c in configs)
    seen = [(c.settings.n_gpu_layers, c.settings.flash_attn, c.settings.n_threads) for c in configs]
    assert seen[:4] == [(40, "on", 1), (40, "on", 2), (40, "off", 1), (40, "off", 2)]
    assert len(set(seen)) == 8
    assert count_loads(c.settings for c in configs) == 4  # threads change without a reload
    assert not needs_reload(BASE, BASE.with_values(n_threads=7))
    assert needs_reload(BASE, BASE.with_values(n_batch=256)) and needs_reload(None, BASE)


def test_a_combination_the_settings_refuse_is_kept_with_the_reason() -> None:
    configs = sweep_grid(BASE, {"n_batch": [256, 512], "n_ubatch": [512]})
    assert configs[0].invalid == "Micro-batch (512) cannot exceed batch (256)"
    assert not configs[1].invalid
    # Without a list of micro-batches, a smaller batch is its own micro-batch, as llama.cpp has it.
    (small, big) = sweep_grid(BASE, {"n_batch": [128, 1024]})
    assert (small.settings.n_ubatch, big.settings.n_ubatch) == (128, 512) and not small.invalid


# ---- the planner's skip rule ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 27B-shaped header-only file: planned, never loaded."""
    return write_shape(tmp_path_factory.mktemp("m") / "Qwen3.5-27B-Q4_K_M.gguf", SHAPES["qwen35-27b"])


def test_what_will_not_fit_is_skipped_with_the_reason(big_model: Path) -> None:
    header = read_model(big_model)
    card = [Device("Small GPU", 4096.0, 4096.0, bandwidth_gbs=300.0)]
    configs = sweep_grid(BASE, {"n_gpu_layers": [0, 999]})
    none_on_gpu, all_on_gpu = plan_jobs(header, configs, card, 1024.0, 50.0, anyway=False)
    assert not none_on_gpu.skip and none_on_gpu.ceiling_tok_s  # nothing on the card: fits, at RAM speed
    assert all_on_gpu.skip.startswith("will not fit: Small GPU needs ") and "--anyway" in all_on_gpu.skip
    assert all_on_gpu.ceiling_tok_s and all_on_gpu.ceiling_tok_s > none_on_gpu.ceiling_tok_s
    (anyway,) = plan_jobs(header, configs[1:], card, 1024.0, 50.0, anyway=True)
    assert not anyway.skip


def test_the_cli_skips_without_starting_an_engine(big_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", str(big_model), "--vram-mib", "4096", "--ram-gbs", "50", "--reps", "2", "--json"])
    out = capsys.readouterr()
    assert code == 0 and out.err == ""
    rows = json.loads(out.out)
    assert [r["test"] for r in rows] == ["pp512", "tg128"]  # llama-bench's defaults
    assert all(r["skipped"] and r["reason"].startswith("will not fit") and r["avg_ts"] is None for r in rows)
    assert rows[0]["n_ctx"] == 512 and rows[0]["reps"] == 2  # the context the longest test needs
    assert rows[0]["backend"] == ""  # no engine was started to say


# ---- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (["--threads", "4,x"], "--threads: 'x' is not a whole number"),
        (["--ngl", "-5"], "--ngl: GPU layers must be between 0 and 999 (got -5)"),
        (["--threads", ""], "--threads: no value given"),
        (["--batch", "512,,1024"], "--batch: an empty item"),
        (["--pp", "0", "--tg", "0"], "nothing to measure"),
        (["--reps", "2,3"], "--reps takes one number"),
        (["--reps", "0"], "--reps: Repetitions must be between 1"),
        (["--depth", "-1"], "--depth: Depth must be between 0"),
        (["--batch", "64", "--ubatch", "128"], "Micro-batch (128) cannot exceed batch (64)"),
        (["--threads"], "expected one argument"),
        (["--json", "--csv"], "not allowed with argument"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    demo_model: Path, flags: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["bench", str(demo_model), *flags])
    err = capsys.readouterr().err
    assert caught.value.code == 2
    assert len(err.splitlines()) == 1 and words in err and err.startswith("tightfit: error: "), err


def test_a_missing_model_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["bench", str(tmp_path / "none.gguf")])
    err = capsys.readouterr().err
    assert caught.value.code == 2 and err.strip() == f"tightfit: error: no such model file: {tmp_path / 'none.gguf'}"


# ---- the sweep on a stand-in engine --------------------------------------------------------------


class Interrupting(SyncEngine):
    """A SyncEngine on the fake engine, where Ctrl+C (KeyboardInterrupt) comes once the engine has reported
    each number of repetitions in ``after``."""

    def __init__(self, fake: FakeEngine, after: tuple[int, ...] = ()) -> None:
        self.events: queue.Queue[Any] = queue.Queue()
        fake.set_listener(self.events.put)
        self.client = fake
        self.after = list(after)
        self.samples = 0

    def next_event(self, timeout: float) -> Any:
        if self.after and self.samples >= self.after[0]:
            self.after.pop(0)
            raise KeyboardInterrupt
        event = super().next_event(timeout)
        self.samples += isinstance(event, p.BenchSample)
        return event


def sweep(
    model: Path, fake: FakeEngine, lists: dict[str, list[Any]], tests: list[BenchTest], reps: int = 3,
    after: tuple[int, ...] = (),
) -> BenchSweep:  # fmt: skip
    jobs = [Job(c, 100.0, c.invalid) for c in sweep_grid(BASE, lists)]
    return BenchSweep(model, tests, reps, jobs, make_engine=lambda: Interrupting(fake, after))


def test_the_engine_is_reloaded_only_when_a_setting_needs_it(demo_model: Path) -> None:
    fake = FakeEngine()
    tests = [BenchTest(16, 0), BenchTest(0, 8)]
    result = sweep(demo_model, fake, {"n_threads": [1, 2, 4], "n_batch": [256, 512]}, tests).run()
    assert result.loads == len(fake.loads) == 2
    assert [s.n_batch for _, s in fake.loads] == [256, 512]
    assert [b.n_threads for b in fake.benches] == [1, 1, 2, 2, 4, 4] * 2  # threads set per test instead
    assert len(result.rows) == 12 and not result.interrupted and result.failures == 0
    row = result.rows[1].to_dict()
    assert row["test"] == "tg8" and row["avg_ts"] == pytest.approx(1000.0) and row["pct_of_ceiling"] == 1000.0
    assert row["samples_ts"] == [1000.0] * 3 and row["stddev_ts"] == 0.0 and row["backend"] == "CPU"
    assert result.rows[0].to_dict()["pct_of_ceiling"] is None  # a prompt test has no decode ceiling


def test_a_model_that_fails_to_load_is_one_line_and_the_rest_still_runs(
    demo_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeEngine()
    fake.load_error = lambda s: "llama.cpp could not load the model" if s.n_gpu_layers == 10 else ""
    lists = {"n_gpu_layers": [10, 999], "n_threads": [1, 2]}
    result = sweep(demo_model, fake, lists, [BenchTest(16, 0)]).run()
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"tightfit: error: could not load {demo_model.name} (ngl 10, threads 1, batch 512/512): "
        "llama.cpp could not load the model"
    ]  # once: the same load with other threads is not tried again
    assert len(fake.loads) == 2 and result.failures == 1
    failed, also_failed, ran, ran_too = result.rows
    assert failed.skipped and failed.reason == "could not load: llama.cpp could not load the model"
    assert also_failed.skipped and also_failed.settings.n_threads == 2
    assert not ran.skipped and not ran_too.skipped and ran.avg_ts


def test_ctrl_c_keeps_the_finished_rows_and_marks_the_run_partial(
    demo_model: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = FakeEngine()
    fake.bench_rep_s = 0.05
    tests = [BenchTest(16, 0), BenchTest(0, 8)]
    # Ctrl+C one repetition into the third test (threads 2's first): the first two are finished rows.
    result = sweep(demo_model, fake, {"n_threads": [1, 2]}, tests, reps=4, after=(9,)).run()
    assert result.interrupted
    assert "stopping after the repetition under way" in capsys.readouterr().err
    first, second, stopped = result.rows  # the fourth test never ran
    assert not first.partial and not second.partial and len(first.samples_ns) == 4
    assert stopped.partial and 1 <= len(stopped.samples_ns) < 4 and not stopped.skipped
    assert len(fake.benches) == 3
    assert f"(partial: {len(stopped.samples_ns)} of 4)" in format_markdown([r.to_dict() for r in result.rows])


def test_a_second_ctrl_c_stops_at_once_and_keeps_what_was_measured(demo_model: Path) -> None:
    fake = FakeEngine()
    fake.bench_rep_s = 0.05
    result = sweep(demo_model, fake, {}, [BenchTest(16, 0), BenchTest(0, 8)], reps=50, after=(1, 2)).run()
    assert result.interrupted
    (row,) = result.rows
    assert row.partial and 1 <= len(row.samples_ns) < 50


# ---- the real engine -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_rows(demo_model: Path) -> list[dict[str, Any]]:
    """One real run through the CLI: two thread counts (one load), a depth, tiny tests."""
    out = io.StringIO()
    args = ["bench", str(demo_model), "--pp", "16", "--tg", "4", "--depth", "0,32", "--reps", "2"]
    with contextlib.redirect_stdout(out):
        code = main([*args, "--threads", "1,2", "--batch", "64", "--json"])
    assert code == 0
    return json.loads(out.getvalue())


@pytest.mark.engine
def test_rows_have_llama_bench_columns_and_tightfits(cli_rows: list[dict[str, Any]]) -> None:
    assert [r["test"] for r in cli_rows] == ["pp16", "tg4", "pp16@d32", "tg4@d32"] * 2
    assert [r["n_threads"] for r in cli_rows] == [1] * 4 + [2] * 4
    for row in cli_rows:
        assert list(row) == list(ROW_KEYS)
        assert not row["skipped"] and not row["partial"] and row["reason"] == ""
        assert len(row["samples_ns"]) == len(row["samples_ts"]) == 2 and row["reps"] == 2
        n_tokens = row["n_prompt"] + row["n_gen"]
        # (rows carry 6 decimals: on a busy machine a 2-thread tg4 can be as slow as 1 tok/s)
        assert row["samples_ts"] == pytest.approx([n_tokens * 1e9 / ns for ns in row["samples_ns"]], abs=1e-5)
        assert row["avg_ts"] == pytest.approx(sum(row["samples_ts"]) / 2, abs=1e-5)
        assert row["stddev_ts"] >= 0 and row["avg_ns"] > 0
        assert row["n_batch"] == row["n_ubatch"] == 64 and row["n_ctx"] == 256
        assert row["ceiling_tok_s"] > 0  # CPU only: the RAM's bandwidth over the weights read per token
        assert (row["pct_of_ceiling"] is not None) == (row["n_gen"] > 0)
        assert row["peak_rss_mib"] > 50  # the mapped model and the context
        assert row["peak_gpu_mib"] is None or row["peak_gpu_mib"] > 0
        assert row["backend"] and row["llama_cpp_python"].startswith("0.3.") and row["n_layer"] == 30
    assert {r["n_depth"] for r in cli_rows} == {0, 32}


@pytest.mark.engine
def test_csv_and_markdown_carry_the_same_rows(cli_rows: list[dict[str, Any]]) -> None:
    parsed = list(csv.DictReader(io.StringIO(format_csv(cli_rows))))
    assert len(parsed) == len(cli_rows) and list(parsed[0]) == list(ROW_KEYS)
    for line, row in zip(parsed, cli_rows, strict=True):
        assert line["test"] == row["test"] and float(line["avg_ts"]) == row["avg_ts"]
        assert [int(ns) for ns in line["samples_ns"].split()] == row["samples_ns"]
        assert line["peak_gpu_mib"] == ("" if row["peak_gpu_mib"] is None else str(row["peak_gpu_mib"]))
    table = format_markdown(cli_rows).splitlines()
    gpu = ["GPU MiB"] if any(r["peak_gpu_mib"] is not None for r in cli_rows) else []
    assert [c.strip() for c in table[0].strip("|").split("|")] == [
        "ngl", "threads", "test", "t/s", "% ceiling", "RSS MiB", *gpu
    ]  # fmt: skip
    assert len(table) == 2 + len(cli_rows)
    for row, line in zip(cli_rows, table[2:], strict=True):
        assert f"| {row['test']} " in line and f"{row['avg_ts']:.2f} ± {row['stddev_ts']:.2f}" in line


@pytest.fixture(scope="module")
def engine(demo_model: Path, tmp_path_factory: pytest.TempPathFactory):
    with SyncEngine(log_dir=tmp_path_factory.mktemp("logs")) as eng:
        eng.client.load(demo_model, LoadSettings(n_ctx=512, n_batch=64, n_ubatch=64, n_threads=1))
        eng.expect(p.Loaded, 120)
        yield eng


def bench_events(engine: SyncEngine, request: int, stop_after: int | None = None) -> tuple[list[Any], Any]:
    samples = []
    while True:
        event = engine.next_event(120)
        if isinstance(event, p.BenchSample):
            assert event.request_id == request
            samples.append(event)
            if stop_after is not None and len(samples) == stop_after:
                engine.client.stop(request)
        elif isinstance(event, p.BenchDone | p.BenchFailed):
            assert event.request_id == request
            return samples, event


@pytest.mark.engine
def test_threads_change_for_a_test_and_the_loads_come_back(engine: SyncEngine) -> None:
    samples, done = bench_events(engine, engine.client.bench(8, 0, 0, 2, n_threads=2))
    assert isinstance(done, p.BenchDone) and done.n_threads == 2 and not done.stopped
    assert [s.index for s in samples] == [0, 1] and done.samples_ns == tuple(s.elapsed_ns for s in samples)
    _, done = bench_events(engine, engine.client.bench(0, 4, 16, 1))
    assert isinstance(done, p.BenchDone) and done.n_threads == 1 and done.n_depth == 16
    # A reply after a benchmark reads its whole prompt: the benchmark's tokens are not taken for a cached prefix.
    request = engine.client.generate((p.ChatMessage("user", "Hi"),), 4, p.Sampling(temperature=0.0), True)
    while not isinstance(event := engine.next_event(60), p.Done):
        pass
    assert event.request_id == request and event.stats.n_prompt_evaluated == event.stats.n_prompt


@pytest.mark.engine
def test_a_stop_ends_the_benchmark_after_the_repetition_under_way(engine: SyncEngine) -> None:
    reps = REPETITIONS.maximum
    samples, done = bench_events(engine, engine.client.bench(0, 2, 0, reps), stop_after=1)
    assert isinstance(done, p.BenchDone) and done.stopped
    assert 1 <= len(done.samples_ns) < reps and len(samples) == len(done.samples_ns)


@pytest.mark.engine
def test_a_test_longer_than_the_context_or_empty_is_refused_in_words(engine: SyncEngine) -> None:
    _, failed = bench_events(engine, engine.client.bench(500, 100))
    assert isinstance(failed, p.BenchFailed) and failed.kind == "context"
    assert failed.error == "the test needs a context of 600 tokens, the loaded one holds 512"
    _, failed = bench_events(engine, engine.client.bench(0, 0))
    assert isinstance(failed, p.BenchFailed) and failed.kind == "input"


def test_rows_without_samples_say_so() -> None:
    row = BenchRow("m.gguf", BenchTest(0, 128), BASE, 5, ceiling_tok_s=50.0)
    data = row.to_dict()
    assert data["avg_ts"] is None and data["pct_of_ceiling"] is None and data["partial"]
    assert "no repetition finished" in format_markdown([data])


def test_where_a_sweeps_time_went_is_said_per_configuration() -> None:
    """Two configurations, three measured tests (2 s + 1 s + 1 s timed) and one skipped, in 10 s of wall time:
    6 s went to warm-ups, depths and loads, 3 s per configuration."""
    two = BASE.with_values(n_threads=BASE.n_threads + 1)
    rows = [
        BenchRow("m.gguf", BenchTest(512, 0), BASE, 2, samples_ns=(1_000_000_000, 1_000_000_000)),
        BenchRow("m.gguf", BenchTest(0, 128), BASE, 1, samples_ns=(1_000_000_000,)),
        BenchRow("m.gguf", BenchTest(0, 128), two, 1, samples_ns=(1_000_000_000,)),
        BenchRow("m.gguf", BenchTest(512, 0), two, 1, skipped=True, reason="will not fit"),
    ]
    assert time_summary(rows, 10.0) == (
        "3 tests measured in 10.0 s, 4.0 s of it in the timed repetitions; "
        "the rest (warm-ups, depths, loads) 3.0 s per configuration"
    )
    assert time_summary([], 1.0) == "0 tests measured in 1.0 s, 0.0 s of it in the timed repetitions"


@pytest.mark.engine
def test_measured_rows_go_into_the_journey(demo_model: Path) -> None:
    from gui.services.journey import JourneyStore

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["bench", str(demo_model), "--pp", "8", "--tg", "2", "--reps", "1", "--threads", "1", "--json"])
    assert code == 0
    rows = json.loads(out.getvalue())
    with JourneyStore() as store:  # this test's own data directory (conftest)
        data = store.snapshot()
    assert [(b.model_name, b.test) for b in data.bench] == [(demo_model.name, r["test"]) for r in rows]
    assert [b.avg_ts for b in data.bench] == [pytest.approx(r["avg_ts"]) for r in rows]
