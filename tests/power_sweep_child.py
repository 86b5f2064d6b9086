"""A process that sweeps a fake card through the real helper path and the real watchdog, and never finishes
its first cap: tests/test_power_sweep.py kills it (SIGKILL) mid-sweep and waits for the watchdog to put the
card back at its original limit.

    python tests/power_sweep_child.py HELPER TOKEN_DIR WATCHDOG_LOG

The helper is run through `sudo -n` (a fake `sudo` in the folder the test's sitecustomize names as the system's),
exactly as on a machine with the sudoers rule; the card reports an enforced limit of 230 W within 100-250 W.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

from gui.core.gpu_sample import GpuSample
from gui.services.power_limit import PowerLimiter
from gui.services.power_restore import Watchdog
from gui.services.power_sweep import PowerSweep, Workload

ORIGINAL_W = 230.0


class FakeCard:
    """A GpuSource with fixed readings: all the sweep needs before the first cap is the limits."""

    def device_count(self) -> tuple[int, str]:
        return 1, ""

    def sample(self, index: int) -> GpuSample:
        return GpuSample(
            index=index,
            timestamp=time.monotonic(),
            power_w=220.0,
            power_limit_w=ORIGINAL_W,
            power_min_w=100.0,
            power_max_w=250.0,
            power_default_w=250.0,
        )

    def shutdown(self) -> None:
        pass


class NeverDone:
    """A decode workload whose warm-up never ends within the test: one token every 50 ms, for ever."""

    def run(self, keep_going: Callable[[int], bool]) -> None:
        tokens = 0
        while keep_going(tokens):
            time.sleep(0.05)
            tokens += 1


def main(helper: Path, token_dir: Path, log: Path) -> None:
    limiter = PowerLimiter(helper=helper, method="sudo")

    def watchdog(gpu: int, watts: int) -> Watchdog:
        return Watchdog.start(gpu, watts, helper=helper, method="sudo", token_dir=token_dir, log_path=log)

    sweep = PowerSweep(
        source=FakeCard(), limiter=limiter, decoder=NeverDone(), workload=Workload(warmup_s=3600.0), watchdog=watchdog
    )
    sweep.run([250, 200])


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]))
