"""Chat templates written to hang or exhaust memory end with a ChatTemplateError, at compile and at render."""

from __future__ import annotations

import tracemalloc
from types import SimpleNamespace

import pytest

from gui.core import protocol as p
from gui.core import template_sandbox
from gui.core.chat_formats import CHATML, MODEL_FORMAT
from gui.core.chat_template import (
    ChatTemplateError,
    ChosenTemplate,
    Limits,
    choose_template,
    render_chat,
    stand_in,
)
from gui.core.protocol import ChatMessage
from gui.services.engine_worker import Engine
from tests.hostile_templates import PAYLOADS, Payload

# Small limits keep each hostile template to milliseconds; the bounds scale with them.
SMALL = Limits(max_output_chars=200_000, max_iterations=20_000, max_seconds=1.0)
USER = ChatMessage("user", "Hi there")


def render(template: str, messages: list[ChatMessage] | None = None, limits: Limits = SMALL) -> str:
    return render_chat(template, messages or [USER], bos_token="<s>", eos_token="</s>", limits=limits)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("payload", [p for p in PAYLOADS if p.guard is not None], ids=lambda p: p.name)
def test_hostile_template_ends_with_the_bound_that_stops_it(payload: Payload):
    assert payload.guard is not None
    with pytest.raises(ChatTemplateError, match=payload.guard) as caught:
        render(payload.text(SMALL.max_output_chars))
    assert "\n" not in str(caught.value)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("payload", [p for p in PAYLOADS if p.guard is None], ids=lambda p: p.name)
def test_filters_that_cannot_grow_their_input_still_render(payload: Payload):
    # truncate only ever shortens, whatever length it is given.
    assert len(render(payload.text(SMALL.max_output_chars))) <= SMALL.max_output_chars


def test_the_deadline_holds_without_any_output():
    unbounded_steps = Limits(max_iterations=10**12, max_seconds=0.2)
    for quiet in (
        "{%- for i in range(99999) -%}{%- for j in range(99999) -%}{%- set x = j -%}{%- endfor -%}{%- endfor -%}",
        "{%- for c in 'a' * 9000000 -%}{%- for d in 'a' * 9000000 -%}{%- endfor -%}{%- endfor -%}",
    ):
        with pytest.raises(ChatTemplateError, match=r"ran longer than 0.2 s"):
            render(quiet, limits=unbounded_steps)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("payload", [p for p in PAYLOADS if p.at_compile], ids=lambda p: p.name)
def test_compiling_evaluates_no_hostile_constant(payload: Payload):
    # With the default limits a folded '%999999999d' % 1 would allocate a gigabyte while compiling.
    text = payload.text(template_sandbox.DEFAULT_LIMITS.max_output_chars)
    tracemalloc.start()
    try:
        chosen = choose_template(text)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20
    if chosen.is_fallback:  # too long or too deeply nested to compile at all
        assert payload.guard is not None and payload.guard in chosen.reason
    else:
        with pytest.raises(ChatTemplateError, match=payload.guard):
            render(text, limits=template_sandbox.DEFAULT_LIMITS)


def test_compiling_runs_none_of_the_template(monkeypatch: pytest.MonkeyPatch):
    assert template_sandbox._ENV.optimized is False
    seen: list[str] = []

    def spy(value: str) -> str:
        seen.append(value)
        return value

    monkeypatch.setitem(template_sandbox._ENV.filters, "spy", template_sandbox._guarded_filter("spy", spy))
    template_sandbox.compile_template("{{ 'constant'|spy }}", SMALL)
    assert seen == []  # Jinja would have evaluated a filter on a constant while compiling
    assert render("{{ 'constant'|spy }}") == "constant" and seen == ["constant"]


def test_memory_and_recursion_errors_become_template_errors(monkeypatch: pytest.MonkeyPatch):
    with pytest.raises(ChatTemplateError, match="recursed too deeply"):
        render("{%- macro m() -%}{{ m() }}{%- endmacro -%}{{ m() }}")

    def exhausted(*_: object) -> None:
        raise MemoryError

    monkeypatch.setitem(template_sandbox._ENV.globals, "exhausted", exhausted)
    with pytest.raises(ChatTemplateError, match="ran out of memory"):
        render("{{ exhausted() }}")
    monkeypatch.setattr(template_sandbox._ChatSandbox, "_parse", exhausted)
    chosen = choose_template("{{ 'compiled under a parser that runs out of memory' }}")
    assert chosen.is_fallback and "ran out of memory" in chosen.reason


def test_the_engine_formats_as_the_stand_in_when_the_template_exceeds_its_budget():
    sent: list[object] = []
    hostile = PAYLOADS[[p.name for p in PAYLOADS].index("center")].text(10_000_000)
    chatml = stand_in("The model's chat template failed", None)
    engine = SimpleNamespace(fallback=chatml, bos_text="<s>", eos_text="</s>", send=sent.append)
    own = ChosenTemplate(hostile, MODEL_FORMAT)
    prompt, used = Engine.apply_template(engine, 7, (USER,), own)  # type: ignore[arg-type]
    assert prompt == render(CHATML.template) and used is chatml
    (notice,) = sent
    assert isinstance(notice, p.Notice) and notice.request_id == 7
    assert "longer than the limit" in notice.text and "formatted as ChatML" in notice.text


def test_long_conversations_stay_well_inside_the_default_budget():
    # Patterns real templates use, over a thousand turns: a namespace scan, a list grown one item
    # at a time, slices, string methods and tojson.
    template = """{%- set ns = namespace(last_user=-1, seen=[]) -%}
{%- for m in messages -%}
  {%- if m.role == 'user' -%}{%- set ns.last_user = loop.index0 -%}{%- endif -%}
  {%- set ns.seen = ns.seen + [m.role] -%}
{%- endfor -%}
{%- for m in messages[1:] -%}
  {{- '<|' ~ m.role ~ '|>' ~ m.content.split('</think>')[-1].strip() ~ {'n': loop.index}|tojson -}}
{%- endfor -%}
{{- ns.seen|length }} {{ ns.last_user -}}"""
    turns = [ChatMessage("user" if i % 2 else "assistant", f"turn {i} " + "words " * 200) for i in range(1000)]
    out = render_chat(template, turns, bos_token="<s>", eos_token="</s>")
    assert out.endswith("1000 999")


def test_the_budget_is_needed_to_render():
    template = template_sandbox.compile_template("{% for x in [1] %}{{ x }}{% endfor %}", SMALL)
    with pytest.raises(RuntimeError, match="spending"):
        template.render()
