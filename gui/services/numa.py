"""Pinning the engine to the NUMA node its GPU hangs off.

On a two-socket board every token's host-side work (and, with layers in RAM, every weight read) that runs
on the far socket crosses the inter-socket link. The engine is Tightfit's own process, so it can be
started on the right node: with `numactl` installed, its CPUs and its memory both (`--cpunodebind`,
`--membind`); without it, its CPUs (the worker sets its own affinity before llama.cpp starts a thread).
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = ["NumaPin", "describe_cpus", "machine_id", "node_cpus", "parse_cpu_list", "pin_running", "write_launcher"]


@dataclass(frozen=True)
class NumaPin:
    node: int
    cpus: frozenset[int]


def parse_cpu_list(text: str, limit: int = 1 << 16) -> frozenset[int]:
    """The kernel's CPU list format ('0-7,16-23'); a malformed part is a ValueError, sizes are bounded."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if not part:
            continue
        first, _, last = part.partition("-")
        low, high = int(first), int(last or first)
        if not 0 <= low <= high < limit:
            raise ValueError(f"bad CPU range {part!r}")
        cpus.update(range(low, high + 1))
    return frozenset(cpus)


def node_cpus(node: int, root: str | Path = "/") -> frozenset[int]:
    """The CPUs of one NUMA node, from sysfs; empty when the node does not exist or cannot be read."""
    path = Path(root) / "sys/devices/system/node" / f"node{node}" / "cpulist"
    try:
        return parse_cpu_list(path.read_text(encoding="ascii")[:4096])
    except (OSError, ValueError, UnicodeDecodeError):
        return frozenset()


def machine_id(root: str | Path = "/") -> str:
    """This machine's systemd id, or its host name where there is none."""
    for name in ("etc/machine-id", "var/lib/dbus/machine-id"):
        try:
            text = (Path(root) / name).read_text(encoding="ascii")[:64].strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text:
            return text
    return os.uname().nodename


def write_launcher(folder: Path, node: int, numactl: str | None = None) -> Path | None:
    """A launcher that starts the Python the engine runs in under `numactl` bound to ``node`` (CPUs and
    memory); None where numactl is not installed. multiprocessing starts the worker through it."""
    numactl = numactl or shutil.which("numactl")
    if numactl is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"engine-numa{node}.sh"
    bind = f"--cpunodebind={node} --membind={node}"
    python = shlex.quote(sys.executable)
    path.write_text(f'#!/bin/sh\nexec {shlex.quote(numactl)} {bind} {python} "$@"\n', encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def describe_cpus(cpus: frozenset[int] | set[int]) -> str:
    """The kernel's list format back: {0,1,2,3,8} -> '0-3,8'."""
    parts: list[str] = []
    for cpu in sorted(cpus):
        if parts and cpu == int(parts[-1].rpartition("-")[2]) + 1:
            parts[-1] = f"{parts[-1].partition('-')[0]}-{cpu}"
        else:
            parts.append(str(cpu))
    return ",".join(parts)


def pin_running(pid: int, cpus: frozenset[int], proc: str | Path = "/proc") -> int:
    """Move every thread of a running process onto ``cpus``; how many moved (threads may come and go)."""
    moved = 0
    try:
        tids = [int(name) for name in os.listdir(Path(proc) / str(pid) / "task") if name.isdigit()]
    except OSError:
        return 0
    for tid in tids[:4096]:
        try:
            os.sched_setaffinity(tid, cpus)
        except OSError:
            continue
        moved += 1
    return moved
