"""The hub client under a slow or hostile server: a real HTTP server on 127.0.0.1 that trickles, hangs,
redirects where it should not, sends huge or malformed listings, lies about sizes and ranges, and
guards gated repositories by token."""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from keyring.backend import KeyringBackend
from keyring.backends import fail
from keyring.errors import PasswordDeleteError

from gui.services import download as download_module
from gui.services.bounded_http import MAX_REDIRECTS, redirect_refusal
from gui.services.download import Download, DownloadProgress, pending_downloads
from gui.services.hub import HubClient
from gui.services.hub_token import TokenStore
from gui.services.remote_file import HubError, RemoteFile
from tests.fake_hub import FakeHub, Hit, Hostile, sha256_of, write_small_model

REPO = "someone/Tiny-GGUF"
GATED = "someone/gated-GGUF"
PRIVATE = "someone/private-GGUF"
NAME = "Tiny-Q4_K_M.gguf"
TOKEN = "hf_right_token_0123456789"
OUTSIDER = "hf_outsider_token_0123456789"


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_small_model(tmp_path_factory.mktemp("hostile") / NAME, seed=7)


@pytest.fixture
def hub(model: Path) -> Iterator[FakeHub]:
    with FakeHub(token=TOKEN, outsider_token=OUTSIDER) as h:
        h.add_file(REPO, NAME, model)
        h.add_repo(GATED, gated=True)
        h.add_file(GATED, NAME, model)
        h.add_repo(PRIVATE, private=True)
        h.add_file(PRIVATE, NAME, model)
        yield h


def remote(hub: FakeHub, model: Path, repo: str = REPO) -> RemoteFile:
    """The file as a listing gives it, without asking a server that may misbehave."""
    return RemoteFile(NAME, model.stat().st_size, sha256_of(model), hub.resolve_url(repo, NAME), repo)


def client(hub: FakeHub, **kw: Any) -> HubClient:
    return HubClient(endpoint=hub.endpoint, **{"timeout": 5.0, "deadline": 3.0, **kw})


def run(dl: Download, within: float = 20.0) -> Download:
    dl.start()
    assert dl.wait(within), "download did not come to rest"
    return dl


def wait_for(condition: Any, within: float = 10.0) -> None:
    end = time.monotonic() + within
    while not condition():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.02)


def api_hits(hub: FakeHub) -> list[Hit]:
    with hub._lock:
        return [h for h in hub.hits if h.path.startswith("/api/")]


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def _paused_part(hub: FakeHub, model: Path, folder: Path) -> Download:
    """A download paused once its first MiB is in."""

    def pause_early(progress: DownloadProgress) -> None:
        if progress.done >= 1 << 20:
            dl.pause()

    dl = client(hub).download(remote(hub, model), folder, pause_early, progress_interval_s=0.0, chunk_size=64 << 10)
    run(dl)
    assert dl.state == "paused" and dl.part_path().stat().st_size >= 1 << 20
    return dl


# ---- a server that trickles 50 bytes/s ---------------------------------------------------------


@pytest.mark.parametrize("action", ["pause", "cancel"])
def test_pause_and_cancel_take_effect_within_a_second_at_50_bytes_per_second(
    hub: FakeHub, model: Path, tmp_path: Path, action: str
) -> None:
    hub.hostile = Hostile(prefix="/cdn/", trickle_bps=50)
    said: list[DownloadProgress] = []
    dl = client(hub).download(remote(hub, model), tmp_path, said.append, progress_interval_s=0.0)
    dl.start()
    wait_for(lambda: any(p.done for p in said))  # bytes are coming, 5 every 0.1 s
    t0 = time.monotonic()
    getattr(dl, action)()
    assert dl.wait(1.0), f"{action} did not take effect within a second"
    assert time.monotonic() - t0 < 1.0
    if action == "pause":
        assert dl.state == "paused" and dl.part_path().stat().st_size > 0
        assert [(r.name, done) for r, done in pending_downloads(tmp_path)] == [(NAME, dl.part_path().stat().st_size)]
    else:
        assert dl.state == "cancelled" and leftovers(tmp_path) == []
        assert said[-1].message == f"Download of {NAME} cancelled; the partial file was removed."


def test_a_transfer_that_crawls_is_retried_then_fails_in_words_keeping_the_part(
    hub: FakeHub, model: Path, tmp_path: Path
) -> None:
    hub.hostile = Hostile(prefix="/cdn/", trickle_bps=2000)
    dl = run(
        client(hub).download(
            remote(hub, model), tmp_path, stall_window_s=0.5, min_rate_bps=50_000, max_retries=1, retry_delay_s=0
        )
    )
    assert dl.state == "failed" and dl.error is not None
    assert "too slowly" in dl.error and "resume" in dl.error, dl.error
    assert dl.part_path().stat().st_size > 0 and pending_downloads(tmp_path)


# ---- a server that never finishes its headers --------------------------------------------------


def test_a_listing_whose_headers_never_end_stops_at_its_deadline(hub: FakeHub) -> None:
    hub.hostile = Hostile(prefix="/api/", hang_headers=True)
    t0 = time.monotonic()
    with pytest.raises(HubError, match=r"did not finish within 1\.5 s"):
        client(hub, deadline=1.5).list_gguf(REPO)
    assert time.monotonic() - t0 < 3.0


def test_a_trickled_listing_stops_at_its_deadline(hub: FakeHub) -> None:
    hub.hostile = Hostile(prefix="/api/", trickle_bps=50)
    t0 = time.monotonic()
    with pytest.raises(HubError, match="did not finish within"):
        client(hub, deadline=1.5).list_gguf(REPO)
    assert time.monotonic() - t0 < 3.0


@pytest.mark.parametrize(
    "hostile",
    [Hostile(prefix="/cdn/", hang_headers=True), Hostile(prefix="/cdn/", trickle_bps=50)],
    ids=["headers-never-end", "trickle"],
)
def test_a_header_read_stops_at_its_deadline(hub: FakeHub, model: Path, hostile: Hostile) -> None:
    hub.hostile = hostile
    t0 = time.monotonic()
    with pytest.raises(HubError, match=r"did not finish within 1\.5 s"):
        client(hub, deadline=1.5).read_header(remote(hub, model))
    assert time.monotonic() - t0 < 3.0


def test_a_download_whose_answer_never_comes_fails_in_words_and_leaves_nothing(
    hub: FakeHub, model: Path, tmp_path: Path
) -> None:
    hub.hostile = Hostile(prefix="/cdn/", hang_headers=True)
    dl = run(client(hub, timeout=0.5).download(remote(hub, model), tmp_path, max_retries=1, retry_delay_s=0))
    assert dl.state == "failed" and dl.error is not None and "no answer within 0.5 s" in dl.error, dl.error
    assert leftovers(tmp_path) == [] and pending_downloads(tmp_path) == []


def test_pause_while_the_answer_hangs_takes_effect_at_once(hub: FakeHub, model: Path, tmp_path: Path) -> None:
    hub.hostile = Hostile(prefix="/cdn/", hang_headers=True)
    dl = client(hub, timeout=30).download(remote(hub, model), tmp_path)
    dl.start()
    time.sleep(0.5)  # the answer's header lines are coming, slowly
    dl.pause()
    assert dl.wait(1.0) and dl.state == "paused"
    assert leftovers(tmp_path) == []  # nothing came: nothing to resume


# ---- redirects ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "words"),
    [
        ("file:///etc/passwd", "only http and https are followed"),
        ("ftp://127.0.0.1:9/Tiny-Q4_K_M.gguf", "only http and https are followed"),
        ("loop", f"more than {MAX_REDIRECTS} redirects"),
    ],
    ids=["file", "ftp", "loop"],
)
def test_redirects_go_to_http_only_and_not_forever(
    hub: FakeHub, model: Path, tmp_path: Path, target: str, words: str
) -> None:
    hub.hostile = Hostile(prefix="/someone/", redirect_to=target)  # the file URLs, not the listing
    hub_client = client(hub)
    with pytest.raises(HubError, match=words):
        hub_client.read_header(remote(hub, model))
    dl = run(hub_client.download(remote(hub, model), tmp_path))
    assert dl.state == "failed" and dl.error is not None and words in dl.error, dl.error
    assert leftovers(tmp_path) == []
    resolves = [h for h in hub.hits if "/resolve/" in h.path]
    assert len(resolves) <= 2 * (MAX_REDIRECTS + 1)  # two reads, each stopped after the bound


def test_a_listing_redirected_to_a_file_url_is_refused(hub: FakeHub) -> None:
    hub.hostile = Hostile(prefix="/api/", redirect_to="file:///etc/passwd")
    with pytest.raises(HubError, match="only http and https"):
        client(hub).list_gguf(REPO)


@pytest.mark.parametrize(
    ("source", "target", "refused"),
    [
        ("https://hub.test/a", "http://cdn.test/a", "from https to plain http"),
        ("https://hub.test/a", "https://cdn.test/a", ""),
        ("http://hub.test/a", "https://cdn.test/a", ""),
        ("http://hub.test/a", "HTTP://cdn.test/a", ""),
        ("https://hub.test/a", "ftp://cdn.test/a", "only http and https"),
        ("https://hub.test/a", "data:text/plain,hi", "only http and https"),
    ],
)
def test_redirect_rule(source: str, target: str, refused: str) -> None:
    assert (refused in redirect_refusal(source, target, 1)) if refused else redirect_refusal(source, target, 1) == ""


def test_at_most_a_few_redirects_in_a_row() -> None:
    assert redirect_refusal("https://a/", "https://b/", MAX_REDIRECTS) == ""
    assert "redirects" in redirect_refusal("https://a/", "https://b/", MAX_REDIRECTS + 1)


# ---- listings: huge, endless, looping, malformed --------------------------------------------------


def _entry(i: int) -> bytes:
    return json.dumps({"type": "file", "oid": "0" * 40, "size": 1000, "path": f"m{i:06d}-Q4_K_M.gguf"}).encode()


def test_an_endless_listing_is_cut_with_a_message(hub: FakeHub) -> None:
    def endless() -> Iterator[bytes]:
        yield b"["
        i = 0
        while True:
            yield _entry(i) + b","
            i += 1

    hub.listing_body = endless
    hub_client = client(hub)
    hub_client.max_listing_bytes = 256 << 10
    listing = hub_client.list_repo(REPO)
    assert 1000 < len(listing.files) < 3000
    assert any("cut" in n and "larger than" in n for n in listing.notes), listing.notes


def test_a_listing_with_too_many_entries_is_cut_with_a_message(hub: FakeHub, model: Path) -> None:
    for i in range(12):
        hub.add_file(REPO, f"more/m{i:02d}-Q4_K_M.gguf", model, sha256="a" * 64)
    hub.page_size = 5
    hub_client = client(hub)
    full = hub_client.list_repo(REPO)
    assert len(full.files) == 13 and full.notes == []  # pages followed
    wait_for(lambda: len(api_hits(hub)) == 3)  # a hit is recorded once its answer is sent
    hub_client.max_listing_entries = 7
    cut = hub_client.list_repo(REPO)
    assert len(cut.files) == 7 and cut.notes == ["Listing cut at 7 entries: the repository lists more."]


@pytest.mark.parametrize(
    ("link", "note"),
    [("self", "pages loop"), ("http://elsewhere.invalid/api/models/x/tree/main", "another server")],
)
def test_listing_pages_that_loop_or_lead_away_are_not_followed(hub: FakeHub, link: str, note: str) -> None:
    hub.listing_next = link
    listing = client(hub).list_repo(REPO)
    assert [f.name for f in listing.files] == [NAME]
    assert any(note in n for n in listing.notes), listing.notes
    time.sleep(0.2)  # a hit is recorded once its answer is sent
    assert len(api_hits(hub)) == 1


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b'[{"type": "file", "path": "a.gguf", "size": ', "malformed JSON"),
        (b"[" * 200_000, "malformed JSON"),
        (b'{"error": "maintenance"}', "not a file listing (a JSON dict)"),
        (b"\xff\xfe not even text", "malformed JSON"),
    ],
    ids=["truncated", "deep", "object", "binary"],
)
def test_a_malformed_listing_is_an_error_in_words(hub: FakeHub, body: bytes, words: str) -> None:
    hub.listing_body = body
    with pytest.raises(HubError, match=re.escape(words)):
        client(hub).list_gguf(REPO)


def test_hostile_entries_are_left_out_and_counted(hub: FakeHub) -> None:
    entries: list[dict[str, Any]] = [
        {"type": "file", "path": "../../evil-Q4_K_M.gguf", "size": 10},  # the name alone is kept: harmless
        {"type": "file", "path": "dir/..\\..\\evil.gguf", "size": 10},
        {"type": "file", "path": "bad\x00name.gguf", "size": 10},
        {"type": "file", "path": ".hidden.gguf", "size": 10},
        {"type": "file", "path": "huge.gguf", "size": 1e400},
        {"type": "file", "path": "neg.gguf", "size": -1},
        {"type": "file", "path": "bool.gguf", "size": True},
        {"type": "file", "path": "fine-Q8_0.gguf", "size": 10, "lfs": {"oid": "<script>", "size": 10}},
        {"type": "file", "path": 42, "size": 10},
        "not an object",
    ]
    hub.listing_body = json.dumps(entries).encode().replace(b"Infinity", b"1e400")
    listing = client(hub).list_repo(REPO)
    assert [f.name for f in listing.files] == ["evil-Q4_K_M.gguf", "fine-Q8_0.gguf"]
    assert all(f.sha256 is None for f in listing.files)  # "<script>" is no SHA-256
    assert listing.notes == ["6 entries left out: not a plain file name, or no valid size."]


# ---- lies about Content-Length and Range ----------------------------------------------------------


def test_a_range_answer_from_the_wrong_offset_is_refused(hub: FakeHub, model: Path) -> None:
    hub.hostile = Hostile(prefix="/cdn/", range_lie="start")
    with pytest.raises(HubError, match="wrong bytes"):
        client(hub).read_header(remote(hub, model))


@pytest.mark.parametrize(
    ("lie", "words"),
    [("total", "the server's file has"), ("length", "the server offers")],
)
def test_a_download_whose_sizes_do_not_match_the_listing_fails_before_writing(
    hub: FakeHub, model: Path, tmp_path: Path, lie: str, words: str
) -> None:
    hub.ranges = lie == "total"  # a whole-file answer for "length", a range for "total"
    hub.hostile = Hostile(prefix="/cdn/", range_lie=lie)
    f = remote(hub, model)
    if lie == "total":  # Content-Range only comes with a range request: resume from a paused part
        hub.hostile = Hostile(prefix="/nowhere/")
        _paused_part(hub, model, tmp_path)
        hub.hostile = Hostile(prefix="/cdn/", range_lie=lie)
    held = sorted((p.name, p.stat().st_size) for p in tmp_path.iterdir())
    dl = run(client(hub).download(f, tmp_path))
    assert dl.state == "failed" and dl.error is not None and words in dl.error, dl.error
    assert sorted((p.name, p.stat().st_size) for p in tmp_path.iterdir()) == held  # nothing written


def test_a_resume_answered_from_the_wrong_offset_fails_and_keeps_the_part(
    hub: FakeHub, model: Path, tmp_path: Path
) -> None:
    f = remote(hub, model)
    held = _paused_part(hub, model, tmp_path).part_path().stat().st_size
    hub.hostile = Hostile(prefix="/cdn/", range_lie="start")
    dl = run(client(hub).download(f, tmp_path))
    assert dl.state == "failed" and dl.error is not None and "wrong bytes" in dl.error
    assert dl.part_path().stat().st_size == held and pending_downloads(tmp_path)


def test_a_body_shorter_than_promised_is_resumed(hub: FakeHub, model: Path, tmp_path: Path) -> None:
    hub.drop_after = 1 << 20
    dl = run(client(hub).download(remote(hub, model), tmp_path, retry_delay_s=0))
    assert dl.state == "done", dl.error
    assert (tmp_path / NAME).read_bytes() == model.read_bytes()


# ---- nothing to resume unless it verifies ----------------------------------------------------------


def test_no_disk_space_leaves_no_part_to_resume(
    hub: FakeHub, model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Usage:
        free = 1000

    monkeypatch.setattr(download_module.shutil, "disk_usage", lambda _path: Usage())
    dl = run(client(hub).download(remote(hub, model), tmp_path))
    assert dl.state == "failed" and dl.error is not None and "not enough disk space" in dl.error
    assert leftovers(tmp_path) == [] and pending_downloads(tmp_path) == []
    assert not hub.cdn_hits()  # checked before asking for a byte


def test_an_error_before_the_first_byte_leaves_no_part(hub: FakeHub, model: Path, tmp_path: Path) -> None:
    gone = RemoteFile("gone.gguf", 10, None, hub.resolve_url(REPO, "gone.gguf"), REPO)
    dl = run(client(hub).download(gone, tmp_path))
    assert dl.state == "failed" and dl.error is not None and "not found" in dl.error
    assert leftovers(tmp_path) == [] and pending_downloads(tmp_path) == []


@pytest.mark.parametrize("tamper", ["sha256", "garbage", "version", "empty-part", "long-part", "no-part", "bad-name"])
def test_a_part_is_offered_for_resume_only_when_its_sidecar_verifies(
    hub: FakeHub, model: Path, tmp_path: Path, tamper: str
) -> None:
    dl = _paused_part(hub, model, tmp_path)
    assert pending_downloads(tmp_path)
    side, part = dl.sidecar_path(), dl.part_path()
    meta = json.loads(side.read_text())
    if tamper == "sha256":
        meta["sha256"] = "f" * 64
    elif tamper == "version":
        meta["version"] = 99
    elif tamper == "bad-name":
        meta["model"]["path"] = "evil\\..\\outside.gguf"
    if tamper in ("sha256", "version", "bad-name"):
        side.write_text(json.dumps(meta))
    elif tamper == "garbage":
        side.write_text("{not json")
    elif tamper == "empty-part":
        part.write_bytes(b"")
    elif tamper == "long-part":
        part.write_bytes(b"\0" * (meta["size"] + 1))
    else:
        part.unlink()
    assert pending_downloads(tmp_path) == []


# ---- gated and private repositories -------------------------------------------------------------


def test_a_gated_repository_says_a_token_is_needed(hub: FakeHub, model: Path, tmp_path: Path) -> None:
    with pytest.raises(HubError, match=r"gated repository \(401\).*token"):
        client(hub).list_gguf(GATED)
    with pytest.raises(HubError, match=r"gated repository \(403\).*accept the terms"):
        client(hub, token=OUTSIDER).list_gguf(GATED)
    with pytest.raises(HubError, match="refused the token"):
        client(hub, token="hf_wrong").list_gguf(GATED)
    with pytest.raises(HubError, match=r"Tiny-Q4_K_M\.gguf: gated repository \(401\)"):
        client(hub).read_header(remote(hub, model, GATED))
    dl = run(client(hub).download(remote(hub, model, GATED), tmp_path))
    assert dl.state == "failed" and dl.error is not None and "gated repository (401)" in dl.error
    assert leftovers(tmp_path) == []


def test_a_private_repository_without_a_token_says_so(hub: FakeHub, model: Path) -> None:
    with pytest.raises(HubError, match=r"repository not found or private.*needs a token"):
        client(hub).list_gguf(PRIVATE)
    with pytest.raises(HubError, match="not found, or the token has no access"):
        client(hub, token=OUTSIDER).list_gguf(PRIVATE)


@pytest.mark.parametrize("repo", [GATED, PRIVATE])
def test_the_token_opens_listing_headers_and_downloads_alike(
    hub: FakeHub, model: Path, tmp_path: Path, repo: str
) -> None:
    hub_client = client(hub, token=TOKEN)
    (f,) = hub_client.list_gguf(repo)
    assert hub_client.read_header(f).quant_name == "Q4_K_M"
    dl = run(hub_client.download(f, tmp_path))
    assert dl.state == "done", dl.error
    to_hub = [h for h in hub.hits if not h.path.startswith("/cdn/")]
    assert {h.path.split("/")[1] for h in to_hub} == {"api", "someone"}
    assert all(h.auth == f"Bearer {TOKEN}" for h in to_hub)
    assert hub.cdn_hits() and all(h.auth is None for h in hub.cdn_hits())


# ---- where the token comes from ---------------------------------------------------------------------


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.saved: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.saved.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.saved[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        if self.saved.pop((service, username), None) is None:
            raise PasswordDeleteError("not there")


def test_hf_token_from_the_environment(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    hub_client = client(hub)
    assert [f.name for f in hub_client.list_gguf(GATED)] == [NAME]
    assert hub_client.token_words() == "Token: from HF_TOKEN."


def test_the_huggingface_hub_login(hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    stored = tmp_path / "token"
    stored.write_text(TOKEN)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(stored))
    hub_client = client(hub)
    assert [f.name for f in hub_client.list_gguf(GATED)] == [NAME]
    assert hub_client.token_words() == "Token: from your huggingface_hub login."


def test_a_token_typed_in_the_window_is_kept_in_the_keyring(hub: FakeHub) -> None:
    keyring = MemoryKeyring()
    first = client(hub, tokens=TokenStore(keyring))
    assert first.token_words().startswith("No token")
    assert "saved in the system keyring" in first.use_token(f"  {TOKEN}\n")
    assert keyring.saved == {("tightfit", "huggingface-token"): TOKEN}
    # The next start reads it back, on the first request.
    again = client(hub, tokens=TokenStore(keyring))
    assert [f.name for f in again.list_gguf(GATED)] == [NAME]
    assert again.token_words() == "Token: the one saved in the system keyring."
    assert "forgotten" in again.use_token("")
    assert keyring.saved == {} and again.token_words().startswith("No token")


def test_without_a_keyring_the_token_is_for_this_session_only(
    hub: FakeHub, model: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    hub_client = client(hub, tokens=TokenStore(fail.Keyring()))
    words = hub_client.use_token(TOKEN)
    assert words.startswith("Token set for this session only: no system keyring is available"), words
    assert hub_client.token_words() == "Token: the one entered here, for this session only."
    (f,) = hub_client.list_gguf(GATED)
    assert run(hub_client.download(f, tmp_path)).state == "done"
    with pytest.raises(HubError) as refused:
        client(hub, token="hf_wrong_secret").list_gguf(GATED)
    shown = [words, hub_client.token_words(), str(refused.value), *(r.getMessage() for r in caplog.records)]
    assert not any(TOKEN in text or "hf_wrong_secret" in text for text in shown)


def test_a_token_given_to_the_client_is_not_replaced_by_a_saved_one(hub: FakeHub) -> None:
    keyring = MemoryKeyring()
    keyring.set_password("tightfit", "huggingface-token", "hf_saved_elsewhere")
    assert client(hub, token=TOKEN, tokens=TokenStore(keyring)).auth_token() == TOKEN


def test_plan_reads_a_gated_header_with_the_users_token_and_sends_it_nowhere_else(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    from gui.commands.plan import read_model_header

    monkeypatch.setattr(constants, "ENDPOINT", hub.endpoint)
    url = hub.resolve_url(GATED, NAME)
    with pytest.raises(SystemExit, match=r"gated repository \(401\)"):
        read_model_header(url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert read_model_header(url).quant_name == "Q4_K_M"
    assert HubClient(endpoint="http://elsewhere.invalid", token=TOKEN).token_for(url) is None


def test_a_header_that_keeps_growing_past_the_cap_is_refused(hub: FakeHub, model: Path) -> None:
    from gui.core.gguf_reader import GGUFError
    from gui.services.remote_header import fetch_header

    with pytest.raises(GGUFError, match="larger than"):
        fetch_header(hub.resolve_url(REPO, NAME), first_read=1024, max_header=8192)
    asked = [int(h.range.rpartition("-")[2]) + 1 for h in hub.cdn_hits() if h.range]
    assert asked and max(asked) <= 8192  # never more than the cap
