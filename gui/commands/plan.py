"""`tightfit plan MODEL.gguf|URL [--gpu CARD|none ...] [--vram-mib N] [sizing flags] [--json]`.

Prints the memory plan the VRAM bar shows, from the GGUF header alone: a truncated or sparse file, or a
header read over HTTP with Range requests (within a deadline; a file on the hub with the user's token).
``--gpu`` given more than once plans for several cards in that order (llama.cpp's device order), with
``--split-mode``, ``--tensor-split`` and ``--main-gpu``: one entry per device. ``--rpc HOST:PORT,...`` adds the
devices of other machines' `tightfit rpc-worker` (asked for their memory), before the GPUs as llama.cpp lists
them, and ``--rpc-link`` states the network for the decode speed (docs/rpc.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from gui.commands.flags import add_spec_flags
from gui.core.cards import CARDS, UnknownCardError, custom_card, find_card
from gui.core.gguf_reader import GGUFError, GGUFHeader, read_model
from gui.core.params import MARGIN, MAX_DEVICES, LoadSettings, NetworkLink
from gui.core.planner import Device, Plan, Verdict, plan, plan_to_json
from gui.core.specs import specs_of
from gui.core.words import english, english_error
from gui.services.devices import device_from_card, device_from_gpu
from gui.services.nvml import Nvml


def add_plan_parser(sub: Any, add_sizing_flags: Any) -> None:
    parser = sub.add_parser("plan", help="the memory plan of a load, from the model's header alone")
    parser.add_argument("model", metavar="MODEL.gguf|URL", help="a GGUF file (may be header-only) or an http(s) URL")
    add_device_flags(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_spec_flags(parser.add_argument_group("network to the RPC servers (--rpc)"), specs_of(NetworkLink))
    add_sizing_flags(parser)
    repeatable_rpc(parser)


class _JoinedServers(argparse.Action):
    """--rpc given more than once: the lists joined, as one --rpc a,b would give them."""

    def __call__(self, parser: Any, namespace: argparse.Namespace, values: Any, option_string: Any = None) -> None:
        before = getattr(namespace, self.dest, None)
        setattr(namespace, self.dest, f"{before},{values}" if before else values)


def repeatable_rpc(parser: argparse.ArgumentParser) -> None:
    """Let the declared --rpc flag (gui.core.params: rpc_servers) be given once per server too."""
    action = parser._option_string_actions.get("--rpc")
    if action is not None:
        action.__class__ = _JoinedServers
        action.help = f"{action.help} Give it once per server, or once with a comma list."


def add_device_flags(parser: Any) -> None:
    """What to plan for (read by resolve_devices) and the margin and RAM bandwidth the plan uses."""
    parser.add_argument(
        "--gpu",
        action="append",
        default=None,
        metavar="CARD|none",
        help=f"plan for a catalog card ({', '.join(CARDS)}), once per card for several (--gpu p40 --gpu p40), "
        "or 'none' for CPU only; default: the GPUs found",
    )
    parser.add_argument("--vram-mib", type=float, default=None, metavar="N", help="card memory, overriding --gpu")
    parser.add_argument("--bandwidth-gbs", type=float, default=None, metavar="N", help="card bandwidth for --vram-mib")
    parser.add_argument(MARGIN.flag, type=float, default=float(MARGIN.default), metavar="N", help=MARGIN.help)
    parser.add_argument(
        "--ram-gbs",
        type=float,
        default=None,
        metavar="N",
        help="host memory bandwidth for the decode ceiling (default: measured when needed)",
    )


def fail(message: str) -> SystemExit:
    return SystemExit(f"tightfit: error: {message}")


def read_model_header(source: str) -> GGUFHeader:
    if source.startswith(("http://", "https://")):
        from gui.services.hub import HubClient
        from gui.services.remote_header import RemoteHeaderError, fetch_header

        try:  # a gated or private file on the hub needs the user's token; no other server gets it
            return fetch_header(source, token=HubClient().token_for(source))
        except RemoteHeaderError as exc:
            raise fail(english_error(exc)) from exc
    if not Path(source).is_file():
        raise fail(f"no such model file: {source}")
    return read_model(source)


def resolve_devices(args: argparse.Namespace) -> tuple[list[Device], str]:
    """The devices to plan for, and a note on where their figures come from."""
    gpus: list[str] = args.gpu or []
    if any(g.lower() == "none" for g in gpus):
        if len(gpus) > 1:
            raise fail("--gpu none cannot be given with other cards")
        if args.vram_mib is not None:
            raise fail("--vram-mib makes no sense with --gpu none")
        return [], "CPU only"
    if len(gpus) > MAX_DEVICES:
        raise fail(f"--gpu was given {len(gpus)} times; llama.cpp loads on at most {MAX_DEVICES} devices")
    if len(gpus) > 1 and args.vram_mib is not None:
        raise fail("--vram-mib describes one card: give it with one --gpu at most")
    if gpus:
        cards = []
        for key in gpus:
            try:
                card = find_card(key)
            except UnknownCardError as exc:
                raise fail(english_error(exc)) from exc
            if args.vram_mib is not None:
                card = custom_card(args.vram_mib, args.bandwidth_gbs or card.bandwidth_gbs, card.name)
            cards.append(card)
        names = ", ".join(c.name for c in cards)
        kind = "catalog card" if len(cards) == 1 else "catalog cards"
        return [device_from_card(c) for c in cards], f"{kind} {names} (planning, not measuring)"
    if args.vram_mib is not None:
        if args.vram_mib <= 0:
            raise fail(f"--vram-mib must be positive (got {args.vram_mib:g})")
        card = custom_card(args.vram_mib, args.bandwidth_gbs or 1.0, f"Custom GPU {args.vram_mib:.0f} MiB")
        device = device_from_card(card)
        if args.bandwidth_gbs is None:
            device = Device(device.name, device.total_mib, device.free_mib)  # unknown bandwidth: no speed ceiling
        return [device], "custom card (planning, not measuring)"
    query = Nvml().query_gpus()
    if query.gpus:
        return [device_from_gpu(g) for g in query.gpus], "measured by NVML"
    return [], f"CPU only: no GPU found ({english(query.error)}); pass --gpu CARD to plan for a card"


def remote_devices(rpc_servers: str) -> list[Device]:
    """The devices of the RPC servers, as llama.cpp names their buffers ("RPC0[10.0.0.5:50052]"), with the
    memory each server says is free; a server that cannot be reached or does not answer ends the command."""
    if not rpc_servers:
        return []
    from gui.services.devices import device_from_remote
    from gui.services.rpc import RpcUnavailable, ask_devices

    try:
        found = ask_devices(rpc_servers)
    except RpcUnavailable as exc:
        raise fail(english_error(exc)) from exc
    return [device_from_remote(d) for d in found]


def link_from_args(args: argparse.Namespace) -> NetworkLink:
    given = {s.key: getattr(args, s.key) for s in specs_of(NetworkLink) if getattr(args, s.key, None) is not None}
    if given.keys() & {"mbit_s", "rtt_ms"} and given.get("preset", "custom") != "custom":
        raise fail("--rpc-link-mbit and --rpc-link-rtt-ms describe a custom link: give them with --rpc-link custom")
    if given.keys() & {"mbit_s", "rtt_ms"}:
        given["preset"] = "custom"
    try:
        return NetworkLink(**given).validated()
    except ValueError as exc:
        raise fail(english_error(exc)) from exc


def run_plan(args: argparse.Namespace, settings: LoadSettings) -> int:
    try:
        header = read_model_header(args.model)
    except GGUFError as exc:
        raise fail(english_error(exc)) from exc
    devices, source = resolve_devices(args)
    link = link_from_args(args)
    remote = remote_devices(settings.rpc_servers)
    if remote:
        # llama.cpp lists the RPC servers' devices before this machine's GPUs (src/llama.cpp).
        devices = remote + devices
        if len(devices) > MAX_DEVICES:
            raise fail(f"{len(devices)} devices with the RPC servers'; llama.cpp loads on at most {MAX_DEVICES}")
        devices_asked = f"{len(remote)} RPC device{'s' if len(remote) > 1 else ''} (asked)"
        source = f"{devices_asked}, then {source}; link: {english(link.words())}"
    split = settings.tensor_split_values
    if len(split) > max(len(devices), 1):
        # llama.cpp would read only the first proportions: a longer list here is a mistake in the command.
        raise fail(f"--tensor-split has {len(split)} proportions for {len(devices)} GPU(s)")
    if args.margin_mib < 0:
        raise fail(f"--margin-mib cannot be negative (got {args.margin_mib:g})")
    try:
        result = plan(header, settings, devices, margin_mib=args.margin_mib, ram_bandwidth_gbs=args.ram_gbs, link=link)
        host_read = result.host.weights_mib > 0 or result.verdict is not Verdict.FITS  # now, or as advised
        if host_read and args.ram_gbs is None:
            # Weights read from host memory, now or in the advice to fit (fewer layers, experts in RAM): their
            # decode ceiling needs its bandwidth, as the window's plan has it; measure it (~0.5 s).
            from gui.services.system import measure_ram_bandwidth_gbs

            ram = measure_ram_bandwidth_gbs()
            result = plan(header, settings, devices, margin_mib=args.margin_mib, ram_bandwidth_gbs=ram, link=link)
    except ValueError as exc:
        raise fail(english_error(exc)) from exc
    if args.json:
        data = plan_to_json(result)
        data["model"] = args.model
        data["devices_from"] = source
        json.dump(data, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_plan(result, args.model, source))
    return 0 if result.verdict is not Verdict.WONT_FIT else 1


def format_plan(result: Plan, model: str, source: str) -> str:
    lines = [f"{model}: {result.verdict} ({source})"]
    several = len(result.devices) > 1
    for i, d in enumerate(result.devices):
        name = d.name if d.remote else f"GPU {i} {d.name}" if several else d.name
        if not d.in_use:
            lines.append(f"  {name}: not used ({d.free_mib:,.0f} MiB free)")
            continue
        if several:
            held = (f"blocks {d.first_block}-{d.first_block + d.layers - 1}" if d.layers else "no blocks") + (
                " + output" if d.has_output else ""
            )
            name = f"{name} [{held}]"
        lines.append(
            f"  {name}: weights {d.weights_mib:,.0f} + KV {d.kv_mib:,.0f} + recurrent {d.recurrent_mib:,.0f} + "
            f"compute {d.compute_mib:,.0f} + staged {d.staged_mib:,.0f} + output {d.output_mib:,.0f} + "
            f"{'CUDA ' if not d.remote else 'context '}{d.overhead_mib:,.0f} = "
            f"{d.needed_mib:,.0f} MiB of {d.free_mib:,.0f} free ({d.free_after_mib:,.0f} left, margin "
            f"{d.margin_mib:,.0f}) — {d.verdict}"
        )
    h = result.host
    lines.append(
        f"  host: weights {h.weights_mib:,.0f} + KV {h.kv_mib:,.0f} + recurrent {h.recurrent_mib:,.0f} + "
        f"compute {h.compute_mib:,.0f} + output {h.output_mib:,.0f} = {h.total:,.0f} MiB"
    )
    lines.append(f"  layers on GPU: {result.layers_on_gpu} of {result.n_layer + 1}")
    if result.predicted_tg_tok_s:
        bound = "memory bandwidth bound" + (", with the network" if result.link_hops else "")
        lines.append(f"  decode ceiling: {result.predicted_tg_tok_s:.1f} tok/s ({bound})")
    if result.link_hops:
        lines.append(
            f"  network: {result.link_hops} hop{'s' if result.link_hops > 1 else ''} per token, "
            f"{result.link_ms_per_token:.2f} ms per token"
        )
    lines += [f"  note: {english(n)}" for n in result.notes]
    # Suggestions come when it does not fit, or when it fits with part of the model in host memory.
    lead = "to fit" if result.verdict is not Verdict.FITS else "more on the GPU"
    lines += [f"  {lead}: {english(s)}" for s in result.suggestions]
    return "\n".join(lines)
