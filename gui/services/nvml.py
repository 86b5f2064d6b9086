"""The one module that talks to NVML (nvidia-ml-py, imported as pynvml).

NVML is started lazily, on first use, and never on the UI thread. Every failure becomes "no value" with
a reason in words: no driver, no permission, a field the card does not support, a GPU that fell off the
bus. Nothing here raises into the window.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from types import ModuleType
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    total_mib: float
    free_mib: float
    used_mib: float
    compute_capability: str | None  # "7.0"
    uuid: str | None


@dataclass(frozen=True)
class GpuQuery:
    gpus: tuple[GpuInfo, ...]
    error: str  # why there are none, in words; empty when NVML answered


class Nvml:
    """Lazy NVML session. `module` lets tests pass a fake built on pynvml's real function names."""

    def __init__(self, module: ModuleType | Any | None = None) -> None:
        self._module = module
        self._lock = threading.Lock()
        self._started = False
        self._start_error = ""

    def _nvml(self) -> Any:
        if self._module is None:
            import pynvml

            self._module = pynvml
        return self._module

    def start(self) -> str:
        """Initialise NVML once; return an error in words, or '' when it is ready."""
        with self._lock:
            if self._started or self._start_error:
                return self._start_error
            nvml = self._nvml()
            try:
                nvml.nvmlInit()
            except nvml.NVMLError as exc:
                self._start_error = describe_nvml_error(nvml, exc)
                log.info("NVML unavailable: %s", self._start_error)
                return self._start_error
            self._started = True
            return ""

    def shutdown(self) -> None:
        with self._lock:
            if self._started:
                nvml = self._nvml()
                try:
                    nvml.nvmlShutdown()
                except nvml.NVMLError as exc:
                    log.debug("nvmlShutdown: %s", exc)
                self._started = False

    def query_gpus(self) -> GpuQuery:
        error = self.start()
        if error:
            return GpuQuery((), error)
        nvml = self._nvml()
        try:
            count = nvml.nvmlDeviceGetCount()
        except nvml.NVMLError as exc:
            return GpuQuery((), describe_nvml_error(nvml, exc))
        gpus = []
        for index in range(count):
            try:
                handle = nvml.nvmlDeviceGetHandleByIndex(index)
                memory = nvml.nvmlDeviceGetMemoryInfo(handle)
                name = nvml.nvmlDeviceGetName(handle)
            except nvml.NVMLError as exc:
                log.warning("GPU %d skipped: %s", index, describe_nvml_error(nvml, exc))
                continue
            gpus.append(
                GpuInfo(
                    index=index,
                    name=name.decode() if isinstance(name, bytes) else str(name),
                    total_mib=memory.total / (1 << 20),
                    free_mib=memory.free / (1 << 20),
                    used_mib=memory.used / (1 << 20),
                    compute_capability=_compute_capability(nvml, handle),
                    uuid=_optional(nvml, nvml.nvmlDeviceGetUUID, handle),
                )
            )
        return GpuQuery(tuple(gpus), "" if gpus else "NVML found no usable GPU")


def _optional(nvml: Any, read: Any, handle: Any) -> Any:
    """A field some cards or drivers lack: None instead of an error."""
    try:
        value = read(handle)
    except nvml.NVMLError:
        return None
    return value.decode() if isinstance(value, bytes) else value


def _compute_capability(nvml: Any, handle: Any) -> str | None:
    pair = _optional(nvml, nvml.nvmlDeviceGetCudaComputeCapability, handle)
    return f"{pair[0]}.{pair[1]}" if pair else None


def describe_nvml_error(nvml: Any, exc: Exception) -> str:
    code = getattr(exc, "value", None)
    words = {
        getattr(nvml, "NVML_ERROR_LIBRARY_NOT_FOUND", -1): "no NVIDIA driver found (NVML library missing)",
        getattr(nvml, "NVML_ERROR_DRIVER_NOT_LOADED", -2): "the NVIDIA driver is not loaded",
        getattr(nvml, "NVML_ERROR_NO_PERMISSION", -3): "no permission to read the GPU",
        getattr(nvml, "NVML_ERROR_NOT_SUPPORTED", -4): "not supported by this GPU",
        getattr(nvml, "NVML_ERROR_GPU_IS_LOST", -5): "the GPU fell off the bus",
        getattr(nvml, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", -6): "driver/library version mismatch (reboot?)",
    }
    return words.get(code, f"NVML error: {exc}")
