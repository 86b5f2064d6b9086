"""The one-click power cap: a watts spin box, "Cap at N W", "Restore default", and what happened, in words.

A blower-cooled V100 that runs past 80 °C at its default limit holds about 70 °C when capped with
`nvidia-smi -pl 200`, for about 5 % fewer tokens/s (gui/core/simulated_gpu.py models this), hence the
200 W default. The request is first checked against the card's constraints (PowerLimiter.check:
clamped with a message, or refused where the card has no adjustable limit); the privileged helper then
runs on a worker thread (gui/ui/background.py), because it blocks until the user answers the polkit
password dialog. The result comes back on the UI thread, with the enforced limit read back from the driver.

With several GPUs, "Cap all" sets the same watts on every card: each request is checked against its own
card's constraints (a P40 takes 125-250 W, a V100 150-300 W), the helper runs once per card in turn on
the same worker thread, and one message says what each GPU ended in.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gui.core.gpu_sample import GpuSample
from gui.core.preferences import CAP
from gui.core.words import Text, english
from gui.services.power_limit import (
    NO_READING,
    OUTCOME_WORDS,
    Decision,
    Outcome,
    PowerLimiter,
    PowerResult,
    all_words,
    click_words,
    not_run,
)
from gui.ui.background import Background
from gui.ui.i18n import Tr, core_text
from gui.ui.plain import plain_label
from gui.ui.spec_widgets import int_box
from gui.ui.theme import current_palette, follow_theme

__all__ = ["PowerPanel", "PowerReport"]

ReadBack = Callable[[int], float | None]
tr = Tr("power_panel")


@dataclass(frozen=True)
class PowerReport:
    """What one click ended in: the outcome word, the message shown (the English sentences of
    gui/services/power_limit.py, said in the window's language where the panel shows them), and the limit
    read back."""

    outcome: Outcome
    message: Text
    enforced_w: float | None
    result: PowerResult | None  # None when the request was refused before anything ran
    results: tuple[PowerResult, ...] = ()  # "Cap all": what each GPU's helper answered, in GPU order


class PowerPanel(QWidget):
    cap_changed = Signal(int)  # the watts in the spin box, for the window to remember
    finished = Signal(object)  # PowerReport, after every click

    def __init__(
        self, limiter: PowerLimiter, *, read_back: ReadBack | None = None, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.limiter = limiter
        self._read_back = read_back
        self._sample: GpuSample | None = None
        self._samples: dict[int, GpuSample] = {}  # the latest of every GPU, for "Cap all"
        self._helper = Background("power-limit", parent=self)  # may block on a password dialog
        self._busy = False
        self._locked = ""  # why the buttons wait: something else drives the limit
        self.last_report: PowerReport | None = None

        # The card's own range once a reading says it; a value typed outside it is brought in and said.
        self.spin = int_box(CAP)
        self.spin.setAccessibleName(tr("Power cap in watts"))
        self.spin.clamped.connect(self._clamped)
        self.cap_button = QPushButton()
        self.cap_button.setToolTip(
            tr("Set the card's power limit (needs the privileged helper; a password may be asked)")
        )
        self.cap_all_button = QPushButton(tr("Cap all"))
        self.cap_all_button.setToolTip(
            tr(
                "Set every GPU's power limit to these watts, each within its own card's range"
                " (a password may be asked once per card)"
            )
        )
        self.cap_all_button.setVisible(False)
        self.restore_button = QPushButton(tr("Restore default"))
        self.restore_button.setToolTip(tr("Set the card's power limit back to its default"))
        self.outcome_label = QLabel("")
        self.outcome_label.setWordWrap(True)
        self.outcome_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._shown: tuple[Outcome | None, Text] = (None, "")  # what the outcome line says, to redraw in a new theme
        follow_theme(self.outcome_label, lambda _palette: self._show(*self._shown), now=False)
        self.enforced_label = plain_label(tr("limit: n/a"))
        self.enforced_label.setToolTip(tr("The limit the driver enforces now"))

        controls = QHBoxLayout()
        controls.setContentsMargins(0, 0, 0, 0)
        controls.addWidget(QLabel(tr("Power cap")))
        controls.addWidget(self.spin)
        controls.addWidget(self.cap_button)
        controls.addWidget(self.cap_all_button)
        controls.addWidget(self.restore_button)
        controls.addWidget(self.enforced_label)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(controls)
        layout.addWidget(self.outcome_label)  # its own line: helper messages can be long
        self.outcome_label.setVisible(False)

        self.spin.valueChanged.connect(self._on_spin)
        self.cap_button.clicked.connect(self.apply_cap)
        self.cap_all_button.clicked.connect(self.apply_cap_all)
        self.restore_button.clicked.connect(self.restore_default)
        self._on_spin(self.spin.value())
        # Said before any click: a cap that cannot work yet, and the one-time set-up that makes it work.
        self.readiness = limiter.readiness()
        if hasattr(os, "geteuid") and os.geteuid() == 0 and not limiter.simulated:
            # Not an error yet, but worth saying before the first click: the design keeps the window unprivileged.
            self._show(
                None, tr("Tightfit is running as root; run it as your user — the power cap goes through a helper")
            )

    # --- state --------------------------------------------------------------------------------------

    @property
    def cap_watts(self) -> int:
        return int(self.spin.value())

    @cap_watts.setter
    def cap_watts(self, watts: int) -> None:
        self.spin.setValue(int(watts))

    @property
    def busy(self) -> bool:
        return self._busy

    def set_sample(self, sample: GpuSample | None) -> None:
        """The latest reading of the GPU the panel acts on (its constraints and enforced limit)."""
        if sample is not None and self._sample is None and self.readiness and self.last_report is None:
            self._show(None, self.readiness)
        self._sample = sample
        self._update_range()
        limit = sample.power_limit_w if sample is not None else None
        self.enforced_label.setText(
            tr("limit: {watts} W").format(watts=f"{limit:.0f}") if limit is not None else tr("limit: n/a")
        )
        self._update_enabled()

    def set_samples(self, samples: Iterable[GpuSample]) -> None:
        """The latest reading of every GPU: with two or more, "Cap all" is offered, and the spin box takes
        any watts one of the cards accepts (each card's own range is checked when it is capped)."""
        self._samples = {s.index: s for s in samples}
        self.cap_all_button.setVisible(len(self._samples) > 1)
        self._update_range()
        self._update_enabled()

    @property
    def several(self) -> bool:
        return len(self._samples) > 1

    def _update_range(self) -> None:
        cards = list(self._samples.values()) if self.several else [self._sample] if self._sample else []
        ranges = [(s.power_min_w, s.power_max_w) for s in cards if not s.lost]
        known = [(low, high) for low, high in ranges if low is not None and high is not None]
        if known:
            self.spin.setRange(math.ceil(min(low for low, _ in known)), math.floor(max(high for _, high in known)))

    def set_locked(self, reason: str) -> None:
        """While something else drives the limit (a power-cap sweep), the buttons wait and ``reason`` says
        why; '' gives them back."""
        self._locked = reason
        self._show(None, reason)
        self._update_enabled()

    @property
    def locked(self) -> str:
        return self._locked

    def shutdown(self) -> None:
        """Stop accepting work. A helper waiting on a password dialog is not waited for; its result is
        dropped (the next tick shows the limit anyway)."""
        self._helper.shutdown()
        self._busy = False
        self._update_enabled()

    # --- actions ------------------------------------------------------------------------------------

    def apply_cap(self) -> None:
        sample = self._sample
        decision = self.limiter.check(self.cap_watts, sample)
        if not decision.allowed or decision.watts is None or sample is None:
            refused = Outcome.NOT_SUPPORTED if "cannot be changed" in decision.message else Outcome.FAILED
            self._report(PowerReport(refused, decision.message, sample.power_limit_w if sample else None, None))
            return
        index, watts = sample.index, decision.watts
        self._run(lambda: self.limiter.apply(index, watts), index, decision)

    def apply_cap_all(self) -> None:
        """The watts in the spin box on every GPU, each checked against its own card; one report for all."""
        if self._busy or self._locked:
            return
        target = self.cap_watts
        planned: list[tuple[int, Decision]] = []
        refused: dict[int, Text] = {}
        for index, sample in sorted(self._samples.items()):
            decision = self.limiter.check(target, sample)
            if decision.allowed and decision.watts is not None:
                planned.append((index, decision))
            else:
                refused[index] = decision.message
        if not planned:
            outcome, message = all_words(refused, [])
            self._report(PowerReport(outcome, message, None, None))
            return
        self._busy = True
        self._update_enabled()
        self._show(None, tr("applying… (a password dialog may appear)"))
        read_back = self._read_back
        limiter = self.limiter

        def work() -> list[tuple[int, Decision, PowerResult, float | None]]:  # worker thread, one card at a time
            done = []
            for index, decision in planned:
                assert decision.watts is not None
                result = limiter.apply(index, decision.watts)
                done.append((index, decision, result, _enforced(result, index, read_back)))
            return done

        self._helper.run(work, lambda done: self._on_all_done(done, refused), self._on_error)

    def _on_all_done(
        self, done: list[tuple[int, Decision, PowerResult, float | None]], refused: dict[int, Text]
    ) -> None:
        self._busy = False
        self._update_enabled()
        acting = self._sample.index if self._sample is not None else None
        enforced_here: float | None = None
        result_here: PowerResult | None = None
        for index, _decision, result, enforced in done:
            if index == acting:  # the panel's own GPU: its limit label shows what it reads back
                enforced_here, result_here = enforced, result
        overall, message = all_words(refused, done)
        results = tuple(result for _index, _decision, result, _enforced in done)
        self._report(PowerReport(overall, message, enforced_here, result_here, results))

    def restore_default(self) -> None:
        sample = self._sample
        if sample is None:
            self._report(PowerReport(Outcome.FAILED, NO_READING, None, None))
            return
        index = sample.index
        self._run(lambda: self.limiter.restore_default(index), index, None)

    def _run(self, action: Callable[[], PowerResult], index: int, decision: Decision | None) -> None:
        if self._busy or self._locked:
            return
        self._busy = True
        self._update_enabled()
        self._show(None, tr("applying… (a password dialog may appear)"))
        read_back = self._read_back

        def work() -> tuple[PowerResult, float | None]:  # worker thread: may block on pkexec
            result = action()
            return result, _enforced(result, index, read_back)

        self._helper.run(work, lambda done: self._on_done(*done, decision), self._on_error)

    def _on_error(self, exc: Exception) -> None:
        self._busy = False
        self._update_enabled()
        self._report(PowerReport(Outcome.FAILED, not_run(exc), None, None))

    def _on_done(self, result: PowerResult, enforced: float | None, decision: Decision | None) -> None:
        self._busy = False
        self._update_enabled()
        outcome, message = click_words(decision, result)  # clamped: the card took it, but not what was typed
        self._report(PowerReport(outcome, message, enforced, result))

    def _report(self, report: PowerReport) -> None:
        self.last_report = report
        self._show(report.outcome, report.message)
        if report.enforced_w is not None:
            self.enforced_label.setText(tr("limit: {watts} W (read back)").format(watts=f"{report.enforced_w:.0f}"))
        self.finished.emit(report)

    # --- looks --------------------------------------------------------------------------------------

    def _show(self, outcome: Outcome | None, message: Text) -> None:
        """The outcome line: ``message`` is a sentence of gui/services (said here in the window's language) or
        the panel's own, already translated."""
        self._shown = (outcome, message)
        palette = current_palette()
        colour = {None: palette.muted, Outcome.APPLIED: palette.ok, Outcome.CLAMPED: palette.warn}.get(
            outcome, palette.error
        )
        said = _escape(_said(message))
        if outcome is not None:
            said = _outcome_said(f"<b>{_escape(_outcome_word(outcome))}</b>", said)
        self.outcome_label.setText(f"<span style='color:{colour}'>{said}</span>")
        self.outcome_label.setVisible(bool(message))

    def outcome_text(self) -> str:
        """The last report as plain text, in the English the reports keep (for logs and tests)."""
        report = self.last_report
        return f"{report.outcome.value}: {english(report.message)}" if report is not None else ""

    def outcome_line(self) -> str:
        """The outcome line as plain text, in the window's language (as shown; for accessibility and for
        saying a report elsewhere in the window)."""
        outcome, message = self._shown
        return _said(message) if outcome is None else _outcome_said(_outcome_word(outcome), _said(message))

    def _clamped(self, typed: int, watts: int) -> None:
        if self.several:
            words = (
                tr("{typed} W is not possible: the most any of these cards takes is {watts} W, so {watts} W it is")
                if typed > watts
                else tr(
                    "{typed} W is not possible: the least any of these cards takes is {watts} W, so {watts} W it is"
                )
            )
        else:
            words = (
                tr("{typed} W is not possible: the most this card takes is {watts} W, so {watts} W it is")
                if typed > watts
                else tr("{typed} W is not possible: the least this card takes is {watts} W, so {watts} W it is")
            )
        self._show(None, words.format(typed=f"{typed:,}", watts=watts))

    def _on_spin(self, watts: int) -> None:
        self.cap_button.setText(tr("Cap at {watts} W").format(watts=watts))
        self.cap_changed.emit(int(watts))

    def _update_enabled(self) -> None:
        usable = self._sample is not None and not self._sample.lost and not self._busy and not self._locked
        self.cap_button.setEnabled(usable)
        self.restore_button.setEnabled(usable)
        any_usable = any(not s.lost for s in self._samples.values()) and not self._busy and not self._locked
        self.cap_all_button.setEnabled(any_usable)


def _outcome_word(outcome: Outcome) -> str:
    return core_text("power_panel", OUTCOME_WORDS[outcome])


def _outcome_said(outcome: str, message: str) -> str:
    return tr("{outcome}: {message}").format(outcome=outcome, message=message)


def _said(message: Text) -> str:
    """A message of gui/services in the window's language (the panel's own are translated already)."""
    return core_text("power_panel", message)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _enforced(result: PowerResult, index: int, read_back: ReadBack | None) -> float | None:
    """The limit the card holds after ``result`` (worker thread): read back from the driver where it can be,
    else the helper's own answer, which a failed read-back must not lose."""
    if read_back is None or not result.ok:
        return result.enforced_w
    try:
        return read_back(index)
    except Exception:
        return result.enforced_w
