"""A GPU exporter on 127.0.0.1 for the tests: a real HTTP server (http.server, its own thread) that answers
each path as the test set it, with recorded exporter text (tests/data/exporters/) or a hostile answer."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

DATA = Path(__file__).parent / "data" / "exporters"
DCGM_P40X2 = DATA / "dcgm_p40x2.prom"  # dcgm-exporter on "gpu-box": two Tesla P40s, GPU 0 at 78 °C under load
NVITOP_V100 = DATA / "nvitop_v100.prom"  # nvitop-exporter on 10.0.0.7: a V100-SXM2 at 86 °C, no fan reading
PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"


@dataclass
class Answer:
    body: bytes = b""
    status: int = 200
    content_type: str = PROMETHEUS_TEXT
    # Written instead of body: the handler's output stream (for answers that trickle or never end).
    stream: Callable[[BaseHTTPRequestHandler], None] | None = None


class ExporterServer:
    def __init__(self) -> None:
        self.answers: dict[str, Answer] = {}
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(self.path)
                answer = server.answers.get(self.path, Answer(b"not found\n", 404, "text/plain"))
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                if answer.stream is None:
                    self.send_header("Content-Length", str(len(answer.body)))
                self.end_headers()
                try:
                    if answer.stream is not None:
                        answer.stream(self)
                    else:
                        self.wfile.write(answer.body)
                except OSError:
                    pass  # the client hung up, as it should on a hostile answer

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]

    def url(self, path: str = "/metrics") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, answer: Answer | bytes | Path) -> str:
        """Answer ``path`` so from now on; returns its URL."""
        if isinstance(answer, Path):
            answer = Answer(answer.read_bytes())
        elif isinstance(answer, bytes):
            answer = Answer(answer)
        self.answers[path] = answer
        return self.url(path)


@contextmanager
def exporter_server() -> Iterator[ExporterServer]:
    server = ExporterServer()
    thread = threading.Thread(target=server.httpd.serve_forever, name="test-exporter", daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(5)


def trickle(chunk: bytes, every_s: float, for_s: float) -> Callable[[BaseHTTPRequestHandler], None]:
    """An answer that sends ``chunk`` every ``every_s`` seconds for ``for_s`` seconds (or until the client goes)."""

    def write(handler: BaseHTTPRequestHandler) -> None:
        end = time.monotonic() + for_s
        while time.monotonic() < end:
            handler.wfile.write(chunk)
            handler.wfile.flush()
            time.sleep(every_s)

    return write


def endless(chunk: bytes, total: int) -> Callable[[BaseHTTPRequestHandler], None]:
    """An answer of ``total`` bytes of ``chunk`` repeated, with no length announced."""

    def write(handler: BaseHTTPRequestHandler) -> None:
        sent = 0
        while sent < total:
            handler.wfile.write(chunk)
            sent += len(chunk)

    return write


def free_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
