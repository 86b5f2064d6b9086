"""The engine worker: a child process that owns the llama.cpp model and context.

This is the only module that imports llama_cpp. It runs in a spawned process so that anything
llama.cpp does to the process (a CUDA out-of-memory abort, a crash in a driver) ends the worker, not
the window. Commands arrive on one pipe, events leave on another. The decode loop talks to
llama.cpp's C API directly with its native sampler chain: the high-level Python generate path
costs noticeably more per token on small models.
"""

from __future__ import annotations

import codecs
import ctypes
import functools
import os
import queue
import random
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from gui.core import protocol as p
from gui.core.chat_formats import format_from_vocab
from gui.core.chat_template import (
    ChatTemplateError,
    ChosenTemplate,
    choose_template,
    render_chat,
    stand_in,
    template_for,
)
from gui.core.engine_route import cuda_version_from_int
from gui.core.ggml_types import GGML_TYPES_BY_NAME
from gui.core.llama_log import explain_failure, parse_buffers, parse_dry_run
from gui.core.params import LoadSettings, llama_gpu_layers
from gui.core.stop_text import StopText
from gui.core.system_info import backend_of, cuda_archs
from gui.core.words import Text, Words, english_error, message_of, words
from gui.services.rpc import unreachable as rpc_unreachable

# Imported in run_worker() so that importing this module stays cheap and side-effect free.
llama: Any = None

FLASH_ATTN = {"auto": -1, "off": 0, "on": 1}
# Commands that replace what the engine is doing: one waiting ends the replies being generated. A concurrent
# Generate is the exception (interrupts() below): it joins the replies under way in a free slot.
INTERRUPTING = (p.Load, p.Unload, p.Generate, p.Shutdown, p.Bench)


def interrupts(command: p.Command) -> bool:
    """Whether ``command``, waiting in the inbox, ends the replies being generated."""
    return isinstance(command, INTERRUPTING) and not (isinstance(command, p.Generate) and command.concurrent)


def _redirect_stderr(log_path: str | None) -> None:
    """Send fd 1 and 2 to the log file: llama.cpp and ggml abort messages go there, even on a crash."""
    if not log_path:
        return
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 2)
    os.dup2(fd, 1)
    os.close(fd)


def _engine_build() -> p.EngineBuild:
    info = llama.llama_print_system_info().decode("utf-8", "replace")
    # llama_supports_gpu_offload() also says yes for a build with the RPC backend (GGML_RPC=ON, every build
    # Tightfit makes), which offloads only to other machines: a GPU of this machine is a device of GPU type.
    by_type = _ggml_function("ggml_backend_dev_by_type", [ctypes.c_int], ctypes.c_void_p)
    offload = bool(llama.llama_supports_gpu_offload()) and bool(by_type(_DEV_GPU) or by_type(_DEV_IGPU))
    backend = backend_of(info, offload)
    return p.EngineBuild(
        backend=backend,
        gpu_offload=offload,
        llama_cpp_python=getattr(sys.modules.get("llama_cpp"), "__version__", "?"),
        system_info=info.strip(),
        cuda_archs=cuda_archs(info),
        cuda_runtime=_cuda_runtime() if backend == "CUDA" else None,
        ggml_version=_ggml_version(),
    )


def _cuda_runtime() -> str | None:
    """The version of the CUDA runtime this process loaded (the build's, not the driver's), read from the
    libcudart in our own memory map: no second copy is loaded, and a CPU build has none to find."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {line.split(maxsplit=5)[-1].strip() for line in maps if "libcudart" in line}
    except OSError:
        return None
    for path in sorted(paths):
        if not path.startswith("/"):
            continue
        try:
            version = ctypes.c_int(0)
            if ctypes.CDLL(path).cudaRuntimeGetVersion(ctypes.byref(version)) == 0 and version.value > 0:
                major, minor = cuda_version_from_int(version.value)
                return f"{major}.{minor}"
        except (OSError, AttributeError):
            continue
    return None


def _ggml_version() -> str:
    """ggml's version and commit as the library reports them ("0.25.3 (0c1e570)"); '' where it cannot say."""
    try:
        from llama_cpp import _ggml

        lib = _ggml.libggml
        lib.ggml_version.restype = ctypes.c_char_p
        version = (lib.ggml_version() or b"").decode("utf-8", "replace")
        lib.ggml_commit.restype = ctypes.c_char_p
        commit = (lib.ggml_commit() or b"").decode("utf-8", "replace")
    except (ImportError, OSError, AttributeError):
        return ""
    return f"{version} ({commit})" if commit and commit != "unknown" else version


class LogTap:
    """llama.cpp's log goes to stderr (the worker's log file) as before; a dry run also collects it."""

    def __init__(self) -> None:
        self.capture: list[str] | None = None
        self._partial = ""
        self.callback = llama.llama_log_callback(self._on_log)
        llama.llama_log_set(self.callback, None)

    def _on_log(self, _level: int, text: bytes, _user: Any) -> None:
        os.write(2, text)
        if self.capture is not None:
            self._partial += text.decode("utf-8", "replace")
            *complete, self._partial = self._partial.split("\n")
            self.capture.extend(complete)

    def start(self) -> None:
        self.capture, self._partial = [], ""

    def stop(self) -> list[str]:
        lines = (self.capture or []) + ([self._partial] if self._partial else [])
        self.capture = None
        return lines


class Engine:
    def __init__(self, commands: Connection, events: Connection) -> None:
        self.commands = commands
        self.events = events
        self.model: Any = None
        self.ctx: Any = None
        self.vocab: Any = None
        self.template: ChosenTemplate | None = None  # how replies are formatted unless a request says otherwise
        self.fallback: ChosenTemplate | None = None  # for a reply the model's own template fails on
        self.bos_text = ""
        self.eos_text = ""
        self.model_path = ""
        self.n_ctx = 0
        self.n_batch = 512
        self.n_threads = 0  # the load's CPU threads, restored after a benchmark that ran with others
        self.cached: list[int] = []  # tokens whose KV is in sequence 0 (the chat's prompt cache), in order
        self.n_slots = 1  # sequences that generate at once (llama.cpp's n_seq_max, at most one batch's tokens)
        self._batch: Any = None  # llama_batch_init's batch of n_batch tokens that every decode step fills
        # Commands taken from the inbox while concurrent replies were generated, for the command loop in order.
        self._deferred: deque[p.Command] = deque()
        self._slots: dict[int, _Slot] = {}  # the replies under way, by sequence, in the order they came
        # Pipe I/O runs on two small threads so the decode loop never waits on it: the reader files
        # commands (a Stop only raises a flag) and the writer sends events while the next token decodes.
        self.inbox: queue.Queue[p.Command] = queue.Queue()
        self.outbox: queue.SimpleQueue[p.Event | None] = queue.SimpleQueue()  # None: the writer ends
        self.stop_ids: set[int] = set()  # replies a Stop came for (a reply's id is never reused)
        self._interrupting = 0  # Load/Unload/Generate/Shutdown commands waiting in the inbox
        self._waiting_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read_commands, name="commands", daemon=True)
        self._writer = threading.Thread(target=self._write_events, name="events", daemon=True)
        self._reader.start()
        self._writer.start()
        self._progress_cb: Any = None
        self._one_token = (llama.llama_token * 1)()
        self.log = LogTap()
        self.totals: tuple[int, int, float, float] = (0, 0, 0.0, 0.0)
        self._piece_buf = ctypes.create_string_buffer(256)

    def send(self, message: p.Event) -> None:
        self.outbox.put(message)

    def _write_events(self) -> None:
        while (message := self.outbox.get()) is not None:
            try:
                self.events.send(p.wrap(message))
            except OSError:
                return  # the client went away

    def _read_commands(self) -> None:
        while True:
            try:
                command = p.unwrap_command(self.commands.recv())
            except (EOFError, OSError):
                command = p.Shutdown()  # the client went away
            except p.ProtocolError as exc:  # not a command of this build: refused, and the worker goes on
                self.send(p.CommandRejected(message_of(exc)))
                continue
            if isinstance(command, p.Stop):
                self.stop_ids.add(command.request_id)
                self.send(p.Acknowledged("stop", command.request_id))
                continue
            if isinstance(command, p.Unload):
                self.send(p.Acknowledged("unload"))
            if interrupts(command):
                with self._waiting_lock:
                    self._interrupting += 1
            self.inbox.put(command)
            if isinstance(command, p.Shutdown):
                return

    def close(self) -> None:
        """Flush the events still queued, then end the writer."""
        self.outbox.put(None)
        self._writer.join(5.0)

    # ---- command loop -------------------------------------------------------------------

    def serve(self) -> None:
        while True:
            command = self._deferred.popleft() if self._deferred else self.inbox.get()
            if interrupts(command):
                with self._waiting_lock:
                    self._interrupting -= 1
            if isinstance(command, p.Shutdown):
                self.unload()
                return
            try:
                self.dispatch(command)
            except Exception as exc:  # keep serving; the client shows the message
                self.send(p.CommandRejected(f"{type(exc).__name__}: {english_error(exc)}"))

    def dispatch(self, command: p.Command) -> None:
        if isinstance(command, p.Load):
            try:
                self.load(command)
            except Exception as exc:  # whatever went wrong, the window must hear that this load ended
                self.send(p.LoadFailed(command.model_path, f"{type(exc).__name__}: {english_error(exc)}"))
        elif isinstance(command, p.Unload):
            self.unload()
            self.send(p.Unloaded())
        elif isinstance(command, p.Generate):
            self.generate(command)
        elif isinstance(command, p.GetStats):
            self.send(self.stats())
        elif isinstance(command, p.DryRun):
            self.send(self.dry_run(command))
        elif isinstance(command, p.Bench):
            self.bench(command)
        elif isinstance(command, p.Stop):
            pass  # nothing is running; a late stop is harmless
        else:
            self.send(p.CommandRejected(f"unknown command {type(command).__name__}"))

    # ---- load / unload --------------------------------------------------------------------

    def unload(self) -> None:
        if self._batch is not None:
            llama.llama_batch_free(self._batch)
            self._batch = None
        if self.ctx is not None:
            llama.llama_free(self.ctx)
            self.ctx = None
        if self.model is not None:
            llama.llama_model_free(self.model)
            self.model = None
        self.cached = []
        self.n_slots = 1
        self.vocab = None
        self.totals = (0, 0, 0.0, 0.0)

    def load(self, command: p.Load) -> None:
        self.unload()
        started = time.perf_counter()
        try:
            settings = LoadSettings.from_dict(command.settings).validated()
        except ValueError as exc:
            self.send(p.LoadFailed(command.model_path, message_of(exc)))
            return
        if not os.path.isfile(command.model_path):
            self.send(p.LoadFailed(command.model_path, words("no such file: {path}", path=command.model_path)))
            return
        # llama.cpp aborts the process on an RPC server it cannot reach: say which, in words, before loading.
        if unreachable_rpc := _rpc_problem(settings):
            self.send(p.LoadFailed(command.model_path, unreachable_rpc))
            return

        last_sent = [-1.0]

        def on_progress(fraction: float, _user: Any) -> bool:
            # Called by llama.cpp while tensors load; a few dozen updates are plenty.
            if fraction - last_sent[0] >= 0.02 or fraction >= 1.0:
                last_sent[0] = fraction
                self.send(p.LoadProgress(float(fraction)))
            return True

        self._progress_cb = llama.llama_progress_callback(on_progress)
        mparams = model_params(settings)
        mparams.progress_callback = self._progress_cb
        self.log.start()  # what llama.cpp says while loading is the cause, should the load fail
        load_log: list[str] = []
        try:
            model = llama.llama_model_load_from_file(command.model_path.encode(), mparams)
            if not model:
                failed = words("llama.cpp could not load the model")
                self.send(p.LoadFailed(command.model_path, _in_words(failed, self.log.stop())))
                return
            n_layer = int(llama.llama_model_n_layer(model))
            ctx = llama.llama_init_from_model(model, context_params(settings))
            if not ctx:
                llama.llama_model_free(model)
                failed = words(
                    "llama.cpp could not create the context (usually not enough memory for this context size)"
                )
                self.send(p.LoadFailed(command.model_path, _in_words(failed, self.log.stop())))
                return
        finally:
            if self.log.capture is not None:
                load_log = self.log.stop()  # on success: the buffer sizes it allocated

        self.model, self.ctx = model, ctx
        self.vocab = llama.llama_model_get_vocab(model)
        self.model_path = command.model_path
        # What one conversation can use: with parallel slots the KV cache is split between sequences.
        self.n_ctx = int(llama.llama_n_ctx_seq(ctx))
        self.n_batch = settings.n_batch
        self.n_threads = settings.n_threads
        # Every slot's next token fits one batch beside the prompt chunks of slots still reading theirs.
        self.n_slots = max(1, min(int(llama.llama_n_seq_max(ctx)), self.n_batch))
        self._batch = llama.llama_batch_init(self.n_batch, 0, 1)
        self.choose_format()
        self.bos_text = self.special_text(llama.llama_vocab_bos(self.vocab))
        self.eos_text = self.special_text(llama.llama_vocab_eos(self.vocab))
        assert self.template is not None
        self.send(
            p.Loaded(
                model_path=command.model_path,
                n_ctx=self.n_ctx,
                n_layer=n_layer,
                n_gpu_layers=settings.n_gpu_layers,
                load_ms=(time.perf_counter() - started) * 1000,
                chat_format=self.template.format,
                chat_format_reason=self.template.reason,
                buffers_mib=parse_buffers(load_log),
            )
        )

    def stats(self) -> p.EngineStats:
        totals = self.totals
        return p.EngineStats(
            model_path=self.model_path if self.ctx is not None else "",
            n_ctx=self.n_ctx if self.ctx is not None else 0,
            n_cached_tokens=len(self.cached) + sum(s.n_past for s in self._slots.values() if not s.keeps_cache),
            n_prompt_tokens_total=totals[0],
            n_decoded_tokens_total=totals[1],
            prompt_ms_total=totals[2],
            decode_ms_total=totals[3],
            rss_mib=_rss_bytes() / (1 << 20),
        )

    def dry_run(self, command: p.DryRun) -> p.DryRunResult:
        started = time.perf_counter()

        def result(ok: bool, error: Text = "", weights: int = 0, n_params: int = 0) -> p.DryRunResult:
            figures = parse_dry_run(lines)
            return p.DryRunResult(
                request_id=command.request_id,
                model_path=command.model_path,
                ok=ok,
                error=error,
                weights_bytes=weights,
                n_params=n_params,
                kv_mib=figures.kv_mib,
                recurrent_mib=figures.recurrent_mib,
                compute_mib=figures.compute_mib,
                output_mib=figures.output_mib,
                elapsed_ms=(time.perf_counter() - started) * 1000,
                log=tuple(figures.lines),
            )

        lines: list[str] = []
        try:
            settings = LoadSettings.from_dict(command.settings).validated()
        except ValueError as exc:
            return result(False, message_of(exc))
        if unreachable_rpc := _rpc_problem(settings):
            return result(False, unreachable_rpc)
        mparams = model_params(settings)
        mparams.no_alloc = True  # metadata only: no weights read, nothing allocated
        mparams.load_mode = llama.LLAMA_LOAD_MODE_NONE
        self.log.start()
        model = ctx = None
        try:
            model = llama.llama_model_load_from_file(command.model_path.encode(), mparams)
            if not model:
                lines = self.log.stop()
                return result(False, "llama.cpp could not read this model (see the log)")
            weights, n_params = int(llama.llama_model_size(model)), int(llama.llama_model_n_params(model))
            ctx = llama.llama_init_from_model(model, context_params(settings))
            lines = self.log.stop()
            if not ctx:
                return result(False, "llama.cpp could not plan the context for these settings", weights, n_params)
            return result(True, "", weights, n_params)
        finally:
            if self.log.capture is not None:
                self.log.stop()
            if ctx:
                llama.llama_free(ctx)
            if model:
                llama.llama_model_free(model)

    # ---- prompt ---------------------------------------------------------------------------

    def special_text(self, token: int) -> str:
        if token < 0:
            return ""
        buf = ctypes.create_string_buffer(64)
        n = llama.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, True)
        return buf.raw[: max(n, 0)].decode("utf-8", "replace")

    def choose_format(self) -> None:
        """How this model's replies are formatted: what llama.cpp says of its template, else the format
        whose turn markers its vocabulary has, else ChatML (gui.core.chat_template.choose_template)."""
        vocab_format = format_from_vocab(self.is_special_token)
        self.template = choose_template(
            _text(llama.llama_model_chat_template(self.model, None)),
            tool_use=_text(llama.llama_model_chat_template(self.model, b"tool_use")),
            vocab_format=vocab_format,
            builtin_names=_builtin_template_names(),
        )
        self.fallback = stand_in("The model's chat template failed", vocab_format)

    def is_special_token(self, text: str) -> bool:
        """Whether ``text`` is one control or user-defined token of the vocabulary. Tokenizing it alone,
        special tokens parsed, into room for a few tokens: bounded whatever the vocabulary's size."""
        raw = text.encode()
        room = 4
        tokens = (llama.llama_token * room)()
        n = llama.llama_tokenize(self.vocab, raw, len(raw), tokens, room, False, True)
        if n != 1:  # several tokens (or more than there was room for: negative) is ordinary text
            return False
        token = tokens[0]
        special = llama.LLAMA_TOKEN_ATTR_CONTROL | llama.LLAMA_TOKEN_ATTR_USER_DEFINED
        return bool(llama.llama_vocab_get_attr(self.vocab, token) & special) and (
            llama.llama_vocab_get_text(self.vocab, token) == raw
        )

    def apply_template(
        self, rid: int, messages: tuple[p.ChatMessage, ...], chosen: ChosenTemplate
    ) -> tuple[str, ChosenTemplate]:
        """The prompt, and the format it is in. If the model's own template fails on this conversation, the
        format that stands in for it (the vocabulary's, else ChatML) is used, and the user is told."""
        try:
            return render_chat(chosen.text, messages, bos_token=self.bos_text, eos_token=self.eos_text), chosen
        except ChatTemplateError as exc:
            fallback = self.fallback
            if chosen.is_fallback or fallback is None:
                raise
            said = words(
                "{error} This reply was formatted as {format} instead.",
                error=message_of(exc),
                format=fallback.label,
            )
            self.send(p.Notice(rid, said))
            return render_chat(fallback.text, messages, bos_token=self.bos_text, eos_token=self.eos_text), fallback

    def tokenize(self, text: str) -> list[int]:
        raw = text.encode()
        # A template that writes the BOS token itself must not get a second one from the tokenizer.
        add_special = not (self.bos_text and text.startswith(self.bos_text))
        capacity = len(raw) + 8
        tokens = (llama.llama_token * capacity)()
        n = llama.llama_tokenize(self.vocab, raw, len(raw), tokens, capacity, add_special, True)
        if n < 0:
            capacity = -n
            tokens = (llama.llama_token * capacity)()
            n = llama.llama_tokenize(self.vocab, raw, len(raw), tokens, capacity, add_special, True)
        return list(tokens[:n])

    def piece(self, token: int) -> bytes:
        n = llama.llama_token_to_piece(self.vocab, token, self._piece_buf, len(self._piece_buf), 0, False)
        if n < 0:
            self._piece_buf = ctypes.create_string_buffer(-n)
            n = llama.llama_token_to_piece(self.vocab, token, self._piece_buf, -n, 0, False)
        return self._piece_buf.raw[:n]

    def reuse_prefix(self, prompt: list[int]) -> int:
        """Keep the KV of the longest common prefix with the last request; return how many tokens."""
        common = 0
        for a, b in zip(self.cached, prompt, strict=False):
            if a != b:
                break
            common += 1
        common = min(common, len(prompt) - 1)  # at least one token must be computed for logits
        memory = llama.llama_get_memory(self.ctx)
        if common < len(self.cached) and not llama.llama_memory_seq_rm(memory, 0, common, -1):
            # Recurrent state cannot be rolled back part-way: start over.
            llama.llama_memory_clear(memory, True)
            common = 0
        self.cached = prompt[:common]
        return common

    # ---- generation -----------------------------------------------------------------------

    def make_sampler(self, s: p.Sampling, grammar: Any = None) -> Any:
        """The reply's sampler chain; ``grammar`` (a grammar sampler, which the chain then owns) comes first, so
        that every later step sees only the tokens the grammar allows."""
        chain = llama.llama_sampler_chain_init(llama.llama_sampler_chain_default_params())
        add = llama.llama_sampler_chain_add
        if grammar is not None:
            add(chain, grammar)
        # top-k first: the penalty sampler is slow on the whole vocabulary. 0 keeps every token, as its help says
        # (the API's default, OpenAI's sampling from the whole distribution).
        if s.top_k > 0:
            add(chain, llama.llama_sampler_init_top_k(s.top_k))
        if s.repeat_penalty != 1.0 or s.frequency_penalty != 0.0 or s.presence_penalty != 0.0:
            n_vocab = llama.llama_vocab_n_tokens(self.vocab)
            penalties = (s.repeat_penalty, s.frequency_penalty, s.presence_penalty)
            add(chain, llama.llama_sampler_init_penalties(n_vocab, s.repeat_last_n, *penalties))
        if s.temperature <= 0:
            add(chain, llama.llama_sampler_init_greedy())
            return chain
        add(chain, llama.llama_sampler_init_top_p(s.top_p, 1))
        add(chain, llama.llama_sampler_init_min_p(s.min_p, 1))
        add(chain, llama.llama_sampler_init_temp(s.temperature))
        add(chain, llama.llama_sampler_init_dist(s.seed))
        return chain

    def grammar_sampler(self, command: p.Generate) -> Any:
        """llama.cpp's grammar sampler for the request's grammar (a JSON schema turned into GBNF by llama-cpp-python's
        converter first); None, said in a GenerateFailed of kind "grammar", when the schema cannot be expressed or the
        grammar does not parse."""
        from llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf

        wanted = command.grammar
        assert wanted is not None
        rid = command.request_id
        try:
            gbnf = json_schema_to_gbnf(wanted.text) if wanted.kind == "json_schema" else wanted.text
            grammar = LlamaGrammar.from_string(gbnf, verbose=False)
        except RecursionError:
            self.send(p.GenerateFailed(rid, words("the JSON schema is nested too deeply"), kind="grammar"))
            return None
        except Exception as exc:  # the converter says what it cannot express in asserts and lookups as well
            reason = f"{type(exc).__name__}: {english_error(exc)}"[:500]
            self.send(
                p.GenerateFailed(
                    rid,
                    words("the JSON schema cannot be expressed as a grammar: {reason}", reason=reason),
                    kind="grammar",
                )
            )
            return None
        self.log.start()  # llama.cpp logs why a grammar does not parse
        sampler = llama.llama_sampler_init_grammar(self.vocab, grammar._grammar.encode(), grammar._root.encode())
        said = " ".join(line.strip() for line in self.log.stop() if line.strip())
        if not sampler:
            error = words("the grammar does not parse: {reason}", reason=said[:500] or words("llama.cpp refused it"))
            self.send(p.GenerateFailed(rid, error, kind="grammar"))
            return None
        return sampler

    def stop_requested(self, request_id: int) -> bool:
        """A Stop for this reply, or a command that replaces what the engine is doing, ends the reply.

        A dry run or a stats request waits for the reply instead: asking for figures must not cut it off.
        """
        return request_id in self.stop_ids or self._interrupting > 0

    def _context_full(self, rid: int, n_prompt: int) -> p.GenerateFailed:
        return p.GenerateFailed(
            rid,
            words(
                "the conversation is {n_prompt} tokens, the context holds {n_ctx}", n_prompt=n_prompt, n_ctx=self.n_ctx
            ),
            kind="context_full",
            n_prompt=n_prompt,
            n_ctx=self.n_ctx,
        )

    def prepare_prompt(self, command: p.Generate) -> tuple[list[int], tuple[str, ...]] | None:
        """The prompt's tokens and the format's end-of-turn texts; None (GenerateFailed sent) if it cannot be
        laid out. A plain ``prompt`` is continued as it is, in no format."""
        rid = command.request_id
        if command.prompt is not None:
            return self.tokenize(command.prompt), ()
        try:
            chosen = self.template if not command.chat_format else template_for(command.chat_format)
        except ValueError as exc:
            self.send(p.GenerateFailed(rid, message_of(exc), kind="template"))
            return None
        assert chosen is not None
        try:
            rendered, chosen = self.apply_template(rid, command.messages, chosen)
        except ChatTemplateError as exc:
            self.send(p.GenerateFailed(rid, message_of(exc), kind="template"))
            return None
        return self.tokenize(rendered), chosen.stops

    def generate(self, first: p.Generate) -> None:
        """Generate replies in one decode loop, as llama-server runs its slots: every step decodes one llama_batch
        holding the next token of each reply that is generating and, in what room the batch has left, prompt
        tokens of replies still reading theirs; each reply is sampled from its own output in the batch by its own
        sampler chain.

        A chat reply (and any reply where the load has one slot) runs alone on sequence 0, beside the KV of the
        previous reply's prompt that it reuses (the prompt cache). A concurrent one takes a free sequence of its
        own, and while it runs, concurrent Generates waiting in the inbox join in the sequences left; a reply
        that ends frees its sequence at once (its KV removed) for the next. This returns when no reply is left,
        or when a command that replaces what the engine does is waiting (every reply then ends, cancelled)."""
        if self.ctx is None:
            self.send(p.GenerateFailed(first.request_id, words("no model is loaded")))
            return
        together = first.concurrent and self.n_slots > 1
        slots = self._slots
        try:
            self._admit(first, together)
            while True:
                if self._interrupting > 0:
                    for slot in list(slots.values()):
                        self._end(slot, "cancelled")
                    return
                if together:
                    while len(slots) < self.n_slots and (command := self._next_concurrent()) is not None:
                        self._admit(command, together)
                if not slots:
                    return
                self._step()
        except Exception as exc:  # every reply under way ends, and hears that it failed
            error = f"{type(exc).__name__}: {english_error(exc)}"
            for slot in list(slots.values()):
                self._end(slot, failed=p.GenerateFailed(slot.command.request_id, error, kind="engine"))
            raise
        finally:
            for slot in list(slots.values()):  # only after BaseException: every reply must hear its end
                self._end(slot, "cancelled")

    def _next_concurrent(self) -> p.Generate | None:
        """The next command from the inbox if it is a concurrent Generate; stats are answered on the way. Any
        other command is set aside for the command loop, and nothing after it is taken: commands keep their order."""
        while not self._deferred:
            try:
                command = self.inbox.get_nowait()
            except queue.Empty:
                return None
            if isinstance(command, p.Generate) and command.concurrent:
                return command
            if isinstance(command, p.GetStats):
                self.send(self.stats())
                continue
            self._deferred.append(command)
        return None

    def checked_prompt(self, command: p.Generate) -> tuple[list[int], tuple[str, ...]] | None:
        """The request's prompt tokens and its format's stop texts; None, said in an event, when it has none or
        is longer than the context."""
        prepared = self.prepare_prompt(command)
        if prepared is None:
            return None
        prompt, _format_stops = prepared
        if not prompt:
            self.send(p.GenerateFailed(command.request_id, words("the prompt is empty"), kind="input"))
            return None
        if len(prompt) >= self.n_ctx:
            self.send(self._context_full(command.request_id, len(prompt)))
            return None
        return prepared

    def _admit(self, command: p.Generate, together: bool) -> None:
        """Give the request its sequence, or refuse it in an event of its own (the others go on). ``together``: a
        free sequence of its own; otherwise sequence 0 and what its prompt cache holds of this prompt."""
        received = time.perf_counter()
        try:
            prepared = self.checked_prompt(command)
        except Exception as exc:  # this request's text (a lone surrogate, ...): its failure alone, the others go on
            self.send(p.GenerateFailed(command.request_id, f"{type(exc).__name__}: {english_error(exc)}", kind="input"))
            return
        if prepared is None:
            return
        prompt, format_stops = prepared
        grammar = None
        if command.grammar is not None and (grammar := self.grammar_sampler(command)) is None:
            return
        if together:
            # Sequence 0 last: it keeps the chat's prompt cache while fewer replies than slots run.
            seq = next(s for s in (*range(1, self.n_slots), 0) if s not in self._slots)
            if seq == 0:
                self.cached = []
            llama.llama_memory_seq_rm(llama.llama_get_memory(self.ctx), seq, -1, -1)
            reused = 0
        else:
            seq, reused = 0, self.reuse_prefix(prompt)
        # The format's end-of-turn text ends the reply too, for a model that writes it as ordinary tokens.
        stops = () if command.ignore_eos else format_stops + command.stops
        sampler = self.make_sampler(command.sampling, grammar)
        slot = _Slot(seq, command, prompt, StopText(stops), sampler, received)
        slot.n_past = slot.reused = reused
        slot.keeps_cache = not together
        self._slots[seq] = slot

    def _step(self) -> None:
        """One llama_decode for every reply under way, then a token sampled for each whose output it holds."""
        batch, n = self._batch, 0
        slots = sorted(self._slots.values(), key=_by_seq)  # llama.cpp splits a sorted batch best
        for slot in slots:
            slot.chunk = 0
            if slot.token is not None:
                slot.i_batch = n
                n = _batch_add(batch, n, slot.token, slot.n_past, slot.seq, True)
            else:
                slot.i_batch = -1
        n_gen_tokens = n
        for slot in self._slots.values():  # prompts in the order requests came, as much as the batch has room for
            if slot.token is not None or slot.n_gen or n >= self.n_batch:
                continue
            start = slot.n_past
            chunk = slot.prompt[start : start + self.n_batch - n]
            last = len(slot.prompt) - 1
            for offset, token in enumerate(chunk):
                if start + offset == last:
                    slot.i_batch = n
                n = _batch_add(batch, n, token, start + offset, slot.seq, start + offset == last)
            slot.chunk = len(chunk)
        batch.n_tokens = n
        # Timed up to llama_synchronize: a backend may still be computing when llama_decode returns.
        started = time.perf_counter()
        status = int(llama.llama_decode(self.ctx, batch))
        llama.llama_synchronize(self.ctx)
        done = time.perf_counter()
        if status != 0:
            self._decode_failed(status, [s for s in slots if s.i_batch >= 0 or s.chunk])
            return
        self._count_step(n - n_gen_tokens, n_gen_tokens, done - started)
        for slot in slots:
            if slot.token is not None:
                slot.n_past += 1
                slot.n_decoded += 1
                slot.decode_s += done - started
                if slot.keeps_cache:
                    self.cached.append(slot.token)
            elif slot.chunk:
                if slot.keeps_cache:
                    self.cached.extend(slot.prompt[slot.n_past : slot.n_past + slot.chunk])
                slot.n_past += slot.chunk
                if self.stop_requested(slot.command.request_id):
                    self._end(slot, "cancelled")
                    continue
                if slot.n_past == len(slot.prompt):
                    slot.prompt_done = done
                    self.send(p.PromptRead(slot.command.request_id, len(slot.prompt)))
                    if slot.command.max_tokens <= 0:
                        self._end(slot, "length")
                        continue
            if slot.i_batch >= 0:
                self._sample(slot)

    def _sample(self, slot: _Slot) -> None:
        command = slot.command
        token = int(llama.llama_sampler_sample(slot.sampler, self.ctx, slot.i_batch))
        if not command.ignore_eos and llama.llama_vocab_is_eog(self.vocab, token):
            self._end(slot, "stop")
            return
        text = slot.stop_text.feed(slot.decoder.decode(self.piece(token)))
        slot.last = time.perf_counter()
        if slot.n_gen == 0:
            slot.first = slot.last
        self.send(p.Token(command.request_id, text, slot.n_gen))
        slot.n_gen += 1
        if slot.stop_text.stopped:
            self._end(slot, "stop")
        elif self.stop_requested(command.request_id):
            self._end(slot, "cancelled")
        elif slot.n_past >= self.n_ctx:
            self._end(slot, "context")
        elif slot.n_gen >= command.max_tokens:
            self._end(slot, "length")
        else:
            slot.token = token

    def _decode_failed(self, status: int, involved: list[_Slot]) -> None:
        """No room in the KV cache (status 1, where slots share one cache): the reply holding the most of it ends
        and the others go on. Any other failure ends every reply the batch held."""
        if status == 1 and involved:
            involved = [max(involved, key=lambda slot: slot.n_past if slot.token is not None else len(slot.prompt))]
        for slot in involved:
            if slot.token is not None or slot.n_gen:
                self._end(slot, "context" if status == 1 else f"error (llama_decode status {status})")
            elif status == 1:
                self._end(slot, failed=self._context_full(slot.command.request_id, len(slot.prompt)))
            else:
                failed = p.GenerateFailed(slot.command.request_id, _prompt_decode_failed(status), kind="decode")
                self._end(slot, failed=failed)

    def _end(self, slot: _Slot, finish: str = "", failed: p.GenerateFailed | None = None) -> None:
        """The reply's last text and Done (or ``failed``); the slot is free. Its sequence's KV is removed, unless
        it is the prompt cache of a reply that ran (a prompt that could not be read leaves no cache)."""
        del self._slots[slot.seq]
        llama.llama_sampler_free(slot.sampler)
        if failed is not None or not slot.keeps_cache:
            llama.llama_memory_seq_rm(llama.llama_get_memory(self.ctx), slot.seq, -1, -1)
            if slot.keeps_cache:
                self.cached = []
        rid = slot.command.request_id
        if failed is not None:
            self.send(failed)
            return
        # Text held back as the possible start of a stop text was not one: it belongs to the reply.
        tail = slot.stop_text.feed(slot.decoder.decode(b"", final=True)) + slot.stop_text.flush()
        if tail:
            self.send(p.Token(rid, tail, slot.n_gen))
        received = slot.received
        first = slot.first if slot.first is not None else received
        last = slot.last if slot.last is not None else received
        rate = slot.n_decoded / slot.decode_s if slot.decode_s > 0 and slot.n_gen > 1 else 0.0
        stats = self._stats(slot.prompt, slot.reused, slot.n_gen, received, first, last, rate, slot.prompt_done, finish)
        self.send(p.Done(rid, stats))

    def _count_step(self, n_prompt: int, n_gen: int, seconds: float) -> None:
        """Fold one batch into the totals since the load, its time shared by its prompt and generated tokens."""
        n = n_prompt + n_gen
        if n == 0:
            return
        ms = seconds * 1000
        n_p, n_e, t_p, t_e = self.totals
        self.totals = (n_p + n_prompt, n_e + n_gen, t_p + ms * n_prompt / n, t_e + ms * n_gen / n)

    # ---- benchmark ------------------------------------------------------------------------

    def bench(self, command: p.Bench) -> None:
        """One llama-bench test on the loaded context (tools/llama-bench/llama-bench.cpp: test_prompt, test_gen
        and its repetition loop). Everything a repetition decodes is built before its clock starts: the timed
        region is llama_decode calls and the llama_synchronize that ends them, nothing else."""
        rid = command.request_id
        if self.ctx is None:
            self.send(p.BenchFailed(rid, words("no model is loaded"), kind="no_model"))
            return
        n_prompt, n_gen, n_depth = command.n_prompt, command.n_gen, command.n_depth
        if min(n_prompt, n_gen, n_depth) < 0 or n_prompt + n_gen == 0 or command.reps < 1 or command.n_threads < 0:
            error = words(
                "nothing to measure: pp {n_prompt}, tg {n_gen}, depth {n_depth}, {reps} repetitions",
                n_prompt=n_prompt,
                n_gen=n_gen,
                n_depth=n_depth,
                reps=command.reps,
            )
            self.send(p.BenchFailed(rid, error, kind="input"))
            return
        needed = n_depth + n_prompt + n_gen
        if needed > self.n_ctx:
            error = words(
                "the test needs a context of {needed} tokens, the loaded one holds {n_ctx}",
                needed=needed,
                n_ctx=self.n_ctx,
            )
            self.send(p.BenchFailed(rid, error, kind="context"))
            return
        threads = command.n_threads or self.n_threads
        memory = llama.llama_get_memory(self.ctx)
        tokens = _BenchTokens(self.vocab, self.n_batch)
        samples: list[int] = []
        self.cached = []  # the prompt cache is overwritten from here on
        llama.llama_set_n_threads(self.ctx, threads, threads)
        try:
            if command.warmup:
                llama.llama_memory_clear(memory, False)
                # llama-bench's warm-up: the whole prompt, then one generated token.
                self._bench_prompt(tokens.prompt(n_prompt), words("the warm-up"), stop_for=rid)
                self._bench_gen(tokens.gen(min(n_gen, 1)), words("the warm-up"))
            depth_state: Any = None
            for index in range(command.reps):
                if self.stop_requested(rid):
                    raise _BenchStopped
                llama.llama_memory_clear(memory, False)
                if n_depth:
                    # As llama-bench: the depth is decoded once and its state restored for the later repetitions.
                    restored = depth_state is not None and llama.llama_state_seq_set_data(
                        self.ctx, depth_state, len(depth_state), 0
                    )
                    if not restored:
                        self._bench_prompt(tokens.prompt(n_depth), words("the depth"), stop_for=rid)
                        depth_state = (ctypes.c_uint8 * llama.llama_state_seq_get_size(self.ctx, 0))()
                        llama.llama_state_seq_get_data(self.ctx, depth_state, len(depth_state), 0)
                prompt, gen = tokens.prompt(n_prompt), tokens.gen(n_gen)
                where = words("repetition {number}", number=index + 1)
                started = time.perf_counter_ns()
                self._bench_prompt(prompt, where)
                self._bench_gen(gen, where)
                elapsed = time.perf_counter_ns() - started
                samples.append(elapsed)
                self.send(p.BenchSample(rid, index, command.reps, elapsed))
            stopped = False
        except _BenchStopped:
            stopped = True
        except _BenchDecodeFailed as exc:
            self.send(p.BenchFailed(rid, message_of(exc), kind="decode"))
            return
        finally:
            llama.llama_memory_clear(memory, True)
            self.cached = []
            llama.llama_set_n_threads(self.ctx, self.n_threads, self.n_threads)
        self.send(p.BenchDone(rid, n_prompt, n_gen, n_depth, threads, tuple(samples), stopped))

    def _bench_prompt(self, batches: list[Any], where: Text, stop_for: int | None = None) -> None:
        """Decode prepared batches, then wait for the backend (test_prompt). ``stop_for``: an untimed run (warm-up,
        depth) that a Stop for that request ends between batches."""
        if not batches:
            return
        for batch in batches:
            status = int(llama.llama_decode(self.ctx, batch))
            if status != 0:
                raise _BenchDecodeFailed(
                    words("llama_decode failed during {where} (status {status})", where=where, status=status)
                )
            if stop_for is not None and self.stop_requested(stop_for):
                raise _BenchStopped
        llama.llama_synchronize(self.ctx)

    def _bench_gen(self, tokens: list[int], where: Text) -> None:
        """Single-token decodes, each waited for (test_gen)."""
        one = self._one_token
        batch_one = llama.llama_batch_get_one(one, 1)
        for token in tokens:
            one[0] = token
            status = int(llama.llama_decode(self.ctx, batch_one))
            if status != 0:
                raise _BenchDecodeFailed(
                    words("llama_decode failed during {where} (status {status})", where=where, status=status)
                )
            llama.llama_synchronize(self.ctx)

    @staticmethod
    def _stats(
        prompt: list[int],
        reused: int,
        n_gen: int,
        received: float,
        first: float,
        last: float,
        decode_rate: float,
        prompt_done: float | None = None,
        finish: str = "cancelled",
    ) -> p.ReplyStats:
        prompt_end = prompt_done if prompt_done is not None else last
        return p.ReplyStats(
            n_prompt=len(prompt),
            n_prompt_evaluated=len(prompt) - reused,
            n_gen=n_gen,
            ttft_ms=(first - received) * 1000 if n_gen else 0.0,
            prompt_ms=(prompt_end - received) * 1000,
            gen_ms=(last - first) * 1000,
            engine_decode_tok_s=decode_rate,
            finish_reason=finish,
        )


class _Slot:
    """One reply under way: its sequence, its prompt, its sampler chain and its progress."""

    def __init__(
        self, seq: int, command: p.Generate, prompt: list[int], stop_text: StopText, sampler: Any, received: float
    ) -> None:
        self.seq = seq
        self.command = command
        self.prompt = prompt
        self.stop_text = stop_text
        self.sampler = sampler
        self.received = received
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.keeps_cache = False  # its KV stays when it ends: the prompt cache of sequence 0 (Engine.cached)
        self.reused = 0  # prompt tokens whose KV was already there (from the prompt cache)
        self.n_past = 0  # tokens of this sequence in the KV cache (the prompt's first, then the reply's)
        self.token: int | None = None  # sampled, to be decoded in the next batch (None while reading the prompt)
        self.i_batch = -1  # where this reply's output is in the batch being decoded (-1: none there)
        self.chunk = 0  # prompt tokens of this reply in the batch being decoded
        self.n_gen = 0
        self.n_decoded = 0  # generated tokens decoded (the last one sampled never is)
        self.decode_s = 0.0  # time of the batches those were decoded in
        self.prompt_done: float | None = None
        self.first: float | None = None
        self.last: float | None = None


def _by_seq(slot: _Slot) -> int:
    return slot.seq


def _batch_add(batch: Any, n: int, token: int, pos: int, seq: int, output: bool) -> int:
    """Put one token of one sequence at index ``n`` of a llama_batch_init batch; returns the next index."""
    batch.token[n] = token
    batch.pos[n] = pos
    batch.n_seq_id[n] = 1
    batch.seq_id[n][0] = seq
    batch.logits[n] = output
    return n + 1


class _BenchStopped(Exception):
    """A Stop (or a command that replaces what the engine does) ends a benchmark between repetitions."""


class _BenchDecodeFailed(Exception):
    pass


class _BenchTokens:
    """The tokens a benchmark decodes, drawn as llama-bench draws them: at random from the vocabulary (seeded,
    so every run decodes the same), the first a BOS where the model adds one."""

    def __init__(self, vocab: Any, n_batch: int) -> None:
        self.n_vocab = int(llama.llama_vocab_n_tokens(vocab))
        self.bos = int(llama.llama_vocab_bos(vocab)) if llama.llama_vocab_get_add_bos(vocab) else None
        self.n_batch = n_batch
        self.random = random.Random(1)

    def _draw(self, n: int) -> list[int]:
        return [self.random.randrange(self.n_vocab) for _ in range(n)]

    def prompt(self, n: int) -> list[Any]:
        """``n`` tokens as batches of at most n_batch, each ready for llama_decode (arrays kept alive by them)."""
        tokens = self._draw(n)
        if tokens and self.bos is not None:
            tokens[0] = self.bos
        batches = []
        for start in range(0, n, self.n_batch):
            chunk = tokens[start : start + self.n_batch]
            array = (llama.llama_token * len(chunk))(*chunk)
            batch = llama.llama_batch_get_one(array, len(chunk))
            batch._tokens_array = array  # the batch points into it
            batches.append(batch)
        return batches

    def gen(self, n: int) -> list[int]:
        tokens = self._draw(n)
        if tokens and self.bos is not None:
            tokens[0] = self.bos
        return tokens


def _text(raw: bytes | None) -> str | None:
    return raw.decode("utf-8", "replace") if raw else None


@functools.cache
def _builtin_template_names() -> frozenset[str]:
    """The names of llama.cpp's built-in chat formats: what ``llama_model_chat_template`` may return instead
    of a template. Asked once, for as many names as llama.cpp says it has."""
    room = 128
    while True:
        names = (ctypes.c_char_p * room)()
        n = int(llama.llama_chat_builtin_templates(names, room))
        if n <= room:
            return frozenset(name.decode() for name in names[: max(n, 0)] if name)
        room = n


def _in_words(failed: Text, log_lines: list[str]) -> Text:
    """Why a load failed: what llama.cpp's log says, in words, or ``failed`` when it says nothing useful."""
    failure = explain_failure(log_lines, None)
    if failure.kind == "unknown" and not failure.summary.startswith("llama.cpp reported"):
        return words("{failed} (see the engine log)", failed=failed)
    return failure.summary


def _prompt_decode_failed(status: int) -> Words:
    return words("llama_decode failed on the prompt (status {status})", status=status)


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


# The expert tensors of a mixture-of-experts block, as llama.cpp's --cpu-moe and --n-cpu-moe name them
# (common/common.h: LLM_FFN_EXPS_REGEX); llama.cpp searches each tensor's name for it.
EXPERT_TENSORS = r"\.ffn_(up|down|gate|gate_up)_(ch|)exps"


def _numbers_below(n: int) -> str:
    """A regular expression matching exactly the decimal numbers 0 .. n-1, one alternative per ten."""
    tens: dict[str, int] = {}
    for i in range(n):
        prefix, last = divmod(i, 10)
        key = str(prefix) if prefix else ""
        tens[key] = last
    return "|".join(f"{p}[0-{last}]" for p, last in tens.items())


def expert_pattern(settings: LoadSettings) -> str | None:
    """The tensor-name pattern whose tensors stay in host memory, or None when none do.

    llama.cpp's --n-cpu-moe N adds one pattern per block; one pattern naming the N block numbers keeps
    the same tensors on the CPU while llama.cpp compiles one regular expression per tensor, not N.
    """
    if settings.cpu_moe:
        return EXPERT_TENSORS
    if settings.n_cpu_moe > 0:
        return rf"^blk\.({_numbers_below(settings.n_cpu_moe)}){EXPERT_TENSORS}"
    return None


class _BufferTypeOverride(ctypes.Structure):
    # llama.h: struct llama_model_tensor_buft_override (llama-cpp-python declares the field, not the type)
    _fields_ = (("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p))


def _cpu_buffer_type() -> int:
    """ggml's CPU buffer type, which llama-cpp-python does not bind.

    llama.cpp recognises it by its address, so it must come from the ggml that libllama uses. The
    wheel's library files are copies rather than links, so opening libggml-base under another file
    name would load a second ggml; the symbol is looked up through libllama's own handle instead,
    which also searches the libraries it was linked with (where a platform does not, the library is
    opened by the name the wheel gives it beside libllama).
    """
    try:
        function = llama.llama_cpp._lib.ggml_backend_cpu_buffer_type
    except AttributeError:
        from llama_cpp._ctypes_extensions import load_shared_library

        lib_dir = Path(llama.__file__).parent / "lib"
        function = load_shared_library("ggml-base", lib_dir).ggml_backend_cpu_buffer_type
    function.argtypes = []
    function.restype = ctypes.c_void_p
    return int(function())


def _expert_overrides(settings: LoadSettings) -> Any:
    pattern = expert_pattern(settings)
    if pattern is None:
        return None
    # NULL-terminated, as llama.cpp walks it until a pattern is NULL.
    return (_BufferTypeOverride * 2)(_BufferTypeOverride(pattern.encode(), _cpu_buffer_type()))


def _load_mode(use_mmap: bool) -> int:
    return int(llama.LLAMA_LOAD_MODE_MMAP if use_mmap else llama.LLAMA_LOAD_MODE_NONE)


def _ggml_type(name: str) -> int:
    return GGML_TYPES_BY_NAME[name.upper()].type_id


def _split_mode(mode: str) -> int:
    modes = {"none": llama.LLAMA_SPLIT_MODE_NONE, "layer": llama.LLAMA_SPLIT_MODE_LAYER}
    return int(modes.get(mode, llama.LLAMA_SPLIT_MODE_ROW))


def _tensor_split(settings: LoadSettings) -> Any:
    """llama.cpp reads llama_max_devices() floats; NULL (all zero) splits by free memory."""
    values = settings.tensor_split_values
    if not values:
        return None
    return (ctypes.c_float * max(len(values), int(llama.llama_max_devices())))(*values)


def _ggml_function(name: str, argtypes: list[Any], restype: Any) -> Any:
    """A ggml function llama-cpp-python does not bind, looked up through libllama's handle (as for the CPU
    buffer type above: the ggml that libllama uses, which links the RPC backend when built with GGML_RPC=ON)."""
    function = getattr(llama.llama_cpp._lib, name)
    function.argtypes = argtypes
    function.restype = restype
    return function


# ggml-backend.h: enum ggml_backend_dev_type
_DEV_GPU, _DEV_IGPU = 1, 2


def _rpc_problem(settings: LoadSettings) -> Text:
    """Why the load's RPC servers cannot be used, in words; '' when they can (or there are none)."""
    if not settings.rpc_servers:
        return ""
    if not llama.llama_supports_rpc():
        return words("this engine was built without llama.cpp's RPC backend: rebuild it with make engine (GGML_RPC=ON)")
    return rpc_unreachable(settings.rpc_servers)


def _devices(settings: LoadSettings) -> Any:
    """With RPC servers, llama.cpp's device list for the load: each server's devices first, then this machine's
    GPUs (or its integrated GPUs where it has no discrete one), NULL-terminated, as llama.cpp's --rpc gives it
    (common/arg.cpp: add_rpc_devices, ggml_backend_rpc_add_server; src/llama.cpp: llama_prepare_model_devices
    puts RPC servers first). The servers are not registered globally, so a later load without them does not
    use them. Without RPC servers, NULL: llama.cpp's own choice."""
    endpoints = settings.rpc_endpoints
    if not endpoints:
        return None
    # A server that goes away mid-reply ends this process in ggml_abort ("Remote RPC server crashed or returned
    # malformed response", ggml-rpc.cpp: RPC_STATUS_ASSERT). Without its gdb backtrace of this process, which
    # says nothing about the other machine, that message is the log's last line and the failure report reads it.
    os.environ.setdefault("GGML_NO_BACKTRACE", "1")
    vp = ctypes.c_void_p
    add_server = _ggml_function("ggml_backend_rpc_add_server", [ctypes.c_char_p], vp)
    reg_dev_count = _ggml_function("ggml_backend_reg_dev_count", [vp], ctypes.c_size_t)
    reg_dev_get = _ggml_function("ggml_backend_reg_dev_get", [vp, ctypes.c_size_t], vp)
    dev_count = _ggml_function("ggml_backend_dev_count", [], ctypes.c_size_t)
    dev_get = _ggml_function("ggml_backend_dev_get", [ctypes.c_size_t], vp)
    dev_type = _ggml_function("ggml_backend_dev_type", [vp], ctypes.c_int)
    devices: list[int] = []
    for host, port in endpoints:
        reg = add_server(f"{host}:{port}".encode())
        if reg:  # a server with no devices adds none (llama.cpp registers nothing for it either)
            devices += [reg_dev_get(reg, i) for i in range(int(reg_dev_count(reg)))]
    local = [(dev, int(dev_type(dev))) for i in range(int(dev_count())) if (dev := dev_get(i))]
    gpus = [dev for dev, kind in local if kind == _DEV_GPU]
    devices += gpus or [dev for dev, kind in local if kind == _DEV_IGPU]
    return (vp * (len(devices) + 1))(*devices, None)


# How each declared load setting (gui.core.params) reaches llama.cpp: for each field of llama.cpp's
# parameter structs, the settings it follows and its value for given settings. tests/test_params.py
# checks that every declared setting is followed by some field.
Rule = tuple[tuple[str, ...], Callable[[LoadSettings], Any]]


def _from(key: str, translate: Callable[[Any], Any] = int) -> Rule:
    """A field that follows one setting: that setting's value, translated."""
    return (key,), lambda settings: translate(getattr(settings, key))


MODEL_FIELDS: dict[str, Rule] = {
    "n_gpu_layers": _from("n_gpu_layers", lambda v: llama_gpu_layers(v, None)),
    "load_mode": _from("use_mmap", _load_mode),
    "tensor_buft_overrides": (("n_cpu_moe", "cpu_moe"), _expert_overrides),
    "split_mode": _from("split_mode", _split_mode),
    "main_gpu": _from("main_gpu"),
    "tensor_split": (("tensor_split",), _tensor_split),
    "devices": (("rpc_servers",), _devices),
}
CONTEXT_FIELDS: dict[str, Rule] = {
    "n_ctx": _from("n_ctx"),
    "n_batch": _from("n_batch"),
    "n_ubatch": _from("n_ubatch"),
    "n_seq_max": _from("n_parallel"),
    "n_threads": _from("n_threads"),
    "n_threads_batch": _from("n_threads"),  # prompt processing uses the same threads
    "flash_attn_type": _from("flash_attn", FLASH_ATTN.__getitem__),
    "type_k": _from("cache_type_k", _ggml_type),
    "type_v": _from("cache_type_v", _ggml_type),
    "swa_full": _from("swa_full", bool),
    "kv_unified": _from("kv_unified", bool),
    "op_offload": _from("op_offload", bool),
    "n_outputs_max": (("n_outputs_max", "n_parallel"), lambda settings: settings.outputs_max),
}


def _apply(params: Any, fields: dict[str, Rule], settings: LoadSettings) -> Any:
    for field, (_, value_of) in fields.items():
        value = value_of(settings)
        if isinstance(value, ctypes.Array):
            # A pointer field: llama.cpp reads the array while it loads, so the struct holds on to it.
            setattr(params, f"_{field}_array", value)
            kind = {f[0]: f[1] for f in type(params)._fields_}[field]
            value = ctypes.addressof(value) if kind is ctypes.c_void_p else ctypes.cast(value, kind)
        setattr(params, field, value)
    return params


def model_params(settings: LoadSettings) -> Any:
    return _apply(llama.llama_model_default_params(), MODEL_FIELDS, settings)


def context_params(settings: LoadSettings) -> Any:
    params = _apply(llama.llama_context_default_params(), CONTEXT_FIELDS, settings)
    params.no_perf = False
    return params


def run_worker(commands: Connection, events: Connection, log_path: str | None, cpus: list[int] | None = None) -> None:
    """Process entry point (spawned). ``cpus``: the CPUs to run on (a NUMA pin), set before llama.cpp
    starts a thread, so every thread it starts inherits them."""
    global llama
    # Ctrl+C in a terminal reaches the whole process group: the client decides what it means (a benchmark stops
    # after its repetition, a CLI closes the engine); the worker ends when told to or when its pipe closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _redirect_stderr(log_path)
    if cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except OSError as exc:  # CPUs taken offline since: run unpinned rather than not at all
            print(f"tightfit: could not pin the engine to CPUs {cpus}: {english_error(exc)}", file=sys.stderr)
    import llama_cpp

    llama = llama_cpp
    llama.llama_backend_init()
    engine = Engine(commands, events)
    engine.send(p.Hello(p.PROTOCOL_VERSION, _engine_build(), os.getpid()))
    try:
        engine.serve()
    finally:
        engine.unload()
        engine.close()
        events.close()
