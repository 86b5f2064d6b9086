"""An engine client for window tests whose subject is not the engine: same interface as
gui.services.engine_client.EngineClient, answered by a thread in this process, no llama.cpp.

Loads read the real GGUF header (so layer counts are the file's) and can be held until the test
releases them, and report the chat format a test sets; replies stream a fixed text word by word with
honest counts, and every Generate is kept for a test to read what was asked. Benchmarks report each
repetition at a fixed speed (``bench_tok_s``), a Stop ending them after the repetition under way.
"""

from __future__ import annotations

import itertools
import os
import queue
import re
import threading
import time
from pathlib import Path
from typing import Any

from gui.core import protocol as p
from gui.core.chat_formats import FORMATS, MODEL_FORMAT
from gui.core.gguf_reader import read_model
from gui.core.llama_log import exit_reason, explain_failure
from gui.core.params import LoadSettings
from gui.services.engine_client import EngineClient, EngineUnavailable, WorkerExited

_pids = itertools.count(1)
BUILD = p.EngineBuild(backend="CPU", gpu_offload=False, llama_cpp_python="fake", system_info="fake engine")
# The engine a machine with an NVIDIA card has once the set-up built it for the card.
CUDA_BUILD = p.EngineBuild(backend="CUDA", gpu_offload=True, llama_cpp_python="fake", system_info="fake CUDA engine")


class FakeEngine(EngineClient):
    """EngineClient's commands, with a thread in this process standing in for the worker process."""

    def __init__(self, reply: str = "Hello from a test engine.", build: p.EngineBuild = BUILD) -> None:
        super().__init__()
        self.reply = reply
        self.fake_build = build
        self.notice = ""  # said before every reply, as the worker does when it falls back from a template
        self.decode_tok_s: float | None = None  # the decode rate replies report; None: as fast as they stream
        self._death: tuple[int, tuple[str, ...], str] = (-9, (), "")
        self.frozen = False
        self.loads: list[tuple[str, LoadSettings]] = []  # every load sent, in order
        self.requests: list[p.Generate] = []  # every Generate sent, in order
        self.benches: list[p.Bench] = []  # every Bench sent, in order
        self.bench_tok_s = 1000.0  # the speed every benchmark repetition reports
        self.bench_rep_s = 0.0  # how long each repetition takes here (for a test that stops one)
        # A load whose settings this names (a reason) fails with it: a model that will not load that way.
        self.load_error: Any = None  # Callable[[LoadSettings], str] | None
        self.chat_format = (MODEL_FORMAT, "")  # what a load reports: the format chosen and why
        self.release = threading.Event()  # loads wait on it; set unless a test holds them
        self.release.set()
        self._inbox: queue.Queue[Any] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._stopped: set[int] = set()
        self._fake_pid: int | None = None
        self._dying = False

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def pid(self) -> int | None:
        return self._fake_pid

    def start(self) -> None:
        if self.alive:
            return
        self._dying = False
        self._fake_pid = os.getpid() * 1000 + next(_pids)
        self._thread = threading.Thread(target=self._serve, name="fake-engine", daemon=True)
        self._thread.start()

    def close(self, timeout: float = 5.0) -> None:
        thread = self._thread
        if thread is not None:
            self.release.set()
            self._inbox.put(None)
            thread.join(timeout)

    def kill(self, reason: str = "", *, exitcode: int = -9, log: tuple[str, ...] = ()) -> None:
        """The worker dies, having written ``log``: what a crash looks like to the window. ``reason``:
        why the window ended it, as EngineClient.kill takes it."""
        self._death = (exitcode, log, reason)
        self.frozen = False
        self._dying = True  # a benchmark under way ends without a word, as in a killed worker
        self._inbox.put("kill")

    def freeze(self) -> None:
        """From now on the worker answers nothing, as a deadlocked one would."""
        self.frozen = True

    def _send(self, command: Any) -> None:
        if not self.alive:
            raise EngineUnavailable("the engine is not running")
        if self.frozen:
            return
        if isinstance(command, p.Stop):  # the real worker reads Stop on its own thread, mid-reply, and says so
            self._stopped.add(command.request_id)
            ack = p.Acknowledged("stop", command.request_id)
            threading.Thread(target=self._listener, args=(ack,), daemon=True).start()
            return
        if isinstance(command, p.Load):
            self.loads.append((command.model_path, LoadSettings.from_dict(command.settings)))
        elif isinstance(command, p.Generate):
            self.requests.append(command)
        elif isinstance(command, p.Bench):
            self.benches.append(command)
        self._inbox.put(command)

    # ---- the "worker" -----------------------------------------------------------------------

    def _serve(self) -> None:
        self.build = self.fake_build
        self._listener(p.Hello(p.PROTOCOL_VERSION, self.fake_build, self.pid or 0))
        loaded: p.Loaded | None = None
        while True:
            command = self._inbox.get()
            if command is None:
                self._listener(WorkerExited(0, "The engine process exited.", expected=True, pid=self.pid))
                return
            if command == "kill":
                code, log, ended_by = self._death
                failure = explain_failure(log, code, ended_by=ended_by)
                reason = exit_reason(code)
                self._listener(WorkerExited(code, reason, expected=False, failure=failure, pid=self.pid))
                return
            if isinstance(command, p.Load):
                loaded = self._load(command)
            elif isinstance(command, p.Unload):
                loaded = None
                self._listener(p.Acknowledged("unload"))
                self._listener(p.Unloaded())
            elif isinstance(command, p.DryRun):
                self._listener(_dry_run(command))
            elif isinstance(command, p.Generate):
                self._generate(command, loaded)
            elif isinstance(command, p.Bench):
                self._bench(command, loaded)

    def _load(self, command: p.Load) -> p.Loaded | None:
        self._listener(p.LoadProgress(0.5))
        self.release.wait()
        settings = LoadSettings.from_dict(command.settings)
        error = self.load_error(settings) if self.load_error is not None else ""
        if error:
            self._listener(p.LoadFailed(command.model_path, error))
            return None
        try:
            n_layer = read_model(command.model_path).n_layer or 0
        except Exception as exc:
            self._listener(p.LoadFailed(command.model_path, str(exc)))
            return None
        loaded = p.Loaded(command.model_path, settings.n_ctx, n_layer, settings.n_gpu_layers, 1.0, *self.chat_format)
        self._listener(loaded)
        return loaded

    def _generate(self, command: p.Generate, loaded: p.Loaded | None) -> None:
        rid = command.request_id
        if loaded is None:
            self._listener(p.GenerateFailed(rid, "no model is loaded"))
            return
        if command.chat_format and command.chat_format not in FORMATS:
            self._listener(p.GenerateFailed(rid, f"unknown chat format {command.chat_format!r}", kind="template"))
            return
        started = time.perf_counter()
        n_prompt = sum(len(m.content.split()) + 4 for m in command.messages)
        self._listener(p.PromptRead(rid, n_prompt))
        if self.notice:
            self._listener(p.Notice(rid, self.notice))
        words = re.findall(r"\s*\S+", self.reply) or [self.reply]  # the reply exactly, a word per token
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
        rate = self.decode_tok_s if self.decode_tok_s is not None else n_gen / max(elapsed / 1000, 1e-6)
        stats = p.ReplyStats(n_prompt, n_prompt, n_gen, 1.0, 1.0, elapsed, rate, finish)
        self._listener(p.Done(rid, stats))

    def _bench(self, command: p.Bench, loaded: p.Loaded | None) -> None:
        rid = command.request_id
        if loaded is None:
            self._listener(p.BenchFailed(rid, "no model is loaded", kind="no_model"))
            return
        needed = command.n_depth + command.n_prompt + command.n_gen
        if needed > loaded.n_ctx:
            error = f"the test needs a context of {needed} tokens, the loaded one holds {loaded.n_ctx}"
            self._listener(p.BenchFailed(rid, error, kind="context"))
            return
        elapsed = int((command.n_prompt + command.n_gen) / self.bench_tok_s * 1e9)
        samples: list[int] = []
        for index in range(command.reps):
            if rid in self._stopped or self._inbox.qsize():  # a Stop, or a command that replaces the benchmark
                break
            time.sleep(self.bench_rep_s)
            samples.append(elapsed)
            self._listener(p.BenchSample(rid, index, command.reps, elapsed))
        if self._dying:
            return
        stopped = len(samples) < command.reps
        threads = command.n_threads or 1
        done = p.BenchDone(rid, command.n_prompt, command.n_gen, command.n_depth, threads, tuple(samples), stopped)
        self._listener(done)


def _dry_run(command: p.DryRun) -> p.DryRunResult:
    size = Path(command.model_path).stat().st_size if Path(command.model_path).exists() else 0
    return p.DryRunResult(command.request_id, command.model_path, True, "", size, 0, 0.0, 0.0, {}, {}, 1.0, ())
