"""llama.cpp's own description of its build (`llama_print_system_info`), read.

The line lists each compiled backend with its features, e.g. for a CUDA build for a P40 and a V100:
``CUDA : ARCHS = 610,700 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 | AVX = 1 | ...``.
ARCHS is nvcc's __CUDA_ARCH_LIST__ (ggml-cuda.cu, ggml_backend_cuda_get_features): the architectures the
kernels were compiled for, which is what decides whether a card can run them at all.
"""

from __future__ import annotations

__all__ = ["backend_of", "cuda_archs", "parse_system_info"]

# Checked in this order: a build has one GPU backend besides the CPU.
GPU_BACKENDS = ("CUDA", "ROCm", "HIP", "Metal", "Vulkan", "SYCL")


def parse_system_info(info: str) -> dict[str, dict[str, str]]:
    """Backend -> its features: {"CUDA": {"ARCHS": "610,700", ...}, "CPU": {"AVX": "1", ...}}."""
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] | None = None
    for piece in info.split("|"):
        piece = piece.strip()
        if " : " in piece:  # a new backend starts: "CUDA : ARCHS = 610,700"
            name, _, piece = piece.partition(" : ")
            current = sections.setdefault(name.strip(), {})
        key, sep, value = piece.partition("=")
        if current is not None and sep and key.strip():
            current[key.strip()] = value.strip()
    return sections


def cuda_archs(info: str) -> tuple[int, ...]:
    """The compute capabilities a CUDA build was compiled for: "ARCHS = 610,700" -> (61, 70); () otherwise."""
    value = parse_system_info(info).get("CUDA", {}).get("ARCHS", "")
    archs = {int(word) // 10 for word in value.replace(";", ",").split(",") if word.strip().isdigit()}
    return tuple(sorted(archs))


def backend_of(info: str, gpu_offload: bool) -> str:
    """The build's GPU backend by llama.cpp's own name ("CUDA", "Metal", ...), "CPU" without one."""
    sections = {name.upper() for name in parse_system_info(info)}
    for name in GPU_BACKENDS:
        if name.upper() in sections:
            return name
    return "GPU" if gpu_offload else "CPU"
