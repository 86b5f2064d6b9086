"""Every `tightfit` sub-command's --help is complete: a help line in the list of commands, a description at the
top of its own help, and help text for every option and argument."""

from __future__ import annotations

import argparse
import contextlib
import io
from collections.abc import Iterator

import pytest

from gui.cli import build_parser, main

CommandPath = tuple[str, ...]


def commands(
    parser: argparse.ArgumentParser, path: CommandPath = ()
) -> Iterator[tuple[CommandPath, str, argparse.ArgumentParser]]:
    """(path, help line, parser) of every sub-command, at any depth."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            lines = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield (*path, name), lines.get(name, ""), sub
                yield from commands(sub, (*path, name))


PARSER = build_parser()
ALL = list(commands(PARSER))
NAMES = [" ".join(path) for path, _, _ in ALL]


def test_the_walk_finds_every_sub_command() -> None:
    expected = {"chat", "serve", "plan", "engine", "doctor", "bench", "journey", "power-sweep", "export"}
    assert expected | {"fetch-demo", "install-desktop"} <= set(NAMES)


@pytest.mark.parametrize(("path", "line", "parser"), ALL, ids=NAMES)
def test_a_sub_command_has_a_help_line_and_a_description(
    path: CommandPath, line: str, parser: argparse.ArgumentParser
) -> None:
    assert line.strip(), f"tightfit {' '.join(path)} has no help line in `tightfit --help`"
    assert (parser.description or "").strip(), f"tightfit {' '.join(path)} --help opens with no description"
    assert "%%" not in parser.description  # a description is printed as it is written


def _options(parser: argparse.ArgumentParser) -> Iterator[argparse.Action]:
    for action in parser._actions:
        if not isinstance(action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction):
            yield action


@pytest.mark.parametrize(("path", "parser"), [((), PARSER), *((p, s) for p, _, s in ALL)], ids=["tightfit", *NAMES])
def test_every_option_and_argument_has_help(path: CommandPath, parser: argparse.ArgumentParser) -> None:
    missing = [a.option_strings[0] if a.option_strings else a.dest for a in _options(parser) if not a.help]
    assert not missing, f"tightfit {' '.join(path)}: no help for {', '.join(missing)}"


@pytest.mark.parametrize("path", [(), *(p for p, _, _ in ALL)], ids=["tightfit", *NAMES])
def test_help_prints_and_exits_zero(path: CommandPath) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        main([*path, "--help"])
    assert done.value.code == 0
    text = out.getvalue()
    assert text.startswith(f"usage: tightfit {' '.join(path)}".rstrip())
    parser = PARSER if not path else next(sub for p, _, sub in ALL if p == path)
    assert " ".join((parser.description or "").split()[:4]) in " ".join(text.split())
