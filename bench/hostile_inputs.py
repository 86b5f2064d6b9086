"""What hostile model files do to Tightfit: chat templates and header values written to exhaust it.

Each input runs in its own process, capped at 3 GiB of address space and killed after a timeout, so
a hang or a memory bomb is reported instead of taking the machine with it. For every chat template of
tests/hostile_templates.py: how compiling it ends (as ``choose_template`` does at load) and how
rendering a one-message conversation ends, with the default limits. For every header of
tests/hostile_headers.py (with one listing a million tensors, and real shapes at llama.cpp's limits):
how reading it ends, then model_shape,
plan() (ms per call, on a V100 and CPU-only) and auto_fit. Run: ``.venv/bin/python bench/hostile_inputs.py``
(``--templates`` or ``--headers`` for one half).
"""

from __future__ import annotations

import json
import resource
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

MEMORY_CAP = 3 << 30
TEMPLATE_TIMEOUT_S = 10.0
HEADER_TIMEOUT_S = 30.0
PLAN_CALLS = 50


def _outcome(action: Callable[[], Any]) -> tuple[str, float, Any]:
    """How ``action`` ended (a short line), its time in ms, and its result when it returned."""
    t0 = time.perf_counter()
    try:
        result = action()
    except BaseException as e:  # the point is to see what escapes, whatever it is
        ms = (time.perf_counter() - t0) * 1000
        return f"{type(e).__name__}: {' '.join(str(e).split())[:90]}", ms, None
    return "ok", (time.perf_counter() - t0) * 1000, result


# ---- in the child ------------------------------------------------------------------------------


def _template_child(index: int) -> dict[str, Any]:
    from gui.core.chat_template import DEFAULT_LIMITS, choose_template, render_chat
    from gui.core.protocol import ChatMessage
    from tests.hostile_templates import PAYLOADS

    text = PAYLOADS[index].text(DEFAULT_LIMITS.max_output_chars)
    compiled, compile_ms, chosen = _outcome(lambda: choose_template(text))
    if chosen is not None and chosen.is_fallback:
        compiled = f"fallback: {chosen.reason[:90]}"
    rendered, render_ms, _ = _outcome(
        lambda: render_chat(text, [ChatMessage("user", "Hi")], bos_token="<s>", eos_token="</s>")
    )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    return {"compile": compiled, "compile_ms": compile_ms, "render": rendered, "render_ms": render_ms, "peak_mib": peak}


def _header_child(path: str) -> dict[str, Any]:
    from gui.core.cards import find_card
    from gui.core.gguf_reader import read_model
    from gui.core.params import LoadSettings
    from gui.core.planner import Device, auto_fit, model_shape, plan

    card = find_card("v100-16gb")
    v100 = Device(card.name, card.vram_mib, card.vram_mib, card.bandwidth_gbs, card.sm_count)
    out: dict[str, Any] = {}
    out["read"], out["read_ms"], header = _outcome(lambda: read_model(path))
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    if header is None:
        return out
    out["shape"], out["shape_ms"], shape = _outcome(lambda: model_shape(header))
    if shape is None:
        out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
        return out
    for label, devices in (("v100", [v100]), ("cpu", [])):

        def sweep(devices: list[Device] = devices) -> None:
            for i in range(PLAN_CALLS):
                plan(header, LoadSettings(n_ctx=256 * (1 + i % 64)), devices)

        result, ms, _ = _outcome(sweep)
        out[f"plan_{label}"], out[f"plan_{label}_ms"] = result, ms / PLAN_CALLS
    out["auto_fit"], out["auto_fit_ms"], _ = _outcome(lambda: auto_fit(header, LoadSettings(), [v100]))
    out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10
    return out


# ---- in the parent -----------------------------------------------------------------------------


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def _run_child(args: list[str], timeout: float) -> dict[str, Any]:
    """The child's JSON line, plus its peak memory; or why there is none."""
    t0 = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, __file__, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_limit_memory,
    )
    try:
        stdout, stderr = child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        stdout, stderr = child.communicate()
        return {"killed": f"still running after {timeout:g} s (killed)"}
    lines = stdout.strip().splitlines()
    if child.returncode != 0 or not lines:
        tail = " ".join(stderr.strip().splitlines()[-1:])[:90]
        return {"killed": f"process died (exit {child.returncode}) after {time.perf_counter() - t0:.1f} s: {tail}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _million_tensors(path: Path) -> Path:
    """A header that claims and lists a million minimal tensor infos (37 MiB), written directly."""
    out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, 1_000_000, 1))
    key, value = b"general.architecture", b"llama"
    out += struct.pack("<Q", len(key)) + key + struct.pack("<IQ", 8, len(value)) + value
    for i in range(1_000_000):
        name = b"t%d" % i
        out += struct.pack("<Q", len(name)) + name + struct.pack("<IQIQ", 1, 32, 0, 0)
    path.write_bytes(out)
    return path


def templates() -> None:
    from tests.hostile_templates import PAYLOADS

    print(f"chat templates (default limits; {TEMPLATE_TIMEOUT_S:g} s and {MEMORY_CAP >> 30} GiB per input)")
    for i, payload in enumerate(PAYLOADS):
        r = _run_child(["--template", str(i)], TEMPLATE_TIMEOUT_S)
        if "killed" in r:
            print(f"  {payload.name:34s} {r['killed']}")
            continue
        print(f"  {payload.name:34s} compile: {r['compile'][:80]} [{r['compile_ms']:.0f} ms]")
        print(f"  {'':34s} render:  {r['render'][:80]} [{r['render_ms']:.0f} ms; peak {r['peak_mib']} MiB]")


def headers() -> None:
    from tests.hostile_headers import EXTREMES, HOSTILE_HEADERS, write_hostile
    from tests.model_shapes import write_shape

    print(f"headers ({HEADER_TIMEOUT_S:g} s and {MEMORY_CAP >> 30} GiB per input; plan() ms per call)")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(c.name, write_hostile(Path(tmp) / f"{i}.gguf", c)) for i, c in enumerate(HOSTILE_HEADERS)]
        cases.append(("a million tensors", _million_tensors(Path(tmp) / "tensors.gguf")))
        cases += [(f"{name} (valid)", write_shape(Path(tmp) / f"{name}.gguf", s)) for name, s in EXTREMES.items()]
        for name, path in cases:
            r = _run_child(["--header", str(path)], HEADER_TIMEOUT_S)
            if "killed" in r:
                print(f"  {name:38s} {r['killed']}")
                continue
            parts = [f"read {r['read'][:100]} [{r['read_ms']:.0f} ms]"]
            if "shape" in r:
                parts.append(f"shape {r['shape'][:100]} [{r['shape_ms']:.0f} ms]")
            for key in ("plan_v100", "plan_cpu", "auto_fit"):
                if key in r:
                    parts.append(f"{key} {r[key][:60]} [{r[key + '_ms']:.2f} ms]")
            print(f"  {name:38s} " + "; ".join(parts) + f"; peak {r['peak_mib']} MiB")


def main(argv: list[str]) -> None:
    if argv[:1] == ["--template"]:
        print(json.dumps(_template_child(int(argv[1]))))
    elif argv[:1] == ["--header"]:
        print(json.dumps(_header_child(argv[1])))
    else:
        if "--headers" not in argv:
            templates()
        if "--templates" not in argv:
            headers()


if __name__ == "__main__":
    main(sys.argv[1:])
