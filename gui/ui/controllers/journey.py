"""The journey: every load, every reply's speed (the chat's and the API's) and every benchmark row, recorded
against the load the engine holds, marked as planned for this machine or for a "what if" card."""

from __future__ import annotations

from PySide6.QtCore import QObject

from gui.core import protocol as p
from gui.core.bench import BenchRow
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.journey_view import JourneyView


class JourneyController(Feature):
    def __init__(
        self,
        shared: Shared,
        *,
        view: JourneyView,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(shared, parent)
        self.recorder = view.recorder
        self.view = view

    def _here(self) -> bool:
        """The plan is for what this machine runs (its GPUs, a simulated card or its CPU), not a "what if"."""
        return self.planning.plan_panel.current_target().here

    def loaded(self, _event: p.Loaded) -> None:
        self.recorder.record_load(self.session.state, here=self._here())

    def reply(self, stats: p.ReplyStats) -> None:
        self.recorder.record_reply(stats, self.session.state, here=self._here())

    def bench_row(self, row: BenchRow) -> None:
        self.recorder.record_bench_row(row.to_dict(), self.session.state, here=self._here())

    def shutdown(self) -> None:
        self.view.shutdown()
