"""A portable tuning card: the load settings tuned for one model file, with the file's SHA-256 so they are
applied only to that file, and what they were measured at (optional).

A card comes from outside (a forum post, a colleague), so reading one trusts nothing: the text is at most
:data:`MAX_CARD_BYTES`, every field is checked for its type and range (the settings through
:meth:`LoadSettings.from_dict` and :meth:`LoadSettings.validated`, the same checks as the settings file),
and every refusal is one line naming the field. Hashing the model file is I/O and lives in
``gui/services/tuning_card.py``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from gui.core.params import LoadSettings
from gui.core.words import Text, Words, english, message_of, words

__all__ = [
    "CARD_FORMAT",
    "CARD_VERSION",
    "MAX_CARD_BYTES",
    "OFF_MACHINE_SETTINGS",
    "CardError",
    "CardFacts",
    "CardMismatch",
    "TuningCard",
    "card_to_json",
    "check_model",
    "off_machine",
    "parse_card",
    "without_off_machine",
]

CARD_FORMAT = "tightfit-tuning-card"
CARD_VERSION = 1
MAX_CARD_BYTES = 1 << 20  # a card is a few hundred bytes; anything near this is not one
MAX_TEXT = 200  # card, driver and engine descriptions
MAX_FILE_NAME = 255  # a file name, as most file systems bound it
MAX_MEASURE = 1e9  # tok/s and MiB: far past any real reading, short of overflowing anything
_SHA256 = re.compile(r"[0-9a-f]{64}")

# Load settings that send the model's weights, the prompts and the replies to other machines (a host or an
# address): a card's values for them are applied only when the user says yes to them, apart from the rest.
OFF_MACHINE_SETTINGS: tuple[str, ...] = ("rpc_servers",)


class CardError(ValueError):
    """A file that is not a usable tuning card; the message is one line."""


class CardMismatch(CardError):
    """A valid card for another model file."""


@dataclass(frozen=True)
class CardFacts:
    """What a card says besides the model and settings, each optional: where and how fast they ran."""

    card_name: str | None = None  # the GPU the settings were tuned on ("Tesla V100-PCIE-16GB")
    driver: str | None = None  # its NVIDIA driver version
    engine_build: str | None = None  # the llama.cpp build ("llama-cpp-python 0.3.36")
    gen_tok_s: float | None = None  # measured generation speed
    prompt_tok_s: float | None = None  # measured prompt processing speed
    vram_mib: float | None = None  # memory the engine used on the card
    ram_mib: float | None = None  # host memory the engine used


@dataclass(frozen=True)
class TuningCard:
    model_file: str  # the file name only: where it lives differs between machines
    model_sha256: str  # 64 lowercase hex digits
    settings: LoadSettings
    model_bytes: int | None = None  # the file's size: a different size is a different file, without hashing
    card_name: str | None = None  # as CardFacts
    driver: str | None = None
    engine_build: str | None = None
    gen_tok_s: float | None = None
    prompt_tok_s: float | None = None
    vram_mib: float | None = None
    ram_mib: float | None = None

    @property
    def facts(self) -> CardFacts:
        return CardFacts(**{f.name: getattr(self, f.name) for f in fields(CardFacts)})


def card_to_json(card: TuningCard) -> str:
    """The card as the JSON text of a card file; fields without a value are left out. Checked as a card
    read from outside is, so that what is written can be read back."""
    data: dict[str, Any] = {"format": CARD_FORMAT, "version": CARD_VERSION}
    for f in fields(card):
        value = getattr(card, f.name)
        if value is not None:
            data[f.name] = value.to_dict() if f.name == "settings" else value
    parse_object(data)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def parse_card(data: bytes | str) -> TuningCard:
    """A card from untrusted text: a CardError (one line) for anything but a well-formed card."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_CARD_BYTES:
        raise CardError(
            words(
                "not a tuning card: larger than {most} KiB ({size} bytes)",
                most=MAX_CARD_BYTES // 1024,
                size=f"{len(raw):,}",
            )
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CardError(words("not a tuning card: not UTF-8 text")) from None
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        raise CardError(words("not a tuning card: nested too deeply")) from None
    except CardError:
        raise
    except ValueError as exc:  # JSONDecodeError, and an integer of more digits than Python converts
        raise CardError(
            words("not a tuning card: not JSON ({reason})", reason=_one_line(message_of(exc), 80))
        ) from None
    return parse_object(value)


def _no_constant(name: str) -> Any:
    raise CardError(words("not a tuning card: {name} is not a number JSON allows", name=name))


def parse_object(value: Any) -> TuningCard:
    if not isinstance(value, dict):
        raise CardError(words("not a tuning card: a JSON {kind}, not an object", kind=type(value).__name__))
    if value.get("format") != CARD_FORMAT:
        raise CardError(
            words(
                "not a tuning card: its format is {given}, not {format}",
                given=_show(value.get("format")),
                format=repr(CARD_FORMAT),
            )
        )
    version = value.get("version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise CardError(words("tuning card: version must be a whole number (got {version})", version=_show(version)))
    if version > CARD_VERSION:
        raise CardError(
            words(
                "tuning card version {version} is from a newer Tightfit (this one reads {reads})",
                version=version,
                reads=CARD_VERSION,
            )
        )
    if version < 1:
        raise CardError(words("tuning card: version must be 1 or more (got {version})", version=version))
    model_file = _text(value, "model_file", MAX_FILE_NAME, required=True)
    assert model_file is not None
    if "/" in model_file or "\\" in model_file or model_file in (".", ".."):
        raise CardError(
            words("tuning card: model_file must be a file name, not a path (got {value})", value=_show(model_file))
        )
    sha = value.get("model_sha256")
    if not isinstance(sha, str) or not _SHA256.fullmatch(sha.lower()):
        raise CardError(
            words("tuning card: model_sha256 must be 64 hexadecimal digits (got {value})", value=_show(sha))
        )
    settings = value.get("settings")
    if not isinstance(settings, Mapping):
        raise CardError(words("tuning card: settings must be an object (got {value})", value=_show(settings)))
    try:
        load = LoadSettings.from_dict(settings).validated()
    except (ValueError, TypeError) as exc:
        reason = message_of(exc)  # a sentence of the settings' checks, translatable, unless a value makes it long
        bounded = reason if isinstance(reason, Words) and _one_line(reason) == reason else _one_line(reason)
        raise CardError(words("tuning card: settings: {reason}", reason=bounded)) from None
    size = value.get("model_bytes")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or not 0 < size < 1 << 50):
        raise CardError(words("tuning card: model_bytes must be a file size in bytes (got {value})", value=_show(size)))
    return TuningCard(
        model_file,
        sha.lower(),
        load,
        size,
        card_name=_text(value, "card_name", MAX_TEXT),
        driver=_text(value, "driver", MAX_TEXT),
        engine_build=_text(value, "engine_build", MAX_TEXT),
        gen_tok_s=_measure(value, "gen_tok_s"),
        prompt_tok_s=_measure(value, "prompt_tok_s"),
        vram_mib=_measure(value, "vram_mib"),
        ram_mib=_measure(value, "ram_mib"),
    )


def _text(data: Mapping[str, Any], key: str, limit: int, required: bool = False) -> str | None:
    value = data.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or not value.strip():
        raise CardError(words("tuning card: {key} must be text (got {value})", key=key, value=_show(value)))
    if len(value) > limit:
        raise CardError(words("tuning card: {key} is longer than {limit} characters", key=key, limit=limit))
    if not value.isprintable():
        raise CardError(words("tuning card: {key} has a control character in it", key=key))
    return value


def _measure(data: Mapping[str, Any], key: str) -> float | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CardError(words("tuning card: {key} must be a number (got {value})", key=key, value=_show(value)))
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not (math.isfinite(number) and 0 <= number <= MAX_MEASURE):
        raise CardError(
            words(
                "tuning card: {key} must be between 0 and {most} (got {value})",
                key=key,
                most=f"{MAX_MEASURE:g}",
                value=_show(value),
            )
        )
    return number


def off_machine(card_settings: LoadSettings, current: LoadSettings) -> dict[str, str]:
    """The settings of a card that would send data to machines the current settings do not: each of
    OFF_MACHINE_SETTINGS the card sets to something other than the current value ({} when there are none)."""
    changed: dict[str, str] = {}
    for key in OFF_MACHINE_SETTINGS:
        value = getattr(card_settings, key)
        if value and value != getattr(current, key):
            changed[key] = value
    return changed


def without_off_machine(card_settings: LoadSettings, current: LoadSettings) -> LoadSettings:
    """The card's settings with the current values kept for every setting that sends data off this machine."""
    return card_settings.with_values(**{key: getattr(current, key) for key in OFF_MACHINE_SETTINGS})


def check_model(card: TuningCard, sha256: str, file_name: str | None = None) -> None:
    """Raise CardMismatch (one line) unless ``sha256`` is the card's model's."""
    if sha256.lower() == card.model_sha256:
        return
    figures = {"card_file": _show(card.model_file), "card_sha": card.model_sha256[:16], "sha": sha256.lower()[:16]}
    if file_name:
        raise CardMismatch(
            words(
                "the model's SHA-256 does not match: the card is for {card_file} (SHA-256 {card_sha}…), "
                "this file {file} is {sha}…",
                file=_show(file_name),
                **figures,
            )
        )
    raise CardMismatch(
        words(
            "the model's SHA-256 does not match: the card is for {card_file} (SHA-256 {card_sha}…), "
            "this file is {sha}…",
            **figures,
        )
    )


def _one_line(text: Text, limit: int = 200) -> str:
    line = " ".join(english(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _show(value: Any) -> Text:
    """A value from a card, for a message: its repr, bounded."""
    if isinstance(value, dict | list):
        return words("a JSON {kind}", kind=type(value).__name__)
    return _one_line(repr(value), 60)
