"""The window in Simplified Chinese: the .ts files hold every string of the code, all translated, with their
placeholders and shortcut keys kept; plural forms come out right in both languages; the language follows the
system locale or the preference; and every widget of the real window, every tab opened, shows no English
text outside the allow-list (model names, units, llama.cpp flags, numbers, paths)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QLocale
from PySide6.QtWidgets import (
    QLabel,
    QTabWidget,
)

from gui.core.params import LoadSettings
from gui.core.preferences import LANGUAGE
from gui.core.protocol import EngineBuild
from gui.services.settings_store import SettingsStore
from gui.ui.i18n import LanguageBox, Tr, compiled, install_language, resolve, source_path
from tests.fake_engine import FakeEngine
from tests.i18n_kit import chinese, english, english_words, extract, untranslated
from tests.window_kit import open_window

__all__ = ["chinese", "english"]  # fixtures, used by name


def test_the_ts_files_hold_every_string_of_the_code_all_translated() -> None:
    """The extraction finds nothing new, nothing vanished and nothing unfinished (run
    `python bench/i18n_extract.py` after changing a string, then translate what it added)."""
    assert extract.problems() == []
    strings = extract.collect()
    assert len(strings) > 50
    assert {m.context for m in strings.values()} >= {"params", "planner", "language"}


def test_the_extraction_refuses_an_f_string(tmp_path: Path) -> None:
    (tmp_path / "gui" / "ui").mkdir(parents=True)
    (tmp_path / "gui" / "ui" / "view.py").write_text('tr = Tr("view")\nname = "x"\ntr(f"Loaded {name}")\n')
    with pytest.raises(extract.Problem, match="f-string"):
        list(extract._window_messages(tmp_path / "gui" / "ui" / "view.py"))


def _fields(text: str) -> list[str]:
    """What a translation must keep as it is: {placeholders}, %n and %1, HTML tags."""
    return sorted(re.findall(r"\{[a-z_0-9]*(?:[:!][^}]*)?\}|%n|%\d|</?[a-z]+[^>]*>", text))


def test_translations_keep_placeholders_tags_and_shortcut_keys() -> None:
    entries = extract.read_ts(source_path("zh_CN"))
    assert entries
    for entry in entries.values():
        message = entry.message
        for form in entry.translation:
            assert _fields(form) == _fields(message.source), (message.context, message.source, form)
            if re.search(r"&[A-Za-z]", message.source):
                # A Chinese label keeps its key as "(&C)", the way Chinese Qt programs write it.
                assert re.search(r"\(&[A-Z]\)", form), (message.source, form)
            words_in = re.sub(r"\{[a-z_0-9]*\}", "", form)  # a translation of placeholders alone may equal its source
            assert not (form.strip() == message.source.strip() and re.search(r"[a-z]{4}", words_in)), form
    plural = [e for e in entries.values() if e.message.numerus]
    assert plural and all(len(e.translation) == 1 for e in plural), "Chinese has one plural form"
    english = extract.read_ts(source_path("en"))
    assert english and all(len(e.translation) == 2 for e in english.values())


def test_plural_forms_in_english_and_chinese(english: None) -> None:
    tr = Tr("model_picker")
    text = "%n layer(s)"
    assert (tr(text, n=1), tr(text, n=2)) == ("1 layer", "2 layers")
    install_language("zh_CN")
    assert (tr(text, n=1), tr(text, n=2)) == ("1 层", "2 层")


def test_the_language_follows_the_system_locale_or_the_choice(english: None) -> None:
    assert resolve("system", QLocale(QLocale.Language.Chinese, QLocale.Country.China)) == "zh_CN"
    assert resolve("system", QLocale(QLocale.Language.Chinese, QLocale.Country.Taiwan)) == "zh_CN"
    assert resolve("system", QLocale(QLocale.Language.German, QLocale.Country.Germany)) == "en"
    assert resolve("en", QLocale(QLocale.Language.Chinese, QLocale.Country.China)) == "en"
    assert resolve("zh_CN", QLocale(QLocale.Language.English, QLocale.Country.UnitedStates)) == "zh_CN"
    assert install_language("zh_CN") == "zh_CN"
    assert Tr("language")("Language") == "语言"
    assert QLocale().language() == QLocale.Language.Chinese
    assert install_language("en") == "en"
    assert Tr("language")("Language") == "Language"


def test_a_checkout_compiles_the_translation_into_the_cache(tmp_path: Path) -> None:
    """No .qm in the source tree: the first start compiles one from the .ts with PySide6's lrelease, named
    by the .ts's content, and reuses it after."""
    assert not source_path("zh_CN").with_suffix(".qm").exists(), "a compiled .qm is built, never committed"
    first = compiled("zh_CN", tmp_path)
    assert first is not None and first.parent == tmp_path and first.read_bytes()[:4] == b"\x3c\xb8\x64\x18"
    stamp = first.stat().st_mtime_ns
    assert compiled("zh_CN", tmp_path) == first and first.stat().st_mtime_ns == stamp


def test_the_language_box_keeps_the_choice(qtbot, tmp_path: Path, english: None) -> None:
    store = SettingsStore(tmp_path / "settings.json")
    box = LanguageBox(store)
    qtbot.addWidget(box)
    assert box.currentData() == "system" and box.count() == 3
    box.activated.emit(box.findData("zh_CN"))
    assert SettingsStore(tmp_path / "settings.json").read(LANGUAGE) == "zh_CN"
    assert LanguageBox(SettingsStore(tmp_path / "settings.json")).currentData() == "zh_CN"


# ---- walking the window in Chinese ---------------------------------------------------------------------

# The views translated so far, by the window's attribute holding each (the walk looks inside these only).
VIEWS = (
    "params",
    "plan_panel",
    "picker",
    "load_bar",  # Load, Unload, the engine's log, the load's progress and status line
    "theme_box",
    "language_box",
    "tabs_titles",
    "chat",
    "history",
    "doctor",
    "models_tab",
    "journey",
    "export_menu",
    "tune",
    "power_sweep",
    "serve_panel",
    "monitor",
    "statusBar",  # the engine line, the theme and language boxes, messages
)


def test_the_allow_list_lets_names_and_units_through_and_catches_english() -> None:
    assert english_words("SmolLM2-135M-Instruct.Q4_1.gguf 12.0 GiB, --n-gpu-layers 99, 200 W, 83 °C") == []
    assert english_words("显存 12.0 / 15.8 GiB — 放得下") == []
    assert english_words("Load the model") == ["Load", "the", "model"]


# The engine as the installed llama-cpp-python 0.3.36 describes itself (llama_print_system_info on an AVX-512 CPU).
REAL_BUILD = EngineBuild(
    backend="CPU",
    gpu_offload=False,
    llama_cpp_python="0.3.36",
    system_info="CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | "
    "AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |",
)


def test_the_window_in_chinese_shows_no_english_in_the_views_done(qtbot, demo_model: Path, chinese: None) -> None:
    win = open_window(
        qtbot, demo_model.parent, demo_model, LoadSettings(n_threads=2, n_ctx=1024), engine=FakeEngine(build=REAL_BUILD)
    )
    for tabs in win.findChildren(QTabWidget):
        for index in range(tabs.count()):  # every tab and page opened once
            tabs.setCurrentIndex(index)
            qtbot.wait(1)
    found: list[str] = []
    for name in VIEWS:
        if name == "tabs_titles":
            for tabs in win.findChildren(QTabWidget):
                found += [f"tab: {t!r}" for t in (tabs.tabText(i) for i in range(tabs.count())) if english_words(t)]
            continue
        view = getattr(win, name)
        found += [f"{name}: {line}" for line in untranslated(view() if name == "statusBar" else view)]
    assert found == [], "\n".join(found)


def test_the_doctor_in_chinese_translates_its_titles_why_and_fixes(qtbot, chinese: None) -> None:
    """Every check the Doctor shows, in Chinese: the words gui/core/doctor.py writes as constants, and the evidence,
    whys and fixes it composes from figures, versions, paths and names (tests/test_i18n_doctor.py walks them all)."""
    from gui.core.doctor import DoctorFacts, GpuFacts, run_checks
    from gui.core.protocol import EngineBuild
    from gui.ui.doctor_view import DoctorView

    v100 = GpuFacts(index=0, name="Tesla V100-PCIE-16GB", compute_capability="7.0", persistence_mode=False)
    facts = DoctorFacts(gpus=(v100,), engine=None, settings=LoadSettings(n_threads=64, n_batch=256, n_ubatch=512))
    checks = run_checks(facts)
    assert EngineBuild and len(checks) > 20
    view = DoctorView()
    qtbot.addWidget(view)
    view.show_checks(checks)
    found = untranslated(view)
    assert found == [], "\n".join(found)
    shown = [label.text() for label in view.findChildren(QLabel)]
    assert "引擎支持 GPU" in shown or "驱动支持这张显卡" in shown


def test_the_journey_headers_and_the_export_menu_in_chinese(qtbot, tmp_path: Path, chinese: None) -> None:
    """What the walk cannot reach: the Journey's column tips (header items) and the Export menu's actions."""
    from gui.core.journey import STAGE_COLUMNS
    from gui.services.journey import JourneyStore
    from gui.ui.background import Background
    from gui.ui.export_menu import ExportMenu
    from gui.ui.journey_view import JourneyView

    view = JourneyView(JourneyStore(tmp_path / "journey.sqlite3"))
    qtbot.addWidget(view)
    headers = [view.table.horizontalHeaderItem(i) for i in range(len(STAGE_COLUMNS))]
    texts = [(h.text(), h.toolTip()) for h in headers if h is not None]
    assert texts[0][0] == "阶段" and len(texts) == len(STAGE_COLUMNS)
    assert [t for pair in texts for t in pair if english_words(t)] == []
    assert english_words(view.summary.text()) == []
    background = Background("export-test")
    try:
        menu = ExportMenu(lambda: None, LoadSettings, lambda: None, background)
        qtbot.addWidget(menu)
        actions = [a.text() for a in menu.menu().actions() if not a.isSeparator()]
        assert len(actions) == 7 and "保存调优卡…" in actions
        assert [t for t in actions if english_words(t)] == []
    finally:
        view.shutdown()
        background.shutdown(wait=True)


def test_the_monitors_alerts_read_in_chinese_with_their_figures_and_reasons(chinese: None) -> None:
    from gui.core import gpu_sample
    from gui.core.alerts import AlertRules
    from gui.core.gpu_sample import GpuSample
    from gui.ui.monitor import alert_text

    rules = AlertRules(83.0)
    first = GpuSample(index=1, timestamp=0.0, name="Tesla P40", ecc_corrected=2, throttle_reasons=())
    assert rules.check(first) == []  # the baseline
    hot = GpuSample(
        index=1, timestamp=1.0, name="Tesla P40", temperature_c=85.0, ecc_corrected=3,
        throttle_reasons=(gpu_sample.POWER_CAP, gpu_sample.THERMAL_SLOWDOWN),
    )  # fmt: skip
    temperature, throttle, ecc = rules.check(hot)
    assert temperature.message == "GPU 1 is at 85 °C (alert threshold 83 °C)"  # English where English is read
    assert alert_text(temperature) == "GPU 1 温度达到 85 °C（告警阈值 83 °C）"
    assert throttle.message == f"GPU 1 is throttling: {gpu_sample.POWER_CAP}, {gpu_sample.THERMAL_SLOWDOWN}"
    assert alert_text(throttle).startswith("GPU 1 正在降频：") and english_words(alert_text(throttle)) == []
    assert alert_text(ecc) == "GPU 1：新增 1 个已纠正的 ECC 显存错误（驱动加载以来共 3 个）"
    lost = rules.check(GpuSample(index=1, timestamp=2.0, name="Tesla P40", lost=True))
    assert [alert_text(a) for a in lost] == ["GPU 1（Tesla P40）已从总线上掉线：没有读数"]
