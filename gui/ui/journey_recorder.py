"""What the window calls on its events to keep the journey: every load, every reply's speed, every
benchmark row. Records are made on the UI thread from the window's own objects (cheap: a few fields) and
written by a background thread, in order, so the window never waits on the disk.

The window calls:

- ``record_load(state, here=…)`` when its LoadState reaches LOADED (``state.loaded`` is the engine's
  ``p.Loaded``; ``state.plan`` the Plan the load was sent with; ``state.build`` the EngineBuild);
- ``record_reply(stats, state, here=…)`` with each ``p.ReplyStats`` the chat pane reports and the LoadState
  it was generated under (a load not yet recorded is recorded first, so a missed ``record_load`` loses
  nothing);
- ``record_bench_row(row, state, here=…)`` with each row dict of ``tightfit bench`` / the Tune view.

``here``: whether the plan was made for this machine (``Target.here`` of the plan panel's target); a
"what if" plan's card and ceiling are not what the load ran on, so they are not recorded as such.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, Signal

from gui.core import protocol as p
from gui.core.journey import LoadRecord, bench_record, card_of, load_record, reply_record
from gui.core.load_state import LoadState
from gui.services.journey import JourneyStore
from gui.ui.background import Background
from gui.ui.i18n import Tr, error_text

__all__ = ["JourneyRecorder"]

tr = Tr("journey_recorder")


class JourneyRecorder(QObject):
    recorded = Signal()  # a record reached the store
    failed = Signal(str)  # a record could not be made or written, in words

    def __init__(
        self,
        store: JourneyStore,
        parent: QObject | None = None,
        *,
        background: Background | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``background``: the thread to write on (a view shares its own, so its reads follow the writes)."""
        super().__init__(parent)
        self.store = store
        self._clock = clock
        self._own_background = background is None
        self._db = background if background is not None else Background("journey", parent=self)
        self._load: tuple[p.Loaded, LoadRecord] | None = None  # the load replies are recorded against

    def record_load(self, state: LoadState, *, here: bool = True) -> LoadRecord | None:
        """Record the load ``state`` holds (once per load, however often it is called); None without one."""
        loaded = state.loaded
        if loaded is None or state.model is None or state.settings is None:
            return None
        if self._load is not None and self._load[0] is loaded:
            return self._load[1]
        record = load_record(state, here=here, now=self._clock())
        self._load = (loaded, record)
        self._write(lambda: self.store.add_load(record))
        return record

    def record_reply(self, stats: p.ReplyStats, state: LoadState, *, here: bool = True) -> None:
        """Record one reply's speed against the load it was generated on."""
        load = self.record_load(state, here=here)
        if load is None:
            return  # a reply with no load to belong to (the engine died meanwhile): nothing to compare it with
        record = reply_record(stats, load, now=self._clock())
        self._write(lambda: self.store.add_reply(record))

    def record_bench_row(self, row: Mapping[str, Any], state: LoadState | None = None, *, here: bool = True) -> None:
        """Record one benchmark row; what the row lacks (model, build, card, the model's blocks) is taken
        from ``state``, the engine's load state, since chat and benchmarks share one engine."""
        model = state.model if state is not None else None
        loaded = state.loaded if state is not None else None
        plan = state.plan if state is not None else None
        try:
            record = bench_record(
                row,
                now=self._clock(),
                model_path=model,
                build=state.build if state is not None else None,
                card=card_of(plan, 1, here),
                n_layer=loaded.n_layer if loaded is not None and model is not None and row_is_for(row, model) else None,
            )
        except ValueError as exc:
            self.failed.emit(
                tr("Journey: benchmark row not recorded: {error}").format(error=error_text(exc, "journey"))
            )
            return
        self._write(lambda: self.store.add_bench_row(record))

    def shutdown(self) -> None:
        """Finish the writes already queued (a view that shares its thread shuts it down itself)."""
        if self._own_background:
            self._db.shutdown(wait=True)

    def _write(self, job: Callable[[], None]) -> None:
        self._db.run(
            job,
            lambda _: self.recorded.emit(),
            lambda exc: self.failed.emit(tr("Journey: {error}").format(error=error_text(exc, "journey"))),
        )


def row_is_for(row: Mapping[str, Any], model: object) -> bool:
    """Whether a benchmark row is about ``model`` (a row that names no model is about the loaded one)."""
    named = next((row[k] for k in ("model_path", "model", "model_filename") if row.get(k)), None)
    return named is None or str(named) == str(model)
