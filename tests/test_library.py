"""The model library: background scans of real GGUF files, grouping of quants, per-file errors."""

from __future__ import annotations

import os
import queue
import struct
from pathlib import Path

import pytest

import gui.services.library as library_mod
from gui.services.library import Library, LibraryChange, group_key, strip_quant_suffix
from gui.services.models import ModelEntry
from tests.gguf_factory import llama_like_metadata, llama_like_tensors, write_gguf, write_llama_like

SMALL = {"n_layer": 2, "n_embd": 256, "n_head": 4, "n_head_kv": 2, "n_ff": 512, "n_vocab": 512}
TEMPLATE = "{% for m in messages %}{{ m.content }}{% endfor %}"


def tiny(path: Path, quant: str, *, name: str = "Tiny Llama", **kw: object) -> Path:
    params = {**SMALL, **kw}
    return write_llama_like(path, name=name, quant=quant, chat_template=TEMPLATE, **params)  # type: ignore[arg-type]


def model_folder(root: Path) -> Path:
    """Three quants of one model, a split model, and one more model."""
    root.mkdir(parents=True, exist_ok=True)
    for quant, label in (("Q8_0", "Q8_0"), ("Q4_K", "Q4_K_M"), ("Q6_K", "Q6_K")):
        tiny(root / f"Tiny-Llama-{label}.gguf", quant)
    write_llama_like(
        root / "Wide-Model-Q4_K_M.gguf", name="Wide Model", quant="Q4_K", n_layer=4, n_embd=512, n_head=8,
        n_head_kv=2, n_ff=1024, n_vocab=1024, ctx=8192, n_parts=3,
    )  # fmt: skip
    tiny(root / "Other-Q4_K_M.gguf", "Q4_K", name="Other Model", n_layer=3)
    return root


def changes() -> tuple[queue.Queue[LibraryChange], object]:
    q: queue.Queue[LibraryChange] = queue.Queue()
    return q, q.put


def test_groups_quants_of_one_model_and_a_split_model(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "models")
    lib = Library([folder])
    change = lib.scan_now()
    assert change.first and not change.errors
    by_name = {g.name: g for g in change.groups}
    assert sorted(by_name) == ["Other Model", "Tiny Llama", "Wide Model"]

    tiny_group = by_name["Tiny Llama"]
    assert [v.quant for v in tiny_group.variants] == ["Q8_0", "Q6_K", "Q4_K_M"]  # largest first
    sizes = [v.size_bytes for v in tiny_group.variants]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == 3
    assert tiny_group.architecture == "llama"
    assert tiny_group.n_layer == 2 and tiny_group.context_length == 2048
    assert tiny_group.has_chat_template
    header = tiny_group.variants[0].header
    assert header is not None and tiny_group.n_params == header.n_params > 0
    for v in tiny_group.variants:
        assert v.bits_per_weight is not None and 4 < v.bits_per_weight < 9
        assert v.type_mix and v.type_mix[0][1] >= v.type_mix[-1][1]

    wide = by_name["Wide Model"]
    assert len(wide.variants) == 1
    (split,) = wide.variants
    assert split.n_parts == 3 and split.path.name == "Wide-Model-Q4_K_M-00001-of-00003.gguf"
    parts = sorted(folder.glob("Wide-Model-*.gguf"))
    assert split.size_bytes == sum(p.stat().st_size for p in parts)
    assert split.header is not None and len(split.header.parts) == 3

    # Same name, different shapes: not the same model.
    assert group_key(by_name["Other Model"].variants[0]) != group_key(tiny_group.variants[0])


def test_without_a_name_files_group_by_their_stem_minus_the_quant(tmp_path: Path) -> None:
    for quant, fname in (("Q4_K", "Nameless-7B-Q4_K_M.gguf"), ("Q3_K", "Nameless-7B.Q3_K_S.gguf")):
        md = llama_like_metadata(ctx=2048, **SMALL)
        del md["general.name"]
        write_gguf(tmp_path / fname, "llama", md, llama_like_tensors(quant=quant, **SMALL), file_type=None)
    groups = Library([tmp_path]).scan_now().groups
    assert [(g.name, len(g.variants)) for g in groups] == [("Nameless-7B", 2)]
    assert {v.quant for v in groups[0].variants} == {"Q4_K (guessed)", "Q3_K (guessed)"}


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("Qwen3.5-27B-Q4_K_M", "Qwen3.5-27B"),
        ("Qwen3.5-27B.Q3_K_S.gguf", "Qwen3.5-27B"),
        ("model-IQ3_XXS", "model"),
        ("Llama-3-70B-Q4_K_M-00001-of-00003.gguf", "Llama-3-70B"),
        ("gemma-3-27b-it-UD-Q4_K_XL", "gemma-3-27b-it"),
        ("phi-4-f16", "phi-4"),
        ("Q8_0", "Q8_0"),  # nothing left to name: keep it
    ],
)
def test_strip_quant_suffix(stem: str, expected: str) -> None:
    assert strip_quant_suffix(stem) == expected


def test_background_scans_notice_added_changed_and_removed_files(tmp_path: Path) -> None:
    folder = model_folder(tmp_path / "models")
    q, put = changes()
    lib = Library([folder], put, poll_interval_s=3600)  # only explicit rescans: the test drives it
    with lib:
        first = q.get(timeout=30)
        assert first.first and len(first.added) == 5 and not first.removed

        new = tiny(folder / "Tiny-Llama-Q5_K_M.gguf", "Q5_K")
        lib.rescan()
        change = q.get(timeout=30)
        assert change.added == [new] and not change.removed
        tiny_group = next(g for g in change.groups if g.name == "Tiny Llama")
        assert len(tiny_group.variants) == 4

        os.unlink(folder / "Tiny-Llama-Q8_0.gguf")
        lib.rescan()
        change = q.get(timeout=30)
        assert change.removed == [folder / "Tiny-Llama-Q8_0.gguf"] and not change.added
        assert [v.quant for v in next(g for g in change.groups if g.name == "Tiny Llama").variants] == [
            "Q6_K",
            "Q5_K_M",
            "Q4_K_M",
        ]

        # A part of the split model changes size: the model is reported as changed.
        part = folder / "Wide-Model-Q4_K_M-00003-of-00003.gguf"
        with open(part, "ab") as f:
            f.truncate(part.stat().st_size + 4096)
        lib.rescan()
        change = q.get(timeout=30)
        assert change.changed == [folder / "Wide-Model-Q4_K_M-00001-of-00003.gguf"]

        # A rescan that finds nothing new reports nothing.
        count = lib.scan_count
        lib.rescan()
        assert lib.wait_for_scan(count, timeout=30)
        assert q.empty()


def test_a_rescan_of_unchanged_files_reads_no_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = model_folder(tmp_path / "models")
    reads: list[Path] = []
    real = library_mod.describe_file

    def counting(path: Path) -> ModelEntry:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(library_mod, "describe_file", counting)
    lib = Library([folder])
    lib.scan_now()
    assert len(reads) == 5
    reads.clear()
    assert lib.scan_now().empty
    assert reads == []
    target = folder / "Tiny-Llama-Q6_K.gguf"
    st = target.stat()
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    change = lib.scan_now()
    assert reads == [target] and change.changed == [target]


def test_folders_can_change_and_missing_folders_are_empty(tmp_path: Path) -> None:
    a = model_folder(tmp_path / "a")
    b = tmp_path / "b"
    b.mkdir()
    tiny(b / "Beta-Q4_K_M.gguf", "Q4_K", name="Beta")
    lib = Library([a, tmp_path / "does-not-exist"])
    assert len(lib.scan_now().groups) == 3
    lib.set_folders([b])
    change = lib.scan_now()
    assert [g.name for g in change.groups] == ["Beta"]
    assert len(change.removed) == 5 and change.added == [b / "Beta-Q4_K_M.gguf"]


def _bad_files(folder: Path) -> dict[str, str]:
    """Broken files and a word each error message must contain."""
    folder.mkdir(parents=True, exist_ok=True)
    good = tiny(folder / "Good-Q4_K_M.gguf", "Q4_K")
    data = good.read_bytes()
    (folder / "truncated.gguf").write_bytes(data[:300])
    corrupt = bytearray(data[:4096])
    corrupt[24:32] = struct.pack("<Q", 1 << 40)  # the first key's length: a terabyte-long string
    (folder / "corrupt.gguf").write_bytes(bytes(corrupt))
    (folder / "notes.gguf").write_text("these are my notes, not a model\n")
    (folder / "absurd.gguf").write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 1 << 62, 1 << 62) + bytes(64))
    (folder / "empty.gguf").write_bytes(b"")
    write_llama_like(folder / "martian.gguf", arch="martian", name="Martian", quant="Q4_K", **SMALL)  # type: ignore[arg-type]
    write_llama_like(folder / "Lonely-00001-of-00002.gguf", name="Lonely", quant="Q4_K", **SMALL)  # type: ignore[arg-type]
    return {
        "truncated.gguf": "truncated.gguf",
        "corrupt.gguf": "corrupt.gguf",
        "notes.gguf": "not a GGUF file",
        "absurd.gguf": "tensors",
        "empty.gguf": "empty",
        "martian.gguf": "unsupported architecture 'martian'",
        "Lonely-00001-of-00002.gguf": "missing",
    }


def test_bad_files_are_listed_with_a_reason_and_do_not_stop_the_scan(tmp_path: Path) -> None:
    expected = _bad_files(tmp_path / "models")
    q, put = changes()
    with Library([tmp_path / "models"], put, poll_interval_s=3600):
        change = q.get(timeout=30)
    errors = {e.path.name: e.error for e in change.errors}
    assert sorted(errors) == sorted(expected)
    for name, word in expected.items():
        message = errors[name]
        assert message is not None and word in message, (name, message)
        assert "\n" not in message
    assert [g.name for g in change.groups] == ["Tiny Llama"]  # the good file is still there


def test_the_scanning_thread_survives_a_reader_bug(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = model_folder(tmp_path / "models")

    def broken(path: Path) -> ModelEntry:
        if "Q6_K" in path.name:
            raise RuntimeError("boom")
        return real(path)

    real = library_mod.describe_file
    monkeypatch.setattr(library_mod, "describe_file", broken)
    change = Library([folder]).scan_now()
    (err,) = change.errors
    assert err.path.name == "Tiny-Llama-Q6_K.gguf" and err.error is not None and "boom" in err.error
    assert len(change.groups) == 3
