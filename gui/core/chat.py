"""A conversation as the chat pane shows it and the engine receives it."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from gui.core.protocol import ChatMessage, ReplyStats


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


def format_stats(stats: ReplyStats) -> str:
    """One line of per-reply figures, the way the chat pane and the CLI print them."""
    parts = [f"{stats.n_gen} tokens"]
    if stats.n_gen:  # a reply stopped before its first token has no first-token time
        parts.append(f"first token {stats.ttft_ms:.0f} ms")
    parts.append(f"prompt {stats.prompt_tok_s:.1f} tok/s ({stats.n_prompt_evaluated} of {stats.n_prompt} computed)")
    if stats.n_gen > 1:
        parts.append(f"generation {stats.gen_tok_s:.1f} tok/s")
    if stats.finish_reason not in ("stop",):
        parts.append(
            {"length": "hit max tokens", "context": "context full", "cancelled": "stopped"}.get(
                stats.finish_reason, stats.finish_reason
            )
        )
    return " · ".join(parts)
