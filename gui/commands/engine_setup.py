"""The set-up's engine step: `python -m gui.commands.engine_setup`, which `make setup` (and so `make run` and
`make test`) runs before the project itself is installed.

It decides the llama.cpp build for this machine (a CUDA build for the cards present, or the CPU build and
why: gui.core.engine_route) and installs it into this interpreter's environment. A set-up with the same
facts does nothing; installing a CUDA toolkit and running the same command again builds for the card.
The build's output goes to a log file; the terminal shows one line with the step and the elapsed time,
and on failure the log's last lines. Runs from a checkout before anything else is installed: the
standard library only, plus nvidia-ml-py, which it installs first.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import logging
import os
import re
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from gui.core.engine_route import ENGINE_ENV, RoutePlan, describe_capabilities
from gui.core.words import english, english_error
from gui.services.engine_facts import checkout_root, plan_here, requirement
from gui.services.engine_install import InstallFailed, Outcome, PipRunner, ensure_engine, run_pip, wheel_cache_dir

__all__ = ["ProgressLine", "build_step", "default_log_path", "main", "plan_words"]

TAIL_LINES = 25
QUIET_INTERVAL_S = 60.0  # without a terminal (CI), a progress line this often


def default_log_path() -> Path:
    """build/engine-build.log in a checkout; beside the wheel cache otherwise."""
    root = checkout_root()
    return root / "build" / "engine-build.log" if root else wheel_cache_dir().parent / "engine-build.log"


def shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def build_step(line: str) -> tuple[int, int] | None:
    """Ninja's progress in a build line: "[12/150] Building CUDA object ..." -> (12, 150)."""
    match = re.match(r"\s*\[(\d+)/(\d+)\]", line)
    return (int(match[1]), int(match[2])) if match else None


def elapsed_words(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m {secs:02d}s" if minutes else f"{secs}s"


def plan_words(plan: RoutePlan) -> str:
    if plan.route == "cuda" and plan.toolkit is not None:
        capabilities = english(describe_capabilities(plan.cuda_archs))
        return f"CUDA {plan.toolkit.version_text} build for compute capability {capabilities}"
    return "CPU build"


class ProgressLine:
    """One terminal line that follows the build: its phase, ninja's step, the elapsed time and the log.

    On a terminal the line is redrawn every second, so the time moves even while a long compile step
    prints nothing; without one (CI), a line is printed at each phase and every minute.
    """

    def __init__(self, stream: TextIO, log_path: Path, headline: str = "") -> None:
        self.stream = stream
        self.log_path = log_path
        self.headline = headline  # printed once, when the first phase starts: nothing when nothing is done
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self.phase = ""
        self.step: tuple[int, int] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._last_quiet = 0.0
        self._thread = threading.Thread(target=self._tick, name="setup-progress", daemon=True)

    def __enter__(self) -> ProgressLine:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.tty:
            self.stream.write("\r\033[K")
            self.stream.flush()

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def report(self, phase: str, line: str) -> None:
        with self._lock:
            if phase != self.phase:
                if not self.phase and self.headline:
                    self.stream.write(self.headline + "\n")
                self.phase, self.step = phase, None
                self._draw(force=True)
            step = build_step(line)
            if step is not None:
                self.step = step

    def text(self) -> str:
        step = f", step {self.step[0]}/{self.step[1]}" if self.step else ""
        return f"  {self.phase}{step}, {elapsed_words(self.elapsed)} (log: {shown(self.log_path)})"

    def _tick(self) -> None:
        while not self._stop.wait(1.0):
            with self._lock:
                self._draw()

    def _draw(self, force: bool = False) -> None:
        if not self.phase:
            return
        if self.tty:
            self.stream.write("\r\033[K" + self.text())
        elif force or time.monotonic() - self._last_quiet >= QUIET_INTERVAL_S:
            self._last_quiet = time.monotonic()
            self.stream.write(self.text() + "\n")
        self.stream.flush()


class _Collect(logging.Handler):
    """Keeps what the fact finding logged (an nvcc that would not run, an unreadable os-release) for the
    build log: written there only when something is installed, so a set-up that does nothing keeps the
    last build's log."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.name}: {record.getMessage()}")


def ensure_nvml(pip: PipRunner) -> None:
    """nvidia-ml-py, which reads the driver, before anything else: at the version the project requires."""
    if importlib.util.find_spec("pynvml") is not None:
        return
    wanted = requirement("nvidia-ml-py")
    output: list[str] = []
    if pip(["--disable-pip-version-check", "install", "-q", wanted], os.environ, output.append) != 0:
        raise InstallFailed(f"could not install {wanted}: " + " ".join(output[-3:]))
    importlib.invalidate_caches()


def main(argv: Sequence[str] | None = None, pip: PipRunner = run_pip) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gui.commands.engine_setup",
        description="Install llama-cpp-python built for this machine's NVIDIA GPUs (or the CPU build, and why). "
        f"{ENGINE_ENV}=cpu|cuda overrides the choice.",
    )
    parser.add_argument("--log", type=Path, default=None, metavar="FILE", help="the build log (default: %(default)s)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be installed, and install nothing")
    args = parser.parse_args(argv)
    log_path: Path = args.log or default_log_path()
    collect = _Collect()
    logger = logging.getLogger("gui")
    level = logger.level
    logger.addHandler(collect)
    logger.setLevel(logging.INFO)
    try:
        ensure_nvml(pip)
        plan = plan_here()
    except InstallFailed as exc:
        print(f"tightfit set-up: error: {english_error(exc)}", file=sys.stderr)
        return 1
    except (ValueError, LookupError) as exc:
        print(f"tightfit set-up: error: {english_error(exc)}", file=sys.stderr)
        return 2
    finally:
        logger.removeHandler(collect)
        logger.setLevel(level)
    if args.dry_run:
        print(f"Engine: {plan_words(plan)} — {plan.reason}\n  {plan.command}")
        if plan.install_help:
            print(plan.install_help)
        return 0
    headline = f"Engine: installing the {plan_words(plan)} — {plan.reason}"
    failed: InstallFailed | None = None
    with ProgressLine(sys.stdout, log_path, headline) as progress:
        try:
            outcome = ensure_engine(plan, log_path, pip=pip, report=progress.report, preamble=collect.lines)
        except InstallFailed as exc:
            failed = exc
    if failed is not None:
        return _failed(plan, failed, progress.elapsed)
    _done(plan, outcome, progress.elapsed, log_path)
    return 0


def _done(plan: RoutePlan, outcome: Outcome, elapsed: float, log_path: Path) -> None:
    version = outcome.installed.version or "?"
    if outcome.action == "unchanged":
        unused = "; a GPU here is not used: `tightfit engine --plan` says how to use it" if plan.install_help else ""
        print(f"Engine: up to date, {plan_words(plan)} (llama-cpp-python {version}){unused}")
        return
    how = {"built": "built and installed", "from-cache": "installed from the cache of earlier builds"}
    print(
        f"Engine: {plan_words(plan)} of llama-cpp-python {version} {how.get(outcome.action, 'installed')} in "
        f"{elapsed_words(elapsed)}; log: {shown(log_path)}"
    )
    if plan.install_help:
        print(plan.install_help)


def _failed(plan: RoutePlan, exc: InstallFailed, elapsed: float) -> int:
    log_path = exc.log_path or default_log_path()
    print(
        f"Engine: {english_error(exc)} after {elapsed_words(elapsed)}. The last lines of {shown(log_path)}:",
        file=sys.stderr,
    )
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-TAIL_LINES:]
    except OSError:
        lines = []
    for line in lines:
        print(f"    {line}", file=sys.stderr)
    if plan.route == "cuda":
        print(
            f"Meanwhile {ENGINE_ENV}=cpu with the same command installs the CPU build (the GPU stays unused).",
            file=sys.stderr,
        )
    return 1


if __name__ == "__main__":
    sys.exit(main())
