"""Settings written for llama-server, llama-cli, llama-server's presets file and koboldcpp.

The flag spellings are checked against llama.cpp's own parser as llama-cpp-python 0.3.36 vendors it
(ggml-org/llama.cpp@0c1e57098, ``vendor/llama.cpp/common/arg.cpp``): ``-ngl/--gpu-layers/--n-gpu-layers``
takes a number, ``auto`` or ``all``; ``-fa/--flash-attn`` takes on|off|auto; there is no ``--no-mmap`` in
that version, ``-lm/--load-mode`` takes none|mmap|…; ``-ctk/-ctv``, ``-np``, ``-ub``, ``-t``, ``-c``,
``-b``, ``-kvu`` (llama-server only), ``--op-offload/--no-op-offload``, ``-fit on|off``. The table below
is copied from that file, so the commands are read back here by a parser that does not share a single
spelling with the code under test; where the vendored source is on this machine (the build folder of
``make bench``), the table is checked against it too.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from gui.core.export import (
    LLAMA_CPP_SOURCE,
    kcpps,
    llama_cli_command,
    llama_flag,
    llama_server_command,
    preset_section,
    section_name,
)
from gui.core.params import LOAD_SPECS, LoadSettings

ROOT = Path(__file__).resolve().parent.parent

# llama.cpp 0c1e57098 common/arg.cpp: each option's spellings (line of its add_opt), whether it takes a
# value, and the values it accepts where it checks them. "server" marks set_examples({SERVER, ...}).
LLAMA_OPTIONS: dict[tuple[str, ...], dict[str, object]] = {
    ("-m", "--model"): {"value": True},  # arg.cpp:3035
    ("-ngl", "--gpu-layers", "--n-gpu-layers"): {"value": True},  # :2789, a number, 'auto' or 'all'
    ("-c", "--ctx-size"): {"value": True},  # :1639
    ("-b", "--batch-size"): {"value": True},  # :1669
    ("-ub", "--ubatch-size"): {"value": True},  # :1676
    ("-t", "--threads"): {"value": True},  # :1517
    ("-np", "--parallel"): {"value": True},  # :2544/2555
    ("-fa", "--flash-attn"): {"value": True, "choices": ("on", "off", "auto")},  # :1754
    ("-ctk", "--cache-type-k"): {"value": True},  # :2437
    ("-ctv", "--cache-type-v"): {"value": True},  # :2450
    ("-lm", "--load-mode"): {"value": True, "choices": ("auto", "none", "mmap", "mlock", "mmap+mlock", "dio")},  # :2691
    ("--swa-full",): {"value": False},  # :1690
    ("-cmoe", "--cpu-moe"): {"value": False},  # :2760
    ("-ncmoe", "--n-cpu-moe"): {"value": True},  # :2767
    ("-kvu", "--kv-unified"): {"value": False, "server": True},  # :1724
    ("-no-kvu", "--no-kv-unified"): {"value": False, "server": True},
    ("--op-offload",): {"value": False},  # :2947
    ("--no-op-offload",): {"value": False},  # :2948
    ("-fit", "--fit"): {"value": True, "choices": ("on", "off")},  # :2868
    ("-sm", "--split-mode"): {"value": True, "choices": ("none", "layer", "row", "tensor")},  # :2806-2860
    ("-ts", "--tensor-split"): {"value": True},
    ("-mg", "--main-gpu"): {"value": True},
    ("--rpc",): {"value": True},  # a comma list of host:port
}
ALL_SPELLINGS = {name for names in LLAMA_OPTIONS for name in names}


def llama_parser(program: str) -> argparse.ArgumentParser:
    """llama.cpp's options as argparse reads them: an unknown flag or a bad value fails the parse."""
    parser = argparse.ArgumentParser(prog=program, exit_on_error=False, allow_abbrev=False)
    for names, option in LLAMA_OPTIONS.items():
        if option.get("server") and program != "llama-server":
            continue
        dest = names[-1].lstrip("-").replace("-", "_")
        if option["value"]:
            choices = option.get("choices")
            parser.add_argument(*names, dest=dest, choices=choices, required=dest in ("model", "fit"))
        else:
            parser.add_argument(*names, dest=dest, action="store_true")
    return parser


def read_command(text: str, program: str) -> tuple[list[str], argparse.Namespace]:
    words = shlex.split(text)
    prefix = words[: words.index(program)]
    return prefix, llama_parser(program).parse_args(words[words.index(program) + 1 :])


def settings_from(ns: argparse.Namespace, program: str = "llama-server") -> LoadSettings:
    """The settings a llama.cpp command line means, read independently of the code that wrote it."""
    return LoadSettings(
        n_gpu_layers=999 if ns.n_gpu_layers == "all" else int(ns.n_gpu_layers),
        n_ctx=int(ns.ctx_size),
        n_batch=int(ns.batch_size),
        n_ubatch=int(ns.ubatch_size),
        n_threads=int(ns.threads),
        n_parallel=int(ns.parallel),
        cache_type_k=ns.cache_type_k,
        cache_type_v=ns.cache_type_v,
        flash_attn=ns.flash_attn,
        use_mmap={"mmap": True, "none": False}[ns.load_mode],
        swa_full=ns.swa_full,
        n_cpu_moe=int(ns.n_cpu_moe or 0),
        cpu_moe=ns.cpu_moe,
        kv_unified=bool(getattr(ns, "kv_unified", False)),
        op_offload=not ns.no_op_offload,
        split_mode=ns.split_mode,
        tensor_split=ns.tensor_split or "",
        main_gpu=int(ns.main_gpu),
        rpc_servers=ns.rpc or "",
    )


SETTINGS = [
    LoadSettings(n_threads=8),
    LoadSettings(n_gpu_layers=37, n_ctx=16384, n_batch=1024, n_ubatch=256, n_threads=12, n_parallel=4,
                 cache_type_k="q8_0", cache_type_v="q8_0", flash_attn="on", use_mmap=False, kv_unified=True),
    LoadSettings(n_gpu_layers=0, n_ctx=2048, flash_attn="off", swa_full=True, op_offload=False, n_threads=1),
    LoadSettings(n_cpu_moe=20, cache_type_k="q4_0", cache_type_v="f16", n_threads=6),
    LoadSettings(cpu_moe=True, n_cpu_moe=5, cache_type_k="iq4_nl", cache_type_v="q5_1", flash_attn="auto"),
    LoadSettings(split_mode="layer", tensor_split="3,1", main_gpu=1, n_threads=4),
    LoadSettings(split_mode="none", main_gpu=2, n_threads=4),
    LoadSettings(rpc_servers="192.168.1.20:50052,192.168.1.21:50052", n_gpu_layers=20, n_threads=4),
]  # fmt: skip
HOSTILE_PATH = '/srv/my models/it\'s $HOME `x` "q" *.gguf'


def test_every_setting_has_a_llama_cpp_spelling_or_is_said_to_have_none() -> None:
    for spec in LOAD_SPECS:
        flag = llama_flag(spec)
        if spec.key == "n_outputs_max":  # Tightfit's own: llama-server has no such option
            assert flag == ""
            continue
        assert flag in ALL_SPELLINGS, f"{spec.key}: {flag} is not a llama.cpp option"
        if spec.flag in ALL_SPELLINGS:  # the declaration's flag is used as it is where it is llama.cpp's
            assert flag == spec.flag


@pytest.mark.parametrize("settings", SETTINGS, ids=range(len(SETTINGS)))
@pytest.mark.parametrize("program", ["llama-server", "llama-cli"])
def test_a_command_reads_back_as_the_same_settings(settings: LoadSettings, program: str) -> None:
    make = llama_server_command if program == "llama-server" else llama_cli_command
    result = make(HOSTILE_PATH, settings)
    prefix, ns = read_command(result.text, program)
    assert prefix == []
    assert ns.model == HOSTILE_PATH  # quoted: the shell gives the path back as it was
    assert ns.fit == "off"  # llama.cpp keeps these values rather than fitting its own
    back = settings_from(ns, program)
    expected = settings if program == "llama-server" else settings.with_values(kv_unified=False)
    if expected.cpu_moe:  # --cpu-moe covers every block: --n-cpu-moe is not written beside it
        back = back.with_values(n_cpu_moe=expected.n_cpu_moe)
    assert back == expected
    if program == "llama-cli" and settings.kv_unified:
        assert any("--kv-unified" in note for note in result.notes)
    assert "\n" not in result.text


def test_numa_pin_is_a_numactl_prefix_and_the_path_stays_one_word() -> None:
    text = llama_server_command(Path("/m/a b.gguf"), LoadSettings(), numa_node=1).text
    prefix, ns = read_command(text, "llama-server")
    assert prefix == ["numactl", "--cpunodebind=1", "--membind=1"]  # as the engine's own launcher
    assert ns.model == "/m/a b.gguf"
    with pytest.raises(ValueError, match="NUMA node"):
        llama_server_command("/m/a.gguf", LoadSettings(), numa_node=-1)


def test_paths_no_command_could_carry_are_refused_in_one_line() -> None:
    for bad in ("/m/a\nrm -rf ~.gguf", "/m/\x1b[31m.gguf", "", "/m/" + "a" * 5000):
        with pytest.raises(ValueError) as caught:
            llama_server_command(bad, LoadSettings())
        assert "\n" not in str(caught.value)


def test_settings_that_do_not_validate_are_not_exported() -> None:
    with pytest.raises(ValueError, match="Micro-batch"):
        llama_server_command("/m/a.gguf", LoadSettings(n_batch=256, n_ubatch=512))


def read_preset(text: str) -> dict[str, dict[str, str]]:
    """llama.cpp's presets grammar (common/preset.cpp of 0c1e57098): [section], key = value, ; and #
    comments; a value ends at a ; or # or the end of the line, and is not unquoted."""
    sections: dict[str, dict[str, str]] = {}
    current = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped[0] in ";#":
            continue
        if header := re.fullmatch(r"\[\s*([^\]]+?)\s*\]", stripped):
            current = header.group(1)
            sections[current] = {}
            continue
        kv = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*=[ \t]*([^;#]*?)[ \t]*", line)
        assert kv, f"not a presets line: {line!r}"
        sections[current][kv.group(1)] = kv.group(2)
    return sections


@pytest.mark.parametrize("settings", SETTINGS, ids=range(len(SETTINGS)))
def test_a_preset_section_reads_back_as_the_same_settings(settings: LoadSettings) -> None:
    result = preset_section("/models/Qwen3.5-27B:Q4_K_M.gguf", settings, numa_node=0)
    sections = read_preset(result.text)
    assert list(sections) == ["Qwen3.5-27B-Q4_K_M"]  # a ':' would be read as a quant tag
    values = sections["Qwen3.5-27B-Q4_K_M"]
    # Every key is an option's long spelling without its dashes, as llama-server writes presets itself.
    long_names = {names[-1].lstrip("-") for names in LLAMA_OPTIONS}
    assert set(values) <= long_names | {"op-offload", "kv-unified"}
    assert values["model"] == "/models/Qwen3.5-27B:Q4_K_M.gguf"
    switches = {"swa-full", "cpu-moe", "kv-unified", "op-offload"}
    words: list[str] = ["--model", values.pop("model")]
    for key, value in values.items():
        if key in switches:  # preset.cpp: a switch is true or false; a false one with a --no- form uses it
            assert value in ("true", "false")
            if value == "false":
                assert key == "op-offload"
                words.append("--no-op-offload")
            else:
                words.append(f"--{key}")
        else:
            words += [f"--{key}", value]
    ns = llama_parser("llama-server").parse_args(words)
    back = settings_from(ns)
    if settings.cpu_moe:
        back = back.with_values(n_cpu_moe=settings.n_cpu_moe)
    assert back == settings
    assert "numactl --cpunodebind=0 --membind=0" in result.text  # said in a comment: a preset cannot pin


def test_a_preset_refuses_a_path_its_format_cannot_hold() -> None:
    for bad in ("/m/a;b.gguf", "/m/a#b.gguf", "/m/a.gguf ", " /m/a.gguf"):
        with pytest.raises(ValueError, match="presets file"):
            preset_section(bad, LoadSettings())
    assert section_name("/x/\u00e9t\u00e9 [v2].gguf") == "t-v2"  # letters llama.cpp's grammar takes, trimmed


def test_kcpps_has_koboldcpp_s_keys_and_values() -> None:
    settings = LoadSettings(
        n_gpu_layers=40, n_ctx=8192, n_batch=1024, n_ubatch=1024, n_threads=6, cache_type_k="q8_0",
        cache_type_v="q8_0", flash_attn="on", use_mmap=False, n_cpu_moe=12,
    )  # fmt: skip
    result = kcpps(HOSTILE_PATH, settings)
    data = json.loads(result.text)
    # koboldcpp 1.102's argparse destinations (koboldcpp.py), which --config sets one by one.
    assert data["model"] == [HOSTILE_PATH] and data["model_param"] == HOSTILE_PATH
    assert data["gpulayers"] == 40 and data["contextsize"] == 8192 and data["batchsize"] == 1024
    assert data["threads"] == 6 and data["quantkv"] == 1 and data["flashattention"] is True
    assert data["usemmap"] is False and data["moecpu"] == 12 and data["useswa"] is True
    assert data["usecuda"] == [] and data["usecpu"] is False
    assert result.notes == ()
    everything = kcpps("/m/a.gguf", LoadSettings(cpu_moe=True, swa_full=True, n_parallel=2, n_ubatch=256))
    data = json.loads(everything.text)
    assert data["moecpu"] == 999 and data["useswa"] is False and data["gpulayers"] == 999
    assert any("micro-batch" in n for n in everything.notes) and any("one request" in n for n in everything.notes)
    split = kcpps("/m/a.gguf", LoadSettings(tensor_split="3,1", main_gpu=1))
    assert "tensor_split" not in json.loads(split.text)
    assert [n for n in split.notes if "not written" in n] == [
        "Tensor split (3,1) not written: set it in koboldcpp's own GPU settings",
        "Main GPU (1) not written: set it in koboldcpp's own GPU settings",
    ]


def test_kcpps_refuses_what_koboldcpp_cannot_take() -> None:
    with pytest.raises(ValueError, match="one KV cache type"):
        kcpps("/m/a.gguf", LoadSettings(cache_type_k="q8_0", cache_type_v="f16"))
    with pytest.raises(ValueError, match="one KV cache type"):
        kcpps("/m/a.gguf", LoadSettings(cache_type_k="q5_1", cache_type_v="q5_1"))
    with pytest.raises(ValueError, match="batch size"):
        kcpps("/m/a.gguf", LoadSettings(n_batch=96, n_ubatch=96))
    with pytest.raises(ValueError, match="at most 262144"):
        kcpps("/m/a.gguf", LoadSettings(n_ctx=524288))


def vendored_arg_cpp() -> Path | None:
    for found in sorted(ROOT.glob("build/llama-bench/*/llama.cpp/common/arg.cpp")):
        return found
    return None


def test_the_table_matches_the_vendored_llama_cpp_where_it_is_here() -> None:
    """llama-cpp-python 0.3.36's vendored llama.cpp (0c1e57098) common/arg.cpp, where `make bench` left it."""
    source = vendored_arg_cpp()
    if source is None:
        pytest.skip("no vendored llama.cpp source in build/ (make bench unpacks it)")
    text = source.read_text(encoding="utf-8", errors="replace")
    # common_arg({names}, ...) and common_arg({names}, {negated names}, ...)
    spelled = set(
        re.findall(r'"(-[^"\s]*)"', " ".join(re.findall(r"common_arg\(\s*(\{[^}]*\}(?:\s*,\s*\{[^}]*\})?)", text)))
    )
    assert spelled >= ALL_SPELLINGS, ALL_SPELLINGS - spelled
    assert "--no-mmap" not in spelled  # this version loads without mmap through --load-mode none
    assert "0c1e57098" in LLAMA_CPP_SOURCE


def tightfit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gui", *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_cli_exports_each_format(demo_model: Path, tmp_path: Path) -> None:
    model = str(demo_model)
    result = tightfit("export", model, "--format", "llama-server", "--ctx", "2048", "--no-mmap", "--threads", "3",
                      "--numa-node", "0")  # fmt: skip
    assert result.returncode == 0, result.stderr
    prefix, ns = read_command(result.stdout, "llama-server")
    assert prefix == ["numactl", "--cpunodebind=0", "--membind=0"]
    assert Path(ns.model) == demo_model.resolve()
    assert settings_from(ns) == LoadSettings(n_ctx=2048, use_mmap=False, n_threads=3)
    result = tightfit("export", model, "--format", "llama-cli", "--no-numa", "--threads", "2")
    assert result.returncode == 0, result.stderr
    assert read_command(result.stdout, "llama-cli")[0] == []
    result = tightfit("export", model, "--format", "preset", "--threads", "2")
    assert result.returncode == 0, result.stderr
    assert read_preset(result.stdout)["SmolLM2-135M-Instruct.Q4_1"]["threads"] == "2"
    out = tmp_path / "smol.kcpps"
    result = tightfit("export", model, "--format", "kcpps", "--threads", "2", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert json.loads(out.read_text())["threads"] == 2
    assert "flash attention" in result.stderr  # auto, written as on: said
    result = tightfit("export", model, "--format", "kcpps", "--cache-type-k", "q8_0")
    assert result.returncode == 2 and "one KV cache type" in result.stderr
    assert result.stderr.count("\n") == 1
