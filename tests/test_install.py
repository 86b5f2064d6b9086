"""Installing Tightfit from its wheel, as `pipx install` or pip in a venv does: the wheel carries the icons, the
AppStream metainfo, the desktop entry and the power-cap helper with its policy and unit; the installed
`tightfit` runs from any folder, finds them inside its own package, puts its menu entry under $XDG_DATA_HOME
and keeps models in the user's data folder.

The wheel is built from a copy of the checkout's files (what a clone has, so nothing ignored or stale in
build/ slips in) and installed without dependencies into a fresh venv; the project's venv lends that venv
its packages through a path file added after the install, so nothing is downloaded but the build backend.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from gui import __version__
from gui.services.desktop import APP_ID, ICON_SIZES, icon_files, metainfo_path, packaging_dir, resources_dir

# Each test here builds the wheel or a venv: `-m "not build"` leaves them out of a quick run.
pytestmark = pytest.mark.build

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"


def _run(args: list[str | Path], *, timeout: float = 120, **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kwargs)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


def _checkout_copy(dest: Path) -> Path:
    """The files a clone would have (tracked, plus new ones not ignored), symlinks kept as symlinks."""
    try:
        listed = _run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    except (OSError, AssertionError) as exc:
        pytest.skip(f"needs a git checkout to know which files a clone has: {exc}")
    for name in filter(None, listed.stdout.split("\0")):
        source, target = ROOT / name, dest / name
        if not source.is_symlink() and not source.is_file():
            continue  # deleted in the working tree
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    return dest


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = _checkout_copy(work / "src")
    # The build compiles the translations with the lrelease of the PySide6 on the PATH (setup.py).
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", source, "-w", work / "dist"], timeout=300, env=env)
    [built] = (work / "dist").glob("tightfit-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed; returns its bin folder."""
    venv = tmp_path_factory.mktemp("venv") / "tightfit"
    _run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel])
    # Only now lend it the project's dependencies (PySide6, numpy, …): before, pip would take the project's own
    # editable tightfit for this one.
    site = Path(_run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip())
    (site / "project-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return venv / "bin"


@pytest.fixture
def user_env(tmp_path: Path) -> dict[str, str]:
    """A user with nothing yet: own XDG folders, nothing of the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "TIGHTFIT_"))}
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[var] = str(tmp_path / var.lower())
    env["QT_QPA_PLATFORM"] = "offscreen"
    return env


def _packaged(path: Path) -> str:
    return "gui/resources/" + path.relative_to(resources_dir()).as_posix()


def test_the_wheel_carries_the_resources(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        shipped = [metainfo_path(), resources_dir() / f"{APP_ID}.desktop", *icon_files().values()]
        shipped += [packaging_dir() / n for n in ("tightfit-power-helper", "org.tightfit.power-limit.policy")]
        shipped += [packaging_dir() / "tightfit-power-cap@.service", packaging_dir() / "README.md"]
        for path in shipped:
            assert archive.read(_packaged(path)) == path.read_bytes(), path
        helper = archive.getinfo("gui/resources/packaging/tightfit-power-helper")
        assert (helper.external_attr >> 16) & 0o111, "the helper lost its executable bits"
    assert "gui/cli.py" in names and "gui/services/desktop.py" in names
    assert not [n for n in names if n.startswith(("tests/", "models/", "bench/")) or "__pycache__" in n]
    assert not [n for n in names if n.endswith(".gguf") or n.endswith("render-icons")]
    assert len(ICON_SIZES) + 1 == sum(n.startswith("gui/resources/icons/hicolor/") for n in names)


def test_the_wheel_carries_the_compiled_translations(wheel: Path) -> None:
    """Each .ts ships with its .qm, compiled at build time (Qt's magic number first); none is in the checkout."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for language in ("zh_CN", "en"):
            source = resources_dir() / "i18n" / f"tightfit_{language}.ts"
            assert archive.read(_packaged(source)) == source.read_bytes()
            compiled = archive.read(_packaged(source.with_suffix(".qm")))
            assert compiled[:16] == bytes.fromhex("3cb86418caef9c95cd211cbf60a1bddd") and len(compiled) > 100
            assert not source.with_suffix(".qm").exists()
    assert not [n for n in names if n.startswith("gui/resources/i18n/") and not n.endswith((".ts", ".qm"))]


def test_the_installed_tightfit_runs_from_any_folder(installed: Path, user_env: dict[str, str], tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = _run([installed / "tightfit", "--version"], cwd=elsewhere, env=user_env)
    assert done.stdout.strip() == f"tightfit {__version__}"
    assert "install-desktop" in _run([installed / "tightfit", "--help"], cwd=elsewhere, env=user_env).stdout
    where = _run(
        [
            installed / "python",
            "-c",
            "import gui.services.desktop as d, gui.cli as c; print(d.__file__); print(d.packaging_dir()); "
            "print(c.default_models_dir())",
        ],
        cwd=elsewhere,
        env=user_env,
    ).stdout.splitlines()
    venv = installed.parent
    assert Path(where[0]).is_relative_to(venv), "the checkout's code was imported, not the installed one"
    assert Path(where[1]).is_relative_to(venv) and (Path(where[1]) / "tightfit-power-helper").is_file()
    assert Path(where[2]) == Path(user_env["XDG_DATA_HOME"]) / "tightfit" / "models"


def test_the_installed_tightfit_installs_its_desktop_entry(
    installed: Path, user_env: dict[str, str], tmp_path: Path
) -> None:
    home = Path(user_env["XDG_DATA_HOME"])
    first = _run([installed / "tightfit", "install-desktop"], cwd=tmp_path, env=user_env).stdout
    entry = home / "applications" / f"{APP_ID}.desktop"
    assert f"wrote: {entry}" in first.splitlines()
    text = entry.read_text(encoding="utf-8")
    assert f"Exec={installed / 'tightfit'}\n" in text and f"Icon={APP_ID}\n" in text
    for size, source in icon_files().items():
        assert (home / "icons" / "hicolor" / size / "apps" / source.name).read_bytes() == source.read_bytes()
    again = _run([installed / "tightfit", "install-desktop"], cwd=tmp_path, env=user_env).stdout
    assert "wrote:" not in again and "up to date" in again
    gone = _run([installed / "tightfit", "install-desktop", "--uninstall"], cwd=tmp_path, env=user_env).stdout
    assert f"removed: {entry}" in gone.splitlines() and not entry.exists()


def test_the_installed_fetch_demo_uses_the_user_data_folder(
    installed: Path, user_env: dict[str, str], tmp_path: Path
) -> None:
    """Run from a folder without models/, fetch-demo looks in (and would fetch into) the user's data folder;
    a verified file already there is kept, so this needs no network."""
    if not DEMO.is_file():
        pytest.fail(f"{DEMO} is missing: run `make test`, which fetches it, or `tightfit fetch-demo`")
    models = Path(user_env["XDG_DATA_HOME"]) / "tightfit" / "models"
    models.mkdir(parents=True)
    try:
        os.link(DEMO, models / DEMO.name)
    except OSError:
        shutil.copyfile(DEMO, models / DEMO.name)
    before = hashlib.sha256((models / DEMO.name).read_bytes()).hexdigest()
    _run([installed / "tightfit", "fetch-demo"], cwd=tmp_path, env=user_env)
    assert sorted(p.name for p in models.iterdir()) == [DEMO.name]
    assert hashlib.sha256((models / DEMO.name).read_bytes()).hexdigest() == before
    assert not (tmp_path / "models").exists()


def test_the_installed_window_opens_with_its_icon_on_an_empty_library(
    installed: Path, user_env: dict[str, str], tmp_path: Path
) -> None:
    """A first start from any folder: no models anywhere, so the library offers the demo model (into the user's
    data folder, as above); the window's icon comes from the installed package."""
    sizes = _run(
        [
            installed / "python",
            "-c",
            "from PySide6.QtWidgets import QApplication; from gui.app import set_identity; app = QApplication([]); "
            "set_identity(app); print(sorted(s.width() for s in app.windowIcon().availableSizes()))",
        ],
        cwd=tmp_path,
        env=user_env,
    ).stdout.strip()
    assert sizes == str(sorted(ICON_SIZES))
    # The installed window uses the .qm built into the package, not one compiled into the cache.
    qm = _run(
        [installed / "python", "-c", "from gui.ui.i18n import compiled; print(compiled('zh_CN'))"],
        cwd=tmp_path,
        env=user_env,
    ).stdout.strip()
    assert Path(qm).is_relative_to(installed.parent) and qm.endswith("tightfit_zh_CN.qm")
    shot = tmp_path / "first-start.png"
    _run([installed / "tightfit", "--screenshot", shot], cwd=tmp_path, env=user_env, timeout=300)
    assert shot.read_bytes().startswith(b"\x89PNG")
