"""A power-cap sweep, the pure part: which caps to try, what a user typed, what each cap measured, and
which cap to keep.

At each cap the card decodes a fixed workload; after a warm-up (discarded) the samples taken while the
measured tokens were decoded become one row: tokens/s, mean power, tokens per joule, the temperature at
the end, the mean SM clock and the share of the samples in each clock-event ("throttle") reason. The
recommendation is the lowest cap whose speed is within a chosen loss of the best row's (5% by default):
the knee differs per card (a 3090 loses ~5% at 330 W but ~34% at 230 W), which is why it is measured.

Caps are whole watts, as the privileged helper takes them, within the card's own constraints.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gui.core.gpu_sample import GpuSample
from gui.core.words import Text, english, mark, words

__all__ = [
    "DEFAULT_LOSS_PCT",
    "DEFAULT_STEPS",
    "MAX_CAPS",
    "SIMULATED_NOTE",
    "CapLimits",
    "Recommendation",
    "SweepResult",
    "SweepRow",
    "Window",
    "aggregate",
    "check_caps",
    "check_loss",
    "default_caps",
    "parse_caps",
    "recommend",
    "row_cells",
    "table_header",
]

DEFAULT_STEPS = 5  # the default list: 4-6 caps from the card's minimum to its default limit
MIN_STEPS, MAX_STEPS = 4, 6
MAX_CAPS = 12  # each cap takes minutes on a real card; more than this is a typing mistake, not a sweep
DEFAULT_LOSS_PCT = 5.0
LIST_EXAMPLE = words("{caps} or {range}", caps="150,175,200", range="150-250/25")


@dataclass(frozen=True)
class CapLimits:
    """What the card accepts, in whole watts: a cap must lie in [min_w, max_w]; default_w is what it boots with."""

    min_w: int
    max_w: int
    default_w: int

    @classmethod
    def from_sample(cls, sample: GpuSample) -> CapLimits:
        """From a reading of the card; ValueError (one line) where it cannot be capped."""
        if sample.lost:
            raise ValueError(words("the GPU fell off the bus; its power limit cannot be set now"))
        if sample.power_min_w is None or sample.power_max_w is None:
            why = sample.errors.get("power_min_w") or words("the driver reports no power-limit range")
            raise ValueError(words("this GPU's power limit cannot be changed ({why})", why=why))
        low, high = math.ceil(sample.power_min_w), math.floor(sample.power_max_w)
        if low > high or low <= 0:
            raise ValueError(
                words(
                    "this GPU reports an unusable power-limit range ({low}-{high} W)",
                    low=f"{sample.power_min_w:g}",
                    high=high,
                )
            )
        default = sample.power_default_w if sample.power_default_w is not None else sample.power_max_w
        return cls(low, high, min(max(_half_up(default), low), high))

    def describe(self) -> Text:
        return words("{low}-{high} W, default {default} W", low=self.min_w, high=self.max_w, default=self.default_w)


def _half_up(value: float) -> int:
    # Not round(): banker's rounding would send 1.5 and 2.5 both to 2, and two steps could become one.
    return math.floor(value + 0.5)


def default_caps(limits: CapLimits, steps: int = DEFAULT_STEPS) -> tuple[int, ...]:
    """`steps` caps (4-6) evenly from the card's minimum to its default limit, in whole watts, ascending.
    Inner steps are rounded to 5 W where they are at least 10 W apart (150, 190, 225, 265, 300 for a V100
    SXM2), else to 1 W; a range narrower than the steps gives one cap per watt."""
    if not MIN_STEPS <= steps <= MAX_STEPS:
        raise ValueError(
            words("a default sweep has {low} to {high} steps (got {steps})", low=MIN_STEPS, high=MAX_STEPS, steps=steps)
        )
    low = limits.min_w
    high = min(max(limits.default_w, low), limits.max_w)
    span = high - low
    if span <= 0:
        return (high,)
    count = min(steps, span + 1)
    spacing = span / (count - 1)
    grid = 5 if spacing >= 10 else 1
    inner = (low + spacing * i for i in range(1, count - 1))
    caps = {low, high, *(grid * _half_up(value / grid) for value in inner)}
    return tuple(sorted(caps))


def parse_caps(text: str, limits: CapLimits, max_caps: int = MAX_CAPS) -> tuple[int, ...]:
    """A user's list of caps: whole watts separated by commas, and ranges START-END/STEP (END included where
    a step lands on it), e.g. "150,175,200" or "150-250/25". Ascending, without repeats, each within the
    card's constraints; otherwise a ValueError of one line that says what is wrong."""
    if not text.strip():
        raise ValueError(_NO_CAPS)
    caps: set[int] = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise ValueError(
                words(
                    "an empty item in the cap list {text}: list whole watts, e.g. {example}",
                    text=repr(text.strip()),
                    example=LIST_EXAMPLE,
                )
            )
        if "/" in item or "-" in item.lstrip("-"):
            caps.update(_parse_range(item, max_caps))
        else:
            caps.add(_parse_watts(item))
        if len(caps) > max_caps:
            break
    return check_caps(caps, limits, max_caps)


def check_caps(caps: Iterable[int], limits: CapLimits, max_caps: int = MAX_CAPS) -> tuple[int, ...]:
    """Caps against the card's constraints: ascending and distinct, or a ValueError of one line."""
    chosen = sorted(set(caps))
    if not chosen:
        raise ValueError(_NO_CAPS)
    if len(chosen) > max_caps:
        raise ValueError(
            words(
                "{count} caps is too many for one sweep (at most {most}); use a larger step",
                count=len(chosen),
                most=max_caps,
            )
        )
    for cap in chosen:
        if isinstance(cap, bool) or not isinstance(cap, int):
            raise ValueError(words("caps are whole watts (got {cap})", cap=repr(cap)))
        if cap < limits.min_w:
            raise ValueError(
                words("{cap} W is below this card's minimum power limit ({limits})", cap=cap, limits=limits.describe())
            )
        if cap > limits.max_w:
            raise ValueError(
                words("{cap} W is above this card's maximum power limit ({limits})", cap=cap, limits=limits.describe())
            )
    return tuple(chosen)


_NO_CAPS = words("no caps given: list whole watts, e.g. {example}", example=LIST_EXAMPLE)
_WATTS = re.compile(r"([0-9]+)\s*[wW]?")
_NUMBER = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?\s*[wW]?")


def _parse_watts(text: str) -> int:
    text = text.strip()
    match = _WATTS.fullmatch(text)
    if match is not None and len(match.group(1)) <= 6:
        return int(match.group(1))
    if _NUMBER.fullmatch(text):
        if text.startswith("-"):
            raise ValueError(words("{text}: a power cap is a positive number of watts", text=text))
        raise ValueError(
            words(
                "{text}: caps are whole watts (the driver takes no fractions), e.g. {example}",
                text=text,
                example=LIST_EXAMPLE,
            )
        )
    raise ValueError(
        words(
            "{text} is not a number of watts: list whole watts, e.g. {example}", text=repr(text), example=LIST_EXAMPLE
        )
    )


def _parse_range(item: str, max_caps: int) -> range:
    bounds, slash, step_text = item.partition("/")
    if not slash:
        raise ValueError(words("the range {item} needs a step in watts, e.g. 150-250/25", item=repr(item)))
    parts = bounds.split("-")
    if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
        raise ValueError(
            words("{item} is not a range of watts: write START-END/STEP, e.g. 150-250/25", item=repr(item))
        )
    start, end, step = _parse_watts(parts[0]), _parse_watts(parts[1]), _parse_watts(step_text)
    if step <= 0:
        raise ValueError(words("the step of {item} must be at least 1 W", item=repr(item)))
    low, high = min(start, end), max(start, end)
    if (high - low) // step + 1 > max_caps:
        count = (high - low) // step + 1
        raise ValueError(
            words(
                "{item} is {count} caps, too many for one sweep (at most {most}); use a larger step",
                item=repr(item),
                count=count,
                most=max_caps,
            )
        )
    return range(low, high + 1, step)


def check_loss(loss_pct: float) -> float:
    """The speed a cap may cost against the best, in percent: from 0 up to (not including) 100."""
    if isinstance(loss_pct, bool) or not isinstance(loss_pct, int | float) or not math.isfinite(loss_pct):
        raise ValueError(words("the allowed loss must be a percentage (got {loss})", loss=repr(loss_pct)))
    if not 0 <= loss_pct < 100:
        raise ValueError(words("the allowed loss must be from 0 to under 100% (got {loss}%)", loss=f"{loss_pct:g}"))
    return float(loss_pct)


# --- one cap's measurement ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Window:
    """What one cap measured after its warm-up: tokens decoded, over how many seconds, and the card's samples
    taken meanwhile (at a fixed interval, one at each end). `speed_factor`: on a simulated card, its decode
    rate against its unthrottled rate, averaged over the samples (the engine does not run on it); 1 on a
    real card, whose speed the engine's rate already is. `reference_tok_s`: on a simulated card, the engine's
    rate at the sweep's first cap, which every later cap's speed factor scales, so that what the host running
    the engine does meanwhile (another program, a turbo clock) does not pass for what the cap cost."""

    tokens: int
    seconds: float
    samples: tuple[GpuSample, ...]
    speed_factor: float = 1.0
    reference_tok_s: float | None = None


@dataclass(frozen=True)
class SweepRow:
    cap_w: int  # asked for
    enforced_w: float | None  # what the card held, read back
    tok_s: float  # the card's decode rate (on a simulated card: the engine's, times its speed factor)
    engine_tok_s: float  # tokens the engine decoded per second in the measured window
    tokens: int
    seconds: float
    mean_power_w: float | None
    tokens_per_joule: float | None
    end_temperature_c: float | None
    mean_sm_clock_mhz: float | None
    # Clock-event reason -> share of the samples (taken at a fixed interval, so of the time) it was active;
    # empty where the card reports none (or the driver gives no reasons at all, see `reasons_known`).
    throttle: dict[str, float] = field(default_factory=dict)
    reasons_known: bool = True
    samples: int = 0
    simulated: bool = False
    speed_factor: float = 1.0  # simulated cards: tok_s / engine_tok_s, what the card's physics cost at this cap

    def to_dict(self) -> dict[str, Any]:
        return {
            "cap_w": self.cap_w,
            "enforced_w": self.enforced_w,
            "tok_s": round(self.tok_s, 3),
            "engine_tok_s": round(self.engine_tok_s, 3),
            "tokens": self.tokens,
            "seconds": round(self.seconds, 3),
            "mean_power_w": _rounded(self.mean_power_w, 2),
            "tokens_per_joule": _rounded(self.tokens_per_joule, 4),
            "end_temperature_c": self.end_temperature_c,
            "mean_sm_clock_mhz": _rounded(self.mean_sm_clock_mhz, 1),
            "throttle": {reason: round(share, 4) for reason, share in self.throttle.items()},
            "reasons_known": self.reasons_known,
            "samples": self.samples,
            "simulated": self.simulated,
            "speed_factor": round(self.speed_factor, 4),
        }


def _rounded(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _mean(values: Iterable[float | None]) -> float | None:
    known = [v for v in values if v is not None and math.isfinite(v)]
    return sum(known) / len(known) if known else None


def aggregate(cap_w: int, window: Window, *, enforced_w: float | None = None, simulated: bool = False) -> SweepRow:
    """One cap's row from its measured window. `enforced_w`: the helper's read-back, used where the samples
    do not report the enforced limit."""
    samples = [s for s in window.samples if not s.lost]
    engine_tok_s = window.tokens / window.seconds if window.seconds > 0 else 0.0
    base = window.reference_tok_s if window.reference_tok_s is not None else engine_tok_s
    tok_s = base * window.speed_factor
    power = _mean(s.power_w for s in samples)
    temperatures = [s.temperature_c for s in samples if s.temperature_c is not None]
    limits = [s.power_limit_w for s in samples if s.power_limit_w is not None]
    with_reasons = [s.throttle_reasons for s in samples if s.throttle_reasons is not None]
    counts: dict[str, int] = {}
    for reasons in with_reasons:
        for reason in dict.fromkeys(reasons):
            counts[reason] = counts.get(reason, 0) + 1
    return SweepRow(
        cap_w=cap_w,
        enforced_w=limits[-1] if limits else enforced_w,
        tok_s=tok_s,
        engine_tok_s=engine_tok_s,
        tokens=window.tokens,
        seconds=window.seconds,
        mean_power_w=power,
        tokens_per_joule=tok_s / power if power is not None and power > 0 else None,
        end_temperature_c=temperatures[-1] if temperatures else None,
        mean_sm_clock_mhz=_mean(s.sm_clock_mhz for s in samples),
        throttle={reason: n / len(with_reasons) for reason, n in sorted(counts.items())},
        reasons_known=bool(with_reasons),
        samples=len(samples),
        simulated=simulated,
        speed_factor=window.speed_factor,
    )


# --- the recommendation ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recommendation:
    cap_w: int
    tok_s: float
    best_cap_w: int
    best_tok_s: float
    loss_pct: float  # this cap's speed below the best's, in percent
    allowed_loss_pct: float
    power_saved_pct: float | None  # its mean power below the best row's, in percent
    message: Text  # a sentence (gui/core/words.py)

    def to_dict(self) -> dict[str, Any]:
        return {
            "cap_w": self.cap_w,
            "tok_s": round(self.tok_s, 3),
            "best_cap_w": self.best_cap_w,
            "best_tok_s": round(self.best_tok_s, 3),
            "loss_pct": round(self.loss_pct, 2),
            "allowed_loss_pct": self.allowed_loss_pct,
            "power_saved_pct": _rounded(self.power_saved_pct, 1),
            "message": english(self.message),
        }


def recommend(rows: Sequence[SweepRow], loss_pct: float = DEFAULT_LOSS_PCT) -> Recommendation | None:
    """The lowest cap whose speed is within `loss_pct` of the best row's; None without a row that decoded."""
    allowed = check_loss(loss_pct)
    measured = [row for row in rows if row.tok_s > 0]
    if not measured:
        return None
    best = max(measured, key=lambda row: (row.tok_s, -row.cap_w))
    floor = best.tok_s * (1 - allowed / 100)
    chosen = min((row for row in measured if row.tok_s >= floor), key=lambda row: row.cap_w)
    loss = 100 * (1 - chosen.tok_s / best.tok_s)
    saved = None
    if chosen.mean_power_w is not None and best.mean_power_w:
        saved = 100 * (1 - chosen.mean_power_w / best.mean_power_w)
    message: Text
    if chosen is best:
        message = words(
            "{cap} W: the fastest cap ({speed} tok/s); no lower cap is within {allowed}%",
            cap=chosen.cap_w,
            speed=f"{chosen.tok_s:.1f}",
            allowed=f"{allowed:g}",
        )
    else:
        figures = {
            "cap": chosen.cap_w,
            "speed": f"{chosen.tok_s:.1f}",
            "loss": f"{max(loss, 0.0):.1f}",
            "best": f"{best.tok_s:.1f}",
            "best_cap": best.cap_w,
        }
        if saved is None:
            message = words("{cap} W: {speed} tok/s, {loss}% below the best ({best} tok/s at {best_cap} W)", **figures)
        else:
            message = words(
                "{cap} W: {speed} tok/s, {loss}% below the best ({best} tok/s at {best_cap} W), {saved}% less power",
                saved=f"{saved:.0f}",
                **figures,
            )
    return Recommendation(chosen.cap_w, chosen.tok_s, best.cap_w, best.tok_s, loss, allowed, saved, message)


SIMULATED_NOTE = mark(
    "SIMULATED card: tok/s is the engine's rate at the first cap times the card's speed at each cap (its clocks "
    "against unthrottled, from its physics); the engine itself runs on this machine.",
    "power_sweep",
)


# --- a row in words: the CLI's table and the window's use the same cells ------------------------------------


def table_header(simulated: bool) -> list[str]:
    """The columns of a sweep's table; a simulated card adds the engine's own rate and the card's speed factor."""
    header = [mark("cap W", "power_sweep"), mark("tok/s", "power_sweep"), mark("vs best", "power_sweep")]
    if simulated:
        header += [mark("engine tok/s", "power_sweep"), mark("card speed", "power_sweep")]
    return [
        *header,
        mark("power W", "power_sweep"),
        mark("tok/J", "power_sweep"),
        mark("end °C", "power_sweep"),
        mark("SM MHz", "power_sweep"),
        mark("throttled", "power_sweep"),
    ]


def row_cells(row: SweepRow, best_tok_s: float, simulated: bool) -> list[Text]:
    """One row's cells under table_header(simulated); `best_tok_s`: the fastest row's speed so far."""
    versus: Text
    if row.tok_s == best_tok_s:
        versus = words("best")
    else:
        versus = f"{100 * (row.tok_s / best_tok_s - 1):+.1f}%" if best_tok_s > 0 else _NOT_KNOWN
    cells: list[Text] = [str(row.cap_w), f"{row.tok_s:.1f}", versus]
    if simulated:
        cells += [f"{row.engine_tok_s:.1f}", f"{row.speed_factor:.3f}"]
    return [
        *cells,
        _number(row.mean_power_w, ".1f"),
        _number(row.tokens_per_joule, ".3f"),
        _number(row.end_temperature_c, ".1f"),
        _number(row.mean_sm_clock_mhz, ".0f"),
        _throttled(row),
    ]


def _throttled(row: SweepRow) -> Text:
    if not row.reasons_known:
        return _NOT_KNOWN
    shares = [f"{reason} {share:.0%}" for reason, share in row.throttle.items() if share > 0]
    return ", ".join(shares) or words("none")


_NOT_KNOWN = words("n/a")


def _number(value: float | None, spec: str) -> Text:
    return _NOT_KNOWN if value is None else format(value, spec)


# --- a whole sweep ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    """Every finished cap's row, in the order measured. `partial`: the sweep did not reach its last cap (Stop,
    an error, the engine gone), said in `reason`. `restored`: whether the card is back at `original_w`, with
    the words of that in `restore_message`."""

    caps: tuple[int, ...]
    rows: tuple[SweepRow, ...]
    original_w: int
    partial: bool
    reason: Text
    restored: bool
    restore_message: Text
    recommendation: Recommendation | None
    simulated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "caps": list(self.caps),
            "rows": [row.to_dict() for row in self.rows],
            "original_limit_w": self.original_w,
            "partial": self.partial,
            "reason": english(self.reason),
            "restored": self.restored,
            "restore_message": english(self.restore_message),
            "recommendation": self.recommendation.to_dict() if self.recommendation is not None else None,
            "simulated": self.simulated,
        }
