"""The facts the engine's build is decided from, read from this machine: the CUDA toolkits, the
distribution, the NVIDIA driver and GPUs, and the llama-cpp-python version the project asks for.

The set-up calls this before anything else is installed, so this module (and all it imports) needs only
the standard library, plus nvidia-ml-py for the driver. Every failure to read a fact is "not found" with
a log line, never an error: the rules in gui.core.engine_route then say what is missing, in words.
"""

from __future__ import annotations

import glob
import importlib.metadata
import json
import logging
import os
import platform
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gui.core.cards import Card
from gui.core.engine_route import (
    ARCHS_ENV,
    ENGINE_ENV,
    PACKAGE,
    DriverFacts,
    RoutePlan,
    Toolkit,
    archs_for_version,
    capability_number,
    parse_gpu_archs,
    parse_nvcc_version,
    parse_os_release,
    plan_route,
    simulated_driver,
)
from gui.core.protocol import EngineBuild
from gui.services.nvml import Nvml

__all__ = [
    "OS_RELEASE",
    "STAMP_NAME",
    "checkout_root",
    "find_toolkits",
    "installed_build",
    "plan_here",
    "read_driver",
    "read_os_release",
    "read_stamp",
    "requirement",
]

log = logging.getLogger(__name__)

OS_RELEASE = Path("/etc/os-release")
NVCC_TIMEOUT_S = 20.0
# What the set-up last installed into an environment, kept in it (next to its python): .venv/.tightfit-engine.json
STAMP_NAME = ".tightfit-engine.json"

# Runs a command and returns what it printed (stdout and stderr), or None when it could not run or failed.
Runner = Callable[[Sequence[str], float], str | None]


def run_text(argv: Sequence[str], timeout: float) -> str | None:
    try:
        result = subprocess.run(list(argv), capture_output=True, text=True, errors="replace", timeout=timeout)
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("%s: not usable: %s", " ".join(argv), exc)
        return None
    if result.returncode != 0:
        log.info("%s: exit status %d: %s", " ".join(argv), result.returncode, result.stderr.strip()[-300:])
        return None
    return result.stdout + result.stderr


# ---- CUDA toolkits ------------------------------------------------------------------------------


def nvcc_candidates(path_env: str, cuda_home: str | None, roots: Sequence[str]) -> list[str]:
    """Every nvcc to look at, in order: on PATH, in $CUDA_HOME, in each root's cuda* folders."""
    candidates = [os.path.join(folder, "nvcc") for folder in path_env.split(os.pathsep) if folder]
    if cuda_home:
        candidates.append(os.path.join(cuda_home, "bin", "nvcc"))
    for root in roots:
        candidates += sorted(glob.glob(os.path.join(glob.escape(root), "cuda*", "bin", "nvcc")))
    return [c for c in candidates if os.path.isfile(c) and os.access(c, os.X_OK)]


def read_toolkit(nvcc: str, run: Runner = run_text) -> Toolkit | None:
    """One nvcc's toolkit: its version (`--version`), what it builds for (`--list-gpu-arch`, else NVIDIA's
    table for the version), and the real compiler behind it (a wrapper script execs the toolkit's own)."""
    text = run([nvcc, "--version"], NVCC_TIMEOUT_S)
    version = parse_nvcc_version(text or "")
    if version is None:
        if text is not None:
            log.info("%s: no CUDA release in its --version output", nvcc)
        return None
    archs = parse_gpu_archs(run([nvcc, "--list-gpu-arch"], NVCC_TIMEOUT_S) or "") or archs_for_version(version)
    return Toolkit(_real_nvcc(nvcc, run), version, archs)


def _real_nvcc(nvcc: str, run: Runner) -> str:
    # nvcc names its own folder in a dry run ("#$ _HERE_=/usr/local/cuda-13.0/bin"), through any wrapper.
    trace = run([nvcc, "-v", "--dryrun", "tightfit-probe.cu"], NVCC_TIMEOUT_S) or ""
    match = re.search(r"^#\$ _HERE_=(.+)$", trace, re.MULTILINE)
    if match:
        real = os.path.join(match[1].strip(), "nvcc")
        if os.path.isfile(real):
            return os.path.realpath(real)
    return os.path.realpath(nvcc)


def find_toolkits(
    path_env: str | None = None,
    cuda_home: str | None = None,
    roots: Sequence[str] = ("/usr/local",),
    run: Runner = run_text,
) -> tuple[Toolkit, ...]:
    """The CUDA toolkits on this machine, each once however many paths lead to it (a symlinked
    /usr/local/cuda, a wrapper on PATH). ``path_env`` and ``cuda_home`` default to the environment's."""
    if path_env is None:
        path_env = os.environ.get("PATH", "")
    if cuda_home is None:
        cuda_home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    seen: set[str] = set()
    found: dict[str, Toolkit] = {}
    for candidate in nvcc_candidates(path_env, cuda_home, roots):
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        toolkit = read_toolkit(candidate, run)
        if toolkit is not None and toolkit.path not in found:
            found[toolkit.path] = toolkit
    return tuple(found.values())


# ---- the distribution, the driver ----------------------------------------------------------------


def read_os_release(path: Path = OS_RELEASE) -> dict[str, str]:
    """The distribution's identity (ID, VERSION_ID, ID_LIKE, ...); {} where it cannot be read."""
    paths = [path, Path("/usr/lib/os-release")] if path == OS_RELEASE else [path]
    for candidate in paths:
        try:
            return parse_os_release(candidate.read_text(encoding="utf-8", errors="replace"))
        except OSError as exc:
            log.info("%s: %s", candidate, exc)
    return {}


def read_driver(nvml: Nvml | None = None) -> DriverFacts:
    """The driver's version, the newest CUDA it runs, and each GPU's compute capability, from NVML."""
    own = nvml is None
    session = nvml or Nvml()
    try:
        info = session.driver_info()
        if info.error:
            return DriverFacts(None, None, (), (), info.error)
        query = session.query_gpus()
    except ImportError:
        return DriverFacts(None, None, (), (), "nvidia-ml-py is not installed, so the driver cannot be read")
    finally:
        if own:
            session.shutdown()
    capabilities = tuple(capability_number(g.compute_capability) for g in query.gpus if g.compute_capability)
    cuda = _version_pair(info.cuda_version)
    return DriverFacts(info.driver_version, cuda, capabilities, tuple(g.name for g in query.gpus), query.error)


def _version_pair(text: str | None) -> tuple[int, int] | None:
    match = re.match(r"(\d+)\.(\d+)", text or "")
    return (int(match[1]), int(match[2])) if match else None


# ---- what the project asks for -------------------------------------------------------------------


def checkout_root() -> Path | None:
    """The source checkout this code runs from, or None when it runs installed."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() and (root / "gui" / "__init__.py").is_file() else None


def _name_of(requirement_text: str) -> str:
    return re.split(r"[\s<>=!~;\[(@]", requirement_text.strip(), maxsplit=1)[0].lower().replace("_", "-")


def requirement(package: str = PACKAGE, root: Path | None = None) -> str:
    """The project's requirement on ``package`` ("llama-cpp-python>=0.3.36,<0.4"): from pyproject.toml in a
    checkout, else from the installed project's metadata. One source, so the set-up never drifts from it."""
    root = root if root is not None else checkout_root()
    wanted = package.lower().replace("_", "-")
    if root is not None:
        with open(root / "pyproject.toml", "rb") as fh:
            dependencies = tomllib.load(fh).get("project", {}).get("dependencies", [])
    else:
        dependencies = importlib.metadata.requires("tightfit") or []
    for dependency in dependencies:
        text = dependency.split(";")[0].strip()
        if _name_of(text) == wanted and "extra ==" not in dependency:
            return text
    raise LookupError(f"the project does not require {package}")


# ---- the route ------------------------------------------------------------------------------------


def shown_python(executable: str | None = None) -> str:
    """The interpreter as a command line shows it: relative to the current folder when inside it."""
    path = Path(executable or sys.executable)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def plan_here(
    card: Card | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    nvml: Nvml | None = None,
    toolkits: Sequence[Toolkit] | None = None,
    os_release_path: Path = OS_RELEASE,
) -> RoutePlan:
    """What the set-up installs on this machine — or, with ``card``, would install with that card in it
    (a plausible driver for it, this machine's toolkits and distribution). Raises ValueError for a
    TIGHTFIT_ENGINE / TIGHTFIT_CUDA_ARCHS it cannot honour."""
    env = os.environ if environ is None else environ
    driver = simulated_driver(card) if card is not None else read_driver(nvml)
    if toolkits is None:
        toolkits = find_toolkits(env.get("PATH", ""), env.get("CUDA_HOME") or env.get("CUDA_PATH"))
    return plan_route(
        driver,
        toolkits,
        read_os_release(os_release_path),
        env.get(ENGINE_ENV),
        requirement(),
        archs_override=env.get(ARCHS_ENV) or None,
        python=shown_python(),
        machine=platform.machine(),
        extra_cmake_args=env.get("CMAKE_ARGS", ""),
        cpu_flags=read_cpu_flags(),
    )


def read_cpu_flags(path: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first CPU's feature flags from /proc/cpuinfo (every core of a machine has the same); empty when
    it cannot be read, e.g. on another system."""
    try:
        with path.open(encoding="ascii", errors="replace") as fh:
            for number, line in enumerate(fh):
                if number > 200:
                    break
                name, _, value = line.partition(":")
                if name.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def read_stamp(prefix: Path | None = None) -> dict[str, Any] | None:
    """What the set-up recorded when it installed the engine into this environment; None if it did not."""
    path = Path(prefix or sys.prefix) / STAMP_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def installed_build(timeout_s: float = 120.0, log_dir: Path | None = None) -> EngineBuild:
    """The installed llama.cpp as the engine worker reports it: started in its own process, as for a
    chat, so a broken build fails there and not here. Raises EngineUnavailable when it will not start."""
    from gui.core.protocol import Hello
    from gui.services.engine_client import SyncEngine  # needs the full install, unlike the rest of this module

    engine = SyncEngine(log_dir)
    engine.client.start()
    try:
        hello: Hello = engine.expect(Hello, timeout_s)
    finally:
        engine.client.close()
    return hello.build
