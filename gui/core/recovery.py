"""After the engine died mid-load or mid-reply: settings that need less memory, chosen by the planner."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gui.core.gguf_reader import GGUFHeader
from gui.core.params import CONTEXT, LoadSettings, llama_gpu_layers
from gui.core.planner import Device, auto_fit, plan

EXTRA_MARGIN_MIB = 512.0  # the estimate was not enough last time: leave more room on each GPU


@dataclass(frozen=True)
class SaferLoad:
    settings: LoadSettings
    change: str  # what differs, in words, e.g. "48 GPU layers instead of 65"


def safer_settings(
    header: GGUFHeader, settings: LoadSettings, devices: Sequence[Device], margin_mib: float
) -> SaferLoad:
    """Fewer GPU layers at the same context when a GPU is involved; otherwise half the context."""
    n_layer = header.n_layer or 0
    current_layers = n_layer + 1 if llama_gpu_layers(settings.n_gpu_layers, n_layer) < 0 else settings.n_gpu_layers
    if devices and current_layers > 0:
        keep = frozenset(f for f in settings.to_dict() if f != "n_gpu_layers")
        fitted = auto_fit(header, settings, devices, pinned=keep, margin_mib=margin_mib + EXTRA_MARGIN_MIB)
        layers = min(fitted.n_gpu_layers, current_layers - 1)
        if layers >= 0 and plan(header, settings.with_values(n_gpu_layers=layers), devices).fits:
            return SaferLoad(
                settings.with_values(n_gpu_layers=layers), f"{layers} GPU layers instead of {current_layers}"
            )
    smaller = max(CONTEXT.minimum, (settings.n_ctx // 2) // CONTEXT.step * CONTEXT.step)
    if smaller < settings.n_ctx:
        return SaferLoad(settings.with_values(n_ctx=smaller), f"context {smaller:,} instead of {settings.n_ctx:,}")
    return SaferLoad(settings.with_values(n_ubatch=max(32, settings.n_ubatch // 2)), "a smaller micro-batch")
