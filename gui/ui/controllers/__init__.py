"""One controller per feature of the window: what it holds, what it decides, and which views it drives.

The composition root (gui/ui/compose.py) builds every view and every controller once and hands each controller
the views and services it needs; the window (gui/ui/main_window.py) only lays the views out. The rules that need
no Qt live beside them in gui/core (LoadState, PlanningContext, EngineUse), tested without a window.
docs/architecture.md shows which controller drives which view.
"""
