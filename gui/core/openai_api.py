"""The OpenAI-compatible API's requests and replies, without I/O.

A request body (already decoded from JSON) becomes a :class:`CompletionRequest` in the engine's own terms
(``protocol.ChatMessage``, ``protocol.Sampling``, ``protocol.MAX_TOKENS``), or an :class:`ApiError` naming the
field and why, in the shape OpenAI's clients read (``{"error": {"message", "type", "param", "code"}}``).
Ranges come from the declarations in ``gui/core/protocol.py``: what the window's boxes and the CLI flags
accept is what the API accepts. A field left out takes OpenAI's default (:data:`API_SAMPLING`), not the chat
pane's. The reply and stream-chunk bodies are built here too.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gui.core import protocol as p
from gui.core.specs import BoolSpec, specs_of
from gui.core.words import Text, english, english_error, words

# Bounds on what a stranger may send: the body itself is bounded by the server (MAX_BODY_BYTES).
MAX_BODY_BYTES = 4 << 20
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


ALLOW_REMOTE = words("allow other machines")  # how the window names the choice, unless told


def check_listen(host: str, port: int, allow_remote: bool, how_to_allow: Text = ALLOW_REMOTE) -> Text:
    """Where the API may listen: a ValueError (one line) for what may not be, else a warning or ''. Any
    address but a loopback one lets other machines use the model, so it takes ``allow_remote``."""
    host = host.strip()
    if not host:
        raise ValueError(words("the address to listen on is empty (127.0.0.1: this machine only)"))
    if not 0 <= port <= 65535:
        raise ValueError(words("port {port} is not one to listen on: 1-65535, or 0 for a free one", port=port))
    if not is_loopback(host) and not allow_remote:
        raise ValueError(
            words(
                "{host} would let other machines use the model; {how_to_allow} (and set an API key) "
                "if that is what you want",
                host=host,
                how_to_allow=how_to_allow,
            )
        )
    if not is_loopback(host):
        return words("listening on {host}: other machines that reach it can use the model", host=host)
    return ""


# Which names a request's Host header may give: a page on another site that a browser is tricked into sending here
# (DNS rebinding: the attacker's name resolved to this machine) carries the attacker's name, and is refused. Always
# allowed: the loopback names, any address written as an IP (a rebinding needs a name), the address listened on and,
# when listening on every address (0.0.0.0 or ::), this machine's own name; other names only when the user lists them.
LOCAL_NAMES = frozenset({"localhost", "localhost."})
ALLOWED_HOST_FLAG = "--allowed-host"
ALLOWED_HOST_HELP = (
    "a name clients reach the API by besides localhost and IP addresses (e.g. mybox.lan, or the name of a proxy "
    "in front of it); a request whose Host header names another is refused (403). Repeat it for more names"
)
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::", ""})


def host_name(header: str) -> str:
    """The name in a Host header (``name``, ``name:port``, ``[v6]:port``), lower-cased, without the port."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def host_allowed(
    header: str, listening: str, allowed: frozenset[str] = frozenset(), own: frozenset[str] = frozenset()
) -> bool:
    """Whether a request whose Host header says ``header`` is for this server, listening on ``listening``;
    ``allowed``: the names the user listed; ``own``: this machine's names, allowed when ``listening`` is every
    address."""
    name = host_name(header)
    if not name:
        return False
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        pass
    names = LOCAL_NAMES | {n.strip().lower() for n in allowed} | {listening.strip().lower()}
    if listening.strip() in WILDCARD_HOSTS:
        names |= {n.lower() for n in own}
    return name in names


def host_refused(header: str) -> ApiError:
    return ApiError(
        403,
        f"This server does not answer requests for the host '{header}'. Use localhost or its address, or start it "
        f"with {ALLOWED_HOST_FLAG} {host_name(header) or 'NAME'} to allow that name.",
        "invalid_request_error",
        None,
        "host_not_allowed",
    )


def media_type_refused(given: str) -> ApiError:
    return ApiError(
        415,
        f"The body must be JSON sent with 'Content-Type: application/json' (got '{given or 'none'}').",
        "invalid_request_error",
        None,
        "unsupported_media_type",
    )


# What a request that names no sampling field gets: OpenAI's documented defaults (temperature 1, top_p 1, no
# presence or frequency penalty), with nothing of llama.cpp's that OpenAI lacks (no top-k or min-p cut, no repeat
# penalty): the model's own distribution, as a client written for OpenAI expects. The chat pane keeps its presets
# (protocol.Sampling's defaults).
API_SAMPLING = p.Sampling(
    temperature=1.0,
    top_k=0,
    top_p=1.0,
    min_p=0.0,
    repeat_penalty=1.0,
    presence_penalty=0.0,
    frequency_penalty=0.0,
)

# Which names a request's "model" may give. Off (the default): any name, or none, is answered by the loaded model,
# as clients and agents that send their own default model name expect. On: only the loaded model's name.
STRICT_MODEL = BoolSpec(
    key="serve_strict_model",
    label="Only the loaded model's name",
    flag="--strict-model",
    default=False,
    help="Refuse a request whose 'model' is not the loaded model's name (404) or that names none (400); "
    "by default any name is answered by the loaded model",
)

MAX_MESSAGES = 1024
MAX_STOPS = 4  # as OpenAI's API
MAX_STOP_CHARS = 256

# OpenAI's roles; "developer" is its newer name for the system prompt.
ROLES = {"system": "system", "developer": "system", "user": "user", "assistant": "assistant"}

# Fields that change what OpenAI would answer in ways this server does not: refused rather than ignored,
# unless they hold the value that means "off".
UNSUPPORTED_UNLESS = {
    "n": (None, 1),
    "best_of": (None, 1),
    "logprobs": (None, False),
    "top_logprobs": (None, 0),
    "echo": (None, False),
    "suffix": (None, ""),
    "tools": (None, []),
    "functions": (None, []),
    "logit_bias": (None, {}),
}

# Structured output: a grammar or schema as long as this (its JSON text) at most, nested at most this deep; the
# grammar sampler runs on every token, so a stranger's grammar is bounded like the rest of the body.
MAX_GRAMMAR_BYTES = 64 << 10
MAX_SCHEMA_DEPTH = 64
# A reply in JSON that is an object, OpenAI's "json_object" format.
JSON_OBJECT_SCHEMA = '{"type": "object"}'

# How the engine's reasons for ending a reply read in OpenAI's terms.
FINISH_REASONS = {"stop": "stop", "length": "length", "context": "length", "cancelled": "stop"}
# The engine's reasons for a reply that ended as it should; any other ("cancelled", "error (...)") cut it short.
FINISHED = frozenset({"stop", "length", "context"})


class ApiError(Exception):
    """An answer that is an error: the HTTP status and OpenAI's error object."""

    def __init__(
        self,
        status: int,
        message: Text,
        type: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": english(self.message), "type": self.type, "param": self.param, "code": self.code}}


def invalid(message: Text, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, "invalid_request_error", param, code)


@dataclass(frozen=True)
class CompletionRequest:
    """One request in the engine's terms. ``messages`` for a chat, ``prompt`` for a plain completion."""

    model: str  # as the client named it; "" for none
    chat: bool
    messages: tuple[p.ChatMessage, ...] = ()
    prompt: str | None = None
    # None (no max_tokens sent): until the reply ends or the context is full, as OpenAI's own default.
    max_tokens: int | None = None
    sampling: p.Sampling = API_SAMPLING
    stops: tuple[str, ...] = ()
    stream: bool = False
    include_usage: bool = False  # stream_options.include_usage: a last chunk with the token counts
    grammar: p.ReplyGrammar | None = None  # structured output: what the reply may be
    grammar_param: str = ""  # the field the grammar came from, named by an error about it


def parse_chat_request(body: object) -> CompletionRequest:
    """``POST /v1/chat/completions``'s body, checked."""
    data = _object(body)
    refuse_bad_text(data)
    messages = _messages(data.get("messages"))
    return _request(data, chat=True, messages=messages)


def parse_completion_request(body: object) -> CompletionRequest:
    """``POST /v1/completions``'s body, checked."""
    data = _object(body)
    refuse_bad_text(data)
    return _request(data, chat=False, prompt=_prompt(data.get("prompt")))


def _object(body: object) -> Mapping[str, Any]:
    if not isinstance(body, Mapping):
        raise invalid("The request body must be a JSON object.")
    return body


def refuse_bad_text(value: object, where: str = "") -> None:
    """A 400 naming the first string of the body, key or value, that is not text UTF-8 can hold: a lone surrogate,
    which JSON's ``\\udc80`` escape can carry but no tokenizer can read. Checked at the door, before anything
    reaches the engine."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            field = where or "body"
            raise invalid(
                f"'{field}' holds a lone surrogate (\\u{ord(value[_bad_at(value)]):04x}), which is not text: "
                "send UTF-8 text.",
                field,
            ) from None
    elif isinstance(value, Mapping):
        for key, item in value.items():
            shown = str(key).encode("utf-8", "backslashreplace").decode()  # the field is named in text that can go out
            key_where = f"{where}.{shown}" if where else shown
            refuse_bad_text(key, key_where)
            refuse_bad_text(item, key_where)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            refuse_bad_text(item, f"{where}[{index}]")


def _bad_at(text: str) -> int:
    return next(i for i, ch in enumerate(text) if 0xD800 <= ord(ch) <= 0xDFFF)


def _request(data: Mapping[str, Any], *, chat: bool, **what: Any) -> CompletionRequest:
    model = data.get("model")
    if model is None:
        model = ""
    if not isinstance(model, str):
        raise invalid("'model' must be a string: the id /v1/models lists.", "model")
    for name, allowed in UNSUPPORTED_UNLESS.items():
        if data.get(name, None) not in allowed:
            raise invalid(f"'{name}' is not supported by this server.", name, "unsupported_parameter")
    grammar, grammar_param = _grammar(data)
    stream = _bool(data, "stream")
    include_usage = False
    options = data.get("stream_options")
    if options is not None:
        if not isinstance(options, Mapping):
            raise invalid("'stream_options' must be an object.", "stream_options")
        include_usage = _bool(options, "include_usage", "stream_options.include_usage")
    return CompletionRequest(
        model=model,
        chat=chat,
        max_tokens=_max_tokens(data),
        sampling=_sampling(data),
        stops=_stops(data.get("stop")),
        stream=stream,
        include_usage=include_usage,
        grammar=grammar,
        grammar_param=grammar_param,
        **what,
    )


def _grammar(data: Mapping[str, Any]) -> tuple[p.ReplyGrammar | None, str]:
    """Structured output, and the field it came from: OpenAI's ``response_format`` (``json_object``, or
    ``json_schema`` with its ``schema``), or llama.cpp server's ``grammar`` (GBNF) or ``json_schema``; one at most."""
    given = [(key, data[key]) for key in ("response_format", "grammar", "json_schema") if data.get(key) is not None]
    given = [(key, value) for key, value in given if not (key == "response_format" and value == {"type": "text"})]
    if len(given) > 1:
        raise invalid(f"Give one of {' and '.join(key for key, _ in given)}, not both.", given[1][0])
    if not given:
        return None, ""
    key, value = given[0]
    if key == "grammar":
        if not isinstance(value, str) or not value.strip():
            raise invalid("'grammar' must be a GBNF grammar (a non-empty string).", "grammar")
        if len(value.encode()) > MAX_GRAMMAR_BYTES:
            raise invalid(f"'grammar' may be at most {MAX_GRAMMAR_BYTES} bytes.", "grammar")
        return p.ReplyGrammar("gbnf", value), "grammar"
    if key == "json_schema":
        return p.ReplyGrammar("json_schema", _schema_text(value, "json_schema")), "json_schema"
    if not isinstance(value, Mapping):
        raise invalid("'response_format' must be an object.", "response_format")
    kind = value.get("type")
    if kind == "json_object":
        return p.ReplyGrammar("json_schema", JSON_OBJECT_SCHEMA), "response_format"
    if kind != "json_schema":
        raise invalid(
            f"'response_format.type' must be text, json_object or json_schema (got {kind!r}).", "response_format.type"
        )
    spec = value.get("json_schema")
    if not isinstance(spec, Mapping):
        raise invalid(
            "'response_format.json_schema' must be an object with the schema ({'name', 'schema', 'strict'}).",
            "response_format.json_schema",
        )
    if not isinstance(spec.get("name", ""), str):
        raise invalid("'response_format.json_schema.name' must be a string.", "response_format.json_schema.name")
    if spec.get("strict") is not None and not isinstance(spec.get("strict"), bool):
        raise invalid(
            "'response_format.json_schema.strict' must be true or false.", "response_format.json_schema.strict"
        )
    where = "response_format.json_schema.schema"
    return p.ReplyGrammar("json_schema", _schema_text(spec.get("schema"), where)), where


def _schema_text(schema: object, where: str) -> str:
    """A JSON schema checked for what this server can turn into a grammar, as JSON text: an object, bounded in size
    and depth, whose every ``$ref`` points inside it (``#/...``) and leads to no cycle (a recursive schema)."""
    if not isinstance(schema, Mapping):
        raise invalid(f"'{where}' must be a JSON schema (an object).", where)
    text = json.dumps(schema, ensure_ascii=False)
    if len(text.encode()) > MAX_GRAMMAR_BYTES:
        raise invalid(f"'{where}' may be at most {MAX_GRAMMAR_BYTES} bytes of JSON.", where)
    refs: dict[str, set[str]] = {}  # each $ref target, and the targets that its own subtree refers to
    _walk_schema(schema, "#", 0, where, refs, schema)
    _refuse_cycles(refs, where)
    return text


def _walk_schema(node: object, path: str, depth: int, where: str, refs: dict[str, set[str]], root: object) -> set[str]:
    """The $ref targets found under ``node`` (every one checked to resolve); refused past the depth bound."""
    if depth > MAX_SCHEMA_DEPTH:
        raise invalid(f"'{where}' is nested more than {MAX_SCHEMA_DEPTH} levels deep.", where)
    found: set[str] = set()
    children: list[tuple[str, object]] = []
    if isinstance(node, Mapping):
        ref = node.get("$ref")
        if ref is not None:
            found.add(_resolved_ref(ref, where, root))
        children = [(f"{path}/{key}", value) for key, value in node.items() if key != "$ref"]
    elif isinstance(node, list):
        children = [(f"{path}/{index}", value) for index, value in enumerate(node)]
    for child_path, child in children:
        found |= _walk_schema(child, child_path, depth + 1, where, refs, root)
    refs[path] = found
    return found


def _resolved_ref(ref: object, where: str, root: object) -> str:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise invalid(f"'{where}': a $ref must point inside the schema ('#/$defs/Name'), not {ref!r}.", where)
    target = root
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, Mapping) and part in target:
            target = target[part]
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            raise invalid(f"'{where}': the $ref {ref!r} points at nothing in the schema.", where)
    return ref


def _refuse_cycles(refs: dict[str, set[str]], where: str) -> None:
    """A $ref that leads back to itself (a recursive schema: a tree, a linked list) is refused: the grammar it would
    make is not supported here."""
    state: dict[str, int] = {}  # 1: being followed, 2: done

    def follow(target: str, trail: tuple[str, ...]) -> None:
        if state.get(target) == 2:
            return
        if state.get(target) == 1:
            loop = " -> ".join((*trail[trail.index(target) :], target))
            raise invalid(f"'{where}': recursive schemas are not supported ($ref cycle {loop}).", where)
        state[target] = 1
        for nxt in sorted(refs.get(target, ())):
            follow(nxt, (*trail, target))
        state[target] = 2

    for target in sorted({t for targets in refs.values() for t in targets}):
        follow(target, ())


def _bool(data: Mapping[str, Any], key: str, param: str | None = None) -> bool:
    value = data.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise invalid(f"'{param or key}' must be true or false.", param or key)
    return value


def _max_tokens(data: Mapping[str, Any]) -> int | None:
    # max_completion_tokens is the newer name for the same limit in OpenAI's chat API.
    for key in ("max_completion_tokens", "max_tokens"):
        value = data.get(key)
        if value is not None:
            try:
                return p.MAX_TOKENS.parse(value)
            except ValueError as exc:
                raise invalid(f"'{key}': {english_error(exc)}.", key) from None
    return None


def _sampling(data: Mapping[str, Any]) -> p.Sampling:
    """Every sampler setting by its declared name (OpenAI's temperature, top_p, seed, presence_penalty and
    frequency_penalty; llama.cpp server's top_k, min_p, repeat_penalty and repeat_last_n); the rest are
    :data:`API_SAMPLING`'s."""
    values: dict[str, Any] = {}
    for spec in specs_of(p.Sampling):
        value = data.get(spec.key)
        if value is None:
            continue
        try:
            values[spec.key] = spec.parse(value)
        except ValueError as exc:
            raise invalid(f"'{spec.key}': {english_error(exc)}.", spec.key) from None
    return dataclasses.replace(API_SAMPLING, **values)


def _stops(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
        raise invalid("'stop' must be a string or a list of strings.", "stop")
    if len(items) > MAX_STOPS:
        raise invalid(f"'stop' may hold at most {MAX_STOPS} strings.", "stop")
    if any(len(s) > MAX_STOP_CHARS for s in items):
        raise invalid(f"Each 'stop' string may be at most {MAX_STOP_CHARS} characters.", "stop")
    return tuple(s for s in items if s)


def _messages(value: object) -> tuple[p.ChatMessage, ...]:
    if not isinstance(value, list) or not value:
        raise invalid("'messages' must be a non-empty list.", "messages")
    if len(value) > MAX_MESSAGES:
        raise invalid(f"'messages' may hold at most {MAX_MESSAGES} messages.", "messages")
    messages = []
    for index, item in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(item, Mapping):
            raise invalid(f"'{where}' must be an object.", where)
        role = item.get("role")
        if role not in ROLES:
            raise invalid(f"'{where}.role' must be one of {', '.join(ROLES)} (got {role!r}).", f"{where}.role")
        messages.append(p.ChatMessage(ROLES[role], _content(item.get("content"), f"{where}.content")))
    return tuple(messages)


def _content(value: object, where: str) -> str:
    """A message's text: a string, or a list of text parts (other kinds of part are refused)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = []
        for index, part in enumerate(value):
            if not isinstance(part, Mapping) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise invalid(f"'{where}[{index}]' must be a text part ({{'type': 'text', 'text': ...}}).", where)
            texts.append(part["text"])
        return "".join(texts)
    raise invalid(f"'{where}' must be a string or a list of text parts.", where)


def _prompt(value: object) -> str:
    if isinstance(value, list) and len(value) == 1:
        value = value[0]  # one prompt in a list, as clients often send it
    if not isinstance(value, str):
        raise invalid("'prompt' must be a string (or a list of one string).", "prompt")
    if not value:
        raise invalid("'prompt' must not be empty.", "prompt")
    return value


# ---- errors the engine's answers become -----------------------------------------------------


def context_error(n_prompt: int, n_ctx: int, chat: bool) -> ApiError:
    return invalid(
        f"This model's context holds {n_ctx} tokens; the prompt is {n_prompt} tokens. Shorten it, or load the "
        "model with a larger context (--ctx).",
        "messages" if chat else "prompt",
        "context_length_exceeded",
    )


def model_required() -> ApiError:
    return invalid("'model' is required: the id /v1/models lists.", "model")


def model_not_found(model: str, served: str) -> ApiError:
    message = f"The model '{model}' does not exist here; this server has '{served}'."
    return ApiError(404, message, "invalid_request_error", "model", "model_not_found")


# ---- reply bodies -------------------------------------------------------------------------------


def usage(n_prompt: int, n_gen: int) -> dict[str, int]:
    return {"prompt_tokens": n_prompt, "completion_tokens": n_gen, "total_tokens": n_prompt + n_gen}


def finish_reason(engine_reason: str) -> str:
    return FINISH_REASONS.get(engine_reason, "stop")


def completion_body(
    request: CompletionRequest, reply_id: str, text: str, engine_reason: str, n_prompt: int, n_gen: int
) -> dict[str, Any]:
    """A whole reply: ``chat.completion`` or ``text_completion``."""
    reason = finish_reason(engine_reason)
    choice: dict[str, Any]
    if request.chat:
        choice = {"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": None}
    else:
        choice = {"index": 0, "text": text, "logprobs": None}
    choice["finish_reason"] = reason
    return {
        "id": reply_id,
        "object": "chat.completion" if request.chat else "text_completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [choice],
        "usage": usage(n_prompt, n_gen),
    }


def chunk_body(
    request: CompletionRequest,
    reply_id: str,
    created: int,
    *,
    text: str | None = None,
    role: bool = False,
    engine_reason: str | None = None,
    token_usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """One server-sent event of a streamed reply. A usage chunk (``token_usage``) has no choices."""
    body: dict[str, Any] = {
        "id": reply_id,
        "object": "chat.completion.chunk" if request.chat else "text_completion",
        "created": created,
        "model": request.model,
    }
    if token_usage is not None:
        body["choices"] = []
        body["usage"] = token_usage
        return body
    reason = finish_reason(engine_reason) if engine_reason is not None else None
    choice: dict[str, Any]
    if request.chat:
        delta: dict[str, Any] = {}
        if role:
            delta["role"] = "assistant"
        if text is not None:
            delta["content"] = text
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": reason}
    else:
        choice = {"index": 0, "text": text or "", "logprobs": None, "finish_reason": reason}
    body["choices"] = [choice]
    if request.include_usage:
        body["usage"] = None  # as OpenAI: every chunk but the last says null
    return body


def models_body(model_id: str, created: int) -> dict[str, Any]:
    return {
        "object": "list",
        "data": [{"id": model_id, "object": "model", "created": created, "owned_by": "tightfit"}],
    }
