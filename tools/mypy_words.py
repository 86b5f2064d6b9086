"""A mypy plugin: a translatable sentence (gui/core/words.py ``Words``) made plain text is an error.

A ``Words`` formatted into an f-string or ``str.format`` (mypy reads an f-string as a ``str.format`` call),
passed to ``str()``, or ``%``-formatted becomes its English, and the window would show it in English whatever
its language. An error is refused the same way, since it may have been raised with a sentence: the window
shows it with ``error_text(exc)``, a sentence composes it with ``message_of(exc)``, and the CLI, a log or a
file say ``english_error(exc)``. Registered in pyproject.toml (``[tool.mypy] plugins``);
tests/test_mypy_words.py shows each case.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from mypy.errorcodes import ErrorCode
from mypy.nodes import Block, CallExpr, Expression, MemberExpr, MypyFile, Node, OpExpr, Statement, StrExpr
from mypy.plugin import FunctionContext, MethodContext, Plugin
from mypy.types import Instance, TupleType, Type, UnionType, get_proper_type

WORDS = "gui.core.words.Words"
MESSAGE = (
    "a translatable sentence (Words) formatted into plain text loses its translation: "
    "compose with words(...) or render .english where plain text is meant"
)

ERROR_MESSAGE = (
    "an error formatted into plain text loses the translation of the sentence it was raised with: "
    "error_text(exc) in the window, message_of(exc) to compose, english_error(exc) where plain text is meant"
)

CODE = ErrorCode("words-as-text", "A translatable sentence made plain text", "General")


def _made_plain(typ: Type) -> str | None:
    """The message for a value that may be a sentence (a ``Words``, or an error, which may carry one)."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance):
        if proper.type.fullname == WORDS:
            return MESSAGE
        return ERROR_MESSAGE if proper.type.has_base("builtins.BaseException") else None
    if isinstance(proper, UnionType):
        return next((said for item in proper.items if (said := _made_plain(item))), None)
    return None


def _operands(typ: Type) -> Iterable[Type]:
    """A ``%`` operand: one value, or a tuple of them."""
    proper = get_proper_type(typ)
    return proper.items if isinstance(proper, TupleType) else (typ,)


def _arguments(types: Iterable[Iterable[Type]]) -> Iterable[Type]:
    for group in types:
        yield from group


def _refuse(ctx: MethodContext | FunctionContext, types: Iterable[Type]) -> Type:
    said = next((said for t in types if (said := _made_plain(t))), None)
    if said is not None:
        ctx.api.fail(said, ctx.context, code=CODE)
    return ctx.default_return_type


def _format(ctx: MethodContext) -> Type:
    return _refuse(ctx, _arguments(ctx.arg_types))


def _modulo(ctx: MethodContext) -> Type:
    return _refuse(ctx, (item for t in _arguments(ctx.arg_types) for item in _operands(t)))


def _str(ctx: FunctionContext) -> Type:
    return _refuse(ctx, _arguments(ctx.arg_types))


def _children(node: object, names: dict[type, tuple[str, ...]]) -> Iterator[Node]:
    kind = type(node)
    if kind not in names:
        names[kind] = tuple(a for a in dir(kind) if not a.startswith("_") and not callable(getattr(kind, a, None)))
    for name in names[kind]:
        try:
            value = getattr(node, name, None)
        except Exception:  # a property that asserts what a parsed tree does not have yet
            continue
        for item in value if isinstance(value, list | tuple) else (value,):
            if isinstance(item, Expression | Statement | Block):
                yield item


def _read_literal_modulo(file: MypyFile) -> None:
    """mypy checks ``"literal" % values`` itself, with no hook: the literal is read as ``"literal".__str__()``
    so that the ``str.__mod__`` hook sees the values (ruff's F50x rules still check the placeholders)."""
    names: dict[type, tuple[str, ...]] = {}
    seen: set[int] = set()
    todo: list[Node] = list(file.defs)
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, OpExpr) and node.op == "%" and isinstance(node.left, StrExpr):
            literal = node.left
            callee = MemberExpr(literal, "__str__")
            callee.set_line(literal)
            call = CallExpr(callee, [], [], [])
            call.set_line(literal)
            node.left = call
        todo.extend(_children(node, names))


class WordsPlugin(Plugin):
    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        if not file.is_stub:
            _read_literal_modulo(file)
        return []

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        if fullname == "builtins.str.format":
            return _format
        if fullname == "builtins.str.__mod__":
            return _modulo
        return None

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        return _str if fullname == "builtins.str" else None


def plugin(version: str) -> type[Plugin]:
    return WordsPlugin
