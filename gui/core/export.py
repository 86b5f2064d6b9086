"""The load settings written for other programs: a llama-server or llama-cli command line, a section of
llama-server's model presets file (``--models-preset``), and a koboldcpp ``.kcpps`` settings file.

Flag spellings are llama.cpp's own, checked in the llama.cpp that llama-cpp-python 0.3.36 vendors
(ggml-org/llama.cpp@0c1e57098, ``common/arg.cpp``): ``-m/--model``, ``-ngl/--gpu-layers/--n-gpu-layers``
(a number, ``auto`` or ``all``), ``-c/--ctx-size``, ``-b/--batch-size``, ``-ub/--ubatch-size``,
``-t/--threads``, ``-np/--parallel``, ``-fa/--flash-attn on|off|auto``, ``-ctk/--cache-type-k``,
``-ctv/--cache-type-v``, ``-lm/--load-mode auto|none|mmap|mlock|mmap+mlock|dio`` (that version has no
``--no-mmap``: loading without mmap is ``--load-mode none``, as the engine's own ``load_mode``),
``--swa-full``, ``-ncmoe/--n-cpu-moe``, ``-cmoe/--cpu-moe``, ``-kvu/--kv-unified`` (llama-server only),
``--op-offload/--no-op-offload`` and ``-fit/--fit on|off``. Where a setting's declaration
(``gui/core/params.py``) already carries llama.cpp's long spelling it is used as is; only the few it
spells differently are named here.

The presets file is read by ``common/preset.cpp`` of the same version: ``[section]`` lines, ``key = value``
lines whose key is a flag without its dashes, ``;`` or ``#`` comments. A value runs to the end of the line
or to the first ``;`` or ``#`` and has no quoting, so a path with those characters cannot be written there.

The ``.kcpps`` keys are koboldcpp's argparse destinations (LostRuins/koboldcpp ``koboldcpp.py``,
version 1.102): ``model``/``model_param``, ``threads``, ``usecuda``, ``contextsize`` (256 to 262144),
``gpulayers``, ``batchsize`` (one of -1, 16 … 4096), ``usemmap``, ``flashattention``, ``quantkv``
(0 f16, 1 q8_0, 2 q4_0, for both caches), ``useswa`` and ``moecpu``. koboldcpp loads such a file with
``--config FILE``.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from gui.core.params import ALL_LAYERS, LOAD_SPECS, SPECS_BY_KEY, LoadSettings
from gui.core.specs import BoolSpec, Spec
from gui.core.words import Text, words

__all__ = [
    "FORMATS",
    "LLAMA_CPP_SOURCE",
    "Export",
    "export",
    "kcpps",
    "llama_args",
    "llama_cli_command",
    "llama_flag",
    "llama_server_command",
    "numactl_prefix",
    "preset_section",
]

# Where the spellings below were checked.
LLAMA_CPP_SOURCE = "llama.cpp 0c1e57098 (vendored by llama-cpp-python 0.3.36), common/arg.cpp"

# Settings whose declared flag is not llama.cpp's spelling: their llama.cpp flag ("" for none). Every
# other setting's declared flag is llama.cpp's long spelling (tests/test_export.py checks both).
_LLAMA_SPELLING: Mapping[str, str] = {
    "n_gpu_layers": "--n-gpu-layers",  # Tightfit's --ngl; llama.cpp: -ngl, --gpu-layers, --n-gpu-layers
    "n_ctx": "--ctx-size",  # -c
    "n_batch": "--batch-size",  # -b
    "n_ubatch": "--ubatch-size",  # -ub
    "use_mmap": "--load-mode",  # -lm: mmap or none
    "n_outputs_max": "",  # no llama.cpp flag: llama-server reserves its own outputs
}
# Not settings, but part of every command: the model, and --fit off so llama.cpp keeps the tuned values
# rather than fitting what it thinks was left unset.
_MODEL_FLAG = "--model"
_FIT_FLAG = "--fit"
# -kvu is declared for llama-server (and the batch tools) only: llama-cli refuses it.
_SERVER_ONLY = frozenset({"kv_unified"})

FORMATS = ("llama-server", "llama-cli", "preset", "kcpps")
MAX_PATH_CHARS = 4096


@dataclass(frozen=True)
class Export:
    """What to write or copy, and the settings the target cannot take as they are, in words."""

    text: str
    notes: tuple[Text, ...] = ()


def llama_flag(spec: Spec[Any]) -> str:
    """llama.cpp's long flag for a declared setting, or "" where llama.cpp has none."""
    return _LLAMA_SPELLING.get(spec.key, spec.flag)


def checked_model_path(model: str | PurePath) -> str:
    """The model path as text, refused (ValueError, one line) where no program could be given it safely."""
    text = str(model)
    if not text:
        raise ValueError("no model file given")
    if len(text) > MAX_PATH_CHARS:
        raise ValueError(f"the model path is longer than {MAX_PATH_CHARS} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ValueError("the model path has a control character (a line break, a tab) in it")
    return text


def llama_args(
    settings: LoadSettings, program: str = "llama-server"
) -> tuple[list[tuple[str, str | None]], list[Text]]:
    """The settings as llama.cpp (flag, value) pairs, a value of None for a bare switch, and notes on
    what ``program`` cannot take. Every setting is written, so llama.cpp's defaults do not matter."""
    settings = settings.validated()
    pairs: list[tuple[str, str | None]] = []
    notes: list[Text] = []
    for spec in LOAD_SPECS:
        value = getattr(settings, spec.key)
        flag = llama_flag(spec)
        if not flag:
            if value != spec.default:
                notes.append(
                    words(
                        "{setting} ({value}) has no llama.cpp flag: {program} uses its own",
                        setting=spec.shown_label(),
                        value=value,
                        program=program,
                    )
                )
            continue
        if program != "llama-server" and spec.key in _SERVER_ONLY:
            if value != spec.default:
                notes.append(
                    words(
                        "{setting}: {program} has no {flag} (llama-server only)",
                        setting=spec.shown_label(),
                        program=program,
                        flag=flag,
                    )
                )
            continue
        if spec.key == "use_mmap":
            pairs.append((flag, "mmap" if value else "none"))
        elif spec.key == "n_gpu_layers":
            pairs.append((flag, "all" if value >= ALL_LAYERS else str(value)))
        elif spec.key in ("tensor_split", "rpc_servers"):
            if value:  # empty: llama.cpp's own default (by free memory; no RPC servers), which has no spelling
                pairs.append((flag, value))
        elif spec.key == "n_cpu_moe":
            if value and not settings.cpu_moe:  # --cpu-moe already covers every block
                pairs.append((flag, str(value)))
        elif isinstance(spec, BoolSpec):
            # A switch on by default has a --no- form in llama.cpp (--no-op-offload); one off by default
            # is written only when on (--swa-full, --cpu-moe, --kv-unified).
            if value:
                pairs.append((flag, None))
            elif spec.default:
                pairs.append(("--no-" + flag.removeprefix("--"), None))
        else:
            pairs.append((flag, str(value)))
    pairs.append((_FIT_FLAG, "off"))
    return pairs, notes


def numactl_prefix(numa_node: int | None) -> list[str]:
    """`numactl` bound to a node's CPUs and memory, as the engine's own launcher starts it
    (gui/services/numa.py); nothing without a pin."""
    if numa_node is None:
        return []
    if isinstance(numa_node, bool) or not isinstance(numa_node, int) or not 0 <= numa_node < 1024:
        raise ValueError(f"a NUMA node must be a number from 0 to 1023 (got {numa_node!r})")
    return ["numactl", f"--cpunodebind={numa_node}", f"--membind={numa_node}"]


def _command(program: str, binary: str, model: str | PurePath, settings: LoadSettings, numa_node: int | None) -> Export:
    path = checked_model_path(model)
    pairs, notes = llama_args(settings, program)
    words = [*numactl_prefix(numa_node), binary, _MODEL_FLAG, path]
    for flag, value in pairs:
        words.append(flag)
        if value is not None:
            words.append(value)
    return Export(" ".join(shlex.quote(w) for w in words), tuple(notes))


def llama_server_command(
    model: str | PurePath, settings: LoadSettings, numa_node: int | None = None, binary: str = "llama-server"
) -> Export:
    """One shell line that starts llama-server on ``model`` with these settings (paths quoted)."""
    return _command("llama-server", binary, model, settings, numa_node)


def llama_cli_command(
    model: str | PurePath, settings: LoadSettings, numa_node: int | None = None, binary: str = "llama-cli"
) -> Export:
    """One shell line that starts llama-cli on ``model`` with these settings (paths quoted)."""
    return _command("llama-cli", binary, model, settings, numa_node)


def _ini_value(what: str, text: str) -> str:
    if text != text.strip() or any(c in text for c in ";#\r\n"):
        raise ValueError(
            f"{what} cannot be written in a presets file: it has a ';', '#', a line break or spaces at an end "
            "(the file has no quoting)"
        )
    return text


def section_name(model: str | PurePath) -> str:
    """A section name from the model's file name: letters, digits and ``_ . -`` only (a ':' would make
    llama-server read the rest as a quant tag), at most 120 characters."""
    stem = PurePath(str(model)).name.removesuffix(".gguf") or "model"
    name = "".join(c if c.isascii() and (c.isalnum() or c in "_.-") else "-" for c in stem)
    return re.sub(r"-{2,}", "-", name)[:120].strip("-") or "model"


def preset_section(model: str | PurePath, settings: LoadSettings, numa_node: int | None = None) -> Export:
    """A ``[name]`` section for llama-server's ``--models-preset`` file: the model and every setting."""
    path = _ini_value("the model path", checked_model_path(model))
    pairs, notes = llama_args(settings, "llama-server")
    lines = [f"[{section_name(model)}]"]
    if numa_node is not None:
        # The router starts each model's server as its child: binding the router binds them.
        prefix = " ".join(numactl_prefix(numa_node))
        lines.append(f"; pinned to NUMA node {numa_node}: start the router as {prefix} llama-server --models-preset …")
    lines.append(f"{_MODEL_FLAG.removeprefix('--')} = {path}")
    for flag, value in pairs:
        if value is None:  # a switch: its positive key, true or false (preset.cpp reads both)
            positive = flag.removeprefix("--no-") if flag.startswith("--no-") else flag.removeprefix("--")
            lines.append(f"{positive} = {'false' if flag.startswith('--no-') else 'true'}")
        else:
            lines.append(f"{flag.removeprefix('--')} = {value}")
    return Export("\n".join(lines) + "\n", tuple(notes))


# koboldcpp 1.102's --quantkv levels, one for both caches.
_KOBOLD_KV = {"f16": 0, "q8_0": 1, "q4_0": 2}
_KOBOLD_BATCHES = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096)
_KOBOLD_MAX_CTX = 262144


def kcpps(model: str | PurePath, settings: LoadSettings, numa_node: int | None = None) -> Export:
    """A koboldcpp settings file (JSON, loaded with ``koboldcpp --config FILE``). A setting koboldcpp
    cannot take at all is a ValueError; one it takes differently is said in the notes."""
    path = checked_model_path(model)
    s = settings.validated()
    if s.cache_type_k != s.cache_type_v or s.cache_type_k not in _KOBOLD_KV:
        raise ValueError(
            words(
                "koboldcpp takes one KV cache type for K and V, of {types} (these settings: K {k}, V {v})",
                types=", ".join(_KOBOLD_KV),
                k=s.cache_type_k,
                v=s.cache_type_v,
            )
        )
    if s.n_batch not in _KOBOLD_BATCHES:
        raise ValueError(
            words(
                "koboldcpp's batch size is one of {sizes} (got {batch})",
                sizes=", ".join(map(str, _KOBOLD_BATCHES)),
                batch=s.n_batch,
            )
        )
    if s.n_ctx > _KOBOLD_MAX_CTX:
        raise ValueError(words("koboldcpp's context is at most {most} (got {ctx})", most=_KOBOLD_MAX_CTX, ctx=s.n_ctx))
    notes: list[Text] = []
    if s.n_ubatch != s.n_batch:
        notes.append(
            words(
                "koboldcpp has no micro-batch: it computes the batch ({batch}) at once, not {ubatch}",
                batch=s.n_batch,
                ubatch=s.n_ubatch,
            )
        )
    if s.flash_attn == "auto":
        notes.append(words("koboldcpp's flash attention is on or off: written as on (auto turns it on where it can)"))
    if s.n_parallel > 1:
        notes.append(words("koboldcpp serves one request at a time: {n} parallel slots not written", n=s.n_parallel))
    for key in ("kv_unified", "op_offload", "n_outputs_max"):
        spec = SPECS_BY_KEY[key]
        if getattr(s, key) != spec.default:
            notes.append(words("{setting}: koboldcpp has no such setting", setting=spec.shown_label()))
    for key in ("split_mode", "tensor_split", "main_gpu", "rpc_servers"):  # koboldcpp's own way for these
        spec = SPECS_BY_KEY[key]
        if getattr(s, key) != spec.default:
            notes.append(
                words(
                    "{setting} ({value}) not written: set it in koboldcpp's own GPU settings",
                    setting=spec.shown_label(),
                    value=getattr(s, key),
                )
            )
    if numa_node is not None:
        prefix = " ".join(numactl_prefix(numa_node))
        notes.append(words("a settings file cannot pin: start koboldcpp as {prefix} koboldcpp …", prefix=prefix))
    data: dict[str, Any] = {
        "model": [path],
        "model_param": path,
        "threads": s.n_threads,
        "usecuda": [] if s.n_gpu_layers > 0 else None,  # [] : CUDA on every GPU
        "usecpu": s.n_gpu_layers == 0,
        "contextsize": s.n_ctx,
        "gpulayers": min(s.n_gpu_layers, ALL_LAYERS),
        "batchsize": s.n_batch,
        "usemmap": s.use_mmap,
        "flashattention": s.flash_attn != "off",
        "quantkv": _KOBOLD_KV[s.cache_type_k],
        "useswa": not s.swa_full,  # koboldcpp's default is the full-size sliding-window cache
        "moecpu": ALL_LAYERS if s.cpu_moe else s.n_cpu_moe,
        "istemplate": False,
    }
    return Export(json.dumps(data, indent=2) + "\n", tuple(notes))


def export(fmt: str, model: str | PurePath, settings: LoadSettings, numa_node: int | None = None) -> Export:
    """One of FORMATS for ``model`` with ``settings``."""
    if fmt == "llama-server":
        return llama_server_command(model, settings, numa_node)
    if fmt == "llama-cli":
        return llama_cli_command(model, settings, numa_node)
    if fmt == "preset":
        return preset_section(model, settings, numa_node)
    if fmt == "kcpps":
        return kcpps(model, settings, numa_node)
    raise ValueError(f"unknown export format {fmt!r}: one of {', '.join(FORMATS)}")
