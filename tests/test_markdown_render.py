"""Model replies as HTML that Qt's rich text shows safely."""

from __future__ import annotations

import re

import pytest

from gui.core import markdown_render
from gui.core.markdown_render import render_markdown


def hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]*)"', html)


def test_raw_html_is_escaped_everywhere():
    html = render_markdown(
        "Hi <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n"
        "<div onclick='x()'>block</div>\n\n"
        "`<b>code</b>`\n\n```html\n<script>bad()</script>\n```\n"
    )
    assert "<script" not in html and "<img" not in html and "<div" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;div onclick=" in html


def test_basic_markdown_elements_qt_understands():
    html = render_markdown(
        "# Title\n\nSome *em*, **strong** and ~~gone~~.\n\n- one\n- two\n\n1. first\n\n> quoted\n\n---\n"
    )
    for tag in ("<h1>", "<em>em</em>", "<strong>strong</strong>", "<s>gone</s>", "<ul>", "<ol>", "<blockquote", "<hr"):
        assert tag in html


def test_no_css_classes_only_inline_styles():
    html = render_markdown("`x`\n\n```python\nprint('hi')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert "class=" not in html
    assert '<code style="' in html
    assert '<table border="1"' in html


def test_code_fence_is_highlighted_with_inline_colours():
    html = render_markdown("```python\ndef f(x):\n    return x + 1  # add\n```\n")
    pre = re.search(r"<pre style=\"([^\"]*)\">(.*)</pre>", html, re.S)
    assert pre is not None
    assert "background-color: #" in pre.group(1)
    body = pre.group(2)
    assert re.search(r'<span style="[^"]*color: #[0-9a-fA-F]{3,6}[^"]*">def</span>', body)
    assert "add</span>" in body  # the comment is its own coloured span
    assert not body.endswith("\n")


def test_dark_theme_uses_other_colours():
    light = render_markdown("```python\nx = 1\n```")
    dark = render_markdown("```python\nx = 1\n```", dark=True)
    assert light != dark
    assert "background-color: #272822" in dark


@pytest.mark.parametrize("fence", ["```", "```nosuchlanguage", "```   "])
def test_unknown_or_missing_language_is_plain_monospace(fence: str):
    html = render_markdown(f"{fence}\nif a < b: pass\n```")
    assert "<pre style=" in html and "monospace" in html
    assert "<span" not in html
    assert "if a &lt; b: pass" in html


def test_streaming_unterminated_fence_renders_as_code_so_far():
    partial = "Here is the function:\n\n```python\ndef area(r):\n    return 3.14 * r"
    html = render_markdown(partial)
    assert "<p>Here is the function:</p>" in html
    assert "```" not in html
    code = html.split("<pre", 1)[1]
    assert ">def</span>" in code and "3.14" in code
    # Each prefix of a reply renders without error, as the pane re-renders while tokens arrive.
    reply = "# T\n\nA [link](https://x.org) and `co" + "de`.\n\n```js\nlet x = 1;\n```\n\n| a |\n|---|\n| 1 |\n"
    for end in range(len(reply) + 1):
        render_markdown(reply[:end])


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
        "file:///etc/passwd",
        "relative/page.html",
        "//evil.example/x",
    ],
)
def test_links_with_unsafe_or_relative_targets_stay_text(url: str):
    html = render_markdown(f"[click]({url}) and <{url}>")
    assert hrefs(html) == []
    assert "click" in html


def test_safe_links_keep_text_and_href():
    html = render_markdown("[docs](https://example.com/a?b=1&c=2) <mailto:me@example.com> [web](http://x.org)")
    assert hrefs(html) == ["https://example.com/a?b=1&amp;c=2", "mailto:me@example.com", "http://x.org"]
    assert ">docs</a>" in html


def test_images_become_links_not_fetches():
    html = render_markdown("![a chart](https://example.com/c.png) ![x](javascript:alert(1))")
    assert "<img" not in html
    assert '<a href="https://example.com/c.png">[a chart]</a>' in html
    assert hrefs(html) == ["https://example.com/c.png"]


def test_re_rendering_a_reply_highlights_its_code_blocks_once():
    # A streaming reply is re-rendered every frame and once more when it ends: its finished code blocks
    # come from the cache, so a re-render costs the markdown parse only (bench/render_speed.py times it).
    text = "Two blocks:\n\n```python\ndef f():\n    return 1\n```\n\nand\n\n```python\nx = 2\n```\n"
    markdown_render._highlight_cached.cache_clear()
    first = render_markdown(text)
    assert markdown_render._highlight_cached.cache_info().misses == 2
    assert render_markdown(text) == first
    info = markdown_render._highlight_cached.cache_info()
    assert (info.misses, info.hits) == (2, 2)


def test_qt_rich_text_understands_the_output(qapp):
    # The real consumer: Qt's HTML subset keeps the colours, the code font and the links.
    from PySide6.QtGui import QTextDocument

    doc = QTextDocument()
    doc.setHtml(render_markdown("See [docs](https://example.com).\n\n```python\ndef f():\n    pass\n```\n"))
    fragments = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fragments.append((fragment.text(), fragment.charFormat()))
            it += 1
        block = block.next()
    by_text = {text.strip(): fmt for text, fmt in fragments if text.strip()}
    assert by_text["docs"].anchorHref() == "https://example.com"
    keyword = by_text["def"]
    assert keyword.foreground().color().name() == "#008000"
    assert keyword.fontFixedPitch() or "monospace" in keyword.fontFamilies()
    assert doc.toPlainText().endswith("def f():\n    pass")


def test_settled_length_stops_at_the_block_still_being_written() -> None:
    from gui.core.markdown_render import settled_length

    text = "one\n\n```py\nx = 1\n\ny = 2\n```\n\ntwo, still"
    assert text[: settled_length(text)] == "one\n\n```py\nx = 1\n\ny = 2\n```\n\n"
    open_fence = "a\n\n```\ncode\n\nmore code"
    assert open_fence[: settled_length(open_fence)] == "a\n\n"  # a blank line inside open code is not an end
    assert settled_length("no break yet") == 0
    assert settled_length(text, settled_length(text)) == settled_length(text)  # resumes from where it was
