"""The type checker's plugin (tools/mypy_words.py): a translatable sentence made plain text is an error —
formatted into an f-string or ``str.format``, passed to ``str()``, or ``%``-formatted — and plain text is not."""

from __future__ import annotations

import gc
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api")


@pytest.fixture(autouse=True)
def collector_as_it_was() -> Iterator[None]:
    """mypy raises the collector's threshold for its run (gc.set_threshold(200000)) and enables the collector when
    it is done: the tests after these, in the same process, find it as the suite keeps it (tests/conftest.py:
    disabled, so that it never runs on a worker thread and deadlocks destroying a Qt object there)."""
    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*thresholds)
    if not enabled:
        gc.disable()


ROOT = Path(__file__).resolve().parents[1]
MESSAGE = "a translatable sentence (Words) formatted into plain text loses its translation"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the module's runs: the project's modules are read once, each snippet on its own."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture
def check(tmp_path: Path, cache: Path):
    return lambda body: _check(tmp_path, body, cache)


def _check(tmp_path: Path, body: str, cache: Path) -> list[str]:
    """mypy's errors for a snippet that has a sentence ``said``, a maybe-sentence ``text`` and plain ``plain``."""
    snippet = tmp_path / "snippet.py"
    snippet.write_text(
        "from gui.core.words import Text, english, english_error, message_of, words\n"
        'said = words("{n} layers", n=3)\n'
        "text: Text = said\n"
        'plain = "plain"\n' + textwrap.dedent(body),
        encoding="utf-8",
    )
    config = tmp_path / "mypy.ini"
    config.write_text(f"[mypy]\nplugins = {ROOT / 'tools' / 'mypy_words.py'}\nmypy_path = {ROOT}\n", encoding="utf-8")
    out, err, _ = api.run(
        ["--config-file", str(config), "--cache-dir", str(cache), "--follow-imports=silent", str(snippet)]
    )
    assert not err, err
    return [line for line in out.splitlines() if ": error:" in line]


@pytest.mark.parametrize(
    "made_plain",
    [
        'f"{said}."',
        'f"{text:>10}"',
        '"{}.".format(said)',
        '"{what}".format(what=text)',
        "str(said)",
        "str(text)",
        '"%s." % said',
        '"%s: %s" % (plain, said)',
        "plain % (said,)",
    ],
)
def test_a_sentence_made_plain_text_is_an_error(check, made_plain: str) -> None:
    errors = check(f"shown = {made_plain}\n")
    assert len(errors) == 1 and MESSAGE in errors[0] and "[words-as-text]" in errors[0], errors


@pytest.mark.parametrize("made_plain", ['f"failed: {exc}"', "str(exc)", '"{}".format(exc)', '"%s" % exc'])
def test_an_error_made_plain_text_is_an_error_too(check, made_plain: str) -> None:
    """An error may carry a sentence (``raise ValueError(words(...))``): its text is asked for on purpose."""
    errors = check(f"exc = ValueError(said)\nshown = {made_plain}\n")
    assert len(errors) == 1 and "an error formatted into plain text" in errors[0], errors


def test_plain_text_and_the_rendered_english_are_not(check) -> None:
    body = """
    a = f"{plain}: {english(said)} {said.english!r}"
    b = "{}".format(plain) + str(plain) + "%s" % plain + "%s %d" % (plain, 3)
    c = str(3) + f"{3:.1f}"
    d = words("{what}.", what=said)
    exc = ValueError(said)
    e = f"{english_error(exc)}" + english(message_of(exc))
    f = words("failed: {why}", why=message_of(exc))
    """
    assert check(body) == []


def test_the_project_registers_the_plugin() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'plugins = ["tools/mypy_words.py"]' in text
