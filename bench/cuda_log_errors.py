"""How far the planner is from published llama.cpp CUDA load logs (tests/data/cuda_logs).

For every record: the planner's compute buffer on each GPU and on the host (CUDA_Host plus CPU), its KV
(recurrent state included) and output buffer, beside the logged figures, with the relative error; then
the median absolute error per buffer kind. Prints only: the records are the target the compute model is
improved against. The ``unapplied`` column names the record's settings the planner has no field for yet.

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


def unapplied(load: LoggedLoad) -> str:
    """The record's settings the planner does not take yet, as short flags."""
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
        Row(rid, "compute", d.name, compute.get(d.name, 0.0), d.compute_mib)
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
    print(f"{'record':{width}}  {'buffer':16} {'logged':>10} {'planned':>10} {'error':>9}  unapplied")
    for load, record_rows in table:
        flags = unapplied(load)
        for r in record_rows:
            label = f"{r.kind} {r.buffer}" if r.kind == "compute" else r.kind
            print(f"{r.record:{width}}  {label:16} {r.logged:10.2f} {r.planned:10.2f} {_pct(r.error)}  {flags}")
            flags = ""
    print()
    print("median |error| per kind (records where llama.cpp logged the buffer):")
    every = [r for _, record_rows in table for r in record_rows if r.logged > 0]
    for kind in KIND_ORDER:
        errors = [abs(r.error) for r in every if r.kind == kind]
        if errors:
            print(f"  {kind:13} {statistics.median(errors) * 100:6.1f}%  over {len(errors)} buffers")


if __name__ == "__main__":
    main()
