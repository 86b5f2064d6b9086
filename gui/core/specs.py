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

__all__ = ["BoolSpec", "ChoiceSpec", "FloatSpec", "IntSpec", "Spec", "specs_of"]

T = TypeVar("T")
_SPEC = "tightfit.spec"


@dataclass(frozen=True, kw_only=True)
class Spec(Generic[T]):
    """What every kind of setting has. ``key`` is the field name, filled in by :func:`specs_of`."""

    label: str  # what the window shows
    help: str  # tooltip and CLI help
    default: T
    flag: str = ""  # CLI flag, llama.cpp's spelling where it has one; "" for none
    key: str = ""
    panel: bool = True  # whether the settings panel shows a widget for it

    def field(self) -> T:
        """A dataclass field whose default is this spec's and which carries the spec itself."""
        return cast(T, dataclasses.field(default=self.default, metadata={_SPEC: self}))

    def check(self, value: T) -> None:
        """Raise ValueError, in words a user understands, if ``value`` is not allowed."""

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
            raise ValueError(f"{self.label} must be between {self.minimum} and {top} (got {value})")

    def parse(self, value: object) -> int:
        # int() of an infinity raises OverflowError and of a NaN a ValueError of its own wording: test first.
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (isinstance(value, float) and not value.is_integer())
        ):
            raise ValueError(f"{self.label} must be a whole number (got {value!r})")
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
            raise ValueError(f"{self.label} must be between {self.minimum:g} and {self.maximum:g} (got {value})")

    def parse(self, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{self.label} must be a number (got {value!r})")
        try:
            number = float(value)
        except OverflowError:  # an int past float's range (JSON allows any number of digits): check() refuses it
            number = math.inf if value > 0 else -math.inf
        self.check(number)
        return number


@dataclass(frozen=True, kw_only=True)
class ChoiceSpec(Spec[str]):
    choices: tuple[str, ...]

    def check(self, value: str) -> None:
        if value not in self.choices:
            raise ValueError(f"{self.label} must be one of {', '.join(self.choices)} (got {value!r})")

    def parse(self, value: object) -> str:
        if not isinstance(value, str):
            raise ValueError(f"{self.label} must be one of {', '.join(self.choices)} (got {value!r})")
        self.check(value)
        return value


@dataclass(frozen=True, kw_only=True)
class BoolSpec(Spec[bool]):
    def parse(self, value: object) -> bool:
        if not isinstance(value, bool):
            raise ValueError(f"{self.label} must be true or false (got {value!r})")
        return value


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
        raise ValueError(f"{spec.flag}: no value given")
    values: list[Any] = []
    for item in items:
        if not item:
            raise ValueError(f"{spec.flag}: an empty item in {text!r}")
        try:
            value = _parse_item(spec, item)
        except ValueError as exc:
            raise ValueError(f"{spec.flag}: {exc}") from None
        if value not in values:
            values.append(value)
    return values


def _parse_item(spec: Spec[Any], item: str) -> Any:
    value: Any
    if isinstance(spec, IntSpec):
        try:
            value = int(item)
        except ValueError:
            raise ValueError(f"{item!r} is not a whole number") from None
    elif isinstance(spec, FloatSpec):
        try:
            value = float(item)
        except ValueError:
            raise ValueError(f"{item!r} is not a number") from None
    elif isinstance(spec, BoolSpec):
        if item.lower() not in BOOL_WORDS:
            raise ValueError(f"{item!r} is not on or off")
        value = BOOL_WORDS[item.lower()]
    else:
        value = item
    spec.check(value)
    return value
