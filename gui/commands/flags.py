"""Load-settings flags shared by every command, generated from gui.core.params."""

from __future__ import annotations

import argparse
from typing import Any

from gui.core.params import CACHE_TYPES, FLASH_ATTN_MODES, SIZING_PARAMS, LoadSettings, default_settings


def add_sizing_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("load settings")
    for spec in SIZING_PARAMS:
        group.add_argument(
            spec.flag, dest=spec.key, type=int, default=None, metavar="N",
            help=f"{spec.help} [{spec.minimum}-{spec.maximum}]",
        )  # fmt: skip
    group.add_argument("--flash-attn", choices=FLASH_ATTN_MODES, default=None, help="flash attention")
    group.add_argument("--cache-type-k", choices=CACHE_TYPES, default=None, metavar="T", help="K cache type")
    group.add_argument("--cache-type-v", choices=CACHE_TYPES, default=None, metavar="T", help="V cache type")
    group.add_argument("--swa-full", action="store_true", default=None, help="full-size sliding-window cache")
    group.add_argument("--no-mmap", dest="use_mmap", action="store_false", default=None,
                       help="read the file into RAM instead of memory-mapping it")  # fmt: skip


def settings_from_args(args: argparse.Namespace) -> LoadSettings:
    from gui.services.system import physical_cores

    values: dict[str, Any] = {}
    for key in [s.key for s in SIZING_PARAMS] + ["flash_attn", "use_mmap", "cache_type_k", "cache_type_v", "swa_full"]:
        if getattr(args, key, None) is not None:
            values[key] = getattr(args, key)
    return default_settings(physical_cores()).with_values(**values).validated()
