"""What coding tools and agents expect of an OpenAI-compatible server, on the real engine and the demo model over
real HTTP on 127.0.0.1, through OpenAI's own client: OpenAI's sampling defaults, replies as long as the context
allows, routes without /v1, any model name."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from api_kit import ServedEngine, served_engine
from pydantic import BaseModel

from gui.core import protocol as p
from gui.core.params import LoadSettings

pytestmark = pytest.mark.engine

N_CTX = 768  # past the old 512-token cap, small enough to fill in seconds
SETTINGS = LoadSettings(n_ctx=N_CTX, n_batch=256, n_ubatch=256, n_threads=2)


@pytest.fixture(scope="module")
def served(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedEngine]:
    yield from served_engine(demo_model, SETTINGS, tmp_path_factory.mktemp("logs"), N_CTX)


@pytest.fixture(scope="module")
def base(served: ServedEngine) -> str:
    return served.serve()


@pytest.fixture
def client(base: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=base + "/v1", api_key="unused", max_retries=0)


@pytest.fixture
def model(served: ServedEngine) -> str:
    return Path(served.loaded.model_path).name.removesuffix(".gguf")


# ---- OpenAI's defaults ------------------------------------------------------------------------------------


def test_a_greedy_request_is_the_engines_own_greedy_reply(
    client: openai.OpenAI, model: str, served: ServedEngine
) -> None:
    """temperature 0 and nothing else said: the likeliest token every time, no repeat penalty added on the way."""
    question = "List five fruits, one per line."
    made = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": question}], max_tokens=40, temperature=0
    )
    greedy = p.Sampling(temperature=0.0, repeat_penalty=1.0)
    text, stats = served.reply(served.client.generate((p.ChatMessage("user", question),), 40, greedy))
    assert text and made.choices[0].message.content == text
    assert made.usage is not None and made.usage.completion_tokens == stats.n_gen


def test_without_max_tokens_a_reply_runs_until_the_context_is_full(client: openai.OpenAI, model: str) -> None:
    made = client.completions.create(model=model, prompt="1, 2, 3, 4, 5, 6, 7, 8, 9, 10,", temperature=0)
    assert made.choices[0].finish_reason == "length"
    assert made.usage is not None
    assert made.usage.completion_tokens > 512  # no cap of its own
    assert made.usage.prompt_tokens + made.usage.completion_tokens >= N_CTX  # the context's room, used up


# ---- routes and model names ----------------------------------------------------------------------------


def post(url: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as failed:
        return failed.code, json.loads(failed.read())


def test_routes_answer_without_v1_too(base: str, model: str) -> None:
    bare = openai.OpenAI(base_url=base, api_key="unused", max_retries=0)
    assert [m.id for m in bare.models.list()] == [model]
    made = bare.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Hi"}], max_tokens=4, temperature=0
    )
    assert made.choices[0].message.content and made.model == model
    assert bare.completions.create(model=model, prompt="Once upon", max_tokens=3).choices[0].text


def test_any_model_name_or_none_is_answered_by_the_loaded_model(client: openai.OpenAI, base: str, model: str) -> None:
    made = client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}], max_tokens=4, temperature=0
    )
    assert made.choices[0].message.content and made.model == model  # the reply says which model answered
    status, body = post(base + "/chat/completions", {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3})
    assert status == 200 and body["model"] == model and body["choices"][0]["message"]["content"]


def test_with_a_strict_model_name_only_the_loaded_models_is_answered(served: ServedEngine, model: str) -> None:
    strict = served.serve(strict_model=True)
    client = openai.OpenAI(base_url=strict, api_key="unused", max_retries=0)
    with pytest.raises(openai.NotFoundError) as caught:
        client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}], max_tokens=2)
    assert caught.value.code == "model_not_found" and model in caught.value.message
    status, body = post(strict + "/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi"}]})
    assert status == 400 and body["error"]["param"] == "model"
    made = client.chat.completions.create(model=model, messages=[{"role": "user", "content": "Hi"}], max_tokens=2)
    assert made.choices[0].message.content is not None


# ---- structured output ---------------------------------------------------------------------------------------


class Colour(BaseModel):
    name: str
    warm: bool
    rank: int


def test_a_reply_parsed_into_a_pydantic_model_keeps_to_its_schema(client: openai.OpenAI, model: str) -> None:
    made = client.chat.completions.parse(
        model=model,
        messages=[{"role": "user", "content": "Give one colour as JSON with its name, whether it is warm, a rank."}],
        response_format=Colour,
        max_tokens=80,
        temperature=0,
    )
    choice = made.choices[0]
    assert choice.finish_reason == "stop"  # the grammar ended the reply, not the token limit
    assert isinstance(choice.message.parsed, Colour)
    assert Colour.model_validate_json(choice.message.content or "") == choice.message.parsed


def test_a_json_object_reply_is_a_json_object(client: openai.OpenAI, model: str) -> None:
    made = client.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": 'Repeat exactly: {"animal": "cat", "legs": 4}'}],
        response_format={"type": "json_object"},
        max_tokens=300,
        temperature=0,
    )
    assert made.choices[0].finish_reason == "stop"
    assert isinstance(json.loads(made.choices[0].message.content or ""), dict)


def test_llama_cpps_grammar_and_json_schema_fields_hold_the_reply(client: openai.OpenAI, model: str) -> None:
    for seed in (1, 2, 3):
        made = client.completions.create(
            model=model,
            prompt="Is the sky green?",
            max_tokens=8,
            seed=seed,
            extra_body={"grammar": 'root ::= "yes" | "no"'},
        )
        assert made.choices[0].text in {"yes", "no"} and made.choices[0].finish_reason == "stop"
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    made = client.completions.create(
        model=model, prompt="A number:", max_tokens=30, temperature=0, extra_body={"json_schema": schema}
    )
    if made.choices[0].finish_reason == "stop":
        assert set(json.loads(made.choices[0].text)) == {"n"}


def test_a_grammar_or_schema_the_engine_cannot_take_is_a_400_naming_it(client: openai.OpenAI, model: str) -> None:
    hello: Any = [{"role": "user", "content": "Hi"}]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=model, messages=hello, max_tokens=4, extra_body={"grammar": "root ::= ("})
    assert caught.value.param == "grammar" and "does not parse" in caught.value.message
    unexpressed = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"not": {"type": "string"}}}}
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model=model, messages=hello, max_tokens=4, response_format=unexpressed)
    assert caught.value.param == "response_format.json_schema.schema" and "cannot be expressed" in caught.value.message
    with pytest.raises(openai.BadRequestError) as caught:  # streamed: still an HTTP error, before any event
        client.chat.completions.create(
            model=model, messages=hello, max_tokens=4, stream=True, extra_body={"grammar": "root ::= undefined"}
        )
    assert caught.value.param == "grammar"
    # The engine is unharmed: the next request is served.
    assert client.chat.completions.create(model=model, messages=hello, max_tokens=2).choices[0].message is not None
