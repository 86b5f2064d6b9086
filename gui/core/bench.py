"""Benchmark sweeps with llama-bench's semantics: the tests, the grid of load settings, the rows and their formats.

Pure: the engine runs each test (``protocol.Bench``); this module says which tests and configurations there are,
in which order (so that the model is reloaded only when a setting needs it), and turns what was measured into
rows in llama-bench's spirit (``test`` "pp512", "tg128", "tg128@d4096"; ``avg_ts``, ``stddev_ts``, ``samples_ts``),
with what Tightfit adds: the planner's decode ceiling, the share of it measured, the peak memory measured, and
the configurations skipped, with why.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gui.core.gguf_reader import GGUFHeader
from gui.core.params import LOAD_SPECS, LoadSettings
from gui.core.planner import Device, Plan, Verdict, plan
from gui.core.specs import IntSpec, parse_value_list
from gui.core.words import Text, english, joined, mark, message_of, words

# What a test measures, with llama-bench's defaults (its -p, -n, -d and -r).
PROMPT_TOKENS = IntSpec(
    key="n_prompt", label=mark("Prompt tokens", "params"), flag="--pp", minimum=0, maximum=1 << 20, default=512,
    help=mark("Prompt processing: tokens decoded in batches (0: no prompt test).", "params"),
)  # fmt: skip
GEN_TOKENS = IntSpec(
    key="n_gen", label=mark("Generated tokens", "params"), flag="--tg", minimum=0, maximum=1 << 20, default=128,
    help=mark("Generation: single-token decodes (0: no generation test).", "params"),
)  # fmt: skip
DEPTH = IntSpec(
    key="n_depth", label=mark("Depth", "params"), flag="--depth", minimum=0, maximum=1 << 20, default=0,
    help=mark("Tokens already in the context when the test starts.", "params"),
)  # fmt: skip
REPETITIONS = IntSpec(
    key="reps", label=mark("Repetitions", "params"), flag="--reps", minimum=1, maximum=1000, default=5,
    help=mark("Timed repetitions of each test, after one warm-up.", "params"),
)  # fmt: skip

# Settings the engine changes on the loaded context (llama_set_n_threads); every other one needs a reload.
WITHOUT_RELOAD = ("n_threads",)

# The context a test runs in is rounded up to llama.cpp's own padding of it.
CTX_PAD = 256


@dataclass(frozen=True)
class BenchTest:
    n_prompt: int
    n_gen: int
    n_depth: int = 0

    @property
    def name(self) -> str:
        """llama-bench's name for it: pp512, tg128, pp512+tg128, with @d4096 for a depth."""
        if self.n_gen == 0:
            name = f"pp{self.n_prompt}"
        elif self.n_prompt == 0:
            name = f"tg{self.n_gen}"
        else:
            name = f"pp{self.n_prompt}+tg{self.n_gen}"
        return f"{name}@d{self.n_depth}" if self.n_depth else name

    @property
    def n_ctx_needed(self) -> int:
        return self.n_depth + self.n_prompt + self.n_gen

    @property
    def is_generation(self) -> bool:
        return self.n_gen > 0 and self.n_prompt == 0


def bench_tests(pp: Sequence[int], tg: Sequence[int], depths: Sequence[int] = (0,)) -> list[BenchTest]:
    """llama-bench's tests for one configuration, in its order: for each depth, the prompt tests, then the
    generation tests (a size of 0 is no test)."""
    tests = []
    for depth in depths:
        tests += [BenchTest(n, 0, depth) for n in pp if n > 0]
        tests += [BenchTest(0, n, depth) for n in tg if n > 0]
    if not tests:
        raise ValueError(words("nothing to measure: --pp and --tg are both 0"))
    return tests


def context_for(tests: Iterable[BenchTest]) -> int:
    """The smallest context that holds every test, as llama.cpp pads it (llama-bench sizes each test's own)."""
    needed = max((t.n_ctx_needed for t in tests), default=0)
    return max(CTX_PAD, -(-needed // CTX_PAD) * CTX_PAD)


def needs_reload(loaded: LoadSettings | None, wanted: LoadSettings) -> bool:
    """Whether going from the loaded settings to ``wanted`` takes a new load (None: nothing is loaded)."""
    if loaded is None:
        return True
    return any(getattr(loaded, s.key) != getattr(wanted, s.key) for s in LOAD_SPECS if s.key not in WITHOUT_RELOAD)


@dataclass(frozen=True)
class Config:
    """One point of the grid: its settings, or why that combination cannot be loaded at all."""

    settings: LoadSettings
    invalid: Text = ""  # e.g. "Micro-batch (1024) cannot exceed batch (512)"


def sweep_grid(base: LoadSettings, lists: Mapping[str, Sequence[Any]]) -> list[Config]:
    """The cartesian product of the given value lists over ``base``. Settings that need a reload vary slowest,
    in their declaration order, and the threads fastest: consecutive configurations share a load wherever the
    product allows. A combination the settings' own rules refuse is kept, with the reason. Without a list of
    micro-batches, each batch smaller than the micro-batch takes it as its micro-batch, as llama.cpp does."""
    keys = [s.key for s in LOAD_SPECS if s.key in lists and s.key not in WITHOUT_RELOAD]
    keys += [k for k in WITHOUT_RELOAD if k in lists]
    configs = []
    for values in itertools.product(*(lists[k] for k in keys)):
        settings = base.with_values(**dict(zip(keys, values, strict=True)))
        if "n_ubatch" not in lists:
            settings = settings.with_values(n_ubatch=min(settings.n_ubatch, settings.n_batch))
        try:
            configs.append(Config(settings.validated()))
        except ValueError as exc:
            configs.append(Config(settings, message_of(exc)))
    return configs


def count_loads(configs: Iterable[LoadSettings]) -> int:
    """How many loads running these configurations in order takes."""
    loads, loaded = 0, None
    for settings in configs:
        if needs_reload(loaded, settings):
            loads += 1
        loaded = settings
    return loads


@dataclass(frozen=True)
class Job:
    """A configuration as the sweep runs it: the plan's ceiling, and why it is skipped ('' to run it)."""

    config: Config
    ceiling_tok_s: float | None = None
    skip: Text = ""


def plan_jobs(
    header: GGUFHeader,
    configs: Sequence[Config],
    devices: Sequence[Device],
    margin_mib: float,
    ram_gbs: float | None,
    anyway: bool,
    measure_ram: Callable[[], float | None] = lambda: None,
) -> list[Job]:
    """Each configuration planned: its decode ceiling, and whether it is skipped (will not fit, or settings that
    contradict each other). The RAM bandwidth a ceiling needs is measured once (``measure_ram``), when some plan
    reads host memory and none was given."""
    jobs = []
    for config in configs:
        if config.invalid:
            jobs.append(Job(config, skip=config.invalid))
            continue

        def planned(ram: float | None, settings: LoadSettings = config.settings) -> Plan:
            return plan(header, settings, devices, margin_mib=margin_mib, ram_bandwidth_gbs=ram, suggest=False)

        result = planned(ram_gbs)
        if ram_gbs is None and result.host.weights_mib > 0:
            ram_gbs = measure_ram()
            result = planned(ram_gbs)
        skip: Text = ""
        if result.verdict is Verdict.WONT_FIT and not anyway:
            short = [
                words(
                    "{device} needs {needed} MiB, {free} MiB free",
                    device=d.name,
                    needed=f"{d.needed_mib:,.0f}",
                    free=f"{d.free_mib:,.0f}",
                )
                for d in result.devices
                if d.verdict is Verdict.WONT_FIT
            ]
            skip = words("will not fit: {devices} (--anyway runs it)", devices=joined("; ", short))
        jobs.append(Job(config, result.predicted_tg_tok_s, skip))
    return jobs


# The most configurations one sweep in the window may hold: each is planned as the grid is typed.
MAX_WINDOW_CONFIGS = 128


def grid_size(lists: Mapping[str, Sequence[Any]]) -> int:
    """How many configurations the product of these lists makes."""
    return math.prod(len(values) for values in lists.values())


def parse_grid(text: str) -> tuple[dict[str, list[Any]], list[int]]:
    """A sweep written as ``setting=v1,v2; setting=…`` (the setting by its key, ``n_threads``, or its flag,
    ``threads``; ``depth`` for the tokens already in the context) -> the value lists and the depths. Each value is
    checked against its declaration; an unknown setting or a bad value is a ValueError naming it."""
    by_name: dict[str, Any] = {}
    for spec in LOAD_SPECS:
        by_name[spec.key] = spec
        if spec.flag:
            by_name[spec.flag.lstrip("-")] = spec
    lists: dict[str, list[Any]] = {}
    depths: list[int] = []
    for part in text.split(";"):
        if not part.strip():
            continue
        name, sep, values = part.partition("=")
        name = name.strip().lower()
        if not sep:
            raise ValueError(words("{part}: write a setting and its values, e.g. threads=1,2", part=repr(part.strip())))
        if name in ("depth", "n_depth"):
            depths = parse_value_list(DEPTH, values)
            continue
        found = by_name.get(name)
        if found is None:
            known = ", ".join(sorted(s.flag.lstrip("-") for s in LOAD_SPECS if s.flag))
            raise ValueError(words("no setting called {name} (known: {known}, depth)", name=repr(name), known=known))
        lists[found.key] = parse_value_list(found, values)
    return lists, depths or [0]


# ---- rows ------------------------------------------------------------------------------------


def mean_and_stdev(values: Sequence[float]) -> tuple[float, float]:
    """llama-bench's avg and stdev: the sample standard deviation, 0 for fewer than two values."""
    if not values:
        return math.nan, math.nan
    return statistics.fmean(values), statistics.stdev(values) if len(values) > 1 else 0.0


@dataclass(frozen=True)
class BenchRow:
    model: str
    test: BenchTest
    settings: LoadSettings
    reps: int  # repetitions asked for
    samples_ns: tuple[int, ...] = ()
    ceiling_tok_s: float | None = None  # the planner's decode ceiling for these settings
    peak_rss_mib: float | None = None  # the engine process's resident memory, at its highest during the test
    peak_gpu_mib: float | None = None  # its GPU memory by NVML's per-process accounting, summed over the GPUs
    skipped: bool = False
    reason: str = ""  # why it was skipped or failed
    backend: str = ""
    build: str = ""  # the llama.cpp (ggml) version the engine was built from
    llama_cpp_python: str = ""
    n_layer: int | None = None  # the model's repeating blocks
    test_time: str = ""  # when the test started (ISO 8601)

    @property
    def partial(self) -> bool:
        """Measured, but with fewer repetitions than asked for: the run was stopped during this test."""
        return not self.skipped and len(self.samples_ns) < self.reps

    @property
    def samples_ts(self) -> tuple[float, ...]:
        n_tokens = self.test.n_prompt + self.test.n_gen
        return tuple(n_tokens * 1e9 / ns for ns in self.samples_ns if ns > 0)

    @property
    def avg_ts(self) -> float | None:
        return _finite(mean_and_stdev(self.samples_ts)[0])

    @property
    def stddev_ts(self) -> float | None:
        return _finite(mean_and_stdev(self.samples_ts)[1])

    @property
    def pct_of_ceiling(self) -> float | None:
        """The measured generation speed as a share of the predicted ceiling (generation tests only)."""
        avg = self.avg_ts
        if not self.test.is_generation or avg is None or not self.ceiling_tok_s:
            return None
        return 100.0 * avg / self.ceiling_tok_s

    def to_dict(self) -> dict[str, Any]:
        """The row as --json and --csv print it: llama-bench's names where it has the figure."""
        avg_ns, sd_ns = mean_and_stdev([float(ns) for ns in self.samples_ns])
        return {
            "model": self.model,
            "backend": self.backend,
            "build": self.build,
            "llama_cpp_python": self.llama_cpp_python,
            "n_layer": self.n_layer,
            **self.settings.to_dict(),
            "test": self.test.name,
            "n_prompt": self.test.n_prompt,
            "n_gen": self.test.n_gen,
            "n_depth": self.test.n_depth,
            "reps": self.reps,
            "test_time": self.test_time,
            "avg_ns": round(avg_ns) if math.isfinite(avg_ns) else None,
            "stddev_ns": round(sd_ns) if math.isfinite(sd_ns) else None,
            "avg_ts": _rounded(self.avg_ts, 6),
            "stddev_ts": _rounded(self.stddev_ts, 6),
            "samples_ns": list(self.samples_ns),
            "samples_ts": [round(ts, 6) for ts in self.samples_ts],
            "ceiling_tok_s": _rounded(self.ceiling_tok_s, 3),
            "pct_of_ceiling": _rounded(self.pct_of_ceiling, 2),
            "peak_rss_mib": _rounded(self.peak_rss_mib, 1),
            "peak_gpu_mib": _rounded(self.peak_gpu_mib, 1),
            "skipped": self.skipped,
            "reason": english(self.reason),
            "partial": self.partial,
        }


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _rounded(value: float | None, digits: int) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, digits) if digits else float(round(value))


# ---- formats ---------------------------------------------------------------------------------

ROW_KEYS: tuple[str, ...] = tuple(BenchRow("", BenchTest(1, 0), LoadSettings(), 1).to_dict())
# Settings every table shows; the others only where they differ between the rows.
ALWAYS_SHOWN = ("n_gpu_layers", "n_threads")
SHORT_NAMES = {
    "n_gpu_layers": "ngl",
    "n_threads": "threads",
    "n_batch": "n_batch",
    "n_ubatch": "n_ubatch",
    "n_ctx": "n_ctx",
    "flash_attn": "fa",
    "cache_type_k": "type_k",
    "cache_type_v": "type_v",
    "use_mmap": "mmap",
}


def format_csv(rows: Sequence[Mapping[str, Any]]) -> str:
    """One line per row, every key; lists of samples space-separated as llama-bench writes them."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    keys = list(rows[0]) if rows else list(ROW_KEYS)
    writer.writerow(keys)
    for row in rows:
        writer.writerow([_csv_value(row.get(k)) for k in keys])
    return out.getvalue()


def _csv_value(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def format_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """llama-bench's markdown table: the settings that matter, the test, tok/s as mean ± stdev, and Tightfit's
    columns (share of the decode ceiling, peak memory; GPU memory only where some row has it)."""
    setting_keys = [s.key for s in LOAD_SPECS]
    shown = [k for k in setting_keys if k in ALWAYS_SHOWN or len({_cell(r.get(k)) for r in rows}) > 1]
    gpu = any(r.get("peak_gpu_mib") is not None for r in rows)
    headers = [SHORT_NAMES.get(k, k) for k in shown] + ["test", "t/s", "% ceiling", "RSS MiB"]
    headers += ["GPU MiB"] if gpu else []
    lines = []
    for row in rows:
        cells = [_cell(row.get(k)) for k in shown] + [str(row.get("test", "")), _speed_cell(row)]
        cells.append(_number(row.get("pct_of_ceiling"), 1))
        cells.append(_number(row.get("peak_rss_mib"), 0))
        if gpu:
            cells.append(_number(row.get("peak_gpu_mib"), 0))
        lines.append(cells)
    widths = [max(len(h), *(len(c[i]) for c in lines)) for i, h in enumerate(headers)]
    numeric = {"t/s", "% ceiling", "RSS MiB", "GPU MiB", "ngl", "threads", "n_batch", "n_ubatch", "n_ctx"}

    def render(cells: Sequence[str]) -> str:
        padded = [c.rjust(w) if h in numeric else c.ljust(w) for c, w, h in zip(cells, widths, headers, strict=True)]
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|"
        + "|".join(
            ("-" * (w + 1) + ":") if h in numeric else ("-" * (w + 2)) for w, h in zip(widths, headers, strict=True)
        )
        + "|"
    )
    return "\n".join([render(headers), rule, *(render(c) for c in lines)]) + "\n"


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    return "" if value is None else str(value)


def _number(value: Any, digits: int) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _speed_cell(row: Mapping[str, Any]) -> str:
    if row.get("skipped"):
        return f"skipped: {row.get('reason', '')}"
    avg, sd = row.get("avg_ts"), row.get("stddev_ts")
    if avg is None:
        return "no repetition finished"
    text = f"{avg:.2f} ± {sd or 0.0:.2f}"
    if row.get("partial"):
        text += f" (partial: {len(row.get('samples_ns') or ())} of {row.get('reps')})"
    return text


def time_summary(rows: Sequence[BenchRow], wall_s: float) -> Text:
    """Where a sweep's time went: the tests measured, the wall time, the part in timed repetitions, and the rest
    (warm-ups, depth fills, loads and the engine's start) per configuration."""
    measured = [r for r in rows if not r.skipped]
    timed_s = sum(sum(r.samples_ns) for r in measured) / 1e9
    configs = len({r.settings for r in measured})
    figures = {"n": len(measured), "wall": f"{wall_s:,.1f}", "timed": f"{timed_s:,.1f}"}
    if not configs:  # nothing measured
        return words("{n} tests measured in {wall} s, {timed} s of it in the timed repetitions", **figures)
    per = f"{max(wall_s - timed_s, 0.0) / configs:,.1f}"
    if len(measured) == 1:
        return words(
            "{n} test measured in {wall} s, {timed} s of it in the timed repetitions; "
            "the rest (warm-ups, depths, loads) {per} s per configuration",
            per=per,
            **figures,
        )
    return words(
        "{n} tests measured in {wall} s, {timed} s of it in the timed repetitions; "
        "the rest (warm-ups, depths, loads) {per} s per configuration",
        per=per,
        **figures,
    )
