"""`tightfit serve MODEL`: the OpenAI-compatible API on one engine, without the window."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gui.core import openai_api
from gui.core import protocol as p
from gui.core.openai_api import check_listen
from gui.core.params import LoadSettings
from gui.core.words import english, english_error
from gui.services.api_server import ApiActivity, ApiServer
from gui.services.engine_client import EngineClient, WorkerExited
from gui.services.models import describe_file

LOAD_TIMEOUT_S = 600
API_KEY_ENV = "TIGHTFIT_API_KEY"


def add_serve_parser(sub: Any, add_sizing_flags: Callable[[argparse.ArgumentParser], None]) -> None:
    serve = sub.add_parser(
        "serve",
        help="an OpenAI-compatible API on the model (GET /v1/models, POST /v1/chat/completions, /v1/completions)",
        description="Load MODEL once in the engine and serve it as an OpenAI-compatible API: GET /v1/models, "
        "POST /v1/chat/completions and /v1/completions (streamed or not; each also without /v1), GET /health. Any "
        "model name is answered by MODEL unless --strict-model. Requests queue; with "
        "--parallel N they are answered N at once (one parallel slot each, decoded together), else one at a time. "
        "It listens on 127.0.0.1 only unless --host names another address AND --allow-remote is given.",
    )
    serve.add_argument("model", type=Path, metavar="MODEL.gguf")
    serve.add_argument(
        "--host",
        default=openai_api.DEFAULT_HOST,
        help=f"address to listen on (default: {openai_api.DEFAULT_HOST}, this machine)",
    )
    serve.add_argument(
        "--port",
        type=int,
        default=openai_api.DEFAULT_PORT,
        help=f"port to listen on (default: {openai_api.DEFAULT_PORT}; 0 picks a free one)",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host other than a loopback address: anyone who can reach it can use the model (set an API key)",
    )
    serve.add_argument(
        "--api-key",
        default=None,
        metavar="KEY",
        help=f"require 'Authorization: Bearer KEY' on every request but /health (default: ${API_KEY_ENV}, else none)",
    )
    serve.add_argument(
        "--cors",
        default=None,
        metavar="ORIGIN",
        help="let web pages from ORIGIN (e.g. http://localhost:3000, or *) call the API; no CORS headers otherwise",
    )
    serve.add_argument(
        openai_api.ALLOWED_HOST_FLAG,
        dest="allowed_hosts",
        action="append",
        default=[],
        metavar="NAME",
        help=openai_api.ALLOWED_HOST_HELP,
    )
    strict = openai_api.STRICT_MODEL
    serve.add_argument(strict.flag, dest=strict.key, action="store_true", default=strict.default, help=strict.help)
    add_sizing_flags(serve)


def run_serve(args: argparse.Namespace, settings: LoadSettings) -> int:
    model_path = str(args.model)
    if not args.model.is_file():
        raise SystemExit(f"tightfit: error: no such model file: {model_path}")
    entry = describe_file(args.model)
    if entry.error:
        raise SystemExit(f"tightfit: error: {english(entry.error)}")
    try:
        check_listen(args.host, args.port, args.allow_remote, "add --allow-remote")
    except ValueError as exc:
        raise SystemExit(f"tightfit: error: {english_error(exc)}") from exc
    api_key = args.api_key if args.api_key is not None else os.environ.get(API_KEY_ENV) or None
    if not openai_api.is_loopback(args.host) and not api_key:
        print("tightfit: warning: serving to other machines without an API key", file=sys.stderr)
    strict = bool(getattr(args, openai_api.STRICT_MODEL.key))
    hosts = tuple(args.allowed_hosts)
    return asyncio.run(_serve(model_path, settings, args.host, args.port, api_key, args.cors, strict, hosts))


async def _serve(
    model_path: str,
    settings: LoadSettings,
    host: str,
    port: int,
    api_key: str | None,
    cors: str | None,
    strict_model: bool = openai_api.STRICT_MODEL.default,
    allowed_hosts: tuple[str, ...] = (),
) -> int:
    loop = asyncio.get_running_loop()
    lifecycle: asyncio.Queue[Any] = asyncio.Queue()
    client = EngineClient()
    server = ApiServer(
        client,
        slots=settings.n_parallel,
        api_key=api_key,
        cors_origin=cors,
        strict_model=strict_model,
        allowed_hosts=allowed_hosts,
    )
    server.add_listener(_report)

    def listener(event: Any) -> None:  # the client's reader thread
        server.feed(event)
        if isinstance(event, p.Hello | p.Loaded | p.LoadFailed | WorkerExited):
            loop.call_soon_threadsafe(lifecycle.put_nowait, event)

    client.set_listener(listener)
    ended = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, ended.set)
    client.start()
    try:
        loaded = await _until_loaded(client, lifecycle, model_path, settings)
        if loaded is None:
            return 1
        bound_host, bound_port = await server.start(host, port)
        shown = f"[{bound_host}]" if ":" in bound_host else bound_host
        print(
            f"Serving {server.model.id if server.model else model_path} (context {loaded.n_ctx}, "
            f"{server.slots} slot{'s' if server.slots > 1 else ''}) at http://{shown}:{bound_port}/v1",
            file=sys.stderr,
            flush=True,
        )
        died = asyncio.ensure_future(_until_exit(lifecycle))
        stopped = asyncio.ensure_future(ended.wait())
        await asyncio.wait({died, stopped}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if died.done():
            print(f"tightfit: error: {died.result()}", file=sys.stderr)
            return 1
        died.cancel()
        return 0
    finally:
        await server.stop()
        await loop.run_in_executor(None, client.close)


async def _until_loaded(
    client: EngineClient, lifecycle: asyncio.Queue[Any], model_path: str, settings: LoadSettings
) -> p.Loaded | None:
    async with asyncio.timeout(LOAD_TIMEOUT_S):
        while True:
            event = await lifecycle.get()
            if isinstance(event, p.Hello):
                client.load(model_path, settings)
            elif isinstance(event, p.Loaded):
                return event
            elif isinstance(event, p.LoadFailed):
                print(f"tightfit: error: {english(event.error)}", file=sys.stderr)
                return None
            elif isinstance(event, WorkerExited):
                print(f"tightfit: error: {_exit_words(event)}", file=sys.stderr)
                return None


async def _until_exit(lifecycle: asyncio.Queue[Any]) -> str:
    while True:
        event = await lifecycle.get()
        if isinstance(event, WorkerExited):
            return _exit_words(event)


def _exit_words(event: WorkerExited) -> str:
    return english(event.reason) + (f" {english(event.failure.summary)}" if event.failure else "")


def _report(activity: ApiActivity) -> None:
    if not activity.finished:
        return
    if activity.error:
        print(f"{activity.endpoint} #{activity.request_id}: {english(activity.error)}", file=sys.stderr, flush=True)
        return
    print(
        f"{activity.endpoint} #{activity.request_id}: {activity.n_prompt} prompt + {activity.n_gen} tokens, "
        f"{activity.decode_tok_s:.1f} tok/s, {activity.finish_reason}",
        file=sys.stderr,
        flush=True,
    )
