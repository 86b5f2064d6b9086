"""The API's request parsing without a server: what a request that says little gets, and what is refused."""

from __future__ import annotations

import json
from typing import Any

import pytest

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


# ---- structured output ------------------------------------------------------------------------------------

SCHEMA_PARAM = "response_format.json_schema.schema"


def json_schema(schema: object) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}


def refused(**fields: Any) -> api.ApiError:
    with pytest.raises(api.ApiError) as caught:
        chat(**fields)
    assert caught.value.status == 400 and caught.value.type == "invalid_request_error"
    return caught.value


def test_each_kind_of_structured_output_becomes_a_grammar() -> None:
    assert chat().grammar is None and chat(response_format={"type": "text"}).grammar is None
    as_object = chat(response_format={"type": "json_object"})
    assert as_object.grammar == p.ReplyGrammar("json_schema", api.JSON_OBJECT_SCHEMA)
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    given = chat(response_format=json_schema(schema))
    assert given.grammar is not None and given.grammar.kind == "json_schema" and given.grammar_param == SCHEMA_PARAM
    assert json.loads(given.grammar.text) == schema
    assert chat(grammar='root ::= "yes" | "no"').grammar == p.ReplyGrammar("gbnf", 'root ::= "yes" | "no"')
    assert chat(json_schema=schema).grammar_param == "json_schema"


def test_a_schema_with_local_references_and_no_cycle_is_taken() -> None:
    schema = {
        "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/Point"}, "b": {"$ref": "#/$defs/Point"}},
    }
    assert chat(response_format=json_schema(schema)).grammar is not None


@pytest.mark.parametrize(
    ("fields", "param", "says"),
    [
        ({"response_format": {"type": "xml"}}, "response_format.type", "json_schema"),
        ({"response_format": {"type": "json_schema"}}, "response_format.json_schema", "schema"),
        ({"response_format": json_schema([1])}, SCHEMA_PARAM, "an object"),
        ({"response_format": json_schema({"$ref": "https://example.com/s.json"})}, SCHEMA_PARAM, "inside"),
        ({"response_format": json_schema({"$ref": "#/$defs/Missing"})}, SCHEMA_PARAM, "points at nothing"),
        ({"grammar": ""}, "grammar", "GBNF"),
        ({"grammar": 'root ::= "a"', "json_schema": {"type": "object"}}, "json_schema", "not both"),
        ({"grammar": "x" * (api.MAX_GRAMMAR_BYTES + 1)}, "grammar", "at most"),
        ({"json_schema": {"enum": ["x" * api.MAX_GRAMMAR_BYTES]}}, "json_schema", "at most"),
    ],
)
def test_a_bad_structured_output_field_is_a_400_naming_it(fields: dict[str, Any], param: str, says: str) -> None:
    error = refused(**fields)
    assert error.param == param and says in error.message


def test_a_recursive_schema_is_refused_with_its_cycle() -> None:
    node = {"type": "object", "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
    error = refused(response_format=json_schema({"$defs": {"Node": node}, "$ref": "#/$defs/Node"}))
    assert error.param == SCHEMA_PARAM and "#/$defs/Node -> #/$defs/Node" in error.message
    two = {"$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}
    assert "cycle" in refused(json_schema=two).message


def test_a_schema_nested_past_the_bound_is_refused() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(api.MAX_SCHEMA_DEPTH):
        deep = {"type": "array", "items": deep}
    error = refused(response_format=json_schema(deep))
    assert error.param == SCHEMA_PARAM and "levels deep" in error.message


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"model": "m", "messages": [{"role": "user", "content": "hi \udc80"}]}, "messages[0].content"),
        (
            {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "\ud800"}]}]},
            "messages[0].content[0].text",
        ),
        ({"model": "m", "messages": HELLO, "stop": ["ok", "\udfff"]}, "stop[1]"),
        ({"model": "m\udc80", "messages": HELLO}, "model"),
        ({"model": "m", "messages": HELLO, "user\udc80": 1}, "user\\udc80"),
    ],
)
def test_a_lone_surrogate_anywhere_in_a_chat_is_a_400_naming_the_field(body: dict[str, Any], param: str) -> None:
    with pytest.raises(api.ApiError) as caught:
        api.parse_chat_request(body)
    error = caught.value.body()["error"]
    assert caught.value.status == 400 and error["param"] == param and "surrogate" in error["message"]
    json.dumps(caught.value.body(), ensure_ascii=False).encode()  # the error itself is text UTF-8 can hold


def test_a_lone_surrogate_in_a_prompt_as_the_json_escape_sends_it_is_a_400() -> None:
    body = json.loads('{"model": "m", "prompt": ["Once \\udc80 upon"]}')
    with pytest.raises(api.ApiError) as caught:
        api.parse_completion_request(body)
    assert caught.value.status == 400 and caught.value.param == "prompt[0]"


def test_surrogate_pairs_are_text() -> None:
    body = json.loads('{"model": "m", "messages": [{"role": "user", "content": "\\ud83d\\ude00"}]}')
    assert api.parse_chat_request(body).messages[0].content == "\U0001f600"


@pytest.mark.parametrize(
    ("header", "listening", "allowed"),
    [
        ("localhost:8080", "127.0.0.1", True),
        ("LOCALHOST", "127.0.0.1", True),
        ("127.0.0.1:8080", "127.0.0.1", True),
        ("[::1]:8080", "::1", True),
        ("10.1.2.3:8080", "0.0.0.0", True),  # an address, not a name: no rebinding
        ("evil.example:8080", "127.0.0.1", False),
        ("evil.example", "0.0.0.0", False),
        ("127.0.0.1.evil.example", "127.0.0.1", False),
        ("", "127.0.0.1", False),
        ("mybox.lan:8080", "mybox.lan", True),  # the name listened on
        ("Proxy.Lan", "127.0.0.1", True),  # listed below
    ],
)
def test_a_host_header_is_for_this_server_only_by_names_it_answers_to(
    header: str, listening: str, allowed: bool
) -> None:
    assert api.host_allowed(header, listening, frozenset({"proxy.lan"})) is allowed


def test_this_machines_own_name_is_allowed_only_when_listening_on_every_address() -> None:
    own = frozenset({"mybox"})
    assert api.host_allowed("mybox:8080", "0.0.0.0", own=own)
    assert api.host_allowed("mybox:8080", "::", own=own)
    assert not api.host_allowed("mybox:8080", "127.0.0.1", own=own)
