"""Sentences the Qt-free layers compose from figures, kept translatable.

``words("Put {n} of {total} layers on the GPU", n=30, total=63)`` is an English ``str`` everywhere (the CLI,
logs, tests, comparisons) that also carries its template and fields. The window shows it in its language with
``core_text`` (gui/ui/i18n.py): the template is translated in the one context ``WORDS_CONTEXT``, and fields that
are themselves ``Words`` are translated the same way before they are put in. bench/i18n_extract.py collects
the template of every ``words(...)`` call in gui/core and gui/services, so a new sentence is in the .ts without
anyone listing it; a template must be a literal (an f-string cannot be translated whole).

Text made from a ``Words`` by concatenation, an f-string or ``str()`` is a plain ``str`` again: compose with
``words``. An error raised with one (``raise ValueError(words(...))``) keeps it as its argument; the window shows
it with ``error_text(exc)`` (``str(exc)`` is the English).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

WORDS_CONTEXT = "words"
JOINED_CONTEXT = "words:joined"  # a list: the template is its separator


class Words(str):
    """An English sentence that remembers the template and fields it was made from, and the context its
    template is translated in (``WORDS_CONTEXT``, or the one a fixed text already has: a setting's label is
    in "params")."""

    template: str
    fields: Mapping[str, str]
    context: str

    def __new__(
        cls, template: str, fields: Mapping[str, str], english: str | None = None, context: str = WORDS_CONTEXT
    ) -> Words:
        made = super().__new__(cls, template.format(**fields) if english is None else english)
        made.template = template
        made.fields = fields
        made.context = context
        return made

    def __reduce__(self) -> tuple[object, ...]:  # pickles (and copies) as the sentence it is
        return (Words, (self.template, dict(self.fields), str(self), self.context))


def words(template: str, **fields: object) -> Words:
    """A sentence from a template and its figures; a field that is not a ``str`` is written with ``str()``
    (format figures before, as the sentence wants them: ``f"{gib:.1f}"``)."""
    return Words(template, {name: value if isinstance(value, str) else str(value) for name, value in fields.items()})


def fixed(text: str, context: str, english: str | None = None) -> Words:
    """A fixed text the window already translates in ``context`` (a setting's label in "params"), as a field of
    a sentence; ``english`` when the sentence writes it otherwise ("context" for the label "Context")."""
    return Words(text, {}, english if english is not None else text, context)


def joined(separator: str, parts: Iterable[str]) -> Words:
    """Sentences joined by a separator (``"; "``), each translated on its own in the window and the separator
    too (one of ``SEPARATORS``: "，" in Chinese)."""
    items = list(parts)
    fields = {f"p{i}": item for i, item in enumerate(items)}
    return Words(separator, fields, separator.join(items), JOINED_CONTEXT)


def message_of(exc: BaseException) -> str:
    """An error's message: the ``Words`` it was raised with (translatable), else ``str(exc)``."""
    first = exc.args[0] if len(exc.args) == 1 else None
    return first if isinstance(first, Words) else str(exc)


def by_english(*sentences: Words) -> dict[str, Words]:
    """Sentences as another program writes them (asyncio, Python's JSON parser, the engine), looked up by their
    English text to be shown translated."""
    return {str(sentence): sentence for sentence in sentences}


# The separators a joined list may have, each translated like a template.
SEPARATORS = (words(", "), words("; "), words(" · "))
