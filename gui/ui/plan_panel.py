"""The memory plan beside the sliders: target device, VRAM bars, verdict, speed ceiling, auto-fit, verify."""

from __future__ import annotations

import html
from dataclasses import dataclass, replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from gui.core import protocol as p
from gui.core.cards import CARDS, CUSTOM_BANDWIDTH, CUSTOM_VRAM, Card, custom_card
from gui.core.memory_check import Correction
from gui.core.params import MARGIN
from gui.core.planner import Device, Plan, Verdict
from gui.core.theme import Palette
from gui.core.words import Text, joined
from gui.services.devices import device_from_card, device_from_gpu
from gui.services.nvml import GpuInfo
from gui.ui.i18n import Tr, core_text, sentence_text
from gui.ui.plain import TextArea
from gui.ui.spec_widgets import float_box, int_box
from gui.ui.spec_widgets import label as spec_label
from gui.ui.theme import current_palette, follow_theme, themed_style
from gui.ui.vram_bar import SEGMENTS, VramBar, verdict_colour

tr = Tr("plan_panel")
segment = Tr("vram_bar")  # the VRAM bar's segment names, in its legend
CPU_ONLY = "cpu"
CUSTOM = "custom"


@dataclass(frozen=True)
class Target:
    """What the plan is for: measured GPUs, a catalog card, a custom card, or the CPU alone."""

    key: str
    label: str
    devices: tuple[Device, ...]
    measured: bool
    simulated: bool = False

    @property
    def here(self) -> bool:
        """The plan is for what a load on this machine will use (not a card it does not have)."""
        return self.measured or self.simulated or self.key == CPU_ONLY


def format_verify(result: p.DryRunResult, plan: Plan | None, note: str = "") -> str:
    """llama.cpp's figures beside the planner's for the same settings and the same devices."""
    if not result.ok:
        return tr("llama.cpp dry run failed: {error}").format(error=sentence_text(result.error))
    compute = sum(result.compute_mib.values())
    if plan is None:
        parts = [
            tr("weights {mib} MiB").format(mib=f"{result.weights_bytes / (1 << 20):,.1f}"),
            tr("KV {mib} MiB").format(mib=f"{result.kv_mib:,.2f}"),
            tr("compute {mib} MiB").format(mib=f"{compute:,.1f}"),
        ]
    else:
        parts = [
            tr("weights {mib} MiB (plan {plan})").format(
                mib=f"{result.weights_bytes / (1 << 20):,.1f}", plan=f"{plan.weights_bytes / (1 << 20):,.1f}"
            ),
            tr("KV {mib} MiB (plan {plan})").format(mib=f"{result.kv_mib:,.2f}", plan=f"{plan.kv_mib:,.2f}"),
            tr("compute {mib} MiB (plan {plan})").format(mib=f"{compute:,.1f}", plan=f"{plan.compute_mib:,.1f}"),
        ]
        if result.recurrent_mib or plan.recurrent_mib:
            parts.append(
                tr("recurrent {mib} MiB (plan {plan})").format(
                    mib=f"{result.recurrent_mib:,.2f}", plan=f"{plan.recurrent_mib:,.2f}"
                )
            )
    where = ", ".join(result.compute_mib) or tr("host")
    text = tr("llama.cpp's own dry run ({where}, {ms} ms): ").format(where=where, ms=f"{result.elapsed_ms:.0f}")
    text += "; ".join(parts)
    return f"{text}. {note}" if note else text


def planner_text(text: Text) -> str:
    """A sentence of the planner (a suggestion, a note, why a plan cannot be made) in the window's language."""
    return core_text("planner", text)


def describe_host(plan: Plan) -> str:
    """Host memory in words: every term that is not zero, then where the layers are."""
    host = plan.host
    terms = [tr("weights {gib} GiB").format(gib=f"{host.weights_mib / 1024:.2f}")]
    terms += [
        f"{name} {mib:,.0f} MiB"
        for name, mib in (
            ("KV", host.kv_mib),
            (tr("recurrent state"), host.recurrent_mib),
            (tr("compute"), host.compute_mib),
            (tr("output"), host.output_mib),
        )
        if mib >= 0.5
    ]
    where = tr("{on_gpu} of {total} layers on the GPU").format(on_gpu=plan.layers_on_gpu, total=plan.n_layer + 1)
    if plan.cpu_expert_layers:
        where += tr(", the experts of {blocks} of them in host memory").format(blocks=plan.cpu_expert_layers)
    return tr("Host RAM: {terms} — {gib} GiB in all. {where}.").format(
        terms=", ".join(terms), gib=f"{host.total / 1024:.2f}", where=where
    )


class PlanPanel(QWidget):
    target_changed = Signal()
    auto_fit_requested = Signal()
    verify_requested = Signal()

    def __init__(self, parent: QWidget | None = None, simulated: Card | tuple[Card, ...] = ()) -> None:
        super().__init__(parent)
        self.simulated = (simulated,) if isinstance(simulated, Card) else simulated  # GPU 0, 1, ... in order
        self.targets: list[Target] = []
        self._user_chose = False  # once the user picks a target, refreshes keep it
        # What the running engine was built for: None until it says hello. A build without GPU offload runs
        # every layer on the CPU whatever NVML sees, so a plan for the measured GPUs would promise a fit
        # that the load cannot have.
        self.engine_offload: bool | None = None
        # Learned per measured GPU (by device name) from earlier loads on it: added to its overhead term.
        self.corrections: dict[str, Correction] = {}
        self.plan: Plan | None = None
        # The RPC workers' devices, planned before whatever target is chosen (llama.cpp lists them first), and
        # the link to them as the load settings name it.
        self.remote: tuple[Device, ...] = ()
        self.link_name = ""
        self.target_combo = QComboBox(self)
        self.target_combo.setAccessibleName(tr("Plan for device"))
        # Long card names are cut in the closed box (the list shows them whole), so they never widen the window.
        self.target_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.target_combo.setMinimumContentsLength(18)
        self.custom_vram = int_box(CUSTOM_VRAM, self)
        self.custom_bw = float_box(CUSTOM_BANDWIDTH, self)
        self.custom_labels = [QLabel(spec_label(spec), self) for spec in (CUSTOM_VRAM, CUSTOM_BANDWIDTH)]
        # Fixed regions: the plan's words change with every slider, the layout around them does not.
        self.mode_label = TextArea(2, self)  # may quote the driver's error
        self.mode_label.setAccessibleName(tr("Planning mode"))
        self._mode_look = ("muted", False)  # the palette role the planning mode is written in, and bold
        # The RPC workers in words: asking, what they have, or which one cannot be reached (before any load).
        self.remote_label = TextArea(2, self)
        self.remote_label.setAccessibleName(tr("RPC workers"))
        self._remote_trouble = False
        themed_style(self.remote_label, self._remote_style)
        self.remote_label.hide()
        self.bars: list[VramBar] = []
        self.bars_box = QVBoxLayout()
        self.host_label = TextArea(2, self)
        self.verdict_label = TextArea(3, self, rich=True)
        self.verdict_label.setAccessibleName(tr("Plan verdict"))
        self.margin = int_box(MARGIN, self)
        self.margin.setAccessibleName(tr("Safety margin"))
        self.auto_fit_button = QPushButton(tr("&Auto-fit"), self)
        self.auto_fit_button.setToolTip(
            tr("Most GPU layers, then the largest context, that fit with the margin. Pinned settings stay.")
        )
        self.verify_button = QPushButton(tr("Ver&ify"), self)
        self.verify_button.setToolTip(tr("Ask llama.cpp for its own dry run of these settings (reads no weights)."))
        self.verify_label = TextArea(2, self)  # llama.cpp's messages
        self.verify_label.setAccessibleName(tr("Verify result"))
        themed_style(self.verify_label, lambda palette: f"color: {palette.muted}")
        self.verify_label.hide()
        # After a load on a GPU: the driver's reading beside the plan (MemoryCheck.describe).
        self.measured_label = TextArea(2, self)
        self.measured_label.setAccessibleName(tr("Measured memory"))
        themed_style(self.measured_label, lambda palette: f"color: {palette.muted}")
        self.measured_label.hide()

        top = QGridLayout()
        top.addWidget(QLabel(tr("Plan for"), self), 0, 0)
        top.addWidget(self.target_combo, 0, 1, 1, 3)
        custom_row = QHBoxLayout()
        for label, box in zip(self.custom_labels, (self.custom_vram, self.custom_bw), strict=True):
            custom_row.addWidget(label)
            custom_row.addWidget(box, 1)
        top.addLayout(custom_row, 1, 1, 1, 3)
        legend = QLabel(self)
        legend.setTextFormat(Qt.TextFormat.RichText)
        follow_theme(legend, lambda palette: legend.setText(_legend(palette)))
        legend.setWordWrap(True)
        themed_style(legend, lambda palette: f"font-size: 8pt; color: {palette.text}")
        buttons = QHBoxLayout()
        buttons.addWidget(QLabel(tr("Margin"), self))
        buttons.addWidget(self.margin)
        buttons.addStretch(1)
        buttons.addWidget(self.verify_button)
        buttons.addWidget(self.auto_fit_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addWidget(self.mode_label)
        layout.addWidget(self.remote_label)
        layout.addLayout(self.bars_box)
        layout.addWidget(legend)
        layout.addWidget(self.host_label)
        layout.addWidget(self.verdict_label)
        layout.addLayout(buttons)
        layout.addWidget(self.verify_label)
        layout.addWidget(self.measured_label)

        self.target_combo.currentIndexChanged.connect(self._target_changed)
        self.target_combo.activated.connect(self._chosen_by_user)
        self.custom_vram.valueChanged.connect(self._target_changed)
        self.custom_bw.valueChanged.connect(self._target_changed)
        self.margin.valueChanged.connect(lambda _: self.target_changed.emit())
        self.auto_fit_button.clicked.connect(self.auto_fit_requested)
        self.verify_button.clicked.connect(self.verify_requested)
        self.set_targets([], tr("looking for GPUs…"))
        self._problem = ""
        themed_style(self.mode_label, self._mode_style)
        follow_theme(self, lambda _palette: self.show_plan(self.plan, self._problem), now=False)

    # ---- targets --------------------------------------------------------------------------

    def set_targets(self, gpus: list[GpuInfo], why_none: Text) -> None:
        simulated = self.simulated
        targets: list[Target] = []
        if simulated:
            names = [tr("SIMULATED {card}").format(card=card.name) for card in simulated]
            label = tr("SIMULATED {card}").format(card=" + ".join(card.name for card in simulated))
            devices = tuple(device_from_card(card, name=name) for card, name in zip(simulated, names, strict=True))
            key = "sim:" + "+".join(card.key for card in simulated)
            targets.append(Target(key, label, devices, False, True))
        if gpus:
            devices = tuple(device_from_gpu(g) for g in gpus)
            label = tr("{cards} (measured)").format(cards=", ".join(d.name for d in devices))
            targets.append(Target("detected", label, devices, True))
        # Without a card, the plan is for what will run: this machine's CPU and RAM. A card it does not
        # have is a question the user asks.
        here = tr("This machine: CPU only") if not gpus and not simulated else tr("CPU only (no GPU offload)")
        targets.append(Target(CPU_ONLY, here, (), False))
        targets += [
            Target(k, tr("What if I had a {card}?").format(card=c.name), (device_from_card(c),), False)
            for k, c in CARDS.items()
        ]
        targets.append(Target(CUSTOM, tr("What if I had a custom card…"), (), False))
        self.why_none = why_none
        previous = self.current_target().key if self.targets else None
        self.targets = targets
        self.target_combo.blockSignals(True)
        self.target_combo.clear()
        for target in targets:
            self.target_combo.addItem(target.label, target.key)
        keys = [t.key for t in targets]
        default = previous if self._user_chose and previous in keys else keys[0]
        self.target_combo.setCurrentIndex(keys.index(default))
        self.target_combo.blockSignals(False)
        self._target_changed()

    def _chosen_by_user(self, *_: object) -> None:
        self._user_chose = True

    def current_target(self) -> Target:
        """The target chosen, with the RPC workers' devices in front of its own."""
        target = self._local_target()
        return replace(target, devices=self.remote + target.devices) if self.remote else target

    def _local_target(self) -> Target:
        target = self.targets[max(0, self.target_combo.currentIndex())]
        if target.key == CUSTOM:
            card = custom_card(self.custom_vram.value(), self.custom_bw.value())
            return Target(CUSTOM, target.label, (device_from_card(card),), False)
        if self.engine_unusable(target):
            return Target(target.key, target.label, (), True)  # planned as it will run: on the CPU
        if (target.measured or target.simulated) and self.corrections:
            devices = tuple(
                replace(d, overhead_correction_mib=c.mib) if (c := self.corrections.get(d.name)) else d
                for d in target.devices
            )
            return replace(target, devices=devices)
        return target

    def _learned(self, target: Target) -> str:
        """The corrections in force for the target's cards, in words ('' when none)."""
        names = {d.name for d in target.devices}
        learned = [
            tr("{card}: {correction}").format(card=name, correction=sentence_text(c.describe()))
            for name, c in self.corrections.items()
            if name in names
        ]
        return " " + tr("CUDA context and runtime {learned}.").format(learned=tr("; ").join(learned)) if learned else ""

    def set_corrections(self, corrections: dict[str, Correction]) -> None:
        """What loads measured on each GPU beyond the plan (by device name); the plan adds it from now on."""
        if corrections != self.corrections:
            self.corrections = dict(corrections)
            self._target_changed()

    def set_remote(self, devices: tuple[Device, ...], words: str, trouble: bool, link_name: str) -> None:
        """The RPC workers' devices (planned first), what to say of them, whether that is a problem, and the
        link's name for the speed line."""
        self.link_name = link_name
        self._remote_trouble = trouble
        self.remote_label.setText(words)
        self.remote_label.setStyleSheet(self._remote_style(current_palette()))
        self.remote_label.setVisible(bool(words))
        if devices != self.remote:
            self.remote = devices
            self._target_changed()

    def engine_unusable(self, target: Target) -> bool:
        """The GPUs NVML measured are there, but the engine cannot put a layer on them."""
        return target.measured and self.engine_offload is False

    def set_engine_offload(self, offload: bool | None) -> None:
        if offload == self.engine_offload:
            return
        self.engine_offload = offload
        self._target_changed()

    def select_target(self, key: str) -> None:
        keys = [t.key for t in self.targets]
        self.target_combo.setCurrentIndex(keys.index(key))

    def devices(self) -> tuple[Device, ...]:
        return self.current_target().devices

    def margin_mib(self) -> float:
        return float(self.margin.value())

    def _target_changed(self, *_: object) -> None:
        target = self.current_target()
        custom = target.key == CUSTOM
        for widget in (self.custom_vram, self.custom_bw, *self.custom_labels):
            widget.setVisible(custom)
        if self.engine_unusable(self.targets[max(0, self.target_combo.currentIndex())]):
            mode = tr(
                "This engine build has no GPU offload: the GPU layers will run on the CPU, so the plan is for "
                "the CPU and RAM. The Doctor tab has the command that builds the engine for this GPU."
            )
            look = ("error", True)
        elif target.simulated:
            mode = tr("SIMULATED card: planning against a simulated GPU, not a real one.") + self._learned(target)
            look = ("simulated", True)
        elif target.measured:
            mode = tr("Measured: free memory read from the driver just now.") + self._learned(target)
            look = ("ok", False)
        elif target.key == CPU_ONLY:
            shown = self.why_none and not self.targets[0].measured
            why = tr(" ({why})").format(why=core_text("nvml", self.why_none)) if shown else ""
            mode = tr("Planning a load on this machine's CPU and RAM{why}.").format(why=why)
            look = ("muted", False)
        else:
            mode = tr(
                "What if: catalog figures for a card this machine does not have. A load here still runs on "
                "what the machine has, and is not held back by this plan."
            )
            look = ("warn", False)
        self.mode_label.setText(mode)
        self._mode_look = look
        self.mode_label.setStyleSheet(self._mode_style(current_palette()))
        self.target_changed.emit()

    # ---- plan ---------------------------------------------------------------------------------

    def _mode_style(self, palette: Palette) -> str:
        role, bold = self._mode_look
        return f"color: {getattr(palette, role)}" + ("; font-weight: bold" if bold else "")

    def _remote_style(self, palette: Palette) -> str:
        return f"color: {palette.error}; font-weight: bold" if self._remote_trouble else f"color: {palette.muted}"

    def show_plan(self, plan: Plan | None, problem: str = "") -> None:
        self.plan = plan
        self._problem = problem
        devices = plan.devices if plan else ()
        while len(self.bars) < len(devices):
            bar = VramBar(self)
            self.bars.append(bar)
            self.bars_box.addWidget(bar)
        for i, bar in enumerate(self.bars):
            bar.setVisible(i < len(devices))
            bar.set_plan(devices[i] if i < len(devices) else None)
        if plan is None:
            self.host_label.setText("")
            self.verdict_label.setText(html.escape(problem or tr("Select a model to see its memory plan.")))
            return
        lead = f"{html.escape(problem)}<br>" if problem else ""  # e.g. an auto-fit that failed
        self.host_label.setText(describe_host(plan))
        colour = verdict_colour(plan.verdict)
        speed = (
            " "
            + tr("Decode ceiling ≈ <b>{rate} tok/s</b> (memory bandwidth bound).").format(
                rate=f"{plan.predicted_tg_tok_s:.0f}"
            )
            if plan.predicted_tg_tok_s
            else ""
        )
        verdict = tr("{verdict}.").format(verdict=core_text("planner", plan.verdict.value).capitalize())
        if plan.link_hops:
            # The network's share of each token (docs/rpc.md); the workers' own memory speed is not known.
            speed += " " + tr("Network on {link}: {hops} hops, {ms} ms per token").format(
                link=html.escape(self.link_name), hops=plan.link_hops, ms=f"{plan.link_ms_per_token:.2f}"
            )
            speed += (
                tr(", included.")
                if plan.predicted_tg_tok_s
                else tr(" — at most {rate} tok/s from the network alone.").format(
                    rate=f"{1000 / plan.link_ms_per_token:,.0f}"
                )
            )
        text = f'{lead}<b style="color:{colour}">{verdict}</b>{speed}'
        if plan.suggestions:
            # Without a fit: what would make one. With part of the model in host memory: what buys room.
            lead = tr("To make it fit") if plan.verdict is not Verdict.FITS else tr("To put more on the GPU")
            text += "<br>" + tr("{lead}: {suggestions}.").format(lead=lead, suggestions=_sentences(plan.suggestions))
        if plan.notes:
            text += f'<br><span style="color:{current_palette().muted}">'
            text += tr("Notes: {notes}.").format(notes=_sentences(plan.notes)) + "</span>"
        self.verdict_label.setText(text)

    def show_verify(
        self, result: p.DryRunResult | None, pending: bool = False, compared: Plan | None = None, note: str = ""
    ) -> None:
        if pending:
            self.say_verify(tr("Asking llama.cpp for its dry run…"))
        elif result is None:
            self.say_verify("")
        else:
            self.say_verify(format_verify(result, compared, note))

    def show_measured(self, text: str) -> None:
        """What the driver measured after the last load, beside the plan; '' hides the line."""
        self.measured_label.setText(text)
        self.measured_label.setVisible(bool(text))

    def say_verify(self, text: str) -> None:
        """The dry run's words; the region takes room only once there is something to read in it."""
        self.verify_label.setText(text)
        self.verify_label.setVisible(bool(text))


def _sentences(said: tuple[Text, ...]) -> str:
    """The planner's sentences, each in the window's language, as escaped HTML in one run."""
    return html.escape(planner_text(joined("; ", said)))


def _legend(palette: Palette) -> str:
    """What each colour of the VRAM bar is, in the bar's colours."""
    swatches = " ".join(
        f'<span style="color:{palette.segments[s.key]}">■</span>&nbsp;{segment(s.label)}' for s in SEGMENTS
    )
    return swatches + f' <span style="color:{palette.muted}">▒</span>&nbsp;' + tr("margin")
