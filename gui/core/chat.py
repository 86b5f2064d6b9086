"""A conversation as the chat pane shows it and the engine receives it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from gui.core.protocol import ChatMessage, ReplyStats
from gui.core.words import Text, joined, words


@dataclass
class Turn:
    role: str  # "user" or "assistant"
    text: str = ""
    stats: ReplyStats | None = None
    note: str = ""  # e.g. "interrupted: the engine stopped", "stopped by you"
    model_file: str = ""  # the GGUF that wrote an assistant turn (file name), for the history
    settings: dict | None = None  # LoadSettings.to_dict() the reply was generated with
    sampling: dict | None = None  # Sampling fields the reply was generated with
    # Which turn this is, for the history: two windows (or a script) writing one conversation add and
    # remove turns by it, never by position. Not content, so equal turns compare equal whatever it is.
    uid: str = field(default_factory=lambda: uuid.uuid4().hex, compare=False, repr=False)


@dataclass
class Conversation:
    system_prompt: str = ""
    turns: list[Turn] = field(default_factory=list)

    def add_user(self, text: str) -> Turn:
        turn = Turn("user", text)
        self.turns.append(turn)
        return turn

    def start_reply(self) -> Turn:
        turn = Turn("assistant")
        self.turns.append(turn)
        return turn

    @property
    def last(self) -> Turn | None:
        return self.turns[-1] if self.turns else None

    def messages(self) -> tuple[ChatMessage, ...]:
        """What the model sees: the system prompt and every turn with text.

        An interrupted reply stays in the transcript and is sent as written so far, so the model
        continues from what the user saw.
        """
        system = self.system_prompt.strip()  # stray spaces, tabs or blank lines are never sent
        out = [ChatMessage("system", system)] if system else []
        out.extend(ChatMessage(t.role, t.text) for t in self.turns if t.text)
        return tuple(out)


def format_stats(stats: ReplyStats) -> Text:
    """One line of per-reply figures, the way the chat pane and the CLI print them (a sentence the window
    shows in its language: gui/core/words.py)."""
    parts: list[Text] = [words("{n} tokens", n=stats.n_gen)]
    if stats.n_gen:  # a reply stopped before its first token has no first-token time
        parts.append(words("first token {ms} ms", ms=f"{stats.ttft_ms:.0f}"))
    parts.append(
        words(
            "prompt {rate} tok/s ({evaluated} of {total} computed)",
            rate=f"{stats.prompt_tok_s:.1f}",
            evaluated=stats.n_prompt_evaluated,
            total=stats.n_prompt,
        )
    )
    if stats.n_gen > 1:
        parts.append(words("generation {rate} tok/s", rate=f"{stats.gen_tok_s:.1f}"))
    if stats.finish_reason not in ("stop",):
        ended: dict[str, Text] = {
            "length": words("hit max tokens"),
            "context": words("context full"),
            "cancelled": words("stopped"),
        }
        parts.append(ended.get(stats.finish_reason, stats.finish_reason))
    return joined(" · ", parts)
