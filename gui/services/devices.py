"""Planner devices from the two places a card can come from: the catalog, or NVML's measurement."""

from __future__ import annotations

from gui.core.cards import CARDS, Card
from gui.core.planner import Device
from gui.services.nvml import GpuInfo
from gui.services.rpc import RemoteDevice


def device_from_card(card: Card, free_mib: float | None = None, name: str | None = None) -> Device:
    return Device(
        name=name or card.name,
        total_mib=card.vram_mib,
        free_mib=card.vram_mib if free_mib is None else free_mib,
        bandwidth_gbs=card.bandwidth_gbs,
        sm_count=card.sm_count,
        compute_capability=card.compute_capability or None,
    )


def device_from_gpu(gpu: GpuInfo) -> Device:
    """A detected GPU: measured memory; bandwidth from the catalog when the name matches one."""
    match = next((c for c in CARDS.values() if _same_card(c, gpu)), None)
    return Device(
        name=f"GPU {gpu.index}: {gpu.name}",
        total_mib=gpu.total_mib,
        free_mib=gpu.free_mib,
        bandwidth_gbs=match.bandwidth_gbs if match else None,
        sm_count=match.sm_count if match else None,
        compute_capability=gpu.compute_capability,
    )


def _same_card(card: Card, gpu: GpuInfo) -> bool:
    words = card.name.lower().replace("tesla ", "").replace("geforce ", "").split()
    name = gpu.name.lower()
    return all(w in name for w in words[:2]) and abs(card.vram_mib - gpu.total_mib) < 2048


def device_from_remote(found: RemoteDevice) -> Device:
    """An RPC worker's device as the planner takes it, named as llama.cpp names its buffers ("RPC0[host:port]"),
    with the memory its server says is free."""
    return Device(
        f"RPC{found.index}[{found.endpoint}]",
        found.total_bytes / 2**20,
        found.free_bytes / 2**20,
        remote=found.endpoint,
    )
