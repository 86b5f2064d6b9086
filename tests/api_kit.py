"""The API server on the real engine, for tests and the benchmark: an asyncio loop on a thread of its own (the
window's is the qasync loop), the engine client feeding every server it serves, and the engine's events kept."""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from gui.core import protocol as p
from gui.core.params import LoadSettings
from gui.services.api_server import ApiActivity, ApiServer
from gui.services.engine_client import EngineClient, EngineUnavailable, WorkerExited


class ServedEngine:
    """One engine process with a model loaded, and the API servers started on it."""

    def __init__(self, model: Path, settings: LoadSettings, log_dir: Path) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="api-loop", daemon=True)
        self._thread.start()
        self.settings = settings
        self.servers: list[ApiServer] = []
        self.events: list[Any] = []  # every event the engine sent, in order
        self._heard = threading.Condition()
        self.activity: queue.Queue[ApiActivity] = queue.Queue()
        self._lifecycle: queue.Queue[Any] = queue.Queue()
        self.client = EngineClient(self._on_event, log_dir)
        self.client.start()
        self._expect(p.Hello, 120)
        self.client.load(model, settings)
        self.loaded: p.Loaded = self._expect(p.Loaded, 300)

    def _on_event(self, event: Any) -> None:  # the client's reader thread
        with self._heard:
            self.events.append(event)
            self._heard.notify_all()
        for server in list(self.servers):
            server.feed(event)
        if isinstance(event, p.Hello | p.Loaded | p.LoadFailed | WorkerExited):
            self._lifecycle.put(event)

    def _expect(self, kind: type, timeout: float) -> Any:
        event = self._lifecycle.get(timeout=timeout)
        if not isinstance(event, kind):
            raise EngineUnavailable(f"expected {kind.__name__}, the engine sent {event!r}")
        return event

    def reply(self, request_id: int, timeout: float = 120) -> tuple[str, p.ReplyStats]:
        """The text and figures of a reply the engine was asked for directly (not through a server)."""

        def done() -> p.Done | None:
            return next((e for e in self.events if isinstance(e, p.Done) and e.request_id == request_id), None)

        with self._heard:
            if not self._heard.wait_for(lambda: done() is not None, timeout):
                raise TimeoutError(f"no Done for request {request_id}")
            ended = done()
            assert ended is not None
            text = "".join(e.text for e in self.events if isinstance(e, p.Token) and e.request_id == request_id)
        return text, ended.stats

    def call(self, make: Callable[[], Any]) -> Any:
        """Run a coroutine made by ``make`` on the server's loop and wait for its result."""

        async def run() -> Any:
            return await make()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(60)

    def serve(self, **options: Any) -> str:
        """A new server on this engine, listening on a free port of 127.0.0.1; its base URL. Its slots are the
        load's parallel slots unless ``slots`` says otherwise."""
        options.setdefault("slots", self.settings.n_parallel)

        async def start() -> tuple[ApiServer, tuple[str, int]]:
            server = ApiServer(self.client, **options)
            server.set_model(self.loaded.model_path, self.loaded.n_ctx)
            server.add_listener(self.activity.put)
            self.servers.append(server)
            return server, await server.start("127.0.0.1", 0)

        _server, (host, port) = self.call(start)
        return f"http://{host}:{port}"

    def close(self) -> None:
        for server in self.servers:
            self.call(server.stop)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.client.close()
        self.loop.close()


def served_engine(model: Path, settings: LoadSettings, logs: Path, n_ctx: int) -> Iterator[ServedEngine]:
    """For a module fixture: the engine loaded with ``settings`` (each sequence ``n_ctx`` cells), closed after."""
    engine = ServedEngine(model, settings, logs)
    assert engine.loaded.n_ctx == n_ctx
    yield engine
    engine.close()


def most_at_once(events: list[Any]) -> int:
    """The most replies the engine generated at one time, in the order it told it: from its prompt read to its end."""
    running: set[int] = set()
    most = 0
    for event in events:
        if isinstance(event, p.PromptRead):
            running.add(event.request_id)
            most = max(most, len(running))
        elif isinstance(event, p.Done | p.GenerateFailed):
            running.discard(event.request_id)
    return most
