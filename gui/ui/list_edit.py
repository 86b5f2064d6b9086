"""What the editable lists of the window (RPC workers, GPU exporters) share."""

from __future__ import annotations

from PySide6.QtWidgets import QListWidget


def take_chosen(rows: QListWidget) -> bool:
    """Remove the chosen row (the only one when there is one and none is chosen); False when nothing was."""
    row = rows.currentRow()
    if row < 0 and rows.count() == 1:
        row = 0
    if row < 0:
        return False
    rows.takeItem(row)
    return True
