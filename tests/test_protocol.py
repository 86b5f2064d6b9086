from __future__ import annotations

import pickle

import pytest

from gui.core import protocol as p
from gui.core.chat import Conversation, format_stats


def stats(**kw: object) -> p.ReplyStats:
    base: dict[str, object] = dict(
        n_prompt=100, n_prompt_evaluated=80, n_gen=51, ttft_ms=250.0, prompt_ms=200.0, gen_ms=1000.0,
        engine_decode_tok_s=52.0, finish_reason="stop",
    )  # fmt: skip
    base.update(kw)
    return p.ReplyStats(**base)  # type: ignore[arg-type]


def test_messages_survive_the_pipe_encoding() -> None:
    message = p.Generate(7, (p.ChatMessage("user", "héllo ✓"),), 32, p.Sampling(temperature=0.0))
    assert p.unwrap(pickle.loads(pickle.dumps(p.wrap(message)))) == message


def test_other_protocol_versions_are_refused_in_words() -> None:
    with pytest.raises(p.ProtocolError, match="protocol v99"):
        p.unwrap(p.Envelope(99, p.Unload()))
    with pytest.raises(p.ProtocolError, match="unexpected message"):
        p.unwrap(("not", "an envelope"))


def test_rates_count_computed_tokens_and_intervals() -> None:
    s = stats()
    assert s.prompt_tok_s == pytest.approx(400.0)  # 80 computed tokens in 0.2 s
    assert s.gen_tok_s == pytest.approx(50.0)  # 50 intervals in 1 s
    assert stats(n_gen=1, gen_ms=0.0).gen_tok_s == 0.0
    assert stats(prompt_ms=0.0).prompt_tok_s == 0.0


def test_stats_line_says_what_a_user_needs() -> None:
    line = format_stats(stats(finish_reason="cancelled"))
    assert "51 tokens" in line and "first token 250 ms" in line
    assert "generation 50.0 tok/s" in line and "80 of 100 computed" in line and "stopped" in line


def test_conversation_sends_system_prompt_and_partial_replies() -> None:
    conv = Conversation(system_prompt="Be brief.")
    conv.add_user("hi")
    reply = conv.start_reply()
    assert [m.role for m in conv.messages()] == ["system", "user"]  # empty reply not sent
    reply.text = "Hel"
    reply.note = "interrupted: the engine stopped"
    assert conv.messages()[-1] == p.ChatMessage("assistant", "Hel")
    assert conv.last is reply


def test_build_description_says_whether_gpu_offload_works() -> None:
    cpu = p.EngineBuild("CPU", False, "0.3.36", "")
    assert "no GPU offload" in cpu.describe() and "CPU build" in cpu.describe()
    assert "GPU offload supported" in p.EngineBuild("CUDA", True, "0.3.36", "").describe()
