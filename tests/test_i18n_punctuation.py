"""Chinese sentences take Chinese punctuation: no ASCII comma, semicolon, colon or opening bracket right
beside a Chinese character in a translation. What stays ASCII is what a program reads: a mnemonic as Qt
writes it ("(&C)"), a file dialog's filter ("(*.csv)"), the host:port a user types."""

from __future__ import annotations

import re

from gui.ui.i18n import source_path
from tests.i18n_kit import extract

CJK = r"[\u3400-\u9fff\u3000-\u303f\uff00-\uffef]"
ASCII_BESIDE_CJK = re.compile(rf"{CJK} ?\(|{CJK}[,;:]|[,;:(]{CJK}")  # "功耗上限 (W)" too: "功耗上限（W）"
# Read by programs, not people: kept as they are before looking.
MACHINE_TEXT = re.compile(r"\(&[A-Z]\)| ?\(\*[^)]*\)|;;|主机:端口")


def ascii_punctuation_in_chinese(text: str) -> list[str]:
    """Each ASCII mark beside a Chinese character, with the characters around it."""
    plain = MACHINE_TEXT.sub(" ", text)
    return [plain[max(0, m.start() - 4) : m.end() + 4] for m in ASCII_BESIDE_CJK.finditer(plain)]


def test_the_check_sees_what_it_is_for() -> None:
    assert ascii_punctuation_in_chinese("已加载,共 3 层") == ["已加载,共 3 "]
    assert ascii_punctuation_in_chinese("说明:全部") and ascii_punctuation_in_chinese("功耗上限 (W)")
    # Mnemonics, filters, host:port, and marks beside figures or placeholders are not Chinese text.
    assert ascii_punctuation_in_chinese("校验(&I)") == []
    assert ascii_punctuation_in_chinese("CSV 文件 (*.csv);;所有文件 (*)") == []
    assert ascii_punctuation_in_chinese("写成 主机:端口，例如 10.0.0.5:50052") == []
    assert ascii_punctuation_in_chinese("{setting}: {value}, 1:2") == []


def test_chinese_translations_use_chinese_punctuation() -> None:
    entries = extract.read_ts(source_path("zh_CN"))
    assert entries
    found = [
        f"[{entry.message.context}] {entry.message.source!r}: {marks}"
        for entry in entries.values()
        for form in entry.translation
        if (marks := ascii_punctuation_in_chinese(form))
    ]
    assert found == []
