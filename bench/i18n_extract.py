"""Collect every translatable string of the window into the .ts files, keeping the translations already there.

    python bench/i18n_extract.py            # update the .ts files (new strings come in unfinished)
    python bench/i18n_extract.py --check    # exit 1 if a .ts misses a string, keeps a vanished one,
                                                # or has an unfinished translation

Two kinds of sources, both read as Python syntax trees (no import, no Qt):

- the window's code (gui/ui/**/*.py): calls of a module's ``tr = Tr("context")`` — ``tr("text")``,
  ``tr("text", "disambiguation")``, ``tr("%n model(s)", n=count)`` (a plural form: it has ``n``) and
  ``tr.mark("text")`` (a constant translated where it is used) — and ``core_text("context", "text")``;
- strings of the Qt-free layers shown in the window and translated there with ``core_text(context, …)``:
  the ``label=`` and ``help=`` of every setting declaration, the fixed words listed in CORE below, and the
  template of every ``words("...", field=...)`` call in gui/core and gui/services (gui/core/words.py).

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

# Setting declarations (gui/core/specs.py kinds): their label and help, context "params".
SPEC_SOURCES = (
    "gui/core/params.py",
    "gui/core/preferences.py",
    "gui/core/protocol.py",
    "gui/core/bench.py",
    "gui/core/cards.py",
)
SPEC_KEYWORDS = ("label", "help")
# Fixed words of the Qt-free layers, shown by the window: (context, file, the assignment or class whose string
# values are collected).
CORE: tuple[tuple[str, str, str], ...] = (
    ("planner", "gui/core/planner.py", "Verdict"),
    ("planner", "gui/core/planner.py", "Verdict.answer"),
    ("power_sweep", "gui/core/power_sweep.py", "table_header"),
)
# Words a whole Qt-free module writes into named variables and calls, shown by the window: (context, file,
# the variable names whose string values are collected, wherever assigned — a tuple's too, the items of a
# tuple assigned to one, and a dict's values —, and the calls whose argument is collected: "name" the first,
# "name:3" the fourth). An f-string is not collected: it stays English.
CORE_NAMED: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("doctor", "gui/core/doctor.py", ("title", "why", "words", "legacy_words", "STATUS_WORDS"), ("Fix", "_check:3")),
    ("power_sweep", "gui/core/power_sweep.py", ("SIMULATED_NOTE",), ()),
    ("journey", "gui/core/journey.py", ("STAGE_COLUMNS",), ()),
    # The declared GPU readings' titles (the monitor's readout) and chart words (gui/core/telemetry_fields.py).
    ("monitor", "gui/core/telemetry_fields.py", (), ("monitor_text",)),
    ("charts", "gui/core/telemetry_fields.py", (), ("chart_text",)),
    # Why the Monitor has no GPU reading: NVML's errors in words, and the telemetry's own two statuses.
    ("nvml", "gui/services/nvml.py", ("said",), ()),
    ("nvml", "gui/services/telemetry.py", ("STATUS_READ_FAILED", "STATUS_NO_GPU"), ()),
    # The Monitor's alerts, one template each (their figures and reason words are filled in by the window).
    (
        "alerts",
        "gui/core/alerts.py",
        (
            "LOST",
            "LOST_NAMED",
            "HOT",
            "THROTTLING",
            "ECC_UNCORRECTED_ONE",
            "ECC_UNCORRECTED",
            "ECC_CORRECTED_ONE",
            "ECC_CORRECTED",
        ),
        (),
    ),
)


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


def _spec_messages(path: Path) -> Iterator[Message]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    rel = _where(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "").endswith("Spec"):
            for keyword in node.keywords:
                if keyword.arg in SPEC_KEYWORDS and (text := _text(keyword.value)):
                    yield Message("params", text, where=f"{rel}:{node.lineno}")


def _core_messages(context: str, path: Path, owner: str) -> Iterator[Message]:
    """String constants inside a class (its members) or a function or property (the values of its dicts, the
    items of its lists)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    rel = _where(path)
    parts = owner.split(".")
    scope: ast.AST = tree
    for part in parts:
        found = next(
            (
                n
                for n in ast.iter_child_nodes(scope)
                if isinstance(n, ast.ClassDef | ast.FunctionDef) and n.name == part
            ),
            None,
        )
        if found is None:
            raise Problem(f"{rel}: no {owner}")
        scope = found
    if isinstance(scope, ast.ClassDef):
        for node in scope.body:
            if isinstance(node, ast.Assign) and (text := _text(node.value)):
                yield Message(context, text, where=f"{rel}:{node.lineno}")
    else:
        for node in ast.walk(scope):
            if isinstance(node, ast.Dict | ast.List):
                for value in node.values if isinstance(node, ast.Dict) else node.elts:
                    if text := _text(value):
                        yield Message(context, text, where=f"{rel}:{value.lineno}")


def _named_messages(context: str, path: Path, names: tuple[str, ...], calls: tuple[str, ...]) -> Iterator[Message]:
    """The string constants a module assigns to these names, and passes to these calls."""
    positions = {name: int(index or 0) for name, _, index in (call.partition(":") for call in calls)}
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    rel = _where(path)
    values: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id in names and node.value is not None:
                    value = node.value
                    if isinstance(value, ast.Dict):
                        values += value.values  # type: ignore[arg-type]
                    else:
                        values += value.elts if isinstance(value, ast.Tuple) else [value]
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    values += [
                        v
                        for t, v in zip(target.elts, node.value.elts, strict=False)
                        if isinstance(t, ast.Name) and t.id in names
                    ]
        elif isinstance(node, ast.Call) and (index := positions.get(getattr(node.func, "id", ""))) is not None:
            values += node.args[index : index + 1]
    for value in values:
        if text := _text(value):
            yield Message(context, text, where=f"{rel}:{value.lineno}")


def _words_messages(path: Path) -> Iterator[Message]:
    """The template of every ``words("...", ...)`` call (gui/core/words.py), in its one context."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    rel = _where(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "words" and node.args:
            where = f"{rel}:{node.lineno}"
            if isinstance(node.args[0], ast.JoinedStr):
                raise Problem(f"{where}: an f-string cannot be translated: give words() a template and fields")
            if text := _text(node.args[0]):
                yield Message(WORDS_CONTEXT, text, where=where)


def collect(root: Path = ROOT) -> dict[tuple[str, str, str], Message]:
    """Every translatable string of the window, by (context, source, disambiguation)."""
    found: dict[tuple[str, str, str], Message] = {}
    sources: list[Iterator[Message]] = [_window_messages(p) for p in sorted((root / "gui" / "ui").rglob("*.py"))]
    sources += [_spec_messages(root / name) for name in SPEC_SOURCES]
    sources += [_core_messages(context, root / name, owner) for context, name, owner in CORE]
    sources += [_named_messages(context, root / name, names, calls) for context, name, names, calls in CORE_NAMED]
    layers = [*(root / "gui" / "core").glob("*.py"), *(root / "gui" / "services").glob("*.py")]
    sources += [_words_messages(p) for p in sorted(layers)]
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
