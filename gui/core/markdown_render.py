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

__all__ = ["ALLOWED_SCHEMES", "render_markdown"]

ALLOWED_SCHEMES: tuple[str, ...] = ("http://", "https://", "mailto:")

# Highlighting is linear but not cheap (~1 MB/s); a block larger than this is shown plain so that
# re-rendering a huge reply never stalls the window.
MAX_HIGHLIGHT_CHARS = 200_000

_MONO = "font-family: monospace"


class _Theme:
    def __init__(self, style_name: str, inline_code_bg: str, quote_color: str) -> None:
        style = get_style_by_name(style_name)
        self.style_name = style_name
        self.code_bg = style.background_color or "#f6f8fa"
        # Plain text in a dark pygments style has no colour of its own; pick one that reads on its background.
        self.code_fg = _text_colour(style)
        self.inline_code_bg = inline_code_bg
        self.quote_color = quote_color


def _text_colour(style: Any) -> str:
    colour = style.style_for_token(Text).get("color")
    return f"#{colour}" if colour else "#1f2328"


_LIGHT = _Theme("default", "#eff1f3", "#57606a")
_DARK = _Theme("monokai", "#3a3d41", "#a0a8b0")


def render_markdown(text: str, *, dark: bool = False) -> str:
    """HTML for ``text``, safe to hand to ``QTextBrowser.setHtml``. Works on partial (streaming) text."""
    # Qt keeps whitespace after a closing </pre> as a trailing space inside the code block.
    return _RENDERERS[dark].render(text).rstrip("\n")


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


def _code_block(theme: _Theme, code: str, language: str) -> str:
    if len(code) <= _CACHE_BLOCKS_UP_TO:
        body = _highlight_cached(theme.style_name, language, code)
    else:
        body = _highlight(theme.style_name, language, code)
    # A trailing newline inside <pre> shows as an empty last line in Qt.
    body = body.removesuffix("\n")
    style = f"background-color: {theme.code_bg}; color: {theme.code_fg}; {_MONO}"
    return f'<pre style="{style}">{body}</pre>\n'


def _build(theme: _Theme) -> MarkdownIt:
    md = _SafeMarkdown("commonmark", {"html": False, "typographer": False}).enable(["table", "strikethrough"])

    def fence(self: Any, tokens: Sequence[Token], idx: int, options: OptionsDict, env: EnvType) -> str:
        token = tokens[idx]
        language = token.info.strip().split(maxsplit=1)[0] if token.info.strip() else ""
        return _code_block(theme, token.content, language)

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


_RENDERERS: dict[bool, MarkdownIt] = {False: _build(_LIGHT), True: _build(_DARK)}
