"""Named sampling presets. The built-in ones are fixed; users add their own (stored by the settings store)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from gui.core.protocol import Sampling
from gui.core.specs import parse_fields

BUILTIN_PRESETS: Mapping[str, Sampling] = {
    "Balanced": Sampling(temperature=0.7, top_k=40, top_p=0.95, min_p=0.05, repeat_penalty=1.1),
    "Precise": Sampling(temperature=0.2, top_k=20, top_p=0.9, min_p=0.1, repeat_penalty=1.05),
    "Creative": Sampling(temperature=1.0, top_k=100, top_p=0.98, min_p=0.02, repeat_penalty=1.1),
    "Deterministic": Sampling(temperature=0.0, top_k=40, top_p=1.0, min_p=0.0, repeat_penalty=1.0, seed=0),
}
DEFAULT_PRESET = "Balanced"


def sampling_to_dict(sampling: Sampling) -> dict[str, Any]:
    return asdict(sampling)


def sampling_from_dict(data: Mapping[str, Any]) -> Sampling:
    """Build a Sampling from stored data; unknown keys are ignored, bad values raise ValueError."""
    return parse_fields(Sampling, data)
