"""The VRAM budget bar: where every MiB of a device goes, against its total, its free memory and the margin."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from PySide6.QtCore import QPoint, QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QMouseEvent, QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from gui.core.planner import DevicePlan, Verdict
from gui.core.theme import Palette
from gui.ui.i18n import Tr, core_text, number
from gui.ui.plain import plain_tip
from gui.ui.theme import current_palette, follow_theme


def verdict_colour(verdict: Verdict, palette: Palette | None = None) -> str:
    """The verdict's text colour in `palette` (the one in use when not given)."""
    palette = palette or current_palette()
    return {Verdict.FITS: palette.ok, Verdict.TIGHT: palette.warn, Verdict.WONT_FIT: palette.error}[verdict]


class _VerdictColours(Mapping[Verdict, str]):
    """Verdict -> colour in the palette in use, read when looked up (so it follows the theme)."""

    def __getitem__(self, verdict: Verdict) -> str:
        return verdict_colour(verdict)

    def __iter__(self) -> Iterator[Verdict]:
        return iter(Verdict)

    def __len__(self) -> int:
        return len(Verdict)


VERDICT_COLOURS: Mapping[Verdict, str] = _VerdictColours()


tr = Tr("vram_bar")


@dataclass(frozen=True)
class Segment:
    key: str
    label: str

    @property
    def colour(self) -> str:
        """Its colour in the palette in use."""
        return current_palette().segments[self.key]


# Drawn left to right in this order; "other" (memory other processes hold) comes first, as it is taken already.
SEGMENTS = (
    Segment("other_mib", tr.mark("Other processes")),
    Segment("overhead_mib", tr.mark("CUDA context and runtime")),
    Segment("weights_mib", tr.mark("Weights")),
    Segment("kv_mib", tr.mark("KV cache")),
    Segment("recurrent_mib", tr.mark("Recurrent state")),
    Segment("compute_mib", tr.mark("Compute buffer")),
    Segment("staged_mib", tr.mark("Host weights staged for prompts")),
    Segment("output_mib", tr.mark("Output buffer")),
)


def describe_device(plan: DevicePlan) -> str:
    gib = 1024.0
    if plan.free_after_mib >= plan.margin_mib:
        room = tr("{free} GiB free after loading").format(free=f"{plan.free_after_mib / gib:.2f}")
    elif plan.free_after_mib >= 0:
        room = tr("only {free} MiB free after loading (margin {margin} MiB)").format(
            free=f"{plan.free_after_mib:.0f}", margin=f"{plan.margin_mib:.0f}"
        )
    else:
        room = tr("{short} GiB short").format(short=f"{-plan.free_after_mib / gib:.2f}")
    return tr("{card}: needs {needed} of {total} GiB — {verdict}, {room}").format(
        card=plan.name,
        needed=f"{plan.needed_mib / gib:.2f}",
        total=f"{plan.total_mib / gib:.2f}",
        verdict=core_text("planner", plan.verdict.value),
        room=room,
    )


def _translucent(colour: str) -> QColor:
    """The margin's hatching: dense enough to see, open enough to see the segments under it."""
    shade = QColor(colour)
    shade.setAlpha(90)
    return shade


class VramBar(QWidget):
    """One device. Hover shows each part in MiB."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.plan: DevicePlan | None = None
        self._spans: list[tuple[float, float, str]] = []  # x0, x1, tooltip, in widget pixels
        self.setMouseTracking(True)
        self.setMinimumHeight(46)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setAccessibleName(tr("VRAM budget"))
        follow_theme(self, lambda _palette: self.update())

    def sizeHint(self) -> QSize:
        return QSize(360, 46)

    def set_plan(self, plan: DevicePlan | None) -> None:
        self.plan = plan
        self.setAccessibleDescription(describe_device(plan) if plan else "")
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        plan = self.plan
        colours = current_palette()
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        rect = QRectF(self.rect()).adjusted(1, 14, -1, -12)
        painter.fillRect(rect, QColor(colours.bar_track))
        self._spans = []
        if plan is None or plan.total_mib <= 0:
            painter.end()
            return
        scale_mib = max(plan.total_mib, plan.other_mib + plan.needed_mib)
        px_per_mib = rect.width() / scale_mib
        x = rect.left()
        for seg in SEGMENTS:
            mib = float(getattr(plan, seg.key))
            if mib <= 0:
                continue
            width = mib * px_per_mib
            painter.fillRect(QRectF(x, rect.top(), width, rect.height()), QColor(colours.segments[seg.key]))
            self._spans.append((x, x + width, f"{tr(seg.label)}: {number(mib)} MiB"))
            x += width
        total_x = rect.left() + plan.total_mib * px_per_mib
        if x > total_x:  # what does not fit, hatched red past the end of the card
            painter.fillRect(QRectF(total_x, rect.top(), x - total_x, rect.height()),
                             QBrush(QColor(colours.error), Qt.BrushStyle.BDiagPattern))  # fmt: skip
        # The safety margin: the last margin_mib before the end of the card should stay free.
        margin_x = total_x - plan.margin_mib * px_per_mib
        painter.fillRect(QRectF(margin_x, rect.top(), total_x - margin_x, rect.height()),
                         QBrush(_translucent(colours.bar_margin), Qt.BrushStyle.Dense6Pattern))  # fmt: skip
        self._spans.append(
            (margin_x, total_x, tr("Safety margin: {margin} MiB kept free").format(margin=number(plan.margin_mib)))
        )
        painter.setPen(QPen(QColor(colours.bar_edge), 2))
        painter.drawLine(int(total_x), int(rect.top()) - 3, int(total_x), int(rect.bottom()) + 3)
        small = QFont(self.font())
        small.setPointSizeF(max(7.0, small.pointSizeF() * 0.85))
        painter.setFont(small)
        painter.setPen(QColor(verdict_colour(plan.verdict, colours)))
        # Cut to the bar's width (the whole sentence is the tooltip): painted text must not run past the edge.
        line = painter.fontMetrics().elidedText(describe_device(plan), Qt.TextElideMode.ElideRight, int(rect.width()))
        painter.drawText(QRectF(rect.left(), 0, rect.width(), 13), Qt.AlignmentFlag.AlignLeft, line)
        painter.setPen(QColor(colours.muted))
        painter.drawText(
            QRectF(rect.left(), rect.bottom() + 1, rect.width(), 12),
            Qt.AlignmentFlag.AlignRight,
            f"{number(plan.total_mib)} MiB",
        )
        painter.end()

    def segment_at(self, x: float) -> str | None:
        for x0, x1, text in reversed(self._spans):  # the margin overlay wins over what it covers
            if x0 <= x < x1:
                return text
        return None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        text = self.segment_at(event.position().x())
        if text:  # the device's name comes from its driver: shown as written
            QToolTip.showText(event.globalPosition().toPoint() + QPoint(8, 8), plain_tip(text), self)
        else:
            QToolTip.hideText()
