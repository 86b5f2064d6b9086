"""Client side of the engine: spawns the worker process and relays its events.

Events are delivered to a listener on a reader thread; the window wraps the listener in a Qt adapter,
the CLI in a queue. If the worker dies, the listener gets a WorkerExited event that says how and why in
plain words, the cause read from the last lines llama.cpp wrote, and the client can start a fresh worker.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing as mp
import multiprocessing.spawn as mp_spawn
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

from gui.core import protocol as p
from gui.core.llama_log import Failure, exit_reason, explain_failure
from gui.core.params import LoadSettings
from gui.core.words import Text, joined
from gui.services.numa import NumaPin, write_launcher
from gui.services.system import oom_kill_count

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerExited:
    """Not a wire message: the client synthesises it when the worker's pipe closes."""

    exitcode: int | None
    reason: Text  # plain words for the window: how the process ended
    expected: bool  # True after an orderly shutdown
    failure: Failure | None = None  # why, read from the log (None after an orderly shutdown)
    pid: int | None = None  # which worker: a report can arrive after a new worker was started
    said_hello: bool = True  # False: it died before it was ready (it cannot start at all)
    log_path: Path | None = None  # that worker's log, kept when it did not end in order


# What a listener is given: every event of the worker's, and the client's own report of the worker's end.
ClientEvent = p.Event | WorkerExited
Listener = Callable[[ClientEvent], None]
E = TypeVar("E", bound=p.Event)  # what SyncEngine.expect waits for


class EngineUnavailable(RuntimeError):
    pass


def worker_exited(
    exitcode: int | None,
    log_lines: tuple[str, ...],
    expected: bool,
    pid: int | None = None,
    said_hello: bool = True,
    *,
    oom_killed: bool | None = None,
    ended_by: Text = "",
    log_path: Path | None = None,
) -> WorkerExited:
    """The report of a worker's end: how it ended (exit_reason) and, unless it was asked to, why (the log,
    the kernel's count of out-of-memory kills, or Tightfit's own reason for ending it)."""
    failure = None if expected else explain_failure(log_lines, exitcode, oom_killed=oom_killed, ended_by=ended_by)
    reason = exit_reason(exitcode)
    return WorkerExited(exitcode, reason, expected, failure, pid, said_hello, log_path)


def default_log_dir() -> Path:
    return Path(platformdirs.user_log_dir("tightfit", appauthor=False))


class EngineClient:
    _serial = itertools.count(1)

    def __init__(self, listener: Listener | None = None, log_dir: Path | None = None) -> None:
        self._listener: Listener = listener or (lambda _event: None)
        self._log_dir = log_dir or default_log_dir()
        self._process: Any = None
        self._commands: Connection | None = None
        self._reader: threading.Thread | None = None
        self._send_lock = threading.Lock()
        self._closing = False
        self._ended_by: dict[int, Text] = {}  # pid -> why Tightfit killed that worker
        self._request_ids = itertools.count(1)
        self.log_path: Path | None = None
        self.build: p.EngineBuild | None = None
        # The NUMA node the next worker starts on (its CPUs; its memory too where numactl is installed).
        self.numa: NumaPin | None = None
        self.numa_memory = False  # whether the running worker's memory is bound as well

    def set_listener(self, listener: Listener) -> None:
        """Where events go (on the reader thread); set before start()."""
        self._listener = listener

    # ---- lifecycle ----------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.is_alive()

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        """Spawn a fresh worker. Its Hello event arrives on the listener when it is ready."""
        if self.alive:
            return
        from gui.services.engine_worker import run_worker

        self._log_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = self._log_dir / f"engine-{os.getpid()}-{next(self._serial)}.log"
        self.log_path.write_bytes(b"")
        ctx = mp.get_context("spawn")
        cmd_recv, cmd_send = ctx.Pipe(duplex=False)
        evt_recv, evt_send = ctx.Pipe(duplex=False)
        pin = self.numa
        process = ctx.Process(
            target=run_worker,
            args=(cmd_recv, evt_send, str(self.log_path), sorted(pin.cpus) if pin is not None else None),
            name="tightfit-engine",
            daemon=True,
        )
        launcher = write_launcher(self._log_dir, pin.node) if pin is not None else None
        self.numa_memory = launcher is not None
        if launcher is None:
            process.start()
        else:
            # multiprocessing's interpreter path is global to the process: set it for this start only.
            python = mp_spawn.get_executable()
            ctx.set_executable(str(launcher))
            try:
                process.start()
            finally:
                ctx.set_executable(python)
        # Close our copies of the child's ends so a dead worker reads as EOF here.
        cmd_recv.close()
        evt_send.close()
        self._closing = False
        self._process = process
        self._commands = cmd_send
        self._reader = threading.Thread(
            target=self._read_events, args=(evt_recv, process, self.log_path), name="engine-events", daemon=True
        )
        self._reader.start()

    def close(self, timeout: float = 5.0) -> None:
        """Ask the worker to shut down; kill it if it does not within timeout."""
        process = self._process
        if process is None:
            return
        self._closing = True
        with contextlib.suppress(EngineUnavailable):
            self._send(p.Shutdown())
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join(timeout)
        if self._reader is not None and self._reader is not threading.current_thread():
            self._reader.join(timeout)
        if self._commands is not None:
            self._commands.close()
        self._process = None
        self._commands = None
        if self.log_path is not None and process.exitcode == 0:
            self.log_path.unlink(missing_ok=True)

    def kill(self, reason: Text = "") -> None:
        """End the worker abruptly; ``reason`` (in words) is what its exit report will give as the cause."""
        if self._process is not None and self._process.pid:
            if reason:
                self._ended_by[self._process.pid] = reason
            os.kill(self._process.pid, signal.SIGKILL)

    # ---- commands -------------------------------------------------------------------------

    def _send(self, command: p.Command) -> None:
        with self._send_lock:
            if self._commands is None:
                raise EngineUnavailable("the engine is not running")
            try:
                self._commands.send(p.wrap(command))
            except (BrokenPipeError, OSError) as exc:
                raise EngineUnavailable("the engine is not running") from exc

    def load(self, model_path: str | os.PathLike[str], settings: LoadSettings) -> None:
        self._send(p.Load(str(model_path), settings.validated().to_dict()))

    def unload(self) -> None:
        self._send(p.Unload())

    def generate(
        self,
        messages: tuple[p.ChatMessage, ...],
        max_tokens: int = 512,
        sampling: p.Sampling | None = None,
        ignore_eos: bool = False,
        chat_format: str = "",
        *,
        prompt: str | None = None,
        stops: tuple[str, ...] = (),
        concurrent: bool = False,
        grammar: p.ReplyGrammar | None = None,
    ) -> int:
        """Ask for a reply; returns its request id. ``prompt``: continue this text as it is instead of laying out
        ``messages`` in the chat format; ``stops``: more texts that end the reply; ``concurrent``: join the replies
        under way in a parallel slot instead of replacing them; ``grammar``: what the reply may be (see
        protocol.Generate)."""
        request_id = next(self._request_ids)
        sampling = sampling or p.Sampling()
        command = p.Generate(
            request_id, messages, max_tokens, sampling, ignore_eos, chat_format, prompt, stops, concurrent, grammar
        )
        self._send(command)
        return request_id

    def dry_run(self, model_path: str | os.PathLike[str], settings: LoadSettings) -> int:
        request_id = next(self._request_ids)
        self._send(p.DryRun(request_id, str(model_path), settings.validated().to_dict()))
        return request_id

    def request_stats(self) -> None:
        self._send(p.GetStats())

    def bench(
        self,
        n_prompt: int = 512,
        n_gen: int = 0,
        n_depth: int = 0,
        reps: int = 5,
        n_threads: int = 0,
        warmup: bool = True,
    ) -> int:
        """Time one llama-bench test on the loaded model (see protocol.Bench); returns its request id. Events: a
        BenchSample per repetition, then BenchDone (or BenchFailed). ``stop(request_id)`` ends it after the
        repetition under way. ``n_threads`` 0: the load's threads."""
        request_id = next(self._request_ids)
        self._send(p.Bench(request_id, n_prompt, n_gen, n_depth, reps, n_threads, warmup))
        return request_id

    def stop(self, request_id: int) -> None:
        self._send(p.Stop(request_id))

    # ---- events ---------------------------------------------------------------------------

    def _read_events(self, events: Connection, process: Any, log_path: Path) -> None:
        hello = False
        oom_kills = oom_kill_count()  # the kernel's tally now, to tell at the end whether it killed this one
        try:
            while True:
                try:
                    message = p.unwrap_event(events.recv())
                except (EOFError, OSError):
                    break
                except p.ProtocolError as exc:
                    log.error("%s", exc)
                    process.kill()
                    break
                if isinstance(message, p.Hello):
                    self.build = message.build
                    hello = True
                self._listener(message)
        finally:
            events.close()
            process.join(5.0)
            code = process.exitcode
            expected = self._closing and code == 0
            tail = read_log_tail(log_path, 200)  # this worker's log, even if a new one has started since
            now = oom_kill_count()
            oom_killed = now > oom_kills if now is not None and oom_kills is not None else None
            ended_by = self._ended_by.pop(process.pid, "")
            exited = worker_exited(
                code, tail, expected, process.pid, hello, oom_killed=oom_killed, ended_by=ended_by, log_path=log_path
            )
            self._listener(exited)


def read_log_tail(path: Path | None, lines: int = 200) -> tuple[str, ...]:
    """The log's last ``lines`` lines, after the lines near its start that name the devices of the load
    ("using device RPC0 (127.0.0.1:50052)"), so that a failure long after the load can still name them."""
    if path is None or not path.exists():
        return ()
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        fh.seek(max(0, size - 256 * 1024))
        text = fh.read().decode("utf-8", "replace")
    tail = tuple(line.rstrip() for line in text.splitlines() if line.strip())[-lines:]
    devices = tuple(line.rstrip() for line in head.splitlines() if "using device " in line)
    return tuple(line for line in devices[:MAX_DEVICE_LINES] if line not in tail) + tail


HEAD_BYTES = 64 * 1024  # where llama.cpp names the devices of a load
MAX_DEVICE_LINES = 32


class SyncEngine:
    """A blocking wrapper for the CLI and benchmarks: events go to a queue that the caller drains."""

    def __init__(self, log_dir: Path | None = None) -> None:
        self.events: queue.Queue[ClientEvent] = queue.Queue()
        self.client = EngineClient(self.events.put, log_dir)

    def __enter__(self) -> SyncEngine:
        self.client.start()
        self.expect(p.Hello, timeout=120)
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()

    def next_event(self, timeout: float) -> p.Event:
        try:
            event = self.events.get(timeout=timeout)
        except queue.Empty:
            raise EngineUnavailable(f"the engine did not answer within {timeout:.0f} s") from None
        if isinstance(event, WorkerExited):
            raise EngineUnavailable(
                joined(" ", (event.reason, event.failure.summary)) if event.failure else event.reason
            )
        return event

    def expect(self, kind: type[E], timeout: float) -> E:
        deadline = time.monotonic() + timeout
        while True:
            event = self.next_event(max(0.1, deadline - time.monotonic()))
            if isinstance(event, kind):
                return event
            if isinstance(event, (p.LoadFailed, p.GenerateFailed, p.CommandRejected, p.BenchFailed)):
                raise EngineUnavailable(event.error)
