"""explain_failure turns llama.cpp's last log lines into a sentence a user can act on.

The excerpts are written here in the wording llama.cpp / ggml print; each says which public report
shows that wording (paths and sizes changed).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from gui.core.llama_log import describe_exit, explain_failure, parse_dry_run
from gui.services.engine_client import worker_exited

# ggml-org/llama.cpp#11476 and #16725: a compute buffer that does not fit when the context is created.
COMPUTE_OOM = """\
llama_context: n_ctx_per_seq = 32768
llama_kv_cache: CUDA0 KV buffer size = 4096.00 MiB
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1234.00 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 1293942784
graph_reserve: failed to allocate compute buffers
llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers
""".splitlines()

# ggml-org/llama.cpp#20431: the weights themselves do not fit on the card.
WEIGHTS_OOM = """\
print_info: max token length      = 256
load_tensors: loading model tensors, this can take a while... (mmap = true)
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 144817.04 MiB on device 1: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA1 buffer of size 151851674624
llama_model_load: error loading model: unable to allocate CUDA1 buffer
llama_model_load_from_file_impl: failed to load model
""".splitlines()

# ggml-org/llama.cpp#8101: a KV cache too large for system memory (CPU build).
CPU_KV_OOM = """\
llama_new_context_with_model: n_ctx      = 1048576
llama_new_context_with_model: freq_scale = 1
ggml_backend_cpu_buffer_type_alloc_buffer: failed to allocate buffer of size 137438953504
llama_kv_cache_init: failed to allocate buffer for kv cache
llama_new_context_with_model: llama_kv_cache_init() failed for self-attention cache
""".splitlines()

# ollama/ollama#3237 (older ggml) and current ggml's ggml_cuda_error: the CUDA memory pool grows
# mid-decode. The last line is ggml_abort's "file:line: message", which only appears when stderr is
# captured too, so the tests try it with and without.
POOL_OOM = """\
llama_perf_context_print: prompt eval time = 120.00 ms
CUDA error: out of memory
  current device: 1, in function ggml_cuda_pool_malloc_vmm at /src/ggml/src/ggml-cuda/ggml-cuda.cu:380
  cuMemCreate(&handle, reserve_size, &prop, 0)
/src/ggml/src/ggml-cuda/ggml-cuda.cu:88: CUDA error
""".splitlines()

# lmstudio-ai/lmstudio-bug-tracker#210: a build without kernels for an old card's architecture.
NO_KERNEL = """\
ggml_cuda_compute_forward: SCALE failed
CUDA error: no kernel image is available for execution on the device
  current device: 0, in function ggml_cuda_compute_forward at /src/ggml/src/ggml-cuda/ggml-cuda.cu:2341
  err
/src/ggml/src/ggml-cuda/ggml-cuda.cu:75: CUDA error
""".splitlines()

# ggml.h: GGML_ASSERT(x) calls GGML_ABORT("GGML_ASSERT(%s) failed", #x), printed as "file:line: message".
ASSERT_NEW = [
    "llama_context: graph splits = 2",
    "/home/ci/llama.cpp/ggml/src/ggml.c:1563: GGML_ASSERT(view_src == NULL || data_size == 0) failed",
]
# ggml-org/llama.cpp#6527: the older "GGML_ASSERT: file:line: condition" form.
ASSERT_OLD = [
    "compute_imatrix: computing over 307 chunks with batch_size 512",
    "GGML_ASSERT: llama.cpp/ggml-cuda/argsort.cu:48: (ncols & (ncols - 1)) == 0",
]

# ggml-org/llama.cpp#4928: the C++ runtime's message when operator new fails.
BAD_ALLOC = [
    "llama_model_loader: - type q8_0:  226 tensors",
    "terminate called after throwing an instance of 'std::bad_alloc'",
    "  what():  std::bad_alloc",
]


def test_compute_buffer_oom_on_gpu():
    failure = explain_failure(COMPUTE_OOM, exitcode=None)
    assert failure.kind == "out_of_memory"
    assert failure.summary == "CUDA ran out of memory allocating 1,234 MiB for the compute buffer on GPU 0."
    assert failure.device == "CUDA0"
    assert failure.requested_mib == pytest.approx(1234.0)
    assert "micro-batch" in failure.detail
    assert "graph_reserve: failed to allocate compute buffers" in failure.detail


def test_weights_oom_names_the_device_and_size():
    failure = explain_failure(WEIGHTS_OOM, exitcode=None)
    assert failure.kind == "out_of_memory"
    assert failure.device == "CUDA1"
    assert failure.requested_mib == pytest.approx(144817.04)
    assert failure.summary == "CUDA ran out of memory allocating 144,817 MiB for the model weights on GPU 1."
    assert "fewer layers" in failure.detail


def test_kv_cache_oom_in_system_memory():
    failure = explain_failure(CPU_KV_OOM, exitcode=None)
    assert failure.kind == "out_of_memory"
    assert failure.device == "CPU"
    assert failure.requested_mib == pytest.approx(137438953504 / 2**20)
    assert failure.summary == "The computer ran out of memory allocating 131,072 MiB for the KV cache."


@pytest.mark.parametrize("with_abort_line", [True, False])
def test_cuda_pool_oom_during_decode(with_abort_line: bool):
    lines = POOL_OOM if with_abort_line else POOL_OOM[:-1]
    failure = explain_failure(lines, exitcode=-6)
    assert failure.kind == "out_of_memory"
    assert failure.device == "CUDA1"
    assert failure.requested_mib is None
    assert failure.summary == "CUDA ran out of memory for temporary buffers during a computation on GPU 1."


@pytest.mark.parametrize("with_abort_line", [True, False])
def test_cuda_error_other_than_memory_is_an_abort(with_abort_line: bool):
    lines = NO_KERNEL if with_abort_line else NO_KERNEL[:-1]
    failure = explain_failure(lines, exitcode=-6)
    assert failure.kind == "assert"
    assert failure.device == "CUDA0"
    assert failure.summary == (
        "llama.cpp stopped on a CUDA error on GPU 0: no kernel image is available for execution on the device."
    )
    assert "not compiled for this GPU" in failure.detail


def test_assert_new_and_old_format():
    new = explain_failure(ASSERT_NEW, exitcode=-6)
    assert new.kind == "assert"
    assert new.summary == (
        "llama.cpp stopped on a failed internal check: view_src == NULL || data_size == 0 (ggml.c:1563)."
    )
    old = explain_failure(ASSERT_OLD, exitcode=-6)
    assert old.kind == "assert"
    assert "(ncols & (ncols - 1)) == 0 (argsort.cu:48)" in old.summary


def test_bad_alloc_is_system_memory():
    failure = explain_failure(BAD_ALLOC, exitcode=-6)
    assert failure.kind == "out_of_memory"
    assert failure.device == "CPU"
    assert failure.summary == "The computer ran out of memory."


def test_sigkill_without_log_evidence_points_at_the_oom_killer():
    failure = explain_failure(["load_tensors: CPU_Mapped model buffer size = 4096.00 MiB"], exitcode=-9)
    assert failure.kind == "killed"
    assert "out-of-memory killer" in failure.summary
    assert "CPU_Mapped" in failure.detail


def test_a_later_abort_wins_over_an_earlier_recovered_allocation_failure():
    # llama.cpp retries some failed allocations (e.g. without pipeline parallelism) and carries on.
    lines = [
        "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 51748.72 MiB on device 1: cudaMalloc failed: "
        "out of memory",
        "ggml_gallocr_reserve_n_impl: failed to allocate CUDA1 buffer of size 54262464512",
        "sched_reserve: compute buffer allocation failed, retrying without pipeline parallelism",
        "llama_context: CUDA1 compute buffer size = 1024.00 MiB",
        *ASSERT_NEW,
    ]
    assert explain_failure(lines, exitcode=-6).kind == "assert"


def test_pinned_memory_warning_alone_is_not_an_oom():
    # ggml_cuda_host_malloc falls back to pageable memory (ggml-org/llama.cpp#9629): only a warning.
    lines = [
        "ggml_cuda_host_malloc: failed to allocate 1900.00 MiB of pinned memory: invalid argument",
        "llama_model_load: error loading model: unknown model architecture: 'foo'",
    ]
    failure = explain_failure(lines, exitcode=1)
    assert failure.kind == "bad_file"  # not memory: a model this llama.cpp does not know
    assert failure.summary == "llama.cpp reported an error: unknown model architecture: 'foo'."
    assert "update llama-cpp-python" in failure.advice


def test_nothing_recognisable_says_what_the_exit_usually_means():
    failure = explain_failure([], exitcode=-11)
    assert failure.kind == "unknown"
    assert failure.summary.startswith("That is a bug in llama.cpp, a damaged model file")
    assert failure.detail == "llama.cpp wrote nothing to its log."
    windows = explain_failure(["llama_context: n_ctx = 4096"], exitcode=0xC0000005)
    assert windows.summary == "llama.cpp's log does not say why."
    assert "n_ctx = 4096" in windows.detail
    assert explain_failure([], exitcode=None).summary == "llama.cpp's log does not say why."


def test_how_the_process_ended_is_worded_in_one_place():
    assert describe_exit(-9) == "was killed (SIGKILL)"
    assert describe_exit(-6) == "aborted (SIGABRT)"
    assert describe_exit(-11) == "crashed (SIGSEGV, a memory access fault)"
    assert describe_exit(0xC0000005) == "crashed (an access violation)"
    assert describe_exit(1) == "exited with status 1"
    assert describe_exit(None) == "stopped answering"


# ---- the crash notice: how the process ended, then why, each said once ---------------------------


def crash_notice(exitcode: int, log_lines: list[str]) -> str:
    """The notice as the window composes it from the client's report."""
    event = worker_exited(exitcode, tuple(log_lines), expected=False)
    cause = f" {event.failure.summary}" if event.failure else ""
    return f"{event.reason}{cause} Your conversation is kept."


def repeated_phrases(text: str, n: int = 3) -> list[tuple[str, ...]]:
    words = re.findall(r"[\w'-]+", text.lower())
    counts = Counter(tuple(words[i : i + n]) for i in range(len(words) - n + 1))
    return [phrase for phrase, count in counts.items() if count > 1]


@pytest.mark.parametrize(
    ("exitcode", "log_lines", "said_once"),
    [
        (-9, [], ("SIGKILL", "killed")),
        (-9, ["load_tensors: CPU_Mapped model buffer size = 4096.00 MiB"], ("SIGKILL", "killed")),
        (-6, [], ("SIGABRT", "abort")),
        (-6, COMPUTE_OOM, ("SIGABRT", "abort")),
        (-6, ASSERT_NEW, ("SIGABRT", "abort")),
        (-6, NO_KERNEL, ("SIGABRT", "abort")),
        (-6, POOL_OOM, ("SIGABRT", "abort")),
    ],
    ids=["sigkill", "sigkill-log", "sigabrt", "sigabrt-oom", "sigabrt-assert", "sigabrt-cuda", "sigabrt-pool"],
)
def test_the_crash_notice_says_how_the_engine_ended_once(
    exitcode: int, log_lines: list[str], said_once: tuple[str, ...]
) -> None:
    notice = crash_notice(exitcode, log_lines)
    assert notice.startswith(f"The engine process {describe_exit(exitcode)}. ")
    for word in said_once:
        assert notice.lower().count(word.lower()) == 1, notice
    assert repeated_phrases(notice) == [], notice


def test_the_repeat_check_catches_the_signal_named_twice():
    # The notice before the wording had one owner: the reason and the summary both named the signal.
    twice = (
        "The engine process was killed (SIGKILL): the system ran out of memory, or someone ended it. The engine "
        "was killed (SIGKILL), most likely by the system's out-of-memory killer because RAM ran out."
    )
    assert repeated_phrases(twice) != []


def test_parse_dry_run_still_reads_figures():
    figures = parse_dry_run(
        [
            "llama_kv_cache: size =  96.00 MiB (  4096 cells,  30 layers)",
            "llama_context:      CUDA0 compute buffer size =   412.50 MiB",
            "llama_context:  CUDA_Host  output buffer size =     0.19 MiB",
        ]
    )
    assert figures.kv_mib == 96.0
    assert figures.compute_mib == {"CUDA0": 412.5}
    assert figures.output_mib == {"CUDA_Host": 0.19}


def test_a_kill_is_blamed_on_memory_only_when_the_evidence_allows() -> None:
    tail = ["llm_load_tensors: offloaded 31/31 layers to GPU", "main: server is listening"]
    unknown = explain_failure(tail, exitcode=-9)
    assert unknown.kind == "killed" and "Most likely" in unknown.summary and "journalctl" in unknown.advice
    oom = explain_failure(tail, exitcode=-9, oom_killed=True)
    assert "out-of-memory killer ended it" in oom.summary and "Most likely" not in oom.summary
    other = explain_failure(tail, exitcode=-9, oom_killed=False)
    assert "not the out-of-memory killer" in other.summary and "RAM" not in other.detail
    assert unknown.about_memory and oom.about_memory and not other.about_memory
    ours = explain_failure(tail, exitcode=-9, ended_by="Tightfit ended the engine: it did not answer Stop.")
    assert ours.kind == "stopped" and ours.summary.startswith("Tightfit ended") and "memory" not in ours.detail


def test_a_bad_file_then_a_kill_is_about_the_file() -> None:
    tail = [
        "llama_model_load: error loading model: tensor 'blk.3.ffn_down.weight' data is not within the file bounds",
        "llama_model_load_from_file_impl: failed to load model",
    ]
    failure = explain_failure(tail, exitcode=-9)
    assert failure.kind == "bad_file" and "not within the file bounds" in failure.summary
    assert "download it again" in failure.advice and "RAM" not in failure.detail
    # ... unless the kernel says it was out of memory after all.
    assert explain_failure(tail, exitcode=-9, oom_killed=True).kind == "killed"


def test_a_worker_that_stops_answering_is_named_with_its_address():
    log = [
        "llama_model_load_from_file_impl: using device RPC0 (127.0.0.1:50052) (unknown id) - 7800 MiB free",
        "load_tensors: offloaded 10/31 layers to GPU",
        "/llama.cpp/ggml/src/ggml-rpc/ggml-rpc.cpp:623: Remote RPC server crashed or returned malformed response",
    ]
    failure = explain_failure(log, -6)
    assert failure.summary == (
        "An RPC worker (RPC0 at 127.0.0.1:50052) stopped answering mid-work, so llama.cpp ended the engine."
    )
    assert "tightfit rpc-worker" in failure.advice and failure.device == "RPC0" and not failure.about_memory
    assert "Remote RPC server crashed" in failure.log  # llama.cpp's own words stay beside ours
    # Without the device line, it still says what happened.
    assert explain_failure(log[1:], -6).summary.startswith("An RPC worker stopped answering mid-work")


def test_the_log_read_after_a_crash_keeps_the_lines_that_name_the_devices(tmp_path):
    from gui.services.engine_client import read_log_tail

    log = tmp_path / "engine.log"
    lines = ["llama_prepare_model_devices: using device RPC0 (10.0.0.2:50052) (unknown id) - 24105 MiB free"]
    lines += [f"load_tensors: layer {i:3d} assigned to device CPU, is_swa = 0" for i in range(5000)]
    lines.append("/src/ggml-rpc.cpp:623: Remote RPC server crashed or returned malformed response")
    log.write_text("\n".join(lines) + "\n")
    tail = read_log_tail(log, 200)
    assert len(tail) == 201 and tail[0] == lines[0] and tail[-1] == lines[-1]
    assert explain_failure(tail, -6).summary.startswith("An RPC worker (RPC0 at 10.0.0.2:50052) stopped answering")
    short = tmp_path / "short.log"
    short.write_text("\n".join(lines[:3]) + "\n")
    assert read_log_tail(short, 200) == tuple(lines[:3])  # nothing twice
