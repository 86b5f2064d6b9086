"""The quant table: for each quant of one model, does it fit this card at these settings, and how fast?

Every number comes from the memory planner (:mod:`gui.core.planner`) on the file's header, so a
local file, a header read over HTTP and a sparse test file are judged alike:

- ``fits``: the planner's verdict with every layer on the GPU at the settings' context (shown as
  yes / tight / no).
- ``max_ctx_full_offload``: the largest context (steps of 256, at most the trained context) that
  keeps the margin with every layer on the GPU; None when even the smallest does not.
- ``gpu_layers``: the most layers (llama.cpp's count, output layer included) that keep the margin
  at the settings' context; ``n_layer + 1`` means all. For a mixture-of-experts model this is
  auto-fit's answer, which keeps every layer's attention on the GPU before any whole layer leaves:
  ``cpu_expert_layers`` says how many blocks then keep their experts in host memory.
- ``tok_s``: the planner's decode ceiling for the configuration the row recommends (everything
  on the GPU when it fits with the margin, else ``gpu_layers`` and ``cpu_expert_layers``, also for
  a tight row); None when a bandwidth
  it needs is unknown.

With no GPU (``devices`` empty) nothing can be offloaded: ``fits`` is "will not fit", the row says
"no GPU" rather than "no" (``on_gpu`` False), and the ceiling is the host's, from ``ram_bandwidth_gbs``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gui.core.gguf_reader import GGUFError, GGUFHeader
from gui.core.params import ALL_LAYERS, CONTEXT, MARGIN, LoadSettings, NetworkLink
from gui.core.planner import Device, Verdict, auto_fit, plan
from gui.core.quant_quality import quality_of
from gui.core.words import Text, english_error
from gui.services.models import ModelEntry

__all__ = ["QuantRow", "QuantSource", "quant_rows"]


@dataclass(frozen=True)
class QuantSource:
    """A header with the label and location to show for it (e.g. a file on the hub)."""

    label: str
    header: GGUFHeader
    path: Path | None = None
    url: str | None = None


@dataclass(frozen=True)
class QuantRow:
    label: str  # file name
    quant: str  # "Q3_K_S"
    size_bytes: int
    bits_per_weight: float
    fits: Verdict  # full offload at ``ctx``
    ctx: int  # the context ``fits`` and ``gpu_layers`` were judged at
    max_ctx_full_offload: int | None
    gpu_layers: int  # llama.cpp count that keeps the margin at ``ctx``; n_layer + 1 is all
    n_layer: int
    tok_s: float | None  # decode ceiling for the recommended configuration
    cpu_expert_layers: int  # MoE: blocks whose experts stay in host memory in that configuration
    needed_mib: float  # GPU memory a full offload at ``ctx`` needs (first device); 0 without GPU
    quality_rank: int | None  # 1 is the best; None for a type the ranking does not know
    quality_level: Text
    quality_hint: Text
    path: Path | None = None
    url: str | None = None
    error: Text | None = None
    source: Any = None  # the object the row was made from (a ModelEntry, RemoteFile, header...)
    on_gpu: bool = True  # planned for a GPU; False: this machine has none, the model runs from host memory

    @property
    def all_layers(self) -> bool:
        return self.gpu_layers >= self.n_layer + 1

    @property
    def fits_with_experts_on_cpu(self) -> bool:
        """A MoE model that does not fit whole, but does with every layer's attention on the GPU."""
        return self.fits is Verdict.WONT_FIT and self.all_layers and self.cpu_expert_layers > 0

    @property
    def fit_words(self) -> str:
        """The Fits column: yes / tight / no for everything on the GPU, or how a MoE model fits."""
        if not self.on_gpu:
            return "no GPU"  # not a verdict on the file: the load runs on the CPU
        if self.fits_with_experts_on_cpu:
            return f"with {self.cpu_expert_layers} layers' experts on the CPU"
        return self.fits.answer


def _unpack(item: Any) -> tuple[str, GGUFHeader | None, Path | None, str | None, Text | None]:
    if isinstance(item, QuantSource):
        return item.label, item.header, item.path, item.url, None
    if isinstance(item, ModelEntry):
        return item.path.name, item.header, item.path, None, item.error
    if isinstance(item, GGUFHeader):
        return os.path.basename(item.source) or item.source, item, None, None, None
    header = getattr(item, "header", None)
    label = getattr(item, "label", None) or getattr(item, "path", None) or repr(item)
    if isinstance(header, GGUFHeader):
        return str(label), header, None, getattr(item, "url", None), None
    return str(label), None, None, None, f"{label}: no header to plan with"


def _error_row(label: str, message: Text, path: Path | None, url: str | None, item: Any) -> QuantRow:
    return QuantRow(
        label=label,
        quant="?",
        size_bytes=0,
        bits_per_weight=0.0,
        fits=Verdict.WONT_FIT,
        ctx=0,
        max_ctx_full_offload=None,
        gpu_layers=0,
        n_layer=0,
        tok_s=None,
        cpu_expert_layers=0,
        needed_mib=0.0,
        quality_rank=None,
        quality_level="",
        quality_hint="",
        path=path,
        url=url,
        error=message,
        source=item,
    )


def _row(
    item: Any,
    label: str,
    header: GGUFHeader,
    path: Path | None,
    url: str | None,
    settings: LoadSettings,
    devices: tuple[Device, ...],
    margin: float,
    ram_bw: float | None,
    link: NetworkLink | None = None,
) -> QuantRow:
    n_layer = header.n_layer or 0
    trained = header.context_length or 0
    ctx = settings.n_ctx if settings.n_ctx > 0 else (trained or CONTEXT.default)
    if trained:
        ctx = min(ctx, trained)
    ctx = max(CONTEXT.minimum, ctx)
    # Where the experts go is the table's answer for each quant, not the window's setting for one file.
    at_ctx = settings.with_values(n_ctx=ctx, n_cpu_moe=0, cpu_moe=False)
    full = at_ctx.with_values(n_gpu_layers=ALL_LAYERS)

    if devices:
        full_plan = plan(header, full, devices, margin_mib=margin, ram_bandwidth_gbs=ram_bw, suggest=False, link=link)
        fits = full_plan.verdict
        needed = full_plan.devices[0].needed_mib
        # The largest context at full offload: auto_fit searches it (never past the trained one);
        # it answers the minimum when nothing fits, so check that the minimum really does.
        smallest = plan(header, full.with_values(n_ctx=CONTEXT.minimum), devices, margin_mib=margin, suggest=False)
        max_ctx: int | None = None
        if smallest.verdict is Verdict.FITS:
            max_ctx = auto_fit(header, full, devices, pinned=frozenset({"n_gpu_layers"}), margin_mib=margin).n_ctx
        # What auto-fit chooses at this context: the most layers or, for a MoE model, every layer's
        # attention with as many blocks' experts as fit.
        best = auto_fit(header, at_ctx, devices, pinned=frozenset({"n_ctx"}), margin_mib=margin)
        part = plan(header, best, devices, margin_mib=margin, ram_bandwidth_gbs=ram_bw, suggest=False, link=link)
        gpu_layers, experts = part.layers_on_gpu, part.cpu_expert_layers
        # A tight row is run as recommended: with the layers that keep the margin, at their speed.
        tok_s = full_plan.predicted_tg_tok_s if fits is Verdict.FITS else part.predicted_tg_tok_s
    else:
        fits, needed, max_ctx, gpu_layers, experts = Verdict.WONT_FIT, 0.0, None, 0, 0
        cpu_only = plan(header, at_ctx.with_values(n_gpu_layers=0), (), ram_bandwidth_gbs=ram_bw, suggest=False)
        tok_s = cpu_only.predicted_tg_tok_s

    quality = quality_of(header.quant_name)
    return QuantRow(
        label=label,
        quant=header.quant_name,
        size_bytes=header.file_size or header.tensor_bytes,
        bits_per_weight=header.bits_per_weight,
        fits=fits,
        ctx=ctx,
        max_ctx_full_offload=max_ctx,
        gpu_layers=gpu_layers,
        n_layer=n_layer,
        tok_s=tok_s,
        cpu_expert_layers=experts,
        needed_mib=needed,
        quality_rank=quality.rank if quality else None,
        quality_level=quality.level if quality else "",
        quality_hint=quality.hint if quality else "not in llama.cpp's quality table",
        path=path,
        url=url,
        source=item,
        on_gpu=bool(devices),
    )


def quant_rows(
    variants_or_headers: Sequence[Any],
    settings: LoadSettings,
    devices: Sequence[Device],
    margin_mib: float = MARGIN.default,
    ram_bandwidth_gbs: float | None = None,
    link: NetworkLink | None = None,
) -> list[QuantRow]:
    """One row per quant, largest file first. Items: ModelEntry, GGUFHeader, QuantSource, or any
    object with ``header`` (and ``label``/``path``/``url``). A bad item becomes a row with ``error``.
    ``link``: the network to RPC workers' devices among ``devices``, for the speed column.
    """
    devs = tuple(devices)
    rows: list[QuantRow] = []
    for item in variants_or_headers:
        label, header, path, url, error = _unpack(item)
        if header is None or error is not None:
            rows.append(_error_row(label, error or f"{label}: no header", path, url, item))
            continue
        try:
            rows.append(_row(item, label, header, path, url, settings, devs, margin_mib, ram_bandwidth_gbs, link))
        except (GGUFError, ValueError, KeyError, ZeroDivisionError) as exc:
            # A header the reader accepted can still hold values the planner cannot use (a zero
            # head count, an unknown cache type): one bad row, not a broken table.
            rows.append(_error_row(label, f"{label}: cannot plan ({english_error(exc)})", path, url, item))
    rows.sort(key=lambda r: (-r.size_bytes, r.label))
    return rows
