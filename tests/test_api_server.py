"""The OpenAI-compatible API on the real engine and the demo model, over real HTTP on 127.0.0.1: OpenAI's own
client for what it can send, raw HTTP for what it cannot (bad JSON, a wrong key, a client that goes away)."""

from __future__ import annotations

import http.client
import json
import queue
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import openai
import pytest
from api_kit import ServedEngine, most_at_once, served_engine

from gui.core import openai_api as api
from gui.core import protocol as p
from gui.core.params import LoadSettings
from gui.services.api_server import ApiActivity

pytestmark = pytest.mark.engine

N_CTX = 1024
SETTINGS = LoadSettings(n_ctx=N_CTX, n_batch=256, n_ubatch=256, n_threads=2)
KEY = "sk-test-key"


@pytest.fixture(scope="module")
def served(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedEngine]:
    yield from served_engine(demo_model, SETTINGS, tmp_path_factory.mktemp("logs"), N_CTX)


@pytest.fixture(scope="module")
def base(served: ServedEngine) -> str:
    return served.serve()


@pytest.fixture(scope="module")
def keyed(served: ServedEngine) -> str:
    return served.serve(api_key=KEY)


@pytest.fixture
def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0)


@pytest.fixture
def model(served: ServedEngine) -> str:
    return Path(served.loaded.model_path).name.removesuffix(".gguf")


def drain(served: ServedEngine) -> list[ApiActivity]:
    seen = []
    while True:
        try:
            seen.append(served.activity.get_nowait())
        except queue.Empty:
            return seen


def raw(
    base: str, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        response = conn.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        conn.close()


def error_of(body: bytes) -> dict[str, Any]:
    error = json.loads(body)["error"]
    assert set(error) == {"message", "type", "param", "code"}
    return error


def chat(model: str, text: str, **extra: Any) -> bytes:
    return json.dumps({"model": model, "messages": [{"role": "user", "content": text}], **extra}).encode()


# ---- OpenAI's client -------------------------------------------------------------------------------


def test_models_lists_the_loaded_model(client: openai.OpenAI, model: str) -> None:
    assert [m.id for m in client.models.list()] == [model]


def test_a_chat_reply_with_its_token_counts(client: openai.OpenAI, model: str, served: ServedEngine) -> None:
    drain(served)
    reply = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Name a colour."}], max_tokens=8, temperature=0
    )
    choice = reply.choices[0]
    assert choice.message.role == "assistant" and choice.message.content
    assert choice.finish_reason in {"stop", "length"}
    assert reply.usage is not None and reply.usage.prompt_tokens > 5 and 0 < reply.usage.completion_tokens <= 8
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    # The window hears when it started and ended, with llama.cpp's decode rate.
    started, finished = drain(served)
    assert not started.finished and finished.finished and finished.request_id == started.request_id
    assert finished.n_gen == reply.usage.completion_tokens and finished.endpoint == "chat"
    assert finished.decode_tok_s > 0 or finished.n_gen < 2


def test_a_streamed_chat_reply_is_the_same_reply(client: openai.OpenAI, model: str) -> None:
    messages: Any = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is rain?"}]
    whole = client.chat.completions.create(model=model, messages=messages, max_tokens=12, temperature=0)
    chunks = list(
        client.chat.completions.create(
            model=model,
            messages=messages,
            max_tokens=12,
            temperature=0,
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == whole.choices[0].message.content
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) > 1  # token by token
    finals = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finals == [whole.choices[0].finish_reason]
    assert chunks[-1].usage == whole.usage and not chunks[-1].choices


def test_a_plain_completion_continues_the_text(client: openai.OpenAI, model: str) -> None:
    whole = client.completions.create(model=model, prompt="One, two, three,", max_tokens=6, temperature=0)
    assert whole.choices[0].text and whole.usage is not None
    # No chat format around it: a few tokens of prompt, not a templated conversation.
    assert whole.usage.prompt_tokens < 10
    streamed = client.completions.create(
        model=model, prompt="One, two, three,", max_tokens=6, temperature=0, stream=True
    )
    assert "".join(c.choices[0].text for c in streamed) == whole.choices[0].text


def test_a_stop_text_ends_the_reply_before_it(client: openai.OpenAI, model: str) -> None:
    free = client.completions.create(model=model, prompt="One, two, three,", max_tokens=12, temperature=0)
    text = free.choices[0].text
    cut = text.strip().split()[1]  # a word the reply writes: it must end just before it
    stopped = client.completions.create(
        model=model, prompt="One, two, three,", max_tokens=12, temperature=0, stop=[cut]
    )
    assert stopped.choices[0].finish_reason == "stop"
    assert stopped.choices[0].text == text[: text.index(cut)]


def test_sampling_parameters_reach_the_engine(client: openai.OpenAI, model: str) -> None:
    def reply(seed: int) -> str:
        made = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": "Write a word."}],
            max_tokens=10,
            temperature=1.5,
            top_p=1.0,
            seed=seed,
            presence_penalty=0.5,
            frequency_penalty=0.5,
            extra_body={"top_k": 100, "min_p": 0.0, "repeat_penalty": 1.0},
        )
        return made.choices[0].message.content or ""

    replies = {seed: reply(seed) for seed in (1, 2, 3)}
    assert reply(1) == replies[1]  # the same seed, the same reply
    assert len(set(replies.values())) > 1  # other seeds, other replies


# ---- errors -------------------------------------------------------------------------------------------


def test_malformed_json_is_a_400(served: ServedEngine, base: str) -> None:
    for body in (b"{not json", b"\xff\xfe", b'{"model": NaN}', b"[" * 100_000):
        status, _, answer = raw(base, "POST", "/v1/chat/completions", body)
        assert status == 400, body[:20]
        assert "not valid JSON" in error_of(answer)["message"]


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"temperature": 9}, "temperature"),
        ({"temperature": "hot"}, "temperature"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"max_tokens": p.MAX_TOKENS.maximum + 1}, "max_tokens"),
        ({"seed": -1}, "seed"),
        ({"top_k": 1.5}, "top_k"),
        ({"stop": [1]}, "stop"),
        ({"stop": ["a"] * (api.MAX_STOPS + 1)}, "stop"),
        ({"n": 2}, "n"),
        ({"stream": "yes"}, "stream"),
        ({"messages": [{"role": "robot", "content": "hi"}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "messages[0].content"),
        ({"messages": []}, "messages"),
    ],
)
def test_a_bad_field_is_a_400_naming_it(
    served: ServedEngine, model: str, extra: dict[str, Any], param: str, base: str
) -> None:
    body = json.loads(chat(model, "hi"))
    body.update(extra)
    status, _, answer = raw(base, "POST", "/v1/chat/completions", json.dumps(body).encode())
    error = error_of(answer)
    assert status == 400 and error["param"] == param and error["type"] == "invalid_request_error"


def test_with_a_strict_model_name_an_unknown_model_is_a_404(served: ServedEngine) -> None:
    strict = openai.OpenAI(base_url=served.serve(strict_model=True) + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError) as caught:
        strict.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}], max_tokens=4)
    assert caught.value.code == "model_not_found"


def test_a_prompt_longer_than_the_context_is_a_400_naming_the_limit(client: openai.OpenAI, model: str) -> None:
    long_text = "many words " * N_CTX
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": long_text}], max_tokens=4)
    assert caught.value.code == "context_length_exceeded"
    assert f"holds {N_CTX} tokens" in caught.value.message
    with pytest.raises(openai.BadRequestError):  # streamed: still an HTTP error, before any event
        client.completions.create(model=model, prompt=long_text, max_tokens=4, stream=True)
    # The engine is unharmed: the next request is served.
    assert client.completions.create(model=model, prompt="Hello", max_tokens=2).choices[0].text is not None


def test_a_body_past_the_limit_is_refused(served: ServedEngine, model: str, base: str) -> None:
    body = chat(model, "x" * api.MAX_BODY_BYTES)
    status, _, answer = raw(base, "POST", "/v1/chat/completions", body)
    assert status == 413 and error_of(answer)["code"] == "request_too_large"


def test_a_wrong_or_missing_api_key_is_a_401(served: ServedEngine, model: str, keyed: str) -> None:
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": KEY}):
        status, _, answer = raw(keyed, "POST", "/v1/chat/completions", chat(model, "hi"), headers)
        assert status == 401 and error_of(answer)["code"] == "invalid_api_key"
        status, _, _ = raw(keyed, "GET", "/v1/models", None, headers)
        assert status == 401
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=keyed + "/v1", api_key="wrong", max_retries=0).models.list()
    good = openai.OpenAI(base_url=keyed + "/v1", api_key=KEY, max_retries=0)
    assert good.completions.create(model=model, prompt="Hi", max_tokens=2).usage is not None
    assert raw(keyed, "GET", "/health")[0] == 200  # health needs no key


def test_no_cors_headers_unless_asked(served: ServedEngine, base: str) -> None:
    status, headers, _ = raw(base, "GET", "/v1/models", None, {"Origin": "http://evil.example"})
    assert status == 200 and not any(h.lower().startswith("access-control") for h in headers)
    cors = served.serve(cors_origin="http://localhost:3000")
    status, headers, _ = raw(cors, "OPTIONS", "/v1/chat/completions", None, {"Origin": "http://localhost:3000"})
    assert status == 204 and headers["Access-Control-Allow-Origin"] == "http://localhost:3000"


def test_health_and_unknown_paths(served: ServedEngine, base: str) -> None:
    status, _, body = raw(base, "GET", "/health")
    assert status == 200 and json.loads(body)["status"] == "ok"
    status, _, body = raw(base, "GET", "/v1/nothing")
    assert status == 404 and error_of(body)["code"] == "not_found"


# ---- sharing the engine -----------------------------------------------------------------------------


def test_a_client_that_goes_away_mid_stream_stops_its_reply(served: ServedEngine, model: str, base: str) -> None:
    drain(served)
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    body = json.dumps({"model": model, "prompt": "Once upon a time", "max_tokens": 2000, "stream": True})
    conn.request("POST", "/v1/completions", body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 200
    assert response.readline().startswith(b"data: ")  # the reply is under way
    response.close()  # and the client is gone (the response holds the socket as well)
    conn.close()
    started = served.activity.get(timeout=60)
    finished = served.activity.get(timeout=120)
    assert finished.request_id == started.request_id and finished.finish_reason == "cancelled"
    assert finished.n_gen < 2000
    # The engine was told to stop that reply, and said so.
    assert any(isinstance(e, p.Acknowledged) and e.request_id == started.request_id for e in served.events)
    # The slot is free: the next request is served, with nothing left over from the last.
    _, _, answer = raw(base, "GET", "/health")
    assert json.loads(answer)["running"] == 0 and json.loads(answer)["queued"] == 0
    client = openai.OpenAI(base_url=base + "/v1", api_key="x", max_retries=0)
    assert client.completions.create(model=model, prompt="Hi", max_tokens=2).usage is not None


def test_eight_clients_at_once_each_get_their_own_reply(client: openai.OpenAI, model: str) -> None:
    topics = ["the sea", "a cat", "bread", "winter", "a train", "music", "the moon", "a garden"]

    def ask(index: int) -> str:
        made = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": f"One sentence about {topics[index]}."}],
            max_tokens=12,
            temperature=0.8,
            seed=100 + index,
        )
        return made.choices[0].message.content or ""

    alone = [ask(i) for i in range(8)]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(ask, range(8)))
    assert together == alone
    assert len(set(alone)) == 8


def test_while_the_engines_owner_holds_it_requests_wait_and_then_go_in_order(served: ServedEngine, model: str) -> None:
    """The window holds the API while its own chat, a load or a sweep uses the engine: a request waits (health
    says why), none is sent to the engine, and on release it is answered."""
    url = served.serve()
    server = served.servers[-1]
    served.call(lambda: _now(server.hold, "the window's chat is replying"))
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(client.completions.create, model=model, prompt="Hello", max_tokens=3)

        def health() -> dict[str, Any]:
            return json.loads(raw(url, "GET", "/health")[2])

        for _ in range(600):  # the request reaches the server (at most 30 s)
            if health()["queued"] == 1 or waiting.done():
                break
            time.sleep(0.05)
        state = health()
        assert state["queued"] == 1 and state["running"] == 0 and state["held"] == "the window's chat is replying"
        assert not waiting.done()
        served.call(lambda: _now(server.release))
        answer = waiting.result(timeout=120)
    assert answer.usage is not None and answer.usage.completion_tokens >= 1
    assert "held" not in health()


async def _now(action: Any, *args: Any) -> None:
    action(*args)


# ---- parallel slots ---------------------------------------------------------------------------------------

SLOTS = 4
PARALLEL = SETTINGS.with_values(n_ctx=SLOTS * N_CTX, n_parallel=SLOTS)  # N_CTX cells for each sequence


@pytest.fixture(scope="module")
def parallel(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedEngine]:
    yield from served_engine(demo_model, PARALLEL, tmp_path_factory.mktemp("logs"), N_CTX)


@pytest.fixture(scope="module")
def slotted(parallel: ServedEngine) -> str:
    return parallel.serve()  # slots: the load's n_parallel


def wait_queued(url: str, n: int, until: Any = None) -> None:
    """Until ``n`` requests wait for a slot (or ``until()`` is true); at most 60 s."""
    for _ in range(1200):
        if json.loads(raw(url, "GET", "/health")[2])["queued"] >= n or (until is not None and until()):
            return
        time.sleep(0.05)
    raise AssertionError(f"{n} requests never queued")


def test_with_parallel_slots_eight_clients_run_four_at_once_each_as_alone(parallel: ServedEngine, slotted: str) -> None:
    server = parallel.servers[0]
    assert json.loads(raw(slotted, "GET", "/health")[2])["slots"] == SLOTS
    client = openai.OpenAI(base_url=slotted + "/v1", api_key="x", max_retries=0)
    model = Path(parallel.loaded.model_path).name.removesuffix(".gguf")
    topics = ["the sea", "a cat", "bread", "winter", "a train", "music", "the moon", "a garden"]

    def ask(index: int) -> str:
        # Seeded sampling, each request its own seed and sampler chain. On the CPU build a sequence's rows of a
        # batch are computed as they are alone, so the replies are the same to the token (a GPU build may pick
        # other kernels for other batch sizes; were that to change a token, temperature 0 is the comparison).
        made = client.chat.completions.create(
            model=model,
            messages=[{"role": "user", "content": f"Write two sentences about {topics[index]}."}],
            max_tokens=24,
            temperature=0.8,
            seed=200 + index,
        )
        return made.choices[0].message.content or ""

    alone = [ask(i) for i in range(8)]
    # Held, every request queues first; released, they go to the engine as slots allow.
    parallel.call(lambda: _now(server.hold, "queueing the clients"))
    with ThreadPoolExecutor(8) as pool:
        asked = [pool.submit(ask, i) for i in range(8)]
        wait_queued(slotted, 8)
        since = len(parallel.events)
        parallel.call(lambda: _now(server.release))
        together = [reply.result(timeout=300) for reply in asked]
    assert together == alone and len(set(alone)) == 8
    # At most one reply per slot at any time, and every slot used.
    assert most_at_once(parallel.events[since:]) == SLOTS


def test_with_parallel_slots_a_client_that_goes_away_frees_its_slot_for_the_next(
    parallel: ServedEngine, slotted: str
) -> None:
    model = Path(parallel.loaded.model_path).name.removesuffix(".gguf")
    drain(parallel)
    url = urlsplit(slotted)
    streams = []
    for index in range(SLOTS):  # every slot busy with a long streamed reply
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        body = {"model": model, "prompt": f"Story {index}: once upon a time", "max_tokens": 2000, "stream": True}
        conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200 and response.readline().startswith(b"data: ")
        streams.append((conn, response))
    started = [parallel.activity.get(timeout=60) for _ in range(SLOTS)]
    client = openai.OpenAI(base_url=slotted + "/v1", api_key="x", max_retries=0)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(client.completions.create, model=model, prompt="Hello", max_tokens=4)
        wait_queued(slotted, 1, waiting.done)
        assert not waiting.done()
        conn, response = streams.pop(0)
        response.close()  # the first client goes away
        conn.close()
        answer = waiting.result(timeout=120)
    assert answer.usage is not None and answer.usage.completion_tokens >= 1
    # In the engine's own order: the first reply ended, cancelled, and the waiting one was answered whole while
    # the other three still generated.
    ends = [e for e in parallel.events if isinstance(e, p.Done) and e.request_id in {a.request_id for a in started}]
    assert [e.request_id for e in ends] == [started[0].request_id] and ends[0].stats.finish_reason == "cancelled"
    for conn, response in streams:
        response.close()
        conn.close()
    # Then the three others go too: each reply the clients left is stopped, and only the waiting one ran its course.
    rest = [parallel.activity.get(timeout=120) for _ in range(3 + len(streams))]
    cancelled = {a.request_id for a in rest if a.finished and a.finish_reason == "cancelled"}
    assert cancelled == {a.request_id for a in started}
    assert [a.finish_reason for a in rest if a.finished and a.request_id not in cancelled] in (["length"], ["stop"])


def test_with_parallel_slots_a_context_full_request_fails_alone(parallel: ServedEngine, slotted: str) -> None:
    server = parallel.servers[0]
    client = openai.OpenAI(base_url=slotted + "/v1", api_key="x", max_retries=0)
    model = Path(parallel.loaded.model_path).name.removesuffix(".gguf")

    def ask(prompt: str) -> Any:
        try:
            return client.completions.create(model=model, prompt=prompt, max_tokens=24, temperature=0)
        except openai.BadRequestError as exc:
            return exc

    prompts = ["One, two, three,", "Red, green,", "Monday, Tuesday,", "many words " * N_CTX]
    parallel.call(lambda: _now(server.hold, "queueing the clients"))
    with ThreadPoolExecutor(len(prompts)) as pool:
        asked = [pool.submit(ask, prompt) for prompt in prompts]
        wait_queued(slotted, len(prompts))
        parallel.call(lambda: _now(server.release))
        *answers, refused = [reply.result(timeout=300) for reply in asked]
    assert isinstance(refused, openai.BadRequestError) and refused.code == "context_length_exceeded"
    assert f"holds {N_CTX} tokens" in refused.message
    for answer, prompt in zip(answers, prompts, strict=False):
        assert answer.usage.completion_tokens >= 1
        assert answer.choices[0].text == ask(prompt).choices[0].text  # the same as alone


# ---- text that is not text, and failures that end other replies ------------------------------------------


def stream_lines(response: http.client.HTTPResponse) -> list[bytes]:
    """The rest of a stream's event lines (the blank lines between them left out)."""
    return [line.strip() for line in response.read().split(b"\n") if line.strip()]


def test_a_lone_surrogate_is_a_400_before_the_engine_hears_of_it(served: ServedEngine, model: str, base: str) -> None:
    drain(served)
    sent = len(served.events)
    # As a client sends it: the JSON escape of a lone surrogate, which json.loads gives back as one.
    body = b'{"model": "%s", "messages": [{"role": "user", "content": "hi \\udc80"}]}' % model.encode()
    status, _, answer = raw(base, "POST", "/v1/chat/completions", body)
    assert status == 400 and error_of(answer)["param"] == "messages[0].content"
    status, _, answer = raw(base, "POST", "/v1/completions", b'{"prompt": "\\ud800 once"}')
    assert status == 400 and error_of(answer)["param"] == "prompt"
    assert drain(served) == [] and len(served.events) == sent  # no Generate: the engine heard nothing


def test_a_request_that_makes_the_engine_fail_fails_alone(parallel: ServedEngine, slotted: str) -> None:
    """A Generate whose text the engine cannot read (here sent past the API's door, straight to the engine) fails on
    its own; the reply under way beside it runs its course."""
    model = Path(parallel.loaded.model_path).name.removesuffix(".gguf")
    drain(parallel)
    url = urlsplit(slotted)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    body = {"model": model, "prompt": "Once upon a time", "max_tokens": 120, "stream": True, "temperature": 0}
    conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 200 and response.readline().startswith(b"data: ")
    bad = parallel.client.generate((), 8, prompt="hi \udc80 there", concurrent=True)
    lines = stream_lines(response)
    conn.close()
    assert lines[-1] == b"data: [DONE]"
    finals = [json.loads(line[6:]) for line in lines[:-1]]
    assert finals[-1]["choices"][0]["finish_reason"] in ("length", "stop")
    assert not any("error" in chunk for chunk in finals)
    failed = [e for e in parallel.events if isinstance(e, p.GenerateFailed) and e.request_id == bad]
    assert len(failed) == 1 and failed[0].kind == "input"
    ended = [a for a in drain(parallel) if a.finished]
    assert len(ended) == 1 and ended[0].finish_reason in ("length", "stop")  # its own end, not "cancelled"


def test_a_reply_another_command_cuts_short_ends_with_an_error(served: ServedEngine, model: str, base: str) -> None:
    url = urlsplit(base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
    body = {"model": model, "prompt": "Once upon a time", "max_tokens": 2000, "stream": True}
    conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    assert response.status == 200 and response.readline().startswith(b"data: ")
    own = served.client.generate((p.ChatMessage("user", "hi"),), 2)  # the engine's owner replaces the reply
    lines = stream_lines(response)
    conn.close()
    served.reply(own)
    assert b"data: [DONE]" not in lines
    last = json.loads(lines[-1][6:])
    assert last["error"]["code"] == "reply_cut_short" and last["error"]["type"] == "server_error"
    assert not any(b'"finish_reason": "stop"' in line for line in lines)


def test_an_engine_that_dies_mid_reply_ends_every_reply_with_an_error(demo_model: Path, tmp_path: Path) -> None:
    engine = ServedEngine(demo_model, SETTINGS.with_values(n_ctx=2 * N_CTX, n_parallel=2), tmp_path)
    try:
        base = engine.serve()
        model = Path(engine.loaded.model_path).name.removesuffix(".gguf")
        url = urlsplit(base)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        body = {"model": model, "prompt": "Once upon a time", "max_tokens": 2000, "stream": True}
        conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200 and response.readline().startswith(b"data: ")
        with ThreadPoolExecutor(1) as pool:
            whole = pool.submit(raw, base, "POST", "/v1/completions", json.dumps({**body, "stream": False}).encode())
            started = [engine.activity.get(timeout=60) for _ in range(2)]
            ids = {a.request_id for a in started}
            with engine._heard:  # both replies have tokens: the engine is generating them side by side
                engine._heard.wait_for(
                    lambda: {e.request_id for e in engine.events if isinstance(e, p.Token)} >= ids, 60
                )
            engine.client.kill()
            status, _, answer = whole.result(timeout=60)
        lines = stream_lines(response)
        conn.close()
        assert status == 503 and error_of(answer)["code"] == "engine_unavailable"
        assert b"data: [DONE]" not in lines and json.loads(lines[-1][6:])["error"]["type"] == "server_error"
        assert not any(b'"finish_reason": "stop"' in line for line in lines)
    finally:
        engine.close()


# ---- what a web page may not do ---------------------------------------------------------------------------


def test_a_body_not_sent_as_json_is_a_415(served: ServedEngine, model: str, base: str) -> None:
    drain(served)
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        status, _, answer = raw(base, "POST", "/v1/chat/completions", chat(model, "hi"), {"Content-Type": kind})
        assert status == 415, kind
        assert (
            error_of(answer)["code"] == "unsupported_media_type" and kind.split(";")[0] in error_of(answer)["message"]
        )
    assert drain(served) == []  # nothing was generated
    headers = {"Content-Type": "application/json; charset=utf-8"}
    status, _, answer = raw(
        base, "POST", "/v1/completions", json.dumps({"prompt": "Hi", "max_tokens": 1}).encode(), headers
    )
    assert status == 200 and json.loads(answer)["usage"]["completion_tokens"] == 1


def test_a_host_header_naming_another_site_is_a_403(served: ServedEngine, model: str, base: str) -> None:
    port = urlsplit(base).port
    for method, path, body in (
        ("GET", "/v1/models", None),
        ("GET", "/health", None),
        ("POST", "/v1/completions", b"{}"),
    ):
        status, _, answer = raw(base, method, path, body, {"Host": f"rebound.example:{port}"})
        assert status == 403, path
        assert error_of(answer)["code"] == "host_not_allowed" and "rebound.example" in error_of(answer)["message"]
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "localhost"):
        assert raw(base, "GET", "/v1/models", None, {"Host": host})[0] == 200, host
    listed = served.serve(allowed_hosts=("mybox.lan",))
    assert raw(listed, "GET", "/v1/models", None, {"Host": f"MyBox.lan:{port}"})[0] == 200
    # OpenAI's client sends JSON, and the host it was given: it is answered as before.
    client = openai.OpenAI(base_url=base + "/v1", api_key="x", max_retries=0)
    assert client.completions.create(model=model, prompt="Hi", max_tokens=2).usage is not None
