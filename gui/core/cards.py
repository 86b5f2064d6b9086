"""Catalog of GPUs the panel knows by name, for planning without the card in the machine.

Sources: NVIDIA's product data sheets for memory size, bandwidth, board power and SM count (V100
SXM2/PCIe, Tesla P40, Tesla T4, Tesla P100 PCIe, GeForce RTX 3090/4090, A100 40GB/80GB PCIe), and
NVIDIA's CUDA GPU list (developer.nvidia.com/cuda-gpus) for the compute capability. ``vram_mib`` is
what the driver reports as total (nvidia-smi), which is a little under the marketing figure: a V100
16GB shows 16160 MiB; the others use their commonly reported nvidia-smi totals.
"""

from __future__ import annotations

from dataclasses import dataclass

from gui.core.specs import FloatSpec, IntSpec
from gui.core.words import mark

__all__ = ["CARDS", "Card", "UnknownCardError", "custom_card", "find_card"]


class UnknownCardError(KeyError):
    """No card by that key or name. Unlike a bare KeyError, ``str()`` is the plain message."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Card:
    key: str
    name: str
    vram_mib: float
    bandwidth_gbs: float  # peak memory bandwidth, GB/s (10^9 bytes)
    compute_capability: str
    board_power_w: int
    sm_count: int | None


CARDS: dict[str, Card] = {
    c.key: c
    for c in (
        Card("v100-16gb", "Tesla V100 SXM2 16GB", 16160, 900, "7.0", 300, 80),
        Card("v100-pcie-16gb", "Tesla V100 PCIe 16GB", 16160, 897, "7.0", 250, 80),
        Card("v100-32gb", "Tesla V100 SXM2 32GB", 32510, 900, "7.0", 300, 80),
        Card("p40", "Tesla P40 24GB", 24451, 347, "6.1", 250, 30),
        Card("t4", "Tesla T4 16GB", 15360, 320, "7.5", 70, 40),
        Card("p100", "Tesla P100 PCIe 16GB", 16280, 732, "6.0", 250, 56),
        Card("3090", "GeForce RTX 3090 24GB", 24576, 936, "8.6", 350, 82),
        Card("4090", "GeForce RTX 4090 24GB", 24564, 1008, "8.9", 450, 128),
        Card("a100-40gb", "A100 PCIe 40GB", 40960, 1555, "8.0", 250, 108),
        Card("a100-80gb", "A100 PCIe 80GB", 81920, 1935, "8.0", 300, 108),
    )
}


# The two figures that describe a card the catalog does not know.
CUSTOM_VRAM = IntSpec(
    key="custom_vram_mib",
    label=mark("Card memory", "params"),
    minimum=256,
    maximum=1 << 20,
    default=16384,
    step=1024,
    suffix=" MiB",
    help=mark("The card's memory, as nvidia-smi shows it", "params"),
)
CUSTOM_BANDWIDTH = FloatSpec(
    key="custom_bandwidth_gbs",
    label=mark("Memory bandwidth", "params"),
    minimum=10.0,
    maximum=10_000.0,
    default=900.0,
    step=10.0,
    decimals=0,
    suffix=" GB/s",
    help=mark("The card's memory bandwidth from its data sheet: it sets the decode speed ceiling", "params"),
)


def custom_card(vram_mib: float, bandwidth_gbs: float, name: str = "Custom GPU") -> Card:
    """A card the catalog does not know, from the two figures the planner needs."""
    if vram_mib <= 0:
        raise ValueError(f"VRAM must be positive (got {vram_mib} MiB)")
    if bandwidth_gbs <= 0:
        raise ValueError(f"bandwidth must be positive (got {bandwidth_gbs} GB/s)")
    return Card("custom", name, float(vram_mib), float(bandwidth_gbs), "", 0, None)


def find_card(key_or_name: str) -> Card:
    """Look a card up by key (``v100-16gb``) or by name, case-insensitively."""
    wanted = key_or_name.strip().lower()
    if wanted in CARDS:
        return CARDS[wanted]
    for card in CARDS.values():
        if card.name.lower() == wanted:
            return card
    raise UnknownCardError(f"unknown GPU {key_or_name!r}; known cards: {', '.join(CARDS)}")
