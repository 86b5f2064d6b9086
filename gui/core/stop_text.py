"""Ending a reply at a piece of text, such as a chat format's end-of-turn marker.

llama.cpp ends a reply at an end-of-generation token, but a model can also write the marker as ordinary
text, a few tokens long ("<", "|", "im", "_", "end", "|", ">"). Tokens arrive one at a time and a
marker may be split across several of them, so text that could still become a marker is held back: the
reader never sees half of one, and the held text is let go as soon as the next token shows it is not a
marker. What one token costs is bounded by its own length and the markers', never by the reply's.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["StopText"]


class StopText:
    """Feed it each token's text; it returns what may be shown now, and says once a stop text was written."""

    def __init__(self, stops: Iterable[str]) -> None:
        self.stops = tuple(dict.fromkeys(s for s in stops if s))
        self._longest = max(map(len, self.stops), default=0)
        self._held = ""  # the end of the text so far that begins a stop text; never as long as one
        self.stopped = False

    @property
    def held(self) -> str:
        return self._held

    def feed(self, text: str) -> str:
        """The text that can be shown after this piece. Once a stop text is complete, what came before it
        is the last text returned, ``stopped`` is set, and nothing is returned after it."""
        if self.stopped:
            return ""
        if not self.stops:
            return text
        pending = self._held + text
        # Everything before `pending` was shown and holds no beginning of a stop text, so a stop text, if
        # there is one now, lies in `pending`: the held part is shorter than any stop text.
        found = [i for i in (pending.find(stop) for stop in self.stops) if i >= 0]
        if found:
            self.stopped = True
            self._held = ""
            return pending[: min(found)]
        keep = self._beginning(pending)
        self._held = pending[len(pending) - keep :]
        return pending[: len(pending) - keep]

    def flush(self) -> str:
        """The reply ended some other way: the held text was not a marker after all."""
        held, self._held = self._held, ""
        return held

    def _beginning(self, text: str) -> int:
        """The length of the longest end of ``text`` that begins a stop text (shorter than the stop text)."""
        for n in range(min(len(text), self._longest - 1), 0, -1):
            tail = text[-n:]
            if any(stop.startswith(tail) for stop in self.stops):
                return n
        return 0
