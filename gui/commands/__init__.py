"""Sub-commands of the CLI, built on the same services as the window (no Qt)."""
