from __future__ import annotations

import ast
import dataclasses
import inspect
import pickle
from pathlib import Path
from types import ModuleType
from typing import get_args, get_type_hints

import pytest

from gui.core import protocol as p
from gui.core.chat import Conversation, format_stats
from gui.services import engine_client, engine_worker


def stats(**kw: object) -> p.ReplyStats:
    base: dict[str, object] = dict(
        n_prompt=100, n_prompt_evaluated=80, n_gen=51, ttft_ms=250.0, prompt_ms=200.0, gen_ms=1000.0,
        engine_decode_tok_s=52.0, finish_reason="stop",
    )  # fmt: skip
    base.update(kw)
    return p.ReplyStats(**base)


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


# ---- the unions are complete: read from the worker's and the client's own code ------------------------------


def _module_tree(module: ModuleType) -> ast.Module:
    return ast.parse(Path(inspect.getfile(module)).read_text(encoding="utf-8"))


def _protocol_class(node: ast.expr) -> type | None:
    """The protocol class ``node`` names (``p.Token``), or None when it names something else."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "p":
        found = getattr(p, node.attr, None)
        return found if isinstance(found, type) else None
    return None


def _annotated_classes(annotation: ast.expr | None) -> set[type]:
    """The protocol classes of an annotation such as ``p.GenerateFailed | None``."""
    return {cls for node in ast.walk(annotation) if (cls := _protocol_class(node))} if annotation else set()


def _sent_classes(tree: ast.Module) -> tuple[dict[int, set[type]], list[int]]:
    """For every ``send(...)`` call of the worker's (``self.send``, ``engine.send``), by line, the protocol classes
    its argument can be: a class constructed there, the return annotation of the method called there, or the
    annotation of the parameter passed there. The lines where it cannot be told are returned apart."""
    returns = {f.name: f.returns for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)}
    sent: dict[int, set[type]] = {}
    unknown: list[int] = []
    for function in (f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)):
        params = {a.arg: a.annotation for a in (*function.args.args, *function.args.kwonlyargs)}
        for call in (c for c in ast.walk(function) if isinstance(c, ast.Call)):
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr == "send"):
                continue
            if not (isinstance(func.value, ast.Name) and func.value.id in {"self", "engine"}):
                continue  # the writer thread's pipe send: what it sends came through send() itself
            (arg,) = call.args
            classes: set[type] = set()
            if isinstance(arg, ast.Call) and (cls := _protocol_class(arg.func)):
                classes = {cls}
            elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Attribute) and arg.func.attr in returns:
                classes = _annotated_classes(returns[arg.func.attr])
            elif isinstance(arg, ast.Name) and arg.id in params:
                classes = _annotated_classes(params[arg.id])
            if classes:
                sent.setdefault(call.lineno, set()).update(classes)
            else:
                unknown.append(call.lineno)
    return sent, unknown


def test_every_event_the_worker_sends_is_in_the_event_union() -> None:
    sent, unknown = _sent_classes(_module_tree(engine_worker))
    assert not unknown, f"engine_worker.py sends something of no protocol type at lines {unknown}"
    assert len(sent) > 20  # the worker's sends were found: loads, replies, benchmarks, answers
    outside = {
        f"line {line}: {cls.__name__}" for line, classes in sent.items() for cls in classes if cls not in p.EVENTS
    }
    assert not outside, f"sent by the worker but not in protocol.Event: {sorted(outside)}"
    # The typed seam agrees: what send() takes is the union itself.
    assert get_type_hints(engine_worker.Engine.send)["message"] == p.Event


def test_every_command_the_client_sends_is_in_the_command_union_and_handled_by_the_worker() -> None:
    tree = _module_tree(engine_client)
    sent = {
        cls
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "_send"
        for cls in [_protocol_class(call.args[0].func) if isinstance(call.args[0], ast.Call) else None]
        if cls is not None
    }
    assert len(sent) >= 6 and set(sent) <= set(p.COMMANDS), sent
    # Every command is one the worker looks for (isinstance checks in its reader, command loop and dispatch).
    looked_for = {
        cls
        for call in ast.walk(_module_tree(engine_worker))
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "isinstance"
        for node in ast.walk(call.args[1])
        if (cls := _protocol_class(node))
    }
    assert set(p.COMMANDS) <= looked_for, set(p.COMMANDS) - looked_for


def test_every_message_class_is_in_a_union_or_carried_by_one() -> None:
    """A dataclass of the protocol is a command, an event, or a value one of them carries (a reply's stats, a
    message of the conversation): none is left out of the unions the client and the worker take."""
    carried: set[type] = set()
    todo = [*p.COMMANDS, *p.EVENTS]
    while todo:
        for hint in get_type_hints(todo.pop()).values():
            for cls in _classes_in(hint):
                if cls not in carried and dataclasses.is_dataclass(cls):
                    carried.add(cls)
                    todo.append(cls)
    declared = {
        cls
        for cls in vars(p).values()
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == p.__name__
    }
    left_out = declared - set(p.COMMANDS) - set(p.EVENTS) - carried - {p.Envelope}
    assert not left_out, sorted(cls.__name__ for cls in left_out)
    assert not set(p.COMMANDS) & set(p.EVENTS)


def _classes_in(hint: object) -> list[type]:
    return [hint] if isinstance(hint, type) else [c for arg in get_args(hint) for c in _classes_in(arg)]


def test_a_message_outside_the_unions_is_refused() -> None:
    event, command = p.Unloaded(), p.Unload()
    assert p.unwrap_event(p.wrap(event)) == event and p.unwrap_command(p.wrap(command)) == command
    with pytest.raises(p.ProtocolError, match="not an engine event: Unload"):
        p.unwrap_event(p.wrap(command))
    with pytest.raises(p.ProtocolError, match="not an engine command: Unloaded"):
        p.unwrap_command(p.wrap(event))
    with pytest.raises(p.ProtocolError, match="not an engine event: ChatMessage"):
        p.unwrap_event(p.Envelope(p.PROTOCOL_VERSION, p.ChatMessage("user", "hi")))
