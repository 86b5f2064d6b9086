"""Other machines' devices through llama.cpp's RPC backend, for real on this machine: `tightfit rpc-worker` (llama.cpp's
RPC server on the CPU) in a child process on 127.0.0.1, the demo model split between this process's CPU and the
worker's device, llama.cpp's own dry run and load beside the planner, a worker killed mid-reply, and one that is
not there; plus the settings' checks and the network's arithmetic."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from gui.core import protocol as p
from gui.core.gguf_reader import read_model
from gui.core.params import MAX_RPC_SERVERS, LoadSettings, NetworkLink, rpc_endpoints
from gui.core.planner import Device, model_shape, plan
from gui.core.words import Words
from gui.services.engine_client import EngineUnavailable, SyncEngine
from gui.services.rpc import (
    ANSWER_TIMEOUT_S,
    MAX_DOOR_CLIENTS,
    RpcUnavailable,
    ask_devices,
    check_host,
    free_port,
    probe,
    unreachable,
)

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = LoadSettings(n_ctx=1024, n_batch=256, n_ubatch=256, n_threads=2)
GREEDY = p.Sampling(temperature=0.0)
# The worker's device holds the output layer and the last 9 blocks (llama.cpp's -ngl counts RPC devices as GPUs).
NGL = 10


# ---- the settings -----------------------------------------------------------------------------------


def test_rpc_servers_are_checked_in_one_line() -> None:
    assert rpc_endpoints(" 10.0.0.5:50052, GpuBox.lan:50053 ") == (("10.0.0.5", 50052), ("gpubox.lan", 50053))
    assert LoadSettings.from_dict({"rpc_servers": "10.0.0.5:50052 ,b:1"}).rpc_servers == "10.0.0.5:50052,b:1"
    assert rpc_endpoints("") == ()
    bad = {
        "gpubox": "has no port",
        "gpubox:0": "from 1 to 65535",
        "gpubox:65536": "from 1 to 65535",
        "gpubox:５": "from 1 to 65535",  # a digit, but not an ASCII one
        "[::1]:50052": "IPv6",
        "fe80::1:50052": "IPv6",
        "10.0.0.256:1": "not an IPv4 address",
        "bad_host:1": "not a host name",
        ":1": "no host",
        "a:1,a:1": "named twice",
        "a:1,": "an empty item",
        ",".join(f"h{i}:1" for i in range(MAX_RPC_SERVERS + 1)): f"at most {MAX_RPC_SERVERS}",
        "a:1" * 2000: "longer than",
    }
    for text, words in bad.items():
        with pytest.raises(ValueError, match=words) as caught:
            LoadSettings(rpc_servers=text).validated()
        assert "\n" not in str(caught.value)


def test_only_loopback_without_the_flag() -> None:
    assert check_host("127.0.0.1", False) == ""
    assert "--allow-network" in check_host("0.0.0.0", False)
    assert "--allow-network" in check_host("192.168.1.20", False)
    assert check_host("192.168.1.20", True) == ""
    assert "IPv4" in check_host("localhost", False)  # llama.cpp's server binds with inet_addr
    done = subprocess.run(
        [sys.executable, "-m", "gui", "rpc-worker", "--host", "10.1.2.3"], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode != 0 and "--allow-network" in done.stderr and "Starting RPC server" not in done.stdout


def test_a_closed_port_is_said_in_words() -> None:
    port = free_port("127.0.0.1")  # nothing listens there once the probe socket is closed
    (problem,) = probe([("127.0.0.1", port)], 2.0)
    assert f"127.0.0.1:{port} refused the connection" in problem
    assert unreachable(f"127.0.0.1:{port}") == problem
    assert "does not resolve" in probe([("no-such-host.invalid", 50052)], 2.0)[0]


# ---- the network's share of a token ------------------------------------------------------------------


def test_link_arithmetic(demo_model: Path) -> None:
    header = read_model(demo_model)
    shape = model_shape(header)
    local = Device("GPU", 8192, 8000, bandwidth_gbs=300.0)
    remote = Device("RPC0[10.0.0.5:50052]", 8192, 8000, bandwidth_gbs=300.0, remote="10.0.0.5:50052")
    settings = SETTINGS.with_values(n_gpu_layers=999, tensor_split="1,1")
    link = NetworkLink(preset="custom", mbit_s=1000.0, rtt_ms=0.5)
    bw, rtt = 1000e6 / 8, 0.5e-3
    embd, logits = shape.n_embd * 4 / bw, shape.n_vocab * 4 / bw

    # RPC first, as llama.cpp lists it: host -> RPC0 (embedding), RPC0 -> GPU (hidden state); the GPU holds the
    # output layer, so the logits stay here.
    both = plan(header, settings, [remote, local], link=link, ram_bandwidth_gbs=20.0)
    assert both.link_hops == 2
    assert both.link_ms_per_token == pytest.approx((2 * (embd + rtt)) * 1000)
    alone = plan(header, settings, [Device("RPC0", 8192, 8000, bandwidth_gbs=300.0), local], ram_bandwidth_gbs=20.0)
    assert alone.link_hops == 0 and alone.predicted_tg_tok_s is not None and both.predicted_tg_tok_s is not None
    assert 1 / both.predicted_tg_tok_s == pytest.approx(1 / alone.predicted_tg_tok_s + both.link_ms_per_token / 1000)

    # Only the remote device: in with the hidden state, back with the logits.
    only = plan(header, settings.with_values(tensor_split=""), [remote], link=link, ram_bandwidth_gbs=20.0)
    assert only.link_hops == 2
    assert only.link_ms_per_token == pytest.approx((embd + rtt + logits + rtt) * 1000)
    # Two servers: remote to remote passes through this machine (two hops).
    other = Device("RPC0[10.0.0.6:50052]", 8192, 8000, bandwidth_gbs=300.0, remote="10.0.0.6:50052")
    two = plan(header, settings, [remote, other], link=link, ram_bandwidth_gbs=20.0)
    assert two.link_hops == 4
    assert two.link_ms_per_token == pytest.approx((embd + rtt + 2 * (embd + rtt) + logits + rtt) * 1000)
    # The presets: 10 GbE costs less than 1 GbE; no remote device costs nothing.
    ten = plan(header, settings, [remote, local], link=NetworkLink(preset="10gbe"), ram_bandwidth_gbs=20.0)
    one = plan(header, settings, [remote, local], link=NetworkLink(preset="1gbe"), ram_bandwidth_gbs=20.0)
    assert 0 < ten.link_ms_per_token < one.link_ms_per_token
    # No CUDA context is counted on a remote device: its server made it before saying its free memory.
    assert both.devices[0].overhead_mib == 0 and both.devices[1].overhead_mib > 0


# ---- the real thing: a worker on 127.0.0.1 -------------------------------------------------------------


class Worker:
    def __init__(self, *extra: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gui", "rpc-worker", "--port", "0", "--threads", "1", *extra],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.endpoint = ""
        for line in self.process.stdout:  # ends when the worker does
            if m := re.search(r"listening on (127\.0\.0\.1:\d+)", line):
                self.endpoint = m.group(1)
                break
        assert self.endpoint, f"the worker did not start: {self.process.stderr.read() if self.process.stderr else ''}"
        self.name = f"RPC0[{self.endpoint}]"  # llama.cpp's name for the worker's first device's buffers

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait()


@pytest.fixture
def worker() -> Iterator[Worker]:
    w = Worker()
    try:
        yield w
    finally:
        w.kill()


def reply(eng: SyncEngine, text: str, max_tokens: int = 24) -> tuple[str, p.Done]:
    request = eng.client.generate((p.ChatMessage("user", text),), max_tokens, GREEDY)
    pieces = []
    while True:
        event = eng.next_event(120)
        if isinstance(event, p.Token) and event.request_id == request:
            pieces.append(event.text)
        elif isinstance(event, p.Done) and event.request_id == request:
            return "".join(pieces), event


@pytest.mark.engine
def test_split_between_this_cpu_and_a_worker_matches_llama_cpp(
    worker: Worker, demo_model: Path, tmp_path: Path
) -> None:
    from gui.commands.plan import remote_devices

    settings = SETTINGS.with_values(n_gpu_layers=NGL, rpc_servers=worker.endpoint)
    (device,) = remote_devices(settings.rpc_servers)  # asked of the worker, as `tightfit plan --rpc` does
    assert device.name == worker.name and device.remote == worker.endpoint and device.free_mib > 0
    planned = plan(read_model(demo_model), settings, [device])
    rpc = planned.devices[0]
    assert rpc.layers == NGL - 1 and rpc.has_output and planned.layers_on_gpu == NGL
    assert planned.link_hops == 2  # in with the hidden state, back with the logits

    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.dry_run(demo_model, settings)
        dry = eng.expect(p.DryRunResult, 120)
        assert dry.ok, dry.error
        eng.client.load(demo_model, settings)
        loaded = eng.expect(p.Loaded, 300)
        text, done = reply(eng, "Name a colour.")

    # llama.cpp's own figures, per buffer: the dry run's compute buffers and KV, the load's buffers.
    assert set(dry.compute_mib) == {worker.name, "CPU"}
    assert planned.kv_mib == pytest.approx(dry.kv_mib, abs=0.01)
    on_worker = loaded.buffers_mib[worker.name]  # model + KV + compute buffers on the worker's device
    assert rpc.weights_mib + rpc.kv_mib == pytest.approx(on_worker - dry.compute_mib[worker.name], abs=0.01)
    assert rpc.kv_mib == pytest.approx(dry.kv_mib * (NGL - 1) / planned.n_layer, abs=0.01)
    # Compute: the planner sizes a remote device as a GPU; on a CPU worker it is above llama.cpp's figure (two
    # hidden states of the micro-batch here), never below.
    assert dry.compute_mib[worker.name] <= rpc.compute_mib + rpc.staged_mib <= dry.compute_mib[worker.name] * 1.2
    assert planned.host.compute_mib == pytest.approx(dry.compute_mib["CPU"], abs=0.02)
    assert text.strip() and done.stats.n_gen > 0


@pytest.mark.engine
def test_a_worker_killed_mid_reply_ends_only_that_load(worker: Worker, demo_model: Path, tmp_path: Path) -> None:
    settings = SETTINGS.with_values(n_gpu_layers=NGL, rpc_servers=worker.endpoint)
    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.load(demo_model, settings)
        eng.expect(p.Loaded, 300)
        request = eng.client.generate((p.ChatMessage("user", "Count from one to one hundred."),), 400, GREEDY)
        while not isinstance(event := eng.next_event(120), p.Token):  # the prompt is read, then the first token
            assert not isinstance(event, (p.Done, p.GenerateFailed)), event
        assert event.request_id == request
        worker.kill()
        with pytest.raises(EngineUnavailable) as ended:
            while True:  # tokens already on their way, then the end of the engine process
                eng.next_event(120)
    said = str(ended.value)  # the window's words too: llama_log.explain_failure on the worker's log
    assert f"An RPC worker (RPC0 at {worker.endpoint}) stopped answering mid-work" in said, said
    # A fresh engine loads the same model on this machine alone and replies.
    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.load(demo_model, SETTINGS)
        eng.expect(p.Loaded, 300)
        text, _ = reply(eng, "Name a colour.")
        assert text.strip()


@pytest.mark.engine
def test_an_unreachable_worker_is_said_before_loading(demo_model: Path, tmp_path: Path) -> None:
    port = free_port("127.0.0.1")
    settings = SETTINGS.with_values(n_gpu_layers=NGL, rpc_servers=f"127.0.0.1:{port}")
    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.dry_run(demo_model, settings)
        dry = eng.expect(p.DryRunResult, 120)
        assert not dry.ok and f"127.0.0.1:{port} refused the connection" in dry.error
        eng.client.load(demo_model, settings)
        with pytest.raises(EngineUnavailable, match=f"127.0.0.1:{port} refused the connection"):
            eng.expect(p.Loaded, 120)
        # The engine is still there: the same model loads without the worker.
        eng.client.load(demo_model, SETTINGS)
        assert eng.expect(p.Loaded, 300).n_ctx > 0


def test_plan_cli_asks_the_worker(worker: Worker, demo_model: Path) -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "gui", "plan", str(demo_model), "--gpu", "none", "--rpc", worker.endpoint,
            "--ngl", str(NGL), "--ctx", "1024", "--ram-gbs", "10", "--rpc-link", "10gbe",
        ],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"  {worker.name}: weights " in done.stdout and "context 0 =" in done.stdout
    assert "network: 2 hops per token" in done.stdout and "10 GbE" in done.stdout


@pytest.mark.engine
def test_chat_cli_says_an_unreachable_worker(demo_model: Path) -> None:
    port = free_port("127.0.0.1")
    done = subprocess.run(
        [sys.executable, "-m", "gui", "chat", str(demo_model), "--prompt", "Hi", "--rpc", f"127.0.0.1:{port}"],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )  # fmt: skip
    assert done.returncode != 0
    assert f"tightfit: error: RPC server 127.0.0.1:{port} refused the connection" in done.stderr


def test_rpc_flag_once_per_server_or_as_a_list() -> None:
    from gui.cli import build_parser

    parser = build_parser()
    plan_args = parser.parse_args(["plan", "m.gguf", "--rpc", "a:1", "--rpc", "b:2,c:3"])
    assert rpc_endpoints(plan_args.rpc_servers) == (("a", 1), ("b", 2), ("c", 3))
    chat_args = parser.parse_args(["chat", "m.gguf", "--prompt", "x", "--rpc", "a:1", "--rpc", "b:2"])
    assert chat_args.rpc_servers == "a:1,b:2"
    assert parser.parse_args(["chat", "m.gguf", "--prompt", "x"]).rpc_servers is None


# ---- a server that takes the connection and never answers -----------------------------------------------


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection, holds it open and never sends a byte."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.endpoint = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.accepted = 0
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()
        self.thread.join(5)


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def test_a_server_that_takes_the_connection_and_never_answers_is_said_before_a_load(silent: SilentServer) -> None:
    assert probe(rpc_endpoints(silent.endpoint)) == []  # a TCP connection alone does not tell it apart
    said = unreachable(silent.endpoint, answer_timeout_s=2)
    assert said == (
        f"the RPC servers {silent.endpoint} took the connection but did not say their devices within 2 s: one is busy "
        "with another client (llama.cpp's RPC server serves one at a time) or is not llama.cpp's"
    )
    assert isinstance(said, Words) and silent.accepted >= 2  # the probe's connection, then the question's
    with pytest.raises(RpcUnavailable, match="did not say their devices within 1 s"):
        ask_devices(silent.endpoint, timeout_s=1)


@pytest.mark.engine
@pytest.mark.parametrize("command", ["chat", "serve"])
def test_chat_and_serve_end_in_words_on_a_server_that_never_answers(
    silent: SilentServer, demo_model: Path, command: str
) -> None:
    extra = ["--prompt", "Hi"] if command == "chat" else ["--port", "0"]
    done = subprocess.run(
        [sys.executable, "-m", "gui", command, str(demo_model), *extra, "--rpc", silent.endpoint],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0, done.stdout
    assert (
        f"tightfit: error: the RPC servers {silent.endpoint} took the connection but did not say their devices "
        f"within {ANSWER_TIMEOUT_S:g} s"
    ) in done.stderr, done.stderr


@pytest.mark.engine
def test_a_real_worker_answers_the_check_before_a_load(worker: Worker) -> None:
    assert unreachable(worker.endpoint) == ""


def test_a_silent_client_of_the_worker_is_closed_and_the_next_one_is_served() -> None:
    worker = Worker("--first-bytes-timeout", "1")
    try:
        host, port = worker.endpoint.split(":")
        with socket.create_connection((host, int(port)), timeout=30) as idle:  # connects, then says nothing
            # Without the door, llama.cpp's one slot stays taken and this ask runs out of time.
            (device,) = ask_devices(worker.endpoint, timeout_s=20)
            assert device.name == "RPC0" and device.total_bytes > 0
            assert idle.recv(1) == b""  # the worker closed the silent connection
        worker.process.terminate()
        out, _ = worker.process.communicate(timeout=30)
        assert "said nothing within 1 s" in out, out
    finally:
        worker.kill()


def test_a_crowd_of_connections_to_the_worker_is_bounded() -> None:
    """Each connection the door holds takes a thread while it waits for its first bytes: past MAX_DOOR_CLIENTS
    the next is closed at once, and once the crowd is gone a client is served again."""
    worker = Worker("--first-bytes-timeout", "30")
    host, port = worker.endpoint.split(":")
    crowd: list[socket.socket] = []
    try:
        crowd = [socket.create_connection((host, int(port)), timeout=30) for _ in range(MAX_DOOR_CLIENTS)]
        with socket.create_connection((host, int(port)), timeout=5) as one_more:  # the door waits 30 s
            assert one_more.recv(1) == b""  # closed at once, not held for 30 s
        for sock in crowd:
            sock.close()
        crowd = []
        (device,) = ask_devices(worker.endpoint, timeout_s=20)  # the places are free again
        assert device.name == "RPC0"
        worker.process.terminate()
        out, _ = worker.process.communicate(timeout=30)
        assert f"{MAX_DOOR_CLIENTS} are open already" in out, out
    finally:
        for sock in crowd:
            sock.close()
        worker.kill()


def test_the_first_bytes_timeout_is_checked() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "gui", "rpc-worker", "--first-bytes-timeout", "0"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert done.returncode != 0 and "--first-bytes-timeout must be above 0" in done.stderr
