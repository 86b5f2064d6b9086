"""The planner's sentences in a Chinese window: suggestions, notes and errors are composed in English (the CLI and
the log read them unchanged) and shown translated, template by template, in the plan panel, the "will not fit"
dialog, the slow-reply hint, the quant check and the seed's help."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from gguf import LlamaFileType
from PySide6.QtCore import Qt

from gui.commands.plan import format_plan
from gui.core.cards import find_card
from gui.core.gguf_reader import GGUFHeader, read_model
from gui.core.params import LoadSettings
from gui.core.planner import Device, Plan, auto_fit, plan
from gui.core.protocol import RANDOM_SEED, Sampling
from gui.core.quant_check import check_quant
from gui.core.specs import specs_of
from gui.core.speed_hint import SpeedFacts, speed_hint
from gui.services.devices import device_from_card
from gui.services.nvml import Nvml
from gui.ui.i18n import core_text, error_text
from gui.ui.plan_panel import PlanPanel, planner_text
from gui.ui.spec_widgets import help_text
from tests.fake_engine import FakeEngine
from tests.fake_nvml import FakeGpu, FakeNvml
from tests.gguf_factory import write_llama_like
from tests.i18n_kit import chinese, english, english_words
from tests.model_shapes import SHAPES, write_shape
from tests.window_kit import open_window

__all__ = ["chinese", "english"]  # fixtures, used by name

CJK = re.compile(r"[\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]")
RAM_GBS = 50.0  # a host bandwidth, so that partial offloads have a decode ceiling to state


def cards(*keys: str) -> list[Device]:
    return [device_from_card(find_card(k)) for k in keys]


@pytest.fixture(scope="module")
def headers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, GGUFHeader]:
    root = tmp_path_factory.mktemp("shapes")
    names = ("qwen35-27b", "qwen35-27b-q3ks", "llama-70b", "qwen3moe-30b", "gemma2-2b")
    return {n: read_model(write_shape(root / f"{n}.gguf", SHAPES[n])) for n in names}


def shown(qtbot, p: Plan | None, problem: str = "") -> str:
    """What the plan panel says of a plan (its verdict region, as a reader sees it)."""
    panel = PlanPanel()
    qtbot.addWidget(panel)
    panel.show_plan(p, problem)
    return panel.verdict_label.text()


def assert_chinese(text: str) -> None:
    assert CJK.search(text), text
    assert english_words(text) == [], (english_words(text), text)


def test_a_model_too_big_for_a_catalog_card_is_told_what_would_fit_in_chinese(
    qtbot, chinese: None, headers: dict[str, GGUFHeader]
) -> None:
    p = plan(
        headers["qwen35-27b"], LoadSettings(n_ctx=8192, n_parallel=2), cards("v100-16gb"), ram_bandwidth_gbs=RAM_GBS
    )
    assert not p.fits and p.suggestions and p.notes
    ngl = int(re.search(r"--ngl (\d+)", str(p.suggestions[0])).group(1))  # type: ignore[union-attr]
    # The plan's own sentences stay English whatever the window's language: the CLI prints them.
    assert re.fullmatch(
        rf"Put {ngl} of 65 layers on the GPU \(--ngl {ngl}\) to keep the margin, decode ceiling ~\d+ tok/s",
        str(p.suggestions[0]),
    )
    assert "2 parallel slots: each sequence gets 4096 cells of context" in p.notes
    text = shown(qtbot, p)
    assert_chinese(text)
    assert "要放得下，可以：" in text
    assert f"把 65 层中的 {ngl} 层放在 GPU 上（--ngl {ngl}）以保留余量，解码上限约 " in text
    assert "单靠这一项还不够" in text and "只用一个序列而不是 2 个（--parallel 1）" in text
    assert re.search(r"换更小的量化：此文件 \d+\.\d GiB；", text)
    assert "说明：64 个块中有 16 个使用注意力 KV；48 个为每个序列保留固定大小的循环状态" in text
    assert "2 个并行槽位：每个序列分到 4096 个单元的上下文" in text
    # A shorter context that makes it fit, and a partial offload told what then fits on the card.
    big_ctx = plan(headers["qwen35-27b-q3ks"], LoadSettings(n_ctx=131072), cards("v100-16gb"))
    ctx = int(re.search(r"--ctx (\d+)", "\n".join(map(str, big_ctx.suggestions))).group(1))  # type: ignore[union-attr]
    assert any(
        s.startswith(f"Context {ctx} (--ctx {ctx}): \u2212") and s.endswith(", fits") for s in big_ctx.suggestions
    )
    text = shown(qtbot, big_ctx)
    assert_chinese(text)
    assert re.search(rf"上下文 {ctx}（--ctx {ctx}）：\u2212[\d,]+ MiB，可以放下", text)
    s = LoadSettings(n_ctx=8192, n_outputs_max=0)
    layers = auto_fit(headers["qwen35-27b"], s, cards("v100-16gb"), pinned=frozenset({"n_ctx"})).n_gpu_layers
    partial = plan(headers["qwen35-27b"], s.with_values(n_gpu_layers=layers), cards("v100-16gb"))
    assert partial.fits and partial.partial
    text = shown(qtbot, partial)
    assert_chinese(text)
    assert "要在 GPU 上多放一些，可以：" in text and "每个槽位只留一个输出的空间（--n-outputs-max 1）" in text
    assert re.search(r"之后 65 层中能放下 \d+ 层", text)


def test_several_gpus_are_described_in_chinese(qtbot, chinese: None, headers: dict[str, GGUFHeader]) -> None:
    header = headers["llama-70b"]
    two = cards("p40", "t4")
    nothing = plan(header, LoadSettings(tensor_split="0,0,1"), two)
    assert "layers split over 2 GPUs by free memory" in nothing.notes
    text = shown(qtbot, nothing)
    assert_chinese(text)
    assert "各层按空闲显存分布在 2 张 GPU 上" in text
    assert "张量切分没有给这 2 张 GPU 分配任何份额：llama.cpp 改为按空闲显存切分" in text
    text = shown(qtbot, plan(header, LoadSettings(tensor_split="3,1"), two))
    assert_chinese(text)
    assert "各层按张量切分（3,1）分布在 2 张 GPU 上" in text
    text = shown(qtbot, plan(header, LoadSettings(split_mode="none", main_gpu=1), two))
    assert_chinese(text)
    assert f"切分模式 none：模型只在 GPU 1（{two[1].name}）上" in text
    # A plan that cannot be made says why, in the panel, in Chinese; the error itself stays English.
    with pytest.raises(ValueError) as refused:
        plan(header, LoadSettings(split_mode="none", main_gpu=3), two)
    assert str(refused.value) == "main GPU 3 is not one of the 2 GPUs (0-1): llama.cpp refuses the load"
    assert error_text(refused.value, "planner") == "主 GPU 3 不在这 2 张 GPU（0-1）之中：llama.cpp 会拒绝加载"
    text = shown(qtbot, None, error_text(refused.value, "planner"))
    assert_chinese(text)


def test_experts_in_host_memory_and_a_context_past_the_trained_one_in_chinese(
    qtbot, chinese: None, headers: dict[str, GGUFHeader]
) -> None:
    p = plan(
        headers["qwen3moe-30b"], LoadSettings(n_ctx=65536, n_cpu_moe=30), cards("v100-16gb"), ram_bandwidth_gbs=RAM_GBS
    )
    assert "context 65536 is past the trained 8192" in p.notes
    k = int(re.search(r"--n-cpu-moe (\d+)", str(p.suggestions[0])).group(1))  # type: ignore[union-attr]
    assert p.suggestions[0].startswith(f"Every layer on the GPU with the experts of {k} blocks in host memory")
    text = shown(qtbot, p)
    assert_chinese(text)
    assert f"所有层都放在 GPU 上，{k} 个块的专家留在主机内存（--n-cpu-moe {k}），解码上限约 " in text
    assert re.search(r"30 个块的专家留在主机内存（\d+\.\d\d GiB）；它们的注意力在 GPU 上", text)
    assert "上下文 65536 超出了训练上下文 8192" in text
    assert re.search(r"之后只有 \d+ 个块的专家需要放在主机内存", text)
    assert "不把主机内存中的权重暂存到 GPU（--no-op-offload；提示词处理变慢）" in text
    # A plan that fits whole still has its notes: sliding windows, a shared cache, a tied output layer.
    text = shown(
        qtbot, plan(headers["gemma2-2b"], LoadSettings(n_ctx=8192, n_parallel=2, kv_unified=True), cards("v100-16gb"))
    )
    assert_chinese(text)
    assert "滑动窗口层保留 8192 个单元（窗口 4096）" in text and "2 个并行槽位共用一个 8192 单元的缓存" in text
    assert "输出层与 token_embd 共用权重" in text


def test_the_cli_prints_the_same_english_in_a_chinese_process(chinese: None, headers: dict[str, GGUFHeader]) -> None:
    p = plan(headers["llama-70b"], LoadSettings(tensor_split="3,1"), cards("p40", "t4"), ram_bandwidth_gbs=RAM_GBS)
    printed = format_plan(p, "llama-70b.gguf", "catalog")
    assert not CJK.search(printed)
    assert "  note: layers split over 2 GPUs by the tensor split 3,1" in printed.splitlines()
    assert [line.removeprefix("  to fit: ") for line in printed.splitlines() if line.startswith("  to fit: ")] == list(
        p.suggestions
    )
    assert all(planner_text(s) != s for s in (*p.notes, *p.suggestions))


def test_an_english_window_shows_the_sentences_as_the_cli_prints_them(
    english: None, headers: dict[str, GGUFHeader]
) -> None:
    p = plan(
        headers["qwen35-27b"], LoadSettings(n_ctx=8192, n_parallel=2), cards("v100-16gb"), ram_bandwidth_gbs=RAM_GBS
    )
    said = [*p.notes, *p.suggestions]
    assert len(said) > 4 and [planner_text(s) for s in said] == said


def test_the_slow_reply_hint_the_quant_check_and_the_seeds_help_in_chinese(chinese: None, tmp_path: Path) -> None:
    facts = SpeedFacts(
        decode_tok_s=4.0,
        n_gen=200,
        ceiling_tok_s=40.0,
        threads=16,
        logical_cores=16,
        physical_cores=8,
        gpu_offload=True,
        layers_on_gpu=48,
        n_layers=65,
        throttle_reasons=("sw_power_cap",),
    )
    hint = speed_hint(facts)
    assert hint is not None and hint.startswith("4.0 tok/s is 10% of this load's ceiling (40 tok/s): 16 threads use")
    said = planner_text(hint)
    assert_chinese(said)
    assert said.startswith("4.0 tok/s 仅为本次加载上限（40 tok/s）的 10%：16 个线程占满了所有逻辑核")
    assert (
        "试试 7 个线程" in said and "65 层中有 17 层从主机内存运行" in said and "GPU 被限速了（sw_power_cap）" in said
    )
    # Says Q3_K_L (whose mix keeps most weights Q3_K, Q4_K or Q5_K) over Q8_0 tensors.
    path = write_llama_like(
        tmp_path / "x.gguf", quant="Q8_0", file_type=LlamaFileType.MOSTLY_Q3_K_L, n_layer=8, n_ff=768
    )
    check = check_quant(read_model(path))
    assert check.contradicts and "keeps most of them Q3_K or Q4_K or Q5_K, at" in check.problem
    said = core_text("quant_check", check.problem)
    assert_chinese(said)
    assert (
        "大部分为 Q3_K 或 Q4_K 或 Q5_K" in said
        and f"文件头声明为 Q3_K_L（general.file_type {int(LlamaFileType.MOSTLY_Q3_K_L)}）" in said
    )
    seed = next(spec for spec in specs_of(Sampling) if spec.key == "seed")
    assert seed.help == f"Same seed, same settings, same prompt: the same reply ({RANDOM_SEED} picks one at random)."
    said = help_text(seed)
    assert_chinese(said)
    assert f"（{RANDOM_SEED} 表示随机选一个种子）" in said


def test_the_will_not_fit_dialog_lists_the_ways_out_in_chinese(
    qtbot, chinese: None, tmp_path: Path, demo_model: Path
) -> None:
    folder = tmp_path / "models"
    folder.mkdir()
    model = folder / demo_model.name
    shutil.copy(demo_model, model)
    # A card with 640 MiB free: the demo model needs about 695 MiB at 8k context.
    fake = FakeNvml([FakeGpu(name="Tesla P4", total_mib=1024.0, used_mib=384.0)])
    win = open_window(qtbot, folder, model, LoadSettings(n_threads=2, n_ctx=8192), engine=FakeEngine(), nvml=Nvml(fake))
    win.plan_panel.set_engine_offload(True)
    win.plan_panel.margin.setValue(0)
    assert (
        win.features.load.plan is not None
        and win.features.load.plan.verdict == "will not fit"
        and win.features.load.plan.suggestions
    )
    qtbot.mouseClick(win.load_bar.load_button, Qt.MouseButton.LeftButton)
    dialog = win.features.load.overcommit_dialog
    assert dialog is not None and dialog.isVisible()
    ways = dialog.informativeText()
    assert_chinese(ways)
    for sentence in win.features.load.plan.suggestions:
        assert f"• {planner_text(sentence)}" in ways
    assert "--ngl" in ways and "--ctx" in ways
    dialog.reject()
    win.close()
