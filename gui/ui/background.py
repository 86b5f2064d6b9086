"""The one way the window runs work off the UI thread: a job on a worker thread, its result (or its
error) handed to a callback on the UI thread.

Disk, network, NVML, planning and privileged helpers all go through :class:`Background`, so none of
them can freeze the window, and a result that arrives after the owner shut down is dropped.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot

__all__ = ["Background"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Background(QObject):
    """Worker threads with results delivered on the UI thread.

    ``run(job, then, failed)``: ``then(result)`` or ``failed(exception)`` is called on the UI thread.
    ``latest(key, ...)``: the same, but only the newest request per key delivers (older ones finish
    and are dropped), for work that follows a slider.
    """

    _finished = Signal(object, object)  # callback, argument: from a worker thread

    def __init__(self, name: str, workers: int = 1, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix=name)
        self._closed = False
        self._generation: dict[str, int] = {}
        # Queued to a slot of this object, which lives on the UI thread: the callback runs there.
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @property
    def closed(self) -> bool:
        return self._closed

    def run(
        self,
        job: Callable[[], T],
        then: Callable[[T], None] | None = None,
        failed: Callable[[Exception], None] | None = None,
    ) -> None:
        """Run ``job`` on a worker thread; an exception it raises goes to ``failed`` (logged if none)."""
        if self._closed:
            return

        def done(future: Future[T]) -> None:  # worker thread
            if future.cancelled():
                return
            try:
                result = future.result()
            except Exception as exc:
                if failed is None:
                    log.error("background job failed", exc_info=exc)
                    return
                self._emit(failed, exc)
                return
            if then is not None:
                self._emit(then, result)

        self._pool.submit(job).add_done_callback(done)

    def latest(
        self,
        key: str,
        job: Callable[[], T],
        then: Callable[[T], None],
        failed: Callable[[Exception], None] | None = None,
    ) -> None:
        """Like run, but a later call with the same key makes this one's result be dropped."""
        self.forget(key)
        generation = self._generation[key]

        def current(callback: Callable[[Any], None]) -> Callable[[Any], None]:
            def deliver(value: Any) -> None:
                if self._generation.get(key) == generation:
                    callback(value)

            return deliver

        self.run(job, current(then), current(failed) if failed is not None else None)

    def forget(self, key: str) -> None:
        """Drop the result of the request with this key that is still running, if any."""
        self._generation[key] = self._generation.get(key, 0) + 1

    def shutdown(self, wait: bool = False) -> None:
        """No more jobs or deliveries. ``wait``: finish what is queued first (e.g. pending writes)."""
        self._closed = True
        self._pool.shutdown(wait=wait, cancel_futures=not wait)

    def _emit(self, callback: Callable[[Any], None], value: Any) -> None:
        # RuntimeError: the owner was deleted while the job ran; nobody is left to tell.
        with contextlib.suppress(RuntimeError):
            self._finished.emit(callback, value)

    @Slot(object, object)
    def _deliver(self, callback: Callable[[Any], None], value: Any) -> None:
        if not self._closed:
            callback(value)
