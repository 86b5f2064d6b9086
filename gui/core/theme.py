"""The window's two palettes, light and dark, as data: every colour the window draws with has a named role
here, and nowhere else (gui/ui/theme.py applies them; tests/test_theme.py checks their contrast).

Contrast follows WCAG 2.x: text roles need 4.5:1 against every background they are drawn on (AA for
normal text; the window's bold text is body-sized, so nothing here counts as "large" text with its 3:1
allowance), and graphics (chart curves, limit lines, axes, VRAM bar segments) need 3:1 against the chart
or bar background they are drawn on (non-text contrast).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

__all__ = [
    "DARK",
    "GPU_COLOURS",
    "LIGHT",
    "PALETTES",
    "Banner",
    "CodeColours",
    "Palette",
    "ThemeChoice",
    "contrast_ratio",
    "gpu_series",
    "luminance",
    "parse_choice",
]

NON_TEXT_AA = 3.0  # graphics and the parts of a chart a reader needs (WCAG 1.4.11)
TEXT_AA = 4.5  # normal text (WCAG 1.4.3)


class ThemeChoice(StrEnum):
    """What the user picked: follow the desktop's light/dark preference, or one of the two."""

    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"


def parse_choice(value: object) -> ThemeChoice:
    """A stored choice; raises ValueError on anything else (the settings store then uses the default)."""
    if not isinstance(value, str):
        raise ValueError(f"expected one of {', '.join(c.value for c in ThemeChoice)}")
    try:
        return ThemeChoice(value.strip().lower())
    except ValueError:
        raise ValueError(f"{value[:40]!r} is not one of {', '.join(c.value for c in ThemeChoice)}") from None


def _channels(colour: str) -> tuple[int, int, int]:
    text = colour.strip().lstrip("#")
    if len(text) == 3:
        text = "".join(c * 2 for c in text)
    if len(text) != 6:
        raise ValueError(f"not a #rrggbb colour: {colour!r}")
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def luminance(colour: str) -> float:
    """WCAG relative luminance of an sRGB colour written #rrggbb (or #rgb): 0 for black, 1 for white."""

    def linear(channel: int) -> float:
        c = channel / 255.0
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in _channels(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(a: str, b: str) -> float:
    """WCAG contrast ratio of two colours, 1 (same) to 21 (black on white); order does not matter."""
    la, lb = luminance(a), luminance(b)
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


@dataclass(frozen=True)
class Banner:
    """A coloured notice: its text must read on its background."""

    background: str
    text: str
    border: str


@dataclass(frozen=True)
class CodeColours:
    """Highlighted code in chat replies: a Pygments style (blocks carry its background), the background of
    `inline code`, and the text colour of a quote."""

    style: str
    inline_background: str
    quote: str


def _frozen(table: dict[str, str]) -> Mapping[str, str]:
    return MappingProxyType(table)


@dataclass(frozen=True, eq=False)
class Palette:
    name: str  # "light" or "dark"
    dark: bool
    # The Qt palette set when the choice is explicit (the desktop's own is kept for "system").
    window: str  # panels, labels
    base: str  # text views, lists, entry fields
    alternate_base: str
    button: str
    text: str
    highlight: str
    highlighted_text: str
    link: str
    disabled_text: str
    tooltip_base: str
    # Text that says something by its colour (on `window` and on `base`).
    muted: str  # secondary words: figures, hints, titles of readings
    ok: str  # fits, applied, passed
    warn: str  # tight, clamped, a warning
    error: str  # will not fit, failed
    accent: str  # the user's turns, a pinned setting
    assistant: str  # the model's turns
    simulated: str  # anything about a simulated card
    badge_background: str  # the SIMULATED badge
    badge_text: str
    banners: Mapping[str, Banner]  # by alert severity: info, warning, critical
    # Charts (the monitor's, Tune's and the power sweep's).
    chart_background: str
    chart_text: str  # titles, axis labels
    chart_axis: str  # axis lines and ticks
    series: Mapping[str, str]  # curve colours by telemetry field (and bench_*/sweep_* for Tune)
    slowdown_line: str  # the card's slowdown temperature: a line with a label, so held to text contrast
    alert_line: str
    chosen_line: str  # the recommended power cap
    # The VRAM bar.
    bar_track: str
    bar_edge: str  # the end of the card
    bar_margin: str  # the safety margin's hatching (drawn translucent over the segments)
    segments: Mapping[str, str]  # by DevicePlan field (gui.ui.vram_bar.SEGMENTS)
    code: CodeColours

    def text_roles(self) -> dict[str, str]:
        """Every colour text is written in on `window` or `base`, by name (for the contrast check)."""
        names = ("text", "link", "muted", "ok", "warn", "error", "accent", "assistant", "simulated")
        return {name: getattr(self, name) for name in names}


LIGHT = Palette(
    name="light",
    dark=False,
    window="#efefef",
    base="#ffffff",
    alternate_base="#f5f5f5",
    button="#efefef",
    text="#1f1f1f",
    highlight="#2a64c5",
    highlighted_text="#ffffff",
    link="#1f5fbf",
    disabled_text="#8c8c8c",
    tooltip_base="#ffffdc",
    muted="#595959",
    ok="#1b6e20",
    warn="#8a5300",
    error="#b71c1c",
    accent="#1f5fbf",
    assistant="#2a6e2e",
    simulated="#7b1fa2",
    badge_background="#ffb300",
    badge_text="#212121",
    banners=MappingProxyType(
        {
            "info": Banner("#e3f2fd", "#0d47a1", "#90caf9"),
            "warning": Banner("#fff3e0", "#8f3b00", "#ffb74d"),
            "critical": Banner("#ffebee", "#b71c1c", "#e57373"),
        }
    ),
    chart_background="#ffffff",
    chart_text="#333333",
    chart_axis="#8a8a8a",
    series=_frozen(
        {
            "temperature_c": "#d32f2f",
            "power_w": "#d35400",
            "power_limit_w": "#37474f",
            "gpu_util_pct": "#1e78d2",
            "mem_util_pct": "#2e8b34",
            "memory_used_mib": "#8e24aa",
            "memory_total_mib": "#616161",
            "sm_clock_mhz": "#00796b",
            "mem_clock_mhz": "#6d4c41",
            "cpu_avg_pct": "#3949ab",
            "cpu_max_pct": "#d81b60",
            "engine_tok_s": "#2e7d32",
            "ram_used_mib": "#5e35b1",
            "swap_used_mib": "#827717",
            "ram_total_mib": "#616161",
            "bench_pp": "#1f77b4",
            "bench_tg": "#d62728",
            "sweep_speed": "#d62728",
            "sweep_efficiency": "#23852a",
            # One colour per GPU where the monitor draws every card on one chart (gpu_colour), in order.
            "gpu_0": "#1e78d2",
            "gpu_1": "#c75a00",
            "gpu_2": "#2e8b34",
            "gpu_3": "#8e24aa",
            "gpu_4": "#00838f",
            "gpu_5": "#c2185b",
            "gpu_6": "#d32f2f",
            "gpu_7": "#6d4c41",
        }
    ),
    slowdown_line="#7b1fa2",
    alert_line="#d35400",
    chosen_line="#555555",
    bar_track="#dde1e6",
    bar_edge="#202124",
    bar_margin="#000000",
    segments=_frozen(
        {
            "other_mib": "#5f6368",
            "overhead_mib": "#757b80",
            "weights_mib": "#3b6fd4",
            "kv_mib": "#23804a",
            "recurrent_mib": "#0e7c8c",
            "compute_mib": "#b5650d",
            "staged_mib": "#7f3d0b",
            "output_mib": "#9057ad",
        }
    ),
    code=CodeColours("default", "#e8ebef", "#57606a"),
)

DARK = Palette(
    name="dark",
    dark=True,
    window="#2b2b2b",
    base="#1e1e1e",
    alternate_base="#262626",
    button="#353535",
    text="#e6e6e6",
    highlight="#2f65c2",
    highlighted_text="#ffffff",
    link="#8ab4f8",
    disabled_text="#7a7a7a",
    tooltip_base="#3a3a3a",
    muted="#ababab",
    ok="#81c784",
    warn="#f0b35a",
    error="#ff8a80",
    accent="#8ab4f8",
    assistant="#81c995",
    simulated="#d7a6f5",
    badge_background="#ffb300",
    badge_text="#212121",
    banners=MappingProxyType(
        {
            "info": Banner("#10293f", "#bcdcff", "#3d6a99"),
            "warning": Banner("#3a2806", "#ffd08a", "#8a6420"),
            "critical": Banner("#431417", "#ffcdd2", "#a04048"),
        }
    ),
    chart_background="#1e1e1e",
    chart_text="#d0d0d0",
    chart_axis="#8a8a8a",
    series=_frozen(
        {
            "temperature_c": "#ff6b6b",
            "power_w": "#ffa040",
            "power_limit_w": "#b0bec5",
            "gpu_util_pct": "#64b5f6",
            "mem_util_pct": "#81c784",
            "memory_used_mib": "#ce93d8",
            "memory_total_mib": "#bdbdbd",
            "sm_clock_mhz": "#4db6ac",
            "mem_clock_mhz": "#bcaaa4",
            "cpu_avg_pct": "#9fa8da",
            "cpu_max_pct": "#f48fb1",
            "engine_tok_s": "#a5d6a7",
            "ram_used_mib": "#b39ddb",
            "swap_used_mib": "#dce775",
            "ram_total_mib": "#bdbdbd",
            "bench_pp": "#64b5f6",
            "bench_tg": "#ff6b6b",
            "sweep_speed": "#ff6b6b",
            "sweep_efficiency": "#81c784",
            "gpu_0": "#64b5f6",
            "gpu_1": "#ffa040",
            "gpu_2": "#81c784",
            "gpu_3": "#ce93d8",
            "gpu_4": "#4dd0e1",
            "gpu_5": "#f48fb1",
            "gpu_6": "#ff6b6b",
            "gpu_7": "#bcaaa4",
        }
    ),
    slowdown_line="#ce93d8",
    alert_line="#ffa040",
    chosen_line="#9e9e9e",
    bar_track="#3a3d42",
    bar_edge="#e8eaed",
    bar_margin="#ffffff",
    segments=_frozen(
        {
            "other_mib": "#a4aab0",
            "overhead_mib": "#c8ccd0",
            "weights_mib": "#7aa7ff",
            "kv_mib": "#5fcf8f",
            "recurrent_mib": "#4dd0e1",
            "compute_mib": "#ffb74d",
            "staged_mib": "#e8915a",
            "output_mib": "#d1a5e8",
        }
    ),
    code=CodeColours("monokai", "#3a3d41", "#a8b0b8"),
)

PALETTES: Mapping[str, Palette] = MappingProxyType({p.name: p for p in (LIGHT, DARK)})
# The GPUs' own colours, gpu_0, gpu_1, ... (not gpu_util_pct, a reading's colour that shares the prefix).
GPU_COLOURS = sum(1 for key in LIGHT.series if key.startswith("gpu_") and key[4:].isdigit())


def gpu_series(position: int) -> str:
    """The series key of the GPU drawn `position`-th (0 first) when every GPU shares a chart; past the
    palette's GPU colours they repeat."""
    return f"gpu_{position % GPU_COLOURS}"
