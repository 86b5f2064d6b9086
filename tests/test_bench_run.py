"""The one benchmark runner `tightfit bench` and the Tune tab share (gui/services/bench_run.py), fed by a script of
what the engine answered: the order of the actions, loads only where a setting needs one, the skip rules (planned,
a load that failed with other threads, an engine that died), the rows with the build, a stop after the repetition
under way, at once, the progress and its estimate, and reasons that stay translatable. The engine itself is
tests/test_bench.py's and tests/test_tune_view.py's subject."""

from __future__ import annotations

import os
from pathlib import Path

from gui.core import protocol as p
from gui.core.bench import BenchTest, Config, Job, sweep_grid
from gui.core.params import LoadSettings
from gui.core.words import Words
from gui.services.bench_run import Action, BenchRun, Finished, LoadModel, RunTest, StopTest

MODEL = Path("/models/m.gguf")
BASE = LoadSettings(n_threads=2, n_ctx=1024)
PP, TG = BenchTest(16, 0), BenchTest(0, 8)
BUILD = p.EngineBuild("CPU", False, "0.3.36", "AVX2 = 1", ggml_version="0.9.4 (abc1234)")


def jobs(lists: dict[str, list[object]], skip: dict[int, str] | None = None) -> list[Job]:
    return [Job(c, 50.0, (skip or {}).get(i, "")) for i, c in enumerate(sweep_grid(BASE, lists))]


class Feed:
    """Plays the engine for a run: answers each action as scripted and keeps what was asked."""

    def __init__(self, run: BenchRun) -> None:
        self.run = run
        self.actions: list[Action] = []
        self.next_request = 100

    def note(self, action: Action | None) -> Action | None:
        if action is not None:
            self.actions.append(action)
        return action

    def send(self, action: Action | None, pid: int | None = None) -> int:
        """A RunTest sent: its request id."""
        assert isinstance(action, RunTest), action
        self.next_request += 1
        assert self.note(self.run.sent(self.next_request, pid)) is None
        return self.next_request

    def measure(self, action: Action | None, ns: int = 1_000_000) -> Action | None:
        """Send a test and answer every repetition, then BenchDone: the next action."""
        assert isinstance(action, RunTest), action
        request = self.send(action)
        for i in range(action.reps):
            assert self.run.on_event(p.BenchSample(request, i, action.reps, ns)) is None
        test = action.test
        done = p.BenchDone(request, test.n_prompt, test.n_gen, test.n_depth, action.n_threads, (ns,) * action.reps)
        return self.note(self.run.on_event(done))

    def to_end(self, action: Action | None) -> Finished:
        """Load and measure everything from ``action`` on."""
        while not isinstance(action, Finished):
            action = self.note(self.run.loaded()) if isinstance(action, LoadModel) else self.measure(action)
        return action


def start(run: BenchRun, feed: Feed, loaded: LoadSettings | None = None) -> Action | None:
    return feed.note(run.start(loaded))


def first_test(run: BenchRun) -> RunTest:
    """Start a run on an engine with nothing loaded and answer its load: the first test it asks for."""
    action = run.start()
    assert isinstance(action, LoadModel)
    action = run.loaded()
    assert isinstance(action, RunTest)
    return action


def test_a_load_only_where_a_setting_needs_one_and_the_threads_per_test() -> None:
    run = BenchRun(MODEL, jobs({"n_threads": [1, 2], "n_batch": [256, 512]}), [PP, TG], 3, n_layer=30)
    feed = Feed(run)
    end = feed.to_end(start(run, feed))
    assert end == Finished(partial=False) and not run.running and not run.partial
    loads = [a.settings.n_batch for a in feed.actions if isinstance(a, LoadModel)]
    assert loads == [256, 512] and run.loads == 2
    tests = [(a.test.name, a.n_threads, a.reps) for a in feed.actions if isinstance(a, RunTest)]
    assert tests == [("pp16", 1, 3), ("tg8", 1, 3), ("pp16", 2, 3), ("tg8", 2, 3)] * 2
    assert [(r.settings.n_batch, r.settings.n_threads, r.test.name) for r in run.rows][:3] == [
        (256, 1, "pp16"), (256, 1, "tg8"), (256, 2, "pp16"),
    ]  # fmt: skip
    row = run.rows[1]
    assert row.samples_ns == (1_000_000,) * 3 and row.avg_ts == 8000.0 and row.pct_of_ceiling == 16000.0
    assert row.model == str(MODEL) and row.n_layer == 30 and row.test_time and not row.skipped
    assert run.failures == 0


def test_what_is_loaded_at_the_start_is_used_when_it_serves() -> None:
    run = BenchRun(MODEL, jobs({"n_threads": [4]}), [TG], 1)
    feed = Feed(run)
    first = start(run, feed, loaded=BASE.with_values(n_threads=7))  # only the threads differ: no load
    assert isinstance(first, RunTest) and first.n_threads == 4
    run2 = BenchRun(MODEL, jobs({"n_threads": [4]}), [TG], 1)
    assert isinstance(run2.start(BASE.with_values(n_batch=128)), LoadModel)


def test_every_row_names_the_build_even_one_made_before_the_engine_said_it() -> None:
    card_too_small = "will not fit: Small GPU needs 9,000 MiB, 4,000 MiB free (--anyway runs it)"
    run = BenchRun(MODEL, jobs({"n_gpu_layers": [999, 0]}, skip={0: card_too_small}), [PP], 1)
    feed = Feed(run)
    first = start(run, feed)
    assert isinstance(first, LoadModel) and first.settings.n_gpu_layers == 0  # the skip asked for nothing
    assert run.rows[0].skipped and run.rows[0].reason == card_too_small and run.rows[0].backend == ""
    run.note_build(BUILD)
    run.note_build(None)  # an engine that has not said: the build known stays
    feed.to_end(feed.note(run.loaded()))
    for row in run.rows:
        assert (row.backend, row.build, row.llama_cpp_python) == ("CPU", "0.9.4 (abc1234)", "0.3.36")


def test_a_failed_load_skips_its_tests_and_the_same_load_with_other_threads() -> None:
    lists = {"n_gpu_layers": [10, 999], "n_threads": [1, 2]}
    seen: list[tuple[str, bool]] = []
    run = BenchRun(MODEL, jobs(lists), [PP, TG], 2, on_row=lambda row, ran: seen.append((row.test.name, ran)))
    feed = Feed(run)
    first = start(run, feed)
    assert isinstance(first, LoadModel) and first.settings.n_gpu_layers == 10
    after = feed.note(run.load_failed("llama.cpp could not load the model"))
    # threads 2 with 10 layers is the same load: skipped without asking; 999 layers is loaded next
    assert isinstance(after, LoadModel) and after.settings.n_gpu_layers == 999
    feed.to_end(after)
    failed = run.rows[:4]
    assert all(r.skipped and r.reason == "could not load: llama.cpp could not load the model" for r in failed)
    assert [r.settings.n_threads for r in failed] == [1, 1, 2, 2]
    assert not any(r.skipped for r in run.rows[4:]) and len(run.rows) == 8
    assert run.failures == 1 and run.loads == 2 and not run.partial  # every test has its row
    assert seen[:4] == [("pp16", False), ("tg8", False), ("pp16", False), ("tg8", False)]
    assert seen[4:] == [("pp16", True), ("tg8", True)] * 2


def test_a_load_that_failed_without_a_word_says_the_engine_stopped() -> None:
    run = BenchRun(MODEL, jobs({}), [PP], 1)
    feed = Feed(run)
    start(run, feed)
    assert run.load_failed("") == Finished(partial=False)
    assert run.rows[0].reason == "could not load: the engine stopped"


def test_an_engine_that_died_loading_is_a_failed_load() -> None:
    run = BenchRun(MODEL, jobs({"n_batch": [256, 512]}), [PP], 1)
    feed = Feed(run)
    start(run, feed)
    after = run.engine_died("The engine process was killed (out of memory).")
    assert isinstance(after, LoadModel) and after.settings.n_batch == 512
    assert run.rows[0].reason == "could not load: The engine process was killed (out of memory)."


def test_an_engine_that_died_in_a_test_goes_on_after_a_fresh_load_or_ends_the_run() -> None:
    for restart in (True, False):
        run = BenchRun(MODEL, jobs({"n_threads": [1, 2]}), [PP, TG], 3, restart_after_crash=restart)
        feed = Feed(run)
        request = feed.send(first_test(run))
        assert run.on_event(p.BenchSample(request, 0, 3, 2_000_000)) is None
        after = run.engine_died("The engine process ended (signal 9).")
        died = run.rows[0]
        assert died.skipped and died.reason == "the engine stopped: The engine process ended (signal 9)."
        assert died.samples_ns == (2_000_000,) and died.test_time  # what it measured before stays
        assert run.failures == 1
        if restart:
            assert after == LoadModel(BASE.with_values(n_threads=1))  # the next test loads again
            assert feed.to_end(after) == Finished(partial=False) and len(run.rows) == 4
        else:
            assert after == Finished(partial=True) and len(run.rows) == 1 and not run.running


def test_a_failed_test_has_the_engines_reason_and_a_too_long_one_is_not_a_failure() -> None:
    run = BenchRun(MODEL, jobs({}), [PP, TG], 2)
    feed = Feed(run)
    request = feed.send(first_test(run))
    too_long = "the test needs a context of 600 tokens, the loaded one holds 512"
    nxt = run.on_event(p.BenchFailed(request, too_long, kind="context"))
    assert run.rows[0].skipped and run.rows[0].reason == too_long and run.failures == 0
    request = feed.send(nxt)
    assert run.on_event(p.BenchFailed(request, "llama_decode failed (1)", kind="decode")) == Finished(False)
    assert run.rows[1].reason == "llama_decode failed (1)" and run.failures == 1


def test_events_of_other_requests_are_not_the_runs() -> None:
    run = BenchRun(MODEL, jobs({}), [TG], 2)
    request = Feed(run).send(first_test(run))
    assert run.on_event(p.BenchDone(request + 7, 0, 8, 0, 2, (5,))) is None
    assert run.on_event(p.Token(request, "x", 0)) is None
    assert run.rows == [] and run.request_id == request


def test_stop_ends_after_the_repetition_under_way() -> None:
    run = BenchRun(MODEL, jobs({"n_threads": [1, 2]}), [PP, TG], 5)
    request = Feed(run).send(first_test(run))
    run.on_event(p.BenchSample(request, 0, 5, 3_000_000))
    assert run.stop() == StopTest(request) and run.running  # the engine is asked; the run waits for it
    done = p.BenchDone(request, 16, 0, 0, 1, (3_000_000, 3_000_000), stopped=True)
    assert run.on_event(done) == Finished(partial=True)
    (row,) = run.rows
    assert row.partial and row.samples_ns == (3_000_000, 3_000_000) and not row.skipped
    assert run.stop() is None and run.loaded() is None  # over: nothing more is asked


def test_stop_during_a_load_ends_at_once_and_a_stop_before_the_send_reaches_the_engine() -> None:
    run = BenchRun(MODEL, jobs({}), [PP], 1)
    feed = Feed(run)
    assert isinstance(start(run, feed), LoadModel)
    assert run.stop() == Finished(partial=True) and run.rows == []
    assert run.loaded() is None  # the load ends on its own; no test follows it
    run = BenchRun(MODEL, jobs({}), [PP], 1)
    first = run.start(BASE)
    assert isinstance(first, RunTest) and run.stop() is None  # asked for, not sent yet
    assert run.sent(9, None) == StopTest(9)


def test_abandon_keeps_the_repetitions_received() -> None:
    run = BenchRun(MODEL, jobs({"n_threads": [1, 2]}), [PP], 50)
    request = Feed(run).send(run.start(BASE))
    run.on_event(p.BenchSample(request, 0, 50, 4_000_000))
    assert run.abandon() == Finished(partial=True)
    (row,) = run.rows
    assert row.partial and row.samples_ns == (4_000_000,) and run.stopping


def test_progress_counts_tests_and_the_repetitions_of_the_one_under_way() -> None:
    now = [100.0]
    said: list[tuple[int, int, float]] = []
    run = BenchRun(
        MODEL, jobs({"n_threads": [1, 2]}), [PP, TG], 2, on_progress=lambda *a: said.append(a), clock=lambda: now[0]
    )
    request = Feed(run).send(run.start(BASE))
    now[0] = 101.0
    run.on_event(p.BenchSample(request, 0, 2, 1))  # half a test in 1 s: 3.5 to go at that pace, 7 s
    now[0] = 102.0
    run.on_event(p.BenchDone(request, 16, 0, 0, 1, (1, 1)))  # a test in 2 s: 3 to go, 6 s
    assert said == [(0, 4, 7.0), (1, 4, 6.0)]


def test_the_peak_memory_of_the_engine_process_is_read_around_each_test() -> None:
    run = BenchRun(MODEL, jobs({}), [TG], 1)
    request = Feed(run).send(run.start(BASE), pid=os.getpid())  # this process stands in for the engine's
    run.on_event(p.BenchDone(request, 0, 8, 0, 2, (1_000,)))
    (row,) = run.rows
    assert row.peak_rss_mib is not None and row.peak_rss_mib > 10 and row.peak_gpu_mib is None


def test_reasons_are_sentences_the_window_translates() -> None:
    run = BenchRun(MODEL, jobs({"n_batch": [256, 512]}), [PP], 1)
    run.start()
    run.load_failed("no such file")  # the second configuration is a fresh load: it is asked for
    run.engine_died("killed")
    reasons = [row.reason for row in run.rows]
    assert reasons == ["could not load: no such file", "could not load: killed"]
    for reason in reasons:
        assert isinstance(reason, Words) and reason.template == "could not load: {error}"
    run = BenchRun(MODEL, jobs({}), [PP], 1)
    run.start(BASE)
    run.engine_died("killed")
    died = run.rows[0].reason
    assert (
        isinstance(died, Words)
        and died.template == "the engine stopped: {error}"
        and died.fields == {"error": "killed"}
    )


def test_an_invalid_combination_is_a_skip_with_its_reason() -> None:
    bad = Config(BASE.with_values(n_ubatch=1024, n_batch=256), "Micro-batch (1024) cannot exceed batch (256)")
    run = BenchRun(MODEL, [Job(bad, skip=bad.invalid), Job(Config(BASE))], [PP], 1)
    feed = Feed(run)
    assert feed.to_end(start(run, feed)) == Finished(partial=False)
    assert run.rows[0].skipped and run.rows[0].reason == bad.invalid and not run.rows[1].skipped
    assert [a.settings for a in feed.actions if isinstance(a, LoadModel)] == [BASE]  # the refused one: no load
