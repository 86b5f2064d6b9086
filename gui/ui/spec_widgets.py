"""Input widgets made from setting declarations (gui.core.specs): range, step, suffix, tooltip and
accessible name come from the spec, so no widget repeats a range or a default."""

from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from gui.core.specs import BoolSpec, ChoiceSpec, FloatSpec, IntSpec, Spec
from gui.ui.i18n import core_text

# QSpinBox holds a C int; a declared maximum past it (a 32-bit seed) is cut here.
_QT_INT_MAX = 2**31 - 1


class ClampSpinBox(QSpinBox):
    """A spin box that takes any whole number typed into it and brings one outside its range to the
    nearest end, saying so (``clamped``), instead of refusing digits: typing llama.cpp's "99" for
    "all layers" gives the most there are, not "9"."""

    clamped = Signal(int, int)  # what was typed, what it became

    def validate(self, text: str, pos: int) -> tuple[QValidator.State, str, int]:
        number = self._typed(text)
        if number is None or self.minimum() <= number <= self.maximum():
            return super().validate(text, pos)
        return QValidator.State.Intermediate, text, pos

    def fixup(self, text: str) -> str:
        number = self._typed(text)
        if number is None:
            return super().fixup(text)
        value = max(self.minimum(), min(number, self.maximum()))
        if value != number:
            self.clamped.emit(number, value)
        return self.prefix() + str(value) + self.suffix()

    def _typed(self, text: str) -> int | None:
        core = text.removeprefix(self.prefix()).removesuffix(self.suffix()).strip().replace(",", "")
        # Long enough for any real value, short enough that Python never parses a huge number typed in.
        return int(core) if re.fullmatch(r"[+-]?\d{1,15}", core) else None


def int_box(spec: IntSpec, parent: QWidget | None = None) -> ClampSpinBox:
    box = ClampSpinBox(parent)
    box.setRange(spec.minimum, min(spec.maximum, _QT_INT_MAX))
    box.setSingleStep(spec.step)
    box.setSuffix(spec.suffix)
    box.setValue(min(spec.default, _QT_INT_MAX))
    _describe(box, spec)
    return box


def float_box(spec: FloatSpec, parent: QWidget | None = None) -> QDoubleSpinBox:
    box = QDoubleSpinBox(parent)
    box.setDecimals(spec.decimals)
    box.setRange(spec.minimum, spec.maximum)
    box.setSingleStep(spec.step)
    box.setSuffix(spec.suffix)
    box.setValue(spec.default)
    _describe(box, spec)
    return box


def choice_box(spec: ChoiceSpec, parent: QWidget | None = None) -> QComboBox:
    box = QComboBox(parent)
    box.addItems(list(spec.choices))
    box.setCurrentText(spec.default)
    _describe(box, spec)
    return box


def check_box(spec: BoolSpec, parent: QWidget | None = None) -> QCheckBox:
    box = QCheckBox(label(spec), parent)
    box.setChecked(spec.default)
    _describe(box, spec)
    return box


def label(spec: Spec[Any]) -> str:
    """A setting's name in the window's language (gui/core declares it in English)."""
    return core_text("params", spec.label)


def help_text(spec: Spec[Any]) -> str:
    return core_text("params", spec.help)


def _describe(widget: QWidget, spec: Spec[Any]) -> None:
    widget.setToolTip(help_text(spec))
    widget.setAccessibleName(label(spec))
