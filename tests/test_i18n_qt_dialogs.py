"""Qt's own dialogs in a Chinese window: the file dialog Qt draws itself (no desktop's dialog on the
machine) speaks Chinese too, including the texts Qt gave a mnemonic after its Chinese catalogue was made."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QFileDialog, QLabel

from tests.i18n_kit import chinese, english, untranslated

__all__ = ["chinese", "english"]  # fixtures, used by name


def qt_file_dialog(qtbot) -> QFileDialog:
    dialog = QFileDialog(None, "", "", "CSV (*.csv)")
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog)
    dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
    qtbot.addWidget(dialog)
    dialog.show()
    return dialog


def label(dialog: QFileDialog, name: str) -> str:
    found = dialog.findChild(QLabel, name)
    assert found is not None, name
    return found.text()


def test_the_file_dialog_speaks_chinese(qtbot, chinese: None) -> None:
    dialog = qt_file_dialog(qtbot)
    assert label(dialog, "lookInLabel") == "查找范围(&L)："  # "&Look in:", missing from Qt's Chinese catalogue
    assert label(dialog, "fileTypeLabel") == "文件类型(&T)："  # "Files of &type:", likewise
    assert label(dialog, "fileNameLabel") == "文件名称(&N)："  # one the catalogue has, as it has it
    # The type column: Qt moved these words to another class after the catalogue was made.
    assert QCoreApplication.translate("QAbstractFileIconProvider", "Folder", "All other platforms") == "文件夹"
    assert (
        QCoreApplication.translate("QAbstractFileIconProvider", "%1 File", "%1 is a file name suffix, for example txt")
        == "%1 文件"
    )
    left = [line for line in untranslated(dialog) if "*.csv" not in line]  # the filter is the caller's
    assert left == []
    # Qt's texts the catalogue does not know at all stay as they are.
    assert QCoreApplication.translate("QFileDialog", "&No such text here:") == "&No such text here:"
    dialog.close()


def test_the_file_dialog_stays_english_in_an_english_window(qtbot, english: None) -> None:
    dialog = qt_file_dialog(qtbot)
    assert label(dialog, "lookInLabel") == "&Look in:"
    assert label(dialog, "fileTypeLabel") == "Files of &type:"
    dialog.close()
