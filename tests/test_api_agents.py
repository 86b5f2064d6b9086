"""What coding tools and agents expect of an OpenAI-compatible server, on the real engine and the demo model over
real HTTP on 127.0.0.1, through OpenAI's own client: OpenAI's sampling defaults, replies as long as the context
allows, routes without /v1, any model name."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from api_kit import ServedEngine

from gui.core import protocol as p
from gui.core.params import LoadSettings

pytestmark = pytest.mark.engine

N_CTX = 768  # past the old 512-token cap, small enough to fill in seconds
SETTINGS = LoadSettings(n_ctx=N_CTX, n_batch=256, n_ubatch=256, n_threads=2)


@pytest.fixture(scope="module")
def served(demo_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedEngine]:
    engine = ServedEngine(demo_model, SETTINGS, tmp_path_factory.mktemp("logs"))
    assert engine.loaded.n_ctx == N_CTX
    yield engine
    engine.close()


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
