"""`tightfit chat MODEL --prompt TEXT [--json]`: one reply through the window's engine."""

from __future__ import annotations

import argparse
import json
import sys

from gui.commands.flags import sampling_from_args
from gui.core import protocol as p
from gui.core.chat import format_stats
from gui.core.params import LoadSettings
from gui.core.protocol import MAX_TOKENS
from gui.core.words import english, english_error
from gui.services.engine_client import EngineUnavailable, SyncEngine
from gui.services.models import describe_file

LOAD_TIMEOUT_S = 600
TOKEN_TIMEOUT_S = 120


def run_chat(args: argparse.Namespace, settings: LoadSettings) -> int:
    model = args.model
    if not model.is_file():
        raise SystemExit(f"tightfit: error: no such model file: {model}")
    entry = describe_file(model)
    if entry.error:
        raise SystemExit(f"tightfit: error: {english(entry.error)}")
    max_tokens = MAX_TOKENS.default if args.max_tokens is None else args.max_tokens
    try:
        MAX_TOKENS.check(max_tokens)
        sampling = sampling_from_args(args)
    except ValueError as exc:
        raise SystemExit(f"tightfit: error: {english_error(exc)}") from exc

    messages = ((p.ChatMessage("system", args.system),) if args.system else ()) + (p.ChatMessage("user", args.prompt),)
    pieces: list[str] = []
    try:
        with SyncEngine() as engine:
            engine.client.load(model, settings)
            loaded = engine.expect(p.Loaded, LOAD_TIMEOUT_S)
            request = engine.client.generate(messages, max_tokens, sampling)
            while True:
                event = engine.next_event(TOKEN_TIMEOUT_S)
                if isinstance(event, p.Token) and event.request_id == request:
                    pieces.append(event.text)
                    if not args.json:
                        sys.stdout.write(event.text)
                        sys.stdout.flush()
                elif isinstance(event, p.Done) and event.request_id == request:
                    stats = event.stats
                    break
                elif isinstance(event, p.GenerateFailed):
                    raise EngineUnavailable(event.error)
            build = engine.client.build
    except EngineUnavailable as exc:
        raise SystemExit(f"tightfit: error: {english_error(exc)}") from exc

    if not args.json:
        sys.stdout.write("\n")
        print(format_stats(stats), file=sys.stderr)
        return 0
    json.dump(
        {
            "model": str(model),
            "text": "".join(pieces),
            "n_prompt": stats.n_prompt,
            "n_gen": stats.n_gen,
            "ttft_ms": round(stats.ttft_ms, 3),
            "prompt_tok_s": round(stats.prompt_tok_s, 3),
            "gen_tok_s": round(stats.gen_tok_s, 3),
            "engine_decode_tok_s": round(stats.engine_decode_tok_s, 3),
            "finish_reason": stats.finish_reason,
            "n_ctx": loaded.n_ctx,
            "chat_format": loaded.chat_format,
            "chat_format_reason": english(loaded.chat_format_reason),
            "settings": settings.to_dict(),
            "engine": {
                "backend": build.backend if build else None,
                "gpu_offload": build.gpu_offload if build else None,
                "llama_cpp_python": build.llama_cpp_python if build else None,
            },
        },
        sys.stdout,
        indent=2,
    )
    sys.stdout.write("\n")
    return 0
