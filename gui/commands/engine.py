"""`tightfit engine [--json]`: the llama.cpp build installed, as the engine itself reports it.
`tightfit engine --plan [--simulate CARD] [--json]`: what the set-up installs on this machine, and why.

The installed build is read from a started engine worker, as a chat starts it: what the window will run,
not what pip thinks is installed. The plan is the set-up's own decision (gui.core.engine_route).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from gui.commands.flags import add_simulate_flag, simulated_card
from gui.core.engine_route import RoutePlan, describe_capabilities
from gui.core.protocol import EngineBuild
from gui.core.words import english, english_error

HELLO_TIMEOUT_S = 120.0


def add_engine_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "engine", help="the llama.cpp build installed, or (--plan) the one the set-up installs here and why"
    )
    parser.add_argument("--plan", action="store_true", help="what the set-up installs on this machine, and why")
    add_simulate_flag(parser, "with --plan: plan for this card with a plausible driver")
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def run_engine(args: argparse.Namespace) -> int:
    if args.simulate is not None and not args.plan:
        raise ValueError("--simulate goes with --plan: tightfit engine --plan --simulate CARD")
    if args.plan:
        return _print_plan(args)
    from gui.services.engine_client import EngineUnavailable
    from gui.services.engine_facts import installed_build, read_stamp

    try:
        build = installed_build(HELLO_TIMEOUT_S)
    except EngineUnavailable as exc:
        raise SystemExit(f"tightfit: error: the engine would not start: {english_error(exc)}") from exc
    stamp = read_stamp()
    if args.json:
        _dump({**build_to_json(build), "setup": stamp})
    else:
        print(format_build(build, stamp))
    return 0


def build_to_json(build: EngineBuild) -> dict[str, Any]:
    return {
        "backend": build.backend,
        "gpu_offload": build.gpu_offload,
        "cuda_archs": list(build.cuda_archs),
        "cuda_runtime": build.cuda_runtime,
        "llama_cpp_python": build.llama_cpp_python,
        "ggml": build.ggml_version or None,
        "system_info": build.system_info,
    }


def format_build(build: EngineBuild, stamp: dict[str, Any] | None) -> str:
    lines = [english(build.describe())]
    if build.ggml_version:
        lines.append(f"  ggml {build.ggml_version}")
    if build.cuda_archs or build.cuda_runtime:
        archs = english(describe_capabilities(build.cuda_archs)) if build.cuda_archs else "unknown"
        lines.append(f"  CUDA runtime {build.cuda_runtime or 'unknown'}, compiled for compute capability {archs}")
    if stamp:
        lines.append(f"  set up as the {stamp.get('route', '?')} build (for {stamp.get('requirement', '?')})")
    else:
        lines.append("  not installed by Tightfit's set-up (`tightfit engine --plan` says what it would install)")
    return "\n".join(lines)


def _print_plan(args: argparse.Namespace) -> int:
    from gui.services.engine_facts import plan_here

    plan = plan_here(simulated_card(args))
    if args.json:
        _dump(plan.as_json())
    else:
        print(format_plan(plan))
    return 0


def format_plan(plan: RoutePlan) -> str:
    driver = plan.driver
    label = " (SIMULATED)" if driver is not None and driver.simulated else ""
    lines = [f"{plan.route.upper()} build{label}: {plan.reason}"]
    if driver is not None and driver.driver_version:
        lines.append(f"  driver {driver.driver_version}, runs CUDA up to {driver.cuda_text or 'unknown'}")
    if plan.cuda_archs:
        lines.append(f"  compute capability {english(describe_capabilities(plan.cuda_archs))}")
    lines.append(f"  command: {plan.command}")
    if plan.install_help:
        lines += ["", english(plan.install_help)]
    return "\n".join(lines)


def _dump(data: dict[str, Any]) -> None:
    json.dump(data, sys.stdout, indent=2)
    sys.stdout.write("\n")
