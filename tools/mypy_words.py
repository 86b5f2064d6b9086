"""A mypy plugin: a translatable sentence (gui/core/words.py ``Words``) made plain text is an error.

A ``Words`` formatted into an f-string or ``str.format`` (mypy reads an f-string as a ``str.format`` call),
passed to ``str()``, or ``%``-formatted becomes its English, and the window would show it in English whatever
its language. Registered in pyproject.toml (``[tool.mypy] plugins``); tests/test_mypy_words.py shows each case.
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


CODE = ErrorCode("words-as-text", "A translatable sentence made plain text", "General")


def _has_words(typ: Type) -> bool:
    proper = get_proper_type(typ)
    if isinstance(proper, Instance):
        return proper.type.fullname == WORDS
    if isinstance(proper, UnionType):
        return any(_has_words(item) for item in proper.items)
    return False


def _in_tuple(typ: Type) -> bool:
    """A ``%`` operand: one value, or a tuple of them."""
    proper = get_proper_type(typ)
    if isinstance(proper, TupleType):
        return any(_has_words(item) for item in proper.items)
    return _has_words(typ)


def _arguments(types: Iterable[Iterable[Type]]) -> Iterable[Type]:
    for group in types:
        yield from group


def _format(ctx: MethodContext) -> Type:
    if any(_has_words(t) for t in _arguments(ctx.arg_types)):
        ctx.api.fail(MESSAGE, ctx.context, code=CODE)
    return ctx.default_return_type


def _modulo(ctx: MethodContext) -> Type:
    if any(_in_tuple(t) for t in _arguments(ctx.arg_types)):
        ctx.api.fail(MESSAGE, ctx.context, code=CODE)
    return ctx.default_return_type


def _str(ctx: FunctionContext) -> Type:
    if any(_has_words(t) for t in _arguments(ctx.arg_types)):
        ctx.api.fail(MESSAGE, ctx.context, code=CODE)
    return ctx.default_return_type


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
