"""The light/dark theme in the running window: which of gui.core.theme's palettes is in use, and telling the
widgets that draw with it when that changes.

"System" follows the desktop: Qt's colour scheme (QStyleHints.colorScheme, and colorSchemeChanged when the
user flips it) and the desktop's own Qt palette. "Light" and "Dark" are set explicitly: the application
gets the palette's colours on the Fusion style, which draws every widget from the palette (a native style
may not). Widgets that draw with a role of their own (charts, the VRAM bar, coloured labels, highlighted
code) take it from `current_palette()` and follow changes with `follow_theme` / `themed_style`.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QObject, Qt, Signal
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QComboBox, QMainWindow, QWidget
from shiboken6 import Shiboken

from gui.core.preferences import THEME
from gui.core.theme import DARK, LIGHT, Palette, ThemeChoice
from gui.services.settings_store import SettingsStore
from gui.ui.i18n import Tr
from gui.ui.preference_binding import bind

__all__ = [
    "Theme",
    "ThemeBox",
    "current_palette",
    "follow_theme",
    "install_theme_control",
    "qt_palette",
    "theme",
    "themed_style",
]

tr = Tr("theme")
CHOICE_LABELS = {
    ThemeChoice.SYSTEM: tr.mark("System"),
    ThemeChoice.LIGHT: tr.mark("Light"),
    ThemeChoice.DARK: tr.mark("Dark"),
}
_EXPLICIT_STYLE = "Fusion"


def qt_palette(palette: Palette) -> QPalette:
    """The application palette for an explicit choice."""
    qt = QPalette()
    role = QPalette.ColorRole
    colours = {
        role.Window: palette.window,
        role.WindowText: palette.text,
        role.Base: palette.base,
        role.AlternateBase: palette.alternate_base,
        role.ToolTipBase: palette.tooltip_base,
        role.ToolTipText: palette.text,
        role.PlaceholderText: palette.muted,
        role.Text: palette.text,
        role.Button: palette.button,
        role.ButtonText: palette.text,
        role.BrightText: palette.error,
        role.Link: palette.link,
        role.LinkVisited: palette.link,
        role.Highlight: palette.highlight,
        role.HighlightedText: palette.highlighted_text,
    }
    for name, hex_colour in colours.items():
        qt.setColor(name, QColor(hex_colour))
    # Fusion's bevels and frames are shades of the button colour.
    button = QColor(palette.button)
    shades = {role.Light: button.lighter(150), role.Midlight: button.lighter(125), role.Mid: button.darker(130),
              role.Dark: button.darker(160), role.Shadow: QColor(0, 0, 0)}  # fmt: skip
    for name, colour in shades.items():
        qt.setColor(name, colour)
    disabled = QColor(palette.disabled_text)
    for name in (role.WindowText, role.Text, role.ButtonText):
        qt.setColor(QPalette.ColorGroup.Disabled, name, disabled)
    return qt


class Theme(QObject):
    """The application's theme; one per QApplication (see `theme()`)."""

    changed = Signal(object)  # the Palette now in use, after every change

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        self._choice = ThemeChoice.SYSTEM
        self._native_style = app.style().name()
        hints = QGuiApplication.styleHints()
        self._system_scheme = hints.colorScheme()
        hints.colorSchemeChanged.connect(self._system_changed)
        self._palette = self._system_palette()

    @property
    def choice(self) -> ThemeChoice:
        return self._choice

    @property
    def palette(self) -> Palette:
        return self._palette

    def set_choice(self, choice: ThemeChoice) -> None:
        if choice == self._choice:
            return
        self._choice = choice
        self._apply()

    def _system_changed(self, scheme: Qt.ColorScheme) -> None:
        self._system_scheme = scheme
        if self._choice is ThemeChoice.SYSTEM:
            self._apply()

    def _system_palette(self) -> Palette:
        """Which palette the desktop asks for: its colour scheme, or where it says nothing, its window colour."""
        if self._system_scheme == Qt.ColorScheme.Dark:
            return DARK
        if self._system_scheme == Qt.ColorScheme.Light:
            return LIGHT
        return DARK if self._native_is_dark() else LIGHT

    def _native_is_dark(self) -> bool:
        return self._app.palette().color(QPalette.ColorRole.Window).lightness() < 128

    def _apply(self) -> None:
        before = self._palette
        if self._choice is ThemeChoice.SYSTEM:
            # Back to the desktop's own style and palette (an empty palette resolves nothing of its own).
            if self._app.style().name() != self._native_style:
                self._app.setStyle(self._native_style)
            self._app.setPalette(QPalette())
            self._palette = self._system_palette()
            if self._native_is_dark() != self._palette.dark:
                # The scheme says dark (or light) but the desktop's Qt palette did not follow: ours does.
                self._set_explicit(self._palette)
        else:
            self._palette = DARK if self._choice is ThemeChoice.DARK else LIGHT
            self._set_explicit(self._palette)
        if self._palette is not before:
            self.changed.emit(self._palette)

    def _set_explicit(self, palette: Palette) -> None:
        if self._app.style().name().lower() != _EXPLICIT_STYLE.lower():
            self._app.setStyle(_EXPLICIT_STYLE)
        self._app.setPalette(qt_palette(palette))


_theme: Theme | None = None


def theme() -> Theme:
    """The running application's theme (made on first use)."""
    global _theme
    app = QCoreApplication.instance()
    if not isinstance(app, QApplication):
        raise RuntimeError("the theme needs a QApplication")
    if _theme is None or not Shiboken.isValid(_theme) or _theme.parent() is not app:
        _theme = Theme(app)
    return _theme


def current_palette() -> Palette:
    """The palette in use; the light one when there is no application (a widget module imported alone)."""
    return theme().palette if isinstance(QCoreApplication.instance(), QApplication) else LIGHT


class _Follower(QObject):
    """Calls `apply` on every theme change for as long as its owner lives (it is the owner's child, so the
    connection goes with it)."""

    def __init__(self, owner: QObject, apply: Callable[[Palette], None]) -> None:
        super().__init__(owner)
        self._apply_palette = apply
        theme().changed.connect(self._changed)

    def _changed(self, palette: Palette) -> None:
        self._apply_palette(palette)


def follow_theme(owner: QObject, apply: Callable[[Palette], None], *, now: bool = True) -> None:
    """Call `apply` with the palette now (unless `now` is False), and again whenever it changes while
    `owner` lives."""
    if now:
        apply(current_palette())
    _Follower(owner, apply)


def themed_style(widget: QWidget, style: Callable[[Palette], str]) -> None:
    """`widget`'s style sheet, written from the palette now and again on every theme change."""
    follow_theme(widget, lambda palette: widget.setStyleSheet(style(palette)))


class ThemeBox(QComboBox):
    """System / Light / Dark; a choice is applied at once and kept as a preference."""

    def __init__(self, store: SettingsStore | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        for choice, label in CHOICE_LABELS.items():
            self.addItem(tr(label), choice.value)
        self.setAccessibleName(tr("Theme"))
        self.setToolTip(tr("Light or dark window: System follows the desktop's setting"))
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._show(theme().choice)
        if store is not None:
            bind(store, THEME, self)  # the stored choice shown, each one the user picks kept
        self.activated.connect(self._chosen)
        theme().changed.connect(self._theme_changed)

    def _show(self, choice: ThemeChoice) -> None:
        self.setCurrentIndex(self.findData(choice.value))

    def _chosen(self, index: int) -> None:
        theme().set_choice(ThemeChoice(self.itemData(index)))

    def _theme_changed(self, _palette: Palette) -> None:
        self._show(theme().choice)


def install_theme_control(window: QMainWindow, store: SettingsStore) -> ThemeBox:
    """The window's theme choice, restored from `store` (applied, then shown) at the right of its status bar."""
    theme().set_choice(store.read(THEME))
    box = ThemeBox(store, window)
    window.statusBar().addPermanentWidget(box)
    return box
