"""Reading llama.cpp's log: the memory figures of a dry run, and the cause of a failure.

llama.cpp reports its sizes only as log lines; these patterns follow the installed engine's wording.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

KV_SIZE = re.compile(r"llama_kv_cache\w*: size =\s*([\d.]+) MiB")
RS_SIZE = re.compile(r"llama_memory_recurrent\w*: size =\s*([\d.]+) MiB")
COMPUTE = re.compile(r":\s*(\S+) compute buffer size =\s*([\d.]+) MiB")
OUTPUT = re.compile(r":\s*(\S+)\s+output buffer size =\s*([\d.]+) MiB")


@dataclass
class DryRunFigures:
    kv_mib: float = 0.0
    recurrent_mib: float = 0.0
    compute_mib: dict[str, float] = field(default_factory=dict)
    output_mib: dict[str, float] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)


def parse_dry_run(lines: Iterable[str]) -> DryRunFigures:
    figures = DryRunFigures()
    for line in lines:
        if m := KV_SIZE.search(line):
            figures.kv_mib += float(m.group(1))
        elif m := RS_SIZE.search(line):
            figures.recurrent_mib += float(m.group(1))
        elif m := COMPUTE.search(line):
            figures.compute_mib[m.group(1)] = figures.compute_mib.get(m.group(1), 0.0) + float(m.group(2))
        elif m := OUTPUT.search(line):
            figures.output_mib[m.group(1)] = figures.output_mib.get(m.group(1), 0.0) + float(m.group(2))
        else:
            continue
        figures.lines.append(line.strip())
    return figures
