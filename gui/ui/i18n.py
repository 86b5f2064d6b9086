"""The window's language: English or Simplified Chinese, following the system locale unless one is chosen.

Every string the window shows goes through Qt's translator: widget code wraps its own text with a
module's ``Tr`` (``tr = Tr("chat")``, then ``tr("Send")`` or ``tr("%n model(s)", n=count)``); text that
comes from the Qt-free layers (setting labels, planner verdicts, Doctor checks) is translated where it
is shown, with ``core_text(context, text)`` and a fixed context per source. bench/i18n_extract.py
collects both into the .ts files; the compiled .qm is built into the package when it is built, or on
first use from the .ts into the user's cache folder (a checkout, or a build without Qt's tools).

The choice is a preference (gui/core/preferences.py LANGUAGE) and takes effect at the next start: the
widgets are built in the language installed before them.
"""

from __future__ import annotations

import hashlib
import logging
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import platformdirs
from PySide6.QtCore import QCoreApplication, QLibraryInfo, QLocale, QTranslator
from PySide6.QtWidgets import QComboBox, QMainWindow, QWidget

from gui.core.preferences import LANGUAGE
from gui.core.words import JOINED_CONTEXT, WORDS_CONTEXT, Text, Words, message_of
from gui.services.desktop import resources_dir
from gui.services.settings_store import SettingsStore
from gui.ui.preference_binding import bind

log = logging.getLogger(__name__)

# Each language in its own words, as language lists show them; "system" is translated.
LANGUAGE_NAMES = {"en": "English", "zh_CN": "简体中文"}
COMPILE_TIMEOUT_S = 60
MAX_TS_BYTES = 8 << 20  # a translation source past this is not ours: not compiled


class Tr:
    """Translation in one fixed context (the module's): ``tr = Tr("chat")``, ``tr("Send")``.

    ``n`` picks a plural form and replaces ``%n`` ("%n model(s)" -> "1 model", "2 models")."""

    __slots__ = ("context",)

    def __init__(self, context: str) -> None:
        self.context = context

    def __call__(self, text: str, disambiguation: str | None = None, n: int = -1) -> str:
        return QCoreApplication.translate(self.context, text, disambiguation, n)

    @staticmethod
    def mark(text: str) -> str:
        """``text`` as it is, marked for the .ts: for a constant translated where it is used (``tr(NAME)``),
        since a module's constants are made before the translator is installed."""
        return text


def core_text(context: str, text: Text) -> str:
    """A string from gui/core or gui/services, translated where the window shows it (bench/i18n_extract.py
    collects these sources: a new core string is in the .ts without anyone listing it). A sentence composed
    from figures (gui/core/words.py ``Words``) is translated by its template, in its own context, with its
    fields translated the same way (a plain field in ``context``: a figure has no translation and stays)."""
    return _shown(text, context)


def sentence_text(text: Text) -> str:
    """A text of the Qt-free layers whose plain strings have no translation (a figure, a path, what another
    program said): a sentence (``Words``) in the window's language, plain text as it is."""
    return _shown(text, None)


def _shown(text: Text, context: str | None) -> str:
    if isinstance(text, Words):
        fields = {name: _shown(value, context) for name, value in text.fields.items()}
        if text.context == JOINED_CONTEXT:
            return QCoreApplication.translate(WORDS_CONTEXT, text.template).join(fields.values())
        translated = QCoreApplication.translate(text.context, text.template)
        if not text.fields and translated == text.template:  # untranslated (English): as the sentence writes it
            return text.english  # a label named in lower case ("threads" for "Threads") stays so
        try:
            return translated.format(**fields)
        except (KeyError, IndexError, ValueError):  # a translation that names other fields: the English
            log.warning("the translation of %r does not fit its fields", text.template)
            return text.english
    return QCoreApplication.translate(context, text) if text and context is not None else text


def error_text(exc: BaseException, context: str = "errors") -> str:
    """An error's message in the window's language: a ``Words`` it was raised with is translated (``str(exc)``
    would give its English), any other message as the code wrote it."""
    return core_text(context, message_of(exc))


tr = Tr("language")


def i18n_dir() -> Path:
    return resources_dir() / "i18n"


def source_path(language: str) -> Path:
    return i18n_dir() / f"tightfit_{language}.ts"


def resolve(choice: str, system: QLocale | None = None) -> str:
    """The language to show for a choice: "system" follows the locale (any Chinese one gets Simplified
    Chinese, the only Chinese there is); anything else is English."""
    if choice in LANGUAGE_NAMES:
        return choice
    locale = system or QLocale.system()
    return "zh_CN" if locale.language() == QLocale.Language.Chinese else "en"


def lrelease() -> list[str] | None:
    """The installed PySide6's own lrelease, or one on the PATH; None without either."""
    try:
        import PySide6
    except ImportError:  # pragma: no cover - the window always has it
        return None
    tool = Path(PySide6.__file__).parent / "lrelease"
    if tool.is_file():
        return [str(tool)]
    found = shutil.which("pyside6-lrelease") or shutil.which("lrelease")
    return [found] if found else None


def compile_ts(source: Path, target: Path) -> bool:
    """Compile one .ts into a .qm with Qt's own tool; False (and a log line) when it cannot."""
    command = lrelease()
    if command is None:
        log.warning("no lrelease to compile %s: the window stays in English", source.name)
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part.qm")
    try:
        done = subprocess.run(
            [*command, "-silent", str(source), "-qm", str(partial)],
            capture_output=True,
            text=True,
            timeout=COMPILE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("could not compile %s: %s", source.name, exc)
        return False
    if done.returncode != 0 or not partial.is_file():
        log.warning("could not compile %s: %s", source.name, (done.stderr or done.stdout).strip()[:300])
        partial.unlink(missing_ok=True)
        return False
    partial.replace(target)
    return True


def compiled(language: str, cache: Path | None = None) -> Path | None:
    """The .qm for a language: the one built into the package, or one compiled from the .ts into the cache
    (named by the .ts's content, so an edited .ts is compiled again); None if neither can be had."""
    source = source_path(language)
    packaged = source.with_suffix(".qm")
    if packaged.is_file():  # built with the package (a checkout has none: it compiles into the cache)
        return packaged
    try:
        if not source.is_file() or source.stat().st_size > MAX_TS_BYTES:
            return None
        digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    except OSError as exc:
        log.warning("cannot read %s: %s", source, exc)
        return None
    folder = cache or Path(platformdirs.user_cache_dir("tightfit")) / "i18n"
    target = folder / f"tightfit_{language}-{digest}.qm"
    if target.is_file() or compile_ts(source, target):
        return target
    return None


_installed: list[QTranslator] = []


def install_language(choice: str, cache: Path | None = None) -> str:
    """Install the translators for a language choice on the running application (before any widget is
    built); returns the language now in use. English needs its own file too: it holds the plural forms."""
    app = QCoreApplication.instance()
    if app is None:
        raise RuntimeError("the language needs a QApplication")
    for old in _installed:
        app.removeTranslator(old)
    _installed.clear()
    language = resolve(choice)
    locale = QLocale(language)
    QLocale.setDefault(locale)  # numbers the window formats with QLocale follow the language
    if language != "en":
        # Qt's own words (dialog buttons, the file dialog, context menus) in the same language; installed
        # first, so it is asked only for what ours does not translate.
        qt = QtWords(app)
        if qt.load(locale, "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
            app.installTranslator(qt)
            _installed.append(qt)
    ours = compiled(language, cache)
    translator = QTranslator(app)
    if ours is not None and translator.load(str(ours)):
        app.installTranslator(translator)
        _installed.append(translator)
    elif language != "en":
        log.warning("no translation for %s could be loaded: the window stays in English", language)
        for qt_words in _installed:
            app.removeTranslator(qt_words)
        _installed.clear()
        language = "en"
    return language


# Qt's texts that moved to another class after the catalogue was translated: looked up where they were.
_MOVED_CONTEXTS = {"QAbstractFileIconProvider": "QFileDialog"}  # a file's type column: "Folder", "%1 File"
# Not the empty text but no text: Qt then asks the next translator, or shows the source.
_NOT_FOUND: Any = None


class QtWords(QTranslator):
    """Qt's catalogue for a language, also for Qt's texts that gained a mnemonic after it was translated.

    Qt's file dialog says "&Look in:" and "Files of &type:", while the catalogue Qt ships for Chinese has
    only "Look in:" and "Files of type:"; without this the dialog stays half English. Such a text is
    looked up without its "&" and given the mnemonic the way the catalogue writes one: "查找范围(&L)：".
    Likewise a text Qt moved to another class ("Folder" in the type column) is looked up where it was."""

    def translate(self, context: str, source: str, disambiguation: str | None = None, n: int = -1) -> str:  # Qt's name
        found = super().translate(context, source, disambiguation, n)
        if not found and context in _MOVED_CONTEXTS:
            found = super().translate(_MOVED_CONTEXTS[context], source, disambiguation, n)
        if found or "&" not in source or not context.startswith("Q"):
            return found or _NOT_FOUND
        key = re.search(r"&([^&\s])", source)
        if key is None:
            return _NOT_FOUND
        bare = super().translate(context, source.replace("&&", "\0").replace("&", "").replace("\0", "&&"),
                                 disambiguation, n)  # fmt: skip
        if not bare:
            return _NOT_FOUND
        mnemonic = f"(&{key.group(1).upper()})"
        for colon in ("：", ":"):
            if bare.endswith(colon):
                return bare[: -len(colon)] + mnemonic + colon
        return bare + mnemonic


def number(value: float, decimals: int = 0) -> str:
    """A number as the window's language writes it (thousands grouped)."""
    if decimals == 0:
        return QLocale().toString(round(value))
    return QLocale().toString(float(value), "f", decimals)


class LanguageBox(QComboBox):
    """System / English / 简体中文, kept as a preference; the window is built in it at the next start."""

    def __init__(self, store: SettingsStore | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.addItem(tr("System language"), "system")
        for code, name in LANGUAGE_NAMES.items():
            self.addItem(name, code)
        self.setAccessibleName(tr("Language"))
        self.setToolTip(tr("The window's language; a change takes effect when Tightfit is next started"))
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        if store is not None:
            bind(store, LANGUAGE, self)  # the stored choice shown, each one the user picks kept
        self.activated.connect(self._chosen)

    def _chosen(self, index: int) -> None:
        choice = str(self.itemData(index))
        window = self.window()
        if isinstance(window, QMainWindow):
            # Said in the language chosen, since that is the one the reader expects next.
            words = {
                "zh_CN": "界面语言将在下次启动 Tightfit 时切换为简体中文。",
                "en": "The window will be in English the next time Tightfit starts.",
            }
            window.statusBar().showMessage(words.get(resolve(choice)) or "", 15000)


def install_language_control(window: QMainWindow, store: SettingsStore) -> LanguageBox:
    """The language choice, shown at the right of the window's status bar."""
    box = LanguageBox(store, window)
    window.statusBar().addPermanentWidget(box)
    return box
