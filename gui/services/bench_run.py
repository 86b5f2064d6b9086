"""One benchmark sweep as `tightfit bench` and the Tune tab both run it, driven by what the engine answers.

``BenchRun`` owns the sweep's decisions: the order of the jobs and tests, when to load (only when a setting other
than the threads changes), what is skipped without asking the engine (a configuration the planner says will not
fit, one whose load already failed with other threads), what an engine that died costs, the peak memory around
each test, the rows, the progress, a stop after the repetition under way and whether the run is partial.

It never calls the engine. Each step returns an action for whoever drives it:

- ``LoadModel(settings)``: load these, then feed ``loaded()`` or ``load_failed(error)``;
- ``RunTest(test, reps, n_threads)``: send this ``protocol.Bench``, then feed ``sent(request_id, pid)`` and the
  engine's events through ``on_event`` (BenchSample, BenchDone, BenchFailed; others are ignored);
- ``StopTest(request_id)``: ask the engine to stop that test after the repetition under way;
- ``Finished(partial)``: the run is over.

``engine_died(error)`` is fed whenever the engine ends under a load or a test. The CLI drives a run with a
blocking loop on a SyncEngine (gui/commands/bench.py); the window with its load state and engine events
(gui/ui/tune_view.py TuneRunner). Reasons are composed with ``words`` (gui/core/words.py): English for the CLI,
translated where the window shows them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gui.core import protocol as p
from gui.core.bench import BenchRow, BenchTest, Job, needs_reload
from gui.core.params import LoadSettings
from gui.core.words import Text, words
from gui.services.bench_meter import PeakMeter
from gui.services.nvml import Nvml

if TYPE_CHECKING:
    from gui.services.engine_client import ClientEvent

__all__ = ["Action", "BenchRun", "Finished", "LoadModel", "RunTest", "StopTest"]


@dataclass(frozen=True)
class LoadModel:
    """Load the model with these settings; answer with ``loaded()`` or ``load_failed(error)``."""

    settings: LoadSettings


@dataclass(frozen=True)
class RunTest:
    """Send this test (``client.bench``); answer with ``sent(request_id, pid)``."""

    test: BenchTest
    reps: int
    n_threads: int


@dataclass(frozen=True)
class StopTest:
    """Ask the engine to end this test after the repetition under way (``client.stop``)."""

    request_id: int


@dataclass(frozen=True)
class Finished:
    """The run is over; ``partial``: stopped, or ended by the engine, before every test ran."""

    partial: bool


Action = LoadModel | RunTest | StopTest | Finished


class BenchRun:
    """The jobs (``gui.core.bench.plan_jobs``) run in order, each test of ``tests`` with ``reps`` repetitions.

    ``on_row(row, ran)`` hears every row as it is made (``ran``: of a test the engine ran, measured, stopped or
    failed; False for one skipped before it was sent); ``on_progress(done, total, seconds_left)`` hears the tests
    done (a fraction within the one under way), the tests in all and an estimate of the time left.
    ``restart_after_crash``: after the engine died in a test, True loads again for the next test (the driver
    starts a fresh worker); False ends the run there, partial (the window's engine is the window's to restart).
    """

    def __init__(
        self,
        model: Path,
        jobs: Sequence[Job],
        tests: Sequence[BenchTest],
        reps: int,
        *,
        n_layer: int | None = None,
        nvml: Nvml | None = None,
        gpu_count: int = 0,
        restart_after_crash: bool = True,
        on_row: Callable[[BenchRow, bool], None] | None = None,
        on_progress: Callable[[int, int, float], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.model = model
        self.jobs = list(jobs)
        self.tests = list(tests)
        self.reps = reps
        self.n_layer = n_layer
        self.nvml = nvml
        self.gpu_count = gpu_count
        self.restart_after_crash = restart_after_crash
        self._on_row = on_row or (lambda _row, _ran: None)
        self._on_progress = on_progress or (lambda _done, _total, _left: None)
        self._clock = clock
        self.total = len(self.jobs) * len(self.tests)
        self.rows: list[BenchRow] = []
        self.failures = 0  # loads that failed, tests the engine failed or died in (a test too long is not one)
        self.loads = 0  # loads asked for
        self.build: p.EngineBuild | None = None  # the engine's, once it said it: every row names it
        self.running = False
        self.stopping = False  # a stop was asked: the run ends after the test under way
        self.partial = False
        self._ended_early = False  # the engine died in a test and the run does not go on without it
        self._job_index = -1
        self._test_index = 0
        self._loaded: LoadSettings | None = None  # what the engine holds, as far as this run knows
        self._loading: LoadSettings | None = None
        self._failed_loads: list[tuple[LoadSettings, Text]] = []
        self._testing = False  # a RunTest was given and its row is not made yet
        self._request: int | None = None
        self._samples: list[int] = []
        self._meter: PeakMeter | None = None
        self._test_time = ""
        self._started_at = 0.0

    # ---- what the run is waiting for ---------------------------------------------------------------

    @property
    def loading(self) -> LoadSettings | None:
        """The settings a load was asked for and not answered yet."""
        return self._loading

    @property
    def request_id(self) -> int | None:
        """The test under way, once sent."""
        return self._request

    # ---- the driver's feed -------------------------------------------------------------------------

    def start(self, loaded: LoadSettings | None = None) -> Action:
        """Begin; ``loaded``: the settings the engine holds now (None: nothing, or not known)."""
        self.running = True
        self._loaded = loaded
        self._started_at = self._clock()
        return self._next_job()

    def note_build(self, build: p.EngineBuild | None) -> None:
        """The engine said what it is (None changes nothing): the rows carry its backend and versions."""
        if build is not None:
            self.build = build

    def loaded(self) -> Action | None:
        """The load asked for is done."""
        if not self.running or self._loading is None:
            return None
        self._loaded, self._loading = self._loading, None
        return self._issue_test()

    def load_failed(self, error: Text) -> Action | None:
        """The load asked for failed (``error``: why, '' when the engine did not say)."""
        settings = self._loading
        if not self.running or settings is None:
            return None
        self._loading = None
        self._loaded = None
        self.failures += 1
        error = error or words("the engine stopped")
        self._failed_loads.append((settings, error))
        self._skip_rest(words("could not load: {error}", error=error))
        return self._next_job()

    def sent(self, request_id: int, pid: int | None) -> Action | None:
        """The test asked for was sent as ``request_id`` to the engine process ``pid``; its memory is read from
        now until it ends."""
        if not self.running or not self._testing:
            return None
        self._request = request_id
        self._meter = PeakMeter(pid, self.nvml, self.gpu_count).__enter__()
        return StopTest(request_id) if self.stopping else None

    def on_event(self, event: ClientEvent) -> Action | None:
        """An engine event; only the test under way's count, the rest return None."""
        if self._request is None or getattr(event, "request_id", None) != self._request:
            return None
        if isinstance(event, p.BenchSample):
            self._samples.append(event.elapsed_ns)
            self._report_progress(extra=(event.index + 1) / max(event.reps, 1))
            return None
        if isinstance(event, p.BenchDone):
            self._samples = list(event.samples_ns)
            self._end_test("")
            return self._after_test()
        if isinstance(event, p.BenchFailed):
            if event.kind != "context":  # a test longer than the context is the user's to fix
                self.failures += 1
            self._end_test(event.error)
            return self._after_test()
        return None

    def engine_died(self, error: Text) -> Action | None:
        """The engine ended: a load under way failed; a test under way keeps what it measured, and the run goes on
        with a fresh engine or ends (``restart_after_crash``)."""
        if not self.running:
            return None
        if self._loading is not None:
            return self.load_failed(error)
        if not self._testing:
            self._loaded = None
            return None
        self.failures += 1
        self._loaded = None
        self._end_test(words("the engine stopped: {error}", error=error))
        if not self.restart_after_crash:
            self._ended_early = True
            return self._finish()
        return self._after_test()

    def stop(self) -> Action | None:
        """End after the repetition under way; what was measured stays. A load under way ends the run at once
        (it finishes on its own; no test follows it)."""
        if not self.running:
            return None
        self.stopping = True
        if self._loading is not None:
            self._loading = None
            return self._finish()
        if self._request is not None:
            return StopTest(self._request)
        return None

    def abandon(self) -> Finished:
        """End at once (the engine is gone or being ended): the test under way keeps the repetitions received."""
        if not self.running:
            return Finished(self.partial)
        self.stopping = True
        if self._testing:
            self._end_test("")
        self._loading = None
        return self._finish()

    # ---- steps -----------------------------------------------------------------------------------

    @property
    def _job(self) -> Job:
        return self.jobs[self._job_index]

    def _next_job(self) -> Action:
        while not self.stopping:
            self._job_index += 1
            self._test_index = 0
            if self._job_index >= len(self.jobs):
                break
            job = self._job
            if job.skip:
                self._skip_rest(job.skip)
                continue
            settings = job.config.settings
            failed = next((error for s, error in self._failed_loads if not needs_reload(s, settings)), None)
            if failed is not None:  # the same load failed with other threads: not tried again
                self._skip_rest(words("could not load: {error}", error=failed))
                continue
            return self._next_test()
        return self._finish()

    def _skip_rest(self, reason: Text) -> None:
        for test in self.tests[self._test_index :]:
            self._add(self._row(self._job, test, skipped=True, reason=reason), ran=False)

    def _next_test(self) -> Action:
        if self._test_index >= len(self.tests):
            return self._next_job()
        settings = self._job.config.settings
        if needs_reload(self._loaded, settings):  # again after an engine that died in a test
            self._loaded = None
            self._loading = settings
            self.loads += 1
            return LoadModel(settings)
        return self._issue_test()

    def _issue_test(self) -> Action:
        self._testing = True
        self._samples = []
        self._test_time = datetime.now(UTC).isoformat(timespec="seconds")
        return RunTest(self.tests[self._test_index], self.reps, self._job.config.settings.n_threads)

    def _end_test(self, error: Text) -> None:
        """The test under way's row: what it measured, or why it stopped short (``error``)."""
        meter, self._meter = self._meter, None
        if meter is not None:
            meter.__exit__(None, None, None)
        row = self._row(
            self._job, self.tests[self._test_index], samples_ns=tuple(self._samples),
            peak_rss_mib=meter.peak_rss_mib if meter else None, peak_gpu_mib=meter.peak_gpu_mib if meter else None,
            test_time=self._test_time, skipped=bool(error), reason=error,
        )  # fmt: skip
        self._testing = False
        self._request = None
        self._samples = []
        self._add(row, ran=True)
        self._test_index += 1

    def _after_test(self) -> Action:
        if self.stopping:
            return self._finish()
        return self._next_test()

    def _finish(self) -> Finished:
        if self.running:
            self.running = False
            self.partial = self.stopping or self._ended_early or len(self.rows) < self.total
            # Rows made before the engine said what it is (a skip ahead of the first load) name it too.
            self.rows = [self._stamped(row) for row in self.rows]
        return Finished(self.partial)

    # ---- rows and progress -----------------------------------------------------------------------

    def _row(self, job: Job, test: BenchTest, **values: Any) -> BenchRow:
        row = BenchRow(
            str(self.model), test, job.config.settings, self.reps, ceiling_tok_s=job.ceiling_tok_s,
            n_layer=self.n_layer, **values,
        )  # fmt: skip
        return self._stamped(row)

    def _stamped(self, row: BenchRow) -> BenchRow:
        build = self.build
        if build is None:
            return row
        return replace(row, backend=build.backend, build=build.ggml_version, llama_cpp_python=build.llama_cpp_python)

    def _add(self, row: BenchRow, *, ran: bool) -> None:
        self.rows.append(row)
        self._on_row(row, ran)
        self._report_progress()

    def _report_progress(self, extra: float = 0.0) -> None:
        done = len(self.rows) + extra
        elapsed = self._clock() - self._started_at
        left = elapsed / done * (self.total - done) if done > 0 else 0.0
        self._on_progress(int(done), self.total, left)
