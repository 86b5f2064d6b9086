"""Installs the llama-cpp-python build a RoutePlan names into the running interpreter's environment.

A CUDA build compiles for minutes, so it is built once per (requirement, architectures, toolkit) as a
wheel in a per-user cache and installed from there: a fresh environment with the same toolkit and cards
does not rebuild. pip's own wheel cache is never used for it, since pip keys that cache on the source
alone and would hand a CPU build back for a CUDA one (or the reverse). A stamp in the environment records
what was installed, so a set-up with the same facts does nothing.

Like gui.services.engine_facts, this runs before the project is installed: the standard library only.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from gui.core.engine_route import PACKAGE, RoutePlan
from gui.services.engine_facts import STAMP_NAME, read_stamp

__all__ = [
    "InstallFailed",
    "Installed",
    "Outcome",
    "PipRunner",
    "ensure_engine",
    "installed_engine",
    "run_pip",
    "stamp_key",
    "wheel_cache_dir",
    "wheel_key",
]

# Runs `python -m pip ARGS` with this environment, handing each line it prints to the callback; returns its
# exit status. Tests pass their own so that nothing is compiled.
PipRunner = Callable[[Sequence[str], Mapping[str, str], Callable[[str], None]], int]
# Called with each line of the build's output (already in the log) and with each new phase in words.
Report = Callable[[str, str], None]


class InstallFailed(RuntimeError):
    def __init__(self, message: str, log_path: Path | None = None) -> None:
        super().__init__(message)
        self.log_path = log_path


@dataclass(frozen=True)
class Installed:
    """The llama-cpp-python in this environment, from its files alone (nothing is loaded)."""

    version: str | None  # None: not installed
    cuda: bool  # it ships ggml's CUDA library


@dataclass(frozen=True)
class Outcome:
    action: Literal["unchanged", "installed", "built", "from-cache"]
    installed: Installed
    wheel: Path | None = None


def installed_engine() -> Installed:
    try:
        dist = importlib.metadata.distribution(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return Installed(None, False)
    # The library, not the header every build ships (include/ggml-cuda.h).
    cuda = any(re.match(r"(lib)?ggml-cuda\.(so|dll|dylib)", file.name) for file in dist.files or ())
    return Installed(dist.version, cuda)


def run_pip(args: Sequence[str], env: Mapping[str, str], on_line: Callable[[str], None]) -> int:
    process = subprocess.Popen(
        [sys.executable, "-m", "pip", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env=dict(env),
        text=True,
        errors="replace",
        bufsize=1,
    )
    assert process.stdout is not None
    with process.stdout:
        for line in process.stdout:
            on_line(line.rstrip("\r\n"))
    return process.wait()


def stamp_key(plan: RoutePlan) -> dict[str, Any]:
    """What decides the build: a change in any of it means installing again. The CPU build does not
    depend on the cards or toolkits."""
    key: dict[str, Any] = {"route": plan.route, "requirement": plan.requirement, "cmake_args": plan.cmake_args}
    if plan.route == "cuda" and plan.toolkit is not None:
        key |= {
            "cuda_archs": list(plan.cuda_archs),
            "toolkit": plan.toolkit.version_text,
            "toolkit_path": plan.toolkit.path,
        }
    return key


def wheel_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """~/.cache/tightfit/engine-wheels (or under $XDG_CACHE_HOME): shared by every environment of this user."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tightfit" / "engine-wheels"


def wheel_key(plan: RoutePlan) -> str:
    """The cache folder of a build from source with CMake arguments: the same requirement, architectures,
    toolkit version, CMake arguments, Python and machine give the same wheel (a toolkit reached by another
    path too)."""
    extra = re.sub(r"-DCMAKE_CUDA_COMPILER=\S+", "", plan.cmake_args).split()
    facts = {
        "requirement": plan.requirement,
        "cuda_archs": list(plan.cuda_archs) if plan.toolkit is not None else [],
        "toolkit": plan.toolkit.version_text if plan.toolkit is not None else None,
        "cmake_args": extra,
        "python": f"{sys.implementation.name}-{sys.version_info.major}.{sys.version_info.minor}",
        "machine": os.uname().machine,
    }
    digest = hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:12]
    if plan.toolkit is None:
        return f"cpu-{digest}"
    archs = "_".join(str(a) for a in plan.cuda_archs)
    return f"cuda{plan.toolkit.version_text}-sm{archs}-{digest}"


def _cached_wheel(folder: Path) -> Path | None:
    wheels = sorted(folder.glob("llama_cpp_python-*.whl"))
    return wheels[-1] if wheels else None


def ensure_engine(
    plan: RoutePlan,
    log_path: Path,
    *,
    prefix: Path | None = None,
    cache_dir: Path | None = None,
    pip: PipRunner = run_pip,
    installed: Callable[[], Installed] = installed_engine,
    environ: Mapping[str, str] | None = None,
    report: Report = lambda _phase, _line: None,
    preamble: Sequence[str] = (),
) -> Outcome:
    """Install what ``plan`` names into the environment at ``prefix`` (this interpreter's), unless its stamp
    says it is there already. Every line pip prints goes to ``log_path`` (after ``preamble``, the lines that
    tell how the facts were found); ``report`` hears each phase and line. Raises InstallFailed on failure."""
    prefix = Path(prefix or sys.prefix)
    env = dict(os.environ if environ is None else environ)
    before = installed()
    stamp = read_stamp(prefix)
    key = stamp_key(plan)
    if (
        stamp is not None
        and all(stamp.get(k) == v for k, v in key.items())
        and before.version is not None
        and stamp.get("llama_cpp_python") == before.version
        and before.cuda == (plan.route == "cuda")
    ):
        return Outcome("unchanged", before)

    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w", encoding="utf-8") as log:
        log.write(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} {plan.route} build: {plan.reason}\n# {plan.command}\n")
        log.writelines(f"# {line}\n" for line in preamble)  # how the facts were found

        def step(phase: str, args: Sequence[str], step_env: Mapping[str, str]) -> None:
            report(phase, "")
            log.write(f"\n$ {sys.executable} -m pip {' '.join(args)}\n")
            log.flush()

            def on_line(line: str) -> None:
                log.write(line + "\n")
                log.flush()
                report(phase, line)

            status = pip(["--disable-pip-version-check", *args], step_env, on_line)
            if status != 0:
                log.write(f"# pip exited with status {status}\n")
                raise InstallFailed(f"{phase} failed (pip exited with status {status})", log_path)

        wheel = None
        if plan.route == "cpu" and not plan.cmake_args:
            action: Literal["installed", "built", "from-cache"] = "installed"
            args = ["install", "-v", plan.requirement]
            # The same version would count as installed: replace a CUDA build or one built with other arguments.
            if before.version is not None and (before.cuda or (stamp or {}).get("cmake_args")):
                args[1:1] = ["--force-reinstall", "--no-deps"]
            step("installing llama-cpp-python (CPU build)", args, env)
        else:
            wheel, action = _own_wheel(plan, cache_dir or wheel_cache_dir(env), env, step, log_path)
            name = "the CUDA build" if plan.route == "cuda" else "the CPU build"
            step(f"installing {name}", ["install", "--force-reinstall", "--no-deps", str(wheel)], env)
            dependencies = _dependencies()
            if dependencies:
                step("installing what llama-cpp-python needs", ["install", *dependencies], env)

    after = installed()
    record = {**key, "llama_cpp_python": after.version, "wheel": str(wheel) if wheel else None}
    (prefix / STAMP_NAME).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return Outcome(action, after, wheel)


def _own_wheel(
    plan: RoutePlan,
    cache_dir: Path,
    env: Mapping[str, str],
    step: Callable[[str, Sequence[str], Mapping[str, str]], None],
    log_path: Path,
) -> tuple[Path, Literal["built", "from-cache"]]:
    """The cached wheel for this plan, built first if there is none."""
    folder = cache_dir / wheel_key(plan)
    cached = _cached_wheel(folder)
    if cached is not None:
        return cached, "from-cache"
    building = cache_dir / f".building-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    build_env = {**env, "CMAKE_ARGS": plan.cmake_args, "FORCE_CMAKE": "1"}
    if plan.toolkit is not None:
        build_env["CUDACXX"] = plan.toolkit.path
    target = f"CUDA {plan.toolkit.version_text}" if plan.toolkit is not None else "this CPU"
    args = ["wheel", "-v", "--no-deps", "--no-cache-dir", "--no-binary", PACKAGE, "-w", str(building)]
    try:
        step(f"building llama-cpp-python for {target}", [*args, plan.requirement], build_env)
        built = _cached_wheel(building)
        if built is None:
            raise InstallFailed("pip built no llama-cpp-python wheel", log_path)
        folder.parent.mkdir(parents=True, exist_ok=True)
        if _cached_wheel(folder) is None:  # another set-up may have finished the same build meanwhile
            shutil.rmtree(folder, ignore_errors=True)
            os.replace(building, folder)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    wheel = _cached_wheel(folder)
    assert wheel is not None
    return wheel, "built"


def _dependencies() -> list[str]:
    """What the installed llama-cpp-python needs (numpy and friends): the wheel went in without them."""
    try:
        requires = importlib.metadata.requires(PACKAGE) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return [r.split(";")[0].strip() for r in requires if "extra ==" not in r]
