"""`tightfit plan`: the JSON contract, CPU-only planning, clear errors, and headers read over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from model_shapes import SHAPES, write_shape

from gui.core.gguf_reader import GGUFError
from gui.services.remote_header import RemoteHeaderError, fetch_header

ROOT = Path(__file__).resolve().parent.parent
SIZE_KEYS = ("weights_mib", "kv_mib", "recurrent_mib", "compute_mib")
DEVICE_KEYS = (
    "name", "total_mib", "weights_mib", "kv_mib", "recurrent_mib", "compute_mib", "overhead_mib", "needed_mib",
    "free_after_mib",
)  # fmt: skip


def tightfit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def q4km(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_shape(tmp_path_factory.mktemp("m") / "Qwen3.5-27B-Q4_K_M.gguf", SHAPES["qwen35-27b"])


@pytest.fixture(scope="module")
def q3ks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_shape(tmp_path_factory.mktemp("m") / "Qwen3.5-27B-Q3_K_S.gguf", SHAPES["qwen35-27b-q3ks"])


def test_json_contract_on_a_catalog_card(q3ks: Path) -> None:
    result = tightfit("plan", str(q3ks), "--gpu", "v100-16gb", "--ctx", "8192", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    for key in SIZE_KEYS:
        assert isinstance(data[key], float), key
    assert isinstance(data["fits"], bool) and data["fits"] is True
    assert data["verdict"] == "fits"
    (device,) = data["devices"]
    for key in DEVICE_KEYS:
        assert key in device, key
    assert device["total_mib"] == 16160.0
    assert device["needed_mib"] == pytest.approx(
        sum(device[k] for k in ("weights_mib", "kv_mib", "recurrent_mib", "compute_mib", "overhead_mib"))
        + device.get("output_mib", 0.0),
        abs=0.05,
    )
    for key in SIZE_KEYS:
        assert key in data["host"]
    assert data["kv_mib"] == pytest.approx(512.0, abs=0.01)  # 16 attention layers of 64 at 8k, f16
    assert data["recurrent_mib"] == pytest.approx(149.62, abs=0.01)
    assert 40 < data["predicted_tg_tok_s"] < 90  # ~11.5 GiB read per token at 900 GB/s


def test_the_users_case_q4_k_m_at_8k_does_not_fit_a_v100(q4km: Path) -> None:
    result = tightfit("plan", str(q4km), "--gpu", "v100-16gb", "--ctx", "8192")
    assert result.returncode == 1  # a plan that will not fit says so in the exit status too
    assert "will not fit" in result.stdout and "--ngl" in result.stdout


def test_the_advice_to_fit_gives_the_ceiling_of_the_layers_that_fit(q4km: Path) -> None:
    """The partial-offload ceiling the window's plan shows, in the CLI's advice too."""
    from gui.core.cards import find_card
    from gui.core.gguf_reader import read_model
    from gui.core.params import LoadSettings
    from gui.core.planner import plan
    from gui.services.devices import device_from_card

    result = tightfit("plan", str(q4km), "--gpu", "v100-16gb", "--ctx", "8192", "--ram-gbs", "50")
    (advice,) = [line for line in result.stdout.splitlines() if "layers on the GPU (--ngl" in line]
    v100 = device_from_card(find_card("v100-16gb"))
    full = plan(read_model(q4km), LoadSettings(n_ctx=8192), [v100], ram_bandwidth_gbs=50.0)
    (same,) = [s for s in full.suggestions if "layers on the GPU (--ngl" in s]  # the window's words
    assert advice.strip() == f"to fit: {same}"
    ngl = int(same.split("--ngl ")[1].split(")")[0])
    partial = plan(read_model(q4km), LoadSettings(n_ctx=8192, n_gpu_layers=ngl), [v100], ram_bandwidth_gbs=50.0)
    assert partial.predicted_tg_tok_s is not None
    assert f"decode ceiling ~{partial.predicted_tg_tok_s:.0f} tok/s" in advice


def test_the_users_partial_offload_says_what_each_change_frees(q4km: Path) -> None:
    # llama.cpp's own output reserve (a whole batch) with the 56 layers that then fit
    args = ("plan", str(q4km), "--gpu", "v100-16gb", "--ctx", "8192", "--ngl", "56", "--ram-gbs", "50")
    result = tightfit(*args, "--n-outputs-max", "0")
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in result.stdout.splitlines() if line.strip().startswith("more on the GPU:")]
    assert any(line.startswith("more on the GPU: q8_0 KV cache") and "\u2212210 MiB" in line for line in lines)
    assert any("(--n-outputs-max 1): \u2212307 MiB, then 57 of 65 layers fit" in line for line in lines), result.stdout
    # the default, one output per slot, is that saving already made: 377 MiB less compute buffer, of which
    # the copy of a host block's largest weight (ffn_down, Q6_K, 5120 x 17408) a prompt batch stages on the
    # GPU takes back 70; with the whole batch's logits the output phase is the larger peak
    default = json.loads(tightfit(*args, "--json").stdout)["devices"][0]
    whole = json.loads(tightfit(*args, "--n-outputs-max", "0", "--json").stdout)["devices"][0]
    assert whole["compute_mib"] - default["compute_mib"] == pytest.approx(377.0)
    ffn_down = 5120 * 17408 * 210 / 256 / (1 << 20)
    assert (default["staged_mib"], whole["staged_mib"]) == (pytest.approx(ffn_down, abs=0.01), 0.0)
    assert whole["needed_mib"] - default["needed_mib"] == pytest.approx(307.0, abs=0.5)


def test_the_new_load_settings_are_flags() -> None:
    text = tightfit("plan", "--help").stdout
    for flag in ("--n-outputs-max", "--n-cpu-moe", "--cpu-moe", "--kv-unified", "--no-op-offload"):
        assert flag in text, flag


def test_gpu_none_plans_a_cpu_only_load(q3ks: Path) -> None:
    data = json.loads(tightfit("plan", str(q3ks), "--gpu", "none", "--ctx", "4096", "--json").stdout)
    assert data["devices"] == [] and data["layers_on_gpu"] == 0
    assert data["host"]["weights_mib"] == pytest.approx(data["weights_mib"])
    assert data["host"]["kv_mib"] == pytest.approx(256.0, abs=0.01)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["plan", "absent.gguf", "--json"], "no such model file: absent.gguf"),
        (["plan", "pyproject.toml"], "pyproject.toml: not a GGUF file"),
        (["plan", "MODEL", "--gpu", "gtx-9999"], "unknown GPU 'gtx-9999'; known cards: v100-16gb"),
        (["plan", "MODEL", "--ubatch", "4096", "--batch", "512"], "Micro-batch (4096) cannot exceed batch (512)"),
        (["plan", "MODEL", "--gpu", "none", "--vram-mib", "8000"], "--vram-mib makes no sense with --gpu none"),
        (["plan", "MODEL", "--ctx", "99"], "Context must be between 256"),
    ],
)
def test_errors_are_one_clear_line(q3ks: Path, args: list[str], message: str) -> None:
    result = tightfit(*[str(q3ks) if a == "MODEL" else a for a in args])
    assert result.returncode != 0 and result.stdout == ""
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr


# ---- headers over HTTP ------------------------------------------------------------------------


class FileHandler(BaseHTTPRequestHandler):
    root: Path
    ranges = True
    served: list[int]

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        path = self.root / self.path.lstrip("/")
        if not path.is_file():
            self.send_error(404, "Not Found")
            return
        size = path.stat().st_size
        start, end = 0, size - 1
        header = self.headers.get("Range")
        if self.ranges and header and header.startswith("bytes="):
            first, _, last = header[6:].partition("-")
            start, end = int(first), min(int(last or size - 1), size - 1)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        else:
            self.send_response(200)
        self.send_header("Content-Length", str(end - start + 1))
        self.end_headers()
        with path.open("rb") as fh:
            fh.seek(start)
            left = end - start + 1
            try:
                while left > 0:
                    chunk = fh.read(min(1 << 16, left))
                    self.wfile.write(chunk)
                    left -= len(chunk)
                    self.served.append(len(chunk))
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client had the header it needed and closed


@pytest.fixture(params=[True, False], ids=["range", "no-range"])
def server(request: pytest.FixtureRequest, q3ks: Path) -> Iterator[tuple[str, list[int]]]:
    served: list[int] = []
    handler = type("Handler", (FileHandler,), {"root": q3ks.parent, "ranges": request.param, "served": served})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", served
    httpd.shutdown()
    httpd.server_close()


def test_header_over_http_without_downloading_the_file(server: tuple[str, list[int]], q3ks: Path) -> None:
    base, served = server
    header = fetch_header(f"{base}/{q3ks.name}", first_read=256 << 10)
    assert header.n_layer == 64 and header.architecture == "qwen35"
    assert header.file_size == q3ks.stat().st_size  # from Content-Range or Content-Length
    # Only the header (a few MB) crossed the wire, not the 11 GiB file.
    assert sum(served) < 64 << 20


def test_plan_accepts_a_url(server: tuple[str, list[int]], q3ks: Path) -> None:
    base, _ = server
    result = tightfit("plan", f"{base}/{q3ks.name}", "--gpu", "v100-16gb", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["fits"] is True


def test_http_errors_are_words(server: tuple[str, list[int]], tmp_path: Path) -> None:
    base, _ = server
    with pytest.raises(RemoteHeaderError, match=r"absent\.gguf: the server answered 404"):
        fetch_header(f"{base}/absent.gguf")
    with pytest.raises(RemoteHeaderError, match="cannot reach the server"):
        fetch_header("http://127.0.0.1:9/x.gguf", timeout=5)


def test_a_remote_file_that_is_not_gguf_is_refused(server: tuple[str, list[int]], q3ks: Path) -> None:
    base, _ = server
    (q3ks.parent / "page.gguf").write_bytes(b"<html>not a model</html>")
    with pytest.raises(GGUFError, match=r"page\.gguf: not a GGUF file"):
        fetch_header(f"{base}/page.gguf")
