"""The real llama.cpp engine in its worker process, on the demo model (and on a copy of it without its chat
template)."""

from __future__ import annotations

import ctypes
from pathlib import Path
from typing import Any

import pytest
from api_kit import most_at_once
from gguf_factory import copy_gguf

from gui.core import protocol as p
from gui.core.gguf_reader import read_header
from gui.core.params import LoadSettings
from gui.services.engine_client import EngineUnavailable, SyncEngine, WorkerExited

pytestmark = pytest.mark.engine

SETTINGS = LoadSettings(n_ctx=1024, n_batch=256, n_ubatch=256, n_threads=2)
GREEDY = p.Sampling(temperature=0.0)


@pytest.fixture(scope="module")
def engine(demo_model: Path, tmp_path_factory: pytest.TempPathFactory):
    with SyncEngine(log_dir=tmp_path_factory.mktemp("logs")) as eng:
        eng.client.load(demo_model, SETTINGS)
        eng.loaded = eng.expect(p.Loaded, 120)
        yield eng


def collect(eng: SyncEngine, request: int) -> tuple[list[p.Token], p.ReplyStats]:
    tokens = []
    while True:
        event = eng.next_event(60)
        if isinstance(event, p.Token):
            assert event.request_id == request
            tokens.append(event)
        elif isinstance(event, p.Done):
            assert event.request_id == request
            return tokens, event.stats


def test_hello_names_the_build(engine: SyncEngine) -> None:
    build = engine.client.build
    assert build is not None
    # The worker's answer agrees with the llama.cpp library loaded here, in a process of its own (imported
    # here, not at collection, so runs without the engine do not load it).
    import llama_cpp

    # llama.cpp says "offload supported" for any build with the RPC backend (other machines'
    # devices); offload to this machine needs a device of GPU type (1) or integrated GPU (2) here.
    lib = llama_cpp.llama_cpp._lib
    lib.ggml_backend_dev_by_type.restype = ctypes.c_void_p
    lib.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
    local_gpu = bool(lib.ggml_backend_dev_by_type(1) or lib.ggml_backend_dev_by_type(2))
    assert build.gpu_offload == (bool(llama_cpp.llama_supports_gpu_offload()) and local_gpu)
    if build.gpu_offload:
        assert build.backend in {"CUDA", "ROCm", "HIP", "Metal", "Vulkan", "SYCL", "GPU"}
        assert build.backend == "GPU" or build.backend.upper() in build.system_info.upper()
    else:
        assert build.backend == "CPU"
    assert build.llama_cpp_python.startswith("0.3.")
    assert "CPU" in build.system_info


def test_load_reports_the_model(engine: SyncEngine, demo_model: Path) -> None:
    loaded = engine.loaded
    assert loaded.model_path == str(demo_model)
    assert loaded.n_ctx == 1024
    assert loaded.n_layer == 30  # SmolLM2-135M has 30 blocks
    assert loaded.chat_format == "model" and not loaded.chat_format_reason


def test_every_token_arrives_in_order_before_done(engine: SyncEngine) -> None:
    # That they arrive while decoding goes on is test_stop_ends_the_reply_mid_way's; the rate the
    # pane receives them at, against llama.cpp's decode rate, is bench/stream_rate.py's.
    request = engine.client.generate((p.ChatMessage("user", "Tell me about the sea."),), 48, GREEDY, True)
    tokens, stats = collect(engine, request)
    assert [t.index for t in tokens] == list(range(48))
    assert stats.n_gen == 48 and stats.finish_reason == "length"
    assert stats.ttft_ms > 0 and stats.engine_decode_tok_s > 0 and stats.gen_tok_s > 0
    assert "".join(t.text for t in tokens).strip()


def test_greedy_replies_are_reproducible_and_reuse_the_prompt_cache(engine: SyncEngine) -> None:
    question = (p.ChatMessage("user", "Name three colours."),)
    first, stats1 = collect(engine, engine.client.generate(question, 24, GREEDY))
    text1 = "".join(t.text for t in first)
    second, stats2 = collect(engine, engine.client.generate(question, 24, GREEDY))
    assert "".join(t.text for t in second) == text1
    # The same prompt again: everything but the last token comes from the KV cache.
    assert stats2.n_prompt == stats1.n_prompt
    assert stats2.n_prompt_evaluated == 1
    follow_up = (*question, p.ChatMessage("assistant", text1), p.ChatMessage("user", "And three more?"))
    _, stats3 = collect(engine, engine.client.generate(follow_up, 8, GREEDY))
    assert stats3.n_prompt_evaluated < stats3.n_prompt - stats1.n_prompt + 1


def test_stats_count_what_the_engine_did(engine: SyncEngine, demo_model: Path) -> None:
    engine.client.request_stats()
    before = engine.expect(p.EngineStats, 30)
    assert before.model_path == str(demo_model) and before.n_ctx == 1024
    _, reply = collect(engine, engine.client.generate((p.ChatMessage("user", "Count to five."),), 12, GREEDY, True))
    engine.client.request_stats()
    after = engine.expect(p.EngineStats, 30)
    assert after.n_decoded_tokens_total - before.n_decoded_tokens_total == reply.n_gen - 1  # the last is not decoded
    assert after.n_prompt_tokens_total - before.n_prompt_tokens_total == reply.n_prompt_evaluated
    assert after.decode_ms_total > before.decode_ms_total
    assert after.n_cached_tokens == reply.n_prompt + reply.n_gen - 1
    assert after.rss_mib > 50  # the mapped model and the context


def test_stop_ends_the_reply_mid_way(engine: SyncEngine) -> None:
    request = engine.client.generate((p.ChatMessage("user", "Write a long story."),), 500, GREEDY, True)
    first = engine.expect(p.Token, 60)
    assert first.index == 0
    engine.client.stop(request)
    indices = [first.index]
    while True:
        event = engine.next_event(60)
        if isinstance(event, p.Token):
            indices.append(event.index)
        elif isinstance(event, p.Done):
            break
    assert event.stats.finish_reason == "cancelled" and event.stats.n_gen < 500
    # Tokens decoded before the stop reached the worker still arrive, every one of them; how many that
    # is depends on scheduling (bench/stream_rate.py prints it), so only the order is checked here.
    assert indices[: event.stats.n_gen] == list(range(event.stats.n_gen))


def test_utf8_split_across_tokens_arrives_whole(engine: SyncEngine) -> None:
    # Greedy, the demo model answers in kana, and its byte-level vocabulary spells some of them in two
    # tokens: the first ends inside the character's three UTF-8 bytes.
    request = engine.client.generate((p.ChatMessage("user", "Translate 'hello' to Japanese."),), 24, GREEDY)
    tokens, _ = collect(engine, request)
    pieces = [t.text for t in tokens]
    text = "".join(pieces)
    assert any(len(c.encode()) >= 3 for c in text), text  # multi-byte characters were produced
    assert "" in pieces, pieces  # a token that ended mid-character brought no text of its own...
    for i, piece in enumerate(pieces):  # ...and the character arrived whole with a later one
        if piece == "":
            completed = next(later for later in pieces[i + 1 :] if later)
            assert len(completed[0].encode()) > 1, pieces
    assert "\ufffd" not in text


def test_prompt_longer_than_context_is_refused_in_words(engine: SyncEngine) -> None:
    huge = " ".join(["word"] * 3000)
    request = engine.client.generate((p.ChatMessage("user", huge),), 8, GREEDY)
    event = engine.next_event(60)
    assert isinstance(event, p.GenerateFailed) and event.request_id == request
    assert "context holds 1024" in event.error


def test_missing_file_fails_the_load_and_keeps_the_worker(tmp_path: Path) -> None:
    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.load(tmp_path / "absent.gguf", SETTINGS)
        with pytest.raises(EngineUnavailable, match="no such file"):
            eng.expect(p.Loaded, 60)
        assert eng.client.alive


def test_generate_without_a_model_is_refused(tmp_path: Path) -> None:
    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.generate((p.ChatMessage("user", "hi"),))
        with pytest.raises(EngineUnavailable, match="no model is loaded"):
            eng.expect(p.Done, 60)


def test_killed_worker_is_reported_with_the_reason(demo_model: Path, tmp_path: Path) -> None:
    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.load(demo_model, SETTINGS)
        eng.expect(p.Loaded, 120)
        eng.client.generate((p.ChatMessage("user", "Write a long story."),), 500, GREEDY, True)
        eng.expect(p.Token, 60)
        eng.client.kill()
        while True:
            event = eng.events.get(timeout=60)
            if isinstance(event, WorkerExited):
                break
        assert not event.expected
        assert event.exitcode == -9
        assert "SIGKILL" in event.reason
        # llama.cpp's own log of this worker is there for the window to quote.
        assert eng.client.log_path is not None and eng.client.log_path.stat().st_size > 0
        # A new worker can be started on the same client.
        eng.client.start()
        assert isinstance(eng.expect(p.Hello, 120), p.Hello)


def test_a_dry_run_asked_mid_reply_waits_instead_of_cutting_it_off(engine: SyncEngine, demo_model: Path) -> None:
    request = engine.client.generate((p.ChatMessage("user", "Tell me a story."),), 64, GREEDY, True)
    assert isinstance(engine.expect(p.Token, 60), p.Token)
    engine.client.dry_run(demo_model, SETTINGS)
    order = []
    while len(order) < 2:
        event = engine.next_event(60)
        if isinstance(event, p.Done | p.DryRunResult):
            order.append(event)
    done, dry = order
    assert isinstance(done, p.Done) and done.request_id == request
    assert done.stats.n_gen == 64 and done.stats.finish_reason == "length"
    assert isinstance(dry, p.DryRunResult) and dry.ok and dry.kv_mib > 0


def test_parallel_slots_split_the_context_and_a_full_one_is_said(demo_model: Path, tmp_path: Path) -> None:
    with SyncEngine(log_dir=tmp_path) as eng:
        eng.client.load(demo_model, SETTINGS.with_values(n_parallel=4))
        loaded = eng.expect(p.Loaded, 120)
        assert loaded.n_ctx == 256  # what one conversation can use: 1024 cells over 4 sequences
        eng.client.generate((p.ChatMessage("user", " ".join(["word"] * 400)),), 8, GREEDY)
        event = eng.next_event(60)
        assert isinstance(event, p.GenerateFailed) and event.kind == "context_full" and event.n_ctx == 256


# ---- a model whose file has no chat template ------------------------------------------------------


@pytest.fixture(scope="module")
def untemplated(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo model rewritten without ``tokenizer.chat_template``: every other key and tensor as it was, so
    its vocabulary still has ChatML's turn markers as special tokens."""
    path = tmp_path_factory.mktemp("models") / "SmolLM2-no-template.gguf"
    copy_gguf(demo_model, path, drop=("tokenizer.chat_template",))
    assert not read_header(path).has_chat_template
    return path


@pytest.fixture(scope="module")
def bare_engine(untemplated: Path, tmp_path_factory: pytest.TempPathFactory):
    with SyncEngine(log_dir=tmp_path_factory.mktemp("logs")) as eng:
        eng.client.load(untemplated, SETTINGS)
        eng.loaded = eng.expect(p.Loaded, 120)
        yield eng


def test_without_a_template_the_vocabularys_markers_choose_the_format(bare_engine: SyncEngine) -> None:
    loaded = bare_engine.loaded  # llama.cpp loads the rewritten file
    assert loaded.n_layer == 30
    assert loaded.chat_format == "chatml"
    assert loaded.chat_format_reason == (
        "No chat template in this file: formatting as ChatML (the vocabulary has ChatML's turn markers)."
    )


def test_without_a_template_the_reply_ends_at_the_end_of_its_turn(bare_engine: SyncEngine) -> None:
    question = (p.ChatMessage("user", "What is the capital of France?"),)
    tokens, stats = collect(bare_engine, bare_engine.client.generate(question, 200, GREEDY))
    text = "".join(t.text for t in tokens)
    assert stats.finish_reason == "stop" and stats.n_gen < 200, text
    assert "Paris" in text and "<|im" not in text


def test_a_marker_written_as_plain_text_ends_the_reply_unseen(bare_engine: SyncEngine) -> None:
    # Asked in Phi-3's layout, which this vocabulary has no special tokens for, the model ends its turn by
    # spelling <|end|> out in ordinary tokens: they are held back, never shown, and the reply stops there.
    question = (p.ChatMessage("user", "What is the capital of France?"),)
    tokens, stats = collect(bare_engine, bare_engine.client.generate(question, 60, GREEDY, chat_format="phi3"))
    pieces = [t.text for t in tokens]
    text = "".join(pieces)
    assert stats.finish_reason == "stop" and stats.n_gen < 60, pieces
    assert "Paris" in text and "<" not in text and "|" not in text, pieces
    assert pieces[-1] == "" and len(pieces) == stats.n_gen  # the marker's tokens arrived, empty


def test_a_format_picked_for_one_request_and_an_unknown_one(bare_engine: SyncEngine) -> None:
    question = (p.ChatMessage("user", "Hi"),)
    _, as_loaded = collect(bare_engine, bare_engine.client.generate(question, 4, GREEDY))
    _, as_llama3 = collect(bare_engine, bare_engine.client.generate(question, 4, GREEDY, chat_format="llama3"))
    assert as_llama3.n_prompt > as_loaded.n_prompt  # Llama 3's markers are plain text to this vocabulary
    request = bare_engine.client.generate(question, 4, GREEDY, chat_format="klingon")
    event = bare_engine.next_event(60)
    assert isinstance(event, p.GenerateFailed) and event.request_id == request
    assert event.kind == "template" and "unknown chat format 'klingon'" in event.error


# ---- parallel slots: replies generated together ---------------------------------------------------------

SLOTS = 4
SLOTS_SETTINGS = SETTINGS.with_values(n_ctx=2048, n_parallel=SLOTS)  # 512 cells for each sequence
TOPICS = ("the sea", "a cat", "bread", "winter", "a train", "music")


@pytest.fixture(scope="module")
def slots_engine(demo_model: Path, tmp_path_factory: pytest.TempPathFactory):
    with SyncEngine(log_dir=tmp_path_factory.mktemp("logs")) as eng:
        eng.client.load(demo_model, SLOTS_SETTINGS)
        eng.loaded = eng.expect(p.Loaded, 120)
        assert eng.loaded.n_ctx == 2048 // SLOTS
        yield eng


def together(eng: SyncEngine, text: str, max_tokens: int, ignore_eos: bool = True) -> int:
    return eng.client.generate((p.ChatMessage("user", text),), max_tokens, GREEDY, ignore_eos, concurrent=True)


def gather(eng: SyncEngine, requests: list[int]) -> tuple[dict[int, str], dict[int, Any], list[Any]]:
    """Every event until each request has ended: the texts, the ends (Done or GenerateFailed), all events in order."""
    texts = dict.fromkeys(requests, "")
    ends: dict[int, Any] = {}
    seen: list[Any] = []
    while len(ends) < len(requests):
        event = eng.next_event(120)
        seen.append(event)
        if isinstance(event, p.Token):
            texts[event.request_id] += event.text
        elif isinstance(event, p.Done | p.GenerateFailed):
            ends[event.request_id] = event
    return texts, ends, seen


def test_concurrent_replies_wait_for_the_chat_reply_then_run_one_per_slot(slots_engine: SyncEngine) -> None:
    eng = slots_engine
    chat = eng.client.generate((p.ChatMessage("user", "Tell me about the sea."),), 32, GREEDY, True)
    asked = [together(eng, f"One sentence about {topic}.", 16) for topic in TOPICS]
    texts, ends, seen = gather(eng, [chat, *asked])
    # The chat's reply is not cut short by them: they wait in order, then run as many at once as there are slots.
    assert ends[chat].stats.finish_reason == "length" and ends[chat].stats.n_gen == 32
    first_start = next(i for i, e in enumerate(seen) if isinstance(e, p.PromptRead) and e.request_id != chat)
    assert seen.index(ends[chat]) < first_start
    assert most_at_once(seen[first_start:]) == SLOTS
    for request in asked:
        stats = ends[request].stats
        assert stats.finish_reason == "length" and stats.n_gen == 16 and stats.engine_decode_tok_s > 0
        tokens = [e.index for e in seen if isinstance(e, p.Token) and e.request_id == request]
        assert tokens == list(range(16))
    # Each is the reply the same request gets alone. Greedy: on the CPU each sequence's rows of a batch are
    # computed as they are alone, but a backend may pick other kernels for other batch sizes, and a sampled
    # token is a threshold on those figures; the API's test compares seeded sampling too.
    for topic, request in zip(TOPICS, asked, strict=True):
        alone = together(eng, f"One sentence about {topic}.", 16)
        assert gather(eng, [alone])[0][alone] == texts[request]


def test_a_stopped_reply_frees_its_slot_for_the_next_at_once(slots_engine: SyncEngine) -> None:
    eng = slots_engine
    asked = [together(eng, f"Write a long story about {topic}.", 400) for topic in TOPICS[:5]]
    first, waiting = asked[0], asked[4]
    while not isinstance(event := eng.next_event(120), p.Token) or event.request_id != asked[3]:
        pass  # the four slots are generating; the fifth request waits
    eng.client.stop(first)
    rest = []
    while True:
        event = eng.next_event(120)
        rest.append(event)
        if isinstance(event, p.PromptRead) and event.request_id == waiting:
            break
    # The stopped reply ended, cancelled, and the waiting one started while the three others still run.
    ended = [e for e in rest if isinstance(e, p.Done | p.GenerateFailed)]
    assert [e.request_id for e in ended] == [first] and ended[0].stats.finish_reason == "cancelled"
    for request in asked[1:]:
        eng.client.stop(request)
    _, ends, _ = gather(eng, asked[1:])
    assert {e.stats.finish_reason for e in ends.values()} == {"cancelled"}


def test_a_context_full_request_fails_alone(slots_engine: SyncEngine) -> None:
    eng = slots_engine
    asked = [together(eng, f"One sentence about {topic}.", 12) for topic in TOPICS[:3]]
    huge = together(eng, " ".join(["word"] * 600), 8)  # past the 512 cells of one sequence
    _, ends, _ = gather(eng, [*asked, huge])
    failed = ends[huge]
    assert isinstance(failed, p.GenerateFailed) and failed.kind == "context_full" and failed.n_ctx == 512
    assert all(ends[r].stats.finish_reason == "length" and ends[r].stats.n_gen == 12 for r in asked)


def test_a_chat_reply_replaces_concurrent_ones_and_keeps_its_prompt_cache(slots_engine: SyncEngine) -> None:
    eng = slots_engine
    question = (p.ChatMessage("user", "Name three colours."),)
    _, ends, _ = gather(eng, [eng.client.generate(question, 8, GREEDY)])
    asked = [together(eng, f"Write a long story about {topic}.", 400) for topic in TOPICS[:2]]
    while not isinstance(eng.next_event(120), p.Token):
        pass
    chat = eng.client.generate(question, 8, GREEDY)
    _, ends, _ = gather(eng, [*asked, chat])
    assert all(ends[r].stats.finish_reason == "cancelled" and ends[r].stats.n_gen < 400 for r in asked)
    # The replies under way took sequences beside the chat's: its prompt is still in the cache.
    assert ends[chat].stats.n_prompt_evaluated == 1
    eng.client.request_stats()
    assert eng.expect(p.EngineStats, 30).n_cached_tokens == ends[chat].stats.n_prompt + ends[chat].stats.n_gen - 1
