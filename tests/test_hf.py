"""The hub client against a real HTTP server on 127.0.0.1 serving real GGUF files."""

from __future__ import annotations

import hashlib
import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gguf import LlamaFileType

from gui.core.cards import find_card
from gui.core.gguf_reader import GGUFError
from gui.core.params import LoadSettings
from gui.core.planner import Verdict
from gui.services.devices import device_from_card
from gui.services.download import Download, DownloadProgress, pending_downloads
from gui.services.hub import HubClient, parse_repo_id
from gui.services.quant_table import QuantSource, quant_rows
from gui.services.remote_file import HubError, RemoteFile
from tests.fake_hub import FakeHub, sha256_of, write_small_model
from tests.gguf_factory import write_gguf, write_llama_like
from tests.model_shapes import SHAPES, shape_metadata, shape_tensors

REPO = "someone/Tiny-GGUF"
BIG = "someone/Qwen3.5-27B-GGUF"
CHUNK = 64 * 1024
MiB = 1 << 20


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    src = tmp_path_factory.mktemp("hub-files")
    out = {
        "q4": write_small_model(src / "Tiny-Q4_K_M.gguf", seed=1, quant="Q4_K"),
        "q8": write_small_model(src / "Tiny-Q8_0.gguf", seed=2, quant="Q8_0"),
        "bad": write_small_model(src / "Tiny-Q6_K.gguf", seed=3, quant="Q6_K"),
        "readme": src / "README.md",
        "html": src / "Broken-Q4_K_M.gguf",
    }
    out["readme"].write_text("# Tiny\n")
    out["html"].write_text("<!DOCTYPE html><html>login</html>")
    split = write_llama_like(
        src / "Split-Q8_0.gguf", name="Split", quant="Q8_0", n_layer=4, n_embd=256, n_head=4, n_head_kv=2,
        n_ff=512, n_vocab=512, n_parts=2, sparse=False,
    )  # fmt: skip
    out["split1"] = split
    out["split2"] = split.with_name("Split-Q8_0-00002-of-00002.gguf")
    for key, ftype, label in (
        ("qwen35-27b", LlamaFileType.MOSTLY_Q4_K_M, "Q4_K_M"),
        ("qwen35-27b-q3ks", LlamaFileType.MOSTLY_Q3_K_S, "Q3_K_S"),
    ):
        s = SHAPES[key]
        out[label] = write_gguf(
            src / f"Qwen3.5-27B-{label}.gguf", s.arch, shape_metadata(s), shape_tensors(s), True, ftype
        )
    return out


@pytest.fixture
def hub(files: dict[str, Path]) -> Iterator[FakeHub]:
    with FakeHub(token="hf_secret") as h:
        h.add_file(REPO, "Tiny-Q4_K_M.gguf", files["q4"])
        h.add_file(REPO, "quants/Tiny-Q8_0.gguf", files["q8"])
        h.add_file(REPO, "Tiny-Q6_K.gguf", files["bad"], wrong_hash=True)
        h.add_file(REPO, "Broken-Q4_K_M.gguf", files["html"])
        h.add_file(REPO, "README.md", files["readme"], lfs=False)
        h.add_file(REPO, "Split-Q8_0-00001-of-00002.gguf", files["split1"])
        h.add_file(REPO, "Split-Q8_0-00002-of-00002.gguf", files["split2"])
        # Header-only shapes: never downloaded, so their listed hash is a stand-in.
        h.add_file(BIG, "Qwen3.5-27B-Q4_K_M.gguf", files["Q4_K_M"], sha256="4" * 64)
        h.add_file(BIG, "Qwen3.5-27B-Q3_K_S.gguf", files["Q3_K_S"], sha256="3" * 64)
        h.add_repo("someone/private-GGUF", private=True)
        h.add_file("someone/private-GGUF", "Tiny-Q4_K_M.gguf", files["q4"])
        yield h


def remote(client: HubClient, repo: str, name: str) -> RemoteFile:
    return next(f for f in client.list_gguf(repo) if f.name == name)


class Recorder:
    """Progress callback that can pause the download once it passes a byte count."""

    def __init__(self, pause_at: int | None = None) -> None:
        self.events: list[DownloadProgress] = []
        self.pause_at = pause_at
        self.download: Download | None = None

    def __call__(self, p: DownloadProgress) -> None:
        self.events.append(p)
        if self.pause_at is not None and p.done >= self.pause_at and self.download is not None:
            self.pause_at = None
            self.download.pause()


def start(client: HubClient, f: RemoteFile, dest: Path, rec: Recorder | None = None, **kw: object) -> Download:
    rec = rec or Recorder()
    opts: dict[str, object] = {"chunk_size": CHUNK, "progress_interval_s": 0.0, "retry_delay_s": 0.0, **kw}
    dl = client.download(f, dest, rec, **opts)
    rec.download = dl
    dl.start()
    assert dl.wait(30), "download did not come to rest"
    return dl


# ---- listing and headers -------------------------------------------------------------------------


def test_lists_gguf_files_with_sizes_hashes_and_split_models(hub: FakeHub, files: dict[str, Path]) -> None:
    listing = HubClient(endpoint=hub.endpoint).list_gguf(REPO)
    by_path = {f.path: f for f in listing}
    assert sorted(by_path) == [
        "Broken-Q4_K_M.gguf",
        "Split-Q8_0-00001-of-00002.gguf",
        "Tiny-Q4_K_M.gguf",
        "Tiny-Q6_K.gguf",
        "quants/Tiny-Q8_0.gguf",
    ]  # README.md and the folder entry are left out
    q4 = by_path["Tiny-Q4_K_M.gguf"]
    assert q4.size == files["q4"].stat().st_size
    assert q4.sha256 == sha256_of(files["q4"])
    assert q4.url == hub.resolve_url(REPO, "Tiny-Q4_K_M.gguf")
    split = by_path["Split-Q8_0-00001-of-00002.gguf"]
    assert split.n_parts == 2 and split.sha256 is None
    assert split.size == files["split1"].stat().st_size + files["split2"].stat().st_size
    assert [p.sha256 for p in split.parts] == [sha256_of(files["split1"]), sha256_of(files["split2"])]


def test_27b_headers_by_range_request_fill_the_quant_table(hub: FakeHub, files: dict[str, Path]) -> None:
    client = HubClient(endpoint=hub.endpoint)
    listing = client.list_gguf(BIG)
    sources = [QuantSource(f.name, client.read_header(f), url=f.url) for f in listing]
    rows = quant_rows(sources, LoadSettings(n_ctx=8192), [device_from_card(find_card("v100-16gb"))])
    assert [(r.quant, r.fits) for r in rows] == [("Q4_K_M", Verdict.WONT_FIT), ("Q3_K_S", Verdict.FITS)]
    assert rows[0].size_bytes == files["Q4_K_M"].stat().st_size  # the size came from Content-Range
    cdn = hub.cdn_hits()
    assert cdn and all(h.range is not None and h.status == 206 for h in cdn)
    asked = sum(int(h.range.split("-")[1]) + 1 for h in cdn if h.range)
    assert asked < 64 * MiB  # headers only, never the 11-16 GiB of weights


def test_headers_without_range_support(hub: FakeHub) -> None:
    hub.ranges = False
    client = HubClient(endpoint=hub.endpoint)
    header = client.read_header(remote(client, BIG, "Qwen3.5-27B-Q3_K_S.gguf"))
    assert header.quant_name == "Q3_K_S" and header.n_layer == 64
    assert all(h.status == 200 for h in hub.cdn_hits())


def test_a_split_models_header_is_read_from_every_part(hub: FakeHub, files: dict[str, Path]) -> None:
    client = HubClient(endpoint=hub.endpoint)
    header = client.read_header(remote(client, REPO, "Split-Q8_0-00001-of-00002.gguf"))
    assert len(header.parts) == 2 and header.n_layer == 4
    assert {t.part for t in header.tensors} == {0, 1}
    assert header.file_size == files["split1"].stat().st_size + files["split2"].stat().st_size


def test_a_remote_file_that_is_not_gguf_is_a_per_file_error(hub: FakeHub) -> None:
    client = HubClient(endpoint=hub.endpoint)
    with pytest.raises(GGUFError, match="not a GGUF file"):
        client.read_header(remote(client, REPO, "Broken-Q4_K_M.gguf"))


def test_a_missing_remote_file_is_a_hub_error(hub: FakeHub) -> None:
    gone = RemoteFile("gone.gguf", 10, None, hub.resolve_url(REPO, "gone.gguf"))
    with pytest.raises(HubError, match="not found"):
        HubClient(endpoint=hub.endpoint).read_header(gone)


# ---- errors in words -----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_offline_is_said_in_words_at_once() -> None:
    t0 = time.monotonic()
    with pytest.raises(HubError, match=r"^offline: cannot reach 127\.0\.0\.1"):
        HubClient(endpoint=f"http://127.0.0.1:{_closed_port()}").list_gguf(REPO)
    with pytest.raises(HubError, match=r"^offline: cannot reach no-such-hub\.invalid") as raised:
        HubClient(endpoint="http://no-such-hub.invalid").list_gguf(REPO)
    assert time.monotonic() - t0 < 10  # no retries with backoff
    # Where the hub is out of reach (mainland China, for one), the line says that a mirror works and how.
    assert "a mirror of it works: start Tightfit with HF_ENDPOINT set to the mirror's address" in str(raised.value)


def test_hf_hub_offline_mode_is_respected(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "is_offline_mode", lambda: True)
    with pytest.raises(HubError, match="offline mode"):
        HubClient(endpoint=hub.endpoint).list_gguf(REPO)
    assert hub.hits == []


def test_missing_and_private_repositories(hub: FakeHub) -> None:
    client = HubClient(endpoint=hub.endpoint)
    with pytest.raises(HubError, match="repository not found or private"):
        client.list_gguf("someone/does-not-exist")
    with pytest.raises(HubError, match="repository not found or private"):
        client.list_gguf("someone/private-GGUF")
    with pytest.raises(HubError, match="refused the token"):
        HubClient(endpoint=hub.endpoint, token="hf_wrong").list_gguf("someone/private-GGUF")
    with pytest.raises(HubError, match="revision 'v2' not found"):
        client.list_gguf(REPO, revision="v2")


def test_a_token_reaches_the_hub_but_never_the_cdn(hub: FakeHub, tmp_path: Path, files: dict[str, Path]) -> None:
    client = HubClient(endpoint=hub.endpoint, token="hf_secret")
    f = remote(client, "someone/private-GGUF", "Tiny-Q4_K_M.gguf")
    assert client.read_header(f).quant_name == "Q4_K_M"
    dl = start(client, f, tmp_path)
    assert dl.state == "done", dl.error
    resolves = [h for h in hub.hits if "/resolve/" in h.path]
    assert resolves and all(h.auth == "Bearer hf_secret" for h in resolves)
    assert hub.cdn_hits() and all(h.auth is None for h in hub.cdn_hits())


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("owner/name", "owner/name"),
        (" https://huggingface.co/unsloth/Qwen3.5-27B-GGUF/tree/main ", "unsloth/Qwen3.5-27B-GGUF"),
    ],
)
def test_parse_repo_id(text: str, repo: str) -> None:
    assert parse_repo_id(text) == repo


@pytest.mark.parametrize("text", ["", "justaname", "a/../b", "owner/na me"])
def test_parse_repo_id_refuses_junk(text: str) -> None:
    with pytest.raises(HubError, match="owner/name"):
        parse_repo_id(text)


# ---- downloads -----------------------------------------------------------------------------------


def test_download_verifies_and_renames_into_place(hub: FakeHub, tmp_path: Path, files: dict[str, Path]) -> None:
    client = HubClient(endpoint=hub.endpoint)
    rec = Recorder()
    dl = start(client, remote(client, REPO, "Tiny-Q4_K_M.gguf"), tmp_path / "models", rec)
    assert dl.state == "done" and dl.error is None
    final = tmp_path / "models" / "Tiny-Q4_K_M.gguf"
    assert final.read_bytes() == files["q4"].read_bytes()
    assert sorted(p.name for p in final.parent.iterdir()) == ["Tiny-Q4_K_M.gguf"]  # no .part, no sidecar
    done = [e.done for e in rec.events]
    assert done == sorted(done) and rec.events[-1].state == "done" and rec.events[-1].done == final.stat().st_size
    assert any(e.state == "verifying" for e in rec.events)


def test_pause_and_resume_in_the_same_session(hub: FakeHub, tmp_path: Path, files: dict[str, Path]) -> None:
    client = HubClient(endpoint=hub.endpoint)
    f = remote(client, REPO, "Tiny-Q4_K_M.gguf")
    rec = Recorder(pause_at=1 * MiB)
    dl = start(client, f, tmp_path, rec)
    assert dl.state == "paused"
    part = dl.part_path()
    held = part.stat().st_size
    assert 1 * MiB <= held < f.size
    meta = json.loads(dl.sidecar_path().read_text())
    assert (meta["url"], meta["size"], meta["sha256"]) == (f.url, f.size, f.sha256)
    assert meta["etag"] and not (tmp_path / f.name).exists()

    dl.resume()
    assert dl.wait(30) and dl.state == "done", dl.error
    assert (tmp_path / f.name).read_bytes() == files["q4"].read_bytes()
    assert hub.cdn_hits()[-1].range == f"bytes={held}-"


def test_resume_after_a_restart(hub: FakeHub, tmp_path: Path, files: dict[str, Path]) -> None:
    f = remote(HubClient(endpoint=hub.endpoint), REPO, "Tiny-Q4_K_M.gguf")
    first = start(HubClient(endpoint=hub.endpoint), f, tmp_path, Recorder(pause_at=2 * MiB))
    assert first.state == "paused"
    held = first.part_path().stat().st_size
    del first  # the app quits

    (pending, done) = pending_downloads(tmp_path)[0]
    assert pending == f and done == held

    again = start(HubClient(endpoint=hub.endpoint), pending, tmp_path)  # a new process, from the sidecar
    assert again.state == "done", again.error
    assert any("resuming" in m for m in again.messages)
    assert hub.cdn_hits()[-1].range == f"bytes={held}-"
    assert (tmp_path / f.name).read_bytes() == files["q4"].read_bytes()
    assert pending_downloads(tmp_path) == []


def test_a_server_without_range_support_restarts_from_zero(
    hub: FakeHub, tmp_path: Path, files: dict[str, Path]
) -> None:
    client = HubClient(endpoint=hub.endpoint)
    f = remote(client, REPO, "Tiny-Q4_K_M.gguf")
    dl = start(client, f, tmp_path, Recorder(pause_at=1 * MiB))
    assert dl.state == "paused"
    hub.ranges = False
    dl.resume()
    assert dl.wait(30) and dl.state == "done", dl.error
    assert any("does not support resuming" in m and "restarting from 0" in m for m in dl.messages)
    assert hub.cdn_hits()[-1].status == 200
    assert (tmp_path / f.name).read_bytes() == files["q4"].read_bytes()


def test_dropped_connections_are_resumed(hub: FakeHub, tmp_path: Path, files: dict[str, Path]) -> None:
    hub.drop_after = 1 * MiB + 12345
    client = HubClient(endpoint=hub.endpoint)
    f = remote(client, REPO, "Tiny-Q4_K_M.gguf")
    dl = start(client, f, tmp_path)
    assert dl.state == "done", dl.error
    assert (tmp_path / f.name).read_bytes() == files["q4"].read_bytes()
    cdn = hub.cdn_hits()
    assert len(cdn) == -(-f.size // hub.drop_after)
    assert [h.range for h in cdn[1:]] == [f"bytes={i * hub.drop_after}-" for i in range(1, len(cdn))]
    assert sum("connection lost" in m for m in dl.messages) == len(cdn) - 1


def test_a_connection_that_keeps_dropping_fails_in_words_and_keeps_the_part(
    hub: FakeHub, tmp_path: Path, files: dict[str, Path]
) -> None:
    hub.drop_at = 2 * MiB
    client = HubClient(endpoint=hub.endpoint)
    f = remote(client, REPO, "Tiny-Q4_K_M.gguf")
    dl = start(client, f, tmp_path, max_retries=2)
    assert dl.state == "failed"
    assert dl.error is not None and "kept dropping" in dl.error and "resume" in dl.error
    assert dl.part_path().stat().st_size == 2 * MiB
    assert len(hub.cdn_hits()) == 1 + 3  # the first try, then three without progress (> max_retries)

    hub.drop_at = None
    dl.resume()
    assert dl.wait(30) and dl.state == "done", dl.error
    assert (tmp_path / f.name).read_bytes() == files["q4"].read_bytes()


def test_a_sha256_mismatch_deletes_the_download(hub: FakeHub, tmp_path: Path) -> None:
    client = HubClient(endpoint=hub.endpoint)
    f = remote(client, REPO, "Tiny-Q6_K.gguf")
    dl = start(client, f, tmp_path)
    assert dl.state == "failed"
    assert dl.error is not None and "SHA-256 mismatch" in dl.error and "deleted" in dl.error
    assert list(tmp_path.iterdir()) == []


def test_a_split_model_downloads_every_part(hub: FakeHub, tmp_path: Path, files: dict[str, Path]) -> None:
    client = HubClient(endpoint=hub.endpoint)
    f = remote(client, REPO, "Split-Q8_0-00001-of-00002.gguf")
    rec = Recorder()
    dl = start(client, f, tmp_path, rec)
    assert dl.state == "done", dl.error
    for key in ("split1", "split2"):
        assert (tmp_path / files[key].name).read_bytes() == files[key].read_bytes()
    assert rec.events[-1].done == rec.events[-1].total == f.size


def test_cancel_deletes_the_partial_file(hub: FakeHub, tmp_path: Path) -> None:
    client = HubClient(endpoint=hub.endpoint)
    dl = start(client, remote(client, REPO, "Tiny-Q4_K_M.gguf"), tmp_path, Recorder(pause_at=1 * MiB))
    assert dl.state == "paused" and dl.part_path().exists()
    dl.cancel()
    assert dl.state == "cancelled" and list(tmp_path.iterdir()) == []


def test_progress_reports_a_rate(hub: FakeHub, tmp_path: Path) -> None:
    client = HubClient(endpoint=hub.endpoint)
    rec = Recorder()
    start(client, remote(client, REPO, "Tiny-Q8_0.gguf"), tmp_path, rec)
    assert max(e.rate_bps for e in rec.events) > 0
    assert all(0.0 <= e.fraction <= 1.0 for e in rec.events)
    assert hashlib.sha256((tmp_path / "Tiny-Q8_0.gguf").read_bytes()).hexdigest() == rec.download.remote.sha256  # type: ignore[union-attr]
