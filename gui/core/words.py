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


class Words(str):
    """An English sentence that remembers the template and fields it was made from."""

    template: str
    fields: Mapping[str, str]

    def __new__(cls, template: str, fields: Mapping[str, str]) -> Words:
        made = super().__new__(cls, template.format(**fields))
        made.template = template
        made.fields = fields
        return made

    def __reduce__(self) -> tuple[object, ...]:  # pickles (and copies) as the sentence it is
        return (Words, (self.template, dict(self.fields)))


def words(template: str, **fields: object) -> Words:
    """A sentence from a template and its figures; a field that is not a ``str`` is written with ``str()``
    (format figures before, as the sentence wants them: ``f"{gib:.1f}"``)."""
    return Words(template, {name: value if isinstance(value, str) else str(value) for name, value in fields.items()})


def joined(separator: str, parts: Iterable[str]) -> Words:
    """Sentences joined by a separator (``"; "``), each translated on its own in the window."""
    items = list(parts)
    names = [f"p{i}" for i in range(len(items))]
    template = separator.replace("{", "{{").replace("}", "}}").join("{" + n + "}" for n in names)
    return Words(template, dict(zip(names, items, strict=True)))
