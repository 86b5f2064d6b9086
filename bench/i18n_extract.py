"""Collect every translatable string of the window into the .ts files, keeping the translations already there.

    python bench/i18n_extract.py            # update the .ts files (new strings come in unfinished)
    python bench/i18n_extract.py --check    # exit 1 if a .ts misses a string, keeps a vanished one,
                                                # or has an unfinished translation

Two rules, both read as Python syntax trees (no import, no Qt):

- the window's code (gui/ui/**/*.py): calls of a module's ``tr = Tr("context")`` — ``tr("text")``,
  ``tr("text", "disambiguation")``, ``tr("%n model(s)", n=count)`` (a plural form: it has ``n``) and
  ``tr.mark("text")`` (a constant translated where it is used) — and ``core_text("context", "text")``;
- the Qt-free layers (gui/core, gui/services; gui/core/words.py): the template of every
  ``words("...", field=...)`` call (context "words"), and the text of every ``fixed("text", "context")`` and
  ``mark("text", "context")`` call in its context — a setting's label and help, the Doctor's titles and
  advice, the planner's verdicts, the Monitor's titles and alerts are declared with ``mark``. A sentence is a
  ``Words`` the type checker follows to the window (tools/mypy_words.py refuses one made plain text), so
  these calls are all the layers' translatable text.

tightfit_zh_CN.ts holds every string; tightfit_en.ts only the plural ones (English needs its forms:
"1 model", "2 models"). A call with an f-string or a variable in it is reported: a translatable text
is a template (``tr("Loaded {name}").format(name=...)``), so a translator sees it whole.
"""

from __future__ import annotations

import ast
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "resources" / "i18n"
LANGUAGES = {"zh_CN": False, "en": True}  # language -> only plural strings
WORDS_CONTEXT = "words"  # gui/core/words.py's (this script imports nothing of the project)
# The calls of gui/core/words.py whose text is collected: words(template, ...), fixed(text, context), mark(...).
CORE_CALLS = ("words", "fixed", "mark")

@dataclass(frozen=True)
class Message:
    context: str
    source: str
    comment: str = ""
    numerus: bool = False
    where: str = ""

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.context, self.source, self.comment)


class Problem(Exception):
    pass


def _text(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _where(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else str(path)


def _window_messages(path: Path) -> Iterator[Message]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    contexts: dict[str, str] = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == "Tr"
            and (context := _text(node.value.args[0] if node.value.args else None))
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    contexts[target.id] = context
    rel = _where(path)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        where = f"{rel}:{node.lineno}"
        func = node.func
        if isinstance(func, ast.Name) and func.id == "core_text" and len(node.args) == 2:
            context, source = _text(node.args[0]), _text(node.args[1])
            if context and source:
                yield Message(context, source, where=where)
            continue
        mark = isinstance(func, ast.Attribute) and func.attr == "mark" and isinstance(func.value, ast.Name)
        name = func.value.id if mark and isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if not isinstance(name, str) or name not in contexts or (not mark and not isinstance(func, ast.Name)):
            continue
        if not node.args:
            raise Problem(f"{where}: {name}() without a text")
        source = _text(node.args[0])
        if source is None:
            if isinstance(node.args[0], ast.JoinedStr):
                raise Problem(f"{where}: an f-string cannot be translated: make it a template and .format() it")
            continue  # a constant marked where it was made, translated here
        comment = _text(node.args[1]) if len(node.args) > 1 else None
        comment = comment or next((_text(k.value) for k in node.keywords if k.arg == "disambiguation"), None)
        numerus = len(node.args) > 2 or any(k.arg == "n" for k in node.keywords)
        if numerus and "%n" not in source:
            raise Problem(f"{where}: a plural form without %n: {source!r}")
        yield Message(contexts[name], source, comment or "", numerus, where)


def _core_messages(path: Path) -> Iterator[Message]:
    """The template of every ``words("...", ...)`` call (context "words"), and the text of every
    ``fixed("text", "context")`` and ``mark("text", "context")`` call, in its context (gui/core/words.py)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    rel = _where(path)
    for node in ast.walk(tree):
        name = getattr(node.func, "id", "") if isinstance(node, ast.Call) else ""
        if not isinstance(node, ast.Call) or name not in CORE_CALLS or not node.args:
            continue
        where = f"{rel}:{node.lineno}"
        if isinstance(node.args[0], ast.JoinedStr):
            raise Problem(f"{where}: an f-string cannot be translated: give {name}() a template and fields")
        text = _text(node.args[0])
        if name == "words":
            if text:
                yield Message(WORDS_CONTEXT, text, where=where)
            continue
        context = _text(node.args[1]) if len(node.args) > 1 else None
        if text and context is None:
            raise Problem(f"{where}: {name}() of a text needs its context as a literal")
        if text and context:
            yield Message(context, text, where=where)


def _words_messages(path: Path) -> Iterator[Message]:
    """The template of every ``words("...", ...)`` call alone."""
    return (m for m in _core_messages(path) if m.context == WORDS_CONTEXT)


def collect(root: Path = ROOT) -> dict[tuple[str, str, str], Message]:
    """Every translatable string of the window, by (context, source, disambiguation)."""
    found: dict[tuple[str, str, str], Message] = {}
    sources: list[Iterator[Message]] = [_window_messages(p) for p in sorted((root / "gui" / "ui").rglob("*.py"))]
    layers = [*(root / "gui" / "core").glob("*.py"), *(root / "gui" / "services").glob("*.py")]
    sources += [_core_messages(p) for p in sorted(layers)]
    for messages in sources:
        for message in messages:
            old = found.get(message.key)
            if old is not None and old.numerus != message.numerus:
                raise Problem(f"{message.where}: {message.source!r} is plural here and not at {old.where}")
            found.setdefault(message.key, message)
    return found


@dataclass
class Entry:
    message: Message
    translation: list[str]  # one form, or the plural forms
    finished: bool


def read_ts(path: Path) -> dict[tuple[str, str, str], Entry]:
    entries: dict[tuple[str, str, str], Entry] = {}
    if not path.is_file():
        return entries
    for context in ET.parse(path).getroot().iter("context"):
        name = context.findtext("name") or ""
        for element in context.iter("message"):
            source = element.findtext("source") or ""
            comment = element.findtext("comment") or ""
            numerus = element.get("numerus") == "yes"
            translation = element.find("translation")
            kind = translation.get("type", "") if translation is not None else "unfinished"
            if translation is None:
                forms: list[str] = []
            elif numerus:
                forms = [f.text or "" for f in translation.iter("numerusform")]
            else:
                forms = [translation.text or ""]
            message = Message(name, source, comment, numerus)
            entries[message.key] = Entry(message, forms, kind == "" and any(forms))
    return entries


def write_ts(language: str, entries: list[Entry]) -> str:
    lines = ['<?xml version="1.0" encoding="utf-8"?>', "<!DOCTYPE TS>"]
    lines.append(f'<TS version="2.1" language="{language}" sourcelanguage="en">')
    by_context: dict[str, list[Entry]] = {}
    for entry in sorted(entries, key=lambda e: (e.message.context, e.message.source, e.message.comment)):
        by_context.setdefault(entry.message.context, []).append(entry)
    for context, items in by_context.items():
        lines += ["<context>", f"    <name>{escape(context)}</name>"]
        for entry in items:
            m = entry.message
            lines.append('    <message numerus="yes">' if m.numerus else "    <message>")
            lines.append(f"        <source>{_escape(m.source)}</source>")
            if m.comment:
                lines.append(f"        <comment>{_escape(m.comment)}</comment>")
            kind = "" if entry.finished else ' type="unfinished"'
            if m.numerus:
                lines.append(f"        <translation{kind}>")
                for form in entry.translation or [""]:
                    lines.append(f"            <numerusform>{_escape(form)}</numerusform>")
                lines.append("        </translation>")
            else:
                text = entry.translation[0] if entry.translation else ""
                lines.append(f"        <translation{kind}>{_escape(text)}</translation>")
            lines.append("    </message>")
        lines.append("</context>")
    lines.append("</TS>")
    return "\n".join(lines) + "\n"


def _escape(text: str) -> str:
    return escape(text, {'"': "&quot;", "'": "&apos;"})


def merged(language: str, found: dict[tuple[str, str, str], Message], path: Path) -> tuple[str, list[str]]:
    """The .ts text for the strings found (translations kept), and what changed, in words."""
    old = read_ts(path)
    plural_only = LANGUAGES[language]
    wanted = {k: m for k, m in found.items() if m.numerus or not plural_only}
    changes = [f"new: [{m.context}] {m.source!r} ({m.where})" for k, m in wanted.items() if k not in old]
    changes += [f"vanished: [{k[0]}] {k[1]!r}" for k in old if k not in wanted]
    # A string moved to another context (its code moved to another module) keeps its translation: the finished
    # one of a vanished entry with the same source, comment and plural kind.
    moved = {(k[1], k[2], e.message.numerus): e for k, e in old.items() if k not in wanted and e.finished}
    entries = []
    for key, message in wanted.items():
        entry = old.get(key) or moved.get((message.source, message.comment, message.numerus))
        if entry is None or entry.message.numerus != message.numerus:
            entries.append(Entry(message, [], False))
        else:
            entries.append(Entry(message, entry.translation, entry.finished))
    return write_ts(language, entries), changes


def problems(root: Path = ROOT) -> list[str]:
    """What --check reports: strings missing from a .ts or vanished from the code, unfinished translations."""
    found = collect(root)
    out: list[str] = []
    for language in LANGUAGES:
        path = HERE / f"tightfit_{language}.ts"
        _, changes = merged(language, found, path)
        out += [f"{path.name}: {c}" for c in changes]
        out += [
            f"{path.name}: unfinished: [{e.message.context}] {e.message.source!r}"
            for e in read_ts(path).values()
            if not e.finished
        ]
    return out


def apply(language: str, table: Path) -> int:
    """Take translations from a tab-separated file (context, source, translation; plural forms joined by
    " || "), for strings the .ts already has; returns how many were taken."""
    path = HERE / f"tightfit_{language}.ts"
    entries = read_ts(path)
    taken = 0
    for line in table.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        context, source, translation = line.split("\t")
        source = source.replace("\\n", "\n")
        translation = translation.replace("\\n", "\n")
        key = next((k for k in entries if k[0] == context and k[1] == source), None)
        if key is None:
            print(f"not in {path.name}: [{context}] {source!r}", file=sys.stderr)
            continue
        entries[key].translation = translation.split(" || ")
        entries[key].finished = True
        taken += 1
    path.write_text(write_ts(language, list(entries.values())), encoding="utf-8")
    return taken


def main(argv: list[str]) -> int:
    try:
        if argv[:1] == ["--apply"]:
            print(f"{apply(argv[1], Path(argv[2]))} translations taken")
            return 0
        if "--check" in argv:
            found = problems()
            print("\n".join(found) or "every string is in the .ts files, translated")
            return 1 if found else 0
        strings = collect()
        for language in LANGUAGES:
            path = HERE / f"tightfit_{language}.ts"
            text, changes = merged(language, strings, path)
            path.write_text(text, encoding="utf-8")
            print(f"{path.name}: {len(changes)} changes", *changes, sep="\n  ")
    except (Problem, SyntaxError, ET.ParseError) as exc:
        print(f"extract: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
