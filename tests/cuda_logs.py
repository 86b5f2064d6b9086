"""Published llama.cpp CUDA load logs, kept as records in ``tests/data/cuda_logs/``, as test data.

Each record holds the figures llama.cpp logged for one load on NVIDIA cards (model, KV, recurrent,
compute and output buffers), the settings of that load, and the model's shape: enough to write a
header-only GGUF file with the true tensor shapes and types, plan it, and set the plan beside the log.

Settings :class:`LoadSettings` has a field for are returned as LoadSettings; the others (``kv_unified``,
``n_outputs_max``, ``--n-cpu-moe``/``--cpu-moe``, ``--no-op-offload``, tensor overrides) are kept raw in
``LoggedLoad.raw``, and :attr:`LoggedLoad.plan_settings`, :attr:`LoggedLoad.rules` and
:attr:`LoggedLoad.planner_overrides` turn them into what the planner takes.

Importable as ``tests.cuda_logs`` and as ``cuda_logs``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gui.core.gguf_reader import GGUFHeader, read_model
from gui.core.params import LoadSettings
from gui.core.planner import OLDER_BUILDS, VENDORED_RULES, Device, EngineRules, Plan, TensorOverride, plan

try:
    from tests.gguf_factory import FTYPE_FOR_QUANT, TensorSpec, write_gguf
    from tests.model_shapes import ModelShape, shape_metadata, shape_tensors
except ImportError:  # run from inside tests/
    from gguf_factory import FTYPE_FOR_QUANT, TensorSpec, write_gguf  # type: ignore[no-redef]
    from model_shapes import ModelShape, shape_metadata, shape_tensors  # type: ignore[no-redef]

from gguf import LlamaFileType

__all__ = [
    "DATA",
    "KINDS",
    "LoggedLoad",
    "MiB",
    "build",
    "expected_model_buffers",
    "figures",
    "load_records",
    "logged_model_buffers",
    "placed_weights",
    "planned",
    "record_tensors",
    "type_counts",
]

DATA = Path(__file__).resolve().parent / "data" / "cuda_logs"
MiB = 1 << 20
# A device the planner never finds too small: the records check placement, not fit.
_ROOMY_MIB = 1 << 22

# --n-cpu-moe / --cpu-moe expand to these patterns (common/common.h: LLM_FFN_EXPS_REGEX,
# llm_ffn_block_regex); -ot patterns are regexes searched in the tensor name, the first match wins.
_EXPS_REGEX = r"\.ffn_(up|down|gate|gate_up)_(ch|)exps"

# llama.cpp#23764 (F16 flash-attention mask) and #23907 (CUDA's F16 copies of a quantized cache in the
# compute buffer) were opened in late May 2026; builds dated before this day follow the older rules.
RULES_CHANGED = "2026-05-27"

# The buffer kinds a record logs, as llama.cpp names the lines: model, KV, recurrent state, compute, output.
KINDS = ("model", "kv", "rs", "compute", "output")
# LoadSettings fields a record's "settings" may set.
_SETTING_KEYS = frozenset(LoadSettings.__dataclass_fields__)


@dataclass(frozen=True)
class LoggedLoad:
    """One record, built: the header written from its shape, the settings and what llama.cpp logged."""

    record: Mapping[str, Any]
    header: GGUFHeader
    settings: LoadSettings
    devices: tuple[Device, ...]
    raw: Mapping[str, Any]
    logged: Mapping[str, Mapping[str, float]]  # "model", "kv", "rs", "compute", "output" -> {buffer: MiB}

    @property
    def id(self) -> str:
        return str(self.record["id"])

    @property
    def output_after_blocks(self) -> bool:
        """Builds before llama.cpp counted the output layer first in -ngl: -ngl k put the last k blocks on
        the GPU and the output layer only when k > n_layer (the record says so with ngl_counts_output)."""
        ngl = self.settings.n_gpu_layers
        return self.raw.get("ngl_counts_output") is False and 0 < ngl <= (self.header.n_layer or 0)

    @property
    def plan_settings(self) -> LoadSettings:
        """The settings the planner gets: -ngl in today's count (output first) for older builds, the raw
        settings the planner has fields for, and llama.cpp's own n_outputs_max of the build (0: a whole
        batch of outputs, before the output-reserve change)."""
        raw = self.raw
        values: dict[str, Any] = {
            "kv_unified": bool(raw.get("kv_unified")),
            "cpu_moe": bool(raw.get("cpu_moe")),
            "n_cpu_moe": int(raw.get("n_cpu_moe") or 0),
            "op_offload": not raw.get("no_op_offload"),
        }
        if raw.get("n_outputs_max") is not None:
            values["n_outputs_max"] = int(raw["n_outputs_max"])
        elif self.record["build"]["output_reserve"] == "before":
            values["n_outputs_max"] = 0
        if self.output_after_blocks:
            values["n_gpu_layers"] = self.settings.n_gpu_layers + 1
        return self.settings.with_values(**values)

    @property
    def rules(self) -> EngineRules:
        """The engine rules of the build that wrote the log."""
        return OLDER_BUILDS if str(self.record["build"]["date"]) < RULES_CHANGED else VENDORED_RULES

    @property
    def planner_overrides(self) -> tuple[TensorOverride, ...]:
        """The -ot overrides, and the output layer kept on the host where -ngl counted blocks only
        (--n-cpu-moe/--cpu-moe are settings the planner applies itself)."""
        out: list[TensorOverride] = []
        for item in self.raw.get("tensor_overrides") or ():
            pattern, _, buft = str(item).rpartition("=")
            out.append((pattern, buft))
        if self.output_after_blocks:
            out.append((r"^output(_norm)?\.", "CPU"))
        return tuple(out)

    @property
    def overrides(self) -> tuple[tuple[str, str], ...]:
        """(regex, buffer) pairs in llama.cpp's order: -ot first, then what --n-cpu-moe/--cpu-moe add."""
        out: list[tuple[str, str]] = []
        for item in self.raw.get("tensor_overrides") or ():
            pattern, _, buft = str(item).rpartition("=")
            out.append((pattern, buft))
        if self.raw.get("cpu_moe"):
            out.append((_EXPS_REGEX, "CPU"))
        out += [(rf"blk\.{i}{_EXPS_REGEX}", "CPU") for i in range(int(self.raw.get("n_cpu_moe") or 0))]
        if self.output_after_blocks:
            out.append((r"^output(_norm)?\.", "CPU"))
        return tuple(out)


# ---- records ------------------------------------------------------------------------------------


def load_records(folder: Path = DATA) -> list[dict[str, Any]]:
    """Every record, in file-name order."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def _selected(select: Any, il: int, n_layer: int) -> bool:
    """A type rule's layer selector, in llama-quant.cpp's terms."""
    if select == "all":
        return True
    if select == "more_bits":  # use_more_bits(i_layer, n_layers)
        return il < n_layer // 8 or il >= 7 * n_layer // 8 or (il - n_layer // 8) % 3 == 2
    if select == "first_eighth":
        return il < n_layer // 8
    if select == "first_sixteenth":
        return il < n_layer // 16
    if isinstance(select, list):
        return il in select
    raise ValueError(f"unknown layer selector {select!r}")


def _shape(model: Mapping[str, Any]) -> ModelShape:
    fields = {k: model[k] for k in ModelShape.__dataclass_fields__ if k in model and k != "quant_mix"}
    return ModelShape(**fields)


def _typed(tensors: list[TensorSpec], types: Mapping[str, Any], n_layer: int) -> list[TensorSpec]:
    """Set every tensor's type from the record's rules.

    Weight matrices get ``default``, ``token_embd``/``output`` their own entry, block tensors the first
    rule naming their role whose layer selector matches. Tensors the shape leaves in F32 (norms, biases,
    routers) stay F32 unless a rule names them.
    """
    rules = list(types.get("rules", ()))
    out: list[TensorSpec] = []
    for name, shape, type_name in tensors:
        new = type_name if type_name == "F32" else types.get(name.split(".")[0], types["default"])
        if name.startswith("blk."):
            _, il_text, rest = name.split(".", 2)
            role = rest.removesuffix(".weight")  # a bias keeps its suffix and matches no weight rule
            for rule in rules:
                if rule["role"] == role and _selected(rule.get("layers", "all"), int(il_text), n_layer):
                    new = rule["type"]
                    break
        out.append((name, shape, new))
    return out


def record_tensors(record: Mapping[str, Any]) -> list[TensorSpec]:
    """The record's tensor list with its per-tensor types, in the record's file order."""
    model = record["model"]
    tensors = _typed(shape_tensors(_shape(model)), model["types"], int(model["n_layer"]))
    if model.get("tensor_order") == "output_first":
        # Converters that walk the checkpoint's names in sorted order write the output head first.
        head = [t for t in tensors if t[0].startswith(("output.", "output_norm."))]
        tensors = head + [t for t in tensors if t not in head]
    return tensors


def type_counts(header: GGUFHeader) -> dict[str, int]:
    """Tensors per type, named as llama.cpp's loader prints them (``q4_K``, ``f32``)."""
    counts = Counter(t.type_name for t in header.tensors)
    return {(name.lower() if not name.endswith("_K") else name[:-2].lower() + "_K"): n for name, n in counts.items()}


def _devices(record: Mapping[str, Any]) -> tuple[Device, ...]:
    # The planner splits layers by free memory, as llama.cpp does without --tensor-split; a record
    # with -ts gives its split as "split" instead.
    out = []
    for d in record["devices"]:
        weight = float(d.get("split", d["free_mib"]))
        out.append(Device(d["name"], _ROOMY_MIB, weight))
    return tuple(out)


def figures(record: Mapping[str, Any], kind: str) -> dict[str, float]:
    """MiB per buffer of one kind; a buffer logged twice (the two caches of a sliding-window model) is a list."""
    out: dict[str, float] = {}
    for buffer, mib in record["logged"].get(kind, {}).items():
        out[buffer] = float(sum(mib)) if isinstance(mib, list) else float(mib)
    return out


def build(record: Mapping[str, Any], folder: Path) -> LoggedLoad:
    """Write the record's header-only GGUF into ``folder`` and read it back with its settings."""
    model = record["model"]
    shape = _shape(model)
    ftype = (
        LlamaFileType[f"MOSTLY_{model['file_type']}"] if model.get("file_type") else FTYPE_FOR_QUANT.get(shape.quant)
    )
    path = write_gguf(
        folder / f"{record['id']}.gguf",
        shape.arch,
        shape_metadata(shape),
        record_tensors(record),
        sparse=True,
        file_type=ftype,
    )
    settings = record["settings"]
    unknown = set(settings) - _SETTING_KEYS
    if unknown:
        raise ValueError(f"{record['id']}: settings has no field {sorted(unknown)}; keep them in raw_settings")
    logged = {kind: figures(record, kind) for kind in KINDS}
    return LoggedLoad(
        record=record,
        header=read_model(path),
        settings=LoadSettings(**settings),
        devices=_devices(record),
        raw=dict(record.get("raw_settings", {})),
        logged=logged,
    )


def build_all(folder: Path, records: Iterable[Mapping[str, Any]] | None = None) -> list[LoggedLoad]:
    return [build(r, folder) for r in (load_records() if records is None else records)]


# ---- what the planner says, and where the weights go ----------------------------------------------


def planned(load: LoggedLoad) -> Plan:
    """The planner's plan for the logged load, with the build's rules and the command's overrides."""
    return plan(
        load.header,
        load.plan_settings,
        load.devices,
        rules=load.rules,
        tensor_overrides=load.planner_overrides,
        suggest=False,
    )


def _block_devices(p: Plan, n_layer: int) -> dict[int, int]:
    """Block index -> GPU index, from the plan's per-device layer counts (llama.cpp fills GPUs in order
    from i_gpu_start = n_layer - blocks on GPUs)."""
    where: dict[int, int] = {}
    il = n_layer - sum(d.layers for d in p.devices)
    for idx, d in enumerate(p.devices):
        for _ in range(d.layers):
            where[il] = idx
            il += 1
    return where


def _override(name: str, overrides: Sequence[tuple[str, str]]) -> str | None:
    for pattern, buft in overrides:
        if re.search(pattern, name):
            return buft
    return None


def tensor_devices(load: LoggedLoad, p: Plan | None = None) -> dict[str, tuple[str | None, str | None]]:
    """Tensor name -> (GPU by the planner's placement, GPU after tensor overrides); None is the host.

    Blocks from i_gpu_start and the output layer go where the planner puts them; token_embd and other
    tensors outside the blocks stay on the host. An override to ``CPU`` sends a tensor to the host, one
    to ``CUDAn`` to that GPU.
    """
    p = p or planned(load)
    blocks = _block_devices(p, p.n_layer)
    out_dev = next((d.name for d in p.devices if d.has_output), None)
    names = [d.name for d in p.devices]
    result: dict[str, tuple[str | None, str | None]] = {}
    for t in load.header.tensors:
        m = re.match(r"blk\.(\d+)\.", t.name)
        base: str | None = None
        if m is not None:
            idx = blocks.get(int(m.group(1)))
            base = names[idx] if idx is not None else None
        elif t.name.startswith(("output.", "output_norm.")):
            base = out_dev
        buft = _override(t.name, load.overrides)
        final = base if buft is None else (None if buft.startswith("CPU") else buft)
        result[t.name] = (base, final)
    return result


def _host_span(header: GGUFHeader, names: set[str]) -> int:
    """Bytes of the mmap range llama.cpp maps for host tensors: first offset to last end, per file."""
    by_part: dict[int, tuple[int, int]] = {}
    for t in header.tensors:
        if t.name not in names:
            continue
        lo, hi = by_part.get(t.part, (t.offset, t.offset + t.nbytes))
        by_part[t.part] = (min(lo, t.offset), max(hi, t.offset + t.nbytes))
    return sum(hi - lo for lo, hi in by_part.values())


def expected_model_buffers(load: LoggedLoad) -> dict[str, float]:
    """MiB per logged model buffer: the planner's weights per GPU (it applies --n-cpu-moe and -ot), and
    for the host, with mmap, the mapped range from the first to the last host tensor of the file (GPU
    tensors between them count, as llama.cpp maps them too), else the sum of the host tensors."""
    p = planned(load)
    where = tensor_devices(load, p)
    sizes = {t.name: t.nbytes for t in load.header.tensors}
    host_names = {name for name, (_, final) in where.items() if final is None}
    mapped = load.settings.use_mmap and any(k.endswith("_Mapped") for k in _host_buffers(load))
    host = _host_span(load.header, host_names) if mapped else sum(sizes[n] for n in host_names)
    out = {d.name: d.weights_mib for d in p.devices}
    out["host"] = host / MiB
    return out


def placed_weights(load: LoggedLoad) -> dict[str, float]:
    """MiB per GPU from this module's own reading of the placement rules and overrides (the planner's
    block placement, then every pattern searched in every tensor name): what the planner's per-device
    weights must equal. A tied output matrix on a GPU counts token_embd there once more."""
    p = planned(load)
    sizes = {t.name: t.nbytes for t in load.header.tensors}
    out = {d.name: 0.0 for d in p.devices}
    for name, (_, final) in tensor_devices(load, p).items():
        if final is not None:
            out[final] += sizes[name] / MiB
    tied = load.header.tensor("output.weight") is None
    embd = load.header.tensor("token_embd.weight")
    for d in p.devices:
        if d.has_output and tied and embd is not None:
            out[d.name] += embd.nbytes / MiB
    return out


def _host_buffers(load: LoggedLoad) -> dict[str, float]:
    return {k: v for k, v in load.logged["model"].items() if not re.fullmatch(r"CUDA\d+", k)}


def logged_model_buffers(load: LoggedLoad) -> dict[str, float]:
    """The logged model buffers in :func:`expected_model_buffers`' keys: each GPU, and the host summed."""
    out = {k: v for k, v in load.logged["model"].items() if re.fullmatch(r"CUDA\d+", k)}
    out["host"] = sum(_host_buffers(load).values())
    return out
