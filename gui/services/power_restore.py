"""The watchdog that puts a GPU's power limit back if the process sweeping it dies mid-sweep.

A power-cap sweep leaves the card at other limits than the user's for minutes. The sweep restores the
original limit itself when it ends, is stopped or fails; this covers what it cannot: the window or the CLI
killed (SIGKILL, a crash in C, the out-of-memory killer, a logout). Before the first cap the sweep starts

    python -m gui.services.power_restore --watch-pid PID --gpu N --watts W --token FILE

as a detached process (its own session, so a Ctrl+C or a closed terminal that ends the sweep does not end
it) and waits for its "ready" line. The token file exists for as long as the sweep holds the card: the
sweep removes it once it has restored the limit itself, and the watchdog then exits without doing
anything. If PID ends while the token is still there, the watchdog applies W to GPU N through the same
privileged helper as the Cap button (pkexec, or `sudo -n` where a sudoers rule allows it), removes the
token and exits. What it did goes to its log (`power-restore.log` in the user log folder).

The watchdog never runs as root itself, takes only an index and whole watts, and ends within a poll
interval of the token's removal, so one is left running only while a sweep is. Simulated cards need none:
their state lives and dies with the process that simulates them.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from gui.core.words import message_of, words
from gui.services.power_limit import HELPER_PATH, PowerLimiter

__all__ = ["READY", "Watchdog", "WatchdogError", "main"]

log = logging.getLogger(__name__)

READY = "ready"
POLL_S = 0.5
READY_TIMEOUT_S = 30.0
MAX_SAID = 200  # of a watchdog's unexpected first line, quoted in the error
PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # where `-m gui.services.power_restore` is found


class WatchdogError(RuntimeError):
    pass


class Watchdog:
    """The sweep's side: start one before the first cap, `release()` after restoring the limit in-process."""

    def __init__(self, process: subprocess.Popen[str], token: Path) -> None:
        self.process = process
        self.token = token

    @classmethod
    def start(
        cls,
        gpu: int,
        watts: int,
        *,
        helper: str | Path = HELPER_PATH,
        method: str = "auto",
        token_dir: Path | None = None,
        log_path: Path | None = None,
        watch_pid: int | None = None,
        ready_timeout_s: float = READY_TIMEOUT_S,
    ) -> Watchdog:
        """Start a watchdog for this process (or `watch_pid`) and wait until it watches; WatchdogError if it
        cannot, in which case the sweep must not change the card."""
        fd, name = tempfile.mkstemp(prefix=f"tightfit-power-sweep-gpu{gpu}-", suffix=".token", dir=token_dir)
        token = Path(name)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(f"gpu {gpu} back to {watts} W if process {watch_pid or os.getpid()} ends\n")
        argv = [
            sys.executable, "-m", "gui.services.power_restore",
            "--watch-pid", str(watch_pid or os.getpid()), "--gpu", str(gpu), "--watts", str(watts),
            "--token", str(token), "--helper", str(helper), "--method", method,
        ]  # fmt: skip
        log_file = _open_log(log_path)
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log_file if log_file is not None else subprocess.DEVNULL,
                cwd=PACKAGE_ROOT,
                text=True,
                start_new_session=True,  # not ended by the terminal's Ctrl+C or hang-up with the sweep
            )
        except OSError as exc:
            token.unlink(missing_ok=True)
            raise WatchdogError(
                words("could not start the watchdog that restores the power limit: {error}", error=message_of(exc))
            ) from exc
        finally:
            if log_file is not None:
                log_file.close()
        watchdog = cls(process, token)
        line = watchdog._read_ready(ready_timeout_s)
        if line != READY:
            watchdog.release()
            if line:
                why = words(
                    "the watchdog that restores the power limit did not start (it said {line}); "
                    "the card was not changed",
                    line=repr(line[:MAX_SAID]),
                )
            else:
                why = words(
                    "the watchdog that restores the power limit did not start within {seconds} s; "
                    "the card was not changed",
                    seconds=f"{ready_timeout_s:g}",
                )
            raise WatchdogError(why)
        return watchdog

    def _read_ready(self, timeout_s: float) -> str:
        stdout = self.process.stdout
        assert stdout is not None
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return ""
                readable, _, _ = select.select([stdout], [], [], left)
                if readable:
                    return stdout.readline().strip()
        finally:
            stdout.close()

    @property
    def armed(self) -> bool:
        return self.token.exists()

    def release(self, timeout_s: float = 5.0) -> None:
        """The sweep restored the limit itself: the watchdog ends without touching the card."""
        self.token.unlink(missing_ok=True)
        try:
            self.process.wait(timeout_s)
        except subprocess.TimeoutExpired:  # it exits on its next poll; do not hold the sweep for it
            log.warning("the power-limit watchdog (pid %d) has not exited yet", self.process.pid)


def _open_log(path: Path | None) -> IO[str] | None:
    if path is None:
        import platformdirs

        path = Path(platformdirs.user_log_dir("tightfit", appauthor=False)) / "power-restore.log"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("a", encoding="utf-8")
    except OSError:
        return None


# --- the watchdog process -------------------------------------------------------------------------------


def _alive(pid: int, start_ticks: int | None) -> bool:
    """For the fallback without pidfd: the process is there, not a zombie, and not a new one with its number."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    fields = stat.rpartition(")")[2].split()
    return fields[0] != "Z" and (start_ticks is None or int(fields[19]) == start_ticks)


def _start_ticks(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def wait_for_exit_or_release(pid: int, token: Path, poll_s: float = POLL_S) -> bool:
    """Block until process `pid` ends (True) or `token` is removed (False)."""
    pidfd: int | None = None
    with contextlib.suppress(AttributeError, OSError):  # ProcessLookupError: already gone
        pidfd = os.pidfd_open(pid)
    if pidfd is None and not _alive(pid, None):
        return True
    start = _start_ticks(pid)
    poller = select.poll()
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)  # readable once the process has ended (zombie or reaped)
    try:
        while True:
            if not token.exists():
                return False
            if pidfd is not None:
                if poller.poll(poll_s * 1000):
                    return True
            else:
                if not _alive(pid, start):
                    return True
                time.sleep(poll_s)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gui.services.power_restore",
        description="Restore a GPU's power limit when a process ends without having removed its token file.",
    )
    parser.add_argument("--watch-pid", type=int, required=True, metavar="PID")
    parser.add_argument("--gpu", type=int, required=True, metavar="N")
    parser.add_argument("--watts", type=int, required=True, metavar="W")
    parser.add_argument("--token", type=Path, required=True, metavar="FILE")
    parser.add_argument("--helper", type=Path, default=HELPER_PATH, metavar="PATH")
    parser.add_argument("--method", choices=("auto", "pkexec", "sudo"), default="auto")
    parser.add_argument("--poll", type=float, default=POLL_S, metavar="SECONDS")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s power-restore[%(process)d] %(message)s")
    if args.gpu < 0 or args.watts <= 0 or args.watch_pid <= 0:
        print("bad arguments", flush=True)
        return 2
    limiter = PowerLimiter(helper=args.helper, method=args.method)
    if not args.token.exists():
        print("no token", flush=True)
        return 2
    print(READY, flush=True)
    sys.stdout.close()
    if not wait_for_exit_or_release(args.watch_pid, args.token, args.poll):
        return 0
    if not args.token.exists():  # released in the same instant the process ended
        return 0
    log.info("process %d ended mid-sweep: restoring GPU %d to %d W", args.watch_pid, args.gpu, args.watts)
    result = limiter.apply(args.gpu, args.watts)
    log.info("%s: %s", result.outcome.value, result.message)
    args.token.unlink(missing_ok=True)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
