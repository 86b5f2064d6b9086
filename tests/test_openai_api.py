"""The API's request parsing without a server: what a request that says little gets, and what is refused."""

from __future__ import annotations

from typing import Any

from gui.core import openai_api as api
from gui.core import protocol as p

HELLO = [{"role": "user", "content": "hi"}]


def chat(**fields: Any) -> api.CompletionRequest:
    return api.parse_chat_request({"model": "m", "messages": HELLO, **fields})


def test_a_request_without_sampling_fields_gets_openais_defaults() -> None:
    request = chat()
    assert request.sampling == api.API_SAMPLING
    s = request.sampling
    assert (s.temperature, s.top_p, s.presence_penalty, s.frequency_penalty) == (1.0, 1.0, 0.0, 0.0)
    assert (s.top_k, s.min_p, s.repeat_penalty) == (0, 0.0, 1.0)  # nothing cut, nothing penalised
    assert request.max_tokens is None  # until the reply ends or the context is full
    assert api.parse_completion_request({"model": "m", "prompt": "x"}).sampling == api.API_SAMPLING


def test_the_chat_panes_presets_are_its_own() -> None:
    chat_pane = p.Sampling()
    assert chat_pane != api.API_SAMPLING
    assert (chat_pane.temperature, chat_pane.repeat_penalty, p.MAX_TOKENS.default) == (0.7, 1.1, 512)
    assert p.Generate(1, ()).sampling == chat_pane


def test_a_field_given_overrides_only_itself() -> None:
    request = chat(temperature=0, top_k=20, max_tokens=7)
    assert request.sampling.temperature == 0.0 and request.sampling.top_k == 20
    assert request.sampling.top_p == api.API_SAMPLING.top_p and request.max_tokens == 7
