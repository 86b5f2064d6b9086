"""The power-cap sweep, run: at each cap, decode a fixed workload until power, clocks and heat settle,
measure, and hand over a row; then put the card back at the limit it had.

    sweep = PowerSweep(source=..., limiter=..., decoder=EngineDecoder(client, feed))
    result = sweep.run(caps, on_row=...)       # blocks: run it off the UI thread
    sweep.stop()                               # from any thread: ends it, keeps the finished rows

One run per PowerSweep (a stop stays stopped); make a new one for the next sweep.

The caps run highest first, so a sweep stopped early has measured the fast end the recommendation compares
against. At each cap: apply it (PowerLimiter: the privileged helper, or the simulator's knob), decode for
the warm-up (discarded; default 90 s on a real card, three thermal time constants on a simulated one),
then measure for `measure_s` seconds or `tokens` tokens while the card is sampled every
`sample_interval_s` (and once at each end of the window). Sampling happens on the sweep's own thread,
driven by the decoder's heartbeat (after every token and at least every HEARTBEAT_S), so a simulated card
under a fake clock gives the same rows every time.

The original enforced limit is restored when the sweep ends, is stopped or fails (the engine gone, the
helper refused, any exception), in this process; on a real card a detached watchdog process
(gui/services/power_restore.py), started before the first cap, restores it if this process dies
mid-sweep. On a simulated card the decode rate that counts is the engine's rate at the first cap times the
card's own speed factor at each cap (gui/core/simulated_gpu.py): the engine does not run on it, its physics
decide what a cap costs.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from gui.core import power_sweep as core
from gui.core import protocol as p
from gui.core.gpu_sample import GpuSample
from gui.core.power_sweep import CapLimits, SweepResult, SweepRow, Window
from gui.core.simulated_gpu import SimulatedGpu
from gui.core.words import Text, joined, message_of, words
from gui.services.engine_client import ClientEvent, EngineUnavailable, WorkerExited
from gui.services.power_limit import Outcome, PowerLimiter, PowerResult
from gui.services.power_restore import Watchdog, WatchdogError
from gui.services.telemetry import GpuSource, SimulatedSource

__all__ = [
    "DEFAULT_MEASURE_S",
    "REAL_CARD_WARMUP_S",
    "Decoder",
    "EngineDecoder",
    "EngineFeed",
    "PowerSweep",
    "SweepError",
    "SweepProgress",
    "Workload",
    "default_warmup_s",
]

log = logging.getLogger(__name__)

HEARTBEAT_S = 0.25  # a decoder calls back at least this often, tokens or not
PROGRESS_EVERY_S = 1.0
REAL_CARD_WARMUP_S = 90.0  # a real card's heat sink takes about a minute to settle; three of its time constants
SETTLE_TIME_CONSTANTS = 3.0  # on a simulated card: 95% of the way to its settled temperature
DEFAULT_MEASURE_S = 30.0
DEFAULT_SAMPLE_INTERVAL_S = 0.5
REPLY_TOKENS = 256  # one reply of the decode workload: short, so every cap decodes at the same context depths
ENGINE_SILENCE_S = 120.0  # no event from the engine for this long: it is stuck
WORKLOAD_PROMPT = "Write a long, detailed story about a lighthouse keeper and the ships she guides through storms."


class SweepError(RuntimeError):
    """The sweep cannot start (or go on): one line for the window or the CLI."""


@dataclass(frozen=True)
class Workload:
    """What each cap decodes: `warmup_s` discarded, then `measure_s` seconds, or `tokens` tokens when set."""

    warmup_s: float
    measure_s: float = DEFAULT_MEASURE_S
    tokens: int | None = None

    def validated(self) -> Workload:
        if not math.isfinite(self.warmup_s) or self.warmup_s < 0:
            raise ValueError(
                words("the warm-up must be zero or more seconds (got {seconds})", seconds=f"{self.warmup_s:g}")
            )
        if self.tokens is not None:
            if isinstance(self.tokens, bool) or not isinstance(self.tokens, int) or self.tokens < 1:
                raise ValueError(
                    words(
                        "the tokens measured at each cap must be a whole number of at least 1 ({value})",
                        value=repr(self.tokens),
                    )
                )
        elif not math.isfinite(self.measure_s) or self.measure_s <= 0:
            raise ValueError(
                words(
                    "the measured time at each cap must be more than 0 seconds (got {seconds})",
                    seconds=f"{self.measure_s:g}",
                )
            )
        return self

    def describe(self) -> Text:
        if self.tokens is not None:
            measured = words("{n} tokens", n=self.tokens)
        else:
            measured = words("{seconds} s", seconds=f"{self.measure_s:g}")
        return words(
            "{warmup} s warm-up, then {measured} measured, at each cap", warmup=f"{self.warmup_s:g}", measured=measured
        )

    def estimate_s(self, caps: int, tok_s: float | None = None) -> float | None:
        """Roughly how long a sweep of `caps` caps takes (capping and reply gaps not counted); with a token
        count it needs the expected decode rate, and is None without one."""
        if self.tokens is None:
            return caps * (self.warmup_s + self.measure_s)
        if tok_s is None or tok_s <= 0:
            return None
        return caps * (self.warmup_s + self.tokens / tok_s)


def default_warmup_s(source: GpuSource, index: int = 0) -> float:
    """Long enough for the card's temperature, and with it its clocks, to settle."""
    if isinstance(source, SimulatedSource) and index < len(source.gpus):
        return SETTLE_TIME_CONSTANTS * source.gpus[index].tau_s
    return REAL_CARD_WARMUP_S


@dataclass(frozen=True)
class SweepProgress:
    cap_w: int
    position: int  # 0-based, in the order run
    count: int
    phase: Literal["capping", "warm-up", "measuring"]
    tokens: int  # decoded at this cap so far
    elapsed_s: float  # at this cap so far


class Decoder(Protocol):
    """A fixed decode workload that runs until told to stop."""

    def run(self, keep_going: Callable[[int], bool]) -> None:
        """Decode without pause until `keep_going(tokens)` returns False, then return once the engine has
        stopped. Call it after every token (with the tokens decoded so far in this run) and at least every
        HEARTBEAT_S while none arrive. Raise EngineUnavailable when the engine is gone or fails."""
        ...


RowListener = Callable[[SweepRow], None]
ProgressListener = Callable[[SweepProgress], None]
WatchdogStarter = Callable[[int, int], Watchdog]


class PowerSweep:
    def __init__(
        self,
        *,
        source: GpuSource,
        limiter: PowerLimiter,
        decoder: Decoder,
        index: int = 0,
        workload: Workload | None = None,
        sample_interval_s: float = DEFAULT_SAMPLE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        watchdog: WatchdogStarter | None = None,
    ) -> None:
        """`source`: where samples come from (NVML or the simulated card, as telemetry reads them). `watchdog`:
        how to start the restore watchdog on a real card (default: gui.services.power_restore with the
        limiter's helper and method); not used on a simulated card."""
        if sample_interval_s <= 0 or not math.isfinite(sample_interval_s):
            raise ValueError(f"the sampling interval must be more than 0 s (got {sample_interval_s})")
        self.source = source
        self.limiter = limiter
        self.decoder = decoder
        self.index = index
        self.workload = (workload or Workload(default_warmup_s(source, index))).validated()
        self.sample_interval_s = float(sample_interval_s)
        self._clock = clock
        self._start_watchdog = watchdog or self._default_watchdog
        self._stop = threading.Event()

    # --- control, from any thread -----------------------------------------------------------------

    def stop(self) -> None:
        """End the sweep: the cap being measured is dropped, finished rows are kept, the limit restored."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    @property
    def simulated_gpu(self) -> SimulatedGpu | None:
        source = self.source
        if isinstance(source, SimulatedSource) and self.index < len(source.gpus):
            return source.gpus[self.index]
        return None

    # --- before a sweep (blocking: NVML) --------------------------------------------------------------

    def read_card(self) -> tuple[GpuSample, CapLimits]:
        """A reading of the card and the caps it accepts; SweepError (one line) where it cannot be swept."""
        sample = self.source.sample(self.index)
        try:
            limits = CapLimits.from_sample(sample)
        except ValueError as exc:
            raise SweepError(message_of(exc)) from exc
        return sample, limits

    def default_caps(self) -> tuple[int, ...]:
        return core.default_caps(self.read_card()[1])

    # --- the sweep ------------------------------------------------------------------------------------

    def run(
        self,
        caps: Sequence[int] | None = None,
        on_row: RowListener | None = None,
        on_progress: ProgressListener | None = None,
        loss_pct: float = core.DEFAULT_LOSS_PCT,
    ) -> SweepResult:
        """Measure every cap (default: core.default_caps), highest first. Blocks. Raises SweepError or
        ValueError before the card is touched (caps outside its constraints, no readable limit, no
        watchdog); afterwards every failure ends in a partial result, except KeyboardInterrupt and
        SystemExit, which are raised again once the limit is restored."""
        core.check_loss(loss_pct)
        sample, limits = self.read_card()
        chosen = core.check_caps(caps, limits) if caps is not None else core.default_caps(limits)
        if sample.power_limit_w is None:
            why = sample.errors.get("power_limit_w") or words("the driver does not report it")
            raise SweepError(
                words("the card's enforced power limit cannot be read ({why}), so it could not be restored", why=why)
            )
        original = min(max(math.floor(sample.power_limit_w + 0.5), limits.min_w), limits.max_w)
        order = sorted(chosen, reverse=True)
        simulated = self.limiter.simulated
        watchdog: Watchdog | None = None
        if not simulated:
            try:
                watchdog = self._start_watchdog(self.index, original)
            except WatchdogError as exc:
                raise SweepError(message_of(exc)) from exc
        rows: list[SweepRow] = []
        reason: Text = ""
        touched = False  # a cap was asked for: from then on the limit is restored, whatever happens
        restored: PowerResult | None = None
        try:
            for position, cap in enumerate(order):
                if self._stop.is_set():
                    break
                if on_progress is not None:
                    on_progress(SweepProgress(cap, position, len(order), "capping", 0, 0.0))
                touched = True
                applied = self.limiter.apply(self.index, cap)
                if not applied.ok:
                    reason = words("could not cap at {cap} W: {message}", cap=cap, message=applied.message)
                    break
                reference = rows[0].engine_tok_s if rows and simulated else None
                row = self._measure(cap, applied, position, len(order), on_progress, reference)
                if row is None:
                    if not self._stop.is_set():
                        reason = words("the decode workload ended before {cap} W was measured", cap=cap)
                    break
                rows.append(row)
                if on_row is not None:
                    on_row(row)
            if self._stop.is_set() and len(rows) < len(order) and not reason:
                reason = words("stopped")
        except EngineUnavailable as exc:
            reason = words("the engine stopped: {error}", error=message_of(exc))
        except Exception as exc:
            log.exception("power sweep failed at %d W", order[len(rows)] if len(rows) < len(order) else 0)
            reason = words("the sweep failed: {error}", error=message_of(exc))
        finally:
            self._set_load(0.0)
            if touched:
                restored = self._restore(original)
            else:  # stopped before the first cap: no second password dialog for nothing
                message = words(
                    "GPU {index} was not changed; it is still at {watts} W", index=self.index, watts=original
                )
                restored = PowerResult(Outcome.APPLIED, self.index, original, sample.power_limit_w, message)
            if watchdog is not None:
                watchdog.release()
        recommendation = core.recommend(rows, loss_pct)
        return SweepResult(
            caps=tuple(order),
            rows=tuple(rows),
            original_w=original,
            partial=len(rows) < len(order),
            reason=reason,
            restored=restored.ok,
            restore_message=restored.message,
            recommendation=recommendation,
            simulated=simulated,
        )

    def _restore(self, watts: int) -> PowerResult:
        try:
            result = self.limiter.apply(self.index, watts)
        except Exception as exc:  # a restore that raises must not hide why the sweep ended
            log.exception("restoring GPU %d to %d W failed", self.index, watts)
            message = words("restoring {watts} W failed: {error}", watts=watts, error=message_of(exc))
            return PowerResult(Outcome.FAILED, self.index, watts, None, message)
        if result.ok:
            if result.via and result.via != "simulator":
                message = words(
                    "GPU {index} is back at {watts} W, its limit before the sweep (via {via})",
                    index=self.index,
                    watts=watts,
                    via=result.via,
                )
            else:
                message = words(
                    "GPU {index} is back at {watts} W, its limit before the sweep", index=self.index, watts=watts
                )
            return PowerResult(
                result.outcome, result.index, watts, result.enforced_w, message, result.exit_code, result.via
            )
        message = words("the card could not be put back at {watts} W: {message}", watts=watts, message=result.message)
        return dataclasses.replace(result, message=message)

    def _default_watchdog(self, gpu: int, watts: int) -> Watchdog:
        return Watchdog.start(gpu, watts, helper=self.limiter.helper, method=self.limiter.method)

    def _set_load(self, load: float) -> None:
        if isinstance(self.source, SimulatedSource):
            self.source.set_load(load, self.index)

    def _measure(
        self,
        cap: int,
        applied: PowerResult,
        position: int,
        count: int,
        on_progress: ProgressListener | None,
        reference_tok_s: float | None = None,
    ) -> SweepRow | None:
        """Warm up, then measure one cap; None when stopped before the window closed."""
        clock, workload, gpu = self._clock, self.workload, self.simulated_gpu
        cap_state = _CapState(started=clock())
        warm_until = cap_state.started + workload.warmup_s
        samples: list[GpuSample] = []
        factors: list[float] = []

        def take_sample() -> None:
            samples.append(self.source.sample(self.index))
            if gpu is not None:
                factors.append(gpu.decode_speed_factor())

        def report(phase: Literal["warm-up", "measuring"], tokens: int, now: float) -> None:
            # At each change of phase, and about once a second between, for a progress bar.
            if on_progress is None or (cap_state.phase == phase and now - cap_state.reported < PROGRESS_EVERY_S):
                return
            cap_state.phase, cap_state.reported = phase, now
            on_progress(SweepProgress(cap, position, count, phase, tokens, now - cap_state.started))

        def keep_going(tokens: int) -> bool:
            now = clock()
            if tokens > 0 and not cap_state.busy:
                cap_state.busy = True  # the card's load follows the engine's activity, as in the window
                self._set_load(1.0)
            if self._stop.is_set():
                return False
            if cap_state.window is None:
                report("warm-up", tokens, now)
                if now < warm_until or tokens == 0:
                    return True
                cap_state.window = (now, tokens)
                cap_state.next_sample = now + self.sample_interval_s
                take_sample()
                report("measuring", tokens, now)
                return True
            report("measuring", tokens, now)
            t0, n0 = cap_state.window
            if (tokens - n0 >= workload.tokens) if workload.tokens is not None else (now - t0 >= workload.measure_s):
                take_sample()
                cap_state.end = (now, tokens)
                return False
            if now >= cap_state.next_sample:
                take_sample()
                # On schedule, without a burst of catch-up samples after a stall.
                cap_state.next_sample = max(cap_state.next_sample + self.sample_interval_s, now)
            return True

        try:
            self.decoder.run(keep_going)
        finally:
            self._set_load(0.0)
        if cap_state.window is None or cap_state.end is None:
            return None
        (t0, n0), (t1, n1) = cap_state.window, cap_state.end
        speed = sum(factors) / len(factors) if factors else 1.0
        window = Window(n1 - n0, t1 - t0, tuple(samples), speed_factor=speed, reference_tok_s=reference_tok_s)
        return core.aggregate(cap, window, enforced_w=applied.enforced_w, simulated=gpu is not None)


@dataclass
class _CapState:
    """Where one cap's measurement stands, as the decoder's heartbeats move it on."""

    started: float
    busy: bool = False
    phase: str | None = None
    reported: float = -math.inf  # when progress was last reported
    window: tuple[float, int] | None = None  # (time, tokens) when the measured window opened
    end: tuple[float, int] | None = None  # ... and when it closed
    next_sample: float = 0.0


# --- the engine as the decode workload ------------------------------------------------------------------


class EngineFeed:
    """The engine's events for a sweep, as a queue. The CLI passes its SyncEngine's queue; the window makes
    an empty one and calls `feed(event)` from its engine listener (any thread) while the sweep runs."""

    def __init__(self, events: queue.Queue[ClientEvent] | None = None) -> None:
        self.events: queue.Queue[ClientEvent] = events if events is not None else queue.Queue()

    def feed(self, event: ClientEvent) -> None:
        self.events.put(event)

    def poll(self, timeout_s: float) -> p.Event | None:
        """The next event, or None after timeout_s; EngineUnavailable when the worker has gone."""
        try:
            event = self.events.get(timeout=timeout_s)
        except queue.Empty:
            return None
        if isinstance(event, WorkerExited):
            raise EngineUnavailable(
                joined(" ", (event.reason, event.failure.summary)) if event.failure else event.reason
            )
        return event


class EngineClientLike(Protocol):
    def generate(
        self,
        messages: tuple[p.ChatMessage, ...],
        max_tokens: int = ...,
        sampling: p.Sampling | None = ...,
        ignore_eos: bool = ...,
        chat_format: str = ...,
    ) -> int: ...

    def stop(self, request_id: int) -> None: ...


class EngineDecoder:
    """The fixed decode workload on the loaded model: replies of `reply_tokens` tokens to one prompt, one after
    another, end of turn ignored, so every cap decodes the same text at the same context depths."""

    def __init__(
        self,
        client: EngineClientLike,
        feed: EngineFeed,
        *,
        reply_tokens: int = REPLY_TOKENS,
        prompt: str = WORKLOAD_PROMPT,
        sampling: p.Sampling | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if reply_tokens < 2:
            raise ValueError(f"a workload reply needs at least 2 tokens (got {reply_tokens})")
        self.client = client
        self.feed = feed
        self.reply_tokens = reply_tokens
        self.messages = (p.ChatMessage("user", prompt),)
        self.sampling = sampling or p.Sampling(seed=1234)
        self._clock = clock

    def run(self, keep_going: Callable[[int], bool]) -> None:
        total = 0
        while True:
            request = self.client.generate(self.messages, self.reply_tokens, self.sampling, ignore_eos=True)
            stopping = False
            heard = self._clock()
            while True:
                event = self.feed.poll(HEARTBEAT_S)
                now = self._clock()
                if event is None:
                    if now - heard > ENGINE_SILENCE_S:
                        raise EngineUnavailable(
                            words("the engine did not answer within {seconds} s", seconds=f"{ENGINE_SILENCE_S:.0f}")
                        )
                    if not stopping and not keep_going(total):
                        self.client.stop(request)
                        stopping = True
                    continue
                heard = now
                if isinstance(event, p.Token) and event.request_id == request:
                    # The last Token of a reply can carry held-back text at index == reply_tokens: not a token.
                    if stopping or event.index >= self.reply_tokens:
                        continue
                    total += 1
                    if not keep_going(total):
                        self.client.stop(request)
                        stopping = True
                elif isinstance(event, p.Done) and event.request_id == request:
                    break
                elif isinstance(event, p.CommandRejected) or (
                    isinstance(event, p.GenerateFailed) and event.request_id == request
                ):
                    raise EngineUnavailable(event.error)
            if stopping:
                return
