"""Sentences the Qt-free layers compose from figures, kept translatable.

``words("Put {n} of {total} layers on the GPU", n=30, total=63)`` is a ``Words``: its template, its fields
and its English (``.english``; ``str()`` of it is the English too, for a log line or the CLI). It is not a
``str``, so the type checker tells a sentence from plain text: a parameter that may receive one says
``Text`` (``str | Words``), and the window shows it in its language with ``core_text`` (gui/ui/i18n.py): the
template is translated in the one context ``WORDS_CONTEXT``, and fields that are themselves ``Words`` are
translated the same way before they are put in. Where plain text is meant (a file, a log, JSON, the CLI) the
code renders the English explicitly: ``english(text)``. bench/i18n_extract.py collects the template of every
``words(...)`` and ``fixed(...)`` call and every ``mark(...)``-ed text in gui/core and gui/services, so a new
sentence is in the .ts without anyone listing it; a template must be a literal (an f-string cannot be
translated whole).

Formatting a ``Words`` into an f-string, ``str.format``, ``%`` or ``str()`` would make it plain English text:
the project's mypy plugin (tools/mypy_words.py) reports each of these; compose with ``words``. An error raised
with one (``raise ValueError(words(...))``) keeps it as its argument; the window shows it with
``error_text(exc)`` (``str(exc)`` is the English).

A ``Words`` compares equal to its English (and hashes as it), and answers the read-only questions asked of a
text (``in``, ``startswith``, ``len``...) about its English, so a test or a lookup reads it as it reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeAlias, final

WORDS_CONTEXT = "words"
JOINED_CONTEXT = "words:joined"  # a list: the template is its separator


@final
class Words:
    """An English sentence that remembers the template and fields it was made from, and the context its
    template is translated in (``WORDS_CONTEXT``, or the one a fixed text already has: a setting's label is
    in "params")."""

    __slots__ = ("context", "english", "fields", "template")

    template: str
    fields: Mapping[str, Text]
    context: str
    english: str

    def __init__(
        self, template: str, fields: Mapping[str, Text], english: str | None = None, context: str = WORDS_CONTEXT
    ) -> None:
        if english is None:
            english = template.format(**{name: _english(value) for name, value in fields.items()})
        object.__setattr__(self, "template", template)
        object.__setattr__(self, "fields", dict(fields))
        object.__setattr__(self, "context", context)
        object.__setattr__(self, "english", english)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Words is frozen: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Words is frozen: cannot delete {name}")

    def __reduce__(self) -> tuple[object, ...]:  # pickles (and copies) as the sentence it is
        return (Words, (self.template, dict(self.fields), self.english, self.context))

    def __str__(self) -> str:
        return self.english

    def __repr__(self) -> str:
        return f"Words({self.english!r})"

    # Read-only questions about the English, answered with plain values.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, Words):
            return self.english == other.english
        if isinstance(other, str):
            return self.english == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self.english)

    def __bool__(self) -> bool:
        return bool(self.english)

    def __len__(self) -> int:
        return len(self.english)

    def __contains__(self, part: Text) -> bool:
        return _english(part) in self.english

    def startswith(self, prefix: str | tuple[str, ...]) -> bool:
        return self.english.startswith(prefix)

    def endswith(self, suffix: str | tuple[str, ...]) -> bool:
        return self.english.endswith(suffix)

    def split(self, separator: str | None = None, most: int = -1) -> list[str]:
        return self.english.split(separator, most)

    def splitlines(self) -> list[str]:
        return self.english.splitlines()

    def lower(self) -> str:
        return self.english.lower()


# Text that may be a translatable sentence: a parameter the window or the CLI shows.
Text: TypeAlias = str | Words


def _english(text: Text) -> str:
    return text.english if isinstance(text, Words) else text


def english(text: Text) -> str:
    """The English of a text: a sentence's, or the plain text as it is (for a file, a log, JSON, the CLI)."""
    return _english(text)


def words(template: str, **fields: object) -> Words:
    """A sentence from a template and its figures; a field that is a sentence stays one (translated in the
    window), one that is not a ``str`` is written with ``format()`` (format figures before, as the sentence
    wants them: ``f"{gib:.1f}"``)."""
    return Words(template, {name: _field(value) for name, value in fields.items()})


def _field(value: object) -> Text:
    return value if isinstance(value, str | Words) else format(value)


def fixed(text: str, context: str, english: str | None = None) -> Words:
    """A fixed text the window already translates in ``context`` (a setting's label in "params"), as a field of
    a sentence; ``english`` when the sentence writes it otherwise ("context" for the label "Context")."""
    return Words(text, {}, english if english is not None else text, context)


def mark(text: str, context: str) -> str:
    """``text`` as it is, marked for the .ts in ``context``: a fixed text of the Qt-free layers that the window
    translates where it shows it, with ``core_text(context, text)`` (a setting's label and help in "params",
    a Doctor check's title in "doctor"). bench/i18n_extract.py collects it; ``context`` must be a literal."""
    return text


def joined(separator: str, parts: Iterable[Text]) -> Words:
    """Sentences joined by a separator (``"; "``), each translated on its own in the window and the separator
    too (one of ``SEPARATORS``: "，" in Chinese)."""
    items = list(parts)
    fields = {f"p{i}": item for i, item in enumerate(items)}
    return Words(separator, fields, separator.join(_english(item) for item in items), JOINED_CONTEXT)


def message_of(exc: BaseException) -> Text:
    """An error's message: the ``Words`` it was raised with (translatable), else ``str(exc)``."""
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, Words) else exc.__str__()  # str(exc), which the type checker refuses


def english_error(exc: BaseException) -> str:
    """An error's message in English, where plain text is meant (the CLI, a log, a file, another program):
    what ``str(exc)`` gives, said on purpose (the window shows it with ``error_text``)."""
    return english(message_of(exc))


def by_english(*sentences: Words) -> dict[str, Words]:
    """Sentences as another program writes them (asyncio, Python's JSON parser, the engine), looked up by their
    English text to be shown translated."""
    return {sentence.english: sentence for sentence in sentences}


# The separators a joined list may have, each translated like a template.
SEPARATORS = (words(", "), words("; "), words(" · "))
