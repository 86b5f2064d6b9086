"""`tightfit rpc-worker [--host ADDR] [--port N] [--threads N] [--cache] [--allow-network]`: lend this machine's
devices to another Tightfit (or llama.cpp's --rpc) through llama.cpp's RPC server, from the engine's own build.

The server is llama.cpp's (``ggml_backend_rpc_start_server``), the same as its rpc-server tool; the other
machine names it with ``--rpc HOST:PORT``. It serves every GPU of this machine, or its CPU where it has none,
and runs until ended (Ctrl+C). Its protocol has no authentication: it listens on 127.0.0.1 unless
``--allow-network`` is given with another address.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from gui.core.words import english_error

__all__ = ["DESCRIPTION", "add_rpc_worker_parser", "run_rpc_worker"]

HELP = "lend this machine's GPUs (or CPU) to another machine's Tightfit through llama.cpp's RPC server"
DESCRIPTION = (
    "Run llama.cpp's RPC server on this machine's devices (every GPU, or the CPU where there is none), from the "
    "same llama.cpp build as the engine. On the other machine, add --rpc HOST:PORT to tightfit chat, plan or "
    "serve (or the window's RPC servers): its loads then put layers on these devices. The protocol has no "
    "authentication or encryption: keep it on 127.0.0.1 with an SSH tunnel, or on a private network with "
    "--allow-network."
)


def add_rpc_worker_parser(sub: Any) -> None:
    from gui.services.rpc import DEFAULT_PORT, FIRST_BYTES_TIMEOUT_S

    parser = sub.add_parser("rpc-worker", help=HELP, description=DESCRIPTION)
    parser.add_argument(
        "--host", default="127.0.0.1", metavar="ADDR",
        help="IPv4 address to listen on (default 127.0.0.1: this machine only, e.g. through an SSH tunnel)",
    )  # fmt: skip
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, metavar="N",
        help=f"port to listen on (default {DEFAULT_PORT}, llama.cpp's; 0 picks a free one and says which)",
    )  # fmt: skip
    parser.add_argument(
        "--threads", type=int, default=None, metavar="N",
        help="CPU threads when the CPU is served (default: physical cores)",
    )  # fmt: skip
    parser.add_argument(
        "--cache", action="store_true",
        help="keep received weights in llama.cpp's RPC cache folder ($LLAMA_CACHE or ~/.cache/llama.cpp/rpc), so "
        "a second load of the same model sends less over the network",
    )  # fmt: skip
    parser.add_argument(
        "--first-bytes-timeout", type=float, default=FIRST_BYTES_TIMEOUT_S, metavar="SECONDS",
        help=f"close a connection that says nothing this long (default {FIRST_BYTES_TIMEOUT_S:g}): llama.cpp "
        "serves one client at a time, and a silent one would keep every other out",
    )  # fmt: skip
    parser.add_argument(
        "--allow-network", action="store_true",
        help="listen on an address other machines reach (unauthenticated: a private network only)",
    )  # fmt: skip


def cache_folder() -> str:
    """llama.cpp's rpc-server cache folder: $LLAMA_CACHE, else $XDG_CACHE_HOME/llama.cpp, else ~/.cache/llama.cpp,
    then rpc/ (tools/rpc/rpc-server.cpp: fs_get_cache_directory)."""
    base = os.environ.get("LLAMA_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "llama.cpp"
    )
    return os.path.join(base, "rpc")


def run_rpc_worker(args: argparse.Namespace) -> int:
    from gui.services.rpc import SECURITY_WARNING, RpcUnavailable, check_host, serve
    from gui.services.system import physical_cores

    problem = check_host(args.host, args.allow_network)
    if problem:
        raise SystemExit(f"tightfit: error: {problem}")
    if not 0 <= args.port <= 65535:
        raise SystemExit(f"tightfit: error: port {args.port} is not one to listen on: 1-65535, or 0 for a free one")
    if not 0 < args.first_bytes_timeout <= 3600:
        raise SystemExit("tightfit: error: --first-bytes-timeout must be above 0 and at most 3600 seconds")
    threads = args.threads or physical_cores() or 1
    if not 1 <= threads <= 1024:
        raise SystemExit(f"tightfit: error: --threads must be from 1 to 1024 (got {threads})")
    print(SECURITY_WARNING, file=sys.stderr)
    cache = None
    if args.cache:
        cache = cache_folder()
        try:
            os.makedirs(cache, exist_ok=True)
        except OSError as exc:
            raise SystemExit(
                f"tightfit: error: the RPC cache folder {cache} cannot be made: {english_error(exc)}"
            ) from exc

    def say(line: str) -> None:
        # One write per line: llama.cpp's server thread prints to the same stdout through C's stdio.
        sys.stdout.flush()
        os.write(sys.stdout.fileno(), f"tightfit rpc-worker: {line}\n".encode())

    try:
        status = serve(
            args.host, args.port, threads, cache_dir=cache, say=say, first_bytes_timeout_s=args.first_bytes_timeout
        )
    except RpcUnavailable as exc:
        raise SystemExit(f"tightfit: error: {english_error(exc)}") from exc
    except KeyboardInterrupt:
        return 0
    print(
        f"tightfit: error: llama.cpp's RPC server could not listen on {args.host}:{args.port} (in use, or not an "
        "address of this machine; llama.cpp said why above)",
        file=sys.stderr,
    )
    return status
