"""Formatting a conversation: with the model's own Jinja chat template, or with a named format when its
file has none that can be used.

GGUF files carry the Hugging Face chat template (``tokenizer.chat_template``). llama.cpp's built-in
formatter only recognises a fixed list of templates by heuristics; rendering the Jinja text itself, the
way transformers and llama.cpp's ``--jinja`` path do, formats any model as its authors intended.

The template is untrusted input from a downloaded file, so it compiles and renders in a sandbox
(gui/core/template_sandbox.py) that bounds every loop step, every value it makes, the memory all of
them add up to and the time it runs: a hostile or broken template fails with a ChatTemplateError
instead of hanging or exhausting memory.

Without a usable template, :func:`choose_template` follows llama.cpp's own choice (``common_chat_templates_init``
in its common/chat.cpp): the built-in format ``llama_model_chat_template`` names for a file without a
template (it does for Mistral Small 3.1, whose files ship without one), else the file's tool-use template.
Where llama.cpp would then take ChatML whatever the model, the vocabulary is asked first: a model trained
on Gemma's or Llama 3's turns has their markers as special tokens (gui/core/chat_formats.py). ChatML is the
last resort.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2

from gui.core.chat_formats import (
    CHATML,
    FORMATS,
    MODEL_FORMAT,
    ChatFormat,
    detect_format,
    format_label,
    parse_format_name,
)
from gui.core.protocol import ChatMessage
from gui.core.template_sandbox import (
    DEFAULT_LIMITS,
    BudgetExceeded,
    Limits,
    RaisedByTemplate,
    compile_template,
    spending,
)
from gui.core.tool_calls import ToolCall
from gui.core.words import Text, Words, english, english_error, message_of, words

__all__ = [
    "ChatTemplateError",
    "ChosenTemplate",
    "Limits",
    "Turn",
    "choose_template",
    "render_chat",
    "stand_in",
    "template_for",
]


class ChatTemplateError(Exception):
    """The chat template could not format the conversation. ``str()`` is one line for the user; the message
    is a sentence composed with gui/core/words.py (the reason too, unless it is the template's own text)."""

    def __init__(self, reason: Text) -> None:
        one_line = " ".join(english(reason).split())
        self.reason: Text = reason if isinstance(reason, Words) and one_line == reason else one_line
        self.reason = self.reason or words("unknown error")
        super().__init__(words("the model's chat template failed: {reason}", reason=self.reason))


@dataclass(frozen=True)
class ChosenTemplate:
    text: str  # the Jinja source to render
    format: str  # MODEL_FORMAT for a template from the file, else the name of a format in FORMATS
    reason: Text = ""  # why this one, for the user; empty when the file's own template is used as it is
    stops: tuple[str, ...] = ()  # text that ends a reply in this format, however the model writes it

    @property
    def is_fallback(self) -> bool:
        return self.format != MODEL_FORMAT

    @property
    def label(self) -> Text:
        return format_label(self.format)


def choose_template(
    header_template: str | None,
    *,
    tool_use: str | None = None,
    vocab_format: ChatFormat | None = None,
    builtin_names: Collection[str] = (),
) -> ChosenTemplate:
    """How to format a model's conversations, and why, from what llama.cpp reports about it.

    ``header_template``: ``llama_model_chat_template(model, NULL)``, the file's template or the name of the
    built-in format llama.cpp picks for it; ``tool_use``: the file's named ``tool_use`` template;
    ``vocab_format``: the format whose turn markers the vocabulary has (``gui.core.chat_formats.format_from_vocab``);
    ``builtin_names``: ``llama_chat_builtin_templates``, to tell a name from a template.

    Only parse errors make a template unusable here: one that parses but refuses a conversation at render
    time (e.g. roles out of order) is reporting something the user should see for that reply.
    """
    text = header_template if isinstance(header_template, str) and header_template.strip() else None
    if text is None:
        if isinstance(tool_use, str) and tool_use.strip() and _compiles(tool_use) is None:
            why = words(
                "This file has no general chat template: formatting with its tool-use template, as llama.cpp does."
            )
            return _own(tool_use, why)
        return stand_in(words("No chat template in this file"), vocab_format)
    name = text.strip()
    if name in FORMATS:
        chat_format = FORMATS[name]
        why = words(
            "This file has no chat template of its own: formatting as {format}, the format llama.cpp picks for "
            "this model.",
            format=chat_format.label,
        )
        return _from_format(chat_format, why)
    if name in builtin_names:
        why = words(
            "This file names llama.cpp's built-in chat format '{name}', which Tightfit does not have", name=name
        )
        return stand_in(why, vocab_format)
    error = _compiles(text)
    if error is not None:
        return stand_in(words("The model's chat template cannot be used ({reason})", reason=error.reason), vocab_format)
    return _own(text, "")


def stand_in(why: Text, vocab_format: ChatFormat | None) -> ChosenTemplate:
    """The named format that stands in for a missing or unusable template, and the reason: ``why``, then
    the format and what it was chosen by (the vocabulary's turn markers, or nothing better than ChatML)."""
    if vocab_format is not None:
        label = vocab_format.label
        return _from_format(
            vocab_format,
            words("{why}: formatting as {format} (the vocabulary has {format}'s turn markers).", why=why, format=label),
        )
    reason = words(
        "{why}: formatting as ChatML, the most common format (the vocabulary has none of the turn markers "
        "Tightfit knows). A model trained on another format may answer poorly or not stop: pick its format "
        "under Chat format.",
        why=why,
    )
    return _from_format(CHATML, reason)


def template_for(name: str) -> ChosenTemplate:
    """The format the user picked by name; ValueError for a name Tightfit does not know."""
    return _from_format(FORMATS[parse_format_name(name)], "")


def _from_format(chat_format: ChatFormat, reason: Text) -> ChosenTemplate:
    return ChosenTemplate(chat_format.template, chat_format.name, reason, (chat_format.end_of_turn,))


def _own(template: str, reason: Text) -> ChosenTemplate:
    """A template from the file, stopping where the family it belongs to ends a turn (if it is one we know)."""
    family = detect_format(template)
    return ChosenTemplate(template, MODEL_FORMAT, reason, (family.end_of_turn,) if family is not None else ())


def _compiles(template: str) -> ChatTemplateError | None:
    """None when the template compiles, else why not."""
    try:
        _compile(template)
    except ChatTemplateError as e:
        return e
    return None


@dataclass(frozen=True)
class Turn:
    """A message of a conversation with tools: an assistant's ``tool_calls`` (its content None or empty), or
    a ``tool`` message answering the call ``tool_call_id``. :func:`render_chat` reads these fields from any
    message that has them, a ChatMessage included."""

    role: str
    content: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None  # the function a tool message answers


def render_chat(
    template: str,
    messages: Sequence[ChatMessage | Turn],
    *,
    bos_token: str,
    eos_token: str,
    add_generation_prompt: bool = True,
    tools: Sequence[Mapping[str, Any]] | None = None,
    extra_context: Mapping[str, Any] | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> str:
    """Render ``messages`` with a Hugging Face style chat template; raise ChatTemplateError on any failure.

    ``tools`` is the OpenAI function list, passed to the template as ``tools``; ``extra_context`` adds
    variables (a request's ``chat_template_kwargs``: ``enable_thinking``...), never over the ones set here.
    A call's arguments reach the template as the object (templates that ``tojson`` them) or as the JSON text
    (templates that join it to strings), and a tool-call turn's missing content as none or "", whichever the
    template takes: found once per template by rendering a probe conversation, as llama.cpp (minja) does."""
    compiled = _compile(template, limits)
    shape = _tool_shape(template, limits) if any(_tool_calls(m) for m in messages) else _SHAPE_PLAIN
    context = {
        **(extra_context or {}),
        "messages": [_message(m, shape) for m in messages],
        "add_generation_prompt": add_generation_prompt,
        "bos_token": bos_token,
        "eos_token": eos_token,
        # transformers always passes these; templates test them with `is defined`/`is not none`.
        "tools": [dict(t) for t in tools] if tools else None,
        "documents": None,
    }
    return _render(compiled, context, limits)


def _render(compiled: jinja2.Template, context: Mapping[str, Any], limits: Limits) -> str:
    try:
        with spending(limits) as budget:
            out: list[str] = []
            size = 0
            for chunk in compiled.generate(context):
                size += len(chunk)
                if size > limits.max_output_chars:
                    raise BudgetExceeded(
                        words("its output passed the limit of {n} characters", n=f"{limits.max_output_chars:,}")
                    )
                budget.check_time()
                out.append(chunk)
            return "".join(out)
    except Exception as e:
        raise _template_error(e) from None


@dataclass(frozen=True)
class _Shape:
    object_arguments: bool  # a call's arguments as the object, else as its JSON text
    null_content: bool  # a tool-call turn without text has content none, else ""


_SHAPE_PLAIN = _Shape(False, True)


def _tool_calls(m: ChatMessage | Turn) -> tuple[ToolCall, ...]:
    return tuple(getattr(m, "tool_calls", ()) or ())


def _message(m: ChatMessage | Turn, shape: _Shape) -> dict[str, Any]:
    """The message as transformers passes it: only the keys it has (templates test ``'tool_calls' in message``)."""
    calls = _tool_calls(m)
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if calls:
        if not m.content:
            out["content"] = None if shape.null_content else ""
        out["tool_calls"] = [_call(c, shape) for c in calls]
    elif out["content"] is None:
        out["content"] = ""
    for key in ("tool_call_id", "name"):
        value = getattr(m, key, None)
        if value:
            out[key] = value
    return out


def _call(c: ToolCall, shape: _Shape) -> dict[str, Any]:
    arguments: Any = c.arguments
    if shape.object_arguments:
        with suppress(ValueError):  # not JSON: the template gets the text the client sent
            arguments = json.loads(c.arguments)
    return {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments}}


_NEEDLE = '"argument_needle"'


@lru_cache(maxsize=8)
def _tool_shape(template: str, limits: Limits) -> _Shape:
    """How ``template`` wants tool calls, from rendering a probe conversation with each shape (minja's
    ``chat_template_caps``): content none unless that fails; arguments as the object when only the object
    shows up in the output as JSON (the text would be quoted again by ``tojson``)."""
    compiled = _compile(template, limits)
    probe = ToolCall("call_1", "ipython", json.dumps({"argument_needle": "print('Hello, World!')"}))

    def render(shape: _Shape) -> str | None:
        conversation = [Turn("user", "Hey"), Turn("assistant", None, (probe,))]
        context = {
            "messages": [_message(m, shape) for m in conversation],
            "add_generation_prompt": False,
            "bos_token": "",
            "eos_token": "",
            "tools": None,
            "documents": None,
        }
        try:
            return _render(compiled, context, limits)
        except ChatTemplateError:
            return None

    null_content = any(render(_Shape(obj, True)) is not None for obj in (False, True))
    as_text = render(_Shape(False, null_content)) or ""
    as_object = render(_Shape(True, null_content)) or ""
    return _Shape(_NEEDLE in as_object and _NEEDLE not in as_text, null_content)


def _template_error(e: BaseException) -> ChatTemplateError:
    """The one-line reason for anything a template's compile or render raised."""
    if isinstance(e, ChatTemplateError):
        return e
    if isinstance(e, BudgetExceeded):
        return ChatTemplateError(message_of(e))
    if isinstance(e, RaisedByTemplate):  # the template's own words
        return ChatTemplateError(str(e.message) if e.message else words("the template raised an error"))
    if isinstance(e, jinja2.TemplateSyntaxError):
        return ChatTemplateError(words("syntax error on line {line}: {message}", line=e.lineno, message=str(e.message)))
    if isinstance(e, jinja2.exceptions.SecurityError):
        return ChatTemplateError(words("it tried something the sandbox forbids: {what}", what=message_of(e)))
    if isinstance(e, jinja2.TemplateError):
        return ChatTemplateError(message_of(e))
    if isinstance(e, RecursionError):
        return ChatTemplateError(words("it recursed too deeply"))
    if isinstance(e, SyntaxError):  # Python refuses code nested deeper than it allows
        return ChatTemplateError(words("it is nested too deeply to compile"))
    if isinstance(e, MemoryError):
        return ChatTemplateError(words("it ran out of memory"))
    # A template can raise anything Python can (TypeError on bad operands, OverflowError...).
    return ChatTemplateError(f"{type(e).__name__}: {english_error(e)}")


@lru_cache(maxsize=8)
def _compile(template: str, limits: Limits = DEFAULT_LIMITS) -> jinja2.Template:
    """Compile once per distinct template: a conversation renders the same one on every turn."""
    try:
        return compile_template(template, limits)
    except Exception as e:
        raise _template_error(e) from None
