"""Markdown replies as HTML for Qt's rich text (QTextBrowser / QTextDocument).

Qt understands a subset of HTML 4 with inline ``style`` attributes only: no classes, no style sheets
inside the document. So code blocks are highlighted by pygments with inline colours, and every other
element is one Qt knows (p, em, strong, code, pre, h1-h6, ul/ol/li, blockquote, a, table, hr, s).

The text comes from a model, which may echo anything it was shown: raw HTML is always escaped, and
links survive only with a web or mail scheme (a ``javascript:`` or ``file:`` link, or a relative one
the browser widget would try to follow, stays as plain text).

Parsing is CommonMark (markdown-it-py), which also keeps a reply readable while it streams: an
unterminated ``` fence runs to the end of the text, so code shows as code as it arrives.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from html import escape
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import Text
from pygments.util import ClassNotFound

from gui.core.theme import DARK, LIGHT, CodeColours, Palette, luminance

__all__ = ["ALLOWED_SCHEMES", "plain_blocks", "render_markdown", "render_markdown_blocks", "settled_length"]

ALLOWED_SCHEMES: tuple[str, ...] = ("http://", "https://", "mailto:")

# Highlighting is linear but not cheap (~1 MB/s); a block larger than this is shown plain so that
# re-rendering a huge reply never stalls the window.
MAX_HIGHLIGHT_CHARS = 200_000

_MONO = "font-family: monospace"


class _Theme:
    def __init__(self, colours: CodeColours) -> None:
        style = get_style_by_name(colours.style)
        self.style_name = colours.style
        self.code_bg = style.background_color or "#f6f8fa"
        # Plain text in a dark pygments style has no colour of its own; pick one that reads on its background.
        self.code_fg = _text_colour(style)
        self.inline_code_bg = colours.inline_background
        self.quote_color = colours.quote


def _text_colour(style: Any) -> str:
    colour = style.style_for_token(Text).get("color")
    if colour:
        return f"#{colour}"
    return "#e6edf3" if luminance(style.background_color or "#ffffff") < 0.2 else "#1f2328"


@lru_cache(maxsize=8)
def _renderer(colours: CodeColours) -> tuple[MarkdownIt, _Theme]:
    theme = _Theme(colours)
    return _build(theme), theme


def render_markdown(text: str, *, dark: bool = False, palette: Palette | None = None) -> str:
    """HTML for ``text``, safe to hand to ``QTextBrowser.setHtml``. Works on partial (streaming) text.

    Code is coloured for ``palette`` (gui.core.theme), or for the light or dark one as ``dark`` says."""
    return "\n".join(render_markdown_blocks(text, dark=dark, palette=palette))


def render_markdown_blocks(text: str, *, dark: bool = False, palette: Palette | None = None) -> tuple[str, ...]:
    """The HTML of :func:`render_markdown` in pieces a text view lays out in a few milliseconds each: one
    per top-level block (paragraph, list, table…), long code blocks cut into runs of lines, and a
    paragraph too long to lay out at once (a reply that never breaks a line) cut into plain-text runs."""
    md, theme = _renderer((palette or (DARK if dark else LIGHT)).code)
    env: EnvType = {}
    tokens = md.parse(text, env)
    pieces: list[str] = []
    start = 0
    for i, token in enumerate(tokens):
        if token.level != 0 or token.nesting > 0:
            continue
        group = tokens[start : i + 1]  # one top-level block
        start = i + 1
        if len(group) == 1 and group[0].type in ("fence", "code_block"):
            pieces += _code_pieces(theme, group[0].content, _language(group[0]))
        elif group[0].type == "paragraph_open" and len(group[1].content) > MAX_PARAGRAPH_CHARS:
            pieces += plain_blocks(group[1].content)
        else:
            # Qt keeps whitespace after a closing </pre> as a trailing space inside the code block.
            pieces.append(md.renderer.render(group, md.options, env).rstrip("\n"))
    return tuple(piece for piece in pieces if piece)


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def settled_length(text: str, start: int = 0) -> int:
    """How much of a reply being written is settled: everything up to the last blank line outside a code
    block, from ``start`` (itself such a point). A streaming view renders that part once and only the
    block still being written again; the finished reply is rendered whole."""
    settled = start
    fence = ""
    position = start
    for line in text[start:].splitlines(keepends=True):
        position += len(line)
        if not line.endswith("\n"):
            break  # the last line is still being written
        if fence:
            if line.strip().startswith(fence):
                fence = ""
        elif match := _FENCE.match(line):
            fence = match.group(1)[0] * 3
        elif not line.strip():
            settled = position
    return settled


# A paragraph past this many characters is shown as plain text, cut into runs a view lays out quickly.
MAX_PARAGRAPH_CHARS = 16_000
# Lines of code per piece: a few milliseconds of layout each, however long the block.
CODE_LINES_PER_PIECE = 200


def _language(token: Token) -> str:
    return token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""


def plain_blocks(text: str, run: int = 4_000) -> tuple[str, ...]:
    """Text shown as written (no markdown): a piece per paragraph, line breaks kept, and a paragraph
    longer than ``run`` characters cut into runs (at spaces where there are any) that read as one."""
    pieces = []
    for paragraph in text.split("\n\n") if text else [""]:
        rest, first = paragraph, True
        while rest or first:
            cut = len(rest) if len(rest) <= run else (rest.rfind(" ", 0, run) + 1 or run)
            margins = "margin-top:0" if first else "margin-top:0; margin-bottom:0"
            pieces.append(f'<p style="{margins}">' + escape(rest[:cut], quote=False).replace("\n", "<br>") + "</p>")
            rest, first = rest[cut:], False
    return tuple(pieces)


# ---- rendering rules --------------------------------------------------------------------------


class _SafeMarkdown(MarkdownIt):
    def validateLink(self, url: str) -> bool:  # markdown-it's hook name
        return url.strip().lower().startswith(ALLOWED_SCHEMES)


@lru_cache(maxsize=64)
def _lexer(language: str) -> Lexer | None:
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


@lru_cache(maxsize=4)
def _formatter(style_name: str) -> HtmlFormatter[str]:
    # nowrap: only the coloured spans; the <pre> around them is ours, with the theme's background.
    return HtmlFormatter(noclasses=True, nowrap=True, style=style_name)


def _highlight(style_name: str, language: str, code: str) -> str:
    lexer = _lexer(language.lower()) if language else None
    if lexer is None or len(code) > MAX_HIGHLIGHT_CHARS:
        return escape(code, quote=False)
    return highlight(code, lexer, _formatter(style_name))


# While a reply streams the whole text is re-rendered every frame, and re-rendered again when it
# finishes; remembering finished blocks makes those re-renders cost only the markdown parse.
_highlight_cached = lru_cache(maxsize=256)(_highlight)
_CACHE_BLOCKS_UP_TO = 16_000  # characters; bigger blocks are rare and would pin memory in the cache


def _code_pieces(theme: _Theme, code: str, language: str) -> list[str]:
    """A highlighted code block as ``<pre>`` runs of lines that read as one block (no margins between)."""
    if len(code) <= _CACHE_BLOCKS_UP_TO:
        body = _highlight_cached(theme.style_name, language, code)
    else:
        body = _highlight(theme.style_name, language, code)
    # A trailing newline inside <pre> shows as an empty last line in Qt. The formatter closes every span
    # at the end of its line, so the lines can be cut apart.
    lines = body.removesuffix("\n").split("\n")
    runs = [lines[i : i + CODE_LINES_PER_PIECE] for i in range(0, len(lines), CODE_LINES_PER_PIECE)] or [[]]
    base = f"background-color: {theme.code_bg}; color: {theme.code_fg}; {_MONO}"
    pieces = []
    for n, run in enumerate(runs):
        margins = ("; margin-top:0" if n > 0 else "") + ("; margin-bottom:0" if n < len(runs) - 1 else "")
        pieces.append(f'<pre style="{base}{margins}">' + "\n".join(run) + "</pre>")
    return pieces


def _code_block(theme: _Theme, code: str, language: str) -> str:
    return "\n".join(_code_pieces(theme, code, language)) + "\n"


def _build(theme: _Theme) -> MarkdownIt:
    md = _SafeMarkdown("commonmark", {"html": False, "typographer": False}).enable(["table", "strikethrough"])

    def fence(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return _code_block(theme, tokens[idx].content, _language(tokens[idx]))

    def code_block(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return _code_block(theme, tokens[idx].content, "")

    def code_inline(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        content = escape(tokens[idx].content, quote=False)
        return f'<code style="background-color: {theme.inline_code_bg}; {_MONO}">{content}</code>'

    def image(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        # A chat pane does not fetch remote images; show the description, linked to the picture.
        token = tokens[idx]
        alt = escape(self.renderInlineAsText(token.children or [], options, env) or "image", quote=False)
        src = str(token.attrs.get("src", ""))
        return f'<a href="{escape(src)}">[{alt}]</a>' if src else f"[{alt}]"

    def table_open(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return '<table border="1" cellspacing="0" cellpadding="4">\n'

    def blockquote_open(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        return f'<blockquote style="color: {theme.quote_color}">\n'

    for name, rule in (
        ("fence", fence),
        ("code_block", code_block),
        ("code_inline", code_inline),
        ("image", image),
        ("table_open", table_open),
        ("blockquote_open", blockquote_open),
    ):
        md.add_render_rule(name, rule)
    return md
