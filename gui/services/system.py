"""Facts about the machine the app runs on."""

from __future__ import annotations

import os

import psutil


def physical_cores() -> int:
    """Physical cores: llama.cpp decodes fastest with one thread per core, not per hyper-thread."""
    cores = psutil.cpu_count(logical=False)
    if cores:
        return int(cores)
    return max(1, (os.cpu_count() or 2) // 2)
