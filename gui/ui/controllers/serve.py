"""Serve: the OpenAI-compatible API on the window's engine, in the window's own asyncio loop. Its requests wait
while the window uses the engine itself (a reply, a load, a sweep), and the chat waits for the replies it is
answering; each reply's speed goes to the Monitor's chart and the journey."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer, Signal

from gui.core.engine_use import Use
from gui.core.preferences import SERVE_HOST, SERVE_PORT_NUMBER, SERVE_REMOTE, SERVE_STRICT_MODEL, Preference
from gui.core.words import message_of
from gui.services.api_server import ApiActivity, ApiServer
from gui.ui.controllers.shared import Feature, Shared
from gui.ui.i18n import Tr, core_text, error_text
from gui.ui.monitor import MonitorView
from gui.ui.serve_panel import ServeChoice, ServePanel

tr = Tr("serve_controller")
API_RATE_SHOWN_MS = 1500  # an API reply's decode rate stays on the monitor's chart this long after it ends


class ServeController(Feature):
    serving_changed = Signal(object)  # (host, port) once the API listens; None when it stopped or could not start
    reply_served = Signal(object)  # ReplyStats of an API reply that generated text, for the journey

    def __init__(
        self,
        shared: Shared,
        *,
        panel: ServePanel,
        monitor: MonitorView,
        chat_streaming: Callable[[], bool],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(shared, parent)
        self.panel = panel
        self.monitor = monitor
        self.chat_streaming = chat_streaming
        self.api: ApiServer | None = None  # the OpenAI-compatible API on this engine, while serving
        self._tap: Callable[[Any], None] | None = None  # the server's own bound feed: taps are removed by identity
        self._timer = QTimer(self)  # its counts (requests arrive between activities) and the held state
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._tick)
        self._counted = (0.0, 0)  # (when, API tokens by then) at the last tick
        self._tasks: set[asyncio.Future[None]] = set()  # kept: the loop holds tasks weakly
        panel.start_requested.connect(self.start)
        panel.stop_requested.connect(self.stop)
        self.engine_use.subscribe(self._sync_hold)

    def start(self, choice: ServeChoice) -> None:
        """Listen on the chosen address in the window's asyncio loop, serving the engine's loaded model."""
        if self.api is not None:
            return
        try:
            choice.check()
        except ValueError as exc:
            self.panel.say(error_text(exc, "serve_panel"))
            return
        state = self.session.state
        # As many replies at once as the loaded model has parallel slots (the count is kept while it serves).
        slots = state.settings.n_parallel if state.ready and state.settings is not None else 1
        server = ApiServer(
            self.bridge.client,
            slots=slots,
            api_key=choice.api_key or None,
            cors_origin=choice.cors_origin or None,
            strict_model=choice.strict_model,
        )
        if state.ready and state.model is not None and state.loaded is not None:
            server.set_model(str(state.model), state.loaded.n_ctx)
        server.add_listener(self._activity)
        self._tap = server.feed
        self.bridge.add_tap(self._tap)
        self.api = server
        self.panel.say(tr("Starting on {address}…").format(address=f"{choice.host}:{choice.port}"))
        self._keep(asyncio.ensure_future(self._listen(server, choice)))

    def _keep(self, task: asyncio.Future[None]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _untap(self) -> None:
        if self._tap is not None:
            self.bridge.remove_tap(self._tap)
            self._tap = None

    async def _listen(self, server: ApiServer, choice: ServeChoice) -> None:
        try:
            address = await server.start(choice.host, choice.port)
        except OSError as exc:
            if self.api is server:
                self.api = None
                self._untap()
            self.panel.set_serving(None)
            self.panel.say(
                tr("Could not listen on {address}: {error}.").format(
                    address=f"{choice.host}:{choice.port}",
                    error=core_text("serve_panel", exc.strerror or message_of(exc)),
                )
            )
            self.serving_changed.emit(None)
            return
        if self.api is not server:  # stopped (or the window closed) while it started
            await server.stop()
            return
        where: dict[Preference[Any], Any] = {SERVE_HOST: choice.host, SERVE_PORT_NUMBER: choice.port}
        self.store.write_many(where | {SERVE_REMOTE: choice.allow_remote, SERVE_STRICT_MODEL: choice.strict_model})
        self.panel.set_serving(address, server.model.id if server.model is not None else None, server.slots)
        self._counted = (time.monotonic(), server.tokens_out)
        self._timer.start()
        self._sync_hold()
        self.serving_changed.emit(address)

    def stop(self) -> None:
        server = self.api
        if server is None:
            return
        self.api = None
        self._timer.stop()
        self._untap()
        self.panel.set_serving(None)
        self.engine_use.set(Use.API, False)
        stopping = server.stop()
        try:
            self._keep(asyncio.ensure_future(stopping))
        except RuntimeError:  # no event loop any more (the application is ending): nothing is served now
            stopping.close()
        self.serving_changed.emit(None)

    def _sync_hold(self) -> None:
        """API requests wait while the window uses the engine itself; /health says for what."""
        server = self.api
        if server is None:
            return
        blocker = self.engine_use.blocker(Use.API)
        use = blocker.value if blocker is not None else ""  # in English, as the API speaks
        if use and server.held != use:
            server.hold(use)
        elif not use and server.held:
            server.release()
        self.panel.set_counts(server.running, server.queued, server.held)

    def _answering(self, server: ApiServer) -> None:
        self.engine_use.set(Use.API, server.running > 0)
        self._sync_hold()

    def _tick(self) -> None:
        """Every second while serving: the model served, who waits for whom, and the API's live token rate on
        the monitor's chart (tokens generated for API replies since the last tick)."""
        server = self.api
        if server is None:
            return
        self.panel.set_model(server.model.id if server.model is not None else None)
        self._answering(server)
        now, tokens = time.monotonic(), server.tokens_out
        last_time, last_tokens = self._counted
        self._counted = (now, tokens)
        if server.running and tokens > last_tokens and now > last_time:
            self.monitor.set_engine_rate((tokens - last_tokens) / (now - last_time))

    def _activity(self, activity: ApiActivity) -> None:
        """An API request started or ended (on the loop's thread, the UI thread): chat, monitor and journey."""
        server = self.api
        if server is None:
            return
        self._answering(server)
        if not activity.finished:
            return
        self.panel.add_request(activity)
        stats = activity.stats
        if stats is not None and stats.n_gen > 1:
            self.reply_served.emit(stats)
            self.monitor.set_engine_rate(activity.decode_tok_s)
            QTimer.singleShot(API_RATE_SHOWN_MS, self._idle)

    def _idle(self) -> None:
        if (self.api is None or not self.api.running) and not self.chat_streaming():
            self.monitor.set_engine_rate(0.0)
