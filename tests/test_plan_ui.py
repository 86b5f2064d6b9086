"""The memory plan in the window: bar, verdict, auto-fit, verify, the load gate, planning without a GPU."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fake_engine import CUDA_BUILD, FakeEngine
from fake_nvml import FakeGpu, FakeNvml
from model_shapes import SHAPES, write_shape
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QToolTip
from window_kit import load, open_window

from gui.core import protocol as p
from gui.core.cards import find_card
from gui.core.params import LoadSettings
from gui.core.preferences import MEMORY_CHECKS
from gui.core.simulated_gpu import CONTEXT_MIB
from gui.services.nvml import Nvml
from gui.services.settings_store import SettingsStore
from gui.services.system import measure_ram_bandwidth_gbs
from gui.ui.main_window import MainWindow
from gui.ui.param_panel import ParamPanel
from gui.ui.vram_bar import SEGMENTS

TIMEOUT = 120_000
V100 = "v100-16gb"


@pytest.fixture
def models(tmp_path: Path, demo_model: Path) -> Path:
    folder = tmp_path / "models"
    folder.mkdir()
    write_shape(folder / "Qwen3.5-27B-Q4_K_M.gguf", SHAPES["qwen35-27b"])
    write_shape(folder / "Qwen3.5-27B-Q3_K_S.gguf", SHAPES["qwen35-27b-q3ks"])
    shutil.copy(demo_model, folder / demo_model.name)
    return folder


def open_plan_window(
    qtbot, folder: Path, select: Path, real_engine: bool = False, target: str | None = V100, **kw
) -> MainWindow:
    """The window at 8k context, planning for ``target`` (the V100 of the 27B story unless said) when the
    machine has no card of its own; the real engine only where llama.cpp's own figures are the subject."""
    kw.setdefault("engine", None if real_engine else FakeEngine())
    win = open_window(qtbot, folder, select, LoadSettings(n_threads=2, n_ctx=8192), **kw)
    if target is not None and win.plan_panel.current_target().key == "cpu":
        win.plan_panel.select_target(target)
    return win


def test_without_a_gpu_the_window_plans_for_a_picked_card(qtbot, models: Path) -> None:
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q4_K_M.gguf", target=None)
    panel = win.plan_panel
    # No driver here: the plan is for this machine; a card it does not have is a question the user asks.
    assert panel.current_target().key == "cpu" and panel.target_combo.currentText() == "This machine: CPU only"
    assert "this machine's CPU and RAM" in panel.mode_label.text() and "driver" in panel.mode_label.text()
    panel.select_target(V100)
    assert panel.target_combo.currentText().startswith("What if I had a Tesla V100")
    assert "What if" in panel.mode_label.text()
    # Q4_K_M of a 27B at 8k, everything on a 16 GB V100: the plan says it will not fit, and why.
    plan = win.features.load.plan
    assert plan is not None and not plan.fits and plan.verdict == "will not fit"
    assert "Will not fit" in panel.verdict_label.text() and "To make it fit" in panel.verdict_label.text()
    bar = panel.bars[0]
    assert bar.isVisible() and bar.plan is plan.devices[0]
    win.close()


def test_the_bar_follows_the_sliders_and_shows_mib_on_hover(qtbot, models: Path) -> None:
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q3_K_S.gguf")
    bar = win.plan_panel.bars[0]
    assert win.features.load.plan is not None and win.features.load.plan.fits
    kv_before = win.features.load.plan.devices[0].kv_mib
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        win.params.rows["n_ctx"].set_value(32768)
    assert win.features.load.plan.devices[0].kv_mib == pytest.approx(kv_before * 4, rel=1e-6)
    assert win.features.load.plan.fits  # Q3_K_S fits at 32k as well
    # Hover: the first pixels past "other" and the CUDA context are weights.
    image = bar.grab().toImage()
    blue = QColor(next(s.colour for s in SEGMENTS if s.key == "weights_mib"))
    weights_x = next(x for x in range(image.width()) if image.pixelColor(x, bar.height() // 2) == blue)
    assert bar.segment_at(weights_x + 2).startswith("Weights: ")
    assert "MiB" in bar.segment_at(weights_x + 2)
    win.close()


def test_auto_fit_keeps_pins_and_the_margin(qtbot, models: Path) -> None:
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q4_K_M.gguf")
    win.params.rows["n_ctx"].pin.setChecked(True)
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        qtbot.mouseClick(win.plan_panel.auto_fit_button, Qt.MouseButton.LeftButton)
    settings = win.params.settings()
    assert settings.n_ctx == 8192  # pinned
    assert settings.n_gpu_layers < 65  # fewer layers is the only way left
    assert win.features.load.plan is not None and win.features.load.plan.fits
    assert win.features.load.plan.devices[0].free_after_mib >= win.plan_panel.margin.value()
    win.close()


def test_the_users_partial_offload_shows_every_term_and_what_buys_room(qtbot, models: Path) -> None:
    # Q4_K_M at 8k on a V100 with the layers that fit: auto-fit with the context pinned.
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q4_K_M.gguf")
    win.params.rows["n_ctx"].pin.setChecked(True)
    with qtbot.waitSignal(win.features.load.planned, timeout=5000):
        qtbot.mouseClick(win.plan_panel.auto_fit_button, Qt.MouseButton.LeftButton)
    plan = win.features.load.plan
    assert plan is not None and plan.fits and plan.partial
    panel = win.plan_panel
    bar = panel.bars[0]
    bar.resize(800, bar.height())
    bar.grab()  # paint, which lays out the spans the tooltips come from
    shown = {text.split(":")[0] for _, _, text in bar._spans}
    device = plan.devices[0]
    for seg in SEGMENTS:
        if getattr(device, seg.key) >= 1:
            assert seg.label in shown, seg.label
    assert {"Weights", "KV cache", "Recurrent state", "Compute buffer", "CUDA context and runtime"} <= shown
    # host memory names its own terms: the blocks left there keep their KV and recurrent state
    host = panel.host_label.text()
    for word in ("weights", "KV", "recurrent state", "compute", "output"):
        assert word in host, word
    assert f"{plan.layers_on_gpu} of 65 layers on the GPU" in host
    verdict = panel.verdict_label.text()
    assert "To put more on the GPU" in verdict
    assert "q8_0 KV cache" in verdict and "\u2212" in verdict and "layers fit" in verdict
    win.close()


def test_measured_gpus_are_planned_with_their_free_memory(qtbot, models: Path) -> None:
    fake = FakeNvml([FakeGpu(total_mib=16160.0, used_mib=2048.0)])
    engine = FakeEngine(build=CUDA_BUILD)
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q3_K_S.gguf", nvml=Nvml(fake), engine=engine)
    panel = win.plan_panel
    assert panel.current_target().key == "detected"
    assert "Measured" in panel.mode_label.text()
    device = win.features.load.plan.devices[0]
    assert device.other_mib == pytest.approx(2048.0)
    assert device.free_mib == pytest.approx(16160.0 - 2048.0)
    win.close()


def test_a_cpu_only_engine_plans_the_gpus_layers_on_the_cpu(qtbot, models: Path) -> None:
    """NVML sees a V100, the engine was built without CUDA: no plan may promise the GPU."""
    fake = FakeNvml([FakeGpu(total_mib=16160.0, used_mib=300.0)])
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q3_K_S.gguf", nvml=Nvml(fake), target=None)
    panel = win.plan_panel
    assert panel.current_target().key == "detected"  # the measured GPU is still what the machine has
    assert panel.devices() == ()
    assert "GPU layers will run on the CPU" in panel.mode_label.text()
    assert "Doctor" in panel.mode_label.text()
    assert (
        win.features.load.plan is not None
        and win.features.load.plan.devices == ()
        and win.features.load.plan.layers_on_gpu == 0
    )
    assert "0 of" in panel.host_label.text() and "layers on the GPU" in panel.host_label.text()
    # The same machine once the engine is rebuilt for the card plans on the card again.
    panel.set_engine_offload(True)
    assert len(panel.devices()) == 1 and win.features.load.plan is not None and win.features.load.plan.layers_on_gpu > 0
    win.close()


def test_simulated_card_is_labelled(qtbot, models: Path) -> None:
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q3_K_S.gguf", simulate=find_card("p40"))
    assert win.plan_panel.current_target().simulated
    assert "SIMULATED" in win.plan_panel.mode_label.text()
    assert "SIMULATED" in win.windowTitle()
    assert win.features.load.plan.devices[0].name.startswith("SIMULATED")
    win.close()


@pytest.mark.engine
def test_verify_shows_llama_cpp_figures_beside_the_estimate(qtbot, models: Path) -> None:
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q3_K_S.gguf", real_engine=True)
    win.plan_panel.select_target("cpu")
    with qtbot.waitSignal(win.features.load.verified, timeout=TIMEOUT) as got:
        qtbot.mouseClick(win.plan_panel.verify_button, Qt.MouseButton.LeftButton)
    result: p.DryRunResult = got.args[0]
    assert result.ok, result.error
    text = win.plan_panel.verify_label.text()
    assert "llama.cpp's own dry run" in text
    assert f"KV {result.kv_mib:,.2f} MiB (plan {win.features.load.plan.kv_mib:,.2f})" in text
    assert result.kv_mib == pytest.approx(win.features.load.plan.kv_mib, abs=0.01)
    assert result.recurrent_mib == pytest.approx(win.features.load.plan.recurrent_mib, abs=0.01)
    win.close()


@pytest.mark.engine
def test_a_load_that_will_not_fit_is_stopped_with_a_way_out(qtbot, models: Path, demo_model: Path) -> None:
    # A card in this machine with 640 MiB free: the demo model needs about 695 MiB at 8k context.
    fake = FakeNvml([FakeGpu(name="Small GPU", total_mib=1024.0, used_mib=384.0)])
    win = open_plan_window(qtbot, models, models / demo_model.name, real_engine=True, nvml=Nvml(fake))
    panel = win.plan_panel
    assert panel.current_target().key == "detected"
    # The engine here is the CPU build, which would run every layer on the CPU; the gate is for an engine
    # built for the card, as the set-up builds it on a machine with one. (The load itself runs on the CPU.)
    panel.set_engine_offload(True)
    panel.margin.setValue(0)
    assert win.features.load.plan is not None and win.features.load.plan.verdict == "will not fit"
    qtbot.mouseClick(win.load_bar.load_button, Qt.MouseButton.LeftButton)
    dialog = win.features.load.overcommit_dialog
    assert dialog is not None and dialog.isVisible()
    assert "will not fit" in dialog.windowTitle()
    assert "--ngl" in dialog.informativeText() and "--ctx" in dialog.informativeText()
    assert not win.features.session.state.busy  # nothing was sent to the engine
    # Cancel keeps everything as it was ...
    dialog.reject()
    assert win.features.load.overcommit_dialog is None and not win.features.session.state.busy
    # ... "Load anyway" loads, after llama.cpp's own dry run.
    qtbot.mouseClick(win.load_bar.load_button, Qt.MouseButton.LeftButton)
    dialog = win.features.load.overcommit_dialog
    anyway = next(b for b in dialog.buttons() if b.text() == "Load anyway")
    with qtbot.waitSignals([win.features.load.verified, win.features.load.model_loaded], timeout=TIMEOUT):
        anyway.click()
    assert win.features.session.state.ready
    win.close()


def test_cpu_only_ceiling_uses_the_measured_ram_bandwidth(qtbot, models: Path) -> None:
    win = open_window(
        qtbot,
        models,
        models / "Qwen3.5-27B-Q3_K_S.gguf",
        LoadSettings(n_threads=2, n_ctx=4096),
        engine=FakeEngine(),
        measure_ram=measure_ram_bandwidth_gbs,  # measured here, as the window does
        also=lambda w: [w.features.machine.ram_measured],
    )
    win.plan_panel.select_target("cpu")
    assert win.features.planning.ram_bandwidth_gbs is not None and win.features.planning.ram_bandwidth_gbs > 0.5
    plan = win.features.load.plan
    assert plan is not None and plan.predicted_tg_tok_s is not None
    # Every weight but the embedding table is read once per token from host memory.
    bytes_per_token = win.features.planning.ram_bandwidth_gbs * 1e9 / plan.predicted_tg_tok_s
    assert 0.8 * plan.weights_mib * (1 << 20) < bytes_per_token <= plan.weights_mib * (1 << 20)
    assert "Decode ceiling" in win.plan_panel.verdict_label.text()
    win.close()


@pytest.mark.engine
def test_verify_on_a_cpu_build_compares_like_with_like(qtbot, models: Path) -> None:
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q3_K_S.gguf", real_engine=True)
    win.plan_panel.select_target(V100)
    assert win.features.session.state.build is not None
    assert not win.features.session.state.build.gpu_offload
    with qtbot.waitSignal(win.features.load.verified, timeout=TIMEOUT) as got:
        qtbot.mouseClick(win.plan_panel.verify_button, Qt.MouseButton.LeftButton)
    result: p.DryRunResult = got.args[0]
    text = win.plan_panel.verify_label.text()
    assert "no GPU offload, so both are for a CPU-only load" in text
    weights = result.weights_bytes / (1 << 20)
    assert f"weights {weights:,.1f} MiB (plan {weights:,.1f})" in text  # equal to the byte on the CPU
    win.close()


def test_a_planner_failure_is_a_line_in_the_panel_not_a_dialog(
    qtbot, models: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    win = open_plan_window(qtbot, models, models / "Qwen3.5-27B-Q3_K_S.gguf")

    def broken(*_args: object, **_kwargs: object) -> None:
        raise IndexError("list index out of range")

    monkeypatch.setattr("gui.core.planning_context.plan", broken)
    monkeypatch.setattr("gui.core.planning_context.auto_fit", broken)
    win.params.rows["n_ctx"].set_value(4096)
    assert win.features.load.plan is None
    assert win.plan_panel.verdict_label.text() == "Cannot plan this file: list index out of range"
    qtbot.mouseClick(win.plan_panel.auto_fit_button, Qt.MouseButton.LeftButton)
    assert "Cannot plan this file" in win.plan_panel.verdict_label.text()
    assert win.isVisible()
    win.close()


def test_typed_values_out_of_range_are_brought_in_and_said(qtbot, models: Path, demo_model: Path) -> None:
    win = open_plan_window(qtbot, models, models / demo_model.name)
    layers, context = win.params.rows["n_gpu_layers"], win.params.rows["n_ctx"]
    for row, typed in ((layers, "99"), (context, "99999999")):
        row.spin.lineEdit().selectAll()
        QTest.keyClicks(row.spin, typed)
        QTest.keyClick(row.spin, Qt.Key.Key_Return)
    assert layers.value() == 31  # llama.cpp's "99" means every layer: all 31 of the demo model
    assert context.value() == 8192  # the context it was trained for
    note = win.params.note.text()
    assert note == "Context: 99,999,999 is more than the context this model was trained for (8,192), so 8,192 is used."
    layers.spin.lineEdit().selectAll()
    QTest.keyClicks(layers.spin, "999")
    QTest.keyClick(layers.spin, Qt.Key.Key_Return)
    assert win.params.note.text() == "GPU layers: 999 is more than there are, so all 31 are used."
    assert win.params.note.isVisible()
    # Also said beside the box, where the user is looking: the line may be scrolled out of view.
    assert QToolTip.isVisible() and "GPU layers: 999 is more than there are, so all 31 are used." in QToolTip.text()
    win.close()


def test_a_card_the_machine_does_not_have_never_stops_a_load(qtbot, models: Path, demo_model: Path) -> None:
    engine = FakeEngine()
    win = open_plan_window(qtbot, models, models / demo_model.name, engine=engine)
    panel = win.plan_panel
    panel.select_target("custom")
    panel.margin.setValue(0)
    panel.custom_vram.setValue(640)
    assert win.features.load.plan is not None and win.features.load.plan.verdict == "will not fit"
    with qtbot.waitSignal(win.features.load.model_loaded, timeout=TIMEOUT):
        qtbot.mouseClick(win.load_bar.load_button, Qt.MouseButton.LeftButton)
    assert win.features.load.overcommit_dialog is None and [path for path, _ in engine.loads] == [
        str(models / demo_model.name)
    ]
    win.close()


def test_the_experts_settings_show_for_a_mixture_of_experts_model_only(qtbot) -> None:
    settings = LoadSettings(n_threads=2, n_outputs_max=0, kv_unified=True, op_offload=False)
    panel = ParamPanel(settings)
    qtbot.addWidget(panel)
    panel.show()
    experts = panel.rows["n_cpu_moe"]
    # the settings most users never touch are flags and stored values, not widgets
    assert not {"n_outputs_max", "kv_unified", "op_offload"} & (set(panel.rows) | set(panel.switches))
    panel.set_model_limits(24, 32768, n_expert=0)
    assert not experts.spin.isVisible() and not panel.switches["cpu_moe"].isVisible()
    panel.set_model_limits(48, 32768, n_expert=128)
    assert experts.spin.isVisible() and panel.switches["cpu_moe"].isVisible()
    experts.set_value(60)
    assert experts.value() == 48  # no more blocks than the model has
    got = panel.settings()
    assert (got.n_cpu_moe, got.n_outputs_max, got.kv_unified, got.op_offload) == (48, 0, True, False)


def test_after_a_load_the_drivers_reading_is_set_beside_the_plan_and_corrects_the_next(
    qtbot, models: Path, demo_model: Path, tmp_path: Path
) -> None:
    """NVML's per-process memory of the engine after a load, against the plan for the settings sent; the
    difference is kept per card, driver and build, and the plan adds it to the card's overhead term."""
    gpu = FakeGpu(total_mib=16160.0, used_mib=300.0)
    system = {"driver_version": "570.133.20", "nvml_version": "12.570.133.20", "cuda_driver_version": 12080}
    nvml = Nvml(FakeNvml([gpu], system=system))
    engine = FakeEngine(build=CUDA_BUILD)
    store = SettingsStore(tmp_path / "settings.json")
    win = open_plan_window(qtbot, models, models / demo_model.name, nvml=nvml, engine=engine, store=store, target=None)
    qtbot.waitUntil(lambda: win.features.machine.driver_version == "570.133.20", timeout=TIMEOUT)
    panel = win.plan_panel
    assert win.features.load.plan is not None and panel.current_target().key == "detected"
    planned = win.features.load.plan.devices[0].needed_mib
    base_overhead = win.features.load.plan.devices[0].overhead_mib
    # What the driver will list for the engine once it has loaded: 150 MiB more than the plan.
    gpu.readings["processes"] = [{"pid": engine.pid, "used_bytes": int((planned + 150) * (1 << 20)), "name": "python"}]
    with qtbot.waitSignal(win.features.machine.memory_measured, timeout=TIMEOUT) as measured:
        load(qtbot, win)
    (check,) = measured.args[0]
    assert check.planned_mib == pytest.approx(planned) and check.difference_mib == pytest.approx(150, abs=1)
    assert "+150 MiB" in panel.measured_label.text() and panel.measured_label.isVisible()
    (key,) = store.read(MEMORY_CHECKS)
    assert "570.133.20" in key and "CUDA" in key and store.read(MEMORY_CHECKS)[key] == [pytest.approx(150, abs=1)]
    # From now on the plan for this card adds what was measured, and says so.
    assert win.features.load.plan.devices[0].overhead_mib == pytest.approx(base_overhead + 150, abs=1)
    assert "corrected by +150 MiB from 1 load on this card" in panel.mode_label.text()
    # A second load measures against the uncorrected plan again: the difference does not count itself twice.
    with qtbot.waitSignal(win.features.machine.memory_measured, timeout=TIMEOUT) as measured:
        load(qtbot, win)
    assert measured.args[0][0].difference_mib == pytest.approx(150, abs=1)
    assert "from 2 loads" in panel.mode_label.text()
    win.close()


def test_on_a_simulated_card_the_load_is_measured_and_corrects_the_plan_as_on_a_real_one(
    qtbot, models: Path, demo_model: Path, tmp_path: Path
) -> None:
    """--simulate: the simulated card holds the plan's buffers plus its own CUDA context (CONTEXT_MIB, not the
    planner's SM-scaled term), its driver lists that for the engine, and the window checks, records and
    corrects as it does on a real card, saying SIMULATED throughout; an unload frees the card."""
    store = SettingsStore(tmp_path / "settings.json")
    engine = FakeEngine()
    win = open_plan_window(
        qtbot,
        models,
        models / demo_model.name,
        engine=engine,
        store=store,
        target=None,
        simulate=find_card("v100-16gb"),
    )
    panel = win.plan_panel
    assert panel.current_target().simulated and win.features.load.plan is not None
    device = win.features.load.plan.devices[0]
    planner_overhead = device.overhead_mib
    assert planner_overhead == pytest.approx(200 + 3 * 80)  # the planner's own term for a V100's 80 SMs
    with qtbot.waitSignal(win.features.machine.memory_measured, timeout=TIMEOUT) as measured:
        load(qtbot, win)
    (check,) = measured.args[0]
    assert check.simulated and check.planned_mib == pytest.approx(device.needed_mib)
    assert check.measured_mib == pytest.approx(device.needed_mib - planner_overhead + CONTEXT_MIB)
    assert check.difference_mib == pytest.approx(CONTEXT_MIB - planner_overhead)
    assert "the simulated card reports" in panel.measured_label.text() and "-40 MiB" in panel.measured_label.text()
    (key,) = store.read(MEMORY_CHECKS)
    assert "|simulated|" in key
    assert win.features.load.plan.devices[0].overhead_mib == pytest.approx(
        CONTEXT_MIB
    )  # corrected to what the card held
    assert "SIMULATED card" in panel.mode_label.text()
    assert "corrected by -40 MiB from 1 load on this card" in panel.mode_label.text()
    gpu = win.features.services.gpu.simulated.gpus[0]
    sample = gpu.sample(0.0)
    assert [(p.pid, round(p.used_mib)) for p in sample.processes] == [(engine.pid, round(check.measured_mib))]
    with qtbot.waitSignal(win.features.session.changed, timeout=TIMEOUT, check_params_cb=lambda s, _b: not s.ready):
        win.features.load.unload()
    assert gpu.memory_used_mib == 0 and not gpu.sample(0.0).processes
    win.close()


def test_an_engine_the_driver_does_not_list_leaves_the_plan_as_it_is(qtbot, models: Path, demo_model: Path) -> None:
    nvml = Nvml(FakeNvml([FakeGpu(total_mib=16160.0)], system={"driver_version": "570.133.20"}))
    win = open_plan_window(
        qtbot, models, models / demo_model.name, nvml=nvml, engine=FakeEngine(build=CUDA_BUILD), target=None
    )
    load(qtbot, win)
    qtbot.wait(200)  # the reading runs in the background; nothing comes of it
    assert not win.plan_panel.measured_label.isVisible() and "corrected" not in win.plan_panel.mode_label.text()
    win.close()
