"""What holds the engine, said in the window's words (gui/core/engine_use.py decides who waits for whom)."""

from __future__ import annotations

from gui.core.engine_use import Use
from gui.ui.i18n import Tr

tr = Tr("engine_use")


def engine_use_words(use: Use) -> str:
    """Why another use must wait, as a sentence that names where to stop it."""
    if use is Use.BENCH:
        return tr("A benchmark sweep is using the engine (Tune tab)")
    if use is Use.POWER:
        return tr("A power-cap sweep is using the engine (Tune tab, Power caps)")
    if use is Use.API:
        return tr("An API request is being answered (Serve tab)")
    return tr("The engine is busy (a reply or a load)")
