"""The Doctor in Chinese: on machines that bring out every sentence gui/core/doctor.py composes from figures,
versions, paths and names (an old card on a new driver, a CPU-only engine, no driver at all, a simulated card,
the power cap's path on several distributions), the view shows no English outside the allow-list; and the
same checks read in English exactly as the command line and the logs write them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from gui.core import gpu_sample as reasons
from gui.core.doctor import Check, DoctorFacts, EngineFacts, GpuFacts, Status, run_checks
from gui.core.gpu_sample import GpuProcess, GpuSample
from gui.core.params import LoadSettings
from gui.core.words import Words
from gui.ui.doctor_view import DoctorView
from gui.ui.i18n import core_text
from tests.i18n_kit import ROOT, chinese, english, extract, untranslated

__all__ = ["chinese", "english"]  # fixtures, used by name


def sample(**readings: Any) -> GpuSample:
    return GpuSample(index=readings.pop("index", 0), timestamp=0.0, **readings)


def hot(gpu: GpuFacts, limit: float, thermal: int, total: int = 5, **more: Any) -> GpuFacts:
    """A card whose last readings hit the thermal slowdown `thermal` times out of `total`."""
    history = tuple(
        sample(
            index=gpu.index,
            throttle_reasons=(reasons.POWER_CAP, reasons.THERMAL_SLOWDOWN) if i < thermal else (reasons.POWER_CAP,),
            power_limit_w=limit,
            power_default_w=250.0,
            power_min_w=100.0,
            **more,
        )
        for i in range(total)
    )
    return replace(gpu, sample=history[-1], history=history)


V100 = GpuFacts(index=0, name="Tesla V100-PCIE-16GB", compute_capability="7.0", pci_bus_id="0000:3b:00.0")
P40 = GpuFacts(index=1, name="Tesla P40", compute_capability="6.1")
CUDA = EngineFacts(backend="CUDA", gpu_offload=True, cuda_archs=(61,), cuda_runtime="12.9", describe="llama.cpp CUDA")
CPU = EngineFacts(backend="CPU", gpu_offload=False, describe="llama.cpp CPU")
GAP = frozenset({(192, 128, 4)})  # a head size CUDA's flash attention has no kernel for
FITS = frozenset({(128, 128, 4)})
CORES = {0: frozenset(range(16)), 1: frozenset(range(16, 32))}

# Each machine brings out a different set of sentences; together they bring out every one.
MACHINES: dict[str, DoctorFacts] = {
    # A V100 and a P40 on a driver past their branch, an engine built for the P40 only, everything set wrong.
    "old cards on a new driver": DoctorFacts(
        gpus=(
            hot(
                replace(V100, persistence_mode=False, numa_node=1),
                250.0,
                thermal=4,
                temperature_c=86.0,
                pcie_gen=1, pcie_width=16, pcie_gen_max=3, pcie_width_max=16, gpu_util_pct=90.0,
                ecc_corrected=3, ecc_uncorrected=0,
                processes=(GpuProcess(4242, "/usr/bin/python3", 2048.0), GpuProcess(9, "/usr/lib/Xorg", None)),
            ),
            replace(P40, persistence_mode=None, sample=sample(index=1, processes=(GpuProcess(77, None, None),))),
        ),
        driver_version="590.44.01",
        nvml_version="12.570.133.20",
        cuda_driver_version="12.8",
        pci_nvidia_gpus=3,
        engine=CUDA,
        cpu_flags=frozenset({"avx2"}),
        settings=LoadSettings(
            n_threads=64, n_parallel=4, n_batch=256, n_ubatch=512, n_ctx=32768, cache_type_v="q8_0", flash_attn="off"
        ),
        n_ctx_train=8192,
        host_weights_mib=10_000.0,
        ram_available_mib=8_000.0,
        engine_rss_mib=1_000.0,
        swap_total_mib=8192.0,
        swap_used_mib=1024.0,
        physical_cores=16,
        performance_cpus=frozenset(range(16)),
        performance_cores=8,
        efficiency_cpus=frozenset(range(16, 24)),
        numa_nodes=CORES,
        engine_cpus=frozenset(range(32)),
        numactl=False,
        helper_installed=False,
        helper_python="/usr/bin/python3",
        helper_python_has_pynvml=False,
        pkexec=True,
        pkexec_version="127",
        sudo=True,
        sudo_rule=False,
        os_id="ubuntu",
        os_like=("debian",),
    ),
    # A simulated V100, capped and still hot, with memory errors; an engine with no code for it.
    "a simulated card": DoctorFacts(
        simulated="Tesla V100-PCIE-16GB",
        gpus=(
            replace(
                hot(
                    replace(V100, persistence_mode=True, numa_node=0),
                    200.0,
                    thermal=5,
                    temperature_c=84.0,
                    pcie_gen=1, pcie_width=8, pcie_gen_max=3, pcie_width_max=16, gpu_util_pct=5.0,
                    ecc_corrected=1, ecc_uncorrected=2,
                    processes=(GpuProcess(9, "Xorg", 300.0),),
                ),
                retired_pages_pending=True,
                remapped_rows_pending=True,
                remapped_rows_failure=True,
            ),
        ),
        driver_version="570.133.20",
        nvml_version="12.570.133.20",
        cuda_driver_version="12.8",
        pci_nvidia_gpus=2,
        engine=replace(CUDA, cuda_archs=(75,), cuda_runtime="13.0"),
        settings=LoadSettings(n_threads=8, n_parallel=4, kv_unified=True, flash_attn="on"),
        attn_heads=GAP,
        n_ctx_train=8192,
        host_weights_mib=10_000.0,
        ram_available_mib=11_000.0,
        physical_cores=16,
        performance_cpus=frozenset(range(16)),
        performance_cores=8,
        efficiency_cpus=frozenset(range(16, 24)),
        numa_nodes=CORES,
        engine_cpus=None,
        numactl=True,
    ),
    # No driver for the card on the bus: NVML does not answer, the engine is a CPU build.
    "a card without its driver": DoctorFacts(
        gpus=None,
        pci_nvidia_gpus=1,
        engine=CPU,
        settings=LoadSettings(n_parallel=1, flash_attn="auto", cache_type_v="q8_0"),
        efficiency_cpus=frozenset(),
        numa_nodes={0: frozenset(range(8))},
        swap_total_mib=0.0,
        swap_used_mib=0.0,
    ),
    # NVML answers with no card at all: the processor runs the models.
    "no NVIDIA card": DoctorFacts(gpus=(), pci_nvidia_gpus=0, engine=CPU, nvml_version="12.570.133.20"),
    # An engine that lists no architecture, a card that does not say its capability; figures partly unknown.
    "an engine built for no card": DoctorFacts(
        gpus=(
            hot(replace(V100, numa_node=-1, display_active=True), 250.0, thermal=1, temperature_c=70.0),
            GpuFacts(index=1, sample=sample(index=1, name="Tesla T4", throttle_reasons=None)),
        ),
        driver_version="590.44.01",
        engine=replace(CUDA, cuda_archs=(), cuda_runtime=None),
        cuda_driver_version="12.8",
        settings=LoadSettings(n_threads=4, flash_attn="auto"),
        attn_heads=GAP,
        numa_nodes=CORES,
        physical_cores=None,
        efficiency_cpus=frozenset(range(8, 16)),
        performance_cpus=frozenset(),
        helper_installed=True,
        helper_python_has_pynvml=True,
        pkexec=False,
        sudo=False,
        sudo_rule=False,
    ),
    # The same card with the default power limit and no temperature reading, flash attention forced on by a
    # quantized V cache; the power cap's path on Arch, with a sudo rule.
    "a quantized cache on Arch": DoctorFacts(
        gpus=(
            replace(
                hot(replace(V100, numa_node=1), 250.0, thermal=5, total=2, ecc_corrected=0, ecc_uncorrected=0),
                ecc_corrected_aggregate=0,
                ecc_uncorrected_aggregate=0,
            ),
        ),
        driver_version="570.133.20",
        engine=replace(CUDA, cuda_archs=(70,), cuda_runtime="12.4"),
        cuda_driver_version=None,
        settings=LoadSettings(flash_attn="auto", cache_type_v="q8_0"),
        attn_heads=GAP,
        numa_nodes=CORES,
        engine_cpus=frozenset(range(16)),
        numactl=True,
        helper_installed=True,
        helper_python_has_pynvml=False,
        pkexec=True,
        sudo_rule=True,
        os_id="arch",
    ),
    # Flash attention with every kernel, a T4 running the V100's code; a distribution with no package for NVML.
    "kernels for the model on another distribution": DoctorFacts(
        gpus=(
            replace(V100, sample=sample(processes=(), throttle_reasons=())),
            GpuFacts(index=1, name="Tesla T4", compute_capability="7.5"),
        ),
        engine=replace(CUDA, cuda_archs=(70,)),
        settings=LoadSettings(flash_attn="on"),
        attn_heads=FITS,
        helper_installed=True,
        helper_python_has_pynvml=False,
        pkexec=True,
        pkexec_version="126",
        os_id="fedora",
    ),
    # A CPU build that cannot use the card NVML sees; NVML's library and the driver differ.
    "a CPU engine beside a card": DoctorFacts(
        gpus=(GpuFacts(index=0, name="Tesla P40", sample=sample(throttle_reasons=(reasons.THERMAL_SLOWDOWN,))),),
        nvml_mismatch=True,
        engine=EngineFacts(backend="CPU", gpu_offload=False),
        helper_installed=True,
        helper_python_has_pynvml=None,
    ),
}  # fmt: skip


def shown(check: Check) -> tuple[str, ...]:
    """What the view shows of a check: its evidence always, why and fix only for a finding."""
    finding = check.status is not Status.OK
    fix = check.fix.words if finding and check.fix is not None else ""
    return (check.evidence, check.why if finding else "", fix)


def templates(text: str) -> Iterator[str]:
    if isinstance(text, Words):
        yield text.template
        for value in text.fields.values():
            yield from templates(value)


def test_every_sentence_the_doctor_composes_shows_in_chinese(qtbot, chinese: None) -> None:
    composed = {m.source for m in extract._words_messages(ROOT / "gui" / "core" / "doctor.py")}
    assert len(composed) > 100
    walked: set[str] = set()
    found: list[str] = []
    for name, facts in MACHINES.items():
        checks = run_checks(facts)
        view = DoctorView()
        qtbot.addWidget(view)
        view.show_checks(checks)
        found += [f"{name}: {line}" for line in untranslated(view)]
        walked |= {t for check in checks for text in shown(check) for t in templates(text)}
    assert found == [], "\n".join(found)
    assert sorted(composed - walked) == [], f"sentences no machine here brings out: {sorted(composed - walked)}"


def test_a_check_reads_in_chinese_with_its_figures(qtbot, chinese: None) -> None:
    checks = {c.id: c for c in run_checks(MACHINES["old cards on a new driver"])}
    threads = checks["cpu.threads"]
    assert threads.evidence == "64 threads on 16 physical cores"  # English for the CLI and the log
    assert core_text("doctor", threads.evidence) == "64 个线程跑在 16 个物理核心上"
    persistence = core_text("doctor", checks["driver.persistence"].evidence)
    assert persistence == "GPU 0（Tesla V100-PCIE-16GB）：关闭；GPU 1（Tesla P40）：未知"
    assert threads.fix is not None and core_text("doctor", threads.fix.words) == "用 16 个线程，每个物理核心一个。"


def test_in_english_the_window_shows_what_the_command_line_writes(english: None) -> None:
    for facts in MACHINES.values():
        for check in run_checks(facts):
            for text in shown(check):
                assert core_text("doctor", text) == text
