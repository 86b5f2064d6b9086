"""Qt widgets and the adapters that turn service events into Qt signals."""
