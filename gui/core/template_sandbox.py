"""The bounded Jinja environment that chat templates from model files compile and render in.

Jinja's immutable sandbox keeps a template away from Python's internals, but not from spending
without end: a loop over ``"a" * 9000000``, ``x|center(10**12)`` or printing ``x`` after sixty rounds
of ``x = [x, x]`` each hang or exhaust memory. Here every render spends from one :class:`Budget`:

- **steps**: each iteration of every ``for`` loop (recursive ones too), each item a filter walks
  (``map``, ``select``, ``sum``, ``dictsort``, ``unique``...), each argument unpacked into a call
  (``cycler(*many)``) and each element measured below;
- **time**: the deadline is checked at every step and every operation, whether or not anything is
  written out;
- **size**: no value a template makes (a string, a list, the text a ``set`` block or macro collects)
  may pass ``max_output_chars``. Containers are measured as printing would walk them, so parts shared
  many times count each time; operations whose result is sized by an argument (a width, a precision,
  a repeat count, a replacement string) are checked before they run;
- **memory**: everything made, kept or not, adds up against ``MADE_FACTOR`` times that limit.

With every value bounded, one operation on a value (printing, comparing, sorting it) does bounded
work, and the clock is read between operations. A template may not call its own blocks, whose text
would be joined uncounted (a chat template has nothing to inherit from, so no use for them).

Compiling runs none of the template: Jinja's optimizer is off, and the constant filters Jinja would
still evaluate ahead of time refuse to run outside a render, so compiling costs what parsing a source
of at most ``MAX_TEMPLATE_CHARS`` costs.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import itertools
import json
import operator
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, NoReturn, cast

import jinja2
import jinja2.ext
import jinja2.nodes as nodes
import jinja2.parser
from jinja2.compiler import CodeGenerator, Frame
from jinja2.filters import make_attrgetter
from jinja2.runtime import BlockReference, LoopContext, Macro, markup_join
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter, safe_range
from jinja2.utils import Namespace, generate_lorem_ipsum, pass_environment, pass_eval_context
from jinja2.visitor import NodeTransformer

from gui.core.words import Text, words

__all__ = [
    "DEFAULT_LIMITS",
    "MADE_FACTOR",
    "MAX_TEMPLATE_CHARS",
    "BudgetExceeded",
    "Limits",
    "RaisedByTemplate",
    "compile_template",
    "spending",
]


@dataclass(frozen=True)
class Limits:
    """Bounds on one compile or render. Real templates need a few KB and a millisecond; these are far above that."""

    max_output_chars: int = 10_000_000  # the output, and any one value the template makes
    max_iterations: int = 1_000_000  # steps: loop iterations, items walked by filters and calls
    max_seconds: float = 5.0


DEFAULT_LIMITS = Limits()
# Everything a template makes, kept or not, may add up to this many times max_output_chars.
MADE_FACTOR = 10
# The longest chat templates in the wild are tens of KB. Parsing and compiling cannot be interrupted,
# so the source itself is bounded: 256 KiB of template compiles in about a second.
MAX_TEMPLATE_CHARS = 256 << 10
# Integers past this many bits come only from runaway arithmetic (and Python will not print them).
_MAX_INT_BITS = 1 << 16
# What one element of a container adds when printed: quotes, a comma, a space; a fair share of the
# memory an element costs too.
_NODE_CHARS = 8
# Containers at least this big remember their measured size for the rest of the render, so a list grown
# an item at a time is not walked whole at every step; smaller ones are walked again, which keeps the
# memory from holding every small list a loop makes.
_MEMO_NODES = 64
# The most one formatted number can print (a float with %f spells out up to 309 digits).
_NUMBER_CHARS = 400


_ENORMOUS_NUMBER = words("it tried to compute an enormous number")


class BudgetExceeded(Exception):
    """The template spent more than its Limits allow; ``str()`` says which bound, for the user (a sentence
    composed with gui/core/words.py, which the window can show translated)."""


# What a template was making when it passed a bound, for BudgetExceeded's words (made once: sizes are checked
# on every call of a filter or method).
_STRING_OR_LIST = words("a string or list")
_JSON_STRING = words("a JSON string")
_BATCH = words("a batch")
_BLOCK_OF_TEXT = words("a block of text")
_DATE = words("a date")
_FORMATTED_STRING = words("a formatted string")
_JOINED_STRING = words("a joined string")
_LIST_OF_REPEATED_PARTS = words("a list of repeated parts")
_PADDED_STRING = words("a padded string")
_PRINTOUT = words("a printout")
_REPEATED_STRING = words("a repeated string")
_TEXT_WITH_LINKS = words("a text with links")
_PLACEHOLDER_TEXT = words("placeholder text")


class RaisedByTemplate(jinja2.TemplateError):
    """What ``raise_exception(...)`` in a template raises: the template's own message."""


# ---- the budget --------------------------------------------------------------------------------


class _Size(NamedTuple):
    chars: int  # characters of every string inside, shared ones counted each time
    nodes: int  # values inside, the container itself included
    depth: int  # levels of nesting

    @property
    def text(self) -> int:
        """About how many characters ``str()`` of the value prints."""
        return self.chars + _NODE_CHARS * self.nodes


_SCALAR = _Size(0, 1, 0)


class Budget:
    """What one compile or render may still spend. Reached through a ContextVar, so templates rendering
    in different threads never share one."""

    def __init__(self, limits: Limits, *, compiling: bool = False) -> None:
        self.limits = limits
        self.compiling = compiling
        self.cap = limits.max_output_chars
        self.steps_left = limits.max_iterations
        self.made_left = MADE_FACTOR * limits.max_output_chars
        self.deadline = time.monotonic() + limits.max_seconds
        # id -> (value, size) for containers that cannot change; the value is kept so its id stays its own.
        self._sizes: dict[int, tuple[Any, _Size]] = {}

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise BudgetExceeded(words("it ran longer than {seconds} s", seconds=f"{self.limits.max_seconds:g}"))

    def step(self, n: int = 1) -> None:
        self.steps_left -= n
        if self.steps_left < 0:
            raise BudgetExceeded(
                words("it took more than {n} steps (loop iterations and items)", n=f"{self.limits.max_iterations:,}")
            )
        self.check_time()

    def fits(self, chars: int, what: Text = _STRING_OR_LIST) -> None:
        if chars > self.cap:
            raise BudgetExceeded(
                words("it tried to make {what} longer than the limit of {n} characters", what=what, n=f"{self.cap:,}")
            )

    def make(self, chars: int, what: Text = _STRING_OR_LIST) -> None:
        """A value of about ``chars`` characters is being made."""
        self.fits(chars, what)
        self.made_left -= chars
        if self.made_left < 0:
            raise BudgetExceeded(
                words("the values it made added up to more than {n} characters", n=f"{MADE_FACTOR * self.cap:,}")
            )

    def measure(self, value: Any) -> _Size:
        """The size of ``value`` as printing it would walk it; raises once that passes the cap."""
        return self._measure(value, set())[0]

    def sized(self, value: Any) -> tuple[_Size, bool]:
        """``measure(value)``, and whether the value can still change (it holds a namespace)."""
        return self._measure(value, set())

    def remember(self, value: Any, size: _Size, mutable: bool) -> None:
        """A container just made, whose size is known from its parts: no need to walk it later."""
        if not mutable and size.nodes >= _MEMO_NODES:
            self._sizes[id(value)] = (value, size)

    def _measure(self, value: Any, path: set[int]) -> tuple[_Size, bool]:
        """(size, whether it can still change: it holds a namespace)."""
        if isinstance(value, str | bytes):
            return _Size(len(value), 1, 0), False
        if isinstance(value, int):
            return _Size(value.bit_length() // 3 + 1, 1, 0), False
        children = _children(value)
        if children is None:
            return _SCALAR, False
        key = id(value)
        hit = self._sizes.get(key)
        if hit is not None and hit[0] is value:
            return hit[1], False
        if key in path:  # a namespace that holds itself: printing it stops there too
            return _SCALAR, True
        path.add(key)
        chars, count, depth, mutable = 0, 1, 0, isinstance(value, Namespace)
        for child in children:
            self.step()
            size, child_mutable = self._measure(child, path)
            chars, count, depth = chars + size.chars, count + size.nodes, max(depth, size.depth)
            mutable = mutable or child_mutable
            self.fits(chars + _NODE_CHARS * count)
        path.discard(key)
        size = _Size(chars, count, depth + 1)
        self.remember(value, size, mutable)
        return size, mutable


_DICT_VIEWS: tuple[type, ...] = (type({}.keys()), type({}.values()), type({}.items()))


def _children(value: Any) -> Iterable[Any] | None:
    """What printing ``value`` walks into, or None for a value printed as one short thing."""
    if isinstance(value, list | tuple | set | frozenset):
        return value
    if isinstance(value, dict):
        return itertools.chain.from_iterable(value.items())
    if isinstance(value, _DICT_VIEWS):  # they print their dict's contents
        mapping: Mapping[Any, Any] = getattr(value, "mapping")  # noqa: B009 - views are typed only at runtime here
        return itertools.chain.from_iterable(mapping.items())
    if isinstance(value, Namespace):
        # Jinja keeps a namespace's attributes in a private dict, printed by its repr.
        attrs = object.__getattribute__(value, "_Namespace__attrs")
        return itertools.chain.from_iterable(attrs.items())
    return None


def _text(budget: Budget, value: Any) -> int:
    """About how many characters ``str(value)`` prints."""
    return len(value) if isinstance(value, str | bytes) else budget.measure(value).text


def _fresh(value: Any) -> int:
    """Characters of memory a newly made ``value`` takes beyond the values it refers to."""
    if isinstance(value, str | bytes):
        return len(value)
    if isinstance(value, list | tuple | set | frozenset | dict):
        return _NODE_CHARS * len(value)
    return 0


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("chat_template_budget", default=None)


def _budget() -> Budget:
    budget = _BUDGET.get()
    if budget is None:
        raise RuntimeError("chat templates compile and render only inside spending()")
    return budget


def _running() -> Budget:
    """The budget, for the filters and tests a template runs. None of them runs while compiling:
    Jinja would evaluate those with constant arguments ahead of time, outside any render."""
    budget = _budget()
    if budget.compiling:
        raise nodes.Impossible()
    return budget


@contextmanager
def spending(limits: Limits, *, compiling: bool = False) -> Iterator[Budget]:
    """A fresh budget for the block: every template operation inside it draws on this one."""
    budget = Budget(limits, compiling=compiling)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


# ---- iterating ---------------------------------------------------------------------------------


class _Counted:
    """Iterates what it wraps, one step of the budget per item."""

    __slots__ = ("_inner",)

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __iter__(self) -> Iterator[Any]:
        budget = _budget()
        for item in self._inner:
            budget.step()
            yield item

    def __len__(self) -> int:
        # A TypeError for an iterator, which tells Jinja's loop to count the items itself.
        return len(self._inner)

    def __bool__(self) -> bool:
        try:
            return len(self._inner) > 0
        except TypeError:
            return True  # like the generator it may wrap


class _CountedRange(_Counted):
    """range() for templates: the same sequence, sliceable and reversible, each step counted."""

    __slots__ = ()

    def __reversed__(self) -> Iterator[int]:
        return iter(_CountedRange(self._inner[::-1]))

    def __getitem__(self, index: Any) -> Any:
        item = self._inner[index]
        return _CountedRange(item) if isinstance(item, range) else item

    def __contains__(self, value: object) -> bool:
        return value in self._inner


def _bounded_range(*args: int) -> _CountedRange:
    return _CountedRange(safe_range(*args))


# ---- checks before an operation whose result an argument sizes -----------------------------------

_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?(.)", re.DOTALL)


def _check_percent(budget: Budget, fmt: str, args: Any) -> None:
    """``fmt % args``: widths, precisions and the values printed, before Python allocates the result."""
    values = list(args.values()) if isinstance(args, Mapping) else list(args) if isinstance(args, tuple) else [args]
    total = len(fmt)
    starred = False
    for match in _PERCENT_SPEC.finditer(fmt):
        width, precision, conversion = match.groups()
        if conversion == "%":
            continue
        budget.step()
        starred = starred or "*" in (width, precision)
        for number in (width, precision):
            if number and number != "*":
                total += int(number)
        total += _NUMBER_CHARS
        budget.fits(total, _FORMATTED_STRING)
    for value in values:
        budget.step()
        total += _text(budget, value)
        if starred and isinstance(value, int):
            total += abs(value)  # any integer argument may be a * width or precision
        budget.fits(total, _FORMATTED_STRING)
    budget.make(total, _FORMATTED_STRING)


class _FormatCheck(SandboxedFormatter):
    """Goes through ``str.format``'s fields without printing them: each field's spec and value sized."""

    def __init__(self, env: jinja2.Environment, budget: Budget) -> None:
        super().__init__(env)
        self.budget = budget
        self.total = 0

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        return value  # !r and !s print the value, which format_field sizes

    def format_field(self, value: Any, format_spec: str) -> Any:
        self.budget.step()
        # Every number in a spec is at most a width, a precision or a fill digit.
        spec_chars = sum(int(n) for n in re.findall(r"\d+", format_spec))
        self.total += spec_chars + _text(self.budget, value) + _NUMBER_CHARS
        self.budget.fits(self.total, _FORMATTED_STRING)
        # Nested specs ("{:{width}}") are built from what this returns; numbers are all they need.
        return str(value) if isinstance(value, int | float) else ""


def _check_format(budget: Budget, env: jinja2.Environment, fmt: str, args: tuple[Any, ...], kwargs: Any) -> None:
    check = _FormatCheck(env, budget)
    check.vformat(fmt, args, kwargs)
    budget.make(check.total + len(fmt), _FORMATTED_STRING)


def _arg(args: tuple[Any, ...], kwargs: Mapping[str, Any], index: int, name: str, default: Any) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _int_arg(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _check_padding(budget: Budget, subject: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    budget.make(max(len(subject), _int_arg(_arg(args, kwargs, 0, "width", 0))), _PADDED_STRING)


def _check_expandtabs(budget: Budget, subject: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    tab = "\t" if isinstance(subject, str) else b"\t"
    tabsize = _int_arg(_arg(args, kwargs, 0, "tabsize", 8))
    budget.make(len(subject) + subject.count(tab) * max(tabsize, 0))


def _check_replace(budget: Budget, subject: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    old, new = _arg(args, kwargs, 0, "old", ""), _arg(args, kwargs, 1, "new", "")
    count = _arg(args, kwargs, 2, "count", -1)
    if not isinstance(old, str | bytes) or not isinstance(new, str | bytes) or len(new) <= len(old):
        budget.make(len(subject))
        return
    found = subject.count(old) + 1 if old else len(subject) + 1
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    budget.make(len(subject) + found * (len(new) - len(old)))


def _check_translate(budget: Budget, subject: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    table = _arg(args, kwargs, 0, "table", None)
    pieces = table.values() if isinstance(table, Mapping) else table if isinstance(table, list | tuple) else ()
    longest = 1
    for piece in _Counted(pieces):
        if isinstance(piece, str | bytes):
            longest = max(longest, len(piece))
    budget.make(len(subject) * longest)


def _check_to_bytes(budget: Budget, subject: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    budget.make(_int_arg(_arg(args, kwargs, 0, "length", 1)))


# (type of the object, method name) -> check run before the call.
_METHOD_CHECKS: dict[tuple[type, str], Callable[[Budget, Any, tuple[Any, ...], Mapping[str, Any]], None]] = {
    **{(t, name): _check_padding for t in (str, bytes) for name in ("center", "ljust", "rjust", "zfill")},
    **{(t, "expandtabs"): _check_expandtabs for t in (str, bytes)},
    **{(t, "replace"): _check_replace for t in (str, bytes)},
    (str, "translate"): _check_translate,
    (int, "to_bytes"): _check_to_bytes,
}


def _method_check(subject: Any, name: str) -> Callable[[Budget, Any, tuple[Any, ...], Mapping[str, Any]], None] | None:
    # By the base type: a method of Markup (|safe) or of True grows its result just the same.
    kind = next((t for t in (str, bytes, int) if isinstance(subject, t)), type(subject))
    return _METHOD_CHECKS.get((kind, name))


# Calls that hand back a value that already exists: nothing new is made.
_LOOKUPS = frozenset(
    {"get", "next", "current", "cycle", "first", "last", "default", "d", "attr", "random", "min", "max"}
)


def _joined(budget: Budget, separator: Any, items: Any) -> list[Any]:
    """The items of a join, walked with the budget; raises if the joined text would pass the cap."""
    kept = list(_Counted(items))
    total = len(separator) * max(len(kept) - 1, 0)
    for item in kept:
        total += _text(budget, item)
        budget.fits(total, _JOINED_STRING)
    budget.make(total, _JOINED_STRING)
    return kept


# ---- filters -----------------------------------------------------------------------------------

# Filters that run Python code for each item of their value (each character of a string): each item
# is a step. Those that loop once per line, word or tag of a string count those in their checks
# below; the rest walk a value in C, which its bounded size keeps short.
_PER_ITEM_FILTERS = frozenset(
    {
        "batch",
        "dictsort",
        "groupby",
        "map",
        "max",
        "min",
        "reject",
        "rejectattr",
        "select",
        "selectattr",
        "slice",
        "sort",
        "unique",
        "urlencode",
        "wordwrap",
        "xmlattr",
    }
)
# How many characters of copying one wordwrap may do per character of the cap.
_WORDWRAP_COPY_FACTOR = 100


def _check_center(budget: Budget, a: dict[str, Any]) -> None:
    value = a["value"]
    budget.make(max(len(value) if isinstance(value, str) else 0, _int_arg(a["width"])), _PADDED_STRING)


def _words(text: str) -> int:
    return text.count(" ") + text.count("\n") + text.count("\t") + 1


def _check_indent(budget: Budget, a: dict[str, Any]) -> None:
    text, width = str(a["s"]), a["width"]
    pad = len(width) if isinstance(width, str) else _int_arg(width)
    lines = text.count("\n") + 1
    budget.step(lines)
    budget.make(len(text) + lines * pad)


def _check_title(budget: Budget, a: dict[str, Any]) -> None:
    budget.step(_words(str(a["s"])))


def _check_striptags(budget: Budget, a: dict[str, Any]) -> None:
    budget.step(str(a["value"]).count("<"))


def _check_urlize(budget: Budget, a: dict[str, Any]) -> None:
    # Each word may become a link carrying the word twice and the target and rel attributes.
    text = str(a["value"])
    words = _words(text)
    budget.step(words)
    extra = len(str(a["target"] or "")) + len(str(a["rel"] or "")) + 64
    budget.make(3 * len(text) + words * extra, _TEXT_WITH_LINKS)


def _check_wordwrap(budget: Budget, a: dict[str, Any]) -> None:
    text, width, wrap = str(a["s"]), max(_int_arg(a["width"]), 1), a["wrapstring"]
    lines = len(text) // width + text.count("\n") + 1
    budget.make(len(text) + lines * len(wrap if isinstance(wrap, str) else "\n"))
    # textwrap cuts a long word one line at a time, copying the rest of the word each time.
    if a["break_long_words"] and len(text) * (len(text) // width) > _WORDWRAP_COPY_FACTOR * budget.cap:
        raise BudgetExceeded(words("it asked wordwrap to cut a long text into many short lines"))


def _check_round(budget: Budget, a: dict[str, Any]) -> None:
    if abs(_int_arg(a["precision"])) * 4 > _MAX_INT_BITS:
        raise BudgetExceeded(words("it tried to round to an enormous number of digits"))


def _check_format_filter(budget: Budget, a: dict[str, Any]) -> None:
    _check_percent(budget, str(a["value"]), a["kwargs"] or a["args"])


def _check_replace_filter(budget: Budget, a: dict[str, Any]) -> None:
    count = a["count"]
    _check_replace(budget, str(a["s"]), (str(a["old"]), str(a["new"]), -1 if count is None else count), {})


def _check_batch(budget: Budget, a: dict[str, Any]) -> None:
    if a["fill_with"] is not None:
        budget.make(_NODE_CHARS * _int_arg(a["linecount"]), _BATCH)


def _check_tojson(budget: Budget, a: dict[str, Any]) -> None:
    indent = a["indent"]
    pad = len(indent) if isinstance(indent, str) else _int_arg(indent)
    size = budget.measure(a["value"])
    budget.make(size.text + size.nodes * size.depth * pad, _JSON_STRING)


def _check_pprint(budget: Budget, a: dict[str, Any]) -> None:
    size = budget.measure(a["value"])
    budget.make(size.text + size.nodes * size.depth, _PRINTOUT)


# filter name -> check of its bound arguments, run before the filter.
_FILTER_CHECKS: dict[str, Callable[[Budget, dict[str, Any]], None]] = {
    "center": _check_center,
    "indent": _check_indent,
    "title": _check_title,
    "striptags": _check_striptags,
    "urlize": _check_urlize,
    "wordwrap": _check_wordwrap,
    "round": _check_round,
    "format": _check_format_filter,
    "replace": _check_replace_filter,
    "batch": _check_batch,
    "tojson": _check_tojson,
    "pprint": _check_pprint,
}


def _result(budget: Budget, result: Any, name: str, inputs: Iterable[Any]) -> Any:
    """What a filter or call returned: counted as it is iterated, measured, and charged if it is new."""
    if isinstance(result, Iterator):
        return _Counted(result)
    if _children(result) is not None:
        budget.fits(budget.measure(result).text)
    if name not in _LOOKUPS and all(result is not value for value in inputs):
        budget.make(_fresh(result))
    return result


def _guarded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with its time, walking and result counted, and its own check (if any) run first."""
    skip = 0 if getattr(func, "jinja_pass_arg", None) is None else 1  # the context, eval context or environment
    check = _FILTER_CHECKS.get(name)
    signature = inspect.signature(func) if check is not None else None

    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = _running()
        budget.check_time()
        if name in _PER_ITEM_FILTERS and len(args) > skip:
            with suppress(TypeError):  # an iterator: counted item by item as it is consumed
                budget.step(len(args[skip]))
        if check is not None and signature is not None:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            check(budget, bound.arguments)
        return _result(budget, func(*args, **kwargs), name, (*args, *kwargs.values()))

    return guarded


def _guarded_test(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        budget = _running()
        budget.check_time()
        if name == "in" and len(args) > 1:
            with suppress(TypeError):
                budget.step(len(args[1]))
        return func(*args, **kwargs)

    return guarded


def _add(budget: Budget, left: Any, right: Any) -> Any:
    """``left + right``, sized before it is made."""
    if isinstance(left, str | bytes) and isinstance(right, str | bytes):
        budget.make(len(left) + len(right))
    elif isinstance(left, list | tuple) and isinstance(right, list | tuple):
        (a, a_changes), (b, b_changes) = budget.sized(left), budget.sized(right)
        size = _Size(a.chars + b.chars, a.nodes + b.nodes - 1, max(a.depth, b.depth))
        budget.fits(size.text)
        budget.make(_fresh(left) + _fresh(right))
        result = operator.add(left, right)
        # Remembered, so that a list grown one item at a time is not walked whole at every step.
        budget.remember(result, size, a_changes or b_changes)
        return result
    return left + right


def _multiply(budget: Budget, left: Any, right: Any) -> Any:
    """``left * right``, sized before it is made."""
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > _MAX_INT_BITS:
            raise BudgetExceeded(_ENORMOUS_NUMBER)
        return left * right
    for seq, times in ((left, right), (right, left)):
        if not isinstance(times, int):
            continue
        if isinstance(seq, str | bytes):
            budget.make(len(seq) * max(times, 0), _REPEATED_STRING)
        elif isinstance(seq, list | tuple):
            # The new list holds the old one's items ``times`` over, and itself once.
            size, changes = budget.sized(seq)
            grown = _Size(size.chars * max(times, 0), (size.nodes - 1) * max(times, 0) + 1, size.depth)
            budget.fits(grown.text, _LIST_OF_REPEATED_PARTS)
            budget.make(_fresh(seq) * max(times, 0), _LIST_OF_REPEATED_PARTS)
            result = left * right
            budget.remember(result, grown, changes)
            return result
    return left * right


@pass_environment
def _sum(environment: jinja2.Environment, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """Jinja's ``sum``, one checked addition at a time: a sum of lists makes a new list at each step."""
    if isinstance(start, str):
        raise TypeError("sum() can't sum strings [use ''.join(seq) instead]")
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    budget = _budget()
    total = start
    for item in _Counted(iterable):
        total = _add(budget, total, item)
    return total


@pass_environment
def _join(environment: jinja2.Environment, value: Any, d: Any = "", attribute: Any = None) -> str:
    """Jinja's ``join`` (this environment never autoescapes), its result sized before it is made."""
    if attribute is not None:
        value = map(make_attrgetter(environment, attribute), value)
    separator = str(d)
    return separator.join(map(str, _joined(_budget(), separator, value)))


def _raise_exception(message: str) -> NoReturn:
    raise RaisedByTemplate(message)


_STRFTIME_WIDTH = re.compile(r"%[-_0^#]*\d")


def _strftime_now(fmt: str) -> str:
    if _STRFTIME_WIDTH.search(fmt):
        raise BudgetExceeded(words("it gave strftime_now a field width"))
    _budget().make(len(fmt) * 16, _DATE)  # no directive prints more than a few dozen characters
    return datetime.now().strftime(fmt)


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    _budget().make(_int_arg(n) * _int_arg(max) * 16, _PLACEHOLDER_TEXT)
    return str(generate_lorem_ipsum(n, html, min, max))


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | str | None = None, **kwargs: Any) -> str:
    # Jinja's own tojson escapes <, >, & and ' for HTML; chat templates want plain JSON.
    return json.dumps(
        value,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=kwargs.get("separators"),
        sort_keys=bool(kwargs.get("sort_keys", False)),
    )


# ---- the environment ---------------------------------------------------------------------------


class _TextBuffer(list[Any]):
    """The text a set block, macro, filter block or recursive loop collects before it is one string."""

    def __init__(self) -> None:
        super().__init__()
        self.chars = 0

    def _count(self, item: Any) -> None:
        budget = _budget()
        chars = _text(budget, item)
        self.chars += chars
        budget.fits(self.chars, _BLOCK_OF_TEXT)
        budget.make(chars, _BLOCK_OF_TEXT)

    def append(self, item: Any) -> None:
        self._count(item)
        super().append(item)

    def extend(self, items: Iterable[Any]) -> None:
        for item in items:
            self.append(item)


class _CodeGenerator(CodeGenerator):
    def buffer(self, frame: Frame) -> None:
        # The same buffer Jinja makes, but one that counts what goes into it.
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.text_buffer()")


# Filters a template cannot name (their names are not identifiers), applied by _Guards.
_ITER = "tightfit.iter"
_VALUE = "tightfit.value"
_CONCAT = "tightfit.concat"


def _guard(node: nodes.Node, name: str) -> nodes.Filter:
    return nodes.Filter(cast(nodes.Expr, node), name, [], [], None, None, lineno=node.lineno)


class _Guards(NodeTransformer):
    """Routes what Jinja compiles to plain Python through the budget: the iterable of every ``for``,
    every list, tuple and dict built in the template, every slice and every ``~``."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = _guard(node.iter, _ITER)
        return node

    def _value(self, node: nodes.Expr) -> nodes.Node:
        self.generic_visit(node)
        return _guard(node, _VALUE)

    visit_List = visit_Dict = _value

    def visit_Tuple(self, node: nodes.Tuple) -> nodes.Node:
        return self._value(node) if node.ctx == "load" else node

    def visit_Getitem(self, node: nodes.Getitem) -> nodes.Node:
        return self._value(node) if isinstance(node.arg, nodes.Slice) else self.generic_visit(node)

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return _guard(nodes.List(node.nodes, lineno=node.lineno), _CONCAT)


class _GenerationTag(jinja2.ext.Extension):
    """``{% generation %}…{% endgeneration %}``: transformers uses it to mark the assistant's tokens for
    training masks. For inference it only renders its body, but without it such templates fail to parse."""

    tags = {"generation"}  # noqa: RUF012 - Jinja's Extension API declares this as a class attribute

    def parse(self, parser: jinja2.parser.Parser) -> list[nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


class _ChatSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox, spending from the current Budget."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = _CodeGenerator

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = _Guards().visit(super()._parse(source, name, filename))
        tree.set_environment(self)
        return tree

    def text_buffer(self) -> _TextBuffer:
        return _TextBuffer()

    def call_binop(self, context: jinja2.runtime.Context, op: str, left: Any, right: Any) -> Any:
        budget = _budget()
        budget.check_time()
        if op == "+":
            return _add(budget, left, right)
        if op == "*":
            return _multiply(budget, left, right)
        if op == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1:
            if left.bit_length() * right > _MAX_INT_BITS:
                raise BudgetExceeded(_ENORMOUS_NUMBER)
        elif op == "%" and isinstance(left, str):
            _check_percent(budget, left, right)
        return super().call_binop(context, op, left, right)

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = _budget()
        budget.step(1 + len(args) + len(kwargs))  # arguments unpacked into a call are walked once
        if isinstance(__obj, BlockReference):
            # self.name() and super() collect a block's text where nothing counts it. A template
            # in a model file has no other template to inherit from, so it has no use for them.
            raise jinja2.exceptions.SecurityError("a chat template may not call its blocks")
        if isinstance(__obj, LoopContext) and args:
            args = (_Counted(args[0]), *args[1:])  # a recursive loop's next level
        wrapped = getattr(__obj, "__wrapped__", __obj)  # str.format arrives wrapped by the sandbox
        subject = getattr(wrapped, "__self__", None)
        name = getattr(wrapped, "__name__", "")
        real_kwargs = {k: v for k, v in kwargs.items() if k not in ("_loop_vars", "_block_vars")}
        if isinstance(subject, str) and name in ("format", "format_map"):
            if name == "format_map":
                _check_format(budget, __self, subject, (), args[0] if args else {})
            else:
                _check_format(budget, __self, subject, args, real_kwargs)
        elif isinstance(subject, str | bytes) and name == "join" and args:
            args = (_joined(budget, subject, args[0]), *args[1:])
        else:
            check = _method_check(subject, name)
            if check is not None:
                check(budget, subject, args, real_kwargs)
        result = super().call(__context, __obj, *args, **kwargs)
        if isinstance(__obj, Macro):
            return result  # its text was counted as it was written
        return _result(budget, result, name, (subject, *args, *kwargs.values()))

    # Called from the filters _Guards adds.

    @staticmethod
    def guard_iter(value: Any) -> _Counted:
        return _Counted(value)

    @staticmethod
    def guard_value(value: Any) -> Any:
        budget = _running()
        budget.check_time()
        if _children(value) is not None:
            budget.fits(budget.measure(value).text)
        budget.make(_fresh(value))
        return value

    @staticmethod
    @pass_eval_context
    def guard_concat(eval_ctx: jinja2.nodes.EvalContext, parts: list[Any]) -> str:
        budget = _running()
        budget.check_time()
        total = 0
        for part in parts:
            total += _text(budget, part)
            budget.fits(total, _JOINED_STRING)
        budget.make(total, _JOINED_STRING)
        return markup_join(parts) if eval_ctx.autoescape else "".join(map(str, parts))


def _make_environment() -> _ChatSandbox:
    env = _ChatSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        optimized=False,
        extensions=[jinja2.ext.loopcontrols, jinja2.ext.do, _GenerationTag],
    )
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["range"] = _bounded_range
    env.globals["lipsum"] = _lipsum
    env.filters["tojson"] = _tojson
    env.filters["sum"] = _sum
    env.filters["join"] = _join
    env.filters = {name: _guarded_filter(name, f) for name, f in env.filters.items()}
    env.tests = {name: _guarded_test(name, cast(Callable[..., Any], f)) for name, f in env.tests.items()}
    env.filters[_ITER] = env.guard_iter
    env.filters[_VALUE] = env.guard_value
    env.filters[_CONCAT] = env.guard_concat
    return env


_ENV = _make_environment()


def compile_template(source: str, limits: Limits) -> jinja2.Template:
    """Compile ``source``: parse and generate code, bounded by the source's length, running none of it."""
    if len(source) > MAX_TEMPLATE_CHARS:
        raise BudgetExceeded(
            words(
                "it is {n} characters long, more than the {most} allowed",
                n=f"{len(source):,}",
                most=f"{MAX_TEMPLATE_CHARS:,}",
            )
        )
    with spending(limits, compiling=True):
        return _ENV.from_string(source)
