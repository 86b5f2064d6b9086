"""The build step pyproject.toml cannot declare: the window's translations (resources/i18n/*.ts) compiled into
.qm files inside the package, with the lrelease of the PySide6 at hand (the build environment's, or one on
the PATH; TIGHTFIT_LRELEASE names another). Without one the wheel carries the .ts only, and the window
compiles them on first use with the PySide6 it runs on (gui/ui/i18n.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


def _lrelease() -> list[str] | None:
    if named := os.environ.get("TIGHTFIT_LRELEASE"):
        return [named]
    try:
        import PySide6

        tool = Path(PySide6.__file__).parent / "lrelease"
        if tool.is_file():
            return [str(tool)]
    except ImportError:
        pass
    found = shutil.which("pyside6-lrelease") or shutil.which("lrelease")
    return [found] if found else None


class BuildWithTranslations(build_py):
    def run(self) -> None:
        super().run()
        sources = sorted(Path(__file__).resolve().parent.joinpath("resources", "i18n").glob("*.ts"))
        tool = _lrelease()
        if tool is None:
            self.announce("no lrelease: translations are compiled on first use instead", level=3)
            return
        target = Path(self.build_lib, "gui", "resources", "i18n")
        target.mkdir(parents=True, exist_ok=True)
        # A pyside6-lrelease script runs on its own Python: not with the isolated build's path.
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONHOME")}
        for ts in sources:
            qm = target / ts.with_suffix(".qm").name
            done = subprocess.run([*tool, "-silent", str(ts), "-qm", str(qm)], env=env, timeout=120, check=False)
            if done.returncode != 0:
                qm.unlink(missing_ok=True)
                self.announce(f"{tool[0]} could not compile {ts.name}: compiled on first use instead", level=3)


setup(cmdclass={"build_py": BuildWithTranslations})
