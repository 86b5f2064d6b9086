"""Which llama.cpp build the set-up installs: CUDA for the cards in the machine, or the CPU build and why.

The default llama-cpp-python is a CPU build that silently ignores GPU layers, and the old cards Tightfit is
for need care: CUDA 13 cannot build for compute capability below 7.5 (Maxwell, Pascal, Volta), and a
toolkit newer than the driver builds an engine the driver refuses to run. These rules decide from facts
alone — the driver and GPUs as NVML reports them, the CUDA toolkits found, the distribution — which the
services read (gui.services.engine_facts). Being pure, the same rules plan for this machine, for a
simulated card and in tests, and they run before llama-cpp-python is installed (only the standard
library here).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from gui.core.cards import Card
from gui.core.words import Text, english, joined, words

__all__ = [
    "ARCHS_ENV",
    "ENGINE_ENV",
    "PACKAGE",
    "DriverFacts",
    "RoutePlan",
    "Toolkit",
    "archs_for_version",
    "capability_number",
    "cuda_version_from_int",
    "describe_capabilities",
    "parse_archs",
    "parse_gpu_archs",
    "parse_nvcc_version",
    "parse_os_release",
    "plan_route",
    "simulated_driver",
]

ENGINE_ENV = "TIGHTFIT_ENGINE"  # "cpu" or "cuda" overrides the choice
ARCHS_ENV = "TIGHTFIT_CUDA_ARCHS"  # e.g. "70" or "61;70": the capabilities to build for, instead of the GPUs'
PACKAGE = "llama-cpp-python"

# CUDA 13 compiles only for compute capability 7.5 (Turing) and newer.
CUDA13_MIN_CAPABILITY = 75
# The CUDA 12 toolkits NVIDIA released (there was no 12.7); 12.9 is the last 12.x.
CUDA12_MINORS = (0, 1, 2, 3, 4, 5, 6, 8, 9)
# NVIDIA's runfile for the last update of each 12.x release: the driver it bundles is part of the name.
RUNFILES = {
    0: "12.0.1_525.85.12",
    1: "12.1.1_530.30.02",
    2: "12.2.2_535.104.05",
    3: "12.3.2_545.23.08",
    4: "12.4.1_550.54.15",
    5: "12.5.1_555.42.06",
    6: "12.6.3_560.35.05",
    8: "12.8.1_570.124.06",
    9: "12.9.1_575.57.08",
}
# The newest CUDA each driver branch supports, for a driver whose NVML does not say it directly.
DRIVER_BRANCH_CUDA = {
    450: (11, 0), 455: (11, 1), 460: (11, 2), 465: (11, 3), 470: (11, 4), 495: (11, 5), 510: (11, 6),
    515: (11, 7), 520: (11, 8), 525: (12, 0), 530: (12, 1), 535: (12, 2), 545: (12, 3), 550: (12, 4),
    555: (12, 5), 560: (12, 6), 565: (12, 7), 570: (12, 8), 575: (12, 9), 580: (13, 0), 590: (13, 1),
}  # fmt: skip
# What --simulate assumes: a current driver of the R570 branch, which drives every catalog card.
SIMULATED_DRIVER = "570.172.08"
SIMULATED_DRIVER_CUDA = (12, 8)

_CUDA12_ARCHS = (50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90)


@dataclass(frozen=True)
class Toolkit:
    """A CUDA toolkit found on the machine, by its compiler."""

    path: str  # the nvcc to build with
    version: tuple[int, int]
    archs: tuple[int, ...]  # the real architectures it can build for (compute_XX), e.g. (75, 80, 86, ...)

    @property
    def version_text(self) -> str:
        return f"{self.version[0]}.{self.version[1]}"


@dataclass(frozen=True)
class DriverFacts:
    """The NVIDIA driver and GPUs as NVML reports them (or as a simulated card would)."""

    driver_version: str | None  # "570.172.08"
    cuda_version: tuple[int, int] | None  # the newest CUDA the driver runs (nvmlSystemGetCudaDriverVersion)
    capabilities: tuple[int, ...]  # one per GPU, e.g. (61, 70)
    gpu_names: tuple[str, ...]
    error: Text  # why NVML did not answer, in words; '' when it did
    simulated: bool = False

    @property
    def cuda_text(self) -> str | None:
        return f"{self.cuda_version[0]}.{self.cuda_version[1]}" if self.cuda_version else None


@dataclass(frozen=True)
class RoutePlan:
    """What the set-up installs here, the exact command, and why; with what to do where it cannot use the GPU."""

    route: Literal["cuda", "cpu"]
    cuda_archs: tuple[int, ...]  # what a CUDA build here targets (also on the CPU route: what it would target)
    toolkit: Toolkit | None
    command: str  # the shell command that installs this build by hand
    reason: str
    install_help: Text  # '' unless a CUDA toolkit (or a newer driver) would let the GPU be used
    driver: DriverFacts | None = None
    requirement: str = ""
    cmake_args: str = ""  # CMAKE_ARGS of the build (every route has at least RPC_ARGS)
    skipped: tuple[str, ...] = ()  # each toolkit found but not used, and why

    def as_json(self) -> dict[str, Any]:
        driver = self.driver
        return {
            "route": self.route,
            "cuda_archs": list(self.cuda_archs),
            "toolkit": self.toolkit.version_text if self.toolkit else None,
            "toolkit_path": self.toolkit.path if self.toolkit else None,
            "command": self.command,
            "reason": english(self.reason),
            "install_help": english(self.install_help),
            "driver_version": driver.driver_version if driver else None,
            "driver_cuda": driver.cuda_text if driver else None,
            "gpus": list(driver.gpu_names) if driver else [],
            "simulated": driver.simulated if driver else False,
            "requirement": self.requirement,
            "cmake_args": self.cmake_args,
            "toolkits_skipped": list(self.skipped),
        }


# ---- reading the facts' text ---------------------------------------------------------------------


def parse_nvcc_version(text: str) -> tuple[int, int] | None:
    """`nvcc --version`: "... Cuda compilation tools, release 12.4, V12.4.131" -> (12, 4)."""
    match = re.search(r"release (\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2])) if match else None


def parse_gpu_archs(text: str) -> tuple[int, ...]:
    """`nvcc --list-gpu-arch`: one compute_XX a line -> (50, 52, ...), sorted, without duplicates."""
    return tuple(sorted({int(n) for n in re.findall(r"\bcompute_(\d+)", text)}))


def archs_for_version(version: tuple[int, int]) -> tuple[int, ...]:
    """What a toolkit of this version builds for, from NVIDIA's release notes: for an nvcc too old to list them."""
    if version >= (13, 0):
        return (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121)
    if version >= (12, 9):
        return (*_CUDA12_ARCHS, 100, 101, 103, 120, 121)
    if version >= (12, 8):
        return (*_CUDA12_ARCHS, 100, 101, 120)
    if version >= (12, 0):
        return _CUDA12_ARCHS
    if version >= (11, 8):
        return (35, 37, *_CUDA12_ARCHS)
    if version >= (11, 1):
        return (35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86)
    return (35, 37, 50, 52, 53, 60, 61, 62, 70, 72, 75)


def cuda_version_from_int(value: int) -> tuple[int, int]:
    """CUDA's integer form, as NVML and the runtime give it: 12040 -> (12, 4)."""
    return value // 1000, (value % 1000) // 10


def capability_number(capability: str | tuple[int, int]) -> int:
    """A capability as CMAKE_CUDA_ARCHITECTURES writes it: "7.0" or (7, 0) -> 70."""
    if isinstance(capability, tuple):
        major, minor = capability
    else:
        major_text, _, minor_text = capability.strip().partition(".")
        major, minor = int(major_text), int(minor_text or 0)
    return major * 10 + minor


def describe_capabilities(archs: Iterable[int]) -> Text:
    """(61, 70) -> "6.1 and 7.0": how NVIDIA's tables and the cards' data sheets write them."""
    numbers = [f"{a // 10}.{a % 10}" for a in archs]
    if len(numbers) < 2:
        return "".join(numbers)
    return words("{first} and {last}", first=", ".join(numbers[:-1]), last=numbers[-1])


def parse_archs(text: str) -> tuple[int, ...]:
    """The capabilities in TIGHTFIT_CUDA_ARCHS: "70", "61;70", "6.1,7.0" or "sm_70" -> sorted, unique."""
    archs = set()
    for part in re.split(r"[;,\s]+", text.strip()):
        if not part:
            continue
        word = part.lower().removeprefix("sm_").removeprefix("compute_")
        try:
            arch = capability_number(word) if "." in word else int(word)
        except ValueError:
            arch = 0
        if not 30 <= arch <= 200:
            raise ValueError(f"{ARCHS_ENV}: {part!r} is not a compute capability (write 70 or 7.0; several as 61;70)")
        archs.add(arch)
    if not archs:
        raise ValueError(f"{ARCHS_ENV} is empty (write the compute capabilities to build for, e.g. 70 or 61;70)")
    return tuple(sorted(archs))


def parse_os_release(text: str) -> dict[str, str]:
    """/etc/os-release: KEY=value lines, values optionally quoted."""
    result = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep or key.startswith("#"):
            continue
        try:
            words = shlex.split(value)
        except ValueError:
            words = [value.strip("\"'")]
        result[key.strip()] = words[0] if words else ""
    return result


def driver_cuda_from_branch(driver_version: str | None) -> tuple[int, int] | None:
    """The newest CUDA a driver supports, from its branch ("535.183.01" -> (12, 2)); None when unknown."""
    try:
        branch = int((driver_version or "").split(".")[0])
    except ValueError:
        return None
    known = [b for b in DRIVER_BRANCH_CUDA if b <= branch]
    return DRIVER_BRANCH_CUDA[max(known)] if known else None


def simulated_driver(card: Card) -> DriverFacts:
    """A plausible driver for `--simulate`: R570 (CUDA 12.8), which drives every catalog card."""
    if not card.compute_capability:
        return DriverFacts(SIMULATED_DRIVER, SIMULATED_DRIVER_CUDA, (), (card.name,), "", simulated=True)
    arch = capability_number(card.compute_capability)
    return DriverFacts(SIMULATED_DRIVER, SIMULATED_DRIVER_CUDA, (arch,), (card.name,), "", simulated=True)


# ---- the rules ------------------------------------------------------------------------------------


def plan_route(
    driver: DriverFacts,
    toolkits: Sequence[Toolkit],
    os_release: Mapping[str, str],
    override: str | None,
    requirement: str,
    *,
    archs_override: str | None = None,
    python: str = "python",
    machine: str = "x86_64",
    extra_cmake_args: str = "",
    cpu_flags: Collection[str] = (),
) -> RoutePlan:
    """The build to install, in order: the override (TIGHTFIT_ENGINE); no driver or GPU -> CPU; the best
    CUDA 12.x toolkit (13.x only when every card is 7.5 or newer) that builds for every card and that the
    driver runs; otherwise the CPU build with the commands that install a suitable toolkit.

    ``archs_override`` is TIGHTFIT_CUDA_ARCHS (the capabilities to build for, in place of the GPUs'),
    ``python`` the interpreter named in the command, ``machine`` the CPU architecture (for NVIDIA's
    download paths), ``extra_cmake_args`` the user's own CMAKE_ARGS, kept after Tightfit's. Raises
    ValueError for an override it cannot honour: one sentence, followed by the install paragraph where
    TIGHTFIT_ENGINE=cuda finds no usable toolkit.
    """
    mode = _mode(override)
    archs = parse_archs(archs_override) if archs_override else tuple(sorted(set(driver.capabilities)))
    host_args = " ".join(a for a in (RPC_ARGS, host_cmake_args(cpu_flags, machine), extra_cmake_args.strip()) if a)
    # Always built from source with these arguments: pip's own wheel cache does not know them.
    cpu_command = (
        f'CMAKE_ARGS="{host_args}" {python} -m pip install --force-reinstall --no-deps --no-cache-dir '
        f"--no-binary {PACKAGE} {shlex.quote(requirement)}"
    )
    gpus = _gpu_words(driver, archs)

    def cpu(reason: str, help_text: Text = "", skipped: tuple[str, ...] = ()) -> RoutePlan:
        if host_cmake_args(cpu_flags, machine) and not extra_cmake_args.strip():
            reason += AMX_WORDS
        return RoutePlan("cpu", archs, None, cpu_command, reason, help_text, driver, requirement, host_args, skipped)

    if mode == "cpu":
        return cpu(
            f"{ENGINE_ENV}=cpu: the CPU build, as asked" + (f"; {english(gpus)} will not be used" if gpus else "")
        )
    has_gpu = not driver.error and bool(driver.capabilities)
    if not has_gpu and mode != "cuda":
        if driver.error:
            return cpu(f"{english(driver.error)}, so the CPU build")
        if driver.gpu_names:
            return cpu("the GPUs' compute capability could not be read, so the CPU build")
        return cpu("no NVIDIA GPU: NVML found none, so the CPU build")
    if not archs:
        raise ValueError(
            f"{ENGINE_ENV}=cuda, but no NVIDIA GPU answered ({english(driver.error or 'NVML found none')}): set "
            f"{ARCHS_ENV} to the compute capabilities to build for, e.g. {ARCHS_ENV}=70"
        )

    # Without a driver (a forced build for TIGHTFIT_CUDA_ARCHS) there is no driver to check the toolkit against.
    driver_cuda = (driver.cuda_version or driver_cuda_from_branch(driver.driver_version)) if has_gpu else None
    skipped: list[str] = []
    usable: list[Toolkit] = []
    for toolkit in toolkits:
        why_not = _why_not(toolkit, archs, driver_cuda)
        if why_not:
            skipped.append(f"CUDA {toolkit.version_text} ({toolkit.path}) {why_not}")
        else:
            usable.append(toolkit)

    if not usable:
        help_text = install_help(os_release, archs, driver, driver_cuda, toolkits, gpus, machine)
        if driver_cuda is not None and driver_cuda < (12, 0):
            version = f" {driver.driver_version}" if driver.driver_version else ""
            why = (
                f"the NVIDIA driver{version} runs CUDA up to {driver_cuda[0]}.{driver_cuda[1]}, and a CUDA 12 "
                "build needs a newer one"
            )
        elif not toolkits:
            why = "no CUDA toolkit found (nvcc on PATH, in $CUDA_HOME or /usr/local/cuda*)"
        else:
            why = "no usable CUDA toolkit: " + "; ".join(skipped)
        if mode == "cuda":
            raise ValueError(f"{ENGINE_ENV}=cuda, but {why}.\n{english(help_text)}")
        return cpu(f"{why}, so the CPU build", help_text, tuple(skipped))

    # Prefer 12.x: it builds for every card of the catalog; then the newest.
    toolkit = max(usable, key=lambda t: (t.version[0] == 12, t.version))
    cmake_args = (
        f"-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES={';'.join(str(a) for a in archs)} "
        f"-DCMAKE_CUDA_COMPILER={toolkit.path}"
    )
    cmake_args += " " + host_args
    command = (
        f'CMAKE_ARGS="{cmake_args}" {python} -m pip install --force-reinstall --no-deps --no-cache-dir '
        f"--no-binary {PACKAGE} {shlex.quote(requirement)}"
    )
    target = f"compute capability {english(describe_capabilities(archs))}"
    reason = f"CUDA {toolkit.version_text} ({toolkit.path}) builds for {target}"
    if gpus:
        reason += f" ({', '.join(sorted(set(driver.gpu_names)))})"
    if driver_cuda is not None:
        reason += f", and the driver runs it (up to CUDA {driver_cuda[0]}.{driver_cuda[1]})"
    if mode == "cuda":
        reason = f"{ENGINE_ENV}=cuda: {reason}"
    if skipped:
        reason += "; passed over: " + "; ".join(skipped)
    if host_cmake_args(cpu_flags, machine):
        reason += AMX_WORDS
    return RoutePlan("cuda", archs, toolkit, command, reason, "", driver, requirement, cmake_args, tuple(skipped))


# llama.cpp's RPC backend (ggml-rpc), in every build: `tightfit rpc-worker` serves this machine's devices to
# another Tightfit, and `--rpc HOST:PORT` uses another machine's (ggml/include/ggml-rpc.h; llama.cpp's --rpc).
# It adds one small library (libggml-rpc.so: two source files, about 3 s of compiler time on a 2-core machine
# whose whole CPU build takes 3 min 24 s). The CPU build is then always built from source with these arguments.
RPC_ARGS = "-DGGML_RPC=ON"

# llama.cpp's AMX matrix kernels (Intel Xeon Sapphire Rapids and newer) crash the first prompt of some
# models (ggml-org/llama.cpp#20824, open; Ollama and others saw the same on AWS m7i and VMware hosts). A
# native build compiles them in wherever the CPU has AMX, so the set-up builds without them there: explicit
# -mno-* flags win over -march=native in GCC and Clang. The AVX-512 kernels still run; only AMX is left out.
NO_AMX_ARGS = "-DCMAKE_C_FLAGS=-mno-amx-int8 -DCMAKE_CXX_FLAGS=-mno-amx-int8"
AMX_ISSUE = "ggml-org/llama.cpp#20824"
AMX_WORDS = f"; built without llama.cpp's AMX kernels, which crash on some processors like this one ({AMX_ISSUE})"


def host_cmake_args(cpu_flags: Collection[str], machine: str = "x86_64") -> str:
    """CMake arguments this machine's CPU needs in every build ('' for none): /proc/cpuinfo's flags."""
    if machine in ("x86_64", "AMD64", "amd64") and "amx_int8" in cpu_flags:
        return NO_AMX_ARGS
    return ""


def _mode(override: str | None) -> str:
    value = (override or "").strip().lower()
    if value in ("", "auto"):
        return "auto"
    if value in ("cpu", "cuda"):
        return value
    raise ValueError(f"{ENGINE_ENV} must be cpu or cuda (or unset to decide from the machine), not {override!r}")


def _why_not(toolkit: Toolkit, archs: tuple[int, ...], driver_cuda: tuple[int, int] | None) -> str:
    """Why a toolkit cannot build this machine's engine, in words; '' when it can."""
    if toolkit.version[0] < 12:
        return "is older than CUDA 12, which this llama.cpp needs"
    old = [a for a in archs if a < CUDA13_MIN_CAPABILITY]
    if toolkit.version[0] >= 13 and old:
        return (
            f"cannot build for compute capability {english(describe_capabilities(old))}: CUDA 13 dropped cards "
            "older than 7.5 (Maxwell, Pascal, Volta)"
        )
    missing = [a for a in archs if a not in toolkit.archs]
    if missing:
        return f"cannot build for compute capability {english(describe_capabilities(missing))}"
    if driver_cuda is not None and toolkit.version > driver_cuda:
        return f"is newer than the driver runs (CUDA {driver_cuda[0]}.{driver_cuda[1]})"
    return ""


def _gpu_words(driver: DriverFacts, archs: tuple[int, ...]) -> Text:
    names = sorted(set(driver.gpu_names))
    if not names:
        return ""
    if not archs:
        return ", ".join(names)
    return words("{names}, compute capability {archs}", names=", ".join(names), archs=describe_capabilities(archs))


def recommended_toolkit(driver_cuda: tuple[int, int] | None) -> tuple[int, int]:
    """The CUDA 12 toolkit to install: the newest 12.x the driver runs (12.9 where it runs 13, or is to be updated)."""
    if driver_cuda is None or driver_cuda >= (13, 0) or driver_cuda < (12, 0):
        return 12, CUDA12_MINORS[-1]
    return 12, max(m for m in CUDA12_MINORS if m <= driver_cuda[1])


def install_help(
    os_release: Mapping[str, str],
    archs: tuple[int, ...],
    driver: DriverFacts,
    driver_cuda: tuple[int, int] | None,
    toolkits: Sequence[Toolkit],
    gpus: Text,
    machine: str = "x86_64",
) -> Text:
    """One paragraph: what to install (driver first where it is too old), the exact commands for this
    distribution, then to run the same command again."""
    old_cards = any(a < CUDA13_MIN_CAPABILITY for a in archs)
    major, minor = recommended_toolkit(driver_cuda)
    where, commands = toolkit_commands(os_release, (major, minor), machine)
    target = words("compute capability {archs}", archs=describe_capabilities(archs))
    toolkit = f"{major}.{minor}"
    lines: list[Text] = []
    if driver_cuda is not None and driver_cuda < (12, 0):
        branch = (
            words(
                "the R580 branch: it is the last that drives cards older than compute capability 7.5 (590 and later "
                "no longer do)"
            )
            if old_cards
            else words("R580 or newer")
        )
        ubuntu = words(" (on Ubuntu: sudo apt-get install -y nvidia-driver-580)") if _is_ubuntu(os_release) else ""
        lines.append(
            words(
                "First update the NVIDIA driver: {driver} runs CUDA up to {cuda}, and a CUDA 12 build needs R535 or "
                "newer. Take {branch}{ubuntu}, and reboot. Then install the CUDA {toolkit} toolkit {where}:",
                driver=driver.driver_version or words("this one"),
                cuda=f"{driver_cuda[0]}.{driver_cuda[1]}",
                branch=branch,
                ubuntu=ubuntu,
                toolkit=toolkit,
                where=where,
            )
        )
    else:
        subject = words("the GPU ({gpus})", gpus=gpus) if gpus else words("a GPU of {target}", target=target)
        lines.append(
            words(
                "To use {subject}, install the CUDA {toolkit} toolkit {where}:",
                subject=subject,
                toolkit=toolkit,
                where=where,
            )
        )
    lines += [f"    {c}" for c in commands]
    last = words(
        "then run the same command again (make run or make test): the set-up finds the toolkit in "
        "/usr/local/cuda-{toolkit} and builds llama.cpp for {target}.",
        toolkit=toolkit,
        target=target,
    )
    newer = [t for t in toolkits if t.version[0] >= 13]
    if newer and old_cards:
        found = ", ".join(f"CUDA {t.version_text} ({t.path})" for t in newer)
        last = words(
            "{sentence} {found} can stay installed: CUDA 13 cannot build for compute capability below 7.5, so the "
            "set-up passes it over.",
            sentence=last,
            found=found,
        )
    lines.append(last)
    return joined("\n", lines)


def _is_ubuntu(os_release: Mapping[str, str]) -> bool:
    return os_release.get("ID") == "ubuntu" or bool(os_release.get("UBUNTU_CODENAME"))


def nvidia_repository(os_release: Mapping[str, str]) -> str | None:
    """NVIDIA's CUDA repository for this distribution ("ubuntu2204", "debian12", "rhel9", "fedora41"), or
    None where NVIDIA has none and the runfile is the way."""
    distro = os_release.get("ID", "").lower()
    like = os_release.get("ID_LIKE", "").lower().split()
    version = os_release.get("VERSION_ID", "")
    major = version.split(".")[0]
    ubuntu = {"20.04": "ubuntu2004", "22.04": "ubuntu2204", "24.04": "ubuntu2404"}
    codenames = {"focal": "ubuntu2004", "jammy": "ubuntu2204", "noble": "ubuntu2404"}
    if distro == "ubuntu" and version in ubuntu:
        return ubuntu[version]
    if os_release.get("UBUNTU_CODENAME", "").lower() in codenames:  # Mint, Pop!_OS and other derivatives
        return codenames[os_release["UBUNTU_CODENAME"].lower()]
    if distro == "debian" and major in ("11", "12"):
        return f"debian{major}"
    if (distro in ("rhel", "rocky", "almalinux", "centos") or "rhel" in like) and major in ("8", "9"):
        return f"rhel{major}"
    if distro == "fedora" and major.isdigit():
        return f"fedora{major}"
    return None


def toolkit_commands(
    os_release: Mapping[str, str], version: tuple[int, int], machine: str = "x86_64"
) -> tuple[Text, list[str]]:
    """Where the toolkit comes from, in words, and the commands that install it (NVIDIA's package
    repository where it has one for the distribution, else NVIDIA's runfile, toolkit only)."""
    major, minor = version
    package = f"cuda-toolkit-{major}-{minor}"
    arch = "sbsa" if machine.lower() in ("aarch64", "arm64") else "x86_64"
    repo = nvidia_repository(os_release)
    name = os_release.get("PRETTY_NAME") or os_release.get("NAME") or words("this system")
    if repo is not None:
        url = f"https://developer.download.nvidia.com/compute/cuda/repos/{repo}/{arch}"
        where = words("from NVIDIA's repository for {name}", name=name)
        if repo.startswith(("ubuntu", "debian")):
            return where, [
                f"wget {url}/cuda-keyring_1.1-1_all.deb",
                "sudo dpkg -i cuda-keyring_1.1-1_all.deb",
                "sudo apt-get update",
                f"sudo apt-get install -y {package}",
            ]
        repofile = f"{url}/cuda-{repo}.repo"
        if repo.startswith("fedora") and int(repo.removeprefix("fedora")) >= 41:  # dnf5's syntax
            add = f"sudo dnf config-manager addrepo --from-repofile={repofile}"
        else:
            add = f"sudo dnf config-manager --add-repo {repofile}"
        return where, [add, f"sudo dnf install -y {package}"]
    release = RUNFILES[minor] if major == 12 and minor in RUNFILES else RUNFILES[CUDA12_MINORS[-1]]
    full = release.split("_")[0]
    runfile = f"cuda_{release}_linux{'_sbsa' if arch == 'sbsa' else ''}.run"
    return (
        words("with NVIDIA's installer (toolkit only; {name} has no NVIDIA package repository)", name=name),
        [
            f"wget https://developer.download.nvidia.com/compute/cuda/{full}/local_installers/{runfile}",
            f"sudo sh {runfile} --toolkit --silent",
        ],
    )
