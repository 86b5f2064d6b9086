"""Input widgets made from setting declarations (gui.core.specs): range, step, suffix, tooltip and
accessible name come from the spec, so no widget repeats a range or a default."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtGui import QValidator
from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from gui.core.specs import BoolSpec, ChoiceSpec, FloatSpec, IntSpec, Spec
from gui.ui.i18n import Tr, core_text, error_text

tr = Tr("spec_widgets")

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


def choice_box(spec: ChoiceSpec, parent: QWidget | None = None, names: Mapping[str, str] | None = None) -> QComboBox:
    """A list of the declared choices; with ``names``, each shown by its name (its choice is the item's data)."""
    box = QComboBox(parent)
    for choice in spec.choices:
        box.addItem(names.get(choice, choice) if names else choice, choice)
    box.setCurrentIndex(spec.choices.index(spec.default))
    _describe(box, spec)
    return box


def check_box(spec: BoolSpec, parent: QWidget | None = None) -> QCheckBox:
    box = QCheckBox(label(spec), parent)
    box.setChecked(spec.default)
    _describe(box, spec)
    return box


class TextBox(QLineEdit):
    """A setting written as text (a tensor split "3,1"): what is typed is taken when editing ends, if its
    declaration parses it (the parsed form is shown); otherwise the value before comes back and ``refused``
    says why in one line."""

    committed = Signal(str)  # a new value, as its declaration writes it
    refused = Signal(str)  # one line: what was typed, why it was not taken, the value kept

    def __init__(self, spec: Spec[str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.spec = spec
        self._value = spec.default
        self.setMaxLength(_TEXT_MAX_CHARS)  # a paste of a whole file is cut here, before any parsing
        self.setText(self._value)
        self.editingFinished.connect(self.commit)
        _describe(self, spec)

    def value(self) -> str:
        return self._value

    def set_value(self, value: str) -> None:
        """A value already checked (from stored settings): shown and kept, nothing emitted."""
        self._value = value
        self.setText(value)

    def commit(self) -> None:
        typed = self.text()
        try:
            value = self.spec.parse(typed)
        except ValueError as exc:
            self.setText(self._value)
            why = " ".join(error_text(exc, "params").split())  # one line, whatever the declaration said
            kept = self._value or tr("empty")
            self.refused.emit(
                tr("{setting}: not changed, {kept} kept. {why}").format(setting=label(self.spec), kept=kept, why=why)
            )
            return
        self.setText(value)
        if value != self._value:
            self._value = value
            self.committed.emit(value)


# Longer than any text setting allows (the RPC servers' 4,096 characters): their declarations say the rest.
_TEXT_MAX_CHARS = 4096


def text_box(spec: Spec[str], parent: QWidget | None = None) -> TextBox:
    return TextBox(spec, parent)


def label(spec: Spec[Any]) -> str:
    """A setting's name in the window's language (gui/core declares it in English)."""
    return core_text("params", spec.label)


def help_text(spec: Spec[Any]) -> str:
    return core_text("params", spec.help)


def _describe(widget: QWidget, spec: Spec[Any]) -> None:
    widget.setToolTip(help_text(spec))
    widget.setAccessibleName(label(spec))
