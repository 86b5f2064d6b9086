"""The NVML service against the real pynvml (no driver here) and a fake built on its signatures."""

from __future__ import annotations

import pynvml
import pytest
from fake_nvml import FakeGpu, FakeNvml

from gui.services.nvml import Nvml


def test_no_driver_on_this_machine_is_words_not_a_crash() -> None:
    query = Nvml().query_gpus()  # the real pynvml: this machine has no NVIDIA driver
    assert query.gpus == ()
    assert "driver" in query.error


def test_reads_every_gpu_with_memory_in_mib() -> None:
    fake = FakeNvml([FakeGpu(used_mib=512.0), FakeGpu(name="Tesla P40", total_mib=24576.0, compute_capability=(6, 1))])
    query = Nvml(fake).query_gpus()
    assert query.error == ""
    v100, p40 = query.gpus
    assert (v100.index, v100.name, v100.total_mib, v100.free_mib, v100.used_mib) == (
        0, "Tesla V100-SXM2-16GB", 16384.0, 15872.0, 512.0,
    )  # fmt: skip
    assert (p40.name, p40.compute_capability) == ("Tesla P40", "6.1")


def test_nvml_starts_once_lazily() -> None:
    fake = FakeNvml([FakeGpu()])
    nvml = Nvml(fake)
    assert fake.calls == []  # nothing happens until asked
    nvml.query_gpus()
    nvml.query_gpus()
    assert fake.calls.count("nvmlInit") == 1


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (pynvml.NVML_ERROR_DRIVER_NOT_LOADED, "driver is not loaded"),
        (pynvml.NVML_ERROR_NO_PERMISSION, "no permission"),
        (pynvml.NVML_ERROR_LIB_RM_VERSION_MISMATCH, "version mismatch"),
    ],
)
def test_init_failures_are_explained(code: int, words: str) -> None:
    query = Nvml(FakeNvml([FakeGpu()], init_error=code)).query_gpus()
    assert query.gpus == () and words in query.error


def test_a_lost_gpu_is_skipped_and_optional_fields_become_none() -> None:
    lost = FakeGpu(failures={"nvmlDeviceGetMemoryInfo": pynvml.NVML_ERROR_GPU_IS_LOST})
    partial = FakeGpu(name="Tesla T4", failures={"nvmlDeviceGetCudaComputeCapability": pynvml.NVML_ERROR_NOT_SUPPORTED})
    query = Nvml(FakeNvml([lost, partial])).query_gpus()
    assert [g.name for g in query.gpus] == ["Tesla T4"]
    assert query.gpus[0].index == 1 and query.gpus[0].compute_capability is None


def test_fake_refuses_a_signature_pynvml_does_not_have() -> None:
    from fake_nvml import check_signature

    def nvmlDeviceGetName(handle, extra):
        return ""

    with pytest.raises(AssertionError, match="does not match"):
        check_signature(nvmlDeviceGetName)
