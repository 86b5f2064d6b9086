"""The two palettes as data: every text role reads at WCAG AA, every graphic at 3:1, both palettes name the
same things, and highlighted code meets AA in both Pygments styles."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pygments.styles import get_style_by_name
from pygments.token import Whitespace

from gui.core import theme
from gui.core.markdown_render import render_markdown
from gui.core.theme import DARK, LIGHT, NON_TEXT_AA, PALETTES, TEXT_AA, Palette, ThemeChoice, contrast_ratio

BOTH = pytest.mark.parametrize("palette", [LIGHT, DARK], ids=lambda p: p.name)


def test_contrast_ratio_matches_wcag_figures() -> None:
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert contrast_ratio("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)  # the classic near miss
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)
    assert contrast_ratio("#fff", "#000") == contrast_ratio("#000000", "#ffffff")
    with pytest.raises(ValueError):
        contrast_ratio("red", "#ffffff")


@BOTH
def test_text_roles_meet_aa_on_every_background(palette: Palette) -> None:
    failures = [
        f"{name} {colour} on {where} {background}: {contrast_ratio(colour, background):.2f}"
        for name, colour in palette.text_roles().items()
        for where, background in (("window", palette.window), ("base", palette.base))
        if contrast_ratio(colour, background) < TEXT_AA
    ]
    pairs = {
        "highlighted text": (palette.highlighted_text, palette.highlight),
        "badge": (palette.badge_text, palette.badge_background),
        "chart text": (palette.chart_text, palette.chart_background),
        "slowdown label": (palette.slowdown_line, palette.chart_background),
        "tooltip": (palette.text, palette.tooltip_base),
        "button": (palette.text, palette.button),
        "alternate rows": (palette.text, palette.alternate_base),
        "inline code": (palette.text, palette.code.inline_background),
        "quote": (palette.code.quote, palette.base),
        **{f"{s} banner": (b.text, b.background) for s, b in palette.banners.items()},
    }
    failures += [
        f"{name} {fg} on {bg}: {contrast_ratio(fg, bg):.2f}"
        for name, (fg, bg) in pairs.items()
        if contrast_ratio(fg, bg) < TEXT_AA
    ]
    assert not failures, "\n".join(failures)


@BOTH
def test_graphics_meet_non_text_contrast(palette: Palette) -> None:
    on_chart = {**palette.series, "axis": palette.chart_axis, "alert": palette.alert_line,
                "chosen cap": palette.chosen_line}  # fmt: skip
    failures = [
        f"{name} {colour} on chart {palette.chart_background}: {contrast_ratio(colour, palette.chart_background):.2f}"
        for name, colour in on_chart.items()
        if contrast_ratio(colour, palette.chart_background) < NON_TEXT_AA
    ]
    on_bar = {**palette.segments, "end of card": palette.bar_edge}
    failures += [
        f"{name} {colour} on bar {palette.bar_track}: {contrast_ratio(colour, palette.bar_track):.2f}"
        for name, colour in on_bar.items()
        if contrast_ratio(colour, palette.bar_track) < NON_TEXT_AA
    ]
    # The bar's track must itself stand out from the window it sits in, or an empty bar is invisible.
    assert contrast_ratio(palette.bar_track, palette.window) > 1.05
    assert not failures, "\n".join(failures)


@BOTH
def test_highlighted_code_meets_aa(palette: Palette) -> None:
    style = get_style_by_name(palette.code.style)
    background = style.background_color
    assert (luminance_dark := theme.luminance(background) < 0.2) == palette.dark, luminance_dark
    failures = []
    for token, looks in style:
        if token in Whitespace or not looks["color"]:
            continue  # whitespace is never drawn visibly by the chat's formatter
        on = f"#{looks['bgcolor']}" if looks["bgcolor"] else background
        if (ratio := contrast_ratio(f"#{looks['color']}", on)) < TEXT_AA:
            failures.append(f"{token} #{looks['color']} on {on}: {ratio:.2f}")
    assert not failures, "\n".join(failures)
    # Plain code text (no token colour of its own) and the block's background, as rendered.
    html = render_markdown("```\nplain words\n```", palette=palette)
    block = re.search(r'<pre style="background-color: (#\w+); color: (#\w+)', html)
    assert block is not None
    assert contrast_ratio(block.group(2), block.group(1)) >= TEXT_AA


def test_palettes_name_the_same_things_in_lowercase_hex() -> None:
    assert LIGHT.series.keys() == DARK.series.keys()
    assert LIGHT.segments.keys() == DARK.segments.keys()
    assert LIGHT.banners.keys() == DARK.banners.keys() == {"info", "warning", "critical"}
    assert set(PALETTES) == {"light", "dark"}
    for palette in PALETTES.values():
        colours = [v for v in vars(palette).values() if isinstance(v, str) and v.startswith("#")]
        colours += [*palette.series.values(), *palette.segments.values()]
        colours += [c for b in palette.banners.values() for c in (b.background, b.text, b.border)]
        for colour in colours:  # QColor.name() gives lowercase #rrggbb: tests compare against it
            assert re.fullmatch(r"#[0-9a-f]{6}", colour), colour


def test_choice_parses_stored_text_and_refuses_the_rest() -> None:
    assert theme.parse_choice("dark") is ThemeChoice.DARK
    assert theme.parse_choice(" Light ") is ThemeChoice.LIGHT
    for bad in ("purple", 3, None, ["dark"], "x" * 10_000):
        with pytest.raises(ValueError):
            theme.parse_choice(bad)


def test_no_hard_coded_colours_in_the_window_code() -> None:
    """Colours live in gui/core/theme.py: a literal in a widget would not follow the theme."""
    ui = Path(__file__).resolve().parents[1] / "gui" / "ui"
    literal = re.compile(r"#[0-9a-fA-F]{6}\b|#[0-9a-fA-F]{3}\b|setBackground\(\s*['\"]|background=['\"]\w")
    allowed: set[tuple[str, str]] = set()  # (file, line) where a literal is truly needed: none today
    found = []
    for path in sorted(ui.glob("*.py")):
        if path.name == "theme.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if literal.search(line) and (path.name, line.strip()) not in allowed:
                found.append(f"{path.name}:{number}: {line.strip()}")
    assert not found, "\n".join(found)
