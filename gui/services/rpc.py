"""Other machines' devices through llama.cpp's RPC backend (ggml/include/ggml-rpc.h).

Three things, each on llama.cpp's own machinery:

* :func:`serve` runs llama.cpp's RPC server (``ggml_backend_rpc_start_server``) on this machine's devices,
  from the engine's own libraries (the installed llama-cpp-python's ``lib`` folder, built with GGML_RPC=ON):
  the same server as llama.cpp's ``rpc-server`` tool, without a second binary. It picks the devices as that
  tool does: every device that is not a CPU, else the CPU.
* :func:`probe` tries a TCP connection to each server within a deadline. llama.cpp's RPC client aborts the
  process when a server cannot be reached (ggml-rpc.cpp: RPC_STATUS_ASSERT), so a server that is down is said
  in words before anything asks llama.cpp to use it; before a load, :func:`unreachable` also asks the servers
  for their devices within a deadline, as llama.cpp's client waits for ever on one that takes the connection
  and never answers.
* :func:`ask_devices` asks each server for its devices and their free and total memory
  (``ggml_backend_rpc_add_server``, ``ggml_backend_dev_memory``), in a child process: a server that stops
  answering cannot hang or end the caller, only that child, which a deadline ends.

Only child processes load llama.cpp's libraries here (ctypes, from the installed package's folder; nothing
imports the llama_cpp bindings). The engine worker adds the servers to a load itself
(gui/services/engine_worker.py).
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import ipaddress
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gui.core.openai_api import is_loopback
from gui.core.params import MAX_RPC_SERVERS, join_endpoints, rpc_endpoints
from gui.core.words import Text, english_error, joined, message_of, words

__all__ = [
    "DEFAULT_PORT",
    "PROBE_TIMEOUT_S",
    "SECURITY_WARNING",
    "RemoteDevice",
    "RpcUnavailable",
    "ask_devices",
    "probe",
    "serve",
]

# llama.cpp's rpc-server listens on 50052 by default (tools/rpc/rpc-server.cpp).
DEFAULT_PORT = 50052
PROBE_TIMEOUT_S = 3.0
ASK_TIMEOUT_S = 30.0
# Before a load: how long the servers have to say their devices. A server answers in milliseconds; one that takes
# the connection and says nothing (busy with another client, or not llama.cpp's) would hang the load for ever.
ANSWER_TIMEOUT_S = 15.0
# The worker's door: a client says its first bytes at once (llama.cpp's client sends its hello on connecting); one
# that says nothing would hold llama.cpp's only client slot for ever.
FIRST_BYTES_TIMEOUT_S = 10.0
_RELAY_BYTES = 1 << 20
_MAX_REPLY_BYTES = 64 * 1024
# Connections the door holds at once (each a thread or two): llama.cpp's server answers one client at a time, so
# more than a few only wait; the rest are closed at once instead of each taking a thread for the first-bytes wait.
MAX_DOOR_CLIENTS = 8
_MAX_DEVICES_PER_SERVER = 16

# What llama.cpp's own rpc-server prints for a host other than 127.0.0.1 (tools/rpc/rpc-server.cpp), and the
# remedy: the protocol has no authentication and no encryption; anyone who reaches the port can run graphs on
# the devices and read or write their memory.
SECURITY_WARNING = (
    "WARNING: Never expose the RPC server to an open network! This is an experimental feature and is not secure!\n"
    "llama.cpp's RPC protocol has no authentication and no encryption: anyone who can reach this port can use "
    "this machine's devices and read and write their memory. Bind it to a private interface (a LAN only your "
    "machines are on) or reach it through an SSH tunnel (ssh -N -L 50052:127.0.0.1:50052 this-host, then "
    "--rpc 127.0.0.1:50052 on the other machine)."
)

# ggml-backend.h: enum ggml_backend_dev_type
_DEV_CPU, _DEV_GPU, _DEV_IGPU, _DEV_ACCEL = 0, 1, 2, 3


class RpcUnavailable(Exception):
    """llama.cpp's RPC backend cannot be used here or a server cannot be reached: one line, in words."""


@dataclass(frozen=True)
class RemoteDevice:
    """One device of an RPC server, as llama.cpp names it in this process ("RPC0") and as its server sees it."""

    endpoint: str  # "host:port"
    index: int  # the device's number on its server
    name: str  # llama.cpp's name for it on this machine: RPC0, RPC1, ... in the order the servers are added
    free_bytes: int
    total_bytes: int


# ---- reaching a server ----------------------------------------------------------------------------


def probe(endpoints: Sequence[tuple[str, int]], timeout_s: float = PROBE_TIMEOUT_S) -> list[Text]:
    """Why each unreachable server cannot be reached, in words; [] when every one takes a TCP connection.

    A connection is closed at once: llama.cpp's server then waits for the next client, as after any client."""
    problems: list[Text] = []
    for host, port in endpoints[:MAX_RPC_SERVERS]:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                pass
        except socket.gaierror as exc:
            problems.append(
                words(
                    "RPC server {endpoint}: the host name does not resolve ({why})",
                    endpoint=f"{host}:{port}",
                    why=exc.strerror or message_of(exc),
                )
            )
        except TimeoutError:
            problems.append(
                words(
                    "RPC server {endpoint} did not answer within {seconds} s (a firewall, or the machine is off)",
                    endpoint=f"{host}:{port}",
                    seconds=f"{timeout_s:g}",
                )
            )
        except ConnectionRefusedError:
            problems.append(
                words(
                    "RPC server {endpoint} refused the connection: nothing listens there (start `tightfit "
                    "rpc-worker --host ADDR --port {port}` on that machine)",
                    endpoint=f"{host}:{port}",
                    port=port,
                )
            )
        except OSError as exc:
            problems.append(
                words(
                    "RPC server {endpoint} cannot be reached: {why}",
                    endpoint=f"{host}:{port}",
                    why=exc.strerror or message_of(exc),
                )
            )
    return problems


def unreachable(
    rpc_servers: str, timeout_s: float = PROBE_TIMEOUT_S, answer_timeout_s: float = ANSWER_TIMEOUT_S
) -> Text:
    """One message naming every RPC server of a load that cannot be reached, or that takes the connection and
    does not answer llama.cpp's questions within ``answer_timeout_s`` (llama.cpp's client would wait on it for
    ever); '' when all can be used (or none is named)."""
    try:
        endpoints = rpc_endpoints(rpc_servers)
    except ValueError as exc:
        return message_of(exc)
    problems = probe(endpoints, timeout_s)
    if problems:
        return joined("; ", problems)
    if not endpoints:
        return ""
    try:
        _ask_child(endpoints, answer_timeout_s)
    except RpcUnavailable as exc:
        return message_of(exc)
    return ""


# ---- the engine's libraries -------------------------------------------------------------------------


def library_dir() -> Path:
    """The installed llama-cpp-python's lib folder, found without importing the bindings."""
    spec = importlib.util.find_spec("llama_cpp")
    if spec is None or not spec.submodule_search_locations:
        raise RpcUnavailable(words("the engine (llama-cpp-python) is not installed: run make engine"))
    return Path(next(iter(spec.submodule_search_locations))) / "lib"


def _load_ggml() -> ctypes.CDLL:
    """libggml (which links the CPU, RPC and any GPU backends of this build) with the functions used here."""
    folder = library_dir()
    path = folder / "libggml.so"
    if not path.is_file():
        raise RpcUnavailable(words("the engine's libggml.so is missing from {folder}", folder=str(folder)))
    try:
        lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        raise RpcUnavailable(words("the engine's libggml.so cannot be loaded: {why}", why=message_of(exc))) from exc
    try:
        lib.ggml_backend_rpc_start_server  # noqa: B018 - only whether the symbol is there
    except AttributeError:
        raise RpcUnavailable(
            words(
                "this engine was built without llama.cpp's RPC backend (no ggml_backend_rpc_start_server in "
                "{folder}): rebuild it with make engine, which builds with GGML_RPC=ON",
                folder=str(folder),
            )
        ) from None
    vp, sz = ctypes.c_void_p, ctypes.c_size_t
    signatures: dict[str, tuple[list[type], type | None]] = {
        "ggml_backend_dev_count": ([], sz),
        "ggml_backend_dev_get": ([sz], vp),
        "ggml_backend_dev_type": ([vp], ctypes.c_int),
        "ggml_backend_dev_by_type": ([ctypes.c_int], vp),
        "ggml_backend_dev_name": ([vp], ctypes.c_char_p),
        "ggml_backend_dev_description": ([vp], ctypes.c_char_p),
        "ggml_backend_dev_memory": ([vp, ctypes.POINTER(sz), ctypes.POINTER(sz)], None),
        "ggml_backend_reg_dev_count": ([vp], sz),
        "ggml_backend_reg_dev_get": ([vp, sz], vp),
        # void ggml_backend_rpc_start_server(const char * endpoint, const char * cache_dir,
        #                                    size_t n_threads, size_t n_devices, ggml_backend_dev_t * devices)
        "ggml_backend_rpc_start_server": ([ctypes.c_char_p, ctypes.c_char_p, sz, sz, ctypes.POINTER(vp)], None),
        "ggml_backend_rpc_add_server": ([ctypes.c_char_p], vp),
    }
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype
    return lib


def _memory(lib: ctypes.CDLL, dev: int) -> tuple[int, int]:
    free, total = ctypes.c_size_t(0), ctypes.c_size_t(0)
    lib.ggml_backend_dev_memory(dev, ctypes.byref(free), ctypes.byref(total))
    return int(free.value), int(total.value)


def _text(raw: bytes | None) -> str:
    return (raw or b"").decode("utf-8", "replace")


def served_devices(lib: ctypes.CDLL) -> list[int]:
    """The devices rpc-server serves by default: every one that is not a CPU (or an accelerator the CPU drives),
    else the CPU (tools/rpc/rpc-server.cpp: get_devices)."""
    devices = [
        dev
        for i in range(int(lib.ggml_backend_dev_count()))
        if (dev := lib.ggml_backend_dev_get(i)) and lib.ggml_backend_dev_type(dev) not in (_DEV_CPU, _DEV_ACCEL)
    ]
    if not devices and (cpu := lib.ggml_backend_dev_by_type(_DEV_CPU)):
        devices = [cpu]
    return devices


# ---- the server -----------------------------------------------------------------------------------


def free_port(host: str) -> int:
    """A port the system gives for ``host`` now (llama.cpp's server cannot report the one it bound to)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def check_host(host: str, allow_network: bool) -> str:
    """'' when the server may listen on ``host``; otherwise why not, in one line. Loopback is decided where the
    API server decides it (gui.core.openai_api.is_loopback)."""
    host = host.strip()
    if not host:
        return "the address to listen on is empty (127.0.0.1: this machine only)"
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        return (
            f"{host[:60]!r} is not an IPv4 address: llama.cpp's RPC server binds one (it reads the host with "
            "inet_addr), such as 127.0.0.1 or this machine's address on a private network"
        )
    if not is_loopback(host) and not allow_network:
        return (
            f"{host} would let other machines use this machine's devices through an unauthenticated protocol; add "
            "--allow-network if that is what you want (a private interface or an SSH tunnel only)"
        )
    return ""


def serve(
    host: str,
    port: int,
    threads: int,
    *,
    cache_dir: str | None = None,
    say: Callable[[str], None] = print,
    first_bytes_timeout_s: float = FIRST_BYTES_TIMEOUT_S,
) -> int:
    """Run llama.cpp's RPC server on ``host``:``port`` (0: a free port, said once bound) until the process is
    ended; the exit status when it cannot start. A connection that says nothing within FIRST_BYTES_TIMEOUT_S is
    closed, so it cannot hold the server's one client slot."""
    lib = _load_ggml()
    devices = served_devices(lib)
    if not devices:
        raise RpcUnavailable("llama.cpp found no device to serve")
    array = (ctypes.c_void_p * len(devices))(*devices)
    cache = cache_dir.encode() if cache_dir else None
    for dev in devices:
        free, total = _memory(lib, dev)
        say(
            f"device {_text(lib.ggml_backend_dev_name(dev))} ({_text(lib.ggml_backend_dev_description(dev))}): "
            f"{total / 2**20:,.0f} MiB, {free / 2**20:,.0f} MiB free"
        )

    # llama.cpp's server serves one client at a time and waits for ever on a silent one: it listens on a port of
    # this machine's loopback only, and the address asked for is a door in front of it that hands on a connection
    # once its first bytes come, and closes one that says nothing within FIRST_BYTES_TIMEOUT_S.
    inner_port = free_port("127.0.0.1")
    inner = f"127.0.0.1:{inner_port}".encode()

    def run() -> None:  # returns only when the server could not start (llama.cpp says why on stderr)
        lib.ggml_backend_rpc_start_server(inner, cache, threads, len(devices), array)

    server = threading.Thread(target=run, name="llama.cpp RPC server", daemon=True)
    server.start()
    while server.is_alive() and probe([("127.0.0.1", inner_port)], 0.5):
        server.join(0.2)
    if not server.is_alive():
        return 1
    try:
        door = socket.create_server((host, port))
    except OSError as exc:
        say(f"cannot listen on {host}:{port}: {exc.strerror or english_error(exc)}")
        return 1
    port = int(door.getsockname()[1])
    # Said once the door takes connections: a caller (or a test) reads the port from this line.
    say(f"listening on {host}:{port}")
    places = threading.BoundedSemaphore(MAX_DOOR_CLIENTS)
    with door:
        while server.is_alive():
            client, address = door.accept()
            if not places.acquire(blocking=False):  # llama.cpp serves one client: a crowd only waits there
                say(f"closed the connection from {address[0]}:{address[1]}: {MAX_DOOR_CLIENTS} are open already")
                client.close()
                continue
            threading.Thread(
                target=_hand_on,
                args=(client, address, ("127.0.0.1", inner_port), say, first_bytes_timeout_s, places.release),
                name="RPC door",
                daemon=True,
            ).start()
    return 1


def _hand_on(
    client: socket.socket,
    address: tuple[str, int],
    inner: tuple[str, int],
    say: Callable[[str], None],
    timeout_s: float,
    done: Callable[[], None],
) -> None:
    """One client of the door: closed if its first bytes do not come within ``timeout_s``, else joined to
    llama.cpp's server and the bytes passed both ways until either side ends; ``done`` when it has ended."""
    try:
        _pass_on(client, address, inner, say, timeout_s)
    finally:
        done()


def _pass_on(
    client: socket.socket,
    address: tuple[str, int],
    inner: tuple[str, int],
    say: Callable[[str], None],
    timeout_s: float,
) -> None:
    with client:
        client.settimeout(timeout_s)
        try:
            first = client.recv(_RELAY_BYTES)
        except TimeoutError:
            say(f"closed the connection from {address[0]}:{address[1]}: it said nothing within {timeout_s:g} s")
            return
        except OSError:
            return
        if not first:
            return
        client.settimeout(None)
        try:
            upstream = socket.create_connection(inner)
        except OSError:
            return
        with upstream:
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                upstream.sendall(first)
            except OSError:
                return
            back = threading.Thread(target=_relay, args=(upstream, client), name="RPC door back", daemon=True)
            back.start()
            _relay(client, upstream)
            back.join()


def _relay(source: socket.socket, target: socket.socket) -> None:
    """Bytes from ``source`` to ``target`` until ``source`` ends; then both are shut, so the other way ends too."""
    buffer = bytearray(_RELAY_BYTES)
    view = memoryview(buffer)
    try:
        while n := source.recv_into(buffer):
            target.sendall(view[:n])
    except OSError:
        pass
    for sock in (source, target):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


# ---- asking a server for its devices --------------------------------------------------------------


def ask_devices(rpc_servers: str, timeout_s: float = ASK_TIMEOUT_S) -> list[RemoteDevice]:
    """Every device of the servers named in ``rpc_servers`` ("host:port,..."), in llama.cpp's order. Raises
    RpcUnavailable in words for a bad list, a server that cannot be reached, or one that does not answer."""
    try:
        endpoints = rpc_endpoints(rpc_servers)
    except ValueError as exc:
        raise RpcUnavailable(message_of(exc)) from exc
    if not endpoints:
        return []
    problems = probe(endpoints)
    if problems:
        raise RpcUnavailable(joined("; ", problems))
    return _ask_child(endpoints, timeout_s)


def _ask_child(endpoints: Sequence[tuple[str, int]], timeout_s: float) -> list[RemoteDevice]:
    """The servers' devices, asked by a child process that ``timeout_s`` ends (llama.cpp's client waits for a
    reply without a deadline, and aborts its process on a bad one)."""
    command = [sys.executable, "-m", "gui.services.rpc", "devices", join_endpoints(endpoints)]
    root = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}
    try:
        done = subprocess.run(command, capture_output=True, timeout=timeout_s, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise RpcUnavailable(
            words(
                "the RPC servers {endpoints} took the connection but did not say their devices within {seconds} s: "
                "one is busy with another client (llama.cpp's RPC server serves one at a time) or is not llama.cpp's",
                endpoints=join_endpoints(endpoints),
                seconds=f"{timeout_s:g}",
            )
        ) from None
    return parse_devices(done.stdout[:_MAX_REPLY_BYTES], done.returncode, done.stderr[-4096:])


def parse_devices(stdout: bytes, returncode: int, stderr: bytes = b"") -> list[RemoteDevice]:
    """The devices the child printed (one JSON object), checked; RpcUnavailable in words otherwise."""
    if returncode != 0:
        said = [line for line in _text(stderr).splitlines() if line.strip()]
        why = said[-1].strip()[:300] if said else f"exit status {returncode}"
        raise RpcUnavailable(f"asking the RPC servers for their devices failed: {why}")
    try:
        data = json.loads(stdout)
        items = data["devices"]
        if not isinstance(items, list) or len(items) > MAX_RPC_SERVERS * _MAX_DEVICES_PER_SERVER:
            raise ValueError("too many devices")
        devices = [
            RemoteDevice(
                str(d["endpoint"])[:300],
                int(d["index"]),
                str(d["name"])[:64],
                max(0, int(d["free"])),
                max(0, int(d["total"])),
            )
            for d in items
        ]
    except (ValueError, KeyError, TypeError) as exc:
        raise RpcUnavailable(f"the RPC servers' answer could not be read ({english_error(exc)})") from None
    return devices


def _print_devices(rpc_servers: str) -> int:
    """In the child: add each server as llama.cpp's --rpc does and print its devices as JSON."""
    lib = _load_ggml()
    found = []
    for host, port in rpc_endpoints(rpc_servers):
        endpoint = f"{host}:{port}"
        reg = lib.ggml_backend_rpc_add_server(endpoint.encode())
        if not reg:
            raise RpcUnavailable(words("RPC server {endpoint} reports no devices", endpoint=endpoint))
        count = min(int(lib.ggml_backend_reg_dev_count(reg)), _MAX_DEVICES_PER_SERVER)
        for i in range(count):
            dev = lib.ggml_backend_reg_dev_get(reg, i)
            free, total = _memory(lib, dev)
            name = _text(lib.ggml_backend_dev_name(dev))
            found.append({"endpoint": endpoint, "index": i, "name": name, "free": free, "total": total})
    json.dump({"devices": found}, sys.stdout)
    sys.stdout.write("\n")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "devices":
        print("usage: python -m gui.services.rpc devices HOST:PORT[,HOST:PORT...]", file=sys.stderr)
        return 2
    try:
        return _print_devices(args[1])
    except (RpcUnavailable, ValueError) as exc:
        print(message_of(exc), file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
