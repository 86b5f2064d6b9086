"""Load parameters, declared once.

Sliders, numeric fields, CLI flags, presets and the engine all read these specs, so a range or a
default lives in exactly one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class ParamSpec:
    """One tunable integer parameter of a model load."""

    key: str  # attribute of LoadSettings
    label: str  # what the window shows
    flag: str  # CLI flag, llama.cpp's spelling where it has one
    minimum: int
    maximum: int  # static upper bound; the window narrows it per model (layers, trained context)
    default: int
    step: int
    help: str
    log_scale: bool = False  # sliders move in powers of two (context, batch sizes)

    def clamp(self, value: int, maximum: int | None = None) -> int:
        top = self.maximum if maximum is None else min(maximum, self.maximum)
        return max(self.minimum, min(int(value), top))

    def check(self, value: int, maximum: int | None = None) -> None:
        """Raise ValueError with a message a user understands if value is out of range."""
        top = self.maximum if maximum is None else min(maximum, self.maximum)
        if not self.minimum <= value <= top:
            raise ValueError(f"{self.label} must be between {self.minimum} and {top} (got {value})")


# -1 means "all layers" in llama.cpp; the window shows it as the model's layer count + 1.
ALL_LAYERS = 999

GPU_LAYERS = ParamSpec(
    key="n_gpu_layers",
    label="GPU layers",
    flag="--ngl",
    minimum=0,
    maximum=ALL_LAYERS,
    default=ALL_LAYERS,
    step=1,
    help="Layers offloaded to the GPU: the output layer plus the last N-1 blocks. More is faster while it fits.",
)
CONTEXT = ParamSpec(
    key="n_ctx",
    label="Context",
    flag="--ctx",
    minimum=256,
    maximum=1 << 20,
    default=4096,
    step=256,
    help="Tokens of conversation the model can see. The KV cache grows with it.",
    log_scale=True,
)
BATCH = ParamSpec(
    key="n_batch",
    label="Batch",
    flag="--batch",
    minimum=32,
    maximum=8192,
    default=512,
    step=32,
    help="Prompt tokens submitted per decode call. 512 roughly doubles long-prompt prefill over 256.",
    log_scale=True,
)
UBATCH = ParamSpec(
    key="n_ubatch",
    label="Micro-batch",
    flag="--ubatch",
    minimum=32,
    maximum=8192,
    default=512,
    step=32,
    help="Tokens computed at once; sets the compute buffer size. Must not exceed the batch.",
    log_scale=True,
)
THREADS = ParamSpec(
    key="n_threads",
    label="Threads",
    flag="--threads",
    minimum=1,
    maximum=256,
    default=4,  # replaced at run time by the machine's physical core count
    step=1,
    help="CPU threads. Physical cores, not hyper-threads, are usually fastest.",
)

PARALLEL = ParamSpec(
    key="n_parallel",
    label="Parallel slots",
    flag="--parallel",
    minimum=1,
    maximum=64,
    default=1,
    step=1,
    help="Sequences served at once. More than you really run splits the KV cache into useless slices.",
)

SIZING_PARAMS: tuple[ParamSpec, ...] = (GPU_LAYERS, CONTEXT, BATCH, UBATCH, THREADS, PARALLEL)

# KV cache element types llama.cpp accepts for --cache-type-k / --cache-type-v.
CACHE_TYPES: tuple[str, ...] = ("f16", "bf16", "f32", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl")
FLASH_ATTN_MODES: tuple[str, ...] = ("auto", "on", "off")
PARAMS_BY_KEY: Mapping[str, ParamSpec] = {p.key: p for p in SIZING_PARAMS}


@dataclass(frozen=True)
class LoadSettings:
    """Everything that decides how a model is loaded. Field names match ParamSpec.key."""

    n_gpu_layers: int = GPU_LAYERS.default
    n_ctx: int = CONTEXT.default
    n_batch: int = BATCH.default
    n_ubatch: int = UBATCH.default
    n_threads: int = THREADS.default
    n_parallel: int = PARALLEL.default
    use_mmap: bool = True
    flash_attn: str = "auto"  # on / off / auto, as llama.cpp's -fa
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    swa_full: bool = False  # full-size cache for sliding-window layers (llama.cpp --swa-full)

    def validated(self) -> LoadSettings:
        """Check every field; raise ValueError naming the first bad one."""
        for spec in SIZING_PARAMS:
            spec.check(getattr(self, spec.key))
        if self.n_ubatch > self.n_batch:
            raise ValueError(f"Micro-batch ({self.n_ubatch}) cannot exceed batch ({self.n_batch})")
        if self.flash_attn not in FLASH_ATTN_MODES:
            raise ValueError(f"flash attention must be on, off or auto (got {self.flash_attn!r})")
        for which, value in (("K", self.cache_type_k), ("V", self.cache_type_v)):
            if value not in CACHE_TYPES:
                raise ValueError(f"{which} cache type must be one of {', '.join(CACHE_TYPES)} (got {value!r})")
        if self.cache_type_v not in ("f16", "bf16", "f32") and self.flash_attn == "off":
            raise ValueError(f"a {self.cache_type_v} V cache needs flash attention: set it to on or auto")
        return self

    def with_values(self, **values: Any) -> LoadSettings:
        return replace(self, **values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadSettings:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


def default_settings(physical_cores: int | None) -> LoadSettings:
    threads = THREADS.clamp(physical_cores) if physical_cores else THREADS.default
    return LoadSettings(n_threads=threads)


def llama_gpu_layers(n_gpu_layers: int, n_layer: int | None) -> int:
    """Translate the slider value to llama.cpp's: anything at or past n_layer + 1 means all (-1)."""
    if n_layer is not None and n_gpu_layers >= n_layer + 1:
        return -1
    if n_gpu_layers >= ALL_LAYERS:
        return -1
    return n_gpu_layers


def describe(settings: LoadSettings, specs: Iterable[ParamSpec] = SIZING_PARAMS) -> str:
    return ", ".join(f"{s.label.lower()} {getattr(settings, s.key)}" for s in specs)
