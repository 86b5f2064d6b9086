"""Reading llama.cpp's log: the memory figures of a dry run, and the cause of a failure.

llama.cpp reports its sizes only as log lines; these patterns follow the installed engine's wording.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from gui.core.words import Text, Words, by_english, joined, words

KV_SIZE = re.compile(r"llama_kv_cache\w*: size =\s*([\d.]+) MiB")
RS_SIZE = re.compile(r"llama_memory_recurrent\w*: size =\s*([\d.]+) MiB")
COMPUTE = re.compile(r":\s*(\S+) compute buffer size =\s*([\d.]+) MiB")
OUTPUT = re.compile(r":\s*(\S+)\s+output buffer size =\s*([\d.]+) MiB")


@dataclass
class DryRunFigures:
    kv_mib: float = 0.0
    recurrent_mib: float = 0.0
    compute_mib: dict[str, float] = field(default_factory=dict)
    output_mib: dict[str, float] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)


def parse_dry_run(lines: Iterable[str]) -> DryRunFigures:
    figures = DryRunFigures()
    for line in lines:
        if m := KV_SIZE.search(line):
            figures.kv_mib += float(m.group(1))
        elif m := RS_SIZE.search(line):
            figures.recurrent_mib += float(m.group(1))
        elif m := COMPUTE.search(line):
            figures.compute_mib[m.group(1)] = figures.compute_mib.get(m.group(1), 0.0) + float(m.group(2))
        elif m := OUTPUT.search(line):
            figures.output_mib[m.group(1)] = figures.output_mib.get(m.group(1), 0.0) + float(m.group(2))
        else:
            continue
        figures.lines.append(line.strip())
    return figures


BUFFER = re.compile(r":\s*(\S+)\s+(model|KV|RS|compute|output) buffer size =\s*([\d.]+) MiB")


def parse_buffers(lines: Iterable[str]) -> dict[str, float]:
    """What llama.cpp allocated, by buffer type as it names them ("CUDA0", "CUDA_Host", "CPU_Mapped"), in MiB:
    the model, KV, recurrent-state, compute and output buffers it logs while loading."""
    sizes: dict[str, float] = {}
    for line in lines:
        if m := BUFFER.search(line):
            sizes[m.group(1)] = sizes.get(m.group(1), 0.0) + float(m.group(3))
    return sizes


# ---- failures -----------------------------------------------------------------------------------
#
# What llama.cpp / ggml print when a load or a decode fails. The wording below is what these
# versions log (see tests/test_llama_log.py for the excerpts and where each comes from):
#   ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9866.00 MiB on device 1: cudaMalloc failed: out of memory
#   ggml_gallocr_reserve_n: failed to allocate CUDA1 buffer of size 10345253120
#   alloc_tensor_range: failed to allocate CUDA0 buffer of size 151851674624
#   ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504
#   llama_kv_cache_init: failed to allocate buffer for kv cache
#   CUDA error: out of memory / current device: 0, in function ggml_cuda_pool_malloc_vmm at ...
#   /path/ggml.c:1234: GGML_ASSERT(x) failed          (older builds: GGML_ASSERT: /path/ggml.c:1234: x)
#   /path/ggml-cuda.cu:88: CUDA error                 (ggml_abort: "file:line: message")
#   terminate called after throwing an instance of 'std::bad_alloc'

# "out_of_memory", "killed" (by the kernel's OOM killer, or most likely so), "ended" (by someone else),
# "stopped" (by Tightfit), "assert", "bad_file" or "unknown"
FailureKind = str

CUDA_ALLOC = re.compile(r"allocating\s+([\d.]+)\s*MiB on device (\d+):\s*(\w+) failed:\s*(.+)")
BUFFER_FAIL = re.compile(r"failed to allocate (\w+) buffer of size (\d+)")
CPU_BUFFER_FAIL = re.compile(r"ggml_backend_cpu_buffer\w*: failed to allocate buffer of size (\d+)")
CUDA_ERROR = re.compile(r"\bCUDA error:\s*(.+)")
CURRENT_DEVICE = re.compile(r"current device:\s*(\d+)(?:, in function (\w+))?")
ASSERT_NEW = re.compile(r"(?P<file>[^\s:]+):(?P<line>\d+): GGML_ASSERT\((?P<cond>.*)\) failed")
ASSERT_OLD = re.compile(r"GGML_ASSERT: (?P<file>.+?):(?P<line>\d+): (?P<cond>.*)")
ABORT = re.compile(r"(?P<file>[^\s:]+\.(?:c|cc|cpp|cu|cuh|h|m)):(?P<line>\d+): (?P<msg>.+)")

# Lines that belong to an allocation failure's report; the last run of them is the one that mattered
# (llama.cpp logs some failures it recovers from, e.g. retrying without pipeline parallelism).
_OOM_MARKERS = (
    "failed to allocate",
    "cudamalloc failed",
    "out of memory",
    "bad_alloc",
    "unable to allocate",
    "current device:",
    "failed to initialize the context",
    "failed to create context",
)

# How the engine process ended. This is the only wording of signals and exit codes: the window says
# "The engine process <describe_exit>." and then the failure's summary, which gives the cause and so
# never names the signal again.
_SIGNAL_WORDS = {
    "SIGKILL": words("was killed (SIGKILL)"),
    "SIGABRT": words("aborted (SIGABRT)"),
    "SIGSEGV": words("crashed (SIGSEGV, a memory access fault)"),
    "SIGBUS": words("crashed (SIGBUS, a fault reading mapped memory)"),
    "SIGILL": words("crashed (SIGILL, an instruction this processor lacks)"),
    "SIGTERM": words("was terminated (SIGTERM)"),
}
# Windows reports an unhandled exception as the exit code.
_WINDOWS_CODES = {
    0xC0000005: words("crashed (an access violation)"),
    0xC0000409: words("aborted (a fail-fast exception)"),
    0xC00000FD: words("crashed (a stack overflow)"),
}
# The cause, when llama.cpp's log names none: what each way of ending usually means.
_UNEXPLAINED = {
    "SIGABRT": words(
        "llama.cpp ends this way when an allocation fails or an internal check trips; its log says no more."
    ),
    "SIGSEGV": words(
        "That is a bug in llama.cpp, a damaged model file or an unsupported setting; its log says no more."
    ),
    "SIGBUS": words("The model file may have changed or shrunk while it was mapped."),
    "SIGILL": words(
        "This llama.cpp build uses processor instructions this CPU does not have; rebuild it on this machine."
    ),
    "SIGTERM": words("Something outside Tightfit ended it."),
}
_UNEXPLAINED_OTHERWISE = words("llama.cpp's log does not say why.")


def describe_exit(exitcode: int | None) -> Words:
    """How the engine process ended, as the words after "The engine process": "was killed (SIGKILL)".

    ``exitcode`` follows multiprocessing: negative for a signal (-9 is SIGKILL), None while unknown.
    """
    if exitcode is None:
        return words("stopped answering")
    if exitcode == 0:
        return words("exited")
    if exitcode < 0:
        name = _signal_name(exitcode)
        if name is None:
            return words("was ended by signal {number}", number=-exitcode)
        return _SIGNAL_WORDS.get(name) or words("was ended by {signal}", signal=name)
    return _WINDOWS_CODES.get(exitcode) or words("exited with status {status}", status=exitcode)


def exit_reason(exitcode: int | None) -> Words:
    """The sentence that says how the engine process ended: "The engine process was killed (SIGKILL)."."""
    return words("The engine process {how}.", how=describe_exit(exitcode))


# What the window waits for a worker to do, in the words of ``stuck_reason``.
_STUCK_WHAT: dict[str, Words] = by_english(
    words("acknowledge Stop"),
    words("end the reply after Stop"),
    words("acknowledge Unload"),
    words("unload the model"),
)


def stuck_reason(what: str, within_s: float) -> Words:
    """Why Tightfit ended a worker that did not do ``what`` ("acknowledge Stop") in time (``ended_by``)."""
    return words(
        "Tightfit ended it: it did not {what} within {seconds} s.",
        what=_STUCK_WHAT.get(what) or what,
        seconds=f"{within_s:g}",
    )


def _signal_name(exitcode: int | None) -> str | None:
    if exitcode is None or exitcode >= 0:
        return None
    try:
        return signal.Signals(-exitcode).name
    except ValueError:
        return None


@dataclass(frozen=True)
class Failure:
    summary: Text  # one sentence for the status line / dialog title
    advice: Text  # what to try; empty when there is nothing to suggest
    log: str  # the log lines the explanation rests on, under a heading
    kind: FailureKind
    device: str | None = None  # llama.cpp's buffer name: "CUDA0", "CPU", "CUDA_Host"; None when unknown
    requested_mib: float | None = None  # the allocation that failed, when the log says

    @property
    def about_memory(self) -> bool:
        """Whether memory ran out, so that a load needing less of it is worth offering."""
        return self.kind in ("out_of_memory", "killed")

    @property
    def detail(self) -> Words:
        """What to try, then the log lines it is based on."""
        return joined("\n\n", [part for part in (self.advice, self.log) if part])


def explain_failure(
    log_lines: Sequence[str], exitcode: int | None, *, oom_killed: bool | None = None, ended_by: Text = ""
) -> Failure:
    """Plain words for why the engine failed, from llama.cpp's last log lines and the worker's exit code.

    ``exitcode`` follows multiprocessing: negative for a signal (-9 is SIGKILL), None while unknown.
    ``oom_killed``: whether the kernel's out-of-memory killer ended a process of ours meanwhile (its
    cgroup counts them), None when that cannot be read. ``ended_by``: why Tightfit itself ended the
    process, when it did.
    """
    lines = [line.rstrip() for line in log_lines[-400:] if line.strip()]
    if ended_by:
        return Failure(ended_by, "", _last_lines(lines), "stopped")
    # Both an allocation failure and an abort may be in the log; the later one ended the process
    # (llama.cpp logs some allocation failures it recovers from).
    found = [f for f in (_out_of_memory(lines), _assertion(lines)) if f is not None]
    if found:
        return max(found, key=lambda f: f[1])[0]
    if oom_killed is not True and (bad := _bad_file(lines)) is not None:
        return bad  # a file llama.cpp refused, then a kill: the kill is not the news
    return _killed(lines, exitcode, oom_killed) or _reported_error(lines, exitcode) or _unknown(lines, exitcode)


def _is_oom_line(line: str) -> bool:
    low = line.lower()
    # Pinned (page-locked) host memory failing is only a warning: llama.cpp falls back to pageable memory.
    return "pinned memory" not in low and any(marker in low for marker in _OOM_MARKERS)


def _last_oom_cluster(lines: list[str]) -> tuple[list[str], int]:
    end = next((i for i in range(len(lines) - 1, -1, -1) if _is_oom_line(lines[i])), None)
    if end is None:
        return [], -1
    start = end
    # Allow one unrelated line inside a report (a CUDA error prints the failing call on its own line).
    while start > 0 and (_is_oom_line(lines[start - 1]) or (start > 1 and _is_oom_line(lines[start - 2]))):
        start -= 1
    return lines[start : end + 2], end  # the line after names the failing call for CUDA errors


def _out_of_memory(lines: list[str]) -> tuple[Failure, int] | None:
    cluster, end = _last_oom_cluster(lines)
    if not cluster:
        return None
    text = "\n".join(cluster)
    low = text.lower()
    device: str | None = None
    mib: float | None = None
    cuda_error: str | None = None
    for line in cluster:
        if m := CUDA_ALLOC.search(line):
            mib, device = float(m.group(1)), f"CUDA{m.group(2)}"
        elif m := BUFFER_FAIL.search(line):
            device = device or m.group(1)
            mib = mib if mib is not None else int(m.group(2)) / 2**20
        elif m := CPU_BUFFER_FAIL.search(line):
            device, mib = device or "CPU", mib if mib is not None else int(m.group(1)) / 2**20
        elif m := CUDA_ERROR.search(line):
            cuda_error = m.group(1).strip()
        elif m := CURRENT_DEVICE.search(line):
            device = device or f"CUDA{m.group(1)}"
    if cuda_error is not None and "out of memory" not in cuda_error.lower():
        return None  # a CUDA error that is not about memory: reported as an abort below
    if "out of memory" not in low and "failed to allocate" not in low and "bad_alloc" not in low and mib is None:
        return None  # "unable to allocate" etc. with nothing concrete: let the error path word it
    if device is None and "bad_alloc" in low:
        device = "CPU"
    purpose = _purpose(low)
    where = _device_words(device)
    is_gpu = device is not None and not device.startswith("CPU") and device != "CUDA_Host"
    subject = (
        words("{backend} ran out of memory", backend=_backend(device))
        if is_gpu
        else words("The computer ran out of memory")
    )
    summary = words(
        "{subject}{size}{purpose}{where}.",
        subject=subject,
        size=words(" allocating {mib} MiB", mib=f"{mib:,.0f}") if mib is not None else "",
        purpose=words(" for {purpose}", purpose=purpose) if purpose else "",
        where=words(" on {where}", where=where) if where and is_gpu else "",
    )
    return Failure(summary, _oom_advice(purpose, is_gpu), f"llama.cpp said:\n{text}", "out_of_memory", device, mib), end


_WEIGHTS = words("the model weights")
_COMPUTE_BUFFER = words("the compute buffer")
_KV_CACHE = words("the KV cache")


def _purpose(low: str) -> Words | None:
    if "alloc_tensor_range" in low or "error loading model" in low or "load_tensors" in low:
        return _WEIGHTS
    if "compute" in low or "gallocr" in low or "graph_reserve" in low:
        return _COMPUTE_BUFFER
    if "kv cache" in low or "kv buffer" in low or "llama_kv_cache" in low:
        return _KV_CACHE
    if "recurrent" in low or "rs cache" in low:
        return words("the recurrent state")
    if "pool_malloc" in low or "cumemcreate" in low:
        return words("temporary buffers during a computation")
    if "output buffer" in low:
        return words("the output buffer")
    return None


def _oom_advice(purpose: Text | None, is_gpu: bool) -> Words:
    if not is_gpu:
        return words(
            "Close other programs, lower the context, or keep memory mapping on so the weights are not copied into RAM."
        )
    if purpose == _WEIGHTS:
        return words("Offload fewer layers to the GPU (GPU layers), or choose a smaller quant.")
    if purpose == _KV_CACHE:
        return words("Lower the context, use a q8_0 KV cache, or offload fewer layers.")
    if purpose == _COMPUTE_BUFFER:
        return words("Lower the micro-batch (and batch) or the context, or offload fewer layers.")
    return words("Offload fewer layers, lower the context or micro-batch, or close other programs using the GPU.")


def _backend(device: str | None) -> Text:
    m = re.match(r"[A-Za-z]+", device or "")
    name = m.group(0) if m else ""
    known = {"CUDA": "CUDA", "ROCm": "ROCm", "Vulkan": "Vulkan", "SYCL": "SYCL", "Metal": "Metal"}
    return known.get(name) or words("The GPU")


def _device_words(device: str | None) -> Text | None:
    if device is None:
        return None
    if m := re.fullmatch(r"[A-Za-z]+?(\d+)", device):
        return f"GPU {m.group(1)}"
    if device == "CPU":
        return words("system memory")
    if device == "CUDA_Host":
        return words("pinned system memory")
    return device


def _assertion(lines: list[str]) -> tuple[Failure, int] | None:
    """The last failed GGML_ASSERT, CUDA error or ggml_abort, if any."""
    for i in range(len(lines) - 1, -1, -1):
        line = lines[i]
        if m := ASSERT_NEW.search(line) or ASSERT_OLD.search(line):
            where = f"{_basename(m.group('file'))}:{m.group('line')}"
            summary = words(
                "llama.cpp stopped on a failed internal check: {check} ({where}).",
                check=m.group("cond").strip(),
                where=where,
            )
            advice = words(
                "This is a llama.cpp bug or a setting combination it does not support; changing the "
                "settings or updating llama-cpp-python may avoid it."
            )
            return Failure(summary, advice, _said(lines, i), "assert", _device_near(lines, i)), i
        if m := CUDA_ERROR.search(line):
            error = m.group(1).strip()
            if "out of memory" in error.lower():
                continue  # an allocation failure: _out_of_memory words it
            # ggml always aborts after reporting a CUDA error.
            device = _device_near(lines, i)
            on = words(" on {where}", where=_device_words(device)) if device else ""
            summary = words(
                "llama.cpp stopped on a CUDA error{on}: {error}.", on=on, error=_CUDA_ERRORS.get(error) or error
            )
            if "no kernel image" in error.lower() or "invalid device function" in error.lower():
                advice = words(
                    "This llama.cpp build was not compiled for this GPU's architecture. "
                    "llama.cpp ended the engine process."
                )
            else:
                advice = _ENDED
            return Failure(summary, advice, _said(lines, i, after=4), "assert", device), i
        m = ABORT.search(line)
        # "file:line: message" is ggml_abort's format. Its "CUDA error" form follows a "CUDA error: ..."
        # line that says more, found by the branch above; other log lines rarely look like it, so
        # require the word "error" or the end of the log.
        if m is None or m.group("msg").strip().startswith("CUDA error"):
            continue
        if RPC_LOST in m.group("msg"):
            return _rpc_lost(lines, i), i
        if "error" in m.group("msg").lower() or i >= len(lines) - 3:
            summary = words(
                "llama.cpp stopped: {message} ({where}).",
                message=m.group("msg").strip(),
                where=f"{_basename(m.group('file'))}:{m.group('line')}",
            )
            return Failure(summary, _ENDED, _said(lines, i), "assert", _device_near(lines, i)), i
    return None


_ENDED = words("llama.cpp ended the engine process.")
# CUDA's words for the errors an old card meets most, as ggml reports them ("CUDA error: <this>").
_CUDA_ERRORS = {
    "no kernel image is available for execution on the device": words(
        "no kernel image is available for execution on the device"
    ),
    "invalid device function": words("invalid device function"),
    "an illegal memory access was encountered": words("an illegal memory access was encountered"),
    "unspecified launch failure": words("unspecified launch failure"),
    "the launch timed out and was terminated": words("the launch timed out and was terminated"),
}

# ggml-rpc.cpp aborts with this when a worker stops answering (it crashed, was stopped, the network dropped).
RPC_LOST = "Remote RPC server crashed or returned malformed response"
# llama.cpp names each device it loads on: "using device RPC0 (127.0.0.1:50052) ..." for a worker.
RPC_DEVICE = re.compile(r"using device (RPC\d+) \(([^)]*)\)")


def _rpc_lost(lines: list[str], at: int) -> Failure:
    devices = [(m.group(1), m.group(2)) for line in lines[:at] if (m := RPC_DEVICE.search(line))]
    names = joined(
        ", ",
        (
            words("{name} at {address}", name=name, address=where) if where else name
            for name, where in dict.fromkeys(devices)
        ),
    )
    which = words(" ({names})", names=names) if names else ""
    summary = words("An RPC worker{which} stopped answering mid-work, so llama.cpp ended the engine.", which=which)
    advice = words(
        "The worker crashed, was stopped or the network dropped. Start `tightfit rpc-worker` on that machine "
        "again and load, or load without it."
    )
    return Failure(summary, advice, _said(lines, at), "ended", devices[-1][0] if devices else None)


_RAM_ADVICE = words(
    "Keep memory mapping on, lower the context, offload more layers to the GPU if it has room, or close other programs."
)


def _killed(lines: list[str], exitcode: int | None, oom_killed: bool | None) -> Failure | None:
    if exitcode not in (-9, 137):
        return None
    if oom_killed is False:
        # The kernel counts every out-of-memory kill in our cgroup, and it counted none: someone ended it.
        summary = words("It was not the out-of-memory killer: something outside Tightfit ended it.")
        return Failure(summary, "", _last_lines(lines), "ended")
    if oom_killed:
        summary = words("The system's out-of-memory killer ended it: RAM ran out.")
        return Failure(summary, _RAM_ADVICE, _last_lines(lines), "killed")
    summary = words("Most likely the system's out-of-memory killer ended it because RAM ran out.")
    advice = words(
        "{advice} The system log (journalctl -k or dmesg) says whether the OOM killer did it.", advice=_RAM_ADVICE
    )
    return Failure(summary, advice, _last_lines(lines), "killed")


# What llama.cpp says about a file it cannot use: damaged, cut short, or not a model it knows.
_BAD_FILE = re.compile(
    r"error loading model|failed to load model|invalid magic|not within the file bounds|unexpectedly reached end"
    r"|failed to read|corrupt|unknown model architecture|wrong number of tensors|missing tensor",
    re.IGNORECASE,
)


def _bad_file(lines: list[str]) -> Failure | None:
    for i in range(len(lines) - 1, max(-1, len(lines) - 30), -1):
        if _BAD_FILE.search(lines[i]):
            reported = _reported_error(lines[: i + 1], None)
            summary = reported.summary if reported is not None else words("llama.cpp could not use the model file.")
            advice = words(
                "The model file is damaged, cut short, or of a kind this llama.cpp does not know: check its "
                "size and checksum, download it again, or update llama-cpp-python."
            )
            return Failure(summary, advice, _said(lines, i), "bad_file")
    return None


def _last_lines(lines: list[str]) -> str:
    return "Last lines from llama.cpp:\n" + "\n".join(lines[-5:]) if lines else ""


def _said(lines: list[str], i: int, after: int = 2) -> str:
    return "llama.cpp said:\n" + _tail(lines, i, after=after)


def _reported_error(lines: list[str], exitcode: int | None) -> Failure | None:
    for i in range(len(lines) - 1, max(-1, len(lines) - 30), -1):
        if "error" not in lines[i].lower():
            continue
        # "llama_model_load: error loading model: unknown model architecture: 'x'": the reason is what
        # follows the last part that says "error"; the function names before it mean nothing to a user.
        parts = lines[i].strip().split(": ")
        last_error = max(k for k, part in enumerate(parts) if "error" in part.lower())
        message = ": ".join(parts[last_error + 1 :]) or lines[i].strip()
        summary = words("llama.cpp reported an error: {message}.", message=message.rstrip("."))
        return Failure(summary, "", _said(lines, i), "unknown")
    return None


def _unknown(lines: list[str], exitcode: int | None) -> Failure:
    summary = _UNEXPLAINED.get(_signal_name(exitcode) or "", _UNEXPLAINED_OTHERWISE)
    return Failure(summary, "", _last_lines(lines) or "llama.cpp wrote nothing to its log.", "unknown")


def _device_near(lines: list[str], i: int) -> str | None:
    for line in lines[max(0, i - 4) : i + 4]:
        if m := CURRENT_DEVICE.search(line):
            return f"CUDA{m.group(1)}"
    return None


def _tail(lines: list[str], i: int, after: int = 2) -> str:
    return "\n".join(lines[max(0, i - 3) : i + 1 + after])


def _basename(path: str) -> str:
    return re.split(r"[\\/]", path)[-1]
