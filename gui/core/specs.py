"""Typed declarations of user settings: label, help, default, range or choices, CLI flag.

A setting is declared once, as the default of a dataclass field (``n_ctx: int = IntSpec(...).field()``);
widgets, CLI flags, stored preferences and validation are all built from the declarations that
:func:`specs_of` reads back, so a range or a default cannot drift between them.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from gui.core.words import Text, Words, fixed, message_of, words

__all__ = ["BoolSpec", "ChoiceSpec", "FloatSpec", "IntSpec", "Spec", "specs_of"]

T = TypeVar("T")
_SPEC = "tightfit.spec"


@dataclass(frozen=True, kw_only=True)
class Spec(Generic[T]):
    """What every kind of setting has. ``key`` is the field name, filled in by :func:`specs_of`."""

    label: str  # what the window shows
    help: Text  # tooltip and CLI help
    default: T
    flag: str = ""  # CLI flag, llama.cpp's spelling where it has one; "" for none
    key: str = ""
    panel: bool = True  # whether the settings panel shows a widget for it

    def field(self) -> T:
        """A dataclass field whose default is this spec's and which carries the spec itself."""
        return cast(T, dataclasses.field(default=self.default, metadata={_SPEC: self}))

    def check(self, value: T) -> None:
        """Raise ValueError, in words a user understands, if ``value`` is not allowed."""

    def shown_label(self) -> Words:
        """The label as a message names the setting, translated in the window as the label is."""
        return fixed(self.label, "params")

    def parse(self, value: object) -> T:
        """A value from outside (a settings file, a message, a form): checked and of the right type."""
        raise NotImplementedError


@dataclass(frozen=True, kw_only=True)
class IntSpec(Spec[int]):
    minimum: int
    maximum: int  # static upper bound; a view may narrow it (a model's layer count, its trained context)
    step: int = 1
    log_scale: bool = False  # sliders move in powers of two (context, batch sizes)
    suffix: str = ""

    def clamp(self, value: int, maximum: int | None = None) -> int:
        return max(self.minimum, min(int(value), self.top(maximum)))

    def top(self, maximum: int | None = None) -> int:
        return self.maximum if maximum is None else min(maximum, self.maximum)

    def check(self, value: int, maximum: int | None = None) -> None:
        top = self.top(maximum)
        if not self.minimum <= value <= top:
            raise ValueError(
                words(
                    "{label} must be between {minimum} and {top} (got {value})",
                    label=self.shown_label(),
                    minimum=self.minimum,
                    top=top,
                    value=value,
                )
            )

    def parse(self, value: object) -> int:
        # int() of an infinity raises OverflowError and of a NaN a ValueError of its own wording: test first.
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
        ):
            raise ValueError(
                words(
                    "{label} must be a whole number (got {value})", label=self.shown_label(), value=shown_value(value)
                )
            )
        self.check(int(value))
        return int(value)


@dataclass(frozen=True, kw_only=True)
class FloatSpec(Spec[float]):
    minimum: float
    maximum: float
    step: float = 0.01
    decimals: int = 2
    suffix: str = ""

    def check(self, value: float) -> None:
        if not (math.isfinite(value) and self.minimum <= value <= self.maximum):
            raise ValueError(
                words(
                    "{label} must be between {minimum} and {top} (got {value})",
                    label=self.shown_label(),
                    minimum=f"{self.minimum:g}",
                    top=f"{self.maximum:g}",
                    value=value,
                )
            )

    def parse(self, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(
                words("{label} must be a number (got {value})", label=self.shown_label(), value=shown_value(value))
            )
        try:
            number = float(value)
        except OverflowError:  # an int past float's range (JSON allows any number of digits): check() refuses it
            number = math.inf if value > 0 else -math.inf
        self.check(number)
        return number


@dataclass(frozen=True, kw_only=True)
class ChoiceSpec(Spec[str]):
    choices: tuple[str, ...]

    def _not_a_choice(self, value: object) -> Words:
        return words(
            "{label} must be one of {choices} (got {value})",
            label=self.shown_label(),
            choices=", ".join(self.choices),
            value=shown_value(value),
        )

    def check(self, value: str) -> None:
        if value not in self.choices:
            raise ValueError(self._not_a_choice(value))

    def parse(self, value: object) -> str:
        if not isinstance(value, str):
            raise ValueError(self._not_a_choice(value))
        self.check(value)
        return value


@dataclass(frozen=True, kw_only=True)
class BoolSpec(Spec[bool]):
    def parse(self, value: object) -> bool:
        if not isinstance(value, bool):
            raise ValueError(
                words("{label} must be true or false (got {value})", label=self.shown_label(), value=shown_value(value))
            )
        return value


def shown_value(value: object) -> str:
    """A refused value as a message quotes it: its repr, cut short (it may be a whole pasted file)."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_declared: dict[type, tuple[Spec[Any], ...]] = {}


def specs_of(cls: type) -> tuple[Spec[Any], ...]:
    """The declared settings of a dataclass, in field order, each with its ``key`` filled in."""
    if cls not in _declared:
        _declared[cls] = tuple(
            dataclasses.replace(f.metadata[_SPEC], key=f.name) for f in dataclasses.fields(cls) if _SPEC in f.metadata
        )
    return _declared[cls]


def parse_fields(cls: type[T], data: Mapping[str, Any]) -> T:
    """An instance of a declared dataclass from outside data: unknown keys are ignored, missing ones take
    their defaults, and a value of the wrong type or out of range raises ValueError naming the setting."""
    if not isinstance(data, Mapping):
        raise ValueError(f"expected a mapping of settings (got {type(data).__name__})")
    values = {spec.key: spec.parse(data[spec.key]) for spec in specs_of(cls) if spec.key in data}
    return cls(**values)


# How a switch's value is written in a list (`--mmap on,off`, a Tune grid).
BOOL_WORDS = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}


def parse_value_list(spec: Spec[Any], text: str) -> list[Any]:
    """The values of one comma-separated list, each checked against its declaration, repeats dropped; a
    ValueError that names the flag and the bad item."""
    items = [item.strip() for item in text.split(",")]
    if not any(items):
        raise ValueError(words("{flag}: no value given", flag=spec.flag))
    values: list[Any] = []
    for item in items:
        if not item:
            raise ValueError(words("{flag}: an empty item in {text}", flag=spec.flag, text=shown_value(text)))
        try:
            value = _parse_item(spec, item)
        except ValueError as exc:
            raise ValueError(
                words("{flag}: {why}", flag=spec.flag, why=exc.args[0] if len(exc.args) == 1 else message_of(exc))
            ) from None
        if value not in values:
            values.append(value)
    return values


def _parse_item(spec: Spec[Any], item: str) -> Any:
    value: Any
    if isinstance(spec, IntSpec):
        try:
            value = int(item)
        except ValueError:
            raise ValueError(words("{item} is not a whole number", item=shown_value(item))) from None
    elif isinstance(spec, FloatSpec):
        try:
            value = float(item)
        except ValueError:
            raise ValueError(words("{item} is not a number", item=shown_value(item))) from None
    elif isinstance(spec, BoolSpec):
        if item.lower() not in BOOL_WORDS:
            raise ValueError(words("{item} is not on or off", item=shown_value(item)))
        value = BOOL_WORDS[item.lower()]
    else:
        value = item
    spec.check(value)
    return value
