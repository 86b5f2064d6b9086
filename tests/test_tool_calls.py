"""Tool calls read out of replies in each family's format, whole and streamed.

The replies are written as each family's chat template and documentation show a call: Qwen2.5 / Hermes 3's
``<tool_call>`` blocks, Llama 3.1's JSON reply and ``<|python_tag|>`` built-ins, Mistral Nemo's
``[TOOL_CALLS]`` array and Mistral Small 3.2's ``[ARGS]`` form, DeepSeek R1's and V3.1's blocks, gpt-oss's
harmony messages (OpenAI's harmony guide), and the generic JSON reply llama.cpp constrains other models to.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from gui.core.tool_calls import (
    ContentDelta,
    ParsedReply,
    ReasoningDelta,
    ToolCall,
    ToolCallDelta,
    ToolCallStream,
    ToolFormat,
    ToolLimits,
    openai_delta,
    parse_tool_calls,
    preserved_tokens,
    tool_format,
    tool_grammar_schema,
)

H, L3, M, DS, GPT, G = (
    ToolFormat.HERMES,
    ToolFormat.LLAMA3,
    ToolFormat.MISTRAL,
    ToolFormat.DEEPSEEK,
    ToolFormat.HARMONY,
    ToolFormat.GENERIC,
)


def counter() -> Callable[[], str]:
    numbers = itertools.count(1)
    return lambda: f"call_{next(numbers)}"


def parse(text: str, fmt: ToolFormat, limits: ToolLimits | None = None) -> ParsedReply:
    return parse_tool_calls(text, fmt, ids=counter(), **({"limits": limits} if limits else {}))


def call(name: str, arguments: Mapping[str, Any], n: int = 1, call_id: str | None = None) -> ToolCall:
    return ToolCall(call_id or f"call_{n}", name, json.dumps(arguments, separators=(",", ":"), ensure_ascii=False))


WEATHER = {"city": "Paris", "unit": "celsius"}
TIME = {"timezone": "Europe/Paris"}

# (format, reply, content, calls, reasoning)
WELL_FORMED: list[tuple[ToolFormat, str, str | None, list[ToolCall], str | None]] = [
    (  # Qwen2.5-Instruct / Hermes 3: one block per call, as the template's system prompt asks
        H,
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>',
        None,
        [call("get_weather", WEATHER)],
        None,
    ),
    (
        H,
        "I'll look both up.\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}\n</tool_call>',
        "I'll look both up.",
        [call("get_weather", WEATHER), call("get_time", TIME, 2)],
        None,
    ),
    (  # Qwen3 thinks first; content after the call is kept too
        H,
        "<think>\nThe user wants the weather.\n</think>\n\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>\nDone < soon.',
        "<think>\nThe user wants the weather.\n</think>Done < soon.",
        [call("get_weather", WEATHER)],
        None,
    ),
    (H, '<function=get_time>{"timezone": "Europe/Paris"}</function>', None, [call("get_time", TIME)], None),
    (H, "No tools needed: 2 < 3 and <b>bold</b>.", "No tools needed: 2 < 3 and <b>bold</b>.", [], None),
    (  # Llama 3.1/3.2/3.3 with custom tools: the reply is the JSON call
        L3,
        '{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}',
        None,
        [call("get_weather", WEATHER)],
        None,
    ),
    (
        L3,
        '\n{"type": "function", "name": "get_time", "parameters": {"timezone": "Europe/Paris"}}',
        None,
        [call("get_time", TIME)],
        None,
    ),
    (  # built-in tools after <|python_tag|>
        L3,
        '<|python_tag|>brave_search.call(query="weather in Paris, today")',
        None,
        [call("brave_search", {"query": "weather in Paris, today"})],
        None,
    ),
    (
        L3,
        'Searching.<|python_tag|>{"name": "get_time", "parameters": {"timezone": "Europe/Paris"}}',
        "Searching.",
        [call("get_time", TIME)],
        None,
    ),
    (L3, '{"answer": 42}', '{"answer": 42}', [], None),  # a JSON reply that is not a call
    (L3, "The weather is fine.", "The weather is fine.", [], None),
    (  # Mistral Nemo / Small 3.1: one array, ids of nine characters
        M,
        '[TOOL_CALLS][{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}, "id": "a1B2c3D4e"}, '
        '{"name": "get_time", "arguments": {"timezone": "Europe/Paris"}, "id": "f5G6h7I8j"}]',
        None,
        [call("get_weather", WEATHER, call_id="a1B2c3D4e"), call("get_time", TIME, call_id="f5G6h7I8j")],
        None,
    ),
    (  # Mistral Small 3.2 / Magistral / Devstral
        M,
        'Checking.[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "unit": "celsius"}'
        '[TOOL_CALLS]get_time[ARGS]{"timezone": "Europe/Paris"}',
        "Checking.",
        [call("get_weather", WEATHER), call("get_time", TIME, 2)],
        None,
    ),
    (
        M,
        '[TOOL_CALLS]get_time[CALL_ID]Zz9Yy8Xx7[ARGS]{"timezone": "Europe/Paris"}',
        None,
        [call("get_time", TIME, call_id="Zz9Yy8Xx7")],
        None,
    ),
    (M, "[Not a call] just brackets [1, 2].", "[Not a call] just brackets [1, 2].", [], None),
    (  # DeepSeek R1 / V3
        DS,
        "<think>\nI need the weather.\n</think>\n\n"
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"city": "Paris", "unit": "celsius"}\n```<｜tool▁call▁end｜>\n'
        "<｜tool▁call▁begin｜>function<｜tool▁sep｜>get_time\n```json\n"
        '{"timezone": "Europe/Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "<think>\nI need the weather.\n</think>",
        [call("get_weather", WEATHER), call("get_time", TIME, 2)],
        None,
    ),
    (  # DeepSeek V3.1
        DS,
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{"timezone": "Europe/Paris"}'
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        None,
        [call("get_time", TIME)],
        None,
    ),
    (  # gpt-oss: reasoning, a preamble, then the call (the prompt ended with <|start|>assistant)
        GPT,
        "<|channel|>analysis<|message|>User asks for the weather; call get_weather.<|end|>"
        "<|start|>assistant<|channel|>commentary<|message|>Let me check.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        '{"city":"Paris","unit":"celsius"}<|call|>',
        "Let me check.",
        [call("get_weather", WEATHER)],
        "User asks for the weather; call get_weather.",
    ),
    (  # the recipient before the channel
        GPT,
        ' to=functions.get_time<|channel|>commentary json<|message|>{"timezone": "Europe/Paris"}<|call|>',
        None,
        [call("get_time", TIME)],
        None,
    ),
    (
        GPT,
        "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>It is 5 < 6.",
        "It is 5 < 6.",
        [],
        "Simple.",
    ),
    (
        G,
        '{"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}, '
        '{"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}]}',
        None,
        [call("get_weather", WEATHER), call("get_time", TIME, 2)],
        None,
    ),
    (
        G,
        '{"tool_call": {"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}}',
        None,
        [call("get_time", TIME)],
        None,
    ),
    (G, ' {"name": "get_time", "arguments": {"timezone": "Europe/Paris"}}\n', None, [call("get_time", TIME)], None),
    (G, '{"response": "It is sunny."}', "It is sunny.", [], None),
    (G, "It is sunny {today}.", "It is sunny {today}.", [], None),
]


@pytest.mark.parametrize(("fmt", "text", "content", "calls", "reasoning"), WELL_FORMED)
def test_each_format_is_read(
    fmt: ToolFormat, text: str, content: str | None, calls: list[ToolCall], reasoning: str | None
) -> None:
    got = parse(text, fmt)
    assert got == ParsedReply(content, tuple(calls), reasoning, ())
    for c in got.tool_calls:
        assert isinstance(json.loads(c.arguments), dict)


def stream(text: str, fmt: ToolFormat, pieces: list[str], limits: ToolLimits | None = None) -> tuple[ParsedReply, list]:
    s = ToolCallStream(fmt, ids=counter(), **({"limits": limits} if limits else {}))
    out: list = []
    for piece in pieces:
        out += s.feed(piece)
    out += s.finish()
    assert "".join(pieces) == text
    return s.result(), out


def check_stream(text: str, fmt: ToolFormat, limits: ToolLimits | None = None) -> None:
    """Split at every position, and one character at a time: the same result, and deltas that add up to it."""
    whole = parse(text, fmt, limits)
    splits = [[text[:i], text[i:]] for i in range(len(text) + 1)] + [list(text)]
    for pieces in splits:
        got, deltas = stream(text, fmt, pieces, limits)
        assert got == whole, pieces
        content = "".join(d.text for d in deltas if isinstance(d, ContentDelta))
        assert (content if content.strip() else None) == whole.content
        reasoning = "".join(d.text for d in deltas if isinstance(d, ReasoningDelta))
        assert (reasoning or None) == whole.reasoning
        rebuilt: dict[int, list[str]] = {}
        for d in deltas:
            if isinstance(d, ToolCallDelta):
                if d.id is not None:
                    assert d.index == len(rebuilt)  # a call's id and name come first, in order
                    rebuilt[d.index] = [d.id, d.name or "", ""]
                rebuilt[d.index][2] += d.arguments
        assert [ToolCall(*v) for v in rebuilt.values()] == list(whole.tool_calls)


@pytest.mark.parametrize(("fmt", "text"), [(f, t) for f, t, *_ in WELL_FORMED])
def test_streamed_at_every_split_gives_the_same_reply_and_no_marker_text(fmt: ToolFormat, text: str) -> None:
    check_stream(text, fmt)
    content = parse(text, fmt).content or ""
    if parse(text, fmt).tool_calls:
        for marker in (*preserved_tokens(fmt), "tool_call", "TOOL_CALLS", "tool▁", "to=functions"):
            assert marker not in content


def test_no_marker_prefix_is_sent_before_it_is_known_to_be_text() -> None:
    s = ToolCallStream(H, ids=counter())
    assert s.feed("Hi <tool_") == [ContentDelta("Hi")]  # the space and the partial marker are held back
    assert s.feed("call>\n{") == []
    assert s.feed('"name": "get_time", "arguments": {}}\n</tool_call>') == [
        ToolCallDelta(0, "call_1", "get_time", ""),
        ToolCallDelta(0, None, None, "{}"),
    ]
    s = ToolCallStream(H, ids=counter())
    assert s.feed("a <tool_") == [ContentDelta("a")]
    assert s.feed("box> is not one") == [ContentDelta(" <tool_box> is not one")]
    assert s.finish() == []
    s = ToolCallStream(H, ids=counter())
    s.feed("ends with <tool_ca")
    assert s.finish() == [ContentDelta(" <tool_ca")]


def test_openai_shapes() -> None:
    first, args = ToolCallDelta(0, "call_1", "get_time", ""), ToolCallDelta(0, None, None, '{"a":1}')
    assert openai_delta(first) == {
        "tool_calls": [
            {"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_time", "arguments": ""}}
        ]
    }
    assert openai_delta(args) == {"tool_calls": [{"index": 0, "function": {"arguments": '{"a":1}'}}]}
    assert openai_delta(ContentDelta("x")) == {"content": "x"}
    assert openai_delta(ReasoningDelta("y")) == {"reasoning_content": "y"}
    assert call("f", {"a": 1}).to_openai() == {
        "id": "call_1",
        "type": "function",
        "function": {"name": "f", "arguments": '{"a":1}'},
    }


def test_generated_ids_are_distinct_and_model_ids_are_checked() -> None:
    got = parse_tool_calls('<tool_call>{"name": "a", "arguments": {}}</tool_call>' * 3, H)
    ids = [c.id for c in got.tool_calls]
    assert len(set(ids)) == 3 and all(i.startswith("call_") for i in ids)
    hostile_id = '[TOOL_CALLS][{"name": "a", "arguments": {}, "id": "x\\"><script>"}]'
    assert parse(hostile_id, M).tool_calls == (call("a", {}),)


def test_arguments_written_as_a_json_string_are_unwrapped_and_other_kinds_refused() -> None:
    text = '<tool_call>{"name": "get_time", "arguments": "{\\"timezone\\": \\"Europe/Paris\\"}"}</tool_call>'
    assert parse(text, H).tool_calls == (call("get_time", TIME),)
    for arguments in ('"not json"', "[1, 2]", "42", '"[1]"'):
        text = f'<tool_call>{{"name": "f", "arguments": {arguments}}}</tool_call>'
        got = parse(text, H)
        assert got.tool_calls == ()
        assert got.content == text  # the model's text, not something invented
        assert len(got.problems) == 1


MALFORMED: list[tuple[ToolFormat, str, str]] = [
    (H, '<tool_call>\n{"name": "f", "arguments": {"a": 1,}}\n</tool_call>', "not valid"),
    (H, '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n', "ended inside"),  # unterminated
    (H, '<tool_call>\n{"name": "f", "arguments": {"a": "unterminated', "ended inside"),
    (H, "<tool_call>plain words</tool_call>", "not valid"),
    (H, '<tool_call>{"arguments": {}}</tool_call>', "no function name"),
    (H, '<tool_call>{"name": "a b;rm -rf", "arguments": {}}</tool_call>', "not a function name"),
    (H, '<tool_call>{"name": "f", "arguments": {}} trailing</tool_call>', "expected </tool_call>"),
    (M, "[TOOL_CALLS][]", "not a JSON object"),
    (M, "[TOOL_CALLS]" + "x" * 600 + "[ARGS]{}", "longer than 512"),
    (DS, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>f\n```json\n{}\n", "ended inside"),
    (DS, "<｜tool▁calls▁begin｜>function<｜tool▁sep｜>f\n{}<｜tool▁call▁end｜>", "expected ```"),
    (GPT, "<|channel|>commentary to=functions.f <|constrain|>json<|message|>{bad}<|call|>", "not valid"),
    (GPT, "<|channel|>nonsense<|message|>hi<|end|>", "expected <|channel|>"),
    (L3, "<|python_tag|>search.call(query=unquoted)", "not valid"),
    (G, '{"tool_calls": [{"arguments": {}}]}', "no function name"),
]


@pytest.mark.parametrize(("fmt", "text", "why"), MALFORMED)
def test_a_malformed_call_is_content_and_reported(fmt: ToolFormat, text: str, why: str) -> None:
    got = parse(text, fmt)
    assert got.tool_calls == ()
    assert got.content == text
    assert len(got.problems) == 1 and why in got.problems[0]
    check_stream(text, fmt)


def test_a_malformed_call_between_good_ones_does_not_take_them_with_it() -> None:
    good = '<tool_call>{"name": "f", "arguments": {"n": 1}}</tool_call>'
    bad = '<tool_call>{"name": "f", "arguments": {"n": oops}}</tool_call>'
    text = f"{good}\n{bad}\n{good}"
    got = parse(text, H)
    assert got.tool_calls == (call("f", {"n": 1}), call("f", {"n": 1}, 2))
    assert got.content == bad
    assert len(got.problems) == 1
    check_stream(text, H)


def test_calls_past_the_limit_stay_content() -> None:
    one = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    got = parse(one * 5, H, ToolLimits(max_calls=3))
    assert len(got.tool_calls) == 3
    assert got.content == one + one
    assert got.problems == ("the reply has more than 3 tool calls",) * 2
    check_stream(one * 5, H, ToolLimits(max_calls=3))
    array = '[TOOL_CALLS][{"name": "f", "arguments": {}}, {"name": "g", "arguments": {}}]'
    got = parse(array, M, ToolLimits(max_calls=1))
    assert got.tool_calls == () and got.content == array  # an array is taken whole or not at all


def test_huge_and_deeply_nested_json_is_bounded() -> None:
    limits = ToolLimits(max_arguments_chars=200, max_depth=8)
    big = '<tool_call>{"name": "f", "arguments": {"a": "' + "x" * 500 + '"}}</tool_call> after'
    got = parse(big, H, limits)
    assert got.tool_calls == () and got.content == big and "longer than 200" in got.problems[0]
    check_stream(big, H, limits)
    deep = '<tool_call>{"name": "f", "arguments": ' + "[" * 50 + "]" * 50 + "}</tool_call>"
    got = parse(deep, H, limits)
    assert got.tool_calls == () and got.content == deep and "nested too deeply" in got.problems[0]
    check_stream(deep, H, limits)
    # Python's own recursion limit is never reached, whatever the limits say
    deeper = '<tool_call>{"name": "f", "arguments": ' + "[" * 100_000 + "]" * 100_000 + "}</tool_call>"
    got = parse(deeper, H, ToolLimits(max_arguments_chars=1 << 20, max_depth=1 << 20))
    assert got.tool_calls == () and got.content == deeper and got.problems


def test_large_arguments_streamed_in_small_pieces() -> None:
    code = "print('hello')\n" * 20_000  # 300 KB of arguments, fed four characters at a time
    text = "<tool_call>" + json.dumps({"name": "python", "arguments": {"code": code}}) + "</tool_call>"
    s = ToolCallStream(H, ids=counter())
    deltas = []
    for i in range(0, len(text), 4):
        deltas += s.feed(text[i : i + 4])
    deltas += s.finish()
    assert s.result().tool_calls == (call("python", {"code": code}),)
    assert not any(isinstance(d, ContentDelta) for d in deltas)


@pytest.mark.parametrize("fmt", list(ToolFormat))
def test_hostile_text_never_raises(fmt: ToolFormat) -> None:
    markers = [*preserved_tokens(fmt), "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>", "{", "}", "[", '"', "\\"]
    hostile = [
        "".join(markers) * 50,
        "".join(reversed(markers)) * 50,
        "<tool_call>" * 2000,
        "[TOOL_CALLS]" * 2000,
        "<｜tool▁calls▁begin｜>" * 500,
        "<|channel|>" * 500 + "<|message|>",
        " " * 5000 + "<tool_call>",
        "\x00\ud800\uffff" * 100,
        '{"tool_calls": ' + "[" * 5000,
    ]
    for text in hostile:
        got = parse(text, fmt)
        assert len(got.tool_calls) <= 64
        rebuilt = (got.content or "") + "".join(c.arguments for c in got.tool_calls)
        assert len(rebuilt) <= 2 * len(text) + 64
    check_stream("".join(markers), fmt)


def test_format_from_the_template_or_the_architecture() -> None:
    assert tool_format("{{ '<tool_call>' }} {{ tools | tojson }}", "llama") is H
    assert tool_format("<|start_header_id|>ipython<|end_header_id|> <|python_tag|>", "llama") is L3
    assert tool_format("{{ '[TOOL_CALLS]' + tool_calls|tojson }}", "llama") is M
    assert tool_format("{{'<｜tool▁calls▁begin｜>'}}", "qwen2") is DS
    assert tool_format("{{ '<|channel|>final<|message|>' }}", "gpt-oss") is GPT
    assert tool_format("{{ '<|im_start|>' + message['content'] }}", "qwen2") is G  # a template without markers
    assert tool_format(None, "qwen3") is H
    assert tool_format("", "gpt-oss") is GPT
    assert tool_format(None, "llama") is G
    # DeepSeek's markers win over a <tool_call> a template also mentions (llama.cpp's order)
    assert tool_format("<｜tool▁calls▁begin｜> <tool_call>", "qwen2") is DS


TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    },
    {"type": "function", "function": {"name": "get_time"}},
]


def test_grammar_schema_for_required_and_a_named_function() -> None:
    required = tool_grammar_schema(TOOLS, "required")
    calls = required["properties"]["tool_calls"]
    assert required["required"] == ["tool_calls"] and calls["minItems"] == 1 and "maxItems" not in calls
    names = [option["properties"]["name"]["const"] for option in calls["items"]["anyOf"]]
    assert names == ["get_weather", "get_time"]
    assert calls["items"]["anyOf"][0]["properties"]["arguments"] == TOOLS[0]["function"]["parameters"]
    assert calls["items"]["anyOf"][1]["properties"]["arguments"] == {"type": "object"}
    assert tool_grammar_schema(TOOLS, "required", parallel=False)["properties"]["tool_calls"]["maxItems"] == 1

    named = tool_grammar_schema(TOOLS, {"type": "function", "function": {"name": "get_weather"}})
    items = named["properties"]["tool_calls"]
    assert items["maxItems"] == 1 and items["items"]["properties"]["name"]["const"] == "get_weather"
    assert tool_grammar_schema(TOOLS, "get_weather") == named
    for bad in ("auto", "none", {"type": "function", "function": {"name": "missing"}}, {"type": "function"}):
        with pytest.raises(ValueError):
            tool_grammar_schema(TOOLS, bad)
    with pytest.raises(ValueError):
        tool_grammar_schema([], "required")


def test_a_reply_that_follows_the_schema_is_read_by_the_generic_format() -> None:
    schema = tool_grammar_schema(TOOLS, "required")
    reply = {
        "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_time", "arguments": {}}]
    }
    # the reply has exactly the shape the schema describes
    assert set(reply) == set(schema["properties"]) == set(schema["required"])
    options = {o["properties"]["name"]["const"]: o for o in schema["properties"]["tool_calls"]["items"]["anyOf"]}
    for item in reply["tool_calls"]:
        assert set(item) == set(options[item["name"]]["required"])
    got = parse(json.dumps(reply), G)
    assert got.tool_calls == (call("get_weather", {"city": "Oslo"}), call("get_time", {}, 2))
    assert got.content is None
