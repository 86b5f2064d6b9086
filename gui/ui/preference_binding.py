"""A preference bound to the widget that shows it, said once: ``bind(store, PREF, widget)`` shows the stored value
and keeps every change the user makes; ``restore(store, PREF, widget)`` only shows it (for a value saved
elsewhere, such as the address the API last listened on, kept once listening worked).

How the value goes in and out of the widget follows from the preference's declaration (gui/core/preferences.py),
so nothing is said twice:

- one of a few ``choices``: a QComboBox whose items carry each choice's stored form as their data; kept when the
  user picks one (``activated``), so a list that follows a change made elsewhere writes nothing;
- a whole number (an ``IntSpec``, or an int default): a QSpinBox or a QSlider, kept on every change;
- a number (a ``FloatSpec``, or a float default): a QDoubleSpinBox, kept on every change;
- true or false: a QCheckBox (any checkable button), kept when toggled;
- text: a QLineEdit, kept when editing ends.

Every change reaches the store, which coalesces them and writes behind (gui/services/settings_store.py), so a
spin box held down costs no disk write per step. A value the widget holds that the declaration refuses (a NUL
typed into a line) is logged and not kept.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import Enum
from typing import Any, Generic, TypeVar

from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSlider,
    QComboBox,
    QDoubleSpinBox,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from gui.core.preferences import Preference
from gui.core.specs import BoolSpec, ChoiceSpec, FloatSpec, IntSpec
from gui.services.settings_store import SettingsStore

__all__ = ["Binding", "Kind", "bind", "kind_of", "restore"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Kind(Enum):
    """How a preference's value is shown: what its declaration says it is."""

    CHOICE = "choice"
    WHOLE = "whole number"
    NUMBER = "number"
    SWITCH = "switch"
    TEXT = "text"


# The widgets that can show each kind.
WIDGETS: dict[Kind, tuple[type[QWidget], ...]] = {
    Kind.CHOICE: (QComboBox,),
    Kind.WHOLE: (QSpinBox, QAbstractSlider),
    Kind.NUMBER: (QDoubleSpinBox,),
    Kind.SWITCH: (QAbstractButton,),
    Kind.TEXT: (QLineEdit,),
}


def kind_of(pref: Preference[Any]) -> Kind:
    """What ``pref`` is, from its declaration: its choices, its spec, or the type of its default."""
    spec = pref.spec
    if pref.choices or isinstance(spec, ChoiceSpec):
        return Kind.CHOICE
    if isinstance(spec, IntSpec):
        return Kind.WHOLE
    if isinstance(spec, FloatSpec):
        return Kind.NUMBER
    if isinstance(spec, BoolSpec) or isinstance(pref.default, bool):
        return Kind.SWITCH
    if isinstance(pref.default, int):
        return Kind.WHOLE
    if isinstance(pref.default, float):
        return Kind.NUMBER
    if isinstance(pref.default, str):
        return Kind.TEXT
    raise TypeError(f"{pref.key}: a {type(pref.default).__name__} is not shown by one widget; bind its view by hand")


@dataclass(frozen=True)
class Binding(Generic[T]):
    """``pref`` shown by ``widget``: ``restore()`` shows the stored value, ``save()`` keeps the widget's."""

    store: SettingsStore
    pref: Preference[T]
    widget: QWidget
    kind: Kind

    def restore(self) -> None:
        value: Any = self.store.read(self.pref)
        widget = self.widget
        if isinstance(widget, QComboBox):
            index = widget.findData(self.pref.dump(value))
            if index >= 0:
                widget.setCurrentIndex(index)
        elif isinstance(widget, QDoubleSpinBox):
            widget.setValue(float(value))
        elif isinstance(widget, QSpinBox | QAbstractSlider):
            widget.setValue(int(value))
        elif isinstance(widget, QAbstractButton):
            widget.setChecked(bool(value))
        elif isinstance(widget, QLineEdit):
            widget.setText(str(value))

    def shown(self) -> Any:
        """The value the widget shows now, in the preference's stored form."""
        widget = self.widget
        if isinstance(widget, QComboBox):
            return widget.currentData()
        if isinstance(widget, QDoubleSpinBox):
            return float(widget.value())
        if isinstance(widget, QSpinBox | QAbstractSlider):
            return int(widget.value())
        if isinstance(widget, QAbstractButton):
            return widget.isChecked()
        if isinstance(widget, QLineEdit):
            return widget.text()
        raise AssertionError("unreachable: bind() checked the widget")

    def save(self) -> None:
        """Keep what the widget shows, if the declaration takes it."""
        self.keep(self.shown())

    def keep(self, raw: Any) -> None:
        """Keep ``raw``, a value in the preference's stored form, if the declaration takes it."""
        try:
            value = self.pref.parse(raw)
        except (ValueError, TypeError) as exc:
            log.warning("settings: %s not kept: %s", self.pref.key, exc)
            return
        self.store.write(self.pref, value)


def _binding(store: SettingsStore, pref: Preference[T], widget: QWidget) -> Binding[T]:
    kind = kind_of(pref)
    if not isinstance(widget, WIDGETS[kind]):
        names = " or ".join(w.__name__ for w in WIDGETS[kind])
        raise TypeError(f"{pref.key} is a {kind.value}: shown by a {names}, not a {type(widget).__name__}")
    if isinstance(widget, QAbstractButton) and not widget.isCheckable():
        raise TypeError(f"{pref.key} is a switch: {type(widget).__name__} is not checkable")
    if isinstance(widget, QComboBox):
        # The list and the declaration name the same choices, so neither can drift from the other.
        offered = sorted(repr(widget.itemData(i)) for i in range(widget.count()))
        declared = sorted(repr(pref.dump(choice)) for choice in (pref.choices or getattr(pref.spec, "choices", ())))
        if offered != declared:
            raise ValueError(f"{pref.key}: the list offers {', '.join(offered)}; the declaration {', '.join(declared)}")
    return Binding(store, pref, widget, kind)


def restore(store: SettingsStore, pref: Preference[T], widget: QWidget) -> Binding[T]:
    """Show the stored value of ``pref`` in ``widget``; nothing the widget does is kept."""
    binding = _binding(store, pref, widget)
    binding.restore()
    return binding


def bind(store: SettingsStore, pref: Preference[T], widget: QWidget) -> Binding[T]:
    """Show the stored value of ``pref`` in ``widget``, then keep each change the user makes to it.

    The widget's own signals still reach whatever else they drive; showing the stored value emits them as any
    change does, before the binding listens, so restoring writes nothing."""
    binding = restore(store, pref, widget)
    if isinstance(widget, QComboBox):
        widget.activated.connect(lambda index: binding.keep(widget.itemData(index)))
    elif isinstance(widget, QDoubleSpinBox | QSpinBox | QAbstractSlider):
        widget.valueChanged.connect(lambda _value: binding.save())
    elif isinstance(widget, QAbstractButton):
        widget.toggled.connect(lambda _checked: binding.save())
    elif isinstance(widget, QLineEdit):
        widget.editingFinished.connect(lambda: binding.save())
    return binding
