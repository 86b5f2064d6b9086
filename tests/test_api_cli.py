"""`tightfit serve`'s guards, which refuse before any engine starts."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui.cli import main
from gui.core.openai_api import is_loopback


def test_only_loopback_addresses_need_no_flag() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and is_loopback("127.8.0.1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2") and not is_loopback("example.org")


def test_another_address_needs_allow_remote(demo_model: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["serve", str(demo_model), "--host", "0.0.0.0"])
    assert "--allow-remote" in str(caught.value.code)


def test_a_missing_model_or_a_bad_port_is_one_line(tmp_path: Path, demo_model: Path) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["serve", str(tmp_path / "none.gguf")])
    assert "no such model file" in str(caught.value.code)
    with pytest.raises(SystemExit) as caught:
        main(["serve", str(demo_model), "--port", "70000"])
    assert str(caught.value.code) == "tightfit: error: port 70000 is not one to listen on: 1-65535, or 0 for a free one"


def test_help_says_how_to_serve_to_other_machines(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert "--allow-remote" in out and "--api-key" in out and "--cors" in out and "--allowed-host" in out


def test_the_names_listed_with_allowed_host_reach_the_server(demo_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gui.commands import serve

    given: list[tuple[str, ...]] = []

    async def served(*args: object) -> int:  # where the engine would start: the arguments the server gets
        given.append(args[-1])  # type: ignore[arg-type]
        return 0

    monkeypatch.setattr(serve, "_serve", served)
    assert main(["serve", str(demo_model), "--allowed-host", "mybox.lan", "--allowed-host", "proxy"]) == 0
    assert given == [("mybox.lan", "proxy")]
