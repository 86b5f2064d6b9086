"""Reading OpenAI tool calls out of a model's reply, in the format its family was trained on.

A model asked to call a function writes the call as text in its family's own markup; an OpenAI-compatible
server turns that text back into ``tool_calls`` (llama.cpp's server does it in common/chat.cpp, one parser per
``common_chat_format``). The families read here, and what their calls look like:

- **Hermes / Qwen** (``<tool_call>`` in the template): ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``,
  one element per call, and ``<function=name>{...}</function>``;
- **Llama 3.x** (an ``ipython`` turn in the template): the reply *is* one ``{"name": ..., "parameters": {...}}``,
  or ``<|python_tag|>`` then that JSON or a built-in ``name.call(key="value", ...)``;
- **Mistral** (``[TOOL_CALLS]``): ``[TOOL_CALLS][{"name": ..., "arguments": {...}, "id": ...}]``, or the newer
  ``[TOOL_CALLS]name[ARGS]{...}`` (with ``[CALL_ID]id`` before ``[ARGS]`` in some templates);
- **DeepSeek R1 / V3** (``<｜tool▁calls▁begin｜>``): a block of
  ``<｜tool▁call▁begin｜>function<｜tool▁sep｜>name\\n```json\\n{...}\\n```<｜tool▁call▁end｜>``, or V3.1's
  ``<｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜>``;
- **gpt-oss harmony** (``<|channel|>``): messages ``<|channel|>commentary to=functions.name <|constrain|>json
  <|message|>{...}<|call|>``; an ``analysis`` message is reasoning, ``final`` and ``commentary`` are content;
- **generic** (any other template): the whole reply is JSON, ``{"tool_calls": [{"name", "arguments"}...]}``,
  ``{"tool_call": {...}}``, ``{"name", "arguments"}`` or ``{"response": "text"}`` — what a reply constrained to
  :func:`tool_grammar_schema` is.

The reply is untrusted text. Every wait for more text is bounded (a header, a name, a JSON value at most
``ToolLimits.max_arguments_chars``), at most ``max_calls`` calls are taken, and nothing raises: a call that
cannot be read stays in the reply's content as the model wrote it and the reason is reported in
``ParsedReply.problems``, for the caller to show or to answer with an error. Arguments are kept only when they
are a JSON object; they are passed on as compact JSON text, as OpenAI returns them.

One parser serves both uses: :class:`ToolCallStream` is fed the reply as it is generated and returns content
deltas and tool-call deltas as soon as they are certain; :func:`parse_tool_calls` feeds it a whole reply. Text
that may be the start of a marker is held back until it is known not to be one, and a call is announced only
once it is complete and valid (its id and name, then its arguments in one fragment), so a stream never has to
take back what it sent and its outcome does not depend on how the text was split.
"""

from __future__ import annotations

import enum
import json
import re
import secrets
from collections.abc import Callable, Generator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gui.core.words import Text, english_error, words

__all__ = [
    "ContentDelta",
    "ParsedReply",
    "ReasoningDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallStream",
    "ToolFormat",
    "ToolLimits",
    "new_call_id",
    "openai_delta",
    "parse_tool_calls",
    "preserved_tokens",
    "tool_format",
    "tool_grammar_schema",
]


class ToolFormat(enum.Enum):
    """The markup a model family writes its calls in (llama.cpp's ``common_chat_format`` names in comments)."""

    HERMES = "hermes"  # COMMON_CHAT_FORMAT_HERMES_2_PRO
    LLAMA3 = "llama3"  # COMMON_CHAT_FORMAT_LLAMA_3_X (with built-in tools when the template has <|python_tag|>)
    MISTRAL = "mistral"  # COMMON_CHAT_FORMAT_MISTRAL_NEMO and the [ARGS] form of Ministral / Magistral
    DEEPSEEK = "deepseek"  # COMMON_CHAT_FORMAT_DEEPSEEK_R1 and _DEEPSEEK_V3_1
    HARMONY = "harmony"  # COMMON_CHAT_FORMAT_GPT_OSS
    GENERIC = "generic"  # COMMON_CHAT_FORMAT_GENERIC


@dataclass(frozen=True)
class ToolLimits:
    max_calls: int = 64  # calls taken from one reply; later ones stay content, with a problem reported
    max_arguments_chars: int = 1 << 20  # one JSON value (arguments, or a whole call object or array)
    max_header_chars: int = 512  # a name, an id, a harmony header
    max_depth: int = 256  # JSON nesting


DEFAULT_LIMITS = ToolLimits()


@dataclass(frozen=True)
class ToolCall:
    """One call as OpenAI returns it: ``arguments`` is the JSON text of an object."""

    id: str
    name: str
    arguments: str

    def to_openai(self) -> dict[str, Any]:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}


@dataclass(frozen=True)
class ParsedReply:
    content: str | None  # the text outside the calls; None when there is none (or only white space)
    tool_calls: tuple[ToolCall, ...]
    reasoning: str | None = None  # harmony's analysis channel
    problems: tuple[Text, ...] = ()  # why a call could not be read (sentences made with words(...))


@dataclass(frozen=True)
class ContentDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A fragment of the call at ``index``: the first one has its id and name, the next ones arguments."""

    index: int
    id: str | None
    name: str | None
    arguments: str

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"index": self.index}
        function: dict[str, str] = {"arguments": self.arguments}
        if self.id is not None:
            out["id"] = self.id
            out["type"] = "function"
        if self.name is not None:
            function["name"] = self.name
        out["function"] = function
        return out


Delta = ContentDelta | ReasoningDelta | ToolCallDelta


def openai_delta(delta: Delta) -> dict[str, Any]:
    """The ``choices[0].delta`` of a chat.completion.chunk carrying ``delta`` (``reasoning_content`` is
    llama.cpp's name for reasoning)."""
    if isinstance(delta, ContentDelta):
        return {"content": delta.text}
    if isinstance(delta, ReasoningDelta):
        return {"reasoning_content": delta.text}
    return {"tool_calls": [delta.to_openai()]}


def new_call_id() -> str:
    return "call_" + secrets.token_hex(12)


# ---- which format ------------------------------------------------------------------------------

# Markers looked for in the template text, in llama.cpp's order (common_chat_templates_apply_jinja).
_TEMPLATE_MARKERS: tuple[tuple[str, ToolFormat], ...] = (
    ("<｜tool▁calls▁begin｜>", ToolFormat.DEEPSEEK),
    ("message['prefix'] is defined and message['prefix'] and thinking", ToolFormat.DEEPSEEK),
    ("<tool_call>", ToolFormat.HERMES),
    ("<|channel|>", ToolFormat.HARMONY),
    ("<|start_header_id|>ipython<|end_header_id|>", ToolFormat.LLAMA3),
    ("[TOOL_CALLS]", ToolFormat.MISTRAL),
)
# A file without a template: what its architecture's models are trained on (general.architecture).
_ARCH_FORMATS = {
    "qwen2": ToolFormat.HERMES,
    "qwen2moe": ToolFormat.HERMES,
    "qwen3": ToolFormat.HERMES,
    "qwen3moe": ToolFormat.HERMES,
    "gpt-oss": ToolFormat.HARMONY,
    "deepseek2": ToolFormat.DEEPSEEK,
}


def tool_format(template: str | None, arch: str) -> ToolFormat:
    """The format a model writes calls in: from the markers its chat template has (as llama.cpp picks its
    parser), from its architecture when the file has no template, else the generic JSON reply."""
    if isinstance(template, str) and template.strip():
        for marker, found in _TEMPLATE_MARKERS:
            if marker in template:
                return found
        return ToolFormat.GENERIC
    return _ARCH_FORMATS.get(arch.strip().lower(), ToolFormat.GENERIC)


_PRESERVED: dict[ToolFormat, tuple[str, ...]] = {
    ToolFormat.HERMES: ("<tool_call>", "</tool_call>"),
    ToolFormat.LLAMA3: ("<|python_tag|>",),
    ToolFormat.MISTRAL: ("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"),
    ToolFormat.DEEPSEEK: (
        "<｜tool▁calls▁begin｜>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>",
    ),
    ToolFormat.HARMONY: ("<|start|>", "<|channel|>", "<|constrain|>", "<|message|>", "<|end|>", "<|call|>"),
    ToolFormat.GENERIC: (),
}


def preserved_tokens(fmt: ToolFormat) -> tuple[str, ...]:
    """The markers the engine must write out as text even where the vocabulary has them as special tokens
    (which a detokenizer normally drops): without them the parser sees no call. llama.cpp's
    ``preserved_tokens``."""
    return _PRESERVED[fmt]


# ---- the reader the parsers consume ------------------------------------------------------------


class _Malformed(Exception):
    """A call that cannot be read; ``reason`` is for the user."""

    def __init__(self, reason: Text) -> None:
        super().__init__(reason)
        self.reason = reason


class _NotACall(Exception):
    """Text that looked as if it might be a call (a JSON reply) and is not one: content, nothing to report."""


_Wait = Generator[None, None, Any]  # a parser step: yields while it needs more text, returns its result

_JSON_IN_STRING = re.compile(r'["\\]')
_JSON_STRUCTURE = re.compile(r'["{}\[\]]')
_JSON_TOKEN_END = re.compile(r"[^A-Za-z0-9+\-.]")
_NAME = re.compile(r"[A-Za-z0-9_.:\-]{1,256}")
_MODEL_ID = re.compile(r"[A-Za-z0-9_\-]{1,64}")
_MAX_HELD_SPACE = 1024


class _Reader:
    """The unconsumed text, and what the parsers send out. Positions only move forward; the text a call
    region consumed is kept (in pieces) so that it can become content if the call turns out malformed."""

    def __init__(self, limits: ToolLimits, ids: Callable[[], str]) -> None:
        self.limits = limits
        self.ids = ids
        self.buf = ""
        self.pos = 0
        self.done = False
        self.region: list[str] | None = None  # consumed text of the call being read
        self.out: list[Delta] = []
        self.calls: list[ToolCall] = []
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.problems: list[Text] = []
        self.taken = 0  # characters consumed so far
        self._space = ""  # white space held back: dropped when a call follows it
        self._after_call = False

    # -- input

    def add(self, text: str) -> None:
        if self.pos:
            self.buf = self.buf[self.pos :]
            self.pos = 0
        self.buf += text

    @property
    def left(self) -> int:
        return len(self.buf) - self.pos

    def take(self, n: int) -> str:
        piece = self.buf[self.pos : self.pos + n]
        self.pos += len(piece)
        self.taken += len(piece)
        if self.region is not None:
            self.region.append(piece)
        return piece

    # -- output

    def emit_content(self, text: str) -> None:
        if not text:
            return
        if self._after_call:
            text = text.lstrip()
            if not text:
                return
            self._after_call = False
        text = self._space + text
        body = text.rstrip()
        # Held white space is bounded: past _MAX_HELD_SPACE it is content (the same cut however text arrives).
        keep = max(len(body), len(text) - _MAX_HELD_SPACE)
        body, self._space = text[:keep], text[keep:]
        if body:
            self.content.append(body)
            self.out.append(ContentDelta(body))

    def emit_reasoning(self, text: str) -> None:
        if text:
            self.reasoning.append(text)
            self.out.append(ReasoningDelta(text))

    def flush_space(self) -> None:
        """At the end of the reply: trailing white space is content unless the reply made calls."""
        if self._space and not self.calls:
            self.content.append(self._space)
            self.out.append(ContentDelta(self._space))
        self._space = ""

    def begin(self) -> None:
        self.region = []

    def end(self) -> None:
        self.region = None

    def fail(self, reason: Text | None) -> None:
        """The region is not a call: what it consumed is content again."""
        text = "".join(self.region or ())
        self.region = None
        if reason is not None:
            self.problems.append(reason)
        self.emit_content(text)

    def commit(self, name: str, arguments: Any, call_id: Any = None) -> None:
        """A complete call: checked, then announced (its id and name, then its arguments)."""
        self.commit_all([(name, arguments, call_id)])

    def commit_all(self, calls: Sequence[tuple[str, Any, Any]]) -> None:
        """Calls written together (one JSON array): all are checked before any is announced."""
        checked = [self._checked(len(self.calls) + k, *call) for k, call in enumerate(calls)]
        for name, text, call_id in checked:
            chosen = call_id if call_id is not None else self.ids()
            index = len(self.calls)
            self.calls.append(ToolCall(chosen, name, text))
            self.out.append(ToolCallDelta(index, chosen, name, ""))
            self.out.append(ToolCallDelta(index, None, None, text))
        self._space = ""
        self._after_call = True
        if self.region is not None:
            self.region = []

    def _checked(self, index: int, name: Any, arguments: Any, call_id: Any) -> tuple[str, str, str | None]:
        n = index + 1
        if index >= self.limits.max_calls:
            raise _Malformed(words("the reply has more than {n} tool calls", n=self.limits.max_calls))
        if not isinstance(name, str) or _NAME.fullmatch(name) is None:
            raise _Malformed(words("the name of tool call {n} is not a function name", n=n))
        if isinstance(arguments, str):  # arguments written as a JSON string holding the object
            arguments = _loads(arguments, self.limits, n)
        if not isinstance(arguments, dict):
            raise _Malformed(words("the arguments of tool call {n} ({name}) are not a JSON object", n=n, name=name))
        text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
        model_id = call_id if isinstance(call_id, str) and _MODEL_ID.fullmatch(call_id) else None
        return name, text, model_id

    # -- steps (generators: each yield waits for more text)

    def peek(self) -> _Wait:
        """The next character, or '' at the end of the reply."""
        while not self.left and not self.done:
            yield
        return self.buf[self.pos] if self.left else ""

    def startswith(self, literal: str) -> _Wait:
        """Whether the text goes on with ``literal`` (nothing consumed)."""
        while True:
            have = self.buf[self.pos : self.pos + len(literal)]
            if not literal.startswith(have):
                return False
            if len(have) == len(literal):
                return True
            if self.done:
                return False
            yield

    def expect(self, literal: str) -> _Wait:
        if not (yield from self.startswith(literal)):
            if self.done and literal.startswith(self.buf[self.pos :]):
                raise _Malformed(words("the reply ended inside a tool call"))
            raise _Malformed(
                words("a tool call is not written as its format wants (expected {marker})", marker=literal)
            )
        self.take(len(literal))

    def skip_space(self) -> _Wait:
        while True:
            while self.left and self.buf[self.pos].isspace():
                self.take(1)
            if self.left or self.done:
                return
            yield

    def until(self, ends: Sequence[str], limit: int | None = None) -> _Wait:
        """The text before the first of ``ends`` (consumed, with the end), and which end it was."""
        limit = self.limits.max_header_chars if limit is None else limit
        longest = max(len(e) for e in ends)
        searched = 0  # characters after pos already searched (pos stays put while this waits)
        while True:
            hits = [
                (i, e)
                for e in ends
                if (i := self.buf.find(e, self.pos + max(0, searched - len(e)), self.pos + limit + len(e))) >= 0
            ]
            if hits:
                i, end = min(hits)
                text = self.take(i - self.pos)
                self.take(len(end))
                return text, end
            if self.left > limit + longest:
                raise _Malformed(words("a tool call's header is longer than {n} characters", n=limit))
            if self.done:
                raise _Malformed(words("the reply ended inside a tool call"))
            searched = self.left
            yield

    def text_until(self, ends: Sequence[str], sink: Callable[[str], None]) -> _Wait:
        """Send the text before the first of ``ends`` to ``sink``, holding back what may be the start of
        one; returns the end found (not consumed), or None at the end of the reply."""
        pattern = re.compile("|".join(re.escape(e) for e in sorted(ends, key=len, reverse=True)))
        while True:
            found = pattern.search(self.buf, self.pos)
            if found is not None:
                sink(self.take(found.start() - self.pos))
                return found.group()
            if self.done:
                sink(self.take(self.left))
                return None
            sink(self.take(self.left - _held(self.buf, self.pos, ends)))
            yield

    def rest(self, sink: Callable[[str], None]) -> _Wait:
        """Send everything that is left to ``sink``."""
        while True:
            sink(self.take(self.left))
            if self.done:
                return
            yield

    def _in_string(self, i: int, end: int, escape: bool) -> tuple[int, bool, bool]:
        """Read on inside a JSON string from ``i``: (where reading stopped, a backslash pending, the string ended
        there)."""
        while i < end:
            if escape:
                escape = False
                i += 1
                continue
            m = _JSON_IN_STRING.search(self.buf, i, end)
            if m is None:
                return end, False, False
            i = m.end()
            if m.group() == "\\":
                escape = True
            else:
                return i, False, True
        return i, escape, False

    def json_value(self) -> _Wait:
        """One JSON value (an object, array, string or scalar), parsed; bounded in size and depth."""
        if not (yield from self.peek()):
            raise _Malformed(words("the reply ended inside a tool call"))
        limit = self.limits.max_arguments_chars
        first = self.buf[self.pos]
        pieces: list[str] = []
        size = 0
        if first in "{[":
            depth, in_string, escape = 0, False, False
            while True:
                i = self.pos
                end = len(self.buf)
                closed = -1
                while i < end:
                    if in_string:
                        i, escape, ended = self._in_string(i, end, escape)
                        in_string = not ended
                        continue
                    m = _JSON_STRUCTURE.search(self.buf, i, end)
                    if m is None:
                        i = end
                        break
                    i = m.end()
                    c = m.group()
                    if c == '"':
                        in_string = True
                    elif c in "{[":
                        depth += 1
                        if depth > self.limits.max_depth:
                            self._take_json(pieces, size, i - self.pos, limit)
                            raise _Malformed(words("a tool call's JSON is nested too deeply"))
                    else:
                        depth -= 1
                        if depth == 0:
                            closed = i
                            break
                n = (closed if closed >= 0 else i) - self.pos
                size = self._take_json(pieces, size, n, limit)
                if closed >= 0:
                    break
                if self.done:
                    raise _Malformed(words("the reply ended inside a tool call"))
                yield
        elif first == '"':
            pieces.append(self.take(1))
            escape = False
            while True:
                i, end, closed = self.pos, len(self.buf), -1
                if i < end:
                    i, escape, ended = self._in_string(i, end, escape)
                    closed = i if ended else -1
                n = (closed if closed >= 0 else i) - self.pos
                size = self._take_json(pieces, size, n, limit)
                if closed >= 0:
                    break
                if self.done:
                    raise _Malformed(words("the reply ended inside a tool call"))
                yield
        else:
            while True:
                m = _JSON_TOKEN_END.search(self.buf, self.pos)
                if m is not None or self.done:
                    n = (m.start() if m is not None else len(self.buf)) - self.pos
                    if n > self.limits.max_header_chars:
                        raise _Malformed(words("a tool call's JSON is not valid"))
                    pieces.append(self.take(n))
                    break
                if self.left > self.limits.max_header_chars:
                    raise _Malformed(words("a tool call's JSON is not valid"))
                yield
        return _loads("".join(pieces), self.limits, len(self.calls) + 1)

    def _take_json(self, pieces: list[str], size: int, n: int, limit: int) -> int:
        """Consume ``n`` more characters of a JSON value; past ``limit`` in all, consume up to the limit (so the
        cut is where it is however the text arrived) and give up."""
        if size + n > limit:
            self.take(limit - size)
            raise _Malformed(words("a tool call's JSON is longer than {n} characters", n=f"{limit:,}"))
        pieces.append(self.take(n))
        return size + n


def _held(buf: str, pos: int, ends: Iterable[str]) -> int:
    """How many characters at the end of ``buf[pos:]`` may be the start of one of ``ends``."""
    best = 0
    for end in ends:
        for k in range(min(len(end) - 1, len(buf) - pos), best, -1):
            if buf.endswith(end[:k]):
                best = k
                break
    return best


def _loads(text: str, limits: ToolLimits, n: int) -> Any:
    if len(text) > limits.max_arguments_chars:
        raise _Malformed(words("a tool call's JSON is longer than {n} characters", n=f"{limits.max_arguments_chars:,}"))
    try:
        return json.loads(text)
    except RecursionError:
        raise _Malformed(words("a tool call's JSON is nested too deeply")) from None
    except ValueError as e:
        raise _Malformed(
            words("the JSON of tool call {n} is not valid ({reason})", n=n, reason=english_error(e))
        ) from None


def _call_fields(value: Any, arguments_keys: Sequence[str] = ("arguments",)) -> tuple[str, Any, Any]:
    """(name, arguments, id) of a call written as a JSON object; _Malformed if it is not one."""
    if not isinstance(value, dict):
        raise _Malformed(words("a tool call is not a JSON object"))
    function = value.get("function")
    if isinstance(function, dict) and "name" in function:  # {"type": "function", "function": {...}}, OpenAI's own
        value = {**function, "id": value.get("id")}
    name = value.get("name")
    if not isinstance(name, str):
        raise _Malformed(words("a tool call has no function name"))
    for key in arguments_keys:
        if key in value:
            return name, value[key], value.get("id")
    return name, {}, value.get("id")  # a call without arguments takes none


# ---- the formats -------------------------------------------------------------------------------


def _region(r: _Reader, step: Callable[[], _Wait], marker: str = "") -> _Wait:
    """Read one call region with ``step``: a malformed one is content, its reason reported; one that is not a
    call after all (_NotACall) is content. A region that consumed nothing gives up its ``marker`` as content,
    so that the search goes on after it."""
    r.begin()
    start = r.taken
    try:
        yield from step()
    except (_Malformed, _NotACall) as e:
        r.fail(e.reason if isinstance(e, _Malformed) else None)
        if r.taken == start and marker:
            r.emit_content(r.take(len(marker)))
        return False
    r.end()
    return True


def _not_a_call_unless_json(step: Callable[[], _Wait]) -> Callable[[], _Wait]:
    """For a reply that may be JSON without being a call: JSON that cannot be read is just text."""

    def guarded() -> _Wait:
        try:
            return (yield from step())
        except _Malformed as e:
            raise _NotACall from e

    return guarded


def _hermes(r: _Reader) -> _Wait:
    def tool_call() -> _Wait:
        yield from r.expect("<tool_call>")
        yield from r.skip_space()
        value = yield from r.json_value()
        yield from r.skip_space()
        yield from r.expect("</tool_call>")
        r.commit(*_call_fields(value))

    def function_tag() -> _Wait:
        yield from r.expect("<function=")
        name, _ = yield from r.until((">",))
        yield from r.skip_space()
        arguments = yield from r.json_value()
        yield from r.skip_space()
        yield from r.expect("</function>")
        r.commit(name.strip(), arguments)

    while True:
        marker = yield from r.text_until(("<tool_call>", "<function="), r.emit_content)
        if marker is None:
            return
        yield from _region(r, tool_call if marker == "<tool_call>" else function_tag, marker)


def _llama3(r: _Reader) -> _Wait:
    def at_start() -> _Wait:
        yield from r.skip_space()
        if (yield from r.peek()) != "{":
            raise _NotACall
        value = yield from _not_a_call_unless_json(r.json_value)()
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            raise _NotACall
        if "parameters" not in value and "arguments" not in value:
            raise _NotACall
        r.commit(*_call_fields(value, ("parameters", "arguments")))

    def python_tag() -> _Wait:
        yield from r.expect("<|python_tag|>")
        yield from r.skip_space()
        if (yield from r.peek()) == "{":
            while True:  # one call, or several separated by ';'
                value = yield from r.json_value()
                if not isinstance(value, dict):
                    raise _Malformed(words("a tool call is not a JSON object"))
                r.commit(*_call_fields(value, ("parameters", "arguments")))
                yield from r.skip_space()
                if not (yield from r.startswith(";")):
                    return
                r.take(1)
                yield from r.skip_space()
        name, _ = yield from r.until((".call(",))
        name = name.strip()
        arguments: dict[str, Any] = {}
        yield from r.skip_space()
        if (yield from r.startswith(")")):
            r.take(1)
        else:
            while True:  # key=value, ... )
                key, _ = yield from r.until(("=",))
                key = key.strip()
                if not key.isidentifier():
                    raise _Malformed(
                        words("a tool call is not written as its format wants (expected {marker})", marker="key=")
                    )
                yield from r.skip_space()
                arguments[key] = yield from r.json_value()
                yield from r.skip_space()
                following = yield from r.peek()
                if following == ",":
                    r.take(1)
                    yield from r.skip_space()
                    continue
                yield from r.expect(")")
                break
        r.commit(name, arguments)

    yield from _region(r, at_start)
    while True:
        marker = yield from r.text_until(("<|python_tag|>",), r.emit_content)
        if marker is None:
            return
        yield from _region(r, python_tag, marker)


def _mistral(r: _Reader) -> _Wait:
    def tool_calls() -> _Wait:
        yield from r.expect("[TOOL_CALLS]")
        yield from r.skip_space()
        if (yield from r.peek()) == "[":
            value = yield from r.json_value()
            if not isinstance(value, list) or not value:
                raise _Malformed(words("a tool call is not a JSON object"))
            r.commit_all([_call_fields(item) for item in value])  # all checked before any is announced
            return
        name, end = yield from r.until(("[ARGS]", "[CALL_ID]"))
        call_id = None
        if end == "[CALL_ID]":
            call_id, _ = yield from r.until(("[ARGS]",))
        yield from r.skip_space()
        arguments = yield from r.json_value()
        r.commit(name.strip(), arguments, call_id)

    while True:
        marker = yield from r.text_until(("[TOOL_CALLS]",), r.emit_content)
        if marker is None:
            return
        yield from _region(r, tool_calls, marker)


# DeepSeek R1's distilled models spell the block's opening several ways; llama.cpp takes them all.
_DEEPSEEK_OPENINGS = (
    "<｜tool▁calls▁begin｜>",
    "<｜tool_calls_begin｜>",
    "<｜tool calls begin｜>",
    "<｜tool\\_calls\\_begin｜>",
    "<｜tool▁calls｜>",
)


def _deepseek(r: _Reader) -> _Wait:
    def one_call() -> _Wait:
        if (yield from r.startswith("<｜tool▁call▁begin｜>")):
            r.take(len("<｜tool▁call▁begin｜>"))
        head, _ = yield from r.until(("<｜tool▁sep｜>",))
        if head.strip() == "function":  # R1 / V3: function<｜tool▁sep｜>name\n```json\n{...}\n```
            name, _ = yield from r.until(("\n",))
            yield from r.skip_space()
            yield from r.expect("```")
            if (yield from r.startswith("json")):
                r.take(4)
            yield from r.skip_space()
            arguments = yield from r.json_value()
            yield from r.skip_space()
            yield from r.expect("```")
        else:  # V3.1: name<｜tool▁sep｜>{...}
            name = head
            yield from r.skip_space()
            arguments = yield from r.json_value()
        yield from r.skip_space()
        yield from r.expect("<｜tool▁call▁end｜>")
        r.commit(name.strip(), arguments)

    def block() -> _Wait:
        opening, _ = yield from r.until(_DEEPSEEK_OPENINGS, 0)
        del opening
        while True:
            yield from r.skip_space()
            if not (yield from r.peek()):
                return  # the reply ended at the end of a call
            if (yield from r.startswith("<｜tool▁calls▁end｜>")):
                r.take(len("<｜tool▁calls▁end｜>"))
                return
            yield from one_call()

    while True:
        marker = yield from r.text_until(_DEEPSEEK_OPENINGS, r.emit_content)
        if marker is None:
            return
        yield from _region(r, block, marker)


_HARMONY_ENDS = ("<|end|>", "<|return|>", "<|call|>")
_HARMONY_HEADER = re.compile(
    r"(?:<\|start\|>\s*assistant)?\s*(?:to=functions\.(?P<to1>[^\s<]+)\s*)?"
    r"<\|channel\|>\s*(?P<channel>analysis|commentary|final)"
    r"(?:\s+to=functions\.(?P<to2>[^\s<]+))?"
    r"(?:\s*(?:<\|constrain\|>)?\s*(?P<constrain>[A-Za-z0-9_\-]+))?\s*",
)


def _harmony(r: _Reader) -> _Wait:
    def message() -> _Wait:
        header, _ = yield from r.until(("<|message|>",))
        m = _HARMONY_HEADER.fullmatch(header)
        if m is None:
            raise _Malformed(
                words("a tool call is not written as its format wants (expected {marker})", marker="<|channel|>")
            )
        name = m.group("to1") or m.group("to2")
        if name is None:
            r.end()  # a header of a message to the user: dropped
            sink = r.emit_reasoning if m.group("channel") == "analysis" else r.emit_content
            end = yield from r.text_until((*_HARMONY_ENDS, "<|start|>"), sink)
            if end in _HARMONY_ENDS:
                r.take(len(end))
            return
        yield from r.skip_space()
        arguments = yield from r.json_value()
        yield from r.skip_space()
        for end in _HARMONY_ENDS:
            if (yield from r.startswith(end)):
                r.take(len(end))
                break
        r.commit(name, arguments)

    while True:
        starts = ("<|start|>", "<|channel|>", " to=functions.", "to=functions.")
        marker = yield from r.text_until(starts, r.emit_content)
        if marker is None:
            return
        yield from _region(r, message, marker)


def _generic(r: _Reader) -> _Wait:
    def reply() -> _Wait:
        yield from r.skip_space()
        if (yield from r.peek()) != "{":
            raise _NotACall
        value = yield from _not_a_call_unless_json(r.json_value)()
        yield from r.skip_space()
        if (yield from r.peek()) or not isinstance(value, dict):
            raise _NotACall  # text after the JSON: not a JSON reply
        if "tool_calls" in value and isinstance(value["tool_calls"], list):
            fields = [_call_fields(item) for item in value["tool_calls"]]
        elif "tool_call" in value:
            fields = [_call_fields(value["tool_call"])]
        elif isinstance(value.get("name"), str) and "arguments" in value:
            fields = [_call_fields(value)]
        elif isinstance(value.get("response"), str) and len(value) == 1:
            r.end()
            r.emit_content(value["response"])
            return
        else:
            raise _NotACall
        r.commit_all(fields)

    yield from _region(r, reply)
    yield from r.rest(r.emit_content)


_PARSERS: dict[ToolFormat, Callable[[_Reader], _Wait]] = {
    ToolFormat.HERMES: _hermes,
    ToolFormat.LLAMA3: _llama3,
    ToolFormat.MISTRAL: _mistral,
    ToolFormat.DEEPSEEK: _deepseek,
    ToolFormat.HARMONY: _harmony,
    ToolFormat.GENERIC: _generic,
}


# ---- the two ways in ---------------------------------------------------------------------------


class ToolCallStream:
    """Fed a reply's text as it is generated, returns what can be sent on: content, reasoning and tool-call
    deltas, in order. Call :meth:`finish` once the reply is over, then :meth:`result` for the whole of it."""

    def __init__(
        self, fmt: ToolFormat, *, limits: ToolLimits = DEFAULT_LIMITS, ids: Callable[[], str] = new_call_id
    ) -> None:
        self.format = fmt
        self._reader = _Reader(limits, ids)
        self._parser: _Wait | None = _PARSERS[fmt](self._reader)
        self._run()

    def feed(self, text: str) -> list[Delta]:
        if text and self._parser is not None and not self._reader.done:
            self._reader.add(text)
            self._run()
        return self._take()

    def finish(self) -> list[Delta]:
        r = self._reader
        if not r.done:
            r.done = True
            self._run()
            if self._parser is not None:  # a parser must not wait once the reply is over: the rest is content
                self._parser.close()
                self._parser = None
                if r.region is not None:
                    r.fail(None)
                r.emit_content(r.take(r.left))
            r.flush_space()
        return self._take()

    def result(self) -> ParsedReply:
        r = self._reader
        content = "".join(r.content)
        reasoning = "".join(r.reasoning)
        return ParsedReply(
            content if content.strip() else None,
            tuple(r.calls),
            reasoning if reasoning.strip() else None,
            tuple(r.problems),
        )

    def _run(self) -> None:
        if self._parser is None:
            return
        try:
            next(self._parser)
        except StopIteration:
            self._parser = None
        except Exception as e:  # a parser bug must not take the reply with it: the rest is content
            r = self._reader
            r.problems.append(
                words(
                    "the reply's tool calls could not be read ({reason})",
                    reason=f"{type(e).__name__}: {english_error(e)}",
                )
            )
            if r.region is not None:
                r.fail(None)
            self._parser = None
        if self._parser is None:  # a finished parser takes whatever text comes after as content
            r = self._reader
            r.emit_content(r.take(r.left))

    def _take(self) -> list[Delta]:
        out, self._reader.out = self._reader.out, []
        return out


def parse_tool_calls(
    text: str, fmt: ToolFormat, *, limits: ToolLimits = DEFAULT_LIMITS, ids: Callable[[], str] = new_call_id
) -> ParsedReply:
    """A whole reply's content and calls."""
    stream = ToolCallStream(fmt, limits=limits, ids=ids)
    stream.feed(text)
    stream.finish()
    return stream.result()


# ---- constraining a reply to a call ------------------------------------------------------------


def tool_grammar_schema(
    tools: Sequence[Mapping[str, Any]], choice: str | Mapping[str, Any], *, parallel: bool = True
) -> dict[str, Any]:
    """The JSON schema a reply must follow to call a tool: ``choice`` "required" (any of ``tools``, one call or
    more) or a named function (``{"type": "function", "function": {"name": ...}}``, or the name; one call).
    A reply that follows it is the generic format: :func:`parse_tool_calls` with ``ToolFormat.GENERIC`` reads
    it. ValueError for another choice, or a name that is not among ``tools``."""
    functions: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            functions.setdefault(function["name"], function)
    if choice == "required":
        chosen = list(functions)
        most = None if parallel else 1
    else:
        name: Any = choice
        if isinstance(choice, Mapping):
            function = choice.get("function")
            name = function.get("name") if isinstance(function, Mapping) else None
        if not isinstance(name, str) or name in ("auto", "none"):
            raise ValueError(words('tool_choice must be "required" or name a function to constrain a reply to'))
        if name not in functions:
            raise ValueError(words("tool_choice names the function '{name}', which is not among the tools", name=name))
        chosen = [name]
        most = 1
    if not chosen:
        raise ValueError(words("there are no functions among the tools"))
    calls = [_call_schema(name, functions[name]) for name in chosen]
    array: dict[str, Any] = {"type": "array", "items": calls[0] if len(calls) == 1 else {"anyOf": calls}, "minItems": 1}
    if most is not None:
        array["maxItems"] = most
    return {
        "type": "object",
        "properties": {"tool_calls": array},
        "required": ["tool_calls"],
        "additionalProperties": False,
    }


def _call_schema(name: str, function: Mapping[str, Any]) -> dict[str, Any]:
    parameters = function.get("parameters")
    return {
        "type": "object",
        "properties": {
            "name": {"type": "string", "const": name},
            "arguments": dict(parameters) if isinstance(parameters, Mapping) else {"type": "object"},
        },
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }
