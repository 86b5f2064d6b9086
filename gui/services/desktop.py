"""Tightfit as a desktop application: its id, the files it ships (icons, AppStream metainfo, the power-cap
helper with its polkit policy and boot unit), and the menu entry and icons it puts into the user's XDG data
directory.

The shipped files live in ``gui/resources`` (in a checkout, a link to the top-level ``resources/``; in an
installed wheel, package data), so an installed Tightfit finds them wherever it runs from. Installing the
entry writes only files named by the app id under ``$XDG_DATA_HOME`` (default ``~/.local/share``), each
atomically and only when its content changed, so running it again changes nothing; uninstalling removes
exactly those files.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = [
    "APP_ID",
    "APP_NAME",
    "ICON_SIZES",
    "Change",
    "data_home",
    "desktop_entry",
    "icon_files",
    "install",
    "launcher",
    "metainfo_path",
    "packaging_dir",
    "planned_files",
    "resources_dir",
    "uninstall",
]

# One reverse-DNS id for the desktop file's name, the icon's name, the AppStream id and Qt's desktopFileName.
APP_ID = "io.github.tightfit.Tightfit"
# Qt's application name, which Qt's X11 backend puts in WM_CLASS; the desktop entry's StartupWMClass matches it.
APP_NAME = "Tightfit"
ICON_SIZES = (16, 32, 48, 64, 128, 256)
SCRIPT = "tightfit"
# The last line of the entry it writes: the SHA-256 of the lines above it (a key of its own is allowed by the
# Desktop Entry Specification, "Extending the format"); an entry whose lines no longer match was edited.
DIGEST_KEY = "X-Tightfit-Digest"
LEFT_INSTALL = "left as it is (not what install-desktop wrote: edited or someone else's; --force replaces it)"
LEFT_UNINSTALL = "left as it is (not what install-desktop wrote: edited or someone else's; --force removes it)"
# Characters that make a desktop entry's Exec argument need quotes (Desktop Entry Specification, "Exec key").
_RESERVED = set(" \t\n\"'\\><~|&;$*?#()`")


def resources_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "resources"


def packaging_dir() -> Path:
    """The power-cap helper, its polkit policy and its systemd unit, with the README that installs them."""
    return resources_dir() / "packaging"


def metainfo_path() -> Path:
    return resources_dir() / f"{APP_ID}.metainfo.xml"


def desktop_template_path() -> Path:
    return resources_dir() / f"{APP_ID}.desktop"


def icon_files() -> dict[str, Path]:
    """The icon theme's size folder (``16x16`` … ``scalable``) -> the shipped file for it."""
    hicolor = resources_dir() / "icons" / "hicolor"
    files = {f"{n}x{n}": hicolor / f"{n}x{n}" / "apps" / f"{APP_ID}.png" for n in ICON_SIZES}
    files["scalable"] = hicolor / "scalable" / "apps" / f"{APP_ID}.svg"
    return files


def data_home() -> Path:
    """``$XDG_DATA_HOME``, or ``~/.local/share`` (as platformdirs reads it, like the rest of Tightfit)."""
    return Path(platformdirs.user_data_dir())


def launcher() -> list[str]:
    """The command that starts this installed Tightfit: its ``tightfit`` script (a pipx or venv install puts
    it beside the interpreter), else this interpreter with ``-m gui``."""
    for folder in (Path(sys.executable).parent, Path(sysconfig.get_path("scripts"))):
        script = folder / SCRIPT
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "gui"]


def _exec_argument(arg: str) -> str:
    if any(ord(c) < 0x20 or c == "\x7f" for c in arg):
        raise ValueError(f"a desktop entry cannot start a program whose path holds a control character: {arg!r}")
    if _RESERVED & set(arg):
        arg = '"' + "".join("\\" + c if c in '"`$\\' else c for c in arg) + '"'
    # Then the escapes of every string value (a backslash doubles) and of field codes (a percent doubles).
    return arg.replace("\\", "\\\\").replace("%", "%%")


def desktop_entry(command: list[str]) -> str:
    """The shipped entry with Exec (and TryExec) naming ``command``, so the menu starts this very install, and
    the line with the digest of the rest that marks it as written here."""
    body = _unmarked_entry(command)
    return f"{body}{DIGEST_KEY}={_digest(body)}\n"


def _digest(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _unmarked_entry(command: list[str]) -> str:
    """The entry without its digest line (as versions before the line wrote it)."""
    lines = []
    for line in desktop_template_path().read_text(encoding="utf-8").splitlines():
        if line.startswith("Exec="):
            line = "Exec=" + " ".join(_exec_argument(arg) for arg in command)
        elif line.startswith("TryExec="):
            line = "TryExec=" + command[0].replace("\\", "\\\\")
        lines.append(line)
    return "\n".join(lines) + "\n"


def planned_files(home: Path, command: list[str]) -> dict[Path, bytes]:
    """What installing writes: destination -> content."""
    files = {home / "applications" / f"{APP_ID}.desktop": desktop_entry(command).encode("utf-8")}
    for size, source in icon_files().items():
        files[home / "icons" / "hicolor" / size / "apps" / source.name] = source.read_bytes()
    return files


@dataclass(frozen=True)
class Change:
    path: Path
    action: str  # "wrote", "up to date", "removed", "absent", "refreshed", LEFT_INSTALL, LEFT_UNINSTALL

    def __str__(self) -> str:
        return f"{self.action}: {self.path}"


def install(home: Path | None = None, command: list[str] | None = None, *, force: bool = False) -> list[Change]:
    """Write the desktop entry and the icons under ``home`` (default: ``data_home()``); OSError if the disk
    refuses one (those written before it stay, and a second run finishes the job). A file of the same name it
    did not write (edited since, or someone else's) is left and named, unless ``force``."""
    home = home if home is not None else data_home()
    command = command or launcher()
    changes = []
    for path, content in planned_files(home, command).items():
        state = _state(path, content, command)
        if state == "same":
            changes.append(Change(path, "up to date"))
            continue
        if state == "theirs" and not force:
            changes.append(Change(path, LEFT_INSTALL))
            continue
        _write_atomic(path, content)
        changes.append(Change(path, "wrote"))
    if any(c.action == "wrote" for c in changes):
        changes.extend(_refresh_icon_cache(home / "icons" / "hicolor"))
    return changes


def uninstall(home: Path | None = None, *, force: bool = False) -> list[Change]:
    """Remove exactly the files ``install`` writes, as it wrote them (an edited one is left and named, unless
    ``force``); the folders stay."""
    home = home if home is not None else data_home()
    command = launcher()
    changes = []
    for path, content in planned_files(home, command).items():
        state = _state(path, content, command)
        if state == "theirs" and not force:
            changes.append(Change(path, LEFT_UNINSTALL))
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            changes.append(Change(path, "absent"))
        else:
            changes.append(Change(path, "removed"))
    if any(c.action == "removed" for c in changes):
        changes.extend(_refresh_icon_cache(home / "icons" / "hicolor"))
    return changes


def _state(path: Path, content: bytes, command: list[str]) -> str:
    """ "absent"; "same" (what would be written); "ours" (written here, for another install or version); or
    "theirs": a link, a folder, an entry edited since, an icon that is not the shipped one (anything unreadable)."""
    try:
        if not os.path.lexists(path):
            return "absent"
        if path.is_symlink() or not path.is_file():
            return "theirs"
        with open(path, "rb") as file:
            data = file.read(len(content) + (1 << 16) + 1)
    except OSError:
        return "theirs"
    if data == content:
        return "same"
    if path.suffix == ".desktop" and (_marked(data) or data == _unmarked_entry(command).encode("utf-8")):
        return "ours"
    return "theirs"


def _marked(data: bytes) -> bool:
    """Whether an entry ends with the digest line of exactly the lines above it."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    body, _, last = text.rstrip("\n").rpartition("\n")
    key, _, digest = last.partition("=")
    return key == DIGEST_KEY and digest == _digest(body + "\n")


def _write_atomic(path: Path, content: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(content)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _refresh_icon_cache(theme: Path) -> list[Change]:
    """A cache the theme folder already has would hide a new icon until rebuilt; without one, desktops scan."""
    cache = theme / "icon-theme.cache"
    tool = shutil.which("gtk-update-icon-cache")
    if not cache.exists() or tool is None:
        return []
    try:
        subprocess.run([tool, "-q", "-f", "-t", str(theme)], check=True, capture_output=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return [Change(cache, "could not refresh (run gtk-update-icon-cache -f -t on the folder)")]
    return [Change(cache, "refreshed")]
