"""An OpenAI-compatible HTTP API on the engine Tightfit already runs (one model in memory, not a second copy).

:class:`ApiServer` is an aiohttp application that runs in the asyncio loop of its caller: the qasync loop of
the window, or the plain loop of ``tightfit serve``. It sends ``Generate`` commands through the engine client
it is given and is fed the engine's events by :meth:`ApiServer.feed`, which any thread may call (the client's
reader thread, or the window's Qt adapter on the UI thread); each event is handed to the loop with
``call_soon_threadsafe``.

Requests queue for the engine's slots: at most ``slots`` replies are generated at once, the others wait in the
order they came. With more than one slot (the load's parallel slots, llama.cpp's n_seq_max) each reply is sent as a
concurrent ``Generate``: the engine decodes it in one batch with the others, a sequence of its own each. A client
that goes away (a closed stream, a dropped connection) has its reply stopped at once (``stop(request_id)``); its
slot is free as soon as the engine confirms, within one token, and the next request waiting takes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hmac
import json
import logging
import re
import socket
import threading
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

from aiohttp import web

from gui.core import openai_api as api
from gui.core import protocol as p
from gui.core.openai_api import ApiError, CompletionRequest
from gui.core.words import Text, Words, by_english, english, english_error, words

if TYPE_CHECKING:  # this module does not start workers and need not import the client
    from gui.services.engine_client import ClientEvent, WorkerExited

log = logging.getLogger(__name__)


# asyncio's words when it cannot listen: "error while attempting to bind on address ('127.0.0.1', 8080): address
# already in use" (the system's reason, lower-cased).
BIND_FAILED = re.compile(r"error while attempting to bind on address (?P<address>.+): (?P<reason>[^:]+)")
_BIND_REASONS: dict[str, Words] = by_english(
    words("address already in use"),
    words("cannot assign requested address"),
    words("permission denied"),
)


def bind_error(exc: OSError) -> OSError:
    """The error of a listen that failed, its ``strerror`` the same English kept translatable (``exc`` itself when
    asyncio worded it otherwise)."""
    m = BIND_FAILED.fullmatch(exc.strerror or "")
    if m is None:
        return exc
    reason = m.group("reason")
    said = words(
        "error while attempting to bind on address {address}: {reason}",
        address=m.group("address"),
        reason=_BIND_REASONS.get(reason) or reason,
    )
    return OSError(exc.errno, said)


class Engine(Protocol):
    """What the server needs of the engine: ``EngineClient`` has it."""

    def generate(
        self,
        messages: tuple[p.ChatMessage, ...],
        max_tokens: int = ...,
        sampling: p.Sampling | None = ...,
        ignore_eos: bool = ...,
        chat_format: str = ...,
        *,
        prompt: str | None = ...,
        stops: tuple[str, ...] = ...,
        concurrent: bool = ...,
        grammar: p.ReplyGrammar | None = ...,
    ) -> int: ...

    def stop(self, request_id: int) -> None: ...


@dataclass(frozen=True)
class ApiActivity:
    """What a listener hears: an API request started generating, or finished (``finished`` True).

    ``decode_tok_s``: llama.cpp's own decode rate for the reply (0 when it made fewer than two tokens).
    ``finish_reason``: the engine's ("stop", "length", "context", "cancelled"), or "error" with ``error``.
    """

    request_id: int
    endpoint: str  # "chat" or "completion"
    finished: bool
    n_prompt: int = 0
    n_gen: int = 0
    ttft_ms: float = 0.0
    decode_tok_s: float = 0.0
    finish_reason: str = ""
    error: Text = ""
    stats: p.ReplyStats | None = None  # the engine's own figures for a reply that ended with Done


ActivityListener = Callable[[ApiActivity], None]


@dataclass(frozen=True)
class _Ended:
    """The end of a reply that the engine will not report itself (its process ended, a command was refused)."""

    error: str


class _Reply:
    """One request's events, as the engine sends them, for the handler that waits on them."""

    def __init__(self, request_id: int, endpoint: str) -> None:
        self.request_id = request_id
        self.endpoint = endpoint
        self.events: asyncio.Queue[ClientEvent | _Ended] = asyncio.Queue()
        self.answered = False  # the engine said something about it
        self.ended = asyncio.Event()  # Done, GenerateFailed or _Ended reached the queue

    def put(self, event: ClientEvent | _Ended) -> None:
        self.answered = True
        self.events.put_nowait(event)
        if isinstance(event, p.Done | p.GenerateFailed | _Ended):
            self.ended.set()


@dataclass(frozen=True)
class ServedModel:
    path: str
    n_ctx: int

    @property
    def id(self) -> str:
        return Path(self.path).name.removesuffix(".gguf")

    def matches(self, name: str) -> bool:
        return name in (self.id, Path(self.path).name)


class ApiServer:
    """The API on one engine. Construct it on the loop's thread, ``await start(host, port)``, ``await stop()``.

    ``slots``: how many replies the engine generates at once (the loaded model's parallel slots, ``n_parallel``);
    more requests wait. With more than one, replies are sent as concurrent Generates that run side by side.
    ``api_key``: when set, every request but ``GET /health`` must carry ``Authorization: Bearer KEY``.
    ``cors_origin``: when set, the CORS headers that let pages from that origin call the API; none otherwise.
    ``strict_model``: only a request naming the loaded model is answered (``openai_api.STRICT_MODEL``); otherwise
    any name, or none, is.
    ``allowed_hosts``: names a request's Host header may give besides the loopback names, IP addresses and the
    address listened on (``openai_api.host_allowed``); any other is refused, so that a web page cannot reach the API
    through a name of its own that resolves here (DNS rebinding). Every POST body must be sent as
    ``application/json``, which a page cannot send to another site without the site's consent (CORS).
    """

    def __init__(
        self,
        engine: Engine,
        *,
        slots: int = 1,
        api_key: str | None = None,
        cors_origin: str | None = None,
        strict_model: bool = api.STRICT_MODEL.default,
        allowed_hosts: tuple[str, ...] = (),
    ) -> None:
        if slots < 1:
            raise ValueError("the server needs at least one slot")
        self.engine = engine
        self.slots = slots
        self.api_key = api_key or None
        self.cors_origin = cors_origin or None
        self.strict_model = strict_model
        self.allowed_hosts = frozenset(allowed_hosts)
        self._listening = api.DEFAULT_HOST
        self._own_names: frozenset[str] = frozenset()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._model_lock = threading.Lock()
        self._model: ServedModel | None = None
        self._created = int(time.time())
        self._replies: dict[int, _Reply] = {}
        self._free = asyncio.Semaphore(slots)
        self._open = asyncio.Event()  # cleared while the engine's owner uses it (hold)
        self._open.set()
        self.held = ""  # why requests wait although a slot is free ("" when they do not)
        self.tokens_out = 0  # tokens the engine generated for API replies, for a live rate (read on the loop)
        self._queued = 0
        self._listeners: list[ActivityListener] = []
        self._runner: web.AppRunner | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.app = self._build_app()

    # ---- what the window reads ----------------------------------------------------------------

    @property
    def running(self) -> int:
        """Replies the engine is generating now (one whose end came is done with the engine, even while the
        last of it is still being written to its client)."""
        return sum(1 for reply in self._replies.values() if not reply.ended.is_set())

    @property
    def queued(self) -> int:
        """Requests waiting for a slot."""
        return self._queued

    @property
    def model(self) -> ServedModel | None:
        with self._model_lock:
            return self._model

    def hold(self, reason: str) -> None:
        """From now on no new reply starts, whatever slots are free: the engine's owner (the window's chat, a
        load, a sweep) is using it; ``reason`` is said by /health. Replies under way go on. Call it on the
        loop's thread, after checking ``running`` is 0 if what comes next would cut a reply short."""
        self.held = reason
        self._open.clear()

    def release(self) -> None:
        """Requests that wait for the engine go ahead again, in the order they came."""
        self.held = ""
        self._open.set()

    def add_listener(self, listener: ActivityListener) -> None:
        """``listener(ApiActivity)`` on the loop's thread when an API request starts and when it ends."""
        self._listeners.append(listener)

    def remove_listener(self, listener: ActivityListener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def set_model(self, model_path: str | None, n_ctx: int = 0) -> None:
        """Which model the engine has loaded (None: none), for a server started after its Loaded event went by.
        The events fed later keep it up to date."""
        with self._model_lock:
            self._model = ServedModel(model_path, n_ctx) if model_path else None

    # ---- the engine's events ----------------------------------------------------------------

    def feed(self, event: ClientEvent) -> None:
        """An engine event, from any thread. The model it loads or unloads is noted at once; the rest is handed
        to the loop (dropped when the server has not started)."""
        if isinstance(event, p.Loaded):
            self.set_model(event.model_path, event.n_ctx)
        elif isinstance(event, p.Unloaded | p.LoadFailed) or _is_worker_exit(event):
            self.set_model(None)
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        with contextlib.suppress(RuntimeError):  # the loop closed in between
            loop.call_soon_threadsafe(self._dispatch, event)

    def _dispatch(self, event: ClientEvent) -> None:
        request_id = getattr(event, "request_id", None)
        if request_id is not None:
            reply = self._replies.get(request_id)
            if reply is not None:
                if isinstance(event, p.Token) and not reply.ended.is_set():
                    self.tokens_out += 1
                self._put(reply, event)
        elif _is_worker_exit(event):
            for reply in list(self._replies.values()):
                self._put(reply, _Ended(f"the engine stopped: {getattr(event, 'reason', '')}".strip()))
        elif isinstance(event, p.CommandRejected | p.Unloaded | p.LoadFailed):
            # A refused command has no request id: it can only be a Generate that got no answer yet. An unload
            # or a new load ends every reply under way (the worker sends Done for those it was generating).
            for reply in list(self._replies.values()):
                if not reply.answered or not isinstance(event, p.CommandRejected):
                    self._put(reply, _Ended(getattr(event, "error", "") or "the model was unloaded"))

    def _put(self, reply: _Reply, event: ClientEvent | _Ended) -> None:
        """Hand an event to the reply's handler; its end is told to the listeners here, where it arrives, even
        when the handler is gone (its client went away)."""
        if reply.ended.is_set():
            return
        reply.put(event)
        if isinstance(event, p.Done):
            stats = event.stats
            self._notify(
                ApiActivity(
                    reply.request_id,
                    reply.endpoint,
                    True,
                    n_prompt=stats.n_prompt,
                    n_gen=stats.n_gen,
                    ttft_ms=stats.ttft_ms,
                    decode_tok_s=stats.engine_decode_tok_s,
                    finish_reason=stats.finish_reason,
                    stats=stats,
                )
            )
        elif isinstance(event, p.GenerateFailed | _Ended):
            error = event.error
            self._notify(ApiActivity(reply.request_id, reply.endpoint, True, finish_reason="error", error=error))

    def _notify(self, activity: ApiActivity) -> None:
        for listener in list(self._listeners):
            try:
                listener(activity)
            except Exception:
                log.exception("an API activity listener failed")

    # ---- lifecycle ----------------------------------------------------------------------------

    async def start(self, host: str = "127.0.0.1", port: int = 8080) -> tuple[str, int]:
        """Listen on ``host:port`` (port 0: a free one); returns the address bound."""
        self._loop = asyncio.get_running_loop()
        self._listening = host
        if host.strip() in api.WILDCARD_HOSTS:
            name = socket.gethostname()
            self._own_names = frozenset({name, f"{name}.local"} if name else ())
        # A client that goes away cancels its handler, which stops its reply in the engine.
        self._runner = web.AppRunner(self.app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        try:
            await site.start()
        except OSError as exc:
            raise bind_error(exc) from exc
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        bound = sockets[0].getsockname() if sockets else (host, port)
        return str(bound[0]), int(bound[1])

    async def stop(self) -> None:
        """Stop listening; every reply under way is stopped in the engine."""
        for reply in list(self._replies.values()):
            self._stop_reply(reply)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        for task in list(self._tasks):
            task.cancel()
        self._loop = None

    # ---- the app ------------------------------------------------------------------------------

    def _build_app(self) -> web.Application:
        app = web.Application(client_max_size=api.MAX_BODY_BYTES, middlewares=[self._errors, self._hosts, self._auth])
        app.router.add_get("/health", self._health)
        # Each route with /v1 and without it: clients differ in whether their base URL ends in /v1.
        for prefix in ("/v1", ""):
            app.router.add_get(f"{prefix}/models", self._models)
            app.router.add_post(f"{prefix}/chat/completions", self._chat)
            app.router.add_post(f"{prefix}/completions", self._completions)
        if self.cors_origin:
            app.router.add_route("OPTIONS", "/{tail:.*}", self._preflight)
            app.on_response_prepare.append(self._cors_headers)
        return app

    @web.middleware
    async def _errors(self, request: web.Request, handler: Callable[[web.Request], Awaitable[Any]]) -> Any:
        """Every error as OpenAI's error object, whatever raised it."""
        try:
            return await handler(request)
        except ApiError as exc:
            return _error_response(exc)
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            kind = "invalid_request_error" if exc.status < 500 else "server_error"
            code = {404: "not_found", 405: "method_not_allowed", 413: "request_too_large"}.get(exc.status)
            message = exc.reason if exc.status != 413 else f"The body is larger than {api.MAX_BODY_BYTES} bytes."
            return _error_response(ApiError(exc.status, message, kind, None, code))
        except (asyncio.CancelledError, ConnectionError):
            raise
        except Exception:
            log.exception("the API failed on %s %s", request.method, request.path)
            return _error_response(ApiError(500, "The server failed on this request.", "server_error"))

    @web.middleware
    async def _hosts(self, request: web.Request, handler: Callable[[web.Request], Awaitable[Any]]) -> Any:
        given = request.headers.get("Host", "")
        if not api.host_allowed(given, self._listening, self.allowed_hosts, self._own_names):
            raise api.host_refused(given)
        return await handler(request)

    @web.middleware
    async def _auth(self, request: web.Request, handler: Callable[[web.Request], Awaitable[Any]]) -> Any:
        if self.api_key is None or request.path == "/health" or request.method == "OPTIONS":
            return await handler(request)
        given = request.headers.get("Authorization", "")
        scheme, _, key = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(key.strip().encode(), self.api_key.encode()):
            message = "Missing API key." if not given else "Incorrect API key."
            raise ApiError(401, message, "invalid_request_error", None, "invalid_api_key")
        return await handler(request)

    async def _preflight(self, request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def _cors_headers(self, request: web.Request, response: web.StreamResponse) -> None:
        assert self.cors_origin is not None
        response.headers["Access-Control-Allow-Origin"] = self.cors_origin
        response.headers["Vary"] = "Origin"
        if request.method == "OPTIONS":
            response.headers["Access-Control-Allow-Methods"] = "GET, POST, OPTIONS"
            response.headers["Access-Control-Allow-Headers"] = "Authorization, Content-Type"
            response.headers["Access-Control-Max-Age"] = "600"

    async def _health(self, request: web.Request) -> web.Response:
        model = self.model
        counts: dict[str, Any] = {"slots": self.slots, "running": self.running, "queued": self.queued}
        if self.held:
            counts["held"] = self.held
        if model is None:
            return web.json_response({"status": "no model loaded", **counts}, status=503)
        return web.json_response({"status": "ok", "model": model.id, "n_ctx": model.n_ctx, **counts})

    async def _models(self, request: web.Request) -> web.Response:
        model = self.model
        body = api.models_body(model.id, self._created) if model else {"object": "list", "data": []}
        return web.json_response(body, dumps=_dumps)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._complete(request, api.parse_chat_request(await _json_body(request)))

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        return await self._complete(request, api.parse_completion_request(await _json_body(request)))

    # ---- a reply ------------------------------------------------------------------------------

    def _served(self, request: CompletionRequest) -> ServedModel:
        model = self.model
        if model is None:
            raise ApiError(503, "No model is loaded.", "server_error", None, "model_not_loaded")
        if self.strict_model and not request.model:
            raise api.model_required()
        if self.strict_model and not model.matches(request.model):
            raise api.model_not_found(request.model, model.id)
        return model

    async def _complete(self, http: web.Request, request: CompletionRequest) -> web.StreamResponse:
        self._served(request)
        reply_id = ("chatcmpl-" if request.chat else "cmpl-") + uuid.uuid4().hex[:24]
        async with self._slot():
            model = self._served(request)  # it may have been unloaded while the request waited
            request = dataclasses.replace(request, model=model.id)  # the reply names the model that answered it
            reply = self._send(request, model)
            try:
                if request.stream:
                    return await self._stream(http, request, reply, reply_id)
                return await self._whole(request, reply, reply_id)
            finally:
                if not reply.ended.is_set():
                    self._stop_reply(reply)
                    # The slot stays taken until the engine confirms: within one token.
                    await reply.ended.wait()
                self._replies.pop(reply.request_id, None)

    @contextlib.asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        """A free slot, and the engine not held by its owner; in the order requests came."""
        self._queued += 1
        acquired = False
        try:
            await self._free.acquire()
            acquired = True
            while not self._open.is_set():  # held: the slot is kept, so the order stays
                await self._open.wait()
        except BaseException:
            if acquired:
                self._free.release()
            raise
        finally:
            self._queued -= 1
        try:
            yield
        finally:
            self._free.release()

    def _send(self, request: CompletionRequest, model: ServedModel) -> _Reply:
        # No max_tokens: as far as the context lets the reply go (a slot's context, n_ctx per sequence); the
        # engine ends it there with "context", which OpenAI's clients read as "length".
        max_tokens = request.max_tokens if request.max_tokens is not None else model.n_ctx or p.MAX_TOKENS.maximum
        try:
            # With one slot, the Generate is the engine's only reply as before (a Generate of the window's own would
            # replace it); with several, it joins the replies under way instead of interrupting them.
            request_id = self.engine.generate(
                request.messages,
                max_tokens,
                request.sampling,
                prompt=request.prompt,
                stops=request.stops,
                concurrent=self.slots > 1,
                grammar=request.grammar,
            )
        except Exception as exc:  # the engine process is not running
            message = f"The engine is not running: {english_error(exc)}"
            raise ApiError(503, message, "server_error", None, "engine_unavailable") from exc
        # Events for it are dispatched on this thread, after this returns: none can be missed.
        reply = _Reply(request_id, _endpoint(request))
        self._replies[request_id] = reply
        self._notify(ApiActivity(request_id, _endpoint(request), finished=False))
        return reply

    def _stop_reply(self, reply: _Reply) -> None:
        if reply.ended.is_set():
            return
        try:
            self.engine.stop(reply.request_id)
        except Exception as exc:  # the engine is gone: nothing will answer for it
            self._put(reply, _Ended(english_error(exc)))

    async def _events(self, request: CompletionRequest, reply: _Reply) -> AsyncIterator[ClientEvent]:
        """The reply's events up to and including Done; an engine failure becomes an ApiError."""
        while True:
            event = await reply.events.get()
            if isinstance(event, p.GenerateFailed):
                if event.kind == "context_full":
                    raise api.context_error(event.n_prompt, event.n_ctx, request.chat)
                if event.kind == "input":
                    raise api.invalid(event.error, "prompt")
                if event.kind == "grammar":  # the worker's converter or llama.cpp's parser refused it
                    raise api.invalid(f"'{request.grammar_param}': {english(event.error)}.", request.grammar_param)
                raise ApiError(500, f"The engine could not generate: {english(event.error)}", "server_error")
            if isinstance(event, _Ended):
                raise ApiError(503, f"The reply ended: {event.error}", "server_error", None, "engine_unavailable")
            if isinstance(event, p.Done) and event.stats.finish_reason not in api.FINISHED:
                # Cut short by something other than its client (the engine failed, another command replaced the
                # reply): an error, never a reply that looks whole.
                why = event.stats.finish_reason
                raise ApiError(503, f"The reply was cut short ({why}).", "server_error", None, "reply_cut_short")
            yield event
            if isinstance(event, p.Done):
                return

    async def _whole(self, request: CompletionRequest, reply: _Reply, reply_id: str) -> web.Response:
        pieces: list[str] = []
        async for event in self._events(request, reply):
            if isinstance(event, p.Token):
                pieces.append(event.text)
            elif isinstance(event, p.Done):
                stats = event.stats
                body = api.completion_body(
                    request, reply_id, "".join(pieces), stats.finish_reason, stats.n_prompt, stats.n_gen
                )
                return web.json_response(body, dumps=_dumps)
        raise AssertionError("a reply's events end with Done")

    async def _stream(
        self, http: web.Request, request: CompletionRequest, reply: _Reply, reply_id: str
    ) -> web.StreamResponse:
        created = int(time.time())
        response: web.StreamResponse | None = None
        try:
            async for event in self._events(request, reply):
                response = await self._stream_event(http, request, reply_id, created, response, event)
        except ApiError as exc:
            if response is None:
                raise
            # Headers are gone: the error is the stream's last event, as OpenAI's own streams end on one.
            await _event(response, exc.body())
            await response.write_eof()
        assert response is not None
        return response

    async def _stream_event(
        self,
        http: web.Request,
        request: CompletionRequest,
        reply_id: str,
        created: int,
        response: web.StreamResponse | None,
        event: ClientEvent,
    ) -> web.StreamResponse:
        if response is None:
            # Headers go once the prompt is read, so that a prompt the engine refuses is an HTTP error.
            response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
            await response.prepare(http)
            if request.chat:
                await _event(response, api.chunk_body(request, reply_id, created, role=True, text=""))
        if isinstance(event, p.Token) and event.text:
            await _event(response, api.chunk_body(request, reply_id, created, text=event.text))
        elif isinstance(event, p.Done):
            stats = event.stats
            final = api.chunk_body(request, reply_id, created, engine_reason=stats.finish_reason)
            if request.chat:
                final["choices"][0]["delta"] = {}
            await _event(response, final)
            if request.include_usage:
                usage = api.usage(stats.n_prompt, stats.n_gen)
                await _event(response, api.chunk_body(request, reply_id, created, token_usage=usage))
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        return response


def _endpoint(request: CompletionRequest) -> str:
    return "chat" if request.chat else "completion"


def _is_worker_exit(event: object) -> TypeGuard[WorkerExited]:
    # engine_client.WorkerExited, by name: this module does not start workers and need not import the client.
    return type(event).__name__ == "WorkerExited"


def _dumps(value: Any) -> str:
    # Model text goes out as it is, escaped by JSON; no NaN or infinity reaches a client.
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


async def _event(response: web.StreamResponse, body: dict[str, Any]) -> None:
    await response.write(b"data: " + _dumps(body).encode() + b"\n\n")


def _error_response(error: ApiError) -> web.Response:
    return web.json_response(error.body(), status=error.status, dumps=_dumps)


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


async def _json_body(request: web.Request) -> Any:
    if request.content_type != "application/json":  # the media type, its parameters (charset) aside
        raise api.media_type_refused(request.headers.get("Content-Type", ""))
    raw = await request.read()  # bounded by client_max_size: past it, aiohttp raises 413
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise api.invalid(f"The body is not valid JSON: {english_error(exc)}.") from None


__all__ = ["ActivityListener", "ApiActivity", "ApiServer", "Engine", "ServedModel"]
