"""The one record of where the model load stands: idle, verifying, loading, loaded, failed or engine dead,
with the model and the settings that were sent, the engine build and the plan at the time.

Transitions are pure functions of the state and what happened, so the rules are tested without Qt or
an engine; the window owns one state and every view observes it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path

from gui.core import protocol as p
from gui.core.gguf_reader import GGUFHeader
from gui.core.params import LoadSettings
from gui.core.planner import Plan
from gui.core.words import Text, words

__all__ = ["LoadState", "Phase"]


class Phase(StrEnum):
    IDLE = "idle"  # no model loaded
    VERIFYING = "verifying"  # llama.cpp's dry run of the load, just before it
    LOADING = "loading"
    LOADED = "loaded"
    FAILED = "failed"  # the last load ended without a model
    ENGINE_DEAD = "engine dead"  # the worker process ended; a fresh one is on its way


@dataclass(frozen=True)
class LoadState:
    phase: Phase = Phase.IDLE
    model: Path | None = None  # the file sent with the load (kept after a failure, for a retry)
    settings: LoadSettings | None = None  # the settings sent with it: what a reply was generated with
    header: GGUFHeader | None = None  # the model's header, for planning a safer retry
    plan: Plan | None = None  # the plan the load was sent with
    build: p.EngineBuild | None = None  # the engine's, once it said hello
    loaded: p.Loaded | None = None  # llama.cpp's answer to the load
    progress: float = 0.0
    dry_run_id: int | None = None  # the dry run that precedes the load
    error: Text = ""  # why the last load failed, or how the engine ended

    @property
    def busy(self) -> bool:
        """A load is on its way: another one must wait."""
        return self.phase in (Phase.VERIFYING, Phase.LOADING)

    @property
    def ready(self) -> bool:
        """A model is loaded and takes messages."""
        return self.phase is Phase.LOADED

    @property
    def model_name(self) -> str:
        return self.model.name if self.model is not None else ""

    # ---- transitions ------------------------------------------------------------------------

    def requested(
        self,
        model: Path,
        settings: LoadSettings,
        header: GGUFHeader | None,
        plan: Plan | None,
        dry_run_id: int | None,
    ) -> LoadState:
        """A load was sent (after its dry run, when there is one)."""
        return replace(
            self,
            phase=Phase.VERIFYING if dry_run_id is not None else Phase.LOADING,
            model=model,
            settings=settings,
            header=header,
            plan=plan,
            loaded=None,
            progress=0.0,
            dry_run_id=dry_run_id,
            error="",
        )

    def on_event(self, event: object) -> LoadState:
        """The state after an engine event; events about other things leave it as it is."""
        if isinstance(event, p.Hello):
            return replace(self, build=event.build)
        if isinstance(event, p.DryRunResult) and self.phase is Phase.VERIFYING and event.request_id == self.dry_run_id:
            return replace(self, phase=Phase.LOADING)
        if isinstance(event, p.LoadProgress) and self.busy:
            return replace(self, phase=Phase.LOADING, progress=event.fraction)
        if isinstance(event, p.Loaded) and self.busy:
            return replace(self, phase=Phase.LOADED, loaded=event, progress=1.0)
        if isinstance(event, p.LoadFailed) and self.busy:
            return self.failed(event.error)
        if isinstance(event, p.CommandRejected) and self.busy:
            return self.failed(words("the engine refused the load: {error}", error=event.error))
        if isinstance(event, p.Unloaded):
            return self.unloaded()
        return self

    def failed(self, error: Text) -> LoadState:
        return replace(self, phase=Phase.FAILED, loaded=None, progress=0.0, error=error)

    def unloaded(self) -> LoadState:
        return replace(self, phase=Phase.IDLE, loaded=None, progress=0.0, error="")

    def engine_died(self, reason: Text) -> LoadState:
        """The worker ended. The model and settings stay: they are what a reload would use."""
        return replace(self, phase=Phase.ENGINE_DEAD, loaded=None, progress=0.0, build=None, error=reason)
