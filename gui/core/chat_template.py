"""Formatting a conversation with the model's own Jinja chat template.

GGUF files carry the Hugging Face chat template (``tokenizer.chat_template``). llama.cpp's built-in
formatter only recognises a fixed list of templates by heuristics; rendering the Jinja text itself, the
way transformers and llama.cpp's ``--jinja`` path do, formats any model as its authors intended.

The template is untrusted input from a downloaded file, so it compiles and renders in a sandbox
(gui/core/template_sandbox.py) that bounds every loop step, every value it makes, the memory all of
them add up to and the time it runs: a hostile or broken template fails with a ChatTemplateError
instead of hanging or exhausting memory, and the caller falls back to ChatML.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import jinja2

from gui.core.protocol import ChatMessage
from gui.core.template_sandbox import (
    DEFAULT_LIMITS,
    BudgetExceeded,
    Limits,
    RaisedByTemplate,
    compile_template,
    spending,
)

__all__ = [
    "CHATML_TEMPLATE",
    "FALLBACK_NOTE",
    "ChatTemplateError",
    "ChosenTemplate",
    "Limits",
    "choose_template",
    "render_chat",
]

# Our own ChatML: the format most instruction-tuned models without a template were trained on.
CHATML_TEMPLATE = (
    "{% for m in messages %}"
    "{{ '<|im_start|>' ~ m['role'] ~ '\\n' ~ m['content'] ~ '<|im_end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

FALLBACK_NOTE = (
    "This model has no chat template, so Tightfit formats the conversation as ChatML. "
    "A model trained on another format may answer poorly or not stop."
)


class ChatTemplateError(Exception):
    """The chat template could not format the conversation. ``str()`` is one line for the user."""

    def __init__(self, reason: str) -> None:
        self.reason = " ".join(reason.split()) or "unknown error"
        super().__init__(f"the model's chat template failed: {self.reason}")


@dataclass(frozen=True)
class ChosenTemplate:
    text: str  # the Jinja source to render
    source: str  # "model" or "fallback"
    note: str  # empty for the model's own template; otherwise why the fallback is used, for the UI

    @property
    def is_fallback(self) -> bool:
        return self.source != "model"


def choose_template(header_template: str | None) -> ChosenTemplate:
    """The model's template when it has a usable one, else ChatML with a note saying why.

    Only parse errors fall back: a template that parses but refuses a conversation at render time
    (e.g. roles out of order) is reporting something the user should see, not something to paper over.
    """
    if not isinstance(header_template, str) or not header_template.strip():
        return ChosenTemplate(CHATML_TEMPLATE, "fallback", FALLBACK_NOTE)
    try:
        _compile(header_template)
    except ChatTemplateError as e:
        note = (
            f"The model's chat template cannot be used ({e.reason}), so Tightfit formats the "
            "conversation as ChatML. Replies may be worse than with the model's own format."
        )
        return ChosenTemplate(CHATML_TEMPLATE, "fallback", note)
    return ChosenTemplate(header_template, "model", "")


def render_chat(
    template: str,
    messages: Sequence[ChatMessage],
    *,
    bos_token: str,
    eos_token: str,
    add_generation_prompt: bool = True,
    limits: Limits = DEFAULT_LIMITS,
) -> str:
    """Render ``messages`` with a Hugging Face style chat template; raise ChatTemplateError on any failure."""
    compiled = _compile(template, limits)
    context = {
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "add_generation_prompt": add_generation_prompt,
        "bos_token": bos_token,
        "eos_token": eos_token,
        # transformers always passes these; templates test them with `is defined`/`is not none`.
        "tools": None,
        "documents": None,
    }
    try:
        with spending(limits) as budget:
            out: list[str] = []
            size = 0
            for chunk in compiled.generate(context):
                size += len(chunk)
                if size > limits.max_output_chars:
                    raise BudgetExceeded(f"its output passed the limit of {limits.max_output_chars:,} characters")
                budget.check_time()
                out.append(chunk)
            return "".join(out)
    except Exception as e:
        raise _template_error(e) from None


def _template_error(e: BaseException) -> ChatTemplateError:
    """The one-line reason for anything a template's compile or render raised."""
    if isinstance(e, ChatTemplateError):
        return e
    if isinstance(e, BudgetExceeded):
        return ChatTemplateError(str(e))
    if isinstance(e, RaisedByTemplate):
        return ChatTemplateError(str(e.message or "the template raised an error"))
    if isinstance(e, jinja2.TemplateSyntaxError):
        return ChatTemplateError(f"syntax error on line {e.lineno}: {e.message}")
    if isinstance(e, jinja2.exceptions.SecurityError):
        return ChatTemplateError(f"it tried something the sandbox forbids: {e}")
    if isinstance(e, jinja2.TemplateError):
        return ChatTemplateError(str(e))
    if isinstance(e, RecursionError):
        return ChatTemplateError("it recursed too deeply")
    if isinstance(e, SyntaxError):  # Python refuses code nested deeper than it allows
        return ChatTemplateError("it is nested too deeply to compile")
    if isinstance(e, MemoryError):
        return ChatTemplateError("it ran out of memory")
    # A template can raise anything Python can (TypeError on bad operands, OverflowError...).
    return ChatTemplateError(f"{type(e).__name__}: {e}")


@lru_cache(maxsize=8)
def _compile(template: str, limits: Limits = DEFAULT_LIMITS) -> jinja2.Template:
    """Compile once per distinct template: a conversation renders the same one on every turn."""
    try:
        return compile_template(template, limits)
    except Exception as e:
        raise _template_error(e) from None
