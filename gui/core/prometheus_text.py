"""Prometheus's text exposition format, read from an untrusted server, and the URL such a server is asked at.

A GPU exporter on another machine (NVIDIA's dcgm-exporter, nvitop-exporter) answers ``GET /metrics`` with lines
such as::

    # HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
    # TYPE DCGM_FI_DEV_GPU_TEMP gauge
    DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-…",modelName="Tesla P40",Hostname="gpu-box"} 61 1700000000000

``parse`` reads them into ``Series`` (name, labels, value, optional timestamp in ms). Everything is bounded: the
body's size, the number of lines and of series kept, a line's length, the labels per series and a label value's
length. Comments, HELP and TYPE lines and blank lines are skipped; label values keep their escapes' meaning
(``\\\\``, ``\\"``, ``\\n``); values are decimal numbers or NaN, +Inf, -Inf. A line that does not read is counted
and skipped, with the first few said in words (``Exposition.problems``); a body that is not text at all (NUL
bytes, not UTF-8) raises ``ExpositionError``. Pure Python: no Qt, no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit, urlunsplit

from gui.core.words import Text, Words, message_of, words

__all__ = [
    "MAX_BODY_BYTES",
    "MAX_EXPORTERS",
    "MAX_LINES",
    "MAX_LINE_CHARS",
    "MAX_SERIES",
    "Exposition",
    "ExpositionError",
    "Series",
    "parse",
    "parse_value",
    "scrape_url",
    "scrape_urls",
]

MAX_BODY_BYTES = 4 << 20  # a dcgm-exporter with every field on eight GPUs says well under 1 MiB
MAX_LINES = 200_000
MAX_SERIES = 20_000  # kept (of the names asked for); the rest is counted as cut
MAX_LINE_CHARS = 16_384
MAX_LABELS = 64  # per series
MAX_LABEL_VALUE_CHARS = 1_024
MAX_PROBLEMS_SAID = 3  # lines that did not read, said by their number and why; the rest counted
_VALUE_CHARS = 64

_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_LABEL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Decimal numbers as Go's ParseFloat reads them (no hex, no digit separators), and Prometheus's specials.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_SPECIALS = {"nan": math.nan, "+inf": math.inf, "inf": math.inf, "-inf": -math.inf}
_TIMESTAMP = re.compile(r"-?\d{1,19}")


class ExpositionError(ValueError):
    """The body is not Prometheus text at all (binary, not UTF-8, too large); one line of words."""


@dataclass(frozen=True)
class Series:
    name: str
    labels: Mapping[str, str]
    value: float  # NaN and ±Inf as the server said them
    timestamp_ms: int | None = None


@dataclass(frozen=True)
class Exposition:
    series: tuple[Series, ...]
    lines: int = 0  # lines read
    bad_lines: int = 0  # lines that did not read, skipped
    cut: int = 0  # series beyond MAX_SERIES, and lines beyond MAX_LINES, not read
    problems: tuple[Words, ...] = field(default=())  # in words, for the user: the first bad lines, the cut

    def named(self, name: str) -> tuple[Series, ...]:
        return tuple(s for s in self.series if s.name == name)


def parse_value(text: str) -> float:
    """A sample's value: a decimal number, NaN, +Inf or -Inf (any case); ValueError otherwise."""
    if len(text) > _VALUE_CHARS:
        raise ValueError(words("the value is longer than {n} characters", n=_VALUE_CHARS))
    special = _SPECIALS.get(text.lower())
    if special is not None:
        return special
    if not _NUMBER.fullmatch(text):
        raise ValueError(words("{value} is not a number", value=_shown(text)))
    return float(text)


def parse(
    body: bytes | str,
    names: Collection[str] | None = None,
    *,
    max_bytes: int = MAX_BODY_BYTES,
    max_lines: int = MAX_LINES,
    max_series: int = MAX_SERIES,
) -> Exposition:
    """The series of a text exposition (only those ``names``, when given). Raises ExpositionError when the body is
    larger than ``max_bytes`` or is not text; a line that does not read is skipped and counted."""
    size = len(body)
    if size > max_bytes:
        raise ExpositionError(words("the answer is larger than {mib} MiB", mib=f"{max_bytes / (1 << 20):g}"))
    if isinstance(body, bytes):
        if b"\0" in body:
            raise ExpositionError(words("the answer is binary data, not Prometheus text"))
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ExpositionError(
                words("the answer is not UTF-8 text (byte {offset} is not)", offset=exc.start)
            ) from None
    else:
        if "\0" in body:
            raise ExpositionError(words("the answer is binary data, not Prometheus text"))
        text = body
    wanted = frozenset(names) if names is not None else None
    series: list[Series] = []
    bad: list[tuple[int, Text]] = []
    bad_count = cut = read = 0
    start = 0
    number = 0
    while start <= len(text):
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        number += 1
        if number > max_lines:
            cut += text.count("\n", start) + 1
            break
        line_start, start = start, end + 1
        if end - line_start > MAX_LINE_CHARS:
            bad_count += 1
            bad.append((number, words("longer than {n} characters", n=MAX_LINE_CHARS)))
            continue
        line = text[line_start:end].strip()
        read += 1
        if not line or line.startswith("#"):
            continue
        name_match = _NAME.match(line)
        if name_match is None:
            bad_count += 1
            bad.append((number, words("it does not start with a metric name")))
            continue
        name = name_match.group()
        if wanted is not None and name not in wanted:
            continue
        try:
            one = _series(line, name_match.end(), name)
        except ValueError as exc:
            bad_count += 1
            bad.append((number, message_of(exc)))
            continue
        if len(series) >= max_series:
            cut += 1
            continue
        series.append(one)
    problems = [
        words("line {line} was skipped: {why}", line=line_number, why=why)
        for line_number, why in bad[:MAX_PROBLEMS_SAID]
    ]
    if bad_count > MAX_PROBLEMS_SAID:
        problems.append(words("{n} more lines were skipped", n=bad_count - MAX_PROBLEMS_SAID))
    if cut:
        problems.append(
            words(
                "{n} series or lines past the first {series} series or {lines} lines were not read",
                n=cut,
                series=max_series,
                lines=max_lines,
            )
        )
    return Exposition(tuple(series), read, bad_count, cut, tuple(problems))


def _series(line: str, at: int, name: str) -> Series:
    labels: dict[str, str] = {}
    if at < len(line) and line[at] == "{":
        labels, at = _labels(line, at + 1)
    rest = line[at:].split()
    if not rest or (at < len(line) and not line[at].isspace()):
        raise ValueError(words("no value after {name}", name=_shown(name)))
    if len(rest) > 2:
        raise ValueError(words("more than a value and a timestamp after {name}", name=_shown(name)))
    value = parse_value(rest[0])
    timestamp = None
    if len(rest) == 2:
        if not _TIMESTAMP.fullmatch(rest[1]):
            raise ValueError(
                words("the timestamp {value} is not a whole number of milliseconds", value=_shown(rest[1]))
            )
        timestamp = int(rest[1])
    return Series(name, labels, value, timestamp)


def _labels(line: str, at: int) -> tuple[dict[str, str], int]:
    """The labels after "{" up to the closing "}"; returns them and the position after the brace."""
    labels: dict[str, str] = {}
    n = len(line)
    while True:
        while at < n and line[at] in " \t":
            at += 1
        if at < n and line[at] == "}":
            return labels, at + 1
        match = _LABEL_NAME.match(line, at)
        if match is None:
            raise ValueError(words("a label name is missing or malformed"))
        label = match.group()
        at = match.end()
        while at < n and line[at] in " \t":
            at += 1
        if line[at : at + 2] != '="':
            raise ValueError(words("the label {label} has no quoted value", label=_shown(label)))
        at += 2
        value: list[str] = []
        while True:
            if at >= n:
                raise ValueError(words("the value of the label {label} is not closed", label=_shown(label)))
            char = line[at]
            if char == '"':
                at += 1
                break
            if char == "\\":
                escaped = line[at + 1 : at + 2]
                value.append({"n": "\n", "\\": "\\", '"': '"'}.get(escaped, "\\" + escaped))
                at += 2
            else:
                value.append(char)
                at += 1
            if len(value) > MAX_LABEL_VALUE_CHARS:
                raise ValueError(
                    words(
                        "the label {label} is longer than {n} characters", label=_shown(label), n=MAX_LABEL_VALUE_CHARS
                    )
                )
        if label in labels:
            raise ValueError(words("the label {label} is given twice", label=_shown(label)))
        if len(labels) >= MAX_LABELS:
            raise ValueError(words("more than {n} labels", n=MAX_LABELS))
        labels[label] = "".join(value)
        while at < n and line[at] in " \t":
            at += 1
        if at < n and line[at] == ",":
            at += 1
        elif at < n and line[at] == "}":
            continue
        else:
            raise ValueError(words("the labels have no closing brace"))


def _shown(text: str) -> str:
    """Server text in a message: quoted, control characters escaped, at most 40 characters."""
    return repr(text[:40] + ("…" if len(text) > 40 else ""))


# --- where an exporter is ---------------------------------------------------------------------------------

MAX_EXPORTERS = 16
MAX_URL_CHARS = 2_048
DEFAULT_PATH = "/metrics"  # where dcgm-exporter and nvitop-exporter serve their text


def scrape_url(text: str) -> str:
    """An exporter's URL as the user typed it, checked: http or https, a host, a port that is a number, no
    user name or password (the list is kept in the settings file as it is). A URL without a path gets
    /metrics. ValueError in words otherwise."""
    if not isinstance(text, str):
        raise ValueError(words("an exporter's URL must be text such as http://gpu-box:9400/metrics"))
    typed = text.strip()
    if not typed:
        raise ValueError(words("no URL given: type one such as http://gpu-box:9400/metrics"))
    if len(typed) > MAX_URL_CHARS:
        raise ValueError(words("the URL is longer than {n} characters", n=MAX_URL_CHARS))
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in typed):
        raise ValueError(words("the URL {url} holds spaces or control characters", url=_shown(typed)))
    try:
        parts = urlsplit(typed)
        port = parts.port
    except ValueError:
        raise ValueError(words("{url} is not a URL with a valid port", url=_shown(typed))) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        if "://" not in typed:
            raise ValueError(
                words("{url} has no http:// or https:// in front (e.g. http://{url}/metrics)", url=typed[:80])
            )
        raise ValueError(
            words("{url}: only http and https are read, not {scheme}", url=_shown(typed), scheme=_shown(scheme))
        )
    if not parts.hostname:
        raise ValueError(words("{url} names no host", url=_shown(typed)))
    if parts.username is not None or parts.password is not None:
        raise ValueError(
            words("{url} holds a user name or password, which would be kept in the settings file", url=_shown(typed))
        )
    if port == 0:
        raise ValueError(words("{url}: the port must be a number from 1 to 65535", url=_shown(typed)))
    path = parts.path if parts.path not in ("", "/") else DEFAULT_PATH
    return urlunsplit((scheme, parts.netloc.lower(), path, parts.query, ""))


def scrape_urls(value: object) -> list[str]:
    """A stored list of exporter URLs: each checked, a bad or repeated one dropped, at most MAX_EXPORTERS."""
    if not isinstance(value, list):
        raise ValueError("expected a list of URLs")
    good: list[str] = []
    for item in value:
        try:
            url = scrape_url(item)
        except ValueError:
            continue
        if url not in good:
            good.append(url)
    return good[:MAX_EXPORTERS]
