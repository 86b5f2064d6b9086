"""Other machines' devices in the load settings: the RPC workers a load uses (llama.cpp's --rpc), what each
has (asked off the UI thread), and the network to them, for the plan's speed."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QWidget,
)

from gui.core.params import MAX_RPC_SERVERS, SPECS_BY_KEY, NetworkLink, join_endpoints, rpc_endpoints
from gui.core.planner import Device
from gui.core.specs import ChoiceSpec, FloatSpec, Spec, specs_of
from gui.core.words import Text, message_of, words
from gui.services.devices import device_from_remote
from gui.services.rpc import RemoteDevice, RpcUnavailable, ask_devices, probe
from gui.ui.background import Background
from gui.ui.i18n import Tr, error_text, number, sentence_text
from gui.ui.list_edit import take_chosen
from gui.ui.plain import plain_label
from gui.ui.spec_widgets import choice_box, float_box, help_text, label
from gui.ui.theme import themed_style

tr = Tr("rpc_panel")
_ENDPOINT = Qt.ItemDataRole.UserRole  # the endpoint behind an item's words
RPC_SERVERS = cast(Spec[str], SPECS_BY_KEY["rpc_servers"])
_LINK = {s.key: s for s in specs_of(NetworkLink)}
LINK_PRESET = cast(ChoiceSpec, _LINK["preset"])
LINK_MBIT = cast(FloatSpec, _LINK["mbit_s"])
LINK_RTT = cast(FloatSpec, _LINK["rtt_ms"])
# The link presets as the list shows them (the figures are NetworkLink's own).
LINK_NAMES = {
    "1gbe": tr.mark("1 GbE (940 Mbit/s, 0.2 ms round trip)"),
    "10gbe": tr.mark("10 GbE (9,400 Mbit/s, 0.1 ms round trip)"),
    "custom": tr.mark("Custom bandwidth and round trip"),
}


@dataclass(frozen=True)
class WorkerAnswer:
    """What one worker said: its devices, or why they are not known (in words)."""

    endpoint: str
    devices: tuple[Device, ...] = ()
    problem: Text = ""
    unreachable: bool = False  # nothing takes a connection there (the load would fail before loading)


def ask_worker(
    endpoint: str, ask: Callable[[str], Sequence[RemoteDevice]] = ask_devices, timeout_s: float = 3.0
) -> WorkerAnswer:
    """One worker's devices (off the UI thread: a connection try, then up to 30 s for the answer)."""
    try:
        (host_port,) = rpc_endpoints(endpoint)
    except ValueError as exc:
        return WorkerAnswer(endpoint, problem=message_of(exc), unreachable=True)
    problems = probe([host_port], timeout_s)
    if problems:
        return WorkerAnswer(endpoint, problem=problems[0], unreachable=True)
    try:
        found = ask(endpoint)
    except RpcUnavailable as exc:
        return WorkerAnswer(endpoint, problem=message_of(exc))
    if not found:
        return WorkerAnswer(endpoint, problem=words("RPC server {endpoint} reports no devices", endpoint=endpoint))
    return WorkerAnswer(endpoint, tuple(device_from_remote(d) for d in found))


class RpcPanel(QWidget):
    """The workers' list (add, remove, each checked by the RPC servers' declaration), what each has, and the
    network link. The list is the load setting rpc_servers; the answers are the plan's remote devices."""

    servers_changed = Signal(str)  # the rpc_servers text
    answers_changed = Signal()  # a worker answered (or the list changed): the plan's remote devices moved
    link_changed = Signal(object)  # NetworkLink

    def __init__(
        self, parent: QWidget | None = None, ask: Callable[[str], WorkerAnswer] = ask_worker, workers: int = 4
    ) -> None:
        super().__init__(parent)
        self._ask = ask
        self._jobs = Background("rpc-ask", workers=workers, parent=self)
        self.answers: dict[str, WorkerAnswer] = {}
        self.pending: set[str] = set()
        grid = QGridLayout(self)
        grid.setContentsMargins(0, 0, 0, 0)
        title = QLabel(tr("RPC workers"), self)
        title.setToolTip(help_text(RPC_SERVERS))
        self.entry = QLineEdit(self)
        self.entry.setMaxLength(300)
        self.entry.setPlaceholderText(tr("host:port of a worker, e.g. 10.0.0.5:50052"))
        self.entry.setToolTip(help_text(RPC_SERVERS))
        self.entry.setAccessibleName(tr("RPC worker to add"))
        self.add_button = QPushButton(tr("Add"), self)
        self.add_button.setToolTip(tr("Add this worker: its devices come before this machine's in the plan"))
        self.list = QListWidget(self)
        self.list.setAccessibleName(label(RPC_SERVERS))
        self.list.setToolTip(help_text(RPC_SERVERS))
        self.list.setMaximumHeight(64)
        self.remove_button = QPushButton(tr("Remove"), self)
        self.remove_button.setToolTip(tr("Remove the selected worker from the load"))
        self.ask_button = QPushButton(tr("Ask again"), self)
        self.ask_button.setToolTip(tr("Ask every worker again for its devices and free memory"))
        self.link_label = QLabel(label(LINK_PRESET), self)
        self.link_label.setToolTip(help_text(LINK_PRESET))
        self.link = choice_box(LINK_PRESET, self, {k: tr(v) for k, v in LINK_NAMES.items()})
        self.mbit: QDoubleSpinBox = float_box(LINK_MBIT, self)
        self.rtt: QDoubleSpinBox = float_box(LINK_RTT, self)
        self.note = plain_label(parent=self)  # one line: why a typed worker was not added
        self.note.setWordWrap(True)
        themed_style(self.note, lambda palette: f"color: {palette.warn}")
        self.note.hide()

        grid.addWidget(title, 0, 0)
        grid.addWidget(self.entry, 0, 1)
        grid.addWidget(self.add_button, 0, 2)
        grid.addWidget(self.list, 1, 0, 2, 2)
        grid.addWidget(self.remove_button, 1, 2)
        grid.addWidget(self.ask_button, 2, 2)
        link_row = QHBoxLayout()
        link_row.addWidget(self.link, 2)
        link_row.addWidget(self.mbit, 1)
        link_row.addWidget(self.rtt, 1)
        grid.addWidget(self.link_label, 3, 0)
        grid.addLayout(link_row, 3, 1, 1, 2)
        grid.addWidget(self.note, 4, 0, 1, 3)
        grid.setColumnStretch(1, 1)

        self.add_button.clicked.connect(self.add_typed)
        self.entry.returnPressed.connect(self.add_typed)
        self.remove_button.clicked.connect(self.remove_selected)
        self.ask_button.clicked.connect(self.ask_again)
        self.link.currentIndexChanged.connect(self._link_moved)
        self.mbit.valueChanged.connect(self._link_moved)
        self.rtt.valueChanged.connect(self._link_moved)
        self._show_rows()

    # ---- the list -------------------------------------------------------------------------------

    def endpoints(self) -> list[str]:
        return [str(self.list.item(i).data(_ENDPOINT)) for i in range(self.list.count())]

    def servers(self) -> str:
        """The load setting rpc_servers: "host:port,host:port"."""
        return ",".join(self.endpoints())

    def set_servers(self, text: str) -> None:
        """The list from a checked setting (stored settings, a file opened); nothing emitted but the answers."""
        if text == self.servers():
            return
        try:
            endpoints = [join_endpoints([e]) for e in rpc_endpoints(text)]
        except ValueError as exc:  # checked where the settings came from; said, never raised, here
            self.say(" ".join(error_text(exc, "params").split()))
            return
        self.list.clear()
        for endpoint in endpoints:
            self._append(endpoint)
        self._list_changed(emit=False)

    def add_typed(self) -> None:
        typed = self.entry.text().strip()
        if not typed:
            return
        try:
            # Checked as the whole setting is: a bad address, a repeat, or one past the 16 llama.cpp takes.
            value = RPC_SERVERS.parse(",".join([*self.endpoints(), typed]))
        except ValueError as exc:
            self.say(tr("Not added: {why}").format(why=" ".join(error_text(exc, "params").split())))
            return
        endpoint = value.split(",")[-1]
        self._append(endpoint)
        self.entry.clear()
        self.say("")
        self._list_changed()

    def remove_selected(self) -> None:
        if not take_chosen(self.list):
            return
        self.say("")
        self._list_changed()

    def _append(self, endpoint: str) -> None:
        item = QListWidgetItem(endpoint)
        item.setData(_ENDPOINT, endpoint)
        self.list.addItem(item)

    def _list_changed(self, emit: bool = True) -> None:
        listed = set(self.endpoints())
        for gone in set(self.answers) - listed:
            del self.answers[gone]
        for endpoint in self.pending - listed:
            self._jobs.forget(endpoint)
        self.pending &= listed
        for endpoint in self.endpoints():
            if endpoint not in self.answers and endpoint not in self.pending:
                self._ask_one(endpoint)
        self._show_rows()
        if emit:
            self.servers_changed.emit(self.servers())
        self.answers_changed.emit()

    # ---- asking the workers -----------------------------------------------------------------------

    def ask_again(self) -> None:
        for endpoint in self.endpoints():
            self.answers.pop(endpoint, None)
            self._ask_one(endpoint)
        self._show_rows()
        self.answers_changed.emit()

    def _ask_one(self, endpoint: str) -> None:
        self.pending.add(endpoint)
        ask = self._ask
        self._jobs.latest(
            endpoint,
            lambda: ask(endpoint),
            self._answered,
            lambda exc: self._answered(WorkerAnswer(endpoint, problem=message_of(exc) or type(exc).__name__)),
        )

    def _answered(self, answer: WorkerAnswer) -> None:
        if answer.endpoint not in self.endpoints():
            return  # removed while it was asked
        self.pending.discard(answer.endpoint)
        self.answers[answer.endpoint] = answer
        self._show_rows()
        self.answers_changed.emit()

    def devices(self) -> tuple[Device, ...]:
        """The workers' devices, in llama.cpp's order (the list's, each server's by number); only those known."""
        found: list[Device] = []
        for endpoint in self.endpoints():
            answer = self.answers.get(endpoint)
            if answer is not None:
                found += answer.devices
        return tuple(found)

    def problems(self) -> list[str]:
        """Each listed worker's problem, in the window's language."""
        return [
            sentence_text(a.problem) for e in self.endpoints() if (a := self.answers.get(e)) is not None and a.problem
        ]

    def refusal(self) -> str:
        """Why a load must wait or cannot go, in words; '' when every listed worker answered."""
        problems = self.problems()
        if problems:
            return tr("an RPC worker cannot be used: {problems}. Start it, or remove it from the list").format(
                problems=tr("; ").join(problems)
            )
        if self.pending:
            return tr("the RPC workers are still being asked for their devices: load once they answered")
        return ""

    def summary(self) -> tuple[str, bool]:
        """The workers in words for the plan, and whether one is a problem; ('', False) without workers."""
        if not self.list.count():
            return "", False
        lines = []
        for endpoint in self.endpoints():
            answer = self.answers.get(endpoint)
            if answer is None:
                lines.append(tr("{worker}: asking for its devices…").format(worker=endpoint))
            elif answer.problem:
                lines.append(
                    tr("{worker} cannot be used: {problem}").format(
                        worker=endpoint, problem=sentence_text(answer.problem)
                    )
                )
        known = self.devices()
        if known:
            free = sum(d.free_mib for d in known)
            lines.append(
                tr(
                    "%n device(s) on the RPC workers ({devices}), {free} MiB free, planned before this machine's.",
                    n=len(known),
                ).format(devices=", ".join(d.name for d in known), free=number(free))
            )
        return " ".join(lines), bool(self.problems())

    def _show_rows(self) -> None:
        """Each worker's line says what is known of it; the link matters only with workers."""
        for i in range(self.list.count()):
            item = self.list.item(i)
            endpoint = str(item.data(_ENDPOINT))
            answer = self.answers.get(endpoint)
            if answer is None:
                state = tr("asking…")
            elif answer.problem:
                state = tr("cannot be reached") if answer.unreachable else tr("no answer")
            else:
                free = sum(d.free_mib for d in answer.devices)
                state = tr("%n device(s), {free} MiB free", n=len(answer.devices)).format(free=number(free))
            item.setText(f"{endpoint} — {state}")
            item.setToolTip(sentence_text(answer.problem) if answer is not None and answer.problem else "")
        listed = self.list.count() > 0
        custom = self.link.currentData() == "custom"
        self.link_label.setVisible(listed)
        self.link.setVisible(listed)
        self.mbit.setVisible(listed and custom)
        self.rtt.setVisible(listed and custom)
        self.remove_button.setEnabled(listed)
        self.ask_button.setEnabled(listed)
        self.add_button.setEnabled(self.list.count() < MAX_RPC_SERVERS)

    # ---- the link ---------------------------------------------------------------------------------

    def network_link(self) -> NetworkLink:
        return NetworkLink(str(self.link.currentData()), self.mbit.value(), self.rtt.value())

    def set_network_link(self, link: NetworkLink) -> None:
        """The link as it was last stated (a preference); said like a change the user made."""
        index = self.link.findData(link.preset)
        if index >= 0:
            self.link.setCurrentIndex(index)
        self.mbit.setValue(link.mbit_s)
        self.rtt.setValue(link.rtt_ms)

    def link_name(self) -> str:
        return self.link.currentText()

    def _link_moved(self, *_: object) -> None:
        self._show_rows()
        self.link_changed.emit(self.network_link())

    def say(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def shutdown(self) -> None:
        """Answers still on their way are dropped; a worker's question ends with its own deadline."""
        self._jobs.shutdown()
