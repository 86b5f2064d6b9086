"""The model's own Jinja chat template, rendered the way transformers and llama.cpp's Jinja path do."""

from __future__ import annotations

import threading

import pytest

from gui.core.chat_formats import CHATML, MODEL_FORMAT
from gui.core.chat_template import (
    ChatTemplateError,
    Limits,
    choose_template,
    render_chat,
)
from gui.core.gguf_reader import read_header
from gui.core.protocol import ChatMessage

SYSTEM = ChatMessage("system", "Be brief.")
USER = ChatMessage("user", "Hi there")
ASSISTANT = ChatMessage("assistant", "Hello!")
USER2 = ChatMessage("user", "What is 2+2?")

# Written for these tests in the conventions of each model family (not copied from any model).
LLAMA3_STYLE = """{{- bos_token }}
{%- for message in messages %}
    {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' }}
    {{- message['content'] | trim + '<|eot_id|>' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}
{%- endif %}
"""

GEMMA_STYLE = """{{ bos_token }}{% if messages[0]['role'] == 'system' %}
    {% set prefix = messages[0]['content'] | trim + '\n\n' %}
    {% set turns = messages[1:] %}
{% else %}
    {% set prefix = '' %}
    {% set turns = messages %}
{% endif %}
{% for message in turns %}
    {% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {% endif %}
    {% set role = 'model' if message['role'] == 'assistant' else message['role'] %}
{{ '<start_of_turn>' + role + '\n' + (prefix if loop.first else '') + message['content'] | trim }}<end_of_turn>
{% endfor %}
{% if add_generation_prompt %}
<start_of_turn>model
{% endif %}
"""

QWEN_STYLE = """{%- if tools %}
    {{- '<|im_start|>system\\nYou may call these tools:\\n' }}
    {%- for tool in tools %}{{- tool | tojson }}{%- endfor %}
    {{- '<|im_end|>\\n' }}
{%- elif messages[0].role == 'system' %}
    {{- '<|im_start|>system\\n' + messages[0].content + '<|im_end|>\\n' }}
{%- else %}
    {{- '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}
{%- endif %}
{%- set ns = namespace(last_user=-1) %}
{%- for m in messages %}
    {%- if m.role == 'user' %}{%- set ns.last_user = loop.index0 %}{%- endif %}
{%- endfor %}
{%- for m in messages %}
    {%- if m.role == 'system' %}{%- continue %}{%- endif %}
    {%- set content = m.content %}
    {%- if m.role == 'assistant' and '</think>' in content and loop.index0 < ns.last_user %}
        {%- set content = content.split('</think>')[-1].lstrip('\\n') %}
    {%- endif %}
    {{- '<|im_start|>' + m.role + '\\n' + content + '<|im_end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""


def render(template: str, messages: list[ChatMessage], **kwargs: object) -> str:
    options: dict[str, object] = {"bos_token": "<s>", "eos_token": "</s>", **kwargs}
    return render_chat(template, messages, **options)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def smollm_template(demo_model) -> str:
    template = read_header(demo_model).metadata["tokenizer.chat_template"]
    assert isinstance(template, str)
    return template


def test_smollm2_template_from_the_gguf(smollm_template: str):
    # SmolLM2 adds its own system prompt when the conversation has none.
    assert render(smollm_template, [USER]) == (
        "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nHi there<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert render(smollm_template, [SYSTEM, USER, ASSISTANT, USER2], add_generation_prompt=False) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nHi there<|im_end|>\n"
        "<|im_start|>assistant\nHello!<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
    )
    chosen = choose_template(smollm_template)
    assert chosen.format == MODEL_FORMAT and not chosen.reason
    assert chosen.stops == ("<|im_end|>",)  # a ChatML family template: its turns end there


def test_llama3_style_uses_bos_and_whitespace_control():
    out = render(LLAMA3_STYLE, [SYSTEM, USER], bos_token="<|begin_of_text|>")
    assert out == (
        "<|begin_of_text|>"
        "<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
        "<|start_header_id|>user<|end_header_id|>\n\nHi there<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n"
    )


def test_gemma_style_folds_the_system_prompt_into_the_first_user_turn():
    # trim_blocks + lstrip_blocks: the indented block tags on their own lines leave nothing behind.
    out = render(GEMMA_STYLE, [SYSTEM, USER, ASSISTANT, USER2], bos_token="<bos>")
    assert out == (
        "<bos>"
        "<start_of_turn>user\nBe brief.\n\nHi there<end_of_turn>\n"
        "<start_of_turn>model\nHello!<end_of_turn>\n"
        "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n"
        "<start_of_turn>model\n"
    )


def test_gemma_style_raises_on_bad_role_order_with_the_templates_message():
    with pytest.raises(ChatTemplateError) as caught:
        render(GEMMA_STYLE, [USER, USER2])
    assert str(caught.value) == (
        "the model's chat template failed: Conversation roles must alternate user/assistant/user/assistant/..."
    )
    assert caught.value.reason.startswith("Conversation roles must alternate")


def test_qwen_style_namespace_continue_attribute_access_and_tools_default():
    thought = ChatMessage("assistant", "<think>\nadd them\n</think>\n\n4")
    out = render(QWEN_STYLE, [USER2, thought, ChatMessage("user", "And 3+3?")])
    assert out == (
        "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
        "<|im_start|>assistant\n4<|im_end|>\n"
        "<|im_start|>user\nAnd 3+3?<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    assert render(QWEN_STYLE, [SYSTEM, USER]).startswith("<|im_start|>system\nBe brief.<|im_end|>\n")


def test_tojson_is_plain_json_and_strftime_now_works():
    out = render("{{ {'q': '<a & b>', 'n': 'é'} | tojson }} {{ strftime_now('%Y') | length }}", [])
    assert out == '{"q": "<a & b>", "n": "é"} 4'


def test_generation_tag_renders_its_body():
    template = "{% for m in messages %}{% generation %}[{{ m.content }}]{% endgeneration %}{% endfor %}"
    assert render(template, [USER, ASSISTANT]) == "[Hi there][Hello!]"


def test_chatml_fallback():
    chosen = choose_template(None)
    assert chosen.is_fallback and chosen.text == CHATML.template and chosen.format == "chatml"
    assert chosen.reason.startswith("No chat template in this file: formatting as ChatML")
    assert choose_template("   ").is_fallback
    assert render(CHATML.template, [SYSTEM, USER]) == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n"
    )


def test_syntax_error_is_one_line_and_choose_template_falls_back():
    broken = "{% for m in messages %}{{ m.content }"
    with pytest.raises(ChatTemplateError) as caught:
        render(broken, [USER])
    message = str(caught.value)
    assert message.startswith("the model's chat template failed: syntax error on line 1")
    assert "\n" not in message
    chosen = choose_template(broken)
    assert chosen.is_fallback and "syntax error" in chosen.reason and chosen.text == CHATML.template


def test_multi_line_raise_message_becomes_one_line():
    with pytest.raises(ChatTemplateError) as caught:
        render("{{ raise_exception('first\\n  second') }}", [])
    assert str(caught.value) == "the model's chat template failed: first second"


def test_runaway_loops_are_stopped():
    spin = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    with pytest.raises(ChatTemplateError, match="more than 1,000,000 steps"):
        render(spin, [])


def test_huge_output_is_bounded():
    flood = "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}"
    with pytest.raises(ChatTemplateError, match="output passed the limit"):
        render(flood, [])
    with pytest.raises(ChatTemplateError, match="longer than the limit of 10,000,000 characters"):
        render("{{ 'x' * 100000000000 }}", [])
    with pytest.raises(ChatTemplateError, match="padded string"):
        render("{{ 'x'.ljust(10 ** 12) }}", [])
    # The same limits with a small budget, to show they are parameters.
    with pytest.raises(ChatTemplateError, match="10 characters"):
        render("{{ 'hello world' }}", [], limits=Limits(max_output_chars=10))


def test_time_limit():
    slow = "{% for i in range(90000) %}{{ i }}{% endfor %}"
    with pytest.raises(ChatTemplateError, match="ran longer than"):
        render(slow, [], limits=Limits(max_seconds=0.0))


def test_sandbox_blocks_dunder_internals_and_mutation():
    with pytest.raises(ChatTemplateError, match="sandbox forbids"):
        render("{{ messages.__class__.__mro__ }}", [USER])
    with pytest.raises(ChatTemplateError, match="sandbox forbids"):
        render("{{ raise_exception.__globals__['os'] }}", [])
    with pytest.raises(ChatTemplateError, match="sandbox forbids"):
        render("{{ messages.append({'role': 'user', 'content': 'x'}) }}", [USER])
    # An unsafe attribute on its own renders as nothing rather than leaking the Python object.
    assert render("[{{ ''.__class__ }}]", []) == "[]"


def test_other_python_errors_are_wrapped():
    with pytest.raises(ChatTemplateError, match=r"the model's chat template failed: .*"):
        render("{{ messages[0]['content'] + 1 }}", [USER])


def test_renders_concurrently_with_separate_budgets():
    # A budget per rendering: a runaway template in one thread must not fail a good one in another.
    results: dict[str, object] = {}

    def good() -> None:
        results["good"] = render(CHATML.template, [USER] * 50)

    def bad() -> None:
        try:
            render("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", [])
        except ChatTemplateError as e:
            results["bad"] = e

    threads = [threading.Thread(target=f) for f in (bad, good, bad, good)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert isinstance(results["bad"], ChatTemplateError)
    assert str(results["good"]).count("<|im_start|>user") == 50
