"""After the engine died of memory mid-load or mid-reply: settings that need less of the memory that ran out."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gui.core.gguf_reader import GGUFHeader
from gui.core.params import CONTEXT, FLOAT_CACHE_TYPES, LoadSettings, llama_gpu_layers
from gui.core.planner import Device, auto_fit, plan
from gui.core.words import Text, words

EXTRA_MARGIN_MIB = 512.0  # the estimate was not enough last time: leave more room on each GPU


@dataclass(frozen=True)
class SaferLoad:
    settings: LoadSettings
    change: Text  # what differs, in words, e.g. "48 GPU layers instead of 65"


def safer_settings(
    header: GGUFHeader,
    settings: LoadSettings,
    devices: Sequence[Device],
    margin_mib: float,
    *,
    gpu_ran_out: bool,
) -> SaferLoad:
    """A load that needs less of the memory that ran out.

    ``gpu_ran_out``: a GPU's memory ran out (the engine can offload, and the log says a GPU, or says
    nothing): the same context with fewer layers on the GPUs. Otherwise host memory ran out: fewer bytes
    on the host, the cheapest change first (memory-map the file, a q8_0 KV cache, half the context, a
    smaller micro-batch). Never "more layers on the CPU", which needs more host memory, not less.
    """
    n_layer = header.n_layer or 0
    current_layers = n_layer + 1 if llama_gpu_layers(settings.n_gpu_layers, n_layer) < 0 else settings.n_gpu_layers
    if gpu_ran_out and devices and current_layers > 0:
        keep = frozenset(f for f in settings.to_dict() if f != "n_gpu_layers")
        fitted = auto_fit(header, settings, devices, pinned=keep, margin_mib=margin_mib + EXTRA_MARGIN_MIB)
        layers = min(fitted.n_gpu_layers, current_layers - 1)
        if layers >= 0 and plan(header, settings.with_values(n_gpu_layers=layers), devices).fits:
            return SaferLoad(
                settings.with_values(n_gpu_layers=layers),
                words("{layers} GPU layers instead of {current}", layers=layers, current=current_layers),
            )
    if not settings.use_mmap:
        return SaferLoad(settings.with_values(use_mmap=True), words("the file memory-mapped instead of read into RAM"))
    if settings.cache_type_k in FLOAT_CACHE_TYPES or settings.cache_type_v in FLOAT_CACHE_TYPES:
        # A quantised V cache needs flash attention; with it off, only K can shrink.
        v = "q8_0" if settings.flash_attn != "off" else settings.cache_type_v
        was = settings.cache_type_k if settings.cache_type_k == settings.cache_type_v else words("the current")
        change = words("a q8_0 KV cache instead of {was}", was=was)
        return SaferLoad(settings.with_values(cache_type_k="q8_0", cache_type_v=v), change)
    smaller = max(CONTEXT.minimum, (settings.n_ctx // 2) // CONTEXT.step * CONTEXT.step)
    if smaller < settings.n_ctx:
        change = words("context {smaller} instead of {current}", smaller=f"{smaller:,}", current=f"{settings.n_ctx:,}")
        return SaferLoad(settings.with_values(n_ctx=smaller), change)
    return SaferLoad(settings.with_values(n_ubatch=max(32, settings.n_ubatch // 2)), words("a smaller micro-batch"))
