"""Conversations with tools rendered by real chat templates (tests/data/chat_templates, sources in its README):
the ``tools`` list, an assistant's ``tool_calls`` with no content and ``tool`` answers, each shaped as the
template takes them, and what each renders read back by the family's tool-call parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gui.core.chat_template import ChatTemplateError, Turn, render_chat
from gui.core.protocol import ChatMessage
from gui.core.tool_calls import ToolCall, ToolFormat, parse_tool_calls, tool_format

TEMPLATES = Path(__file__).parent / "data" / "chat_templates"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]
CALL = ToolCall("call_7", "get_weather", '{"city":"Paris"}')
CONVERSATION = [
    ChatMessage("user", "Weather in Paris?"),
    Turn("assistant", None, (CALL,)),
    Turn("tool", '{"temperature_c": 21}', tool_call_id="call_7", name="get_weather"),
]


def template(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


def render(name: str, messages: list, **kw: object) -> str:
    return render_chat(template(name), messages, bos_token="<s>", eos_token="</s>", tools=TOOLS, **kw)  # type: ignore[arg-type]


def test_qwen3_lists_the_tools_and_writes_the_call_as_it_would_itself() -> None:
    out = render("Qwen-Qwen3-0.6B.jinja", CONVERSATION)
    assert "<tools>\n" + json.dumps(TOOLS[0], ensure_ascii=False) + "\n</tools>" in out
    # arguments as written once (not quoted again), a call turn without text, the tool's answer as a user turn
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris"}}\n</tool_call>'
        in out
    )
    assert '<|im_start|>user\n<tool_response>\n{"temperature_c": 21}\n</tool_response><|im_end|>' in out
    assert out.endswith("<|im_start|>assistant\n")
    assert tool_format(template("Qwen-Qwen3-0.6B.jinja"), "qwen3") is ToolFormat.HERMES
    # the call as the template wrote it is read back as the same call
    written = out.split("<|im_start|>assistant\n", 1)[1].split("<|im_end|>")[0]
    assert parse_tool_calls(written, ToolFormat.HERMES, ids=lambda: "call_7").tool_calls == (CALL,)


def test_qwen3_thinking_switch_comes_through_extra_context() -> None:
    out = render("Qwen-Qwen3-0.6B.jinja", [ChatMessage("user", "Hi")], extra_context={"enable_thinking": False})
    assert out.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    # the fixed variables are not overridden
    out = render("Qwen-Qwen3-0.6B.jinja", [ChatMessage("user", "Hi")], extra_context={"add_generation_prompt": False})
    assert out.endswith("<|im_start|>assistant\n")


def test_llama_3_2_takes_the_arguments_as_an_object() -> None:
    out = render("meta-llama-Llama-3.2-3B-Instruct.jinja", CONVERSATION, extra_context={"date_string": "01 Jan 2025"})
    assert "Today Date: 01 Jan 2025" in out
    assert '"name": "get_weather"' in out  # the tool, in the first user turn (the template's default)
    call = '{"name": "get_weather", "parameters": {"city": "Paris"}}'
    assert f"<|start_header_id|>assistant<|end_header_id|>\n\n{call}<|eot_id|>" in out
    # a string is iterable to Jinja, so this template writes the tool's answer with tojson (as transformers does)
    assert '<|start_header_id|>ipython<|end_header_id|>\n\n"{\\"temperature_c\\": 21}"<|eot_id|>' in out
    assert tool_format(template("meta-llama-Llama-3.2-3B-Instruct.jinja"), "llama") is ToolFormat.LLAMA3
    written = out.split("<|start_header_id|>assistant<|end_header_id|>\n\n", 1)[1].split("<|eot_id|>")[0]
    assert parse_tool_calls(written, ToolFormat.LLAMA3, ids=lambda: "call_7").tool_calls == (CALL,)
    # the template's own rule, one call per turn, is its message
    two = [ChatMessage("user", "Both?"), Turn("assistant", "", (CALL, CALL))]
    with pytest.raises(ChatTemplateError, match="only supports single tool-calls"):
        render("meta-llama-Llama-3.2-3B-Instruct.jinja", two)


def test_deepseek_r1_joins_the_arguments_as_text_and_tells_a_call_turn_by_its_missing_content() -> None:
    out = render("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", CONVERSATION)
    block = (
        "<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n"
        '```json\n{"city":"Paris"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜><｜end▁of▁sentence｜>'
    )
    assert block in out
    assert '<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{"temperature_c": 21}<｜tool▁output▁end｜>' in out
    assert "<｜Assistant｜><｜end▁of▁sentence｜>" not in out  # content none: no empty text turn
    assert tool_format(template("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja"), "qwen2") is ToolFormat.DEEPSEEK
    written = block.removeprefix("<｜Assistant｜>").removesuffix("<｜end▁of▁sentence｜>")
    assert parse_tool_calls(written, ToolFormat.DEEPSEEK, ids=lambda: "call_7").tool_calls == (CALL,)


def test_plain_conversations_render_as_before() -> None:
    messages = [ChatMessage("system", "Be brief."), ChatMessage("user", "Hi")]
    for name in ("Qwen-Qwen3-0.6B.jinja", "meta-llama-Llama-3.2-3B-Instruct.jinja"):
        with_tools_none = render_chat(template(name), messages, bos_token="<s>", eos_token="</s>")
        assert "get_weather" not in with_tools_none
    out = render_chat(template("Qwen-Qwen3-0.6B.jinja"), messages, bos_token="", eos_token="")
    assert out == "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"


def test_arguments_that_are_not_json_reach_an_object_template_as_the_text() -> None:
    bad = Turn("assistant", None, (ToolCall("c", "get_weather", "{not json"),))
    out = render("meta-llama-Llama-3.2-3B-Instruct.jinja", [ChatMessage("user", "Hi"), bad])
    assert '"parameters": "{not json"}' in out
