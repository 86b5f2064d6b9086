"""A stand-in for the pynvml module at the hardware edge, built on pynvml's real names and signatures.

Each fake function is checked against the real one (same name, same parameters), and errors are the
real pynvml exception classes, so code that works against the fake calls NVML the way NVML is called. The
functions of the declared readings (gui/core/telemetry_fields.py) that have no answer written here are made
from the declarations: each call is bound to pynvml's own signature and answered from the GPU's readings.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml

from gui.core.telemetry_fields import READINGS

DATA = Path(__file__).resolve().parent / "data"
MIB = 1 << 20


def error_code(code: int | str) -> int:
    """An NVML error code from recorded data, where it is written by name ("NOT_SUPPORTED") for reading."""
    return code if isinstance(code, int) else int(getattr(pynvml, f"NVML_ERROR_{code}"))


@dataclass
class FakeGpu:
    name: str = "Tesla V100-SXM2-16GB"
    total_mib: float = 16384.0  # NVML reports the full 16 GiB; CUDA sees less
    used_mib: float = 0.0
    compute_capability: tuple[int, int] = (7, 0)
    uuid: str = "GPU-00000000-0000-0000-0000-000000000000"
    failures: dict[str, int] = field(default_factory=dict)  # function name -> NVML error code
    # Readings in NVML's own units (mW, °C, MHz, bytes, bitmasks); a missing key reads as NotSupported. A declared
    # reading answered from its declaration is under its name, as NVML answers ("encoder_util_pct": [0, 167000]).
    readings: dict[str, Any] = field(default_factory=dict)
    lost: bool = False  # fell off the bus: every device call fails with GPU_IS_LOST
    frames: list[dict[str, Any]] = field(default_factory=list)  # recorded changes, one per tick
    frame: int = -1  # the last frame applied

    def advance(self) -> bool:
        """Apply the next recorded frame; False once the recording is exhausted (readings then stay)."""
        if self.frame + 1 >= len(self.frames):
            return False
        self.frame += 1
        self.apply(self.frames[self.frame])
        return True

    def apply(self, changes: dict[str, Any]) -> None:
        for key, value in changes.items():
            if key == "failures":
                self.failures = {fn: error_code(code) for fn, code in value.items()}
            elif key == "memory_used_bytes":
                self.used_mib = value / MIB
            elif key == "memory_total_bytes":
                self.total_mib = value / MIB
            elif key in {"name", "uuid", "lost"}:
                setattr(self, key, value)
            elif key == "compute_capability":
                self.compute_capability = (int(value[0]), int(value[1]))
            else:
                self.readings[key] = value


class FakeNvml(SimpleNamespace):
    def __init__(
        self, gpus: list[FakeGpu], init_error: int | None = None, system: dict[str, Any] | None = None
    ) -> None:
        super().__init__()
        self.gpus = gpus
        self.init_error = init_error
        # The driver's readings: "driver_version" ("570.133.20"), "nvml_version" ("12.570.133.20"),
        # "cuda_driver_version" (12080 for 12.8); a missing key reads as NotSupported.
        self.system = dict(system or {})
        self.calls: list[str] = []
        self.set_limits: list[tuple[int, int]] = []  # (gpu index, mW) for every accepted power limit
        for name in dir(pynvml):  # constants, clock-event bits and exception classes are the real ones
            if name.startswith(("NVML_", "NVMLError", "nvmlClocksEventReason", "nvmlClocksThrottleReason")):
                setattr(self, name, getattr(pynvml, name))
        for fn in (
            self.nvmlInit, self.nvmlShutdown, self.nvmlDeviceGetCount, self.nvmlDeviceGetHandleByIndex,
            self.nvmlDeviceGetMemoryInfo, self.nvmlDeviceGetName, self.nvmlDeviceGetCudaComputeCapability,
            self.nvmlDeviceGetUUID, self.nvmlDeviceGetPowerUsage,
            self.nvmlDeviceGetEnforcedPowerLimit, self.nvmlDeviceGetPowerManagementLimit,
            self.nvmlDeviceGetPowerManagementLimitConstraints, self.nvmlDeviceGetPowerManagementDefaultLimit,
            self.nvmlDeviceSetPowerManagementLimit, self.nvmlDeviceGetUtilizationRates,
            self.nvmlDeviceGetCurrentClocksEventReasons, self.nvmlDeviceGetCurrentClocksThrottleReasons,
            self.nvmlDeviceGetTotalEccErrors, self.nvmlDeviceGetComputeRunningProcesses,
            self.nvmlDeviceGetGraphicsRunningProcesses, self.nvmlSystemGetProcessName,
            self.nvmlSystemGetDriverVersion, self.nvmlSystemGetNVMLVersion, self.nvmlSystemGetCudaDriverVersion,
            self.nvmlDeviceGetPersistenceMode, self.nvmlDeviceGetDisplayActive, self.nvmlDeviceGetPciInfo,
            self.nvmlDeviceGetRetiredPagesPendingStatus, self.nvmlDeviceGetRemappedRows,
        ):  # fmt: skip
            check_signature(fn)
        for declared in READINGS:
            for function in declared.nvml.functions:
                if not hasattr(self, function):
                    setattr(self, function, self._declared(function))

    @classmethod
    def replay(cls, recording: str | Path) -> FakeNvml:
        """A fake that replays a recorded session from tests/data: call `step()` to move to the next tick."""
        path = Path(recording)
        data = json.loads((path if path.is_absolute() else DATA / path).read_text())
        gpus = []
        for spec in data.get("gpus", []):
            gpu = FakeGpu(frames=list(spec.get("frames", [])))
            gpu.apply(spec.get("device", {}))
            gpus.append(gpu)
        init_error = data.get("init_error")
        fake = cls(gpus, init_error=None if init_error is None else error_code(init_error), system=data.get("system"))
        fake.step()
        return fake

    def step(self) -> bool:
        """Every GPU moves to its next recorded frame; False when no GPU had one left."""
        moved = [gpu.advance() for gpu in self.gpus]
        return any(moved)

    def _gpu(self, handle: Any, fn: str) -> FakeGpu:
        self.calls.append(fn)
        gpu: FakeGpu = handle
        if gpu.lost:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)
        if fn in gpu.failures:
            raise pynvml.NVMLError(gpu.failures[fn])
        return gpu

    def _read(self, handle: Any, fn: str, key: str) -> Any:
        gpu = self._gpu(handle, fn)
        if key not in gpu.readings:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return gpu.readings[key]

    def _declared(self, function: str) -> Callable[..., Any]:
        """pynvml's `function` for the declared readings it gives: the call is bound to the real signature (a
        call pynvml would refuse fails here too) and answered with the reading its arguments name (a sensor, a
        clock, a threshold); arguments no declaration names read as NotSupported."""
        signature = inspect.signature(getattr(pynvml, function))
        readings = [
            (r.name, tuple(getattr(pynvml, name) for name in r.nvml.args))
            for r in READINGS
            if function in r.nvml.functions
        ]

        def answer(*args: Any, **kwargs: Any) -> Any:
            handle, *given = signature.bind(*args, **kwargs).args
            for name, constants in readings:
                if tuple(given[: len(constants)]) == constants:
                    return self._read(handle, function, name)
            self._gpu(handle, function)
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

        answer.__name__ = function
        return answer

    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit")
        if self.init_error is not None:
            raise pynvml.NVMLError(self.init_error)

    def nvmlShutdown(self) -> None:
        self.calls.append("nvmlShutdown")

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> Any:
        if not 0 <= index < len(self.gpus):
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        gpu = self.gpus[index]
        if "nvmlDeviceGetHandleByIndex" in gpu.failures:
            raise pynvml.NVMLError(gpu.failures["nvmlDeviceGetHandleByIndex"])
        return gpu

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

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> int:
        return int(self._read(handle, "nvmlDeviceGetPowerUsage", "power_mw"))

    def nvmlDeviceGetPowerManagementLimit(self, handle: Any) -> int:
        return int(self._read(handle, "nvmlDeviceGetPowerManagementLimit", "power_limit_mw"))

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: Any) -> int:
        limit = int(self._read(handle, "nvmlDeviceGetEnforcedPowerLimit", "power_limit_mw"))
        # Another limiter (out-of-band, board) can hold the card below the user's limit.
        return min(limit, int(handle.readings.get("external_limit_mw", limit)))

    def nvmlDeviceGetPowerManagementLimitConstraints(self, handle: Any) -> list[int]:
        fn = "nvmlDeviceGetPowerManagementLimitConstraints"
        return [int(self._read(handle, fn, "min_limit_mw")), int(self._read(handle, fn, "max_limit_mw"))]

    def nvmlDeviceGetPowerManagementDefaultLimit(self, handle: Any) -> int:
        return int(self._read(handle, "nvmlDeviceGetPowerManagementDefaultLimit", "default_limit_mw"))

    def nvmlDeviceSetPowerManagementLimit(self, handle: Any, limit: int) -> None:
        gpu = self._gpu(handle, "nvmlDeviceSetPowerManagementLimit")
        low, high = gpu.readings.get("min_limit_mw"), gpu.readings.get("max_limit_mw")
        if low is None or high is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        if not low <= limit <= high:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        gpu.readings["power_limit_mw"] = int(limit)
        self.set_limits.append((self.gpus.index(gpu), int(limit)))

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any:
        gpu = self._gpu(handle, "nvmlDeviceGetUtilizationRates")
        if "util_gpu" not in gpu.readings:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return SimpleNamespace(gpu=int(gpu.readings["util_gpu"]), memory=int(gpu.readings.get("util_memory", 0)))

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        return int(self._read(handle, "nvmlDeviceGetCurrentClocksEventReasons", "clock_event_reasons"))

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: Any) -> int:
        return int(self._read(handle, "nvmlDeviceGetCurrentClocksThrottleReasons", "clock_event_reasons"))

    def nvmlDeviceGetTotalEccErrors(self, handle: Any, errorType: int, counterType: int) -> int:
        kind = "corrected" if errorType == pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED else "uncorrected"
        scope = "volatile" if counterType == pynvml.NVML_VOLATILE_ECC else "aggregate"
        return int(self._read(handle, "nvmlDeviceGetTotalEccErrors", f"ecc_{kind}_{scope}"))

    def nvmlDeviceGetComputeRunningProcesses(self, handle: Any) -> list[Any]:
        return self._processes(handle, "nvmlDeviceGetComputeRunningProcesses", "compute")

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: Any) -> list[Any]:
        return self._processes(handle, "nvmlDeviceGetGraphicsRunningProcesses", "graphics")

    def _processes(self, handle: Any, fn: str, kind: str) -> list[Any]:
        gpu = self._gpu(handle, fn)
        return [  # like pynvml's friendly objects: usedGpuMemory in bytes, None where not accounted
            SimpleNamespace(pid=p["pid"], usedGpuMemory=p.get("used_bytes"))
            for p in gpu.readings.get("processes", [])
            if p.get("kind", "compute") == kind
        ]

    def _system(self, fn: str, key: str) -> Any:
        self.calls.append(fn)
        if key not in self.system:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return self.system[key]

    def nvmlSystemGetDriverVersion(self) -> str:
        return str(self._system("nvmlSystemGetDriverVersion", "driver_version"))

    def nvmlSystemGetNVMLVersion(self) -> str:
        return str(self._system("nvmlSystemGetNVMLVersion", "nvml_version"))

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        return int(self._system("nvmlSystemGetCudaDriverVersion", "cuda_driver_version"))

    def nvmlDeviceGetPersistenceMode(self, handle: Any) -> int:
        return int(self._read(handle, "nvmlDeviceGetPersistenceMode", "persistence_mode"))

    def nvmlDeviceGetDisplayActive(self, handle: Any) -> int:
        return int(self._read(handle, "nvmlDeviceGetDisplayActive", "display_active"))

    def nvmlDeviceGetPciInfo(self, handle: Any) -> Any:
        # pynvml's own structure: busId reads as text, a 32-bit domain in upper-case hex ("00000000:3B:00.0").
        info = pynvml.nvmlPciInfo_t()
        info.busId = str(self._read(handle, "nvmlDeviceGetPciInfo", "pci_bus_id"))
        return info

    def nvmlDeviceGetRetiredPagesPendingStatus(self, device: Any) -> int:
        return int(self._read(device, "nvmlDeviceGetRetiredPagesPendingStatus", "retired_pages_pending"))

    def nvmlDeviceGetRemappedRows(self, device: Any) -> tuple[int, int, int, int]:
        # (corrected rows, uncorrected rows, remapping pending, remapping failed), as pynvml returns them
        corrected, uncorrected, pending, failure = self._read(device, "nvmlDeviceGetRemappedRows", "remapped_rows")
        return int(corrected), int(uncorrected), int(pending), int(failure)

    def nvmlSystemGetProcessName(self, pid: int) -> str:
        self.calls.append("nvmlSystemGetProcessName")
        for gpu in self.gpus:
            for process in gpu.readings.get("processes", []):
                if process["pid"] == pid:
                    if process.get("name_error"):
                        raise pynvml.NVMLError(error_code(process["name_error"]))
                    return str(process["name"])
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)


def check_signature(fake: Callable[..., Any]) -> None:
    real = getattr(pynvml, fake.__name__)
    real_params = list(inspect.signature(real).parameters)
    fake_params = list(inspect.signature(fake).parameters)
    if real_params != fake_params:
        raise AssertionError(f"fake {fake.__name__}{fake_params} does not match pynvml's {real_params}")
