"""Messages between the window (or CLI) and the engine worker process.

Every message is a frozen dataclass sent inside an Envelope that carries the protocol version, so a
worker from another build is refused with a clear message instead of misbehaving. ``Command`` is the union
of what the client sends, ``Event`` of what the worker sends back; a message outside them is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard, get_args

from gui.core.specs import FloatSpec, IntSpec, specs_of
from gui.core.words import Text, mark, words

PROTOCOL_VERSION = 10


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system", "user" or "assistant"
    content: str


# llama.cpp's "pick a random seed" value.
RANDOM_SEED = 0xFFFFFFFF


@dataclass(frozen=True)
class Sampling:
    """llama.cpp's native sampler chain settings. temperature 0 means greedy."""

    temperature: float = FloatSpec(
        label=mark("Temperature", "params"),
        flag="--temperature",
        minimum=0.0,
        maximum=5.0,
        step=0.05,
        default=0.7,
        help=mark("0 picks the likeliest token every time.", "params"),
    ).field()
    top_k: int = IntSpec(
        label=mark("Top-k", "params"),
        flag="--top-k",
        minimum=0,
        maximum=1000,
        default=40,
        help=mark("Keep only the k likeliest tokens (0: all).", "params"),
    ).field()
    top_p: float = FloatSpec(
        label=mark("Top-p", "params"),
        flag="--top-p",
        minimum=0.0,
        maximum=1.0,
        default=0.95,
        help=mark("Keep the likeliest tokens up to this total probability.", "params"),
    ).field()
    min_p: float = FloatSpec(
        label=mark("Min-p", "params"),
        flag="--min-p",
        minimum=0.0,
        maximum=1.0,
        default=0.05,
        help=mark("Drop tokens below this fraction of the likeliest.", "params"),
    ).field()
    repeat_penalty: float = FloatSpec(
        label=mark("Repeat penalty", "params"),
        flag="--repeat-penalty",
        minimum=0.5,
        maximum=2.0,
        default=1.1,
        help=mark("Above 1 discourages repeating.", "params"),
    ).field()
    repeat_last_n: int = IntSpec(
        label=mark("Repeat window", "params"),
        flag="--repeat-last-n",
        minimum=0,
        maximum=4096,
        default=64,
        panel=False,
        help=mark("How many recent tokens the repeat penalty looks at.", "params"),
    ).field()
    presence_penalty: float = FloatSpec(
        label=mark("Presence penalty", "params"),
        flag="--presence-penalty",
        minimum=-2.0,
        maximum=2.0,
        default=0.0,
        panel=False,
        help=mark("Above 0 discourages any token already in the repeat window, however often it came.", "params"),
    ).field()
    frequency_penalty: float = FloatSpec(
        label=mark("Frequency penalty", "params"),
        flag="--frequency-penalty",
        minimum=-2.0,
        maximum=2.0,
        default=0.0,
        panel=False,
        help=mark("Above 0 discourages a token in proportion to how often it came in the repeat window.", "params"),
    ).field()
    seed: int = IntSpec(
        label=mark("Seed", "params"),
        flag="--seed",
        minimum=0,
        maximum=RANDOM_SEED,
        default=RANDOM_SEED,
        help=words(
            "Same seed, same settings, same prompt: the same reply ({seed} picks one at random).", seed=RANDOM_SEED
        ),
    ).field()

    def validated(self) -> Sampling:
        """Raise ValueError naming the first setting out of range."""
        for spec in specs_of(Sampling):
            spec.check(getattr(self, spec.key))
        return self


MAX_TOKENS = IntSpec(
    key="max_tokens",
    label=mark("Max tokens", "params"),
    flag="--max-tokens",
    minimum=1,
    maximum=32768,
    default=512,
    help=mark("The reply stops after this many tokens.", "params"),
)


# ---- commands: client -> worker -------------------------------------------------------------


@dataclass(frozen=True)
class ReplyGrammar:
    """What a reply may be, token by token, through llama.cpp's grammar sampler: ``text`` is a GBNF grammar as it is
    ("gbnf"), or a JSON schema as JSON text ("json_schema") that the worker turns into one. A grammar that does not
    parse, or a schema it cannot express, fails the request (GenerateFailed, kind "grammar")."""

    kind: Literal["gbnf", "json_schema"]
    text: str


@dataclass(frozen=True)
class Load:
    model_path: str
    settings: dict[str, Any]  # LoadSettings.to_dict()


@dataclass(frozen=True)
class Unload:
    pass


@dataclass(frozen=True)
class Generate:
    request_id: int
    messages: tuple[ChatMessage, ...]
    max_tokens: int = MAX_TOKENS.default
    sampling: Sampling = field(default_factory=Sampling)
    ignore_eos: bool = False  # benchmarks only: generate exactly max_tokens (no end of turn, no stop text)
    # The chat format to lay the conversation out in (a name in gui.core.chat_formats.FORMATS); empty: the one
    # chosen at load. Per request, so that picking another takes effect at the next reply, without a reload.
    chat_format: str = ""
    # Text to continue as it is, without a chat format (an API's plain completion); None: lay out ``messages``.
    prompt: str | None = None
    # More texts that end the reply (not shown), beside the format's end-of-turn marker.
    stops: tuple[str, ...] = ()
    # False (the chat's replies): this reply replaces whatever the engine is generating, on sequence 0 with its
    # prompt cache. True (the API's): it joins the replies under way in a free parallel slot (a sequence of its
    # own, its KV removed when it ends) and interrupts none; it waits in order while every slot is taken, or
    # while the engine does something else. With one slot it is generated as a chat reply would be.
    concurrent: bool = False
    # The reply keeps to this grammar (an API's structured output); None: any text.
    grammar: ReplyGrammar | None = None


@dataclass(frozen=True)
class Stop:
    request_id: int


@dataclass(frozen=True)
class Shutdown:
    pass


@dataclass(frozen=True)
class DryRun:
    """Ask llama.cpp what a load would allocate, without reading weights or allocating anything."""

    request_id: int
    model_path: str
    settings: dict[str, Any]  # LoadSettings.to_dict()


@dataclass(frozen=True)
class GetStats:
    pass


@dataclass(frozen=True)
class Bench:
    """Time the loaded context as llama.cpp's llama-bench does: one test, ``reps`` timed repetitions.

    Each repetition clears the KV cache, decodes ``n_depth`` tokens untimed, then times ``n_prompt`` tokens in
    batches of the load's batch size followed by ``n_gen`` single-token decodes (random tokens: no tokenizing,
    no sampling), up to llama_synchronize. One untimed warm-up comes first. A Stop for this request ends the
    test after the repetition under way; BenchDone then has fewer samples than ``reps``. The context's
    prompt cache is gone afterwards (the next reply reads its whole prompt).
    """

    request_id: int
    n_prompt: int = 512
    n_gen: int = 0
    n_depth: int = 0
    reps: int = 5
    # The CPU threads for this test (llama_set_n_threads, no reload); 0: the load's. The load's are restored after.
    n_threads: int = 0
    warmup: bool = True


# Every command the client sends: the worker takes nothing else.
Command = Load | Unload | Generate | Stop | Shutdown | DryRun | GetStats | Bench

# ---- events: worker -> client ---------------------------------------------------------------


@dataclass(frozen=True)
class EngineBuild:
    backend: str  # "CPU", "CUDA", "Metal", ...
    gpu_offload: bool  # False: n_gpu_layers is silently ignored by this build
    llama_cpp_python: str
    system_info: str
    # The compute capabilities a CUDA build was compiled for, from llama.cpp's system information: a card
    # whose capability is missing here cannot run the kernels. () for other builds.
    cuda_archs: tuple[int, ...] = ()
    cuda_runtime: str | None = None  # the CUDA runtime the build loaded ("12.4"); None without CUDA
    ggml_version: str = ""  # "0.25.3 (0c1e570)": the llama.cpp (ggml) the package was built from

    def describe(self) -> Text:
        offload = words("GPU offload supported") if self.gpu_offload else words("no GPU offload")
        version = self.llama_cpp_python
        if not self.cuda_archs:
            return words(
                "llama.cpp {backend} build (llama-cpp-python {version}), {offload}",
                backend=self.backend,
                version=version,
                offload=offload,
            )
        return words(
            "llama.cpp {backend} build (llama-cpp-python {version}), {offload}, for compute capability {archs}",
            backend=self.backend,
            version=version,
            offload=offload,
            archs=", ".join(f"{a // 10}.{a % 10}" for a in self.cuda_archs),
        )


@dataclass(frozen=True)
class Hello:
    protocol_version: int
    build: EngineBuild
    pid: int


@dataclass(frozen=True)
class LoadProgress:
    fraction: float


@dataclass(frozen=True)
class Loaded:
    model_path: str
    n_ctx: int
    n_layer: int
    n_gpu_layers: int
    load_ms: float
    # How replies are formatted unless a request says otherwise: "model" (the file's own template) or the
    # name of a format in gui.core.chat_formats.FORMATS.
    chat_format: str
    chat_format_reason: Text = ""  # why, in words for the user; empty when the file's template is used as it is
    # What llama.cpp logged allocating, by buffer type ("CUDA0": model + KV + compute + output MiB), from
    # llama_log.parse_buffers: its own figures to set beside the plan and the driver's reading.
    buffers_mib: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class LoadFailed:
    model_path: str
    error: Text


@dataclass(frozen=True)
class Unloaded:
    pass


@dataclass(frozen=True)
class Token:
    request_id: int
    # Complete UTF-8 text: a character split across tokens arrives with its last token, and text that may be
    # the start of the format's end-of-turn marker arrives once it is known not to be (may be empty).
    text: str
    index: int  # 0-based position of this token in the reply


@dataclass(frozen=True)
class ReplyStats:
    n_prompt: int  # prompt tokens in the request
    n_prompt_evaluated: int  # of those, how many had to be computed (the rest came from the cache)
    n_gen: int
    ttft_ms: float  # request received -> first token sampled
    prompt_ms: float
    gen_ms: float  # first token -> last token
    engine_decode_tok_s: float  # llama.cpp's own figure: decoded tokens / decode time
    finish_reason: str  # "stop" (end of turn), "length", "context", "cancelled"

    @property
    def prompt_tok_s(self) -> float:
        return self.n_prompt_evaluated / (self.prompt_ms / 1000) if self.prompt_ms > 0 else 0.0

    @property
    def gen_tok_s(self) -> float:
        # Rate between tokens: n-1 intervals after the first token.
        return (self.n_gen - 1) / (self.gen_ms / 1000) if self.n_gen > 1 and self.gen_ms > 0 else 0.0


@dataclass(frozen=True)
class PromptRead:
    """The prompt is in the context and the reply begins: how many tokens it takes."""

    request_id: int
    n_prompt: int


@dataclass(frozen=True)
class Done:
    request_id: int
    stats: ReplyStats


@dataclass(frozen=True)
class GenerateFailed:
    request_id: int
    error: Text
    # "context_full" (n_prompt, n_ctx say by how much), "template", "decode", "input" (an empty prompt, or text
    # that cannot be prepared), "grammar" (its grammar does not parse, or its schema cannot be expressed as one),
    # "engine" (the engine failed mid-reply: every reply under way ends with it)
    kind: str = ""
    n_prompt: int = 0
    n_ctx: int = 0


@dataclass(frozen=True)
class DryRunResult:
    """llama.cpp's own figures for a load, read from its dry run (no_alloc). Sizes in MiB as it logs them."""

    request_id: int
    model_path: str
    ok: bool
    error: Text  # empty when ok
    weights_bytes: int  # llama_model_size: all weight tensors, exact
    n_params: int
    kv_mib: float  # every KV cache (an interleaved-SWA model has two)
    recurrent_mib: float
    compute_mib: dict[str, float]  # by buffer type, e.g. {"CPU": 98.25, "CUDA0": 412.5}
    output_mib: dict[str, float]
    elapsed_ms: float
    log: tuple[str, ...]  # the lines the figures came from


@dataclass(frozen=True)
class EngineStats:
    """The worker's state: what is loaded and what llama.cpp has counted since the load."""

    model_path: str  # empty when nothing is loaded
    n_ctx: int
    n_cached_tokens: int  # tokens whose KV is in the context now
    n_prompt_tokens_total: int  # llama.cpp's perf counters since the load
    n_decoded_tokens_total: int
    prompt_ms_total: float
    decode_ms_total: float
    rss_mib: float  # the worker process's resident memory


@dataclass(frozen=True)
class Notice:
    """Something the user should know about a reply that still goes ahead (e.g. a template fallback)."""

    request_id: int
    text: Text


@dataclass(frozen=True)
class BenchSample:
    """One timed repetition of a Bench, sent as soon as it is measured."""

    request_id: int
    index: int  # 0-based repetition
    reps: int  # repetitions asked for
    elapsed_ns: int  # prompt and generation, the KV cache's clearing and the depth not counted


@dataclass(frozen=True)
class BenchDone:
    """A Bench ended: every timed repetition, in order. ``stopped``: a Stop (or a command that replaces what the
    engine does) ended it early, so there may be fewer samples than asked for, even none."""

    request_id: int
    n_prompt: int
    n_gen: int
    n_depth: int
    n_threads: int  # the threads it ran with
    samples_ns: tuple[int, ...]
    stopped: bool = False

    @property
    def samples_tok_s(self) -> tuple[float, ...]:
        """Tokens per second of each repetition, as llama-bench counts them: (n_prompt + n_gen) / time."""
        n_tokens = self.n_prompt + self.n_gen
        return tuple(n_tokens * 1e9 / ns for ns in self.samples_ns if ns > 0)


@dataclass(frozen=True)
class BenchFailed:
    request_id: int
    error: Text
    kind: str = ""  # "no_model", "context" (the test needs more context than the load has), "decode", "input"


@dataclass(frozen=True)
class CommandRejected:
    error: Text


@dataclass(frozen=True)
class Acknowledged:
    """The worker received a Stop or Unload: sent by its command reader at once, while decoding goes on.
    A worker that does not acknowledge within seconds is not answering at all, and the window ends it."""

    command: str  # "stop" or "unload"
    request_id: int | None = None  # the reply a Stop is for


# Every event the worker sends: the client takes nothing else (tests/test_protocol.py checks the worker).
Event = (
    Hello
    | LoadProgress
    | Loaded
    | LoadFailed
    | Unloaded
    | Token
    | PromptRead
    | Notice
    | Done
    | GenerateFailed
    | DryRunResult
    | EngineStats
    | CommandRejected
    | Acknowledged
    | BenchSample
    | BenchDone
    | BenchFailed
)

COMMANDS: tuple[type, ...] = get_args(Command)
EVENTS: tuple[type, ...] = get_args(Event)


def is_command(message: object) -> TypeGuard[Command]:
    return isinstance(message, COMMANDS)


def is_event(message: object) -> TypeGuard[Event]:
    return isinstance(message, EVENTS)


@dataclass(frozen=True)
class Envelope:
    version: int
    payload: Command | Event


def wrap(message: Command | Event) -> Envelope:
    return Envelope(PROTOCOL_VERSION, message)


class ProtocolError(RuntimeError):
    pass


def unwrap(envelope: object) -> Command | Event:
    if not isinstance(envelope, Envelope):
        raise ProtocolError(f"unexpected message from the engine: {type(envelope).__name__}")
    if envelope.version != PROTOCOL_VERSION:
        raise ProtocolError(
            f"engine speaks protocol v{envelope.version}, this window speaks v{PROTOCOL_VERSION}; "
            "reinstall Tightfit so both come from the same version"
        )
    return envelope.payload


def unwrap_command(envelope: object) -> Command:
    """What the client sent; ProtocolError if it is not a command of this protocol."""
    message = unwrap(envelope)
    if not is_command(message):
        raise ProtocolError(f"not an engine command: {type(message).__name__}")
    return message


def unwrap_event(envelope: object) -> Event:
    """What the worker sent; ProtocolError if it is not an event of this protocol."""
    message = unwrap(envelope)
    if not is_event(message):
        raise ProtocolError(f"not an engine event: {type(message).__name__}")
    return message
