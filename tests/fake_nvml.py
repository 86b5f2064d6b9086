"""A stand-in for the pynvml module at the hardware edge, built on pynvml's real names and signatures.

Each fake function is checked against the real one (same name, same parameters), and errors are the
real pynvml exception classes, so code that works against the fake calls NVML the way NVML is called.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml


@dataclass
class FakeGpu:
    name: str = "Tesla V100-SXM2-16GB"
    total_mib: float = 16384.0  # NVML reports the full 16 GiB; CUDA sees less
    used_mib: float = 0.0
    compute_capability: tuple[int, int] = (7, 0)
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    failures: dict[str, int] = field(default_factory=dict)  # function name -> NVML error code


class FakeNvml(SimpleNamespace):
    def __init__(self, gpus: list[FakeGpu], init_error: int | None = None) -> None:
        super().__init__()
        self.gpus = gpus
        self.init_error = init_error
        self.calls: list[str] = []
        for name in dir(pynvml):  # constants and exception classes are the real ones
            if name.startswith(("NVML_", "NVMLError")):
                setattr(self, name, getattr(pynvml, name))
        for fn in (
            self.nvmlInit, self.nvmlShutdown, self.nvmlDeviceGetCount, self.nvmlDeviceGetHandleByIndex,
            self.nvmlDeviceGetMemoryInfo, self.nvmlDeviceGetName, self.nvmlDeviceGetCudaComputeCapability,
            self.nvmlDeviceGetUUID,
        ):  # fmt: skip
            check_signature(fn)

    def _gpu(self, handle: Any, fn: str) -> FakeGpu:
        self.calls.append(fn)
        gpu: FakeGpu = handle
        if fn in gpu.failures:
            raise pynvml.NVMLError(gpu.failures[fn])
        return gpu

    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit")
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.calls.append("nvmlShutdown")

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        return self.gpus[index]

    def nvmlDeviceGetMemoryInfo(self, handle: Any, version: Any = None) -> Any:
        gpu = self._gpu(handle, "nvmlDeviceGetMemoryInfo")
        mib = 1 << 20
        return SimpleNamespace(
            total=int(gpu.total_mib * mib), used=int(gpu.used_mib * mib), free=int((gpu.total_mib - gpu.used_mib) * mib)
        )

    def nvmlDeviceGetName(self, handle: Any) -> str:
        return self._gpu(handle, "nvmlDeviceGetName").name

    def nvmlDeviceGetCudaComputeCapability(self, handle: Any) -> tuple[int, int]:
        return self._gpu(handle, "nvmlDeviceGetCudaComputeCapability").compute_capability

    def nvmlDeviceGetUUID(self, handle: Any) -> str:
        return self._gpu(handle, "nvmlDeviceGetUUID").uuid


def check_signature(fake: Callable[..., Any]) -> None:
    real = getattr(pynvml, fake.__name__)
    real_params = list(inspect.signature(real).parameters)
    fake_params = list(inspect.signature(fake).parameters)
    if real_params != fake_params:
        raise AssertionError(f"fake {fake.__name__}{fake_params} does not match pynvml's {real_params}")
