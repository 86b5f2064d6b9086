"""Tightfit as a desktop application: one app id everywhere, the icon rendered from its SVG, AppStream metadata
that validates, and `tightfit install-desktop` writing (and removing) exactly its files under $XDG_DATA_HOME."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from gui.cli import main
from gui.services import desktop
from gui.services.desktop import (
    APP_ID,
    APP_NAME,
    ICON_SIZES,
    data_home,
    desktop_entry,
    icon_files,
    install,
    launcher,
    metainfo_path,
    packaging_dir,
    planned_files,
    resources_dir,
    uninstall,
)

ROOT = Path(__file__).resolve().parent.parent
RENDER = ROOT / "resources" / "icons" / "render-icons"


def parse_entry(text: str) -> dict[str, str]:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read_string(text)
    assert parser.sections() == ["Desktop Entry"]
    return dict(parser["Desktop Entry"])


# ---- one id, and the files that carry it --------------------------------------------------------------


def test_the_resources_are_in_the_package_and_the_checkout_reads_them_in_place() -> None:
    assert resources_dir() == ROOT / "gui" / "resources"
    assert resources_dir().resolve() == ROOT / "resources"
    assert packaging_dir().resolve() == ROOT / "packaging"
    for name in ("tightfit-power-helper", "org.tightfit.power-limit.policy", "tightfit-power-cap@.service"):
        assert (packaging_dir() / name).is_file(), name
    assert all(path.is_file() for path in icon_files().values())


def test_one_app_id_names_the_desktop_file_the_icon_and_the_metainfo() -> None:
    template = resources_dir() / f"{APP_ID}.desktop"
    entry = parse_entry(template.read_text(encoding="utf-8"))
    assert entry["Icon"] == APP_ID
    assert entry["StartupWMClass"] == APP_NAME
    assert entry["Type"] == "Application" and entry["Name"] == "Tightfit" and entry["Terminal"] == "false"
    assert entry["Categories"].endswith(";") and "Utility" in entry["Categories"].split(";")
    assert entry["Keywords"].endswith(";") and "GGUF" in entry["Keywords"].split(";")
    component = ET.parse(metainfo_path()).getroot()
    assert component.get("type") == "desktop-application"
    assert component.findtext("id") == APP_ID
    assert component.findtext("launchable[@type='desktop-id']") == f"{APP_ID}.desktop"
    assert component.findtext("icon[@type='stock']") == APP_ID
    assert component.findtext("provides/binary") == "tightfit"
    assert {path.name for path in icon_files().values()} == {f"{APP_ID}.png", f"{APP_ID}.svg"}
    assert sorted(icon_files()) == sorted([f"{n}x{n}" for n in ICON_SIZES] + ["scalable"])


def test_the_metainfo_release_is_this_version() -> None:
    from gui import __version__

    releases = ET.parse(metainfo_path()).getroot().findall("releases/release")
    assert releases and releases[0].get("version") == __version__


def test_appstreamcli_validates_the_metainfo() -> None:
    tool = shutil.which("appstreamcli")
    if tool is None:
        pytest.skip("appstreamcli not found: install it (Debian: apt-get install appstream) to validate the metainfo")
    done = subprocess.run(
        [tool, "validate", "--no-net", "--no-color", str(metainfo_path())], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # Infos and pedantic notes pass; a warning or an error is a finding.
    assert not any(line.startswith(("W:", "E:")) for line in done.stdout.splitlines()), done.stdout


def test_the_pngs_are_what_the_svg_renders_to() -> None:
    """The committed PNGs against a fresh rendering by resources/icons/render-icons (QSvgRenderer)."""
    done = subprocess.run(
        [sys.executable, str(RENDER), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    assert done.returncode == 0, done.stderr


def test_the_window_carries_the_icon_and_the_app_id(qapp) -> None:
    from gui.app import set_identity

    before = (qapp.applicationName(), qapp.organizationName(), qapp.desktopFileName(), qapp.windowIcon())
    try:
        set_identity(qapp)
        assert qapp.desktopFileName() == APP_ID
        assert qapp.applicationName() == APP_NAME  # what X11's WM_CLASS carries, matched by StartupWMClass
        sizes = {(s.width(), s.height()) for s in qapp.windowIcon().availableSizes()}
        assert {(n, n) for n in ICON_SIZES} <= sizes
        assert not qapp.windowIcon().pixmap(16, 16).toImage().isNull()
    finally:
        qapp.setApplicationName(before[0])
        qapp.setOrganizationName(before[1])
        qapp.setDesktopFileName(before[2])
        qapp.setWindowIcon(before[3])


# ---- the desktop entry ---------------------------------------------------------------------------------


def test_the_entry_starts_this_install() -> None:
    command = launcher()
    assert Path(command[0]).is_absolute() and os.access(command[0], os.X_OK)
    entry = parse_entry(desktop_entry(command))
    assert entry["Exec"] == command[0] if len(command) == 1 else entry["Exec"].startswith(command[0])
    assert entry["TryExec"] == command[0]


@pytest.mark.parametrize(
    ("argument", "written"),
    [
        ("/usr/bin/tightfit", "/usr/bin/tightfit"),
        ("/opt/my apps/tightfit", '"/opt/my apps/tightfit"'),
        ("/opt/$HOME/`x`/tightfit", '"/opt/\\\\$HOME/\\\\`x\\\\`/tightfit"'),
        ("/opt/back\\slash", '"/opt/back\\\\\\\\slash"'),  # four backslashes in the file for one
        ("/opt/100%/tightfit", "/opt/100%%/tightfit"),
    ],
)
def test_exec_arguments_are_quoted_as_the_desktop_entry_specification_says(argument: str, written: str) -> None:
    entry = parse_entry(desktop_entry([argument, "-m", "gui"]))
    assert entry["Exec"] == f"{written} -m gui"


def test_a_program_path_with_a_newline_is_refused() -> None:
    with pytest.raises(ValueError, match="control character"):
        desktop_entry(["/opt/a\nb/tightfit"])


def test_install_writes_the_entry_and_every_icon_and_a_second_run_changes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "data"
    other = home / "applications" / "someone.else.desktop"
    other.parent.mkdir(parents=True)
    other.write_text("[Desktop Entry]\n", encoding="utf-8")
    command = ["/opt/tightfit/bin/tightfit"]
    first = install(home, command)
    planned = planned_files(home, command)
    assert {c.path: c.action for c in first} == dict.fromkeys(planned, "wrote")
    assert all(path.read_bytes() == content for path, content in planned.items())
    assert (home / "applications" / f"{APP_ID}.desktop").exists()
    for size in ICON_SIZES:
        assert (home / "icons" / "hicolor" / f"{size}x{size}" / "apps" / f"{APP_ID}.png").exists()
    assert (home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg").exists()
    stamps = {path: path.stat().st_mtime_ns for path in planned}
    second = install(home, command)
    assert [c.action for c in second] == ["up to date"] * len(planned)
    assert {path: path.stat().st_mtime_ns for path in planned} == stamps
    assert not [p for p in home.rglob("*.tmp")]
    # Another install (another venv): only the entry changes.
    third = install(home, ["/elsewhere/bin/tightfit"])
    assert [c.path for c in third if c.action == "wrote"] == [home / "applications" / f"{APP_ID}.desktop"]

    removed = uninstall(home)
    assert {c.path: c.action for c in removed} == dict.fromkeys(planned, "removed")
    assert not any(path.exists() for path in planned)
    assert other.exists()  # nothing but our own files
    assert [c.action for c in uninstall(home)] == ["absent"] * len(planned)


def test_install_desktop_command_writes_under_xdg_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_home() == tmp_path / "xdg"
    assert main(["install-desktop"]) == 0
    out = capsys.readouterr().out.splitlines()
    entry_path = tmp_path / "xdg" / "applications" / f"{APP_ID}.desktop"
    assert f"wrote: {entry_path}" in out
    assert sum(line.startswith("wrote: ") for line in out) == len(ICON_SIZES) + 2
    assert out[-1].startswith(f"The menu entry starts: {launcher()[0]}")
    assert parse_entry(entry_path.read_text(encoding="utf-8"))["Exec"] == launcher()[0]

    assert main(["install-desktop"]) == 0
    assert "was up to date" in capsys.readouterr().out

    assert main(["install-desktop", "--uninstall"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"removed: {entry_path}" in out and out[-1].startswith(f"Removed {len(ICON_SIZES) + 2} file(s)")
    assert not entry_path.exists()
    assert main(["install-desktop", "--uninstall"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"Nothing of {APP_ID} in {tmp_path / 'xdg'}."


def test_a_data_folder_that_cannot_be_written_is_said_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocked = tmp_path / "xdg"
    blocked.write_text("a file where the data folder should be", encoding="utf-8")
    monkeypatch.setenv("XDG_DATA_HOME", str(blocked))
    assert main(["install-desktop"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1 and captured.err.startswith("tightfit install-desktop: error: ")


def test_a_stale_icon_cache_is_refreshed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A theme folder with an icon-theme.cache hides new icons until it is rebuilt; one without is left be."""
    calls: list[list[str]] = []
    tool = tmp_path / "gtk-update-icon-cache"
    tool.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    real_run = subprocess.run

    def run(args: list[str], **kwargs: object) -> subprocess.CompletedProcess[bytes]:
        calls.append(args)
        return real_run(args, **kwargs)  # type: ignore[call-overload,no-any-return]

    monkeypatch.setattr(desktop.subprocess, "run", run)
    home = tmp_path / "data"
    install(home, ["/x/tightfit"])
    assert calls == []
    theme = home / "icons" / "hicolor"
    (theme / "icon-theme.cache").write_bytes(b"old")
    uninstall(home)
    changes = install(home, ["/x/tightfit"])
    assert calls[-1] == [str(tool), "-q", "-f", "-t", str(theme)]
    assert changes[-1].action == "refreshed"


# ---- files it did not write ------------------------------------------------------------------------------


def test_an_entry_the_user_edited_is_left_by_install_and_uninstall_and_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert main(["install-desktop"]) == 0
    entry_path = tmp_path / "xdg" / "applications" / f"{APP_ID}.desktop"
    written = entry_path.read_text(encoding="utf-8")
    assert written.splitlines()[-1].startswith(f"{desktop.DIGEST_KEY}=")
    assert parse_entry(written)["Exec"] == launcher()[0]
    edited = written.replace(f"Exec={launcher()[0]}", "Exec=env CUDA_VISIBLE_DEVICES=1 tightfit")
    assert edited != written
    entry_path.write_text(edited, encoding="utf-8")
    icon = tmp_path / "xdg" / "icons" / "hicolor" / "48x48" / "apps" / f"{APP_ID}.png"
    icon.write_bytes(b"the user's own icon")
    capsys.readouterr()

    assert main(["install-desktop"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"{desktop.LEFT_INSTALL}: {entry_path}" in out and f"{desktop.LEFT_INSTALL}: {icon}" in out
    assert out[-1].endswith("Left 2 file(s) it did not write (--force replaces them).")
    assert entry_path.read_text(encoding="utf-8") == edited and icon.read_bytes() == b"the user's own icon"

    assert main(["install-desktop", "--uninstall"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert f"{desktop.LEFT_UNINSTALL}: {entry_path}" in out and f"{desktop.LEFT_UNINSTALL}: {icon}" in out
    assert out[-1] == (
        f"Removed {len(ICON_SIZES)} file(s) of {APP_ID} from {tmp_path / 'xdg'}. "
        "Left 2 file(s) it did not write (--force removes them)."
    )
    assert entry_path.read_text(encoding="utf-8") == edited and icon.read_bytes() == b"the user's own icon"

    assert main(["install-desktop", "--force"]) == 0
    assert entry_path.read_text(encoding="utf-8") == written and "Left" not in capsys.readouterr().out
    entry_path.write_text(edited, encoding="utf-8")
    assert main(["install-desktop", "--uninstall", "--force"]) == 0
    assert not entry_path.exists() and not icon.exists()


def test_an_entry_it_wrote_for_another_install_or_before_the_digest_line_is_its_own(tmp_path: Path) -> None:
    home = tmp_path / "data"
    entry_path = home / "applications" / f"{APP_ID}.desktop"
    install(home, ["/old/venv/bin/tightfit"])
    assert [c.action for c in install(home, ["/new/venv/bin/tightfit"])].count("wrote") == 1
    assert parse_entry(entry_path.read_text(encoding="utf-8"))["Exec"] == "/new/venv/bin/tightfit"
    # An entry as versions before the digest line wrote it, for this install: replaced, and removed.
    old = desktop.desktop_entry(launcher()).rpartition(f"{desktop.DIGEST_KEY}=")[0]
    entry_path.write_text(old, encoding="utf-8")
    assert {c.path: c.action for c in install(home)}[entry_path] == "wrote"
    entry_path.write_text(old, encoding="utf-8")
    assert {c.path: c.action for c in uninstall(home)}[entry_path] == "removed"
    assert not entry_path.exists()


def test_a_link_or_a_folder_of_the_same_name_is_left(tmp_path: Path) -> None:
    home = tmp_path / "data"
    entry_path = home / "applications" / f"{APP_ID}.desktop"
    entry_path.parent.mkdir(parents=True)
    mine = tmp_path / "my.desktop"
    mine.write_text("[Desktop Entry]\nName=Mine\n", encoding="utf-8")
    entry_path.symlink_to(mine)
    scalable = home / "icons" / "hicolor" / "scalable" / "apps" / f"{APP_ID}.svg"
    scalable.mkdir(parents=True)
    changes = {c.path: c.action for c in install(home, ["/x/tightfit"])}
    assert changes[entry_path] == desktop.LEFT_INSTALL and changes[scalable] == desktop.LEFT_INSTALL
    assert entry_path.is_symlink() and mine.read_text(encoding="utf-8") == "[Desktop Entry]\nName=Mine\n"
    changes = {c.path: c.action for c in uninstall(home)}
    assert changes[entry_path] == desktop.LEFT_UNINSTALL and entry_path.is_symlink() and scalable.is_dir()
