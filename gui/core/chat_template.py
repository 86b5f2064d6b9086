"""Formatting a conversation with the model's own Jinja chat template.

GGUF files carry the Hugging Face chat template (``tokenizer.chat_template``). llama.cpp's built-in
formatter only recognises a fixed list of templates by heuristics; rendering the Jinja text itself, the
way transformers and llama.cpp's ``--jinja`` path do, formats any model as its authors intended.

The template is untrusted input from a downloaded file, so it runs in Jinja's immutable sandbox with
bounds on output size, loop iterations, string growth and time: a hostile or broken template fails
with a ChatTemplateError instead of hanging or exhausting memory.
"""

from __future__ import annotations

import contextvars
import json
import operator
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any, NoReturn

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.parser
from jinja2.sandbox import ImmutableSandboxedEnvironment, safe_range

from gui.core.protocol import ChatMessage

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


@dataclass(frozen=True)
class Limits:
    """Bounds on one rendering. Real templates need a few KB and a millisecond; these are far above that."""

    max_output_chars: int = 10_000_000
    max_iterations: int = 1_000_000  # across every range() a template walks
    max_seconds: float = 5.0


DEFAULT_LIMITS = Limits()


class ChatTemplateError(Exception):
    """The chat template could not format the conversation. ``str()`` is one line for the user."""

    def __init__(self, reason: str) -> None:
        self.reason = " ".join(reason.split()) or "unknown error"
        super().__init__(f"the model's chat template failed: {self.reason}")


class _RaisedByTemplate(jinja2.TemplateError):
    """What ``raise_exception(...)`` in a template raises: the template's own message."""


class _BudgetExceeded(Exception):
    pass


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
    compiled = _compile(template)
    context = {
        "messages": [{"role": m.role, "content": m.content} for m in messages],
        "add_generation_prompt": add_generation_prompt,
        "bos_token": bos_token,
        "eos_token": eos_token,
        # transformers always passes these; templates test them with `is defined`/`is not none`.
        "tools": None,
        "documents": None,
    }
    budget = _Budget(limits)
    token = _BUDGET.set(budget)
    try:
        out: list[str] = []
        size = 0
        for chunk in compiled.generate(context):
            size += len(chunk)
            if size > limits.max_output_chars:
                raise _BudgetExceeded(f"its output passed the limit of {limits.max_output_chars:,} characters")
            budget.check_time()
            out.append(chunk)
        return "".join(out)
    except ChatTemplateError:
        raise
    except _BudgetExceeded as e:
        raise ChatTemplateError(str(e)) from None
    except _RaisedByTemplate as e:
        raise ChatTemplateError(str(e.message or "the template raised an error")) from None
    except jinja2.exceptions.SecurityError as e:
        raise ChatTemplateError(f"it tried something the sandbox forbids: {e}") from None
    except jinja2.TemplateError as e:
        raise ChatTemplateError(str(e)) from None
    except RecursionError:
        raise ChatTemplateError("it recursed too deeply") from None
    except MemoryError:
        raise ChatTemplateError("it ran out of memory") from None
    except Exception as e:  # a template can raise anything Python can (TypeError on bad ops, etc.)
        raise ChatTemplateError(f"{type(e).__name__}: {e}") from None
    finally:
        _BUDGET.reset(token)


# ---- sandbox ----------------------------------------------------------------------------------


class _Budget:
    """Iterations and time left for one rendering; reached through a ContextVar so renders in
    different threads never share one."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.iterations_left = limits.max_iterations
        self.deadline = time.monotonic() + limits.max_seconds

    def tick(self) -> None:
        self.iterations_left -= 1
        if self.iterations_left < 0:
            raise _BudgetExceeded(f"its loops ran more than {self.limits.max_iterations:,} steps")
        if self.iterations_left & 0x3FF == 0:
            self.check_time()

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise _BudgetExceeded(f"it ran longer than {self.limits.max_seconds:g} s")


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar("chat_template_budget", default=None)


def _current_budget() -> _Budget | None:
    return _BUDGET.get()


class _CountedRange:
    """range() for templates: same sequence, but each step taken counts against the budget."""

    def __init__(self, rng: range) -> None:
        self._rng = rng

    def __iter__(self) -> Iterator[int]:
        budget = _current_budget()
        for i in self._rng:
            if budget is not None:
                budget.tick()
            yield i

    def __reversed__(self) -> Iterator[int]:
        return iter(_CountedRange(self._rng[::-1]))

    def __len__(self) -> int:
        return len(self._rng)

    def __getitem__(self, index: Any) -> Any:
        item = self._rng[index]
        return _CountedRange(item) if isinstance(item, range) else item

    def __contains__(self, value: object) -> bool:
        return value in self._rng


def _bounded_range(*args: int) -> _CountedRange:
    return _CountedRange(safe_range(*args))


def _raise_exception(message: str) -> NoReturn:
    raise _RaisedByTemplate(message)


def _strftime_now(fmt: str) -> str:
    return datetime.now().strftime(fmt)


def _tojson(value: Any, ensure_ascii: bool = False, indent: int | None = None, **kwargs: Any) -> str:
    # Jinja's own tojson escapes <, >, & and ' for HTML; chat templates want plain JSON.
    return json.dumps(
        value,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=kwargs.get("separators"),
        sort_keys=bool(kwargs.get("sort_keys", False)),
    )


def _sized(value: Any) -> int:
    return len(value) if isinstance(value, str | list | tuple) else 0


# str methods that take a width and could allocate gigabytes in one call.
_WIDTH_METHODS = frozenset({"center", "ljust", "rjust", "zfill", "expandtabs"})


class _ChatSandbox(ImmutableSandboxedEnvironment):
    """The immutable sandbox plus resource bounds the stock sandbox does not have."""

    intercepted_binops = frozenset({"*", "**", "+"})

    def call_binop(self, context: jinja2.runtime.Context, op: str, left: Any, right: Any) -> Any:
        budget = _current_budget()
        limit = budget.limits.max_output_chars if budget else DEFAULT_LIMITS.max_output_chars
        if op == "*":
            for seq, times in ((left, right), (right, left)):
                if _sized(seq) and isinstance(times, int) and _sized(seq) * times > limit:
                    raise _BudgetExceeded("it tried to build a string or list longer than the output limit")
            return operator.mul(left, right)
        if op == "+":
            if _sized(left) + _sized(right) > limit:
                raise _BudgetExceeded("it tried to build a string or list longer than the output limit")
            return operator.add(left, right)
        if op == "**" and isinstance(left, int) and isinstance(right, int) and abs(right) > 1024:
            raise _BudgetExceeded("it tried to compute an enormous power")
        return super().call_binop(context, op, left, right)

    def call(__self, __context: jinja2.runtime.Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        budget = _current_budget()
        if budget is not None:
            budget.check_time()
            limit = budget.limits.max_output_chars
            if (
                getattr(__obj, "__name__", "") in _WIDTH_METHODS
                and isinstance(getattr(__obj, "__self__", None), str)
                and any(isinstance(a, int) and a > limit for a in (*args, *kwargs.values()))
            ):
                raise _BudgetExceeded("it tried to pad a string past the output limit")
        return super().call(__context, __obj, *args, **kwargs)


class _GenerationTag(jinja2.ext.Extension):
    """``{% generation %}…{% endgeneration %}``: transformers uses it to mark the assistant's tokens for
    training masks. For inference it only renders its body, but without it such templates fail to parse."""

    tags = {"generation"}  # noqa: RUF012 - Jinja's Extension API declares this as a class attribute

    def parse(self, parser: jinja2.parser.Parser) -> list[jinja2.nodes.Node]:
        next(parser.stream)
        return parser.parse_statements(("name:endgeneration",), drop_needle=True)


def _make_environment() -> _ChatSandbox:
    env = _ChatSandbox(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[jinja2.ext.loopcontrols, jinja2.ext.do, _GenerationTag],
    )
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = _strftime_now
    env.globals["range"] = _bounded_range
    env.filters["tojson"] = _tojson
    return env


_ENV = _make_environment()


@lru_cache(maxsize=8)
def _compile(template: str) -> jinja2.Template:
    """Compile once per distinct template: a conversation renders the same one on every turn."""
    try:
        return _ENV.from_string(template)
    except jinja2.TemplateSyntaxError as e:
        raise ChatTemplateError(f"syntax error on line {e.lineno}: {e.message}") from None
    except jinja2.TemplateError as e:
        raise ChatTemplateError(str(e)) from None
    except RecursionError:
        raise ChatTemplateError("it is nested too deeply to parse") from None
