"""An engine client for window tests whose subject is not the engine: same interface as
gui.services.engine_client.EngineClient, answered by a thread in this process, no llama.cpp.

Loads read the real GGUF header (so layer counts are the file's) and can be held until the test
releases them; replies stream a fixed text word by word with honest counts.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gui.core import protocol as p
from gui.core.gguf_reader import read_model
from gui.core.params import LoadSettings
from gui.services.engine_client import EngineUnavailable, WorkerExited

BUILD = p.EngineBuild(backend="CPU", gpu_offload=False, llama_cpp_python="fake", system_info="fake engine")


class FakeEngine:
    def __init__(self, reply: str = "Hello from a test engine.") -> None:
        self.reply = reply
        self.build: p.EngineBuild | None = None
        self.loads: list[tuple[str, LoadSettings]] = []  # every load sent, in order
        self.release = threading.Event()  # loads wait on it; set unless a test holds them
        self.release.set()
        self._listener: Callable[[Any], None] = lambda _e: None
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._ids = itertools.count(1)
        self._stopped: set[int] = set()
        self.pid: int | None = None

    def set_listener(self, listener: Callable[[Any], None]) -> None:
        self._listener = listener

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.alive:
            return
        self.pid = os.getpid() * 1000 + next(self._ids)
        self._thread = threading.Thread(target=self._serve, name="fake-engine", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        thread = self._thread
        if thread is not None:
            self.release.set()
            self._inbox.put(None)
            thread.join(timeout)

    def kill(self) -> None:
        """The worker dies: what a crash looks like to the window."""
        self._inbox.put("kill")

    # ---- commands -------------------------------------------------------------------------

    def _send(self, command: Any) -> None:
        if not self.alive:
            raise EngineUnavailable("the engine is not running")
        self._inbox.put(command)

    def load(self, model_path: str | os.PathLike[str], settings: LoadSettings) -> None:
        self.loads.append((str(model_path), settings.validated()))
        self._send(p.Load(str(model_path), settings.to_dict()))

    def unload(self) -> None:
        self._send(p.Unload())

    def dry_run(self, model_path: str | os.PathLike[str], settings: LoadSettings) -> int:
        request_id = next(self._ids)
        self._send(p.DryRun(request_id, str(model_path), settings.validated().to_dict()))
        return request_id

    def generate(
        self,
        messages: tuple[p.ChatMessage, ...],
        max_tokens: int = 512,
        sampling: p.Sampling | None = None,
        ignore_eos: bool = False,
    ) -> int:
        request_id = next(self._ids)
        self._send(p.Generate(request_id, messages, max_tokens, sampling or p.Sampling(), ignore_eos))
        return request_id

    def stop(self, request_id: int) -> None:
        self._stopped.add(request_id)

    def request_stats(self) -> None:
        pass

    # ---- the "worker" -----------------------------------------------------------------------

    def _serve(self) -> None:
        self.build = BUILD
        self._listener(p.Hello(p.PROTOCOL_VERSION, BUILD, self.pid or 0))
        loaded: p.Loaded | None = None
        while True:
            command = self._inbox.get()
            if command is None:
                self._listener(WorkerExited(0, "The engine process exited.", expected=True, pid=self.pid))
                return
            if command == "kill":
                reason = "The engine process was killed (SIGKILL)."
                self._listener(WorkerExited(-9, reason, expected=False, pid=self.pid))
                return
            if isinstance(command, p.Load):
                loaded = self._load(command)
            elif isinstance(command, p.Unload):
                loaded = None
                self._listener(p.Unloaded())
            elif isinstance(command, p.DryRun):
                self._listener(_dry_run(command))
            elif isinstance(command, p.Generate):
                self._generate(command, loaded)

    def _load(self, command: p.Load) -> p.Loaded | None:
        self._listener(p.LoadProgress(0.5))
        self.release.wait()
        settings = LoadSettings.from_dict(command.settings)
        try:
            n_layer = read_model(command.model_path).n_layer or 0
        except Exception as exc:
            self._listener(p.LoadFailed(command.model_path, str(exc)))
            return None
        loaded = p.Loaded(command.model_path, settings.n_ctx, n_layer, settings.n_gpu_layers, 1.0, "model")
        self._listener(loaded)
        return loaded

    def _generate(self, command: p.Generate, loaded: p.Loaded | None) -> None:
        rid = command.request_id
        if loaded is None:
            self._listener(p.GenerateFailed(rid, "no model is loaded"))
            return
        started = time.perf_counter()
        words = [w + " " for w in self.reply.split()]
        n_gen = 0
        finish = "stop"
        for index, word in enumerate(words[: command.max_tokens]):
            if rid in self._stopped:
                finish = "cancelled"
                break
            self._listener(p.Token(rid, word, index))
            n_gen += 1
            time.sleep(0.002)
        else:
            finish = "length" if len(words) > command.max_tokens else "stop"
        elapsed = (time.perf_counter() - started) * 1000
        n_prompt = sum(len(m.content.split()) + 4 for m in command.messages)
        stats = p.ReplyStats(n_prompt, n_prompt, n_gen, 1.0, 1.0, elapsed, n_gen / max(elapsed / 1000, 1e-6), finish)
        self._listener(p.Done(rid, stats))


def _dry_run(command: p.DryRun) -> p.DryRunResult:
    size = Path(command.model_path).stat().st_size if Path(command.model_path).exists() else 0
    return p.DryRunResult(command.request_id, command.model_path, True, "", size, 0, 0.0, 0.0, {}, {}, 1.0, ())
