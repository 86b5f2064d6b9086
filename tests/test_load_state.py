"""The one load state: what each engine event does to it, without Qt or an engine."""

from __future__ import annotations

from pathlib import Path

from gui.core import protocol as p
from gui.core.load_state import LoadState, Phase
from gui.core.params import LoadSettings

MODEL = Path("/models/m.gguf")
SENT = LoadSettings(n_ctx=2048)
BUILD = p.EngineBuild("CPU", False, "0.3.x", "CPU : yes")
LOADED = p.Loaded(str(MODEL), 2048, 30, 999, 12.0, "model")


def requested(dry_run: int | None = 7) -> LoadState:
    return LoadState().on_event(p.Hello(p.PROTOCOL_VERSION, BUILD, 1)).requested(MODEL, SENT, None, None, dry_run)


def test_a_load_goes_verifying_loading_loaded_and_keeps_what_was_sent() -> None:
    state = requested()
    assert state.phase is Phase.VERIFYING and state.busy and not state.ready
    assert state.on_event(p.DryRunResult(99, str(MODEL), True, "", 0, 0, 0, 0, {}, {}, 1, ())) is state  # not ours
    state = state.on_event(p.DryRunResult(7, str(MODEL), True, "", 0, 0, 0, 0, {}, {}, 1, ()))
    assert state.phase is Phase.LOADING
    state = state.on_event(p.LoadProgress(0.4))
    assert state.progress == 0.4
    state = state.on_event(LOADED)
    assert state.phase is Phase.LOADED and state.ready and state.loaded is LOADED
    assert state.settings is SENT and state.model == MODEL and state.build is BUILD and state.model_name == "m.gguf"


def test_progress_without_a_dry_run_is_loading_at_once() -> None:
    assert requested(None).phase is Phase.LOADING


def test_failures_end_the_load_with_the_reason() -> None:
    failed = requested().on_event(p.LoadFailed(str(MODEL), "no such file"))
    assert failed.phase is Phase.FAILED and failed.error == "no such file" and not failed.busy
    refused = requested().on_event(p.CommandRejected("bad"))
    assert refused.phase is Phase.FAILED and "refused" in refused.error
    # A refused command when no load is on its way is not a failed load.
    idle = LoadState()
    assert idle.on_event(p.CommandRejected("bad")) is idle


def test_late_load_events_do_not_revive_an_ended_load() -> None:
    unloaded = requested().on_event(LOADED).unloaded()
    assert unloaded.phase is Phase.IDLE and unloaded.loaded is None
    assert unloaded.on_event(LOADED).phase is Phase.IDLE
    assert unloaded.on_event(p.LoadProgress(0.9)).phase is Phase.IDLE


def test_engine_death_keeps_the_model_and_settings_for_a_reload() -> None:
    dead = requested().on_event(LOADED).engine_died("killed")
    assert dead.phase is Phase.ENGINE_DEAD and not dead.ready and dead.build is None
    assert dead.model == MODEL and dead.settings is SENT and dead.error == "killed"
    assert dead.on_event(p.Hello(p.PROTOCOL_VERSION, BUILD, 2)).build is BUILD
