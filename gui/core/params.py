"""Every load setting, declared once: the sliders, CLI flags, the engine and the settings store read these.

Adding a load setting is one field of :class:`LoadSettings` (its spec says label, range, default and
flag) plus the line where the engine applies it (``gui/services/engine_worker.py``), and the planner's
arithmetic if it changes memory. ``tests/test_params.py`` checks that the engine applies every one.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, cast

from gui.core.specs import BoolSpec, ChoiceSpec, FloatSpec, IntSpec, Spec, parse_fields, shown_value, specs_of
from gui.core.words import Text, Words, fixed, joined, mark, words

# Any value at or past the model's layer count + 1 means "all layers" (llama.cpp's -1); the window
# shows it as that count.
ALL_LAYERS = 999

# n_outputs_max's default: reserve one output per parallel slot (llama.cpp's own 0 means a whole batch).
OUTPUTS_PER_SLOT = -1

# KV cache element types llama.cpp accepts for --cache-type-k / --cache-type-v.
CACHE_TYPES: tuple[str, ...] = ("f16", "bf16", "f32", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl")
# The cache types that are not quantized: a V cache needs flash attention otherwise, and q8_0 makes
# either cache smaller.
FLOAT_CACHE_TYPES = ("f16", "bf16", "f32")

# llama_max_devices(): the length of llama_model_params.tensor_split, and the most devices llama.cpp loads on.
MAX_DEVICES = 16
# How a model is spread over several devices (llama.cpp's --split-mode; its experimental "tensor" is not offered).
SPLIT_MODES: tuple[str, ...] = ("layer", "row", "none")
# Proportions llama.cpp takes between "," or "/" (common/arg.cpp: --tensor-split splits on [,/]+).
_SPLIT_SEPARATORS = re.compile(r"[,/]")
_SPLIT_MAX_CHARS = 512
_SPLIT_MAX_VALUE = 1e12


def split_proportions(text: str) -> tuple[float, ...]:
    """The proportions of a tensor split ("3,1" -> (3.0, 1.0)); "" -> () (by free memory, llama.cpp's default).

    Untrusted text: at most MAX_DEVICES finite numbers from 0 up, not all zero; anything else is a ValueError
    of one line."""
    if not isinstance(text, str):
        raise ValueError(words("Tensor split must be text such as 3,1 (got {value})", value=shown_value(text)))
    if not text.strip():
        return ()
    if len(text) > _SPLIT_MAX_CHARS:
        raise ValueError(words("Tensor split is longer than {n} characters", n=_SPLIT_MAX_CHARS))
    items = [item.strip() for item in _SPLIT_SEPARATORS.split(text)]
    if len(items) > MAX_DEVICES:
        raise ValueError(
            words(
                "Tensor split has {n} proportions; llama.cpp takes at most {most} devices",
                n=len(items),
                most=MAX_DEVICES,
            )
        )
    values: list[float] = []
    for item in items:
        try:
            value = float(item)
        except ValueError:
            shown = repr(item[:20]) if item else words("an empty item")
            raise ValueError(
                words("Tensor split: {item} is not a number (write proportions such as 3,1)", item=shown)
            ) from None
        if not math.isfinite(value) or not 0 <= value <= _SPLIT_MAX_VALUE:
            raise ValueError(
                words(
                    "Tensor split: each proportion must be from 0 to {most} (got {item})",
                    most=f"{_SPLIT_MAX_VALUE:g}",
                    item=item[:20],
                )
            )
        values.append(value)
    if not any(values):
        raise ValueError(words("Tensor split: the proportions are all zero (leave it empty to split by free memory)"))
    return tuple(values)


@dataclass(frozen=True, kw_only=True)
class ListTextSpec(Spec[str]):
    """A setting written as llama.cpp's flag takes a list ("3,1", "host:port,host:port"); "" for its default.
    ``normalised`` checks the text (a ValueError in words) and gives it as llama.cpp reads it."""

    example: str
    normalised: Callable[[str], str]

    def check(self, value: str) -> None:
        self.normalised(value)

    def parse(self, value: object) -> str:
        if not isinstance(value, str):
            raise ValueError(
                words(
                    "{label} must be text such as {example} (got {value})",
                    label=self.shown_label(),
                    example=self.example,
                    value=shown_value(value),
                )
            )
        return self.normalised(value)


def normalised_split(text: str) -> str:
    """A tensor split as llama.cpp reads it ("3/1" -> "3,1")."""
    return ",".join(f"{v:.9g}" for v in split_proportions(text))


# Other machines' devices through llama.cpp's RPC backend (its --rpc, served by `tightfit rpc-worker`).
# GGML_RPC_MAX_SERVERS (ggml/include/ggml-rpc.h): the most servers one load may name.
MAX_RPC_SERVERS = 16
_RPC_MAX_CHARS = 4096
# A host name (RFC 1123 labels) or an IPv4 address. llama.cpp's endpoint parser splits "host:port" at the first
# colon (ggml-rpc.cpp: parse_endpoint), so an IPv6 address cannot be written; a name that resolves to one can.
_HOST_LABEL = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")


def _rpc_host(host: str) -> Text:
    """``host`` when it is a well-formed host name or IPv4 address; a ValueError in words otherwise."""
    if not host:
        return words("no host before the colon")
    if len(host) > 253:
        return words("the host name is longer than 253 characters")
    labels = host.split(".")
    if all(label.isascii() and label.isdigit() for label in labels):
        if len(labels) != 4 or any(len(label) > 3 or int(label) > 255 for label in labels):
            return words("{host} is not an IPv4 address", host=repr(host[:40]))
        return ""
    if not all(_HOST_LABEL.match(label) for label in labels):
        return words("{host} is not a host name or an IPv4 address", host=repr(host[:40]))
    return ""


def rpc_endpoints(text: str) -> tuple[tuple[str, int], ...]:
    """The RPC servers of a text such as "10.0.0.5:50052,gpubox:50052", as (host, port); "" -> ().

    Untrusted text: at most MAX_RPC_SERVERS distinct host:port pairs, each a host name or IPv4 address and a
    port from 1 to 65535; anything else is a ValueError of one line."""
    if not isinstance(text, str):
        raise ValueError(
            words("RPC servers must be text such as 10.0.0.5:50052 (got {value})", value=shown_value(text))
        )
    if not text.strip():
        return ()
    if len(text) > _RPC_MAX_CHARS:
        raise ValueError(words("RPC servers: longer than {n} characters", n=_RPC_MAX_CHARS))
    items = [item.strip() for item in text.split(",")]
    if len(items) > MAX_RPC_SERVERS:
        raise ValueError(
            words("RPC servers: {n} given; llama.cpp takes at most {most}", n=len(items), most=MAX_RPC_SERVERS)
        )
    found: list[tuple[str, int]] = []
    for item in items:
        shown = repr(item[:60]) if item else words("an empty item")
        host, colon, port_text = item.rpartition(":")
        if not colon:
            raise ValueError(
                words("RPC servers: {item} has no port (write host:port, e.g. 10.0.0.5:50052)", item=shown)
            )
        if ":" in host or host.startswith("["):
            raise ValueError(
                words(
                    "RPC servers: {item} looks like an IPv6 address, which llama.cpp's RPC client cannot parse "
                    "(it splits host:port at the first colon): use an IPv4 address or a host name",
                    item=shown,
                )
            )
        why = _rpc_host(host)
        if why:
            raise ValueError(words("RPC servers: {item}: {why}", item=shown, why=why))
        if not (port_text.isascii() and port_text.isdigit()) or len(port_text) > 5 or not 1 <= int(port_text) <= 65535:
            raise ValueError(words("RPC servers: {item}: the port must be a number from 1 to 65535", item=shown))
        endpoint = (host.lower(), int(port_text))
        if endpoint in found:
            raise ValueError(words("RPC servers: {endpoint} is named twice", endpoint=f"{host}:{int(port_text)}"))
        found.append(endpoint)
    return tuple(found)


def join_endpoints(endpoints: Iterable[tuple[str, int]]) -> str:
    """The text llama.cpp's --rpc takes: "host:port,host:port"."""
    return ",".join(f"{host}:{port}" for host, port in endpoints)


def normalised_endpoints(text: str) -> str:
    """RPC servers as llama.cpp's --rpc takes them: checked, lower-case hosts, no repeats."""
    return join_endpoints(rpc_endpoints(text))


# The network to the RPC servers, for the decode speed the plan predicts (docs/rpc.md): each token crosses it
# once per boundary between this machine and a remote device. Payload rates over TCP and a switched LAN's
# round trip: 1 GbE carries about 940 Mbit/s of payload, 10 GbE about 9,400.
RPC_LINKS: dict[str, tuple[float, float]] = {"1gbe": (940.0, 0.2), "10gbe": (9400.0, 0.1)}


@dataclass(frozen=True)
class NetworkLink:
    """The link to the RPC servers as the user states it: a preset, or "custom" with its own figures."""

    preset: str = ChoiceSpec(
        label=mark("Network link", "params"),
        flag="--rpc-link",
        choices=(*RPC_LINKS, "custom"),
        default="1gbe",
        help=mark(
            "The network between this machine and its RPC servers, for the decode speed the plan predicts: "
            "1gbe (940 Mbit/s, 0.2 ms round trip), 10gbe (9,400 Mbit/s, 0.1 ms), or custom (--rpc-link-mbit, "
            "--rpc-link-rtt-ms).",
            "params",
        ),
    ).field()
    mbit_s: float = FloatSpec(
        label=mark("Link bandwidth", "params"),
        flag="--rpc-link-mbit",
        minimum=1.0,
        maximum=1_000_000.0,
        default=940.0,
        decimals=0,
        suffix=" Mbit/s",
        help=mark("Payload rate of a custom link in Mbit/s.", "params"),
    ).field()
    rtt_ms: float = FloatSpec(
        label=mark("Link round trip", "params"),
        flag="--rpc-link-rtt-ms",
        minimum=0.0,
        maximum=1000.0,
        default=0.2,
        suffix=" ms",
        help=mark("Round-trip time of a custom link in milliseconds (ping's figure).", "params"),
    ).field()

    def figures(self) -> tuple[float, float]:
        """(bytes per second, round trip in seconds)."""
        mbit, rtt = RPC_LINKS.get(self.preset, (self.mbit_s, self.rtt_ms))
        return mbit * 1e6 / 8, rtt / 1000

    def words(self) -> Text:
        mbit, rtt = RPC_LINKS.get(self.preset, (self.mbit_s, self.rtt_ms))
        name = {"1gbe": "1 GbE", "10gbe": "10 GbE"}.get(self.preset) or words("custom link")
        return words("{name}, {mbit} Mbit/s, {rtt} ms round trip", name=name, mbit=f"{mbit:,.0f}", rtt=f"{rtt:g}")

    def validated(self) -> NetworkLink:
        for spec in specs_of(NetworkLink):
            spec.check(getattr(self, spec.key))
        return self

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> NetworkLink:
        return parse_fields(cls, data)


@dataclass(frozen=True)
class LoadSettings:
    """Everything that decides how a model is loaded."""

    n_gpu_layers: int = IntSpec(
        label=mark("GPU layers", "params"),
        flag="--ngl",
        minimum=0,
        maximum=ALL_LAYERS,
        default=ALL_LAYERS,
        help=mark(
            "Layers offloaded to the GPU: the output layer plus the last N-1 blocks. More is faster while it fits.",
            "params",
        ),
    ).field()
    n_ctx: int = IntSpec(
        label=mark("Context", "params"),
        flag="--ctx",
        minimum=256,
        maximum=1 << 20,
        default=4096,
        step=256,
        log_scale=True,
        help=mark("Tokens of conversation the model can see. The KV cache grows with it.", "params"),
    ).field()
    n_batch: int = IntSpec(
        label=mark("Batch", "params"),
        flag="--batch",
        minimum=32,
        maximum=8192,
        default=512,
        step=32,
        log_scale=True,
        help=mark(
            "Prompt tokens submitted per decode call. 512 roughly doubles long-prompt prefill over 256.", "params"
        ),
    ).field()
    n_ubatch: int = IntSpec(
        label=mark("Micro-batch", "params"),
        flag="--ubatch",
        minimum=32,
        maximum=8192,
        default=512,
        step=32,
        log_scale=True,
        help=mark("Tokens computed at once; sets the compute buffer size. Must not exceed the batch.", "params"),
    ).field()
    n_threads: int = IntSpec(
        label=mark("Threads", "params"),
        flag="--threads",
        minimum=1,
        maximum=256,
        default=4,  # replaced at run time by the machine's physical core count (default_settings)
        help=mark("CPU threads. Physical cores, not hyper-threads, are usually fastest.", "params"),
    ).field()
    n_parallel: int = IntSpec(
        label=mark("Parallel slots", "params"),
        flag="--parallel",
        minimum=1,
        maximum=64,
        default=1,
        help=mark(
            "Sequences served at once. More than you really run splits the KV cache into useless slices.", "params"
        ),
    ).field()
    cache_type_k: str = ChoiceSpec(
        label=mark("K cache type", "params"),
        flag="--cache-type-k",
        choices=CACHE_TYPES,
        default="f16",
        help=mark("Element type of the K cache: q8_0 halves it at little cost in quality.", "params"),
    ).field()
    cache_type_v: str = ChoiceSpec(
        label=mark("V cache type", "params"),
        flag="--cache-type-v",
        choices=CACHE_TYPES,
        default="f16",
        help=mark(
            "Element type of the V cache: q8_0 halves it at little cost in quality (needs flash attention).", "params"
        ),
    ).field()
    flash_attn: str = ChoiceSpec(
        label=mark("Flash attention", "params"),
        flag="--flash-attn",
        choices=("auto", "on", "off"),
        default="auto",
        help=mark("Flash attention shrinks the compute buffer; auto lets llama.cpp decide.", "params"),
    ).field()
    use_mmap: bool = BoolSpec(
        label=mark("Memory-map the file", "params"),
        flag="--mmap",
        default=True,
        help=mark("Off reads the whole file into RAM: steadier when memory is tight.", "params"),
    ).field()
    swa_full: bool = BoolSpec(
        label=mark("Full-size sliding-window cache", "params"),
        flag="--swa-full",
        default=False,
        help=mark(
            "Give sliding-window layers a cache as long as the context (more memory; lets the prompt cache "
            "be reused on models such as Gemma 3).",
            "params",
        ),
    ).field()
    n_cpu_moe: int = IntSpec(
        label=mark("Experts on the CPU", "params"),
        flag="--n-cpu-moe",
        minimum=0,
        maximum=ALL_LAYERS,
        default=0,
        help=mark(
            "Mixture-of-experts models: keep the expert weights of the first N blocks in host memory. Their "
            "attention stays on the GPU; each token reads only its few active experts from RAM, so this costs far "
            "less speed than leaving whole layers on the CPU.",
            "params",
        ),
    ).field()
    cpu_moe: bool = BoolSpec(
        label=mark("All experts on the CPU", "params"),
        flag="--cpu-moe",
        default=False,
        help=mark(
            "Mixture-of-experts models: keep every block's expert weights in host memory, the attention and "
            "dense weights on the GPU.",
            "params",
        ),
    ).field()
    n_outputs_max: int = IntSpec(
        label=mark("Outputs reserved", "params"),
        flag="--n-outputs-max",
        minimum=OUTPUTS_PER_SLOT,
        maximum=8192,
        default=OUTPUTS_PER_SLOT,
        panel=False,  # the default is what the engine reads; the flag also plans loads made elsewhere
        help=mark(
            "Tokens per micro-batch whose next-token scores the compute buffer has room for, each n_vocab "
            "floats (about 1 MiB for a 248k vocabulary). -1 (the default): one per parallel slot, which is "
            "all chat reads; 0: a whole batch, llama.cpp's own default.",
            "params",
        ),
    ).field()
    kv_unified: bool = BoolSpec(
        label=mark("One KV cache for all slots", "params"),
        flag="--kv-unified",
        default=False,
        panel=False,  # only matters with several parallel slots
        help=mark(
            "Parallel slots share one KV cache instead of a slice each: a slot can use the whole context "
            "while the others are idle.",
            "params",
        ),
    ).field()
    op_offload: bool = BoolSpec(
        label=mark("Offload host operations to the GPU", "params"),
        flag="--op-offload",
        default=True,
        panel=False,
        help=mark(
            "With layers or experts kept on the CPU, prompt processing copies their weights to the GPU, "
            "batch by batch, and computes there. --no-op-offload computes them on the CPU instead: no room "
            "for those copies in the GPU's compute buffer, but much slower prompt processing.",
            "params",
        ),
    ).field()
    # Several GPUs. Shown by the window only where there is more than one device to choose among.
    split_mode: str = ChoiceSpec(
        label=mark("Split mode", "params"),
        flag="--split-mode",
        choices=SPLIT_MODES,
        default="layer",
        panel=False,
        help=mark(
            "How the model is spread over several GPUs: layer (whole layers and their KV cache on each GPU by "
            "the tensor split), row (each weight matrix split by rows over the GPUs; the CUDA backend of the bundled "
            "llama.cpp cannot load this way), none (everything on the main GPU).",
            "params",
        ),
    ).field()
    tensor_split: str = ListTextSpec(
        label=mark("Tensor split", "params"),
        example="3,1",
        normalised=normalised_split,
        flag="--tensor-split",
        default="",
        panel=False,
        help=mark(
            "Share of the model on each GPU, in device order, e.g. 3,1 (three quarters on the first). Empty: "
            "in proportion to each GPU's free memory, as llama.cpp does.",
            "params",
        ),
    ).field()
    main_gpu: int = IntSpec(
        label=mark("Main GPU", "params"),
        flag="--main-gpu",
        minimum=0,
        maximum=MAX_DEVICES - 1,
        default=0,
        panel=False,
        help=mark("The GPU that holds the whole model with split mode none (0 is the first).", "params"),
    ).field()
    # Other machines' devices (llama.cpp's --rpc): listed before this machine's GPUs, as llama.cpp lists them.
    rpc_servers: str = ListTextSpec(
        label=mark("RPC servers", "params"),
        example="10.0.0.5:50052",
        normalised=normalised_endpoints,
        flag="--rpc",
        default="",
        panel=False,
        help=mark(
            "Devices of other machines, each running `tightfit rpc-worker` (llama.cpp's RPC server): "
            "host:port,host:port (at most 16). They come first in the device list and count as GPUs for the GPU "
            "layers and the tensor split.",
            "params",
        ),
    ).field()

    def validated(self) -> LoadSettings:
        """Check every field; raise ValueError naming the first bad one."""
        for spec in LOAD_SPECS:
            spec.check(getattr(self, spec.key))
        if self.n_ubatch > self.n_batch:
            raise ValueError(
                words("Micro-batch ({ubatch}) cannot exceed batch ({batch})", ubatch=self.n_ubatch, batch=self.n_batch)
            )
        if self.cache_type_v not in FLOAT_CACHE_TYPES and self.flash_attn == "off":
            raise ValueError(
                words("a {type} V cache needs flash attention: set it to on or auto", type=self.cache_type_v)
            )
        if 0 < self.n_outputs_max < self.n_parallel:
            # llama.cpp reserves one output per sequence and aborts if that is past n_outputs_max.
            raise ValueError(
                words(
                    "Outputs reserved ({outputs}) must be at least the parallel slots ({slots})",
                    outputs=self.n_outputs_max,
                    slots=self.n_parallel,
                )
            )
        return self

    @property
    def outputs_max(self) -> int:
        """llama.cpp's n_outputs_max for these settings: the one-per-slot default resolved (0 stays 0)."""
        return self.n_parallel if self.n_outputs_max == OUTPUTS_PER_SLOT else self.n_outputs_max

    def cpu_expert_layers(self, n_layer: int) -> int:
        """How many leading blocks keep their experts in host memory (all of them with --cpu-moe)."""
        return n_layer if self.cpu_moe else min(self.n_cpu_moe, n_layer)

    @property
    def rpc_endpoints(self) -> tuple[tuple[str, int], ...]:
        """The RPC servers as (host, port), in order; () for none."""
        return rpc_endpoints(self.rpc_servers)

    @property
    def tensor_split_values(self) -> tuple[float, ...]:
        """The tensor split as numbers; () for llama.cpp's default split by free memory."""
        return split_proportions(self.tensor_split)

    def with_values(self, **values: Any) -> LoadSettings:
        return replace(self, **values)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadSettings:
        """From stored or received data: unknown keys ignored, wrong types and ranges a ValueError."""
        return parse_fields(cls, data)


LOAD_SPECS: tuple[Spec[Any], ...] = specs_of(LoadSettings)
SPECS_BY_KEY: Mapping[str, Spec[Any]] = {s.key: s for s in LOAD_SPECS}
# The numbers the settings panel shows as sliders.
SIZING_PARAMS: tuple[IntSpec, ...] = tuple(s for s in LOAD_SPECS if isinstance(s, IntSpec) and s.panel)

GPU_LAYERS = cast(IntSpec, SPECS_BY_KEY["n_gpu_layers"])
CONTEXT = cast(IntSpec, SPECS_BY_KEY["n_ctx"])
BATCH = cast(IntSpec, SPECS_BY_KEY["n_batch"])
UBATCH = cast(IntSpec, SPECS_BY_KEY["n_ubatch"])
THREADS = cast(IntSpec, SPECS_BY_KEY["n_threads"])
PARALLEL = cast(IntSpec, SPECS_BY_KEY["n_parallel"])
CPU_MOE_LAYERS = cast(IntSpec, SPECS_BY_KEY["n_cpu_moe"])
FLASH_ATTN_MODES = cast(ChoiceSpec, SPECS_BY_KEY["flash_attn"]).choices

# Memory kept free on every GPU: llama.cpp's --fit keeps 1024 MiB by default.
MARGIN = IntSpec(
    key="margin_mib",
    label=mark("Margin", "params"),
    flag="--margin-mib",
    minimum=0,
    maximum=8192,
    default=1024,
    step=256,
    suffix=" MiB",
    help=mark("Memory kept free on each GPU, as llama.cpp's --fit does (1024 MiB by default).", "params"),
)


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


def _named(spec: Spec[Any], lower: bool = False) -> Words:
    """A setting as a list of changes names it: its label in lower case unless it is a name ("GPU layers" stays)."""
    english = spec.label.lower() if lower or spec.label[1:].islower() else spec.label
    return fixed(spec.label, "params", english)


def changes(before: LoadSettings, after: LoadSettings) -> Text:
    """What differs between two sets of settings, in words ("GPU layers 65 → 56, context 8192 → 4096")."""
    moved = [
        words(
            "{setting} {before} → {after}",
            setting=_named(spec),
            before=getattr(before, spec.key),
            after=getattr(after, spec.key),
        )
        for spec in LOAD_SPECS
        if getattr(before, spec.key) != getattr(after, spec.key)
    ]
    return joined(", ", moved) if moved else words("nothing to change, these settings already fit")


def describe(settings: LoadSettings, specs: Iterable[IntSpec] = SIZING_PARAMS) -> Text:
    # An option that is off by default (no experts on the CPU) is named only when it is on.
    shown = (s for s in specs if s.default != 0 or getattr(settings, s.key))
    return joined(
        ", ", (words("{setting} {value}", setting=_named(s, lower=True), value=getattr(settings, s.key)) for s in shown)
    )
