"""`tightfit bench MODEL [--pp N,..] [--tg N,..] [--depth N,..] [--reps N] [sizing flags, each a comma list]
[--json | --csv | --md] [--anyway]`: llama-bench's measurements through the window's engine.

Every combination of the given lists runs each test (gui.core.bench); the engine is reloaded only when a setting
other than the threads changes. Each configuration is planned first: one the planner says will not fit is skipped
with the reason (``--anyway`` runs it), and its decode ceiling goes beside the measured speed. A model that will
not load is one line on stderr and rows that say so; the other configurations still run. Ctrl+C stops after the
repetition under way (again: at once) and prints the rows measured, the last one marked partial.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from gui.commands.flags import add_sizing_list_flags, sizing_lists_from_args
from gui.commands.plan import add_device_flags, fail, resolve_devices
from gui.core import protocol as p
from gui.core.bench import (
    DEPTH,
    GEN_TOKENS,
    PROMPT_TOKENS,
    REPETITIONS,
    BenchRow,
    BenchTest,
    Job,
    bench_tests,
    context_for,
    format_csv,
    format_markdown,
    plan_jobs,
    sweep_grid,
    time_summary,
)
from gui.core.gguf_reader import GGUFError, read_model
from gui.core.params import LoadSettings, default_settings
from gui.core.specs import IntSpec, parse_value_list
from gui.core.words import Text, english, english_error
from gui.services.bench_run import Action, BenchRun, LoadModel, RunTest, StopTest
from gui.services.engine_client import EngineUnavailable, SyncEngine
from gui.services.nvml import Nvml

LOAD_TIMEOUT_S = 600.0
# A repetition of a big model on a CPU, or the untimed decode of a long depth, can take many minutes; a worker
# that dies is reported at once (WorkerExited), so this only bounds a worker that hangs.
EVENT_TIMEOUT_S = 6 * 3600.0


def add_bench_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "bench",
        help="llama-bench's tests (pp, tg, depth) over every combination of load settings, with the planned "
        "ceiling and the memory measured",
    )
    parser.add_argument("model", type=Path, metavar="MODEL.gguf")
    for spec in (PROMPT_TOKENS, GEN_TOKENS, DEPTH):
        parser.add_argument(
            spec.flag,
            dest=spec.key,
            default=None,
            metavar="N[,N...]",
            help=f"{english(spec.help)} [default {spec.default}]",
        )
    parser.add_argument(
        REPETITIONS.flag,
        dest=REPETITIONS.key,
        default=None,
        metavar="N",
        help=f"{english(REPETITIONS.help)} [default {REPETITIONS.default}]",
    )
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="print a JSON list of rows")
    shown.add_argument("--csv", action="store_true", help="print CSV, one line per row")
    shown.add_argument("--md", action="store_true", help="print a markdown table only")
    parser.add_argument("--anyway", action="store_true", help="also run configurations the planner says will not fit")
    add_device_flags(parser)
    add_sizing_list_flags(parser)

    def one_line(message: str) -> NoReturn:  # a bad flag is one line, not the usage text
        sys.stderr.write(f"tightfit: error: {message}\n")
        raise SystemExit(2)

    setattr(parser, "error", one_line)  # noqa: B010


def run_bench(args: argparse.Namespace) -> int:
    tests, reps = tests_from_args(args)
    lists = sizing_lists_from_args(args)
    model = Path(args.model)
    if not model.is_file():
        raise ValueError(f"no such model file: {model}")
    try:
        header = read_model(model)
    except GGUFError as exc:
        raise fail(f"{model}: {english_error(exc)}") from exc
    from gui.services.system import measure_ram_bandwidth_gbs, physical_cores

    base = default_settings(physical_cores())
    if "n_ctx" not in lists:  # llama-bench sizes the context to the test; here one context holds every test
        base = base.with_values(n_ctx=context_for(tests))
    configs = sweep_grid(base, lists)
    if all(c.invalid for c in configs):
        raise ValueError(configs[0].invalid)
    devices, source = resolve_devices(args)
    if args.margin_mib < 0:
        raise ValueError(f"--margin-mib cannot be negative (got {args.margin_mib:g})")
    jobs = plan_jobs(header, configs, devices, args.margin_mib, args.ram_gbs, args.anyway, measure_ram_bandwidth_gbs)

    nvml = Nvml()
    gpus, _ = nvml.device_count()
    progress = _progress_printer()
    sweep = BenchSweep(model, tests, reps, jobs, nvml=nvml, gpu_count=gpus, progress=progress, n_layer=header.n_layer)
    started = time.monotonic()
    result = sweep.run()
    if any(not r.skipped for r in result.rows):  # where the time went: the overhead per configuration
        print(f"bench: {english(time_summary(result.rows, time.monotonic() - started))}", file=sys.stderr)
    rows = [r.to_dict() for r in result.rows]
    _record_in_journey(rows, model)
    if args.json:
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif args.csv:
        sys.stdout.write(format_csv(rows))
    elif args.md:
        sys.stdout.write(format_markdown(rows))
    else:
        print(f"{model}: {english(result.engine or 'engine not started')}; decode ceiling planned for {source}")
        sys.stdout.write(format_markdown(rows))
        if result.interrupted:
            print("partial: interrupted before every test ran")
    if result.interrupted:
        measured = sum(1 for r in result.rows if not r.skipped)
        print(f"tightfit: interrupted: the run is partial, {measured} measured rows printed", file=sys.stderr)
        return 130
    return 1 if result.failures else 0


def _record_in_journey(rows: list[dict[str, Any]], model: Path) -> None:
    """Every measured row goes into the journey beside the window's loads and replies."""
    import time

    from gui.core.journey import bench_record
    from gui.services.journey import JourneyStore

    measured = [row for row in rows if not row.get("skipped")]
    if not measured:
        return
    with JourneyStore() as store:
        for row in measured:
            store.add_bench_row(bench_record(row, now=time.time(), model_path=model.resolve()))
        if not store.persistent and store.warning:
            print(f"tightfit: the journey was not saved: {english(store.warning)}", file=sys.stderr)


def tests_from_args(args: argparse.Namespace) -> tuple[list[BenchTest], int]:
    def values(spec: IntSpec) -> list[int]:
        text = getattr(args, spec.key)
        return [spec.default] if text is None else parse_value_list(spec, text)

    reps = values(REPETITIONS)
    if len(reps) > 1:
        raise ValueError(f"{REPETITIONS.flag} takes one number (got {args.reps!r})")
    return bench_tests(values(PROMPT_TOKENS), values(GEN_TOKENS), values(DEPTH)), reps[0]


@dataclass
class SweepResult:
    rows: list[BenchRow] = field(default_factory=list)
    interrupted: bool = False
    failures: int = 0  # configurations that would not load, tests the engine failed
    loads: int = 0
    engine: Text = ""  # the engine build, in words


class BenchSweep:
    """Runs the jobs on one engine worker (a fresh one after a crash), in order, loading only when needed: the
    blocking loop that drives gui/services/bench_run.py's BenchRun on a SyncEngine, with Ctrl+C once (stop after
    the repetition under way) and twice (at once)."""

    def __init__(
        self,
        model: Path,
        tests: Sequence[BenchTest],
        reps: int,
        jobs: Sequence[Job],
        *,
        make_engine: Callable[[], SyncEngine] = SyncEngine,
        nvml: Nvml | None = None,
        gpu_count: int = 0,
        progress: Callable[[str], None] | None = None,
        n_layer: int | None = None,
    ) -> None:
        self.model = model
        self.make_engine = make_engine
        self.progress = progress or (lambda _line: None)
        self.bench = BenchRun(
            model, jobs, tests, reps, n_layer=n_layer, nvml=nvml, gpu_count=gpu_count, on_row=self._report
        )
        self._engine: SyncEngine | None = None
        self._said: set[Text] = set()  # load failures already told on stderr

    def run(self) -> SweepResult:
        bench = self.bench
        try:
            action: Action | None = bench.start()
            while isinstance(action, LoadModel | RunTest):
                action = self._do(action)
        except KeyboardInterrupt:  # between the engine's answers: stop at once
            bench.abandon()
        finally:
            self._close_engine()
        if bench.running:  # not expected: every answer above leads to the next action or the end
            bench.abandon()
        build = bench.build
        return SweepResult(
            rows=bench.rows,
            interrupted=bench.partial,
            failures=bench.failures,
            loads=bench.loads,
            engine=build.describe() if build is not None else "",
        )

    def _do(self, action: LoadModel | RunTest) -> Action | None:
        if isinstance(action, LoadModel):
            return self._load(action.settings)
        return self._run_test(action)

    def _engine_now(self) -> SyncEngine:
        if self._engine is None:
            engine = self.make_engine()
            engine.__enter__()
            self._engine = engine
            self.bench.note_build(engine.client.build)
        return self._engine

    def _close_engine(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            engine.__exit__(None, None, None)

    def _load(self, settings: LoadSettings) -> Action | None:
        try:
            engine = self._engine_now()
            engine.client.load(self.model, settings)
            while True:
                event = engine.next_event(LOAD_TIMEOUT_S)
                if isinstance(event, p.Loaded):
                    return self.bench.loaded()
                if isinstance(event, p.LoadFailed):
                    return self._load_failed(settings, event.error)
        except EngineUnavailable as exc:  # the worker died loading (an out-of-memory abort): a fresh one next time
            self._close_engine()
            return self._load_failed(settings, english_error(exc))
        except KeyboardInterrupt:  # during a load: stop at once
            return self.bench.abandon()

    def _load_failed(self, settings: LoadSettings, error: Text) -> Action | None:
        if error not in self._said:  # a broken file fails every load alike: one line says it
            self._said.add(error)
            where = f"{self.model.name} ({_describe(settings)})"
            print(f"tightfit: error: could not load {where}: {english(error)}", file=sys.stderr)
        return self.bench.load_failed(error)

    def _run_test(self, test: RunTest) -> Action | None:
        engine = self._engine_now()
        bench = self.bench
        try:
            t = test.test
            request = engine.client.bench(t.n_prompt, t.n_gen, t.n_depth, test.reps, test.n_threads)
        except EngineUnavailable as exc:
            self._close_engine()
            return bench.engine_died(english_error(exc))
        action = bench.sent(request, engine.client.pid)
        while action is None:
            try:
                event = engine.next_event(EVENT_TIMEOUT_S)
            except KeyboardInterrupt:
                action = self._interrupt(engine)
                continue
            except EngineUnavailable as exc:
                self._close_engine()
                return bench.engine_died(english_error(exc))
            action = bench.on_event(event)
        return action

    def _interrupt(self, engine: SyncEngine) -> Action | None:
        """Ctrl+C during a test: the first asks the engine to stop after the repetition under way (None: keep
        waiting for it); a second ends the engine at once, the repetitions received so far making a partial row."""
        bench = self.bench
        if bench.stopping:
            engine.client.kill("the benchmark was stopped")
            self._close_engine()
            return bench.abandon()
        print("tightfit: stopping after the repetition under way (Ctrl+C again: at once)", file=sys.stderr)
        stop = bench.stop()
        if isinstance(stop, StopTest):
            engine.client.stop(stop.request_id)
            return None
        return stop

    def _report(self, row: BenchRow, ran: bool) -> None:
        if not ran:
            return
        speed = f"{row.avg_ts:.2f} tok/s" if row.avg_ts is not None else row.reason or "no repetition finished"
        self.progress(f"{_describe(row.settings)}, {row.test.name}: {speed}")


def _describe(settings: LoadSettings) -> str:
    return f"ngl {settings.n_gpu_layers}, threads {settings.n_threads}, batch {settings.n_batch}/{settings.n_ubatch}"


def _progress_printer() -> Callable[[str], None] | None:
    """Progress on stderr when it is a terminal: what each test measured as it ends."""
    if not sys.stderr.isatty():
        return None
    return lambda line: print(f"bench: {line}", file=sys.stderr, flush=True)
