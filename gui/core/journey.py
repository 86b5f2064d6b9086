"""The journey: the user's own staged table, built from every load, reply and benchmark row they ran.

The field notes' story is a table: 4, then 8, then 35, then 64 tok/s, each stage one change of settings,
ending near the memory-bandwidth ceiling. Tightfit records every load, every reply's speed and every
benchmark row (gui/services/journey.py stores them); this module, pure, turns those records into that
table: the distinct *configurations* the user has run, in the order they were first used, each with its
best and typical (median) decode speed, the share of the planner's ceiling it reaches, and what changed
from the stage before, in words ("GPU layers 40 → 57; flash attention off → on").

A configuration is the model file, the settings that change speed (:data:`SPEED_SETTINGS`), the engine
build and the card. GPU layers count as the engine placed them (all 65 layers of a 64-block model, or
none on a build without GPU offload), so ``--ngl 999`` and ``--ngl 65`` of the same model are one
configuration. A configuration appears once something measured its speed: a reply that decoded at least
:data:`MIN_DECODE_TOKENS` tokens, or a benchmark row. Decode speed is llama.cpp's own rate
(``ReplyStats.engine_decode_tok_s``) or a ``tg`` row's mean at depth 0; a ``tg`` row measured at a depth
is slower by design and would drag the median down, so it is left out of the decode figures.

The records also come from outside (a benchmark row is a dict from ``tightfit bench``; stored settings
may be another version's), so every reader here takes what it understands and ignores the rest.
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import math
import statistics
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gui.core import protocol as p
from gui.core.load_state import LoadState
from gui.core.params import LOAD_SPECS, SPECS_BY_KEY, LoadSettings, llama_gpu_layers
from gui.core.planner import Plan
from gui.core.words import Text, Words, english, fixed, joined, mark, words

__all__ = [
    "CSV_COLUMNS",
    "MEMORY_ONLY_SETTINGS",
    "MIN_DECODE_TOKENS",
    "NOTE_COLUMN",
    "SPEED_SETTINGS",
    "STAGE_COLUMNS",
    "BenchRecord",
    "BuildInfo",
    "Configuration",
    "JourneyData",
    "LoadRecord",
    "ReplyRecord",
    "Stage",
    "bench_record",
    "card_of",
    "config_key",
    "configurations",
    "describe_configuration",
    "layers_on_gpu",
    "load_record",
    "reply_record",
    "speed_settings",
    "stage_cells",
    "stage_record",
    "stages",
    "to_csv",
    "to_json",
    "to_markdown",
    "to_text",
    "what_changed",
]

# The load settings that change how fast a model decodes or reads a prompt: a change in one is a new
# stage. Every LoadSettings field is in exactly one of these two tuples (tests/test_journey.py checks), so
# a new setting has to be placed.
SPEED_SETTINGS: tuple[str, ...] = (
    "n_gpu_layers",
    "n_ctx",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "n_parallel",
    "cache_type_k",
    "cache_type_v",
    "flash_attn",
    "use_mmap",
    "n_cpu_moe",
    "cpu_moe",
    "op_offload",
    "split_mode",
    "tensor_split",
    "main_gpu",
    "rpc_servers",
)
# Settings that move memory but not speed: the same configuration whichever way they are set.
MEMORY_ONLY_SETTINGS: tuple[str, ...] = ("swa_full", "n_outputs_max", "kv_unified")

# A reply of a token or two has no decode rate worth a median: the first token's time is the prompt's.
MIN_DECODE_TOKENS = 8

# Settings always named in a baseline's description; the others only when they are not the default.
_BASELINE_SETTINGS = ("n_gpu_layers", "n_ctx", "n_batch", "n_ubatch", "n_threads", "flash_attn")
_DEFAULTS = LoadSettings()


# ---- records ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildInfo:
    """What of the engine build decides speed: the backend, the package version, the CUDA archs."""

    backend: str = "unknown"
    llama_cpp_python: str = ""
    cuda_archs: tuple[int, ...] = ()
    gpu_offload: bool = True  # unknown counts as able: the layers the engine reported are then taken as they are

    @classmethod
    def from_engine(cls, build: p.EngineBuild | None) -> BuildInfo:
        if build is None:
            return cls()
        return cls(build.backend, build.llama_cpp_python, tuple(build.cuda_archs), build.gpu_offload)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> BuildInfo:
        """From a benchmark row or a stored record: the keys ``EngineBuild`` and ``tightfit engine --json`` use."""
        archs = data.get("cuda_archs") or ()
        if isinstance(archs, str):
            archs = [a for a in archs.replace(" ", ",").split(",") if a]
        try:
            parsed = tuple(int(a) for a in archs)
        except (TypeError, ValueError):
            parsed = ()
        offload = data.get("gpu_offload")
        return cls(
            str(data.get("backend") or "unknown"),
            str(data.get("llama_cpp_python") or ""),
            parsed,
            bool(offload) if offload is not None else True,
        )

    def describe(self) -> Text:
        """ "CUDA build 0.3.16 for 7.0", "CPU build 0.3.16": short enough for a table cell."""
        backend = words("unknown") if self.backend == "unknown" else self.backend
        archs = ", ".join(f"{a // 10}.{a % 10}" for a in self.cuda_archs)
        version = self.llama_cpp_python
        if version and archs:
            return words("{backend} build {version} for {archs}", backend=backend, version=version, archs=archs)
        if version:
            return words("{backend} build {version}", backend=backend, version=version)
        if archs:
            return words("{backend} build for {archs}", backend=backend, archs=archs)
        return words("{backend} build", backend=backend)


@dataclass(frozen=True)
class LoadRecord:
    """One model load the engine reported, with what it was loaded with and on."""

    uid: str  # replies name their load by it (known before the row is written, so no round trip)
    time: float  # Unix time
    model_path: str
    model_name: str
    settings: Mapping[str, Any]  # LoadSettings.to_dict() as sent
    build: BuildInfo
    card: str  # the GPU(s) the layers went to, or "CPU"
    load_ms: float
    layers_on_gpu: int  # as the GPU-layers slider counts them: blocks + the output layer
    n_layer: int  # repeating blocks in the model
    ceiling_tok_s: float | None  # the planner's decode ceiling for this load, when it planned for this machine


@dataclass(frozen=True)
class ReplyRecord:
    time: float
    load_uid: str
    n_prompt: int
    n_prompt_evaluated: int
    n_gen: int
    prompt_tok_s: float
    decode_tok_s: float  # llama.cpp's own rate
    ceiling_tok_s: float | None


@dataclass(frozen=True)
class BenchRecord:
    """One row of ``tightfit bench`` (llama-bench's semantics), as it was measured."""

    time: float
    model_path: str
    model_name: str
    test: str  # "pp512", "tg128", "tg128@d4096"
    n_prompt: int
    n_gen: int
    n_depth: int
    avg_ts: float
    stddev_ts: float
    settings: Mapping[str, Any]
    build: BuildInfo
    card: str
    ceiling_tok_s: float | None
    n_layer: int | None  # the model's blocks, when the row says (else taken from a load of the same file)
    row: Mapping[str, Any] = field(default_factory=dict)  # the whole row as given, for what this module ignores

    @property
    def is_decode(self) -> bool:
        """A tg test at depth 0: single-token decodes on an empty context, the figure a chat sees first."""
        return self.n_gen > 0 and self.n_prompt == 0 and self.n_depth == 0

    @property
    def is_prompt(self) -> bool:
        return self.n_prompt > 0 and self.n_gen == 0


@dataclass(frozen=True)
class JourneyData:
    """Everything stored, oldest first; notes by configuration key."""

    loads: Sequence[LoadRecord] = ()
    replies: Sequence[ReplyRecord] = ()
    bench: Sequence[BenchRecord] = ()
    notes: Mapping[str, str] = field(default_factory=dict)


# ---- building records from what the window has -----------------------------------------------


def layers_on_gpu(n_gpu_layers: int, n_layer: int | None, gpu_offload: bool = True) -> int:
    """The layers a load puts on a GPU, counted as the slider counts them (blocks + the output layer); a
    build without GPU offload puts none there whatever the setting says."""
    if not gpu_offload:
        return 0
    if n_layer is None:
        return n_gpu_layers
    total = n_layer + 1
    return total if llama_gpu_layers(n_gpu_layers, n_layer) < 0 else min(n_gpu_layers, total)


def card_of(plan: Plan | None, layers: int, here: bool = True) -> str:
    """Where the layers ran: "CPU" when none went to a GPU; the GPUs of the plan when it was planned for
    this machine (``here``); otherwise just "GPU" (a "what if" plan names a card the machine lacks)."""
    if layers <= 0:
        return "CPU"
    if here and plan is not None and plan.devices:
        return " + ".join(d.name for d in plan.devices)
    return "GPU"


def load_record(
    state: LoadState,
    *,
    here: bool = True,
    plan: Plan | None = None,
    now: float,
    uid: str | None = None,
) -> LoadRecord:
    """The record of a finished load: ``state`` is the window's LoadState once its phase is LOADED (its
    ``loaded``, ``model``, ``settings``, ``build`` and ``plan`` are read). ``here``: whether the plan was
    made for this machine (``Target.here``); a "what if" plan's ceiling and card are not this load's.
    ``plan`` overrides ``state.plan``. Raises ValueError when the state holds no finished load."""
    loaded, model, settings = state.loaded, state.model, state.settings
    if loaded is None or model is None or settings is None:
        raise ValueError(words("no finished load in this state"))
    build = BuildInfo.from_engine(state.build)
    plan = plan if plan is not None else state.plan
    layers = layers_on_gpu(loaded.n_gpu_layers, loaded.n_layer, build.gpu_offload)
    ceiling = plan.predicted_tg_tok_s if here and plan is not None else None
    return LoadRecord(
        uid=uid or uuid.uuid4().hex,
        time=now,
        model_path=str(model),
        model_name=model.name,
        settings=settings.to_dict(),
        build=build,
        card=card_of(plan, layers, here),
        load_ms=float(loaded.load_ms),
        layers_on_gpu=layers,
        n_layer=loaded.n_layer,
        ceiling_tok_s=_finite(ceiling),
    )


def reply_record(stats: p.ReplyStats, load: LoadRecord, *, now: float) -> ReplyRecord:
    """One reply's speed, tied to the load it was generated on (and that load's ceiling)."""
    return ReplyRecord(
        time=now,
        load_uid=load.uid,
        n_prompt=stats.n_prompt,
        n_prompt_evaluated=stats.n_prompt_evaluated,
        n_gen=stats.n_gen,
        prompt_tok_s=_finite(stats.prompt_tok_s) or 0.0,
        decode_tok_s=_finite(stats.engine_decode_tok_s) or 0.0,
        ceiling_tok_s=load.ceiling_tok_s,
    )


def bench_record(
    row: Mapping[str, Any],
    *,
    now: float,
    model_path: str | Path | None = None,
    build: p.EngineBuild | BuildInfo | None = None,
    card: str | None = None,
    n_layer: int | None = None,
    ceiling_tok_s: float | None = None,
) -> BenchRecord:
    """A ``tightfit bench`` row as a record. What the row says wins; the keywords fill what it lacks.

    Read from the row: ``test``, ``n_prompt``, ``n_gen``, ``n_depth``, ``avg_ts``, ``stddev_ts``; the model
    from ``model_path``, ``model`` or ``model_filename``; the settings from ``settings`` (a mapping) or
    else the LoadSettings keys at the top level; the build from ``build`` (a mapping) or ``backend``,
    ``llama_cpp_python``, ``cuda_archs`` and ``gpu_offload`` at the top level; the card from ``card`` or
    ``gpu`` (else ``card`` when the row put layers on a GPU, "CPU" when it put none); the ceiling from
    ``ceiling_tok_s``, ``predicted_tg_tok_s`` or ``ceiling_ts``; ``n_layer``.
    Raises ValueError for a row without a test name or a mean speed.
    """
    test = str(row.get("test") or "").strip()
    avg = _number(row.get("avg_ts"))
    if not test or avg is None:
        raise ValueError(words("a benchmark row needs a test name and avg_ts"))
    path = str(_first(row, "model_path", "model", "model_filename") or model_path or "")
    raw_settings = row.get("settings")
    if isinstance(raw_settings, Mapping):
        settings = dict(raw_settings)
    else:
        settings = {spec.key: row[spec.key] for spec in LOAD_SPECS if spec.key in row}
    nested = row.get("build")
    if isinstance(nested, Mapping):
        info = BuildInfo.from_mapping(nested)
    elif "backend" in row:
        info = BuildInfo.from_mapping(row)
    elif isinstance(build, p.EngineBuild):
        info = BuildInfo.from_engine(build)
    else:
        info = build or BuildInfo()
    layers_total = _integer(row.get("n_layer"))
    total = layers_total if layers_total is not None else n_layer
    ngl = _integer(settings.get("n_gpu_layers"))
    layers = layers_on_gpu(ngl if ngl is not None else _DEFAULTS.n_gpu_layers, total, info.gpu_offload)
    given_card = _first(row, "card", "gpu")
    ceiling = _number(_first(row, "ceiling_tok_s", "predicted_tg_tok_s", "ceiling_ts"))
    return BenchRecord(
        time=now,
        model_path=path,
        model_name=Path(path).name if path else "",
        test=test,
        n_prompt=_integer(row.get("n_prompt")) or 0,
        n_gen=_integer(row.get("n_gen")) or 0,
        n_depth=_integer(row.get("n_depth")) or 0,
        avg_ts=avg,
        stddev_ts=_number(row.get("stddev_ts")) or 0.0,
        settings=settings,
        build=info,
        card=str(given_card) if given_card else ("CPU" if layers <= 0 else (card or "GPU")),
        ceiling_tok_s=ceiling if ceiling is not None else _finite(ceiling_tok_s),
        n_layer=total,
        row=_jsonable(row),
    )


# ---- configurations and stages ------------------------------------------------------------------


@dataclass(frozen=True)
class Configuration:
    key: str
    model_path: str
    model_name: str
    settings: Mapping[str, Any]  # the speed settings, GPU layers as placed
    build: BuildInfo
    card: str
    n_layer: int | None
    first_used: float
    last_used: float
    decode_tok_s: tuple[float, ...] = ()  # every measured decode rate, in time order
    prompt_tok_s: tuple[float, ...] = ()
    ceiling_tok_s: float | None = None  # the latest the planner gave
    loads: int = 0

    @property
    def runs(self) -> int:
        """Measurements of decode speed: replies and tg rows."""
        return len(self.decode_tok_s)

    @property
    def best_tok_s(self) -> float | None:
        return max(self.decode_tok_s) if self.decode_tok_s else None

    @property
    def typical_tok_s(self) -> float | None:
        return statistics.median(self.decode_tok_s) if self.decode_tok_s else None

    @property
    def best_prompt_tok_s(self) -> float | None:
        return max(self.prompt_tok_s) if self.prompt_tok_s else None

    @property
    def pct_of_ceiling(self) -> float | None:
        """The typical decode speed as a share of the ceiling: the seed's "64 tok/s is 93% of it"."""
        typical = self.typical_tok_s
        if typical is None or not self.ceiling_tok_s:
            return None
        return 100.0 * typical / self.ceiling_tok_s


@dataclass(frozen=True)
class Stage:
    number: int  # 1-based, in order of first use
    configuration: Configuration
    changed: Text  # from the previous stage, in words; the baseline's description for stage 1
    note: str = ""

    @property
    def key(self) -> str:
        return self.configuration.key


def config_key(model_path: str, settings: Mapping[str, Any], build: BuildInfo, card: str) -> str:
    """A short, stable name for a configuration: where a note is kept."""
    canonical = json.dumps(
        {
            "model": model_path,
            "settings": {k: settings.get(k) for k in SPEED_SETTINGS},
            "build": [build.backend, build.llama_cpp_python, list(build.cuda_archs), build.gpu_offload],
            "card": card,
        },
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:20]


def speed_settings(raw: Mapping[str, Any], layers: int) -> dict[str, Any]:
    """The speed settings of a stored settings dict: missing keys at their defaults, GPU layers as placed."""
    chosen: dict[str, Any] = {}
    for key in SPEED_SETTINGS:
        default = getattr(_DEFAULTS, key)
        value = raw.get(key, default)
        # Another version's value of another type would make two equal configurations look different.
        chosen[key] = value if type(value) is type(default) else default
    chosen["n_gpu_layers"] = layers
    return chosen


class _Group:
    """A configuration being gathered."""

    def __init__(self, key: str, path: str, name: str, settings: dict[str, Any], build: BuildInfo, card: str) -> None:
        self.key, self.path, self.name, self.settings, self.build, self.card = key, path, name, settings, build, card
        self.n_layer: int | None = None
        self.first = math.inf
        self.last = -math.inf
        self.decode: list[tuple[float, float]] = []  # (time, tok/s)
        self.prompt: list[tuple[float, float]] = []
        self.ceilings: list[tuple[float, float]] = []
        self.loads = 0

    def used(self, when: float) -> None:
        self.first, self.last = min(self.first, when), max(self.last, when)

    def ceiling(self, when: float, value: float | None) -> None:
        if value is not None and value > 0:
            self.ceilings.append((when, value))

    def done(self) -> Configuration:
        return Configuration(
            key=self.key,
            model_path=self.path,
            model_name=self.name,
            settings=self.settings,
            build=self.build,
            card=self.card,
            n_layer=self.n_layer,
            first_used=self.first,
            last_used=self.last,
            decode_tok_s=tuple(v for _, v in sorted(self.decode)),
            prompt_tok_s=tuple(v for _, v in sorted(self.prompt)),
            ceiling_tok_s=max(self.ceilings)[1] if self.ceilings else None,
            loads=self.loads,
        )


def configurations(data: JourneyData) -> list[Configuration]:
    """The distinct configurations with at least one measured speed, in order of first use."""
    groups: dict[str, _Group] = {}

    def group(path: str, name: str, settings: dict[str, Any], build: BuildInfo, card: str) -> _Group:
        key = config_key(path, settings, build, card)
        if key not in groups:
            groups[key] = _Group(key, path, name or Path(path).name, settings, build, card)
        return groups[key]

    by_load: dict[str, _Group] = {}
    blocks: dict[str, int] = {}  # model path -> n_layer, from its loads, for rows that do not say
    for load in data.loads:
        settings = speed_settings(load.settings, load.layers_on_gpu)
        g = group(load.model_path, load.model_name, settings, load.build, load.card)
        g.n_layer = load.n_layer
        g.loads += 1
        g.used(load.time)
        g.ceiling(load.time, load.ceiling_tok_s)
        by_load[load.uid] = g
        blocks[load.model_path] = load.n_layer
    for reply in data.replies:
        g_or_none = by_load.get(reply.load_uid)
        if g_or_none is None:
            continue  # its load was pruned (or written by a store that lost it): no configuration to put it in
        g = g_or_none
        g.used(reply.time)
        g.ceiling(reply.time, reply.ceiling_tok_s)
        if reply.n_gen >= MIN_DECODE_TOKENS and reply.decode_tok_s > 0:
            g.decode.append((reply.time, reply.decode_tok_s))
        if reply.n_prompt_evaluated >= MIN_DECODE_TOKENS and reply.prompt_tok_s > 0:
            g.prompt.append((reply.time, reply.prompt_tok_s))
    for row in data.bench:
        n_layer = row.n_layer if row.n_layer is not None else blocks.get(row.model_path)
        ngl = row.settings.get("n_gpu_layers", _DEFAULTS.n_gpu_layers)
        layers = layers_on_gpu(ngl if isinstance(ngl, int) else _DEFAULTS.n_gpu_layers, n_layer, row.build.gpu_offload)
        g = group(row.model_path, row.model_name, speed_settings(row.settings, layers), row.build, row.card)
        if g.n_layer is None:
            g.n_layer = n_layer
        g.used(row.time)
        g.ceiling(row.time, row.ceiling_tok_s)
        if row.avg_ts > 0 and row.is_decode:
            g.decode.append((row.time, row.avg_ts))
        elif row.avg_ts > 0 and row.is_prompt:
            g.prompt.append((row.time, row.avg_ts))
    measured = [g.done() for g in groups.values() if g.decode or g.prompt]
    return sorted(measured, key=lambda c: (c.first_used, c.key))


def stages(data: JourneyData) -> list[Stage]:
    """The staged table: each configuration in order of first use, with what changed from the one before."""
    out: list[Stage] = []
    previous: Configuration | None = None
    for number, configuration in enumerate(configurations(data), start=1):
        changed = what_changed(previous, configuration)
        out.append(Stage(number, configuration, changed, data.notes.get(configuration.key, "")))
        previous = configuration
    return out


def _label(key: str) -> Words:
    """The setting's label inside a sentence: "flash attention", "experts on the CPU", but "GPU layers"
    and "K cache type" (a first word in capitals is a name); the window shows the label's translation."""
    label = SPECS_BY_KEY[key].label
    return fixed(label, "params", label if label.split()[0].isupper() else label[0].lower() + label[1:])


def _value(configuration: Configuration, key: str) -> Text:
    value = configuration.settings.get(key)
    if isinstance(value, bool):
        return words("on") if value else words("off")
    if key == "n_gpu_layers" and configuration.n_layer is not None and value == configuration.n_layer + 1:
        return words("{n} (all)", n=value)
    return str(value)


def describe_configuration(configuration: Configuration) -> Text:
    """A baseline in words (the model has its own column): the settings that always matter, any other that
    is not the default, the card and the engine."""
    parts: list[Text] = []
    for key in SPEED_SETTINGS:
        if key in _BASELINE_SETTINGS or configuration.settings.get(key) != getattr(_DEFAULTS, key):
            parts.append(words("{setting} {value}", setting=_label(key), value=_value(configuration, key)))
    parts.append(words("on {card}", card=configuration.card))
    parts.append(configuration.build.describe())
    return joined(", ", parts)


def what_changed(before: Configuration | None, after: Configuration) -> Text:
    """What differs from the previous stage, in words ("GPU layers 40 → 57; flash attention off → on");
    for the first stage, "baseline: " and its description."""
    if before is None:
        return words("baseline: {description}", description=describe_configuration(after))
    moved: list[Text] = []
    if before.model_path != after.model_path:
        if before.model_name != after.model_name:
            moved.append(words("model {before} → {after}", before=before.model_name, after=after.model_name))
        else:
            moved.append(words("model file {before} → {after}", before=before.model_path, after=after.model_path))
    moved += [
        words("{setting} {before} → {after}", setting=_label(key), before=_value(before, key), after=_value(after, key))
        for key in SPEED_SETTINGS
        if before.settings.get(key) != after.settings.get(key)
    ]
    if before.card != after.card:
        moved.append(words("card {before} → {after}", before=before.card, after=after.card))
    if before.build != after.build:
        moved.append(words("engine {before} → {after}", before=before.build.describe(), after=after.build.describe()))
    return joined("; ", moved) if moved else words("no change in the settings that matter for speed")


# ---- the table and its exports --------------------------------------------------------------------

# The staged table as the view, the Markdown and the plain text show it.
STAGE_COLUMNS: tuple[str, ...] = (
    mark("stage", "journey"),
    mark("model", "journey"),
    mark("what changed", "journey"),
    mark("tok/s", "journey"),
    mark("best tok/s", "journey"),
    mark("% of ceiling", "journey"),
    mark("prompt tok/s", "journey"),
    mark("runs", "journey"),
    mark("note", "journey"),
)
NOTE_COLUMN = STAGE_COLUMNS.index("note")
_NONE = "—"


def _rate(value: float | None) -> str:
    return _NONE if value is None else f"{value:.1f}"


def stage_cells(stage: Stage) -> tuple[Text, ...]:
    """One row of the staged table, as text, in STAGE_COLUMNS order."""
    c = stage.configuration
    pct = c.pct_of_ceiling
    return (
        str(stage.number),
        c.model_name,
        stage.changed,
        _rate(c.typical_tok_s),
        _rate(c.best_tok_s),
        _NONE if pct is None else f"{pct:.0f}%",
        _rate(c.best_prompt_tok_s),
        str(c.runs),
        stage.note,
    )


def _markdown_cell(text: Text) -> str:
    # One line per cell, and nothing in a model name or a note that a renderer would take as markup:
    # a pipe would split the cell, angle brackets would be HTML.
    flat = " ".join(english(text).split())
    for ch in ("\\", "|", "<", ">", "`", "*", "[", "]"):
        flat = flat.replace(ch, "\\" + ch)
    return flat


def to_markdown(staged: Sequence[Stage]) -> str:
    """The staged table in the field notes' form, with its ceiling column explained below it."""
    lines = [
        "| " + " | ".join(STAGE_COLUMNS) + " |",
        "|" + "|".join("---:" if name in _NUMERIC_COLUMNS else "---" for name in STAGE_COLUMNS) + "|",
    ]
    lines += ["| " + " | ".join(_markdown_cell(cell) for cell in stage_cells(s)) + " |" for s in staged]
    lines += [
        "",
        "tok/s: the median decode speed (llama.cpp's own rate) over the runs; best: the fastest run; % of "
        "ceiling: the median against the planner's memory-bandwidth ceiling for that configuration.",
    ]
    return "\n".join(lines) + "\n"


_NUMERIC_COLUMNS = frozenset({"stage", "tok/s", "best tok/s", "% of ceiling", "prompt tok/s", "runs"})

# The CSV has a column per speed setting, so a spreadsheet can sort and chart them.
CSV_COLUMNS: tuple[str, ...] = (
    "stage",
    "first_used",
    "last_used",
    "model_name",
    "model_path",
    "card",
    "engine",
    *SPEED_SETTINGS,
    "what_changed",
    "typical_tok_s",
    "best_tok_s",
    "ceiling_tok_s",
    "pct_of_ceiling",
    "best_prompt_tok_s",
    "runs",
    "loads",
    "note",
)


def _iso(when: float) -> str:
    return dt.datetime.fromtimestamp(when, dt.UTC).isoformat(timespec="seconds")


def _round(value: float | None, places: int = 2) -> float | None:
    return None if value is None else round(value, places)


def stage_record(stage: Stage) -> dict[str, Any]:
    """One stage as plain data (the JSON output; the CSV's columns are its flat keys)."""
    c = stage.configuration
    return {
        "stage": stage.number,
        "key": c.key,
        "first_used": _iso(c.first_used),
        "last_used": _iso(c.last_used),
        "model_name": c.model_name,
        "model_path": c.model_path,
        "card": c.card,
        "engine": english(c.build.describe()),
        "build": {
            "backend": c.build.backend,
            "llama_cpp_python": c.build.llama_cpp_python,
            "cuda_archs": list(c.build.cuda_archs),
            "gpu_offload": c.build.gpu_offload,
        },
        "n_layer": c.n_layer,
        "settings": dict(c.settings),
        "what_changed": english(stage.changed),
        "typical_tok_s": _round(c.typical_tok_s),
        "best_tok_s": _round(c.best_tok_s),
        "ceiling_tok_s": _round(c.ceiling_tok_s),
        "pct_of_ceiling": _round(c.pct_of_ceiling, 1),
        "best_prompt_tok_s": _round(c.best_prompt_tok_s),
        "runs": c.runs,
        "loads": c.loads,
        "note": stage.note,
    }


def to_json(staged: Sequence[Stage]) -> str:
    return json.dumps([stage_record(s) for s in staged], indent=2, ensure_ascii=False) + "\n"


def _csv_text(value: str) -> str:
    # A cell a spreadsheet would run as a formula (a model name or a note from anyone) is kept as text.
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def to_csv(staged: Sequence[Stage]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for stage in staged:
        record = stage_record(stage)
        flat = {**record, **record["settings"]}
        row: list[Any] = []
        for name in CSV_COLUMNS:
            value = flat.get(name)
            if value is None:
                row.append("")
            elif isinstance(value, bool):
                row.append("on" if value else "off")
            elif isinstance(value, str):
                row.append(_csv_text(value))
            else:
                row.append(value)
        writer.writerow(row)
    return buffer.getvalue()


def to_text(staged: Sequence[Stage]) -> str:
    """The staged table in aligned columns for a terminal (the note last, as it may be long)."""
    rows = [STAGE_COLUMNS, *(tuple(" ".join(english(cell).split()) for cell in stage_cells(s)) for s in staged)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(STAGE_COLUMNS) - 1)]
    lines = []
    for r in rows:
        cells = [
            r[i].rjust(widths[i]) if STAGE_COLUMNS[i] in _NUMERIC_COLUMNS else r[i].ljust(widths[i])
            for i in range(len(widths))
        ]
        lines.append("  ".join([*cells, r[-1]]).rstrip())
    return "\n".join(lines) + "\n"


# ---- small readers for outside data -------------------------------------------------------------


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _integer(value: object) -> int | None:
    number = _number(value)
    return int(number) if number is not None else None


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    return next((row[k] for k in keys if row.get(k) not in (None, "")), None)


def _jsonable(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row as JSON will store it (a value JSON cannot hold becomes its text)."""
    loaded: dict[str, Any] = json.loads(json.dumps(dict(row), default=str))
    return loaded
