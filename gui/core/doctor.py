"""The Doctor's checks: what is wrong with this machine for running big models on an old card, in numbers
and words, with the fix.

Each check is a pure function of `DoctorFacts` (gathered by gui.services.doctor_facts, or built by a test)
and returns one `Check`. Nothing here reads the machine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from gui.core import gpu_sample as reasons
from gui.core.engine_route import AMX_ISSUE, ARCHS_ENV, ENGINE_ENV, host_cmake_args
from gui.core.gpu_sample import GpuProcess, GpuSample
from gui.core.params import FLOAT_CACHE_TYPES, LoadSettings
from gui.core.planner import cuda_flash_attn_gaps
from gui.core.preferences import CAP
from gui.core.protocol import EngineBuild
from gui.core.system_info import parse_system_info
from gui.core.words import Text, english, joined, mark, words

__all__ = [
    "CHECKS",
    "STATUS_WORDS",
    "Check",
    "DoctorFacts",
    "EngineFacts",
    "Fix",
    "GpuFacts",
    "Status",
    "by_severity",
    "exit_code",
    "rebuild_command",
    "run_checks",
    "summary",
    "worst",
]


ENGINE_WORD = words("engine")  # whose CPU affinity the facts read, unless told


class Status(StrEnum):
    OK = "ok"
    UNKNOWN = "unknown"  # the fact could not be read here; not a finding
    WARN = "warn"
    FAIL = "fail"


_RANK = {Status.OK: 0, Status.UNKNOWN: 1, Status.WARN: 2, Status.FAIL: 3}
# How each status is written where space is short (the CLI's column, the window's list and badge).
STATUS_WORDS = {
    Status.FAIL: mark("FAIL", "doctor"),
    Status.WARN: mark("WARN", "doctor"),
    Status.UNKNOWN: mark("?", "doctor"),
    Status.OK: mark("OK", "doctor"),
}


@dataclass(frozen=True)
class Fix:
    """How to put it right: words always; a command to copy, or an action the window performs itself."""

    words: Text
    command: str = ""  # a shell command the user copies and runs
    # An action the window can do itself ("" when it cannot): "pin_numa:<node>", "set:<setting key>=<value>",
    # "open:power" (the power panel), "open:log".
    action: str = ""

    def as_json(self) -> dict[str, str]:
        return {"words": english(self.words), "command": self.command, "action": self.action}


@dataclass(frozen=True)
class Check:
    id: str  # stable, dotted: "engine.cpu_only", "numa.gpu_node"
    title: str  # a few words: "Engine built for the GPU"
    status: Status
    evidence: Text  # the numbers behind the status
    why: Text  # one sentence a hobbyist understands
    fix: Fix | None = None  # None when there is nothing to do

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": english(self.title),
            "status": str(self.status),
            "evidence": english(self.evidence),
            "why": english(self.why),
            "fix": self.fix.as_json() if self.fix is not None else None,
        }


def worst(checks: list[Check] | tuple[Check, ...]) -> Status:
    return max((c.status for c in checks), key=_RANK.__getitem__, default=Status.OK)


def by_severity(checks: list[Check] | tuple[Check, ...]) -> tuple[Check, ...]:
    """Worst first (failures, warnings, unknowns, then ok), each group in the checks' own order."""
    return tuple(sorted(checks, key=lambda c: -_RANK[c.status]))


def summary(checks: list[Check] | tuple[Check, ...]) -> str:
    """'1 failure, 2 warnings, 3 not known here, 12 ok': what was found, worst first."""
    nouns = {Status.FAIL: "failure", Status.WARN: "warning", Status.UNKNOWN: "not known here", Status.OK: "ok"}
    parts = []
    for status in sorted(Status, key=lambda s: -_RANK[s]):
        n = sum(c.status is status for c in checks)
        if n:
            plural = "s" if status in (Status.FAIL, Status.WARN) and n != 1 else ""
            parts.append(f"{n} {nouns[status]}{plural}")
    return ", ".join(parts) or "no checks"


def exit_code(checks: list[Check] | tuple[Check, ...]) -> int:
    """0 when all is ok (unknowns are not findings), 1 with warnings, 2 with failures."""
    status = worst(checks)
    return 2 if status is Status.FAIL else 1 if status is Status.WARN else 0


# ---- the facts ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class EngineFacts:
    """What the installed llama.cpp was built for. None where the build does not say."""

    backend: str | None = None  # "CPU", "CUDA", ...
    gpu_offload: bool | None = None  # False: GPU layers are silently ignored
    cuda_archs: tuple[int, ...] | None = None  # compiled CUDA architectures: 70 is compute capability 7.0
    cuda_runtime: str | None = None  # the CUDA runtime it was built with: "12.4"
    describe: Text = ""  # the build in words, as the status bar shows it
    error: Text = ""  # why the build could not be read
    cpu_features: Mapping[str, str] = field(default_factory=dict)  # its CPU backend's: {"AMX_INT8": "1", ...}

    @classmethod
    def of(cls, build: EngineBuild) -> EngineFacts:
        return cls(
            backend=build.backend,
            gpu_offload=build.gpu_offload,
            cuda_archs=tuple(build.cuda_archs) or None,  # () where the build did not say
            cuda_runtime=build.cuda_runtime or None,
            describe=build.describe(),
            cpu_features=parse_system_info(build.system_info).get("CPU", {}),
        )


@dataclass(frozen=True)
class GpuFacts:
    index: int
    name: str = ""
    compute_capability: str | None = None  # "7.0"
    sample: GpuSample | None = None  # the reading now: load, PCIe link, processes, power limits, ECC since boot
    history: tuple[GpuSample, ...] = ()  # recent readings, oldest first, for what must be sustained
    persistence_mode: bool | None = None
    display_active: bool | None = None
    pci_bus_id: str | None = None  # "0000:3b:00.0"
    numa_node: int | None = None  # from sysfs; -1 where the board does not say
    ecc_corrected_aggregate: int | None = None  # over the card's life
    ecc_uncorrected_aggregate: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    errors: Mapping[str, Text] = field(default_factory=dict)  # fact -> why it could not be read


@dataclass(frozen=True)
class DoctorFacts:
    """Everything the checks look at. Every field may be missing: a check whose facts are missing says
    "unknown" and why, never guesses."""

    simulated: str = ""  # the simulated card's name: the GPU and driver facts are made up, and say so
    # The NVIDIA driver, through NVML.
    gpus: tuple[GpuFacts, ...] | None = None  # None: NVML did not answer (nvml_error says why)
    nvml_error: str = ""
    nvml_mismatch: bool | None = None  # NVML refused to start: library and kernel module differ
    driver_version: str | None = None  # "570.133.20"
    nvml_version: str | None = None  # "12.570.133.20"
    cuda_driver_version: str | None = None  # the newest CUDA runtime the driver runs: "12.8"
    pci_nvidia_gpus: int | None = None  # NVIDIA display controllers on the PCI bus, driver or not
    # The engine, and what the set-up would build here.
    engine: EngineFacts | None = None
    route_command: str | None = None  # the command that builds a CUDA engine for these GPUs (the set-up's route)
    route_help: Text = ""  # what to install first where the set-up cannot build one yet (no suitable toolkit)
    python: str = "python"  # the interpreter Tightfit runs in, as a command names it (".venv/bin/python")
    cpu_flags: frozenset[str] | None = None  # the processor's features (/proc/cpuinfo), None where unknown
    # The load, as the window or the command line has it.
    settings: LoadSettings | None = None
    n_ctx_train: int | None = None  # the model's trained context (GGUF header)
    attn_heads: frozenset[tuple[int, int, int]] | None = None  # the model's (head K, head V, query heads per KV)
    host_weights_mib: float | None = None  # weights the plan keeps in host memory
    # The processor.
    physical_cores: int | None = None
    performance_cpus: frozenset[int] | None = None  # hybrid CPUs: the performance cores' logical CPUs
    performance_cores: int | None = None  # physical performance cores
    efficiency_cpus: frozenset[int] | None = None  # empty: not a hybrid CPU
    numa_nodes: Mapping[int, frozenset[int]] | None = None  # node -> its CPUs
    engine_cpus: frozenset[int] | None = None  # the CPUs the engine may run on
    engine_cpus_from: Text = ENGINE_WORD  # whose affinity that is, in words
    numactl: bool | None = None
    # Memory.
    ram_total_mib: float | None = None
    ram_available_mib: float | None = None
    swap_total_mib: float | None = None
    swap_used_mib: float | None = None
    engine_rss_mib: float | None = None  # what the running engine holds now (freed when it reloads)
    own_pids: frozenset[int] = frozenset()  # the engine and this process: not "other" GPU users
    # The power cap's path.
    power_readiness: str | None = None  # PowerLimiter.readiness(): "" when the cap can run
    helper_path: str = "/usr/libexec/tightfit-power-helper"
    helper_installed: bool | None = None
    helper_python: str | None = None  # the interpreter the helper runs with
    helper_python_has_pynvml: bool | None = None
    pkexec_version: str | None = None  # "127"; None where pkexec is not installed (pkexec says whether known)
    pkexec: bool | None = None
    sudo: bool | None = None
    sudo_rule: bool | None = None  # `sudo -n` may run the helper
    # The distribution, for the commands to copy.
    os_id: str | None = None  # "ubuntu"
    os_like: tuple[str, ...] = ()  # ("debian",)
    os_name: str | None = None  # "Ubuntu 24.04.2 LTS"


# ---- shared words ------------------------------------------------------------------------------

# Above this share of the recent readings, a slowdown is sustained rather than a passing spike.
SUSTAINED_SHARE = 0.5
BUSY_PCT = 50.0  # a GPU busier than this should have its PCIe link at full speed
# RAM kept free beyond the host-resident weights: the KV cache of host layers, buffers, the desktop.
RAM_MARGIN_MIB = 2048.0
SWAP_IN_USE_MIB = 256.0  # a little swap is always in use on some systems; more means memory ran short
# nvidia-smi's process names for display servers and compositors that keep a framebuffer on the card.
DISPLAY_SERVERS = frozenset(
    {
        "xorg",
        "x",
        "xwayland",
        "gnome-shell",
        "kwin",
        "kwin_x11",
        "kwin_wayland",
        "sway",
        "mutter",
        "weston",
        "cosmic-comp",
    }
)
OLD_DRIVER_BRANCH = 580  # the last driver branch for Maxwell, Pascal and Volta
# The install lines of packaging/README.md, for a copied command.
_HELPER_INSTALL = (
    "sudo install -m 0755 -o root -g root packaging/tightfit-power-helper {helper} && "
    "sudo install -m 0644 packaging/org.tightfit.power-limit.policy /usr/share/polkit-1/actions/"
)
_SUDO_RULE = (
    'echo "$USER ALL=(root) NOPASSWD: {helper}" > tightfit.sudoers && '
    "sudo visudo -cf tightfit.sudoers && sudo install -m 0440 -o root -g root tightfit.sudoers /etc/sudoers.d/tightfit"
    " && rm tightfit.sudoers"
)
_SUDO_SECTION = 'packaging/README.md, "Without a polkit agent: sudo -n"'


def _mib(value: float) -> str:
    return f"{value:,.0f} MiB"


def _cpus(cpus: frozenset[int] | set[int]) -> Text:
    """The kernel's CPU list format: {0, 1, 2, 3, 8} -> '0-3,8'."""
    runs: list[list[int]] = []
    for cpu in sorted(cpus):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs) or words("none")


def _count(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def _capability(text: str | None) -> int | None:
    """'7.0' -> 70, the form CUDA architectures are written in."""
    if not text:
        return None
    major, _, minor = text.partition(".")
    try:
        return int(major) * 10 + int(minor or 0)
    except ValueError:
        return None


def _version(text: str | None) -> tuple[int, ...] | None:
    """'12.4' -> (12, 4); '590.44.01' -> (590, 44, 1); None where it is not dotted numbers."""
    if not text:
        return None
    try:
        return tuple(int(part) for part in text.strip().split("."))
    except ValueError:
        return None


def _label(gpu: GpuFacts, facts: DoctorFacts) -> Text:
    name = gpu.name or (gpu.sample.name if gpu.sample is not None and gpu.sample.name else "")
    details = [part for part in (name, words("simulated") if facts.simulated else "") if part]
    return (
        words("GPU {index} ({details})", index=gpu.index, details=joined(", ", details))
        if details
        else f"GPU {gpu.index}"
    )


def _on(gpu: GpuFacts, facts: DoctorFacts, what: Text) -> Text:
    """A line about one card: 'GPU 0 (Tesla V100-PCIE-16GB): off'."""
    return words("{gpu}: {what}", gpu=_label(gpu, facts), what=what)


def _no_gpu(facts: DoctorFacts) -> Text:
    """Why there is no GPU to check, in words."""
    if facts.gpus is None:
        return words("NVML did not answer: {error}", error=facts.nvml_error or words("not asked"))
    return words("NVML sees no NVIDIA GPU")


def rebuild_command(archs: Sequence[int], python: str = "python") -> str:
    """The set-up, told to build with CUDA for these architectures: for when it cannot choose CUDA by itself yet
    (no usable toolkit found). Run once a CUDA 12.x toolkit is installed; it says what is still missing."""
    arch_list = ";".join(str(a) for a in sorted(set(archs)))
    return f'{ENGINE_ENV}=cuda {ARCHS_ENV}="{arch_list}" {python} -m gui.commands.engine_setup'


def _rebuild_fix(facts: DoctorFacts, gpus: Sequence[GpuFacts], reason: Text) -> Fix:
    archs = [a for a in (_capability(g.compute_capability) for g in gpus) if a is not None]
    listed = ", ".join(str(a) for a in sorted(set(archs))) or words("your card")
    command = facts.route_command or (rebuild_command(archs, facts.python) if archs else "")
    parts = [reason, words("Build the engine with CUDA for architecture {archs}.", archs=listed)]
    if facts.route_help:
        parts.append(facts.route_help)
    elif any(a < 75 for a in archs):
        parts.append(
            words("Cards below compute capability 7.5 need a CUDA 12.x toolkit: CUDA 13 cannot build for them.")
        )
    return Fix(joined(" ", parts), command=command)


def _check(id: str, title: str, status: Status, evidence: Text, why: Text, fix: Fix | None = None) -> Check:
    return Check(id, title, status, evidence, why, fix)


# ---- engine ------------------------------------------------------------------------------------


def check_engine_gpu_build(facts: DoctorFacts) -> Check:
    title, id = mark("Engine built for the GPU", "doctor"), "engine.gpu_build"
    why = mark(
        "An engine built without CUDA silently ignores GPU layers: the model runs on the processor at a fraction of "
        "the card's speed.",
        "doctor",
    )
    engine = facts.engine
    if engine is None or engine.gpu_offload is None:
        reason = engine.error if engine is not None and engine.error else "the engine's build could not be read"
        return _check(id, title, Status.UNKNOWN, reason, why)
    if not facts.gpus:
        if facts.pci_nvidia_gpus:
            return _check(id, title, Status.UNKNOWN, joined("; ", (engine.describe, _no_gpu(facts))), why)
        evidence = words(
            "{engine}; {no_gpu}, so the CPU is what runs models", engine=engine.describe, no_gpu=_no_gpu(facts)
        )
        return _check(id, title, Status.OK, evidence, why)
    gpus = joined(
        ", ",
        (
            words(
                "{gpu}, compute capability {capability}", gpu=_label(g, facts), capability=g.compute_capability or "?"
            )
            for g in facts.gpus
        ),
    )
    if engine.gpu_offload:
        return _check(id, title, Status.OK, joined("; ", (engine.describe, gpus)), why)
    fix = _rebuild_fix(facts, facts.gpus, words("This engine cannot use the GPU."))
    build = engine.describe or words("CPU-only build")
    return _check(id, title, Status.FAIL, words("{engine}; NVML sees {gpus}", engine=build, gpus=gpus), why, fix)


def check_engine_amx(facts: DoctorFacts) -> Check:
    title, id = mark("Engine safe on this processor", "doctor"), "engine.amx"
    why = words(
        "llama.cpp's AMX matrix kernels crash the first prompt on some Xeon processors with AMX ({issue}); "
        "an engine built without them runs on the same processor with its AVX-512 kernels.",
        issue=AMX_ISSUE,
    )
    engine = facts.engine
    if engine is None or engine.gpu_offload is None:
        reason = engine.error if engine is not None and engine.error else "the engine's build could not be read"
        return _check(id, title, Status.UNKNOWN, reason, why)
    if facts.cpu_flags is None:
        return _check(id, title, Status.UNKNOWN, mark("the processor's features could not be read", "doctor"), why)
    if not host_cmake_args(facts.cpu_flags):
        return _check(id, title, Status.OK, mark("this processor has no AMX: nothing to avoid", "doctor"), why)
    if engine.cpu_features.get("AMX_INT8") != "1":
        return _check(
            id, title, Status.OK, mark("the processor has AMX; the engine was built without its kernels", "doctor"), why
        )
    fix = Fix(
        mark("Build the engine again: the set-up builds it without the AMX kernels on this processor.", "doctor"),
        command=f"{facts.python} -m gui.commands.engine_setup",
    )
    return _check(
        id,
        title,
        Status.FAIL,
        mark("the processor has AMX and the engine was built with AMX_INT8 = 1", "doctor"),
        why,
        fix,
    )


def check_engine_cuda_archs(facts: DoctorFacts) -> Check:
    title, id = mark("Engine compiled for the card", "doctor"), "engine.cuda_archs"
    why = mark(
        "CUDA runs a kernel only where it was compiled for the card's architecture or an older one of the same "
        "generation; without it the engine cannot use the card, or runs slower code.",
        "doctor",
    )
    engine = facts.engine
    if engine is None or not engine.gpu_offload or (engine.backend or "").upper() != "CUDA":
        return _check(id, title, Status.UNKNOWN, mark("not a CUDA build", "doctor"), why)
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    if engine.cuda_archs is None:
        return _check(
            id,
            title,
            Status.UNKNOWN,
            mark("the build does not say which architectures it was compiled for", "doctor"),
            why,
        )
    compiled = set(engine.cuda_archs)
    missing: list[GpuFacts] = []
    older: list[GpuFacts] = []
    notes = []
    for gpu in facts.gpus:
        cap = _capability(gpu.compute_capability)
        label = _label(gpu, facts)
        if cap is None:
            notes.append(words("{gpu}: compute capability unknown", gpu=label))
        elif cap in compiled:
            notes.append(words("{gpu} is {cap}: compiled in", gpu=label, cap=cap))
        elif any(a // 10 == cap // 10 and a < cap for a in compiled):
            older.append(gpu)
            notes.append(
                words(
                    "{gpu} is {cap}: only an older {major}.x architecture is compiled in",
                    gpu=label,
                    cap=cap,
                    major=cap // 10,
                )
            )
        else:
            missing.append(gpu)
            notes.append(words("{gpu} is {cap}: not compiled in", gpu=label, cap=cap))
    archs = ", ".join(str(a) for a in sorted(compiled)) or words("nothing")
    evidence = words("compiled for {archs}; {notes}", archs=archs, notes=joined("; ", notes))
    if missing:
        fix = _rebuild_fix(facts, facts.gpus, words("The engine has no code for this card."))
        return _check(id, title, Status.FAIL, evidence, why, fix)
    if older:
        fix = _rebuild_fix(
            facts, facts.gpus, words("The card runs code built for an older architecture, without its own features.")
        )
        return _check(id, title, Status.WARN, evidence, why, fix)
    if notes and all("unknown" in n for n in notes):
        return _check(id, title, Status.UNKNOWN, evidence, why)
    return _check(id, title, Status.OK, evidence, why)


def check_engine_cuda_runtime(facts: DoctorFacts) -> Check:
    title, id = mark("CUDA runtime and driver", "doctor"), "engine.cuda_runtime"
    why = mark(
        "An engine built with a newer CUDA than the driver supports cannot start its GPU code, or only some of it.",
        "doctor",
    )
    engine = facts.engine
    if engine is None or not engine.gpu_offload or (engine.backend or "").upper() != "CUDA":
        return _check(id, title, Status.UNKNOWN, mark("not a CUDA build", "doctor"), why)
    runtime, driver = _version(engine.cuda_runtime), _version(facts.cuda_driver_version)
    if runtime is None or driver is None:
        missing = words("the engine's CUDA runtime") if runtime is None else words("the driver's CUDA version")
        return _check(id, title, Status.UNKNOWN, words("{what} is not known", what=missing), why)
    evidence = words(
        "engine built with CUDA {runtime}; driver {driver} supports up to CUDA {supported}",
        runtime=engine.cuda_runtime,
        driver=facts.driver_version or "?",
        supported=facts.cuda_driver_version,
    )
    advice = words(
        "Update the driver to one that supports CUDA {runtime} (for Pascal or Volta cards, the R580 branch is the "
        "last), or rebuild the engine with a CUDA toolkit no newer than {supported}.",
        runtime=engine.cuda_runtime,
        supported=facts.cuda_driver_version,
    )
    if runtime[0] > driver[0]:
        return _check(id, title, Status.FAIL, evidence, why, Fix(advice, command=facts.route_command or ""))
    if runtime[:2] > driver[:2]:
        evidence = words(
            "{evidence} (same major version: CUDA's minor-version compatibility runs it, but any kernel it must "
            "compile at start fails)",
            evidence=evidence,
        )
        return _check(id, title, Status.WARN, evidence, why, Fix(advice, command=facts.route_command or ""))
    return _check(id, title, Status.OK, evidence, why)


def check_engine_flash_attn(facts: DoctorFacts) -> Check:
    title, id = mark("Flash attention on the card", "doctor"), "engine.flash_attn"
    why = mark(
        "Flash attention needs a CUDA kernel for the model's head size and cache types; without one llama.cpp "
        "either turns it off (a larger compute buffer) or runs it on the processor (much slower).",
        "doctor",
    )
    s = facts.settings
    if s is None:
        return _check(id, title, Status.UNKNOWN, mark("no load settings", "doctor"), why)
    if s.flash_attn == "off":
        return _check(id, title, Status.OK, mark("flash attention is off", "doctor"), why)
    engine = facts.engine
    if engine is None or engine.gpu_offload is None:
        return _check(id, title, Status.UNKNOWN, mark("the engine's build could not be read", "doctor"), why)
    if not engine.gpu_offload or not facts.gpus:
        return _check(
            id, title, Status.OK, mark("runs on the CPU, which has flash attention for every head size", "doctor"), why
        )
    if facts.attn_heads is None:
        return _check(id, title, Status.UNKNOWN, mark("no model selected: its head sizes are not known", "doctor"), why)
    gaps = cuda_flash_attn_gaps(facts.attn_heads, s.cache_type_k, s.cache_type_v)
    if not gaps:
        evidence = words("flash attention {mode}: CUDA has kernels for this model", mode=s.flash_attn)
        return _check(id, title, Status.OK, evidence, why)
    evidence = words("flash attention {mode}; no CUDA kernel for {gaps}", mode=s.flash_attn, gaps=joined(", ", gaps))
    forced = s.flash_attn == "on" or s.cache_type_v not in FLOAT_CACHE_TYPES  # a quantized V cache forces it on
    if not forced:
        fix = Fix(
            mark(
                "With auto, llama.cpp runs this model without flash attention: plan for the larger compute buffer.",
                "doctor",
            )
        )
        return _check(id, title, Status.WARN, words("{evidence} (auto turns it off)", evidence=evidence), why, fix)
    if s.cache_type_v in FLOAT_CACHE_TYPES:
        fix = Fix(
            mark(
                "Set flash attention to auto: llama.cpp then runs without it on the GPU instead of on the processor.",
                "doctor",
            ),
            action="set:flash_attn=auto",
        )
        return _check(
            id, title, Status.WARN, words("{evidence} (it runs on the processor)", evidence=evidence), why, fix
        )
    fix = Fix(
        mark("Use an f16 V cache and flash attention auto, so attention stays on the GPU.", "doctor"),
        action="set:cache_type_v=f16",
    )
    evidence = words("{evidence} (a quantized V cache forces it on)", evidence=evidence)
    return _check(id, title, Status.WARN, evidence, why, fix)


# ---- driver ------------------------------------------------------------------------------------


def _driver_fix(facts: DoctorFacts, advice: Text) -> Fix:
    ids = {facts.os_id or "", *facts.os_like}
    command = f"sudo apt install nvidia-driver-{OLD_DRIVER_BRANCH}" if "ubuntu" in ids else ""
    return Fix(advice, command=command)


def check_driver_branch(facts: DoctorFacts) -> Check:
    title, id = mark("Driver supports the card", "doctor"), "driver.branch"
    why = words(
        "NVIDIA's R{branch} driver branch is the last for Maxwell, Pascal and Volta cards (P40, P100, V100); newer "
        "drivers ignore them.",
        branch=OLD_DRIVER_BRANCH,
    )
    legacy_words = words(
        "Install the R{branch} driver branch (580.xx) from your distribution or NVIDIA, and keep it from being "
        "upgraded to a newer branch.",
        branch=OLD_DRIVER_BRANCH,
    )
    if facts.gpus is None:
        if facts.nvml_mismatch:
            return _check(
                id,
                title,
                Status.UNKNOWN,
                mark("NVML's library and the loaded driver differ (see: Driver and NVML match)", "doctor"),
                why,
            )
        if facts.pci_nvidia_gpus:
            evidence = words(
                "{n} NVIDIA card(s) on the PCI bus, but {no_gpu}", n=facts.pci_nvidia_gpus, no_gpu=_no_gpu(facts)
            )
            advice = words("Install an NVIDIA driver. {legacy}", legacy=legacy_words)
            return _check(id, title, Status.FAIL, evidence, why, _driver_fix(facts, advice))
        if facts.pci_nvidia_gpus == 0:
            return _check(id, title, Status.OK, mark("no NVIDIA card on the PCI bus", "doctor"), why)
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    version = _version(facts.driver_version)
    if version is None:
        return _check(id, title, Status.UNKNOWN, mark("the driver's version is not known", "doctor"), why)
    driver = facts.driver_version
    if facts.simulated:
        evidence = words("driver {version} (simulated)", version=driver)
    else:
        evidence = words("driver {version}", version=driver)
    ignored = (facts.pci_nvidia_gpus or 0) - len(facts.gpus)
    if version[0] > OLD_DRIVER_BRANCH:
        old = [g for g in facts.gpus if (cap := _capability(g.compute_capability)) is not None and cap < 75]
        if old or ignored > 0:
            parts = [
                words("{gpu} is compute capability {capability}", gpu=_label(g, facts), capability=g.compute_capability)
                for g in old
            ]
            if ignored > 0:
                parts.append(words("{n} NVIDIA card(s) on the PCI bus that NVML does not list", n=ignored))
            return _check(
                id, title, Status.FAIL, joined("; ", (evidence, *parts)), why, _driver_fix(facts, legacy_words)
            )
    if ignored > 0:
        hidden = words(
            "{n} NVIDIA card(s) on the PCI bus that NVML does not list (disabled, or given to a VM?)", n=ignored
        )
        evidence = joined("; ", (evidence, hidden))
    return _check(id, title, Status.OK, evidence, why)


def check_driver_nvml_mismatch(facts: DoctorFacts) -> Check:
    title, id = mark("Driver and NVML match", "doctor"), "driver.nvml_mismatch"
    why = mark(
        "After a driver update the old driver stays loaded until a reboot, and nothing that uses the GPU works until "
        "then.",
        "doctor",
    )
    fix = Fix(mark("Reboot, so the updated driver is the one loaded.", "doctor"), command="sudo reboot")
    if facts.nvml_mismatch:
        error = facts.nvml_error or words("driver/library version mismatch")
        return _check(id, title, Status.FAIL, words("NVML: {error}", error=error), why, fix)
    if facts.nvml_version is None or facts.driver_version is None:
        unknown = _no_gpu(facts) if facts.gpus is None else words("versions not known")
        return _check(id, title, Status.UNKNOWN, unknown, why)
    # NVML's version is the CUDA major version, then the driver's: "12.570.133.20" for driver 570.133.20.
    library = facts.nvml_version.partition(".")[2]
    evidence = words("NVML {nvml}, driver {driver}", nvml=facts.nvml_version, driver=facts.driver_version)
    if library != facts.driver_version:
        return _check(id, title, Status.FAIL, evidence, why, fix)
    return _check(id, title, Status.OK, evidence, why)


def check_driver_persistence(facts: DoctorFacts) -> Check:
    title, id = mark("Persistence mode", "doctor"), "driver.persistence"
    why = mark(
        "Without persistence mode the driver lets go of an idle card, so the next start waits seconds while it wakes "
        "up.",
        "doctor",
    )
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    off = [g for g in facts.gpus if g.persistence_mode is False]
    known = [g for g in facts.gpus if g.persistence_mode is not None]
    state = {True: words("on"), False: words("off"), None: words("unknown")}
    states = joined("; ", (_on(g, facts, state[g.persistence_mode]) for g in facts.gpus))
    if off:
        fix = Fix(
            mark(
                "Turn persistence mode on now, and keep it on at every boot with the nvidia-persistenced service.",
                "doctor",
            ),
            command="sudo nvidia-smi -pm 1 && sudo systemctl enable --now nvidia-persistenced",
        )
        return _check(id, title, Status.WARN, states, why, fix)
    if not known:
        return _check(id, title, Status.UNKNOWN, states, why)
    return _check(id, title, Status.OK, states, why)


# ---- processor ---------------------------------------------------------------------------------


def check_cpu_threads(facts: DoctorFacts) -> Check:
    title, id = mark("Threads and cores", "doctor"), "cpu.threads"
    why = mark(
        "llama.cpp is fastest with one thread per physical core; more threads fight over the same cores (about 10% "
        "slower with 16 threads on 8 cores).",
        "doctor",
    )
    if facts.settings is None:
        return _check(id, title, Status.UNKNOWN, mark("no load settings", "doctor"), why)
    if not facts.physical_cores:
        return _check(id, title, Status.UNKNOWN, mark("the physical core count is not known", "doctor"), why)
    threads, cores = facts.settings.n_threads, facts.physical_cores
    evidence = words("{threads} threads on {cores} physical cores", threads=threads, cores=cores)
    if threads > cores:
        fix = Fix(words("Use {cores} threads, one per physical core.", cores=cores), action=f"set:n_threads={cores}")
        return _check(id, title, Status.WARN, evidence, why, fix)
    return _check(id, title, Status.OK, evidence, why)


def check_cpu_hybrid(facts: DoctorFacts) -> Check:
    title, id = mark("Performance and efficiency cores", "doctor"), "cpu.hybrid"
    why = mark(
        "On a CPU with performance and efficiency cores, llama.cpp's threads wait for the slowest one, so threads on "
        "efficiency cores slow every token.",
        "doctor",
    )
    if facts.efficiency_cpus is None:
        return _check(
            id,
            title,
            Status.UNKNOWN,
            mark("the kinds of cores are not known (no /sys/devices/cpu_atom)", "doctor"),
            why,
        )
    if not facts.efficiency_cpus:
        return _check(id, title, Status.OK, mark("not a hybrid CPU", "doctor"), why)
    p_cpus = facts.performance_cpus or frozenset()
    p_cores = facts.performance_cores or len(p_cpus)
    evidence = words(
        "{cores} performance cores (CPUs {performance}), efficiency cores on CPUs {efficiency}",
        cores=p_cores,
        performance=_cpus(p_cpus),
        efficiency=_cpus(facts.efficiency_cpus),
    )
    threads = facts.settings.n_threads if facts.settings is not None else None
    if threads is not None:
        evidence = joined("; ", (evidence, words("{threads} threads", threads=threads)))
    if threads is not None and p_cores and threads > p_cores:
        advice = words("Use {cores} threads, one per performance core.", cores=p_cores)
        fix = Fix(advice, action=f"set:n_threads={p_cores}")
    else:
        fix = Fix(
            mark(
                "Keep the threads at the performance-core count and start Tightfit on the performance cores only.",
                "doctor",
            ),
            command=f"taskset -c {english(_cpus(p_cpus))} tightfit" if p_cpus else "",
        )
    return _check(id, title, Status.WARN, evidence, why, fix)


def check_numa(facts: DoctorFacts) -> Check:
    title, id = mark("GPU and engine on one NUMA node", "doctor"), "numa.gpu_node"
    why = mark(
        "On a board with several NUMA nodes, an engine running on the far node's cores sends every transfer to the GPU "
        "across the link between them (tens of ms on the first token).",
        "doctor",
    )
    nodes = facts.numa_nodes
    if nodes is not None and len(nodes) <= 1:
        return _check(id, title, Status.OK, mark("one NUMA node", "doctor"), why)
    if nodes is None:
        return _check(id, title, Status.UNKNOWN, mark("the NUMA nodes are not known", "doctor"), why)
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    gpu = next((g for g in facts.gpus if g.numa_node is not None and g.numa_node >= 0), None)
    if gpu is None or gpu.numa_node is None:
        unsaid = words("{n} NUMA nodes; the board does not say which one the GPU is on", n=len(nodes))
        return _check(id, title, Status.UNKNOWN, unsaid, why)
    node = gpu.numa_node
    node_cpus = nodes.get(node, frozenset())
    evidence = words("GPU {index} on node {node} (CPUs {cpus})", index=gpu.index, node=node, cpus=_cpus(node_cpus))
    if facts.engine_cpus is None:
        unknown = joined("; ", (evidence, words("where the engine runs is not known")))
        return _check(id, title, Status.UNKNOWN, unknown, why)
    allowed = words("{whose} allowed on {cpus}", whose=facts.engine_cpus_from, cpus=_cpus(facts.engine_cpus))
    evidence = joined("; ", (evidence, allowed))
    if node_cpus and facts.engine_cpus <= node_cpus:
        return _check(id, title, Status.OK, evidence, why)
    memory = words("and its memory") if facts.numactl else words("(install numactl to bind its memory too)")
    advice = words(
        "Pin the engine to node {node}'s CPUs {memory}, from the next load; remembered for this machine.",
        node=node,
        memory=memory,
    )
    return _check(id, title, Status.WARN, evidence, why, Fix(advice, action=f"pin_numa:{node}"))


def check_pcie(facts: DoctorFacts) -> Check:
    title, id = mark("PCIe link", "doctor"), "pcie.link"
    why = mark(
        "A riser or slot that trained the link down to a lower generation or fewer lanes slows every transfer between "
        "the card and the processor.",
        "doctor",
    )
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    status, lines, fix = Status.OK, [], None
    for gpu in facts.gpus:
        s = gpu.sample
        values = None if s is None else (s.pcie_gen, s.pcie_width, s.pcie_gen_max, s.pcie_width_max, s.gpu_util_pct)
        if s is None or values is None or any(v is None for v in values):
            lines.append(_on(gpu, facts, words("link not known")))
            status = max(status, Status.UNKNOWN, key=_RANK.__getitem__)
            continue
        link = words(
            "gen {gen} x{width} of gen {gen_max} x{width_max} at {busy}% busy",
            gen=s.pcie_gen,
            width=s.pcie_width,
            gen_max=s.pcie_gen_max,
            width_max=s.pcie_width_max,
            busy=f"{s.gpu_util_pct:.0f}",
        )
        busy = (s.gpu_util_pct or 0) > BUSY_PCT
        below = (s.pcie_gen or 0) < (s.pcie_gen_max or 0) or (s.pcie_width or 0) < (s.pcie_width_max or 0)
        lines.append(_on(gpu, facts, link))
        if below and busy:
            status = Status.WARN
            bus = f" -s {gpu.pci_bus_id}" if gpu.pci_bus_id else ""
            fix = fix or Fix(
                mark(
                    "Reseat the card or its riser, try another slot, and check the slot's PCIe setting in the BIOS; "
                    "lspci shows what the link can do (LnkCap) and what it runs at (LnkSta).",
                    "doctor",
                ),
                command=f"sudo lspci -vv{bus} | grep -E 'LnkCap|LnkSta'",
            )
        elif below:
            idle = words("{link} (links slow down when idle: run the Doctor during a reply to check)", link=link)
            lines[-1] = _on(gpu, facts, idle)
            status = max(status, Status.UNKNOWN, key=_RANK.__getitem__)
    return _check(id, title, status, joined("; ", lines), why, fix)


# ---- memory ------------------------------------------------------------------------------------


def _room_for_weights(facts: DoctorFacts) -> float | None:
    """RAM the next load can use: what is available now plus what the running engine would give back."""
    if facts.ram_available_mib is None:
        return None
    return facts.ram_available_mib + (facts.engine_rss_mib or 0.0)


def check_memory_host_weights(facts: DoctorFacts) -> Check:
    title, id = mark("Room in RAM for the weights", "doctor"), "memory.host_weights"
    why = mark(
        "Weights kept in host memory must fit in free RAM; when they do not, the system swaps and every token waits "
        "for the disk.",
        "doctor",
    )
    room = _room_for_weights(facts)
    if facts.host_weights_mib is None:
        return _check(id, title, Status.UNKNOWN, mark("no model planned", "doctor"), why)
    if room is None:
        return _check(id, title, Status.UNKNOWN, mark("available RAM is not known", "doctor"), why)
    weights = facts.host_weights_mib
    if weights <= 0:
        return _check(id, title, Status.OK, mark("every weight is on the GPU", "doctor"), why)
    evidence = words(
        "{weights} of weights in host memory; {room} of RAM available", weights=_mib(weights), room=_mib(room)
    )
    if facts.engine_rss_mib:
        evidence = words(
            "{evidence} (counting the {rss} the engine holds now)", evidence=evidence, rss=_mib(facts.engine_rss_mib)
        )
    fix = Fix(mark("Put more layers on the GPU, use a smaller quant, or close programs that hold memory.", "doctor"))
    if room < weights:
        return _check(id, title, Status.FAIL, evidence, why, fix)
    if room < weights + RAM_MARGIN_MIB:
        short = words("{evidence}: less than {margin} to spare", evidence=evidence, margin=_mib(RAM_MARGIN_MIB))
        return _check(id, title, Status.WARN, short, why, fix)
    return _check(id, title, Status.OK, evidence, why)


def check_memory_swap(facts: DoctorFacts) -> Check:
    title, id = mark("Swap", "doctor"), "memory.swap"
    why = mark(
        "Swap in use means memory ran short; anything that was swapped out makes a reply stall while it is read back "
        "from disk.",
        "doctor",
    )
    if facts.swap_used_mib is None:
        return _check(id, title, Status.UNKNOWN, mark("swap use is not known", "doctor"), why)
    if not facts.swap_total_mib:
        return _check(id, title, Status.OK, mark("no swap", "doctor"), why)
    evidence = words("{used} of {total} swap in use", used=_mib(facts.swap_used_mib), total=_mib(facts.swap_total_mib))
    if facts.swap_used_mib > SWAP_IN_USE_MIB:
        fix = Fix(
            mark(
                "Close programs that hold memory, or keep fewer weights in host memory; swap empties as pages are used "
                "again.",
                "doctor",
            )
        )
        return _check(id, title, Status.WARN, evidence, why, fix)
    return _check(id, title, Status.OK, evidence, why)


def check_memory_mmap(facts: DoctorFacts) -> Check:
    title, id = mark("Memory-mapped weights", "doctor"), "memory.mmap"
    why = mark(
        "A memory-mapped model file can be dropped from RAM under memory pressure and read from disk again mid-reply; "
        "reading it in whole (no mmap) was steadier.",
        "doctor",
    )
    s = facts.settings
    if s is None:
        return _check(id, title, Status.UNKNOWN, mark("no load settings", "doctor"), why)
    if not s.use_mmap:
        return _check(id, title, Status.OK, mark("mmap off: the weights are read into RAM", "doctor"), why)
    room = _room_for_weights(facts)
    if facts.host_weights_mib is None or room is None:
        return _check(
            id, title, Status.UNKNOWN, "no model planned" if room is not None else "available RAM is not known", why
        )
    weights = facts.host_weights_mib
    if weights <= 0:
        return _check(id, title, Status.OK, mark("mmap on, and every weight is on the GPU", "doctor"), why)
    evidence = words(
        "mmap on; {weights} of weights in host memory, {room} of RAM available", weights=_mib(weights), room=_mib(room)
    )
    if room >= weights + RAM_MARGIN_MIB:
        return _check(id, title, Status.OK, evidence, why)
    if room >= weights:
        fix = Fix(mark("Turn memory mapping off: the weights then stay in RAM.", "doctor"), action="set:use_mmap=false")
        return _check(id, title, Status.WARN, evidence, why, fix)
    fix = Fix(
        mark(
            "RAM is too small to hold these weights either way: put more layers on the GPU or use a smaller quant.",
            "doctor",
        )
    )
    return _check(id, title, Status.WARN, evidence, why, fix)


# ---- VRAM ----------------------------------------------------------------------------------------


def _is_display_server(name: str | None) -> bool:
    return bool(name) and (name or "").rstrip("/").rpartition("/")[2].lower() in DISPLAY_SERVERS


def _process_words(p: GpuProcess) -> Text:
    name = (p.name or "?").rpartition("/")[2]
    used = _mib(p.used_mib) if p.used_mib is not None else words("memory not reported")
    return words("{name} (pid {pid}) {used}", name=name, pid=p.pid, used=used)


def check_vram_others(facts: DoctorFacts) -> Check:
    title, id = mark("VRAM held by other programs", "doctor"), "vram.other_processes"
    why = mark(
        "Memory another program holds on the card is memory the model cannot use: fewer layers or less context fit.",
        "doctor",
    )
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    lines, found, unknown = [], False, False
    for gpu in facts.gpus:
        processes = gpu.sample.processes if gpu.sample is not None else None
        if processes is None:
            errors = gpu.sample.errors if gpu.sample is not None else {}
            reason = errors.get("processes", words("not read"))
            lines.append(_on(gpu, facts, words("process list not available ({reason})", reason=reason)))
            unknown = True
            continue
        others = [p for p in processes if p.pid not in facts.own_pids and not _is_display_server(p.name)]
        if others:
            found = True
            lines.append(_on(gpu, facts, joined(", ", (_process_words(p) for p in others))))
        else:
            lines.append(_on(gpu, facts, words("none")))
    evidence = joined("; ", lines)
    if found:
        fix = Fix(
            mark("Close those programs before loading, or plan with the memory they leave.", "doctor"),
            command="nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv",
        )
        return _check(id, title, Status.WARN, evidence, why, fix)
    return _check(id, title, Status.UNKNOWN if unknown else Status.OK, evidence, why)


def check_vram_display(facts: DoctorFacts) -> Check:
    title, id = mark("Display on the card", "doctor"), "vram.display"
    why = mark(
        "A desktop drawn on the compute card keeps hundreds of MiB of its memory and competes for it while you chat.",
        "doctor",
    )
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    lines, found, known = [], False, False
    for gpu in facts.gpus:
        processes = gpu.sample.processes if gpu.sample is not None else None
        servers = [p for p in processes or () if _is_display_server(p.name)]
        if processes is not None or gpu.display_active is not None:
            known = True
        if servers or gpu.display_active:
            found = True
            held = joined(", ", (_process_words(p) for p in servers)) or words("display active")
            lines.append(_on(gpu, facts, held))
    if found:
        fix = Fix(
            mark("Plug the monitor into another GPU or the processor's graphics, so this card only computes.", "doctor")
        )
        return _check(id, title, Status.WARN, joined("; ", lines), why, fix)
    if not known:
        return _check(
            id,
            title,
            Status.UNKNOWN,
            mark("neither the process list nor the display state could be read", "doctor"),
            why,
        )
    return _check(id, title, Status.OK, mark("no display server on the card", "doctor"), why)


# ---- thermals and health -------------------------------------------------------------------------


def suggested_cap_w(sample: GpuSample) -> int | None:
    """The cap to suggest: the Monitor's 200 W where the card allows it, else a fifth under its default."""
    if sample.power_default_w is None:
        return None
    low = sample.power_min_w or 0.0
    if sample.power_default_w > CAP.default >= low:
        return CAP.default
    return max(round(sample.power_default_w * 0.8 / 5) * 5, round(low))


def check_thermal(facts: DoctorFacts) -> Check:
    title, id = mark("Thermal slowdown", "doctor"), "thermal.slowdown"
    why = mark(
        "A card that keeps hitting its temperature limit cuts its clocks in bursts; a lower power cap costs a few "
        "percent but holds it cooler and steady.",
        "doctor",
    )
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    status, lines, fix = Status.OK, [], None
    for gpu in facts.gpus:
        samples = [s for s in (gpu.history or ((gpu.sample,) if gpu.sample is not None else ())) if s is not None]
        known = [s for s in samples if s.throttle_reasons is not None]
        if not known:
            lines.append(_on(gpu, facts, words("clock-event reasons not known")))
            status = max(status, Status.UNKNOWN, key=_RANK.__getitem__)
            continue
        hot = sum(
            reasons.THERMAL_SLOWDOWN in (s.throttle_reasons or ())
            or reasons.HW_THERMAL_SLOWDOWN in (s.throttle_reasons or ())
            for s in known
        )
        last = samples[-1]
        slowdown = words("thermal slowdown in {hot} of {readings} readings", hot=hot, readings=len(known))
        if last.temperature_c is not None:
            slowdown = words("{slowdown}, {temperature} °C", slowdown=slowdown, temperature=f"{last.temperature_c:.0f}")
        if hot <= SUSTAINED_SHARE * len(known):
            lines.append(_on(gpu, facts, slowdown))
            continue
        status = Status.WARN
        limit, default = last.power_limit_w, last.power_default_w
        if limit is not None and default is not None and limit < default - 0.5:
            capped = words(
                "{slowdown}; already capped at {limit} W (default {default} W)",
                slowdown=slowdown,
                limit=f"{limit:.0f}",
                default=f"{default:.0f}",
            )
            lines.append(_on(gpu, facts, capped))
            fix = fix or Fix(
                mark("The card is capped and still hot: give it more intake airflow, or cap it lower.", "doctor"),
                action="open:power",
            )
            continue
        if default is not None and limit is not None:
            slowdown = words("{slowdown} at the default {default} W limit", slowdown=slowdown, default=f"{default:.0f}")
        lines.append(_on(gpu, facts, slowdown))
        cap = suggested_cap_w(last)
        advice = (
            words("Cap the card at {cap} W in the power panel", cap=cap)
            if cap
            else words("Cap the card's power in the power panel")
        )
        fix = fix or Fix(
            words("{advice}: on a blower V100, 200 W held about 70 °C for about 5% fewer tokens/s.", advice=advice),
            action="open:power",
        )
    return _check(id, title, status, joined("; ", lines), why, fix)


def check_ecc(facts: DoctorFacts) -> Check:
    title, id = mark("Memory errors (ECC)", "doctor"), "health.ecc"
    why = mark(
        "ECC errors mean the card's memory is wearing or running too hot; uncorrected ones corrupt results and crash "
        "programs, and bad rows must be retired at a reboot.",
        "doctor",
    )
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, _no_gpu(facts), why)
    status, lines, fix = Status.OK, [], None
    for gpu in facts.gpus:
        s = gpu.sample
        vol_c = s.ecc_corrected if s is not None else None
        vol_u = s.ecc_uncorrected if s is not None else None
        agg_c, agg_u = gpu.ecc_corrected_aggregate, gpu.ecc_uncorrected_aggregate
        pending = gpu.retired_pages_pending or gpu.remapped_rows_pending
        readings = (vol_c, vol_u, agg_c, agg_u, gpu.retired_pages_pending, gpu.remapped_rows_pending)
        if all(v is None for v in readings) and gpu.remapped_rows_failure is None:
            lines.append(_on(gpu, facts, words("no ECC readings (a card without ECC, or not reported)")))
            status = max(status, Status.UNKNOWN, key=_RANK.__getitem__)
            continue
        counts = [
            words(
                "since boot {corrected} corrected, {uncorrected} uncorrected",
                corrected=_count(vol_c),
                uncorrected=_count(vol_u),
            ),
            words(
                "lifetime {corrected} corrected, {uncorrected} uncorrected",
                corrected=_count(agg_c),
                uncorrected=_count(agg_u),
            ),
        ]
        if gpu.retired_pages_pending:
            counts.append(words("pages waiting to be retired"))
        if gpu.remapped_rows_pending:
            counts.append(words("rows waiting to be remapped"))
        if gpu.remapped_rows_failure:
            counts.append(words("a row could not be remapped"))
        lines.append(_on(gpu, facts, joined("; ", counts)))
        if gpu.remapped_rows_failure or (vol_u or 0) > 0:
            status = Status.FAIL
            fix = Fix(
                mark(
                    "The card's memory has errors it cannot correct: results may be wrong. Keep it cool, reboot, "
                    "and if errors come back, replace the card.",
                    "doctor",
                )
            )
        elif pending:
            status = max(status, Status.WARN, key=_RANK.__getitem__)
            fix = fix or Fix(
                mark("Reboot (or reset the GPU) so the driver sets the bad memory aside.", "doctor"),
                command="sudo reboot",
            )
        elif (vol_c or 0) > 0 or (agg_u or 0) > 0:
            status = max(status, Status.WARN, key=_RANK.__getitem__)
            fix = fix or Fix(mark("Keep the card cooler: more airflow, or a power cap.", "doctor"), action="open:power")
    return _check(id, title, status, joined("; ", lines), why, fix)


# ---- settings ----------------------------------------------------------------------------------


def check_settings_parallel(facts: DoctorFacts) -> Check:
    title, id = mark("Parallel slots", "doctor"), "settings.parallel"
    why = mark(
        "Each parallel slot gets only its share of the context, so more slots than conversations you really run leave "
        "each one a short memory.",
        "doctor",
    )
    s = facts.settings
    if s is None:
        return _check(id, title, Status.UNKNOWN, mark("no load settings", "doctor"), why)
    if s.n_parallel <= 1:
        return _check(id, title, Status.OK, words("1 slot with the whole {n_ctx}-token context", n_ctx=s.n_ctx), why)
    if s.kv_unified:
        shared = words("{slots} slots sharing one {n_ctx}-token cache", slots=s.n_parallel, n_ctx=s.n_ctx)
        return _check(id, title, Status.OK, shared, why)
    evidence = words(
        "{slots} slots: each gets {each} tokens of the {n_ctx}-token context",
        slots=s.n_parallel,
        each=s.n_ctx // s.n_parallel,
        n_ctx=s.n_ctx,
    )
    fix = Fix(
        mark("Use one slot unless you really run several conversations at once.", "doctor"), action="set:n_parallel=1"
    )
    return _check(id, title, Status.WARN, evidence, why, fix)


def check_settings_batch(facts: DoctorFacts) -> Check:
    title, id = mark("Batch and micro-batch", "doctor"), "settings.batch"
    why = mark(
        "llama.cpp never computes more tokens at once than a batch holds, so a micro-batch above the batch only "
        "reserves memory it cannot use.",
        "doctor",
    )
    s = facts.settings
    if s is None:
        return _check(id, title, Status.UNKNOWN, mark("no load settings", "doctor"), why)
    evidence = words("batch {batch}, micro-batch {ubatch}", batch=s.n_batch, ubatch=s.n_ubatch)
    if s.n_batch < s.n_ubatch:
        advice = words("Set the micro-batch to {batch}, the batch.", batch=s.n_batch)
        fix = Fix(advice, action=f"set:n_ubatch={s.n_batch}")
        return _check(id, title, Status.WARN, evidence, why, fix)
    return _check(id, title, Status.OK, evidence, why)


def check_settings_context(facts: DoctorFacts) -> Check:
    title, id = mark("Context and the model's training", "doctor"), "settings.context"
    why = mark(
        "Past the context a model was trained on, its answers fall apart unless the model is made for a longer one "
        "(rope scaling).",
        "doctor",
    )
    s = facts.settings
    if s is None:
        return _check(id, title, Status.UNKNOWN, mark("no load settings", "doctor"), why)
    if facts.n_ctx_train is None:
        return _check(id, title, Status.UNKNOWN, mark("no model selected", "doctor"), why)
    evidence = words("context {n_ctx}; the model was trained on {trained}", n_ctx=s.n_ctx, trained=facts.n_ctx_train)
    if s.n_ctx > facts.n_ctx_train:
        advice = words("Set the context to {n_ctx}.", n_ctx=facts.n_ctx_train)
        fix = Fix(advice, action=f"set:n_ctx={facts.n_ctx_train}")
        return _check(id, title, Status.WARN, evidence, why, fix)
    return _check(id, title, Status.OK, evidence, why)


def check_settings_v_cache(facts: DoctorFacts) -> Check:
    title, id = mark("Quantized V cache", "doctor"), "settings.v_cache"
    why = mark("llama.cpp refuses to load with a quantized V cache unless flash attention is on.", "doctor")
    s = facts.settings
    if s is None:
        return _check(id, title, Status.UNKNOWN, mark("no load settings", "doctor"), why)
    evidence = words("V cache {type}, flash attention {mode}", type=s.cache_type_v, mode=s.flash_attn)
    if s.cache_type_v not in FLOAT_CACHE_TYPES and s.flash_attn == "off":
        fix = Fix(mark("Turn flash attention on (or use an f16 V cache).", "doctor"), action="set:flash_attn=on")
        return _check(id, title, Status.FAIL, evidence, why, fix)
    return _check(id, title, Status.OK, evidence, why)


# ---- the power cap's path ------------------------------------------------------------------------


def _power_applies(facts: DoctorFacts, id: str, title: str, why: str) -> Check | None:
    """The cap's path only matters where there is a real card to cap."""
    if facts.simulated:
        return _check(id, title, Status.OK, mark("simulated card: capped directly, without the helper", "doctor"), why)
    if not facts.gpus:
        return _check(id, title, Status.UNKNOWN, words("no card to cap ({reason})", reason=_no_gpu(facts)), why)
    return None


def check_power_helper(facts: DoctorFacts) -> Check:
    title, id = mark("Power cap helper", "doctor"), "power.helper"
    why = mark(
        "Setting a power limit needs root; Tightfit never runs as root, so a small helper installed once does it.",
        "doctor",
    )
    if (done := _power_applies(facts, id, title, why)) is not None:
        return done
    if facts.helper_installed is None:
        return _check(id, title, Status.UNKNOWN, mark("not looked for", "doctor"), why)
    if not facts.helper_installed:
        path = facts.helper_path
        advice = facts.power_readiness or words("Install the helper at {path} once.", path=path)
        fix = Fix(advice, command=_HELPER_INSTALL.format(helper=path))
        return _check(id, title, Status.WARN, words("no helper at {path}", path=path), why, fix)
    return _check(id, title, Status.OK, words("installed at {path}", path=facts.helper_path), why)


def _pynvml_fix(facts: DoctorFacts, python: str) -> Fix:
    ids = {facts.os_id or "", *facts.os_like}
    if ids & {"debian", "ubuntu"}:
        section = "multiverse" if "ubuntu" in ids else "contrib"
        return Fix(
            words("Install python3-pynvml (in {section}) for the system Python.", section=section),
            command="sudo apt install python3-pynvml",
        )
    if "arch" in ids:
        return Fix(
            mark("Install the NVML bindings for the system Python.", "doctor"),
            command="sudo pacman -S python-nvidia-ml-py",
        )
    return Fix(
        mark(
            "Give the helper its own root-owned environment with nvidia-ml-py (packaging/README.md, "
            '"A root-owned environment for the helper").',
            "doctor",
        ),
        command="sudo python3 -m venv /opt/tightfit/helper-venv && "
        "sudo /opt/tightfit/helper-venv/bin/python3 -m pip install nvidia-ml-py",
    )


def check_power_pynvml(facts: DoctorFacts) -> Check:
    title, id = mark("NVML for the helper", "doctor"), "power.pynvml"
    why = mark(
        "The helper runs with the system's Python, isolated from Tightfit's, and needs NVIDIA's pynvml installed there "
        "by root.",
        "doctor",
    )
    if (done := _power_applies(facts, id, title, why)) is not None:
        return done
    python = facts.helper_python or "/usr/bin/python3"
    if facts.helper_python_has_pynvml is None:
        return _check(id, title, Status.UNKNOWN, words("could not ask {python}", python=python), why)
    if not facts.helper_python_has_pynvml:
        evidence = words("{python} cannot import pynvml", python=python)
        return _check(id, title, Status.WARN, evidence, why, _pynvml_fix(facts, python))
    return _check(id, title, Status.OK, words("{python} has pynvml", python=python), why)


def _polkit_127(version: str | None) -> bool:
    parsed = _version(version)
    return parsed is not None and parsed[0] == 127


def check_power_privilege(facts: DoctorFacts) -> Check:
    title, id = mark("A way to run the helper as root", "doctor"), "power.privilege"
    why = mark(
        "The helper runs through pkexec (a password dialog) or, where pkexec cannot ask, a sudo rule for the helper "
        "alone.",
        "doctor",
    )
    if (done := _power_applies(facts, id, title, why)) is not None:
        return done
    if facts.pkexec is None and facts.sudo_rule is None:
        return _check(id, title, Status.UNKNOWN, mark("not looked for", "doctor"), why)
    if facts.pkexec:
        pkexec = words("pkexec (polkit {version})", version=facts.pkexec_version or "?")
    else:
        pkexec = words("no pkexec")
    if facts.sudo_rule:
        sudo = words("a sudo -n rule for the helper")
    else:
        sudo = words("no sudo -n rule") if facts.sudo else words("no sudo")
    evidence = joined("; ", (pkexec, sudo))
    rule = Fix(
        words("Add the sudo rule for the helper alone ({section}).", section=_SUDO_SECTION),
        command=_SUDO_RULE.format(helper=facts.helper_path),
    )
    if facts.sudo_rule:
        return _check(id, title, Status.OK, evidence, why)
    if not facts.pkexec:
        return _check(id, title, Status.WARN, evidence, why, rule)
    if _polkit_127(facts.pkexec_version):
        agent = words("polkit 127's pkexec can reject the right password (its socket-activated agent helper)")
        evidence = joined("; ", (pkexec, sudo, agent))
        return _check(id, title, Status.WARN, evidence, why, rule)
    return _check(id, title, Status.OK, evidence, why)


# ---- all of them ---------------------------------------------------------------------------------

CHECKS: tuple[Callable[[DoctorFacts], Check], ...] = (
    check_engine_gpu_build,
    check_engine_cuda_archs,
    check_engine_cuda_runtime,
    check_engine_flash_attn,
    check_engine_amx,
    check_driver_branch,
    check_driver_nvml_mismatch,
    check_driver_persistence,
    check_cpu_threads,
    check_cpu_hybrid,
    check_numa,
    check_pcie,
    check_memory_host_weights,
    check_memory_swap,
    check_memory_mmap,
    check_vram_others,
    check_vram_display,
    check_thermal,
    check_ecc,
    check_settings_parallel,
    check_settings_batch,
    check_settings_context,
    check_settings_v_cache,
    check_power_helper,
    check_power_pynvml,
    check_power_privilege,
)


def run_checks(facts: DoctorFacts) -> tuple[Check, ...]:
    """Every check, in a fixed order (engine, driver, processor, memory, card, settings, power cap)."""
    return tuple(check(facts) for check in CHECKS)
