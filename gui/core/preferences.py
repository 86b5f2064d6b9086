"""Every preference the window keeps between runs, declared once: its key in the settings file, its
default, and how a stored value (from a file anyone could have edited) is read back.

The settings store reads and writes only these; a value that does not parse is dropped with a warning
and the default is used (in a list or a table, only the bad entry is dropped), so a hand-edited or old
file never stops the window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from gui.core.chat_formats import parse_format_name
from gui.core.memory_check import KEEP_LOADS
from gui.core.openai_api import DEFAULT_HOST, DEFAULT_PORT, STRICT_MODEL
from gui.core.params import MARGIN, LoadSettings, NetworkLink
from gui.core.presets import DEFAULT_PRESET, sampling_from_dict, sampling_to_dict
from gui.core.prometheus_text import scrape_urls
from gui.core.protocol import Sampling
from gui.core.specs import ChoiceSpec, FloatSpec, IntSpec, Spec, specs_of
from gui.core.theme import ThemeChoice, parse_choice
from gui.core.words import mark

__all__ = [
    "ALERT_C",
    "ALERT_TEMPERATURE",
    "ALL_PREFERENCES",
    "CAP_WATTS",
    "CHAT_FORMATS",
    "GPU_EXPORTERS",
    "INTERVAL_S",
    "LANGUAGE",
    "LANGUAGES",
    "LAST_SETTINGS",
    "MARGIN_MIB",
    "MODEL_FOLDERS",
    "RPC_LINK",
    "SAMPLE_INTERVAL",
    "SAMPLING_PRESET",
    "SAMPLING_PRESETS",
    "SERVE_HOST",
    "SERVE_PORT",
    "SERVE_PORT_NUMBER",
    "SERVE_REMOTE",
    "THEME",
    "Preference",
]

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: each is declared once
class Preference(Generic[T]):
    """One stored preference. What a widget bound to it (gui/ui/preference_binding.py) shows follows from
    the declaration: one of ``choices`` in a list, a number in a spin box (its range from ``spec``), a switch
    for a bool, text for a string."""

    key: str  # the key in settings.json
    default: T
    parse: Callable[[Any], T]  # stored JSON -> value; raises ValueError or TypeError on bad data
    dump: Callable[[T], Any] = lambda value: value  # value -> JSON
    choices: tuple[T, ...] = ()  # for a preference that is one of a few values: all of them
    spec: Spec[T] | None = None  # the setting's declaration (range, step, suffix), for one that has one

    @staticmethod
    def of(spec: Spec[U]) -> Preference[U]:
        """The preference a declared setting is kept as: its key, default and checks are the declaration's."""
        if not spec.key:
            raise ValueError(f"{spec.label!r} has no key to be stored under")
        choices = spec.choices if isinstance(spec, ChoiceSpec) else ()
        return Preference(spec.key, spec.default, spec.parse, choices=cast(tuple[U, ...], choices), spec=spec)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    # A NUL is never typed by a user, and a path holding one makes every file call raise ValueError.
    if "\0" in value:
        raise ValueError("text holds a NUL character")
    return value


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {type(value).__name__}")
    return value


def _strings(value: Any) -> list[str]:
    """A list of text where a bad entry is skipped rather than losing the whole list."""
    if not isinstance(value, list):
        raise ValueError("expected a list of strings")
    good = []
    for item in value:
        try:
            good.append(_string(item))
        except ValueError:
            continue
    return list(dict.fromkeys(good))  # duplicates dropped, order kept


def _table(parse_one: Callable[[Any], T]) -> Callable[[Any], dict[str, T]]:
    """A name -> value table where one bad entry is skipped rather than losing the whole table."""

    def parse(value: Any) -> dict[str, T]:
        if not isinstance(value, dict):
            raise ValueError("expected an object")
        table: dict[str, T] = {}
        for name, item in value.items():
            try:
                table[_string(name)] = parse_one(item)
            except (ValueError, TypeError):
                continue
        return table

    return parse


def _dump_table(dump_one: Callable[[T], Any]) -> Callable[[dict[str, T]], Any]:
    return lambda table: {name: dump_one(value) for name, value in table.items()}


# The power cap the Monitor tab offers: 200 W takes a blower-cooled V100 from past 80 °C to about
# 70 °C for about 5 % fewer tokens/s; the card's own limits are checked when it is applied.
CAP = IntSpec(
    key="cap_watts",
    label=mark("Power cap", "params"),
    minimum=1,
    maximum=9999,
    default=200,
    suffix=" W",
    help=mark("Power limit to apply; checked against this card's minimum and maximum", "params"),
)

# The monitor's own settings.
ALERT_TEMPERATURE = FloatSpec(
    key="alert_c",
    label=mark("Alert temperature", "params"),
    minimum=30.0,
    maximum=120.0,
    step=1.0,
    decimals=0,
    default=83.0,
    suffix=" °C",
    help=mark("Alert when the GPU reaches this temperature", "params"),
)
SAMPLE_INTERVAL = FloatSpec(
    key="interval_s",
    label=mark("Sampling interval", "params"),
    minimum=0.25,
    maximum=5.0,
    step=0.25,
    default=1.0,
    suffix=" s",
    help=mark("How often the GPU and the host are read (0.25 to 5 s)", "params"),
)

# Where the window serves its model to other programs (the API key is not kept: it is typed each session).
SERVE_PORT = IntSpec(
    key="serve_port",
    label=mark("Port", "params"),
    minimum=0,
    maximum=65535,
    default=DEFAULT_PORT,
    help=mark("The port the API listens on (0: a free one, said once listening)", "params"),
)
SERVE_HOST: Preference[str] = Preference("serve_host", DEFAULT_HOST, _string)
SERVE_PORT_NUMBER: Preference[int] = Preference.of(SERVE_PORT)
SERVE_REMOTE: Preference[bool] = Preference("serve_allow_remote", False, _boolean)
SERVE_STRICT_MODEL: Preference[bool] = Preference.of(STRICT_MODEL)

# Light or dark window: follow the desktop ("system"), or one chosen (gui/core/theme.py has both palettes).
THEME: Preference[ThemeChoice] = Preference(
    "theme", ThemeChoice.SYSTEM, parse_choice, lambda choice: choice.value, choices=tuple(ThemeChoice)
)

# The window's language: "system" follows the locale; the others are the translations shipped (resources/i18n).
LANGUAGES = ("system", "en", "zh_CN")


def _language(value: Any) -> str:
    if value not in LANGUAGES:
        raise ValueError(f"expected one of {', '.join(LANGUAGES)}")
    return str(value)


LANGUAGE: Preference[str] = Preference("language", "system", _language, choices=LANGUAGES)


def _network_link(value: Any) -> NetworkLink:
    if not isinstance(value, dict):
        raise ValueError("expected an object")
    return NetworkLink(**{s.key: s.parse(value[s.key]) for s in specs_of(NetworkLink) if s.key in value})


# The network to the RPC workers, as the user last stated it (the workers themselves are a load setting).
RPC_LINK: Preference[NetworkLink] = Preference(
    "rpc_link", NetworkLink(), _network_link, lambda link: {s.key: getattr(link, s.key) for s in specs_of(NetworkLink)}
)
# Other machines' GPU exporters the monitor reads (dcgm-exporter, nvitop-exporter): their URLs, each checked.
GPU_EXPORTERS: Preference[list[str]] = Preference("gpu_exporters", [], scrape_urls)
MODEL_FOLDERS: Preference[list[str]] = Preference("model_folders", [], _strings)
SAMPLING_PRESETS: Preference[dict[str, Sampling]] = Preference(
    "sampling_presets", {}, _table(sampling_from_dict), _dump_table(sampling_to_dict)
)
SAMPLING_PRESET: Preference[str] = Preference("sampling_preset", DEFAULT_PRESET, _string)
MARGIN_MIB: Preference[int] = Preference.of(MARGIN)
CAP_WATTS: Preference[int] = Preference.of(CAP)
ALERT_C: Preference[float] = Preference.of(ALERT_TEMPERATURE)
INTERVAL_S: Preference[float] = Preference.of(SAMPLE_INTERVAL)
# Per model file name: the settings it was last loaded with.
LAST_SETTINGS: Preference[dict[str, LoadSettings]] = Preference(
    "last_settings",
    {},
    _table(lambda data: LoadSettings.from_dict(data).validated()),
    _dump_table(LoadSettings.to_dict),
)
# Per model file name: the chat format the user picked for it (a name in gui.core.chat_formats.FORMATS). A model
# without an entry is formatted as the engine chose at load.
CHAT_FORMATS: Preference[dict[str, str]] = Preference("chat_formats", {}, _table(parse_format_name))


def _node(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1024:
        raise ValueError("expected a NUMA node number")
    return value


# Per machine (its /etc/machine-id, so a settings folder shared between machines pins each one right): the
# NUMA node the engine is pinned to, the one its GPU hangs off, as the Doctor's fix set it.
NUMA_PINS: Preference[dict[str, int]] = Preference("numa_pins", {}, _table(_node))


def _differences(value: Any) -> list[float]:
    if not isinstance(value, list) or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise ValueError("expected a list of numbers")
    return [float(v) for v in value if abs(v) < 1 << 20][-KEEP_LOADS:]


# Per card, driver and engine build (gui/core/memory_check.py): what loads measured beyond the plan, MiB.
MEMORY_CHECKS: Preference[dict[str, list[float]]] = Preference("memory_checks", {}, _table(_differences))

ALL_PREFERENCES: Mapping[str, Preference[Any]] = (
    {p.key: p for p in (MODEL_FOLDERS, SAMPLING_PRESETS, SAMPLING_PRESET, MARGIN_MIB, CAP_WATTS, ALERT_C, INTERVAL_S)}
    | {
        p.key: p
        for p in (
            LAST_SETTINGS,
            CHAT_FORMATS,
            NUMA_PINS,
            MEMORY_CHECKS,
            RPC_LINK,
            GPU_EXPORTERS,
            SERVE_HOST,
            SERVE_PORT_NUMBER,
            SERVE_REMOTE,
        )
    }
    | {THEME.key: THEME, LANGUAGE.key: LANGUAGE}
)
