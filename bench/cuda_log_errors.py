"""How far the planner is from published llama.cpp CUDA load logs (tests/data/cuda_logs).

For every record: the planner's compute buffer on each GPU (op offload's staged copies included) and on
the host (CUDA_Host plus CPU), its KV (recurrent state included) and output buffer, beside the logged
figures, with the relative error; then the median absolute error and the worst under-estimate per buffer
kind. The records are planned with their build's rules and command line (tests/cuda_logs.py: planned);
the ``flags`` column names the record's settings beyond LoadSettings' plain fields. tests/test_cuda_logs.py
asserts the GPU targets; docs/memory-model.md keeps the table this prints.

Run: ``.venv/bin/python bench/cuda_log_errors.py``.
"""

from __future__ import annotations

import re
import statistics
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core.planner import Plan  # noqa: E402
from tests.cuda_logs import LoggedLoad, build_all, planned  # noqa: E402

_GPU = re.compile(r"CUDA\d+")
# Kinds in the order the table prints them; "compute" rows carry the buffer name.
KIND_ORDER = ("compute", "host compute", "kv", "output")


@dataclass(frozen=True)
class Row:
    record: str
    kind: str  # one of KIND_ORDER
    buffer: str
    logged: float
    planned: float

    @property
    def error(self) -> float:
        """(planned - logged) / logged; 0 when both are 0."""
        if self.logged == 0:
            return 0.0 if self.planned == 0 else float("inf")
        return (self.planned - self.logged) / self.logged


def flags(load: LoggedLoad) -> str:
    """The record's settings beyond LoadSettings' plain fields, as short flags."""
    raw = load.raw
    flags = []
    if raw.get("tensor_overrides"):
        flags.append("-ot")
    if raw.get("n_cpu_moe"):
        flags.append("-ncmoe")
    if raw.get("cpu_moe"):
        flags.append("-cmoe")
    if raw.get("kv_unified"):
        flags.append("-kvu")
    if raw.get("no_op_offload"):
        flags.append("-nopo")
    if raw.get("n_outputs_max"):
        flags.append("n_outputs_max")
    return ",".join(flags) or "-"


def rows(load: LoggedLoad, p: Plan) -> list[Row]:
    """Planned against logged buffers of one record."""
    rid = load.id
    compute = load.logged["compute"]
    out = [
        Row(rid, "compute", d.name, compute.get(d.name, 0.0), d.compute_mib + d.staged_mib)
        for d in p.devices
        if d.name in compute or d.compute_mib
    ]
    host_logged = sum(v for k, v in compute.items() if not _GPU.fullmatch(k))
    out.append(Row(rid, "host compute", "host", host_logged, p.host.compute_mib))
    kv_logged = sum(load.logged["kv"].values()) + sum(load.logged["rs"].values())
    kv_planned = p.kv_mib + p.recurrent_mib
    out.append(Row(rid, "kv", "all", kv_logged, kv_planned))
    out.append(Row(rid, "output", "all", sum(load.logged["output"].values()), p.output_mib))
    return out


def _pct(x: float) -> str:
    return f"{x * 100:+8.1f}%" if x != float("inf") else "     inf"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        loads = build_all(Path(tmp))
        table = [(load, rows(load, planned(load))) for load in loads]
    width = max(len(load.id) for load in loads)
    print(f"{'record':{width}}  {'buffer':16} {'logged':>10} {'planned':>10} {'error':>9}  flags")
    for load, record_rows in table:
        shown = flags(load)
        for r in record_rows:
            label = f"{r.kind} {r.buffer}" if r.kind == "compute" else r.kind
            print(f"{r.record:{width}}  {label:16} {r.logged:10.2f} {r.planned:10.2f} {_pct(r.error)}  {shown}")
            shown = ""
    print()
    print("per kind, over the records where llama.cpp logged the buffer: median |error|, worst under-estimate")
    every = [r for _, record_rows in table for r in record_rows if r.logged > 0]
    for kind in KIND_ORDER:
        errors = [r.error for r in every if r.kind == kind]
        if errors:
            median = statistics.median(abs(e) for e in errors) * 100
            worst = min(errors) * 100
            print(f"  {kind:13} {median:6.1f}%  {worst:+7.1f}%  over {len(errors)} buffers")


if __name__ == "__main__":
    main()
