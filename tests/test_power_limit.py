"""The power cap: the root helper's strict arguments and NVML checks, and the client's outcomes in words.

The helper is tested through its `main(argv, nvml)` with the fake NVML, and as a real subprocess. The
client runs real fake `pkexec`/`sudo` scripts put first on PATH, which exit as polkit/sudo would (with
pkexec's own messages) or run the helper against the recorded V100; an in-process runner covers the rest.
The packaging tests read the documented commands out of packaging/README.md and check them (visudo, sed,
systemd-analyze where installed), so the docs and what they describe cannot drift apart.
"""

from __future__ import annotations

import configparser
import getpass
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import pynvml
import pytest
from fake_nvml import FakeNvml

from gui.core.gpu_sample import GpuSample
from gui.core.simulated_gpu import SimulatedGpu
from gui.services import power_limit
from gui.services.nvml import Nvml
from gui.services.power_limit import (
    HELPER_EXIT_CODES,
    HELPER_PATH,
    SETUP_HINT,
    SETUP_SECTION,
    Outcome,
    PowerLimiter,
    RunOutput,
)

ROOT = Path(__file__).resolve().parent.parent
HELPER = ROOT / "packaging" / "tightfit-power-helper"
UNIT = ROOT / "packaging" / "tightfit-power-cap@.service"
PACKAGING_README = ROOT / "packaging" / "README.md"
TESTS = Path(__file__).resolve().parent

# What pkexec prints on stderr for each way it fails (polkit's src/programs/pkexec.c).
PKEXEC_NO_AGENT = "Error executing command as another user: No authentication agent found.\n"
PKEXEC_NOT_AUTHORISED = "Error executing command as another user: Not authorized\n\nThis incident has been reported.\n"
PKEXEC_DISMISSED = "Error executing command as another user: Request dismissed\n"
PKEXEC_NO_AUTHORITY = "Error getting authority: Could not connect: No such file or directory\n"
SUDO_REFUSED = "sudo: a password is required\n"


def load_helper() -> ModuleType:
    loader = importlib.machinery.SourceFileLoader("tightfit_power_helper", str(HELPER))
    spec = importlib.util.spec_from_loader(loader.name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


helper = load_helper()


def v100() -> FakeNvml:
    return FakeNvml.replay("nvml_v100_session.json")


def run_main(argv: list[str], nvml: object, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict, str]:
    code = helper.main(argv, nvml)
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert len(lines) <= 1, "the helper prints at most one JSON line"
    return code, json.loads(lines[0]) if lines else {}, err


# --- the helper's arguments -----------------------------------------------------------------------------

BAD_ARGUMENTS = [
    ["0; rm -rf /", "200"],
    ["0", "$(id)"],
    ["0", "`id`"],
    ["1 2", "200"],
    ["0", "200 "],
    [" 0", "200"],
    ["-1", "200"],
    ["0", "-200"],
    ["0", "+200"],
    ["0", "200W"],
    ["0", "200.5"],
    ["0", "200.0"],
    ["0", "2e2"],
    ["0x0", "200"],
    ["0", "0x10"],
    ["0", "٢٠٠"],  # Arabic-Indic digits: str.isdigit() says yes, the helper says no
    ["0", "２００"],  # full-width digits
    ["0", "²"],
    ["", "200"],
    ["0", ""],
    ["0", "2" * 5000],
    ["0", "0200"],  # leading zeros: one spelling per number
    ["00", "200"],
    ["64", "200"],  # beyond any machine's GPU count
    ["0", "0"],
    ["0", "2001"],
    ["0", "99999999999999999999"],
    ["0", "200\n"],
    ["0", "200\x00"],
    ["--help", "200"],
    ["0"],
    [],
    ["0", "200", "300"],
    ["0", "200", "--force"],
]


@pytest.mark.parametrize("argv", BAD_ARGUMENTS, ids=repr)
def test_bad_arguments_exit_2_with_one_line_and_touch_nothing(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    fake = v100()
    calls_before = list(fake.calls)
    code, report, err = run_main(argv, fake, capsys)
    assert code == helper.EXIT_BAD_ARGUMENTS == 2
    assert report == {} and len(err.strip().splitlines()) == 1 and err.startswith("tightfit-power-helper: ")
    assert fake.calls == calls_before and fake.set_limits == []  # NVML not even initialised


@pytest.mark.parametrize(
    ("argv", "expected"), [(["0", "200"], (0, 200)), (["3", "75"], (3, 75)), (["63", "2000"], (63, 2000))]
)
def test_good_arguments_parse(argv: list[str], expected: tuple[int, int]) -> None:
    assert helper.parse_arguments(argv) == expected


def test_applies_within_the_constraints_and_reads_back(capsys: pytest.CaptureFixture[str]) -> None:
    fake = v100()
    code, report, err = run_main(["0", "200"], fake, capsys)
    assert code == 0 and err == ""
    assert fake.set_limits == [(0, 200_000)]  # NVML takes milliwatts
    assert report == {
        "status": "applied", "exit_code": 0, "gpu": 0, "requested_w": 200, "enforced_w": 200.0,
        "previous_w": 250.0, "min_w": 100.0, "max_w": 250.0,
    }  # fmt: skip
    assert fake.calls[0] == "nvmlInit" and fake.calls[-1] == "nvmlShutdown"


def test_the_enforced_limit_is_what_is_reported_not_what_was_asked(capsys: pytest.CaptureFixture[str]) -> None:
    fake = v100()
    fake.gpus[0].readings["external_limit_mw"] = 180_000  # another limiter holds the board lower
    code, report, _ = run_main(["0", "200"], fake, capsys)
    assert code == 0 and report["enforced_w"] == 180.0


@pytest.mark.parametrize("watts", ["99", "251", "2000"])
def test_out_of_the_cards_range_exits_4_without_setting(watts: str, capsys: pytest.CaptureFixture[str]) -> None:
    fake = v100()
    code, report, err = run_main(["0", watts], fake, capsys)
    assert code == 4 and fake.set_limits == []
    assert (report["status"], report["min_w"], report["max_w"]) == ("out of range", 100.0, 250.0)
    assert "outside GPU 0's range 100-250 W" in err


def test_boundaries_of_the_range_are_allowed(capsys: pytest.CaptureFixture[str]) -> None:
    fake = v100()
    assert run_main(["0", "100"], fake, capsys)[0] == 0 and run_main(["0", "250"], fake, capsys)[0] == 0
    assert fake.set_limits == [(0, 100_000), (0, 250_000)]


def test_no_such_gpu_exits_3(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = run_main(["1", "200"], v100(), capsys)
    assert code == 3 and report["gpu_count"] == 1 and "there is no GPU 1 (found 1)" in err


def test_unsupported_power_management_exits_5(capsys: pytest.CaptureFixture[str]) -> None:
    fake = v100()
    fake.gpus[0].failures["nvmlDeviceGetPowerManagementLimitConstraints"] = pynvml.NVML_ERROR_NOT_SUPPORTED
    code, report, _ = run_main(["0", "200"], fake, capsys)
    assert code == 5 and report["status"] == "not supported" and fake.set_limits == []


def test_without_root_exits_6(capsys: pytest.CaptureFixture[str]) -> None:
    fake = v100()
    fake.gpus[0].failures["nvmlDeviceSetPowerManagementLimit"] = pynvml.NVML_ERROR_NO_PERMISSION
    code, report, err = run_main(["0", "200"], fake, capsys)
    assert code == 6 and report["status"] == "no permission" and "run as root" in err


def test_no_driver_exits_7(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = run_main(["0", "200"], FakeNvml.replay("nvml_no_driver.json"), capsys)
    assert code == 7 and report["status"] == "nvml unavailable" and "NVML could not start" in err


def test_a_driver_not_loaded_yet_exits_8_so_the_boot_unit_can_retry(capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeNvml([], init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED)  # early boot: module not loaded yet
    code, report, err = run_main(["0", "200"], fake, capsys)
    assert code == helper.EXIT_NOT_READY == 8 and report["status"] == "not ready"
    assert "not loaded yet" in err and fake.set_limits == []
    assert "8  the NVIDIA driver is not loaded yet" in (helper.__doc__ or "")
    assert HELPER_EXIT_CODES[8] is Outcome.DRIVER_UNAVAILABLE


def test_a_missing_nvml_library_is_not_waited_for_7(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = run_main(["0", "200"], FakeNvml([], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND), capsys)
    assert code == 7 and report["status"] == "nvml unavailable"


def test_a_lost_gpu_is_an_nvml_failure_7(capsys: pytest.CaptureFixture[str]) -> None:
    fake = v100()
    fake.gpus[0].lost = True
    code, report, err = run_main(["0", "200"], fake, capsys)
    assert code == 7 and report["status"] == "nvml error" and "GPU is lost" in err and fake.set_limits == []


def helper_subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    # -I as in the helper's shebang; this interpreter so the venv's pynvml is found.
    return subprocess.run(
        [sys.executable, "-I", str(HELPER), *args], capture_output=True, text=True, timeout=60, env={}, check=False
    )


@pytest.mark.parametrize("args", [("0; id", "200"), ("0", "200W"), ("0",), ("0", "200", "1")])
def test_real_helper_refuses_bad_arguments_before_loading_nvml(args: tuple[str, ...]) -> None:
    done = helper_subprocess(*args)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("tightfit-power-helper: ")


def test_real_helper_without_a_driver_exits_7_with_a_json_line() -> None:
    done = helper_subprocess("0", "200")  # this machine has no NVIDIA driver
    assert done.returncode == 7
    assert json.loads(done.stdout)["status"] == "nvml unavailable" and "NVML could not start" in done.stderr


def test_helper_file_is_an_isolated_executable_script() -> None:
    assert os.access(HELPER, os.X_OK)
    first = HELPER.read_text().splitlines()[0]
    assert first == "#!/usr/bin/python3 -I"
    source = HELPER.read_text()
    assert "shell=True" not in source and "os.environ" not in source and "subprocess" not in source


# --- the client: deciding -------------------------------------------------------------------------------


def v100_sample(**changes: int) -> GpuSample:
    fake = v100()
    for key, value in changes.items():
        fake.gpus[0].failures[key] = value
    return Nvml(fake).sample(0)


@pytest.mark.parametrize(
    ("target", "watts", "clamped", "words"),
    [
        (200, 200, False, "cap at 200 W"),
        (199.6, 200, True, "cap at 200 W"),
        (50, 100, True, "below this card's minimum; capping at 100 W"),
        (300, 250, True, "above this card's maximum; capping at 250 W"),
        (250, 250, False, "already capped at 250 W"),
    ],
)
def test_check_clamps_to_the_constraints(target: float, watts: int, clamped: bool, words: str) -> None:
    decision = PowerLimiter().check(target, v100_sample())
    assert decision.allowed and decision.watts == watts and decision.clamped is clamped and words in decision.message


def test_check_refuses_where_limits_cannot_be_set() -> None:
    limiter = PowerLimiter()
    unsupported = v100_sample(nvmlDeviceGetPowerManagementLimitConstraints=pynvml.NVML_ERROR_NOT_SUPPORTED)
    decision = limiter.check(200, unsupported)
    assert not decision.allowed and decision.watts is None and "not supported by this GPU" in decision.message
    fake = v100()
    fake.gpus[0].lost = True
    assert "fell off the bus" in limiter.check(200, Nvml(fake).sample(0)).message
    assert not limiter.check(200, None).allowed
    for bad in (float("nan"), float("inf"), "200"):
        assert not limiter.check(bad, v100_sample()).allowed  # type: ignore[arg-type]


# --- the client: running the helper through real fake pkexec / sudo scripts ------------------------------


def install_fake_tool(
    bin_dir: Path, name: str, behaviour: str, external_limit_mw: int | None = None, stderr: str | None = None
) -> Path:
    """A stand-in for pkexec or sudo: exits with a code and a message, or checks its argv and runs the helper
    with fake NVML. Every call is logged to bin_dir/calls.log, so a test can say which tools ran."""
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    prefix = ["--disable-internal-agent"] if name == "pkexec" else ["-n", "--"]
    if stderr is None:
        stderr = SUDO_REFUSED if name == "sudo" else PKEXEC_NO_AGENT
    script.write_text(
        f"""#!{sys.executable}
import sys
sys.path.insert(0, {str(TESTS)!r})
with open({str(bin_dir / "calls.log")!r}, "a") as log:
    log.write({name!r} + "\\n")
behaviour = {behaviour!r}
if behaviour != "run":
    sys.stderr.write({stderr!r})
    sys.exit(int(behaviour))
args = sys.argv[1:]
if args[:{len(prefix)}] != {prefix!r} or args[{len(prefix)}] != {str(HELPER)!r}:
    print("unexpected argv", args, file=sys.stderr)
    sys.exit(99)
import importlib.machinery, importlib.util
from fake_nvml import FakeNvml
loader = importlib.machinery.SourceFileLoader("helper", args[{len(prefix)}])
spec = importlib.util.spec_from_loader("helper", loader)
helper = importlib.util.module_from_spec(spec)
loader.exec_module(helper)
fake = FakeNvml.replay("nvml_v100_session.json")
if {external_limit_mw!r} is not None:
    fake.gpus[0].readings["external_limit_mw"] = {external_limit_mw!r}
sys.exit(helper.main(args[{len(prefix) + 1}:], fake))
"""
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def calls(bin_dir: Path) -> list[str]:
    log = bin_dir / "calls.log"
    return log.read_text().split() if log.exists() else []


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "bin"
    path.mkdir()
    monkeypatch.setenv("PATH", f"{path}{os.pathsep}/nonexistent")
    # pkexec and sudo are looked for where the system keeps them: here, only our fakes can be found.
    monkeypatch.setattr(power_limit, "SYSTEM_BIN", (path,))
    return path


def test_pkexec_applies_and_reports_the_enforced_limit(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "run")
    install_fake_tool(bin_dir, "sudo", "run")
    result = PowerLimiter(helper=HELPER).apply(0, 200)
    assert (result.outcome, result.enforced_w, result.exit_code, result.ok) == (Outcome.APPLIED, 200.0, 0, True)
    assert result.message == "GPU 0 capped at 200 W (via pkexec)" and result.via == "pkexec"
    assert calls(bin_dir) == ["pkexec"]  # sudo is only for when pkexec cannot ask


def test_a_lower_enforced_limit_is_reported_as_clamped(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "run", external_limit_mw=180_000)
    result = PowerLimiter(helper=HELPER).apply(0, 200)
    assert result.outcome is Outcome.CLAMPED and result.enforced_w == 180.0 and "enforces 180 W" in result.message


# --- the client: when pkexec cannot ask, the sudo -n rule; when the user says no, nothing ---------------


@pytest.mark.parametrize(
    ("stderr", "why"),
    [
        (PKEXEC_NO_AGENT, "pkexec found no polkit authentication agent"),
        (PKEXEC_NOT_AUTHORISED, "rejects even the right password"),  # polkit 127's socket-activated helper
        (PKEXEC_NO_AUTHORITY, "could not reach polkit"),
        ("pkexec must be setuid root\n", "not setuid root"),
        ("Error executing /usr/libexec/tightfit-power-helper: Permission denied\n", "Permission denied"),
    ],
    ids=["no agent", "not authorised", "no polkitd", "not setuid", "other"],
)
def test_when_pkexec_cannot_ask_the_sudo_rule_applies_the_cap(bin_dir: Path, stderr: str, why: str) -> None:
    install_fake_tool(bin_dir, "pkexec", "127", stderr=stderr)
    install_fake_tool(bin_dir, "sudo", "run")
    result = PowerLimiter(helper=HELPER).apply(0, 200)
    assert (result.outcome, result.enforced_w, result.via) == (Outcome.APPLIED, 200.0, "sudo -n")
    assert result.message.startswith("GPU 0 capped at 200 W (via sudo -n; ") and why in result.message
    assert calls(bin_dir) == ["pkexec", "sudo"]


def test_a_dismissed_dialog_is_an_answer_and_sudo_is_not_tried(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "126", stderr=PKEXEC_DISMISSED)
    install_fake_tool(bin_dir, "sudo", "run")  # would succeed: it must not be asked
    result = PowerLimiter(helper=HELPER).apply(0, 200)
    assert (result.outcome, result.exit_code, result.via, result.ok) == (Outcome.CANCELLED, 126, "pkexec", False)
    assert "dismissed" in result.message and "sudo -n was not tried" in result.message
    assert calls(bin_dir) == ["pkexec"]


def test_when_both_fail_the_message_says_why_each_did_and_where_the_set_up_is(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "127", stderr=PKEXEC_NO_AGENT)
    install_fake_tool(bin_dir, "sudo", "1", stderr=SUDO_REFUSED)
    result = PowerLimiter(helper=HELPER).apply(0, 200)
    assert (result.outcome, result.exit_code, result.via) == (Outcome.NO_PERMISSION, 1, "sudo -n")
    assert result.message == (
        "pkexec found no polkit authentication agent to ask for the password, and sudo -n was refused "
        "(sudo: a password is required): run a polkit agent or add the sudoers rule for the helper "
        f"(see {SETUP_HINT})"
    )
    assert calls(bin_dir) == ["pkexec", "sudo"]


def test_without_sudo_a_failed_pkexec_says_what_to_install(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "127", stderr=PKEXEC_NOT_AUTHORISED)
    result = PowerLimiter(helper=HELPER).apply(0, 200)
    assert (result.outcome, result.exit_code, result.via) == (Outcome.NO_PERMISSION, 127, "pkexec")
    assert "polkit did not authorise pkexec" in result.message and "sudo is not installed" in result.message
    assert "install sudo and add the sudoers rule" in result.message and SETUP_HINT in result.message


def test_a_limiter_for_pkexec_only_does_not_fall_back(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "127", stderr=PKEXEC_NO_AGENT)
    install_fake_tool(bin_dir, "sudo", "run")
    result = PowerLimiter(helper=HELPER, method="pkexec").apply(0, 200)
    assert result.outcome is Outcome.NO_PERMISSION and "sudo -n was not tried" in result.message
    assert calls(bin_dir) == ["pkexec"]


@pytest.mark.parametrize(("watts", "outcome"), [(300, Outcome.OUT_OF_RANGE), (200, Outcome.NO_SUCH_GPU)])
def test_helper_refusals_come_through_pkexec_and_are_not_retried(bin_dir: Path, watts: int, outcome: Outcome) -> None:
    install_fake_tool(bin_dir, "pkexec", "run")
    install_fake_tool(bin_dir, "sudo", "run")
    index = 0 if outcome is Outcome.OUT_OF_RANGE else 5
    result = PowerLimiter(helper=HELPER).apply(index, watts)
    assert result.outcome is outcome and result.exit_code in (3, 4) and result.message.endswith("(via pkexec)")
    assert calls(bin_dir) == ["pkexec"]  # the helper ran and answered: another path would answer the same


def test_sudo_is_used_where_pkexec_is_missing(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "sudo", "run")
    limiter = PowerLimiter(helper=HELPER)
    assert limiter.command(0, 200) == [str(bin_dir / "sudo"), "-n", "--", str(HELPER), "0", "200"]
    result = limiter.apply(0, 200)
    assert (result.outcome, result.message) == (Outcome.APPLIED, "GPU 0 capped at 200 W (via sudo -n)")


def test_sudo_when_configured_even_with_pkexec_present(bin_dir: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "126")
    install_fake_tool(bin_dir, "sudo", "1")
    result = PowerLimiter(helper=HELPER, method="sudo").apply(0, 200)
    assert result.outcome is Outcome.NO_PERMISSION and "sudoers rule" in result.message
    assert "password is required" in result.message and SETUP_HINT in result.message
    assert calls(bin_dir) == ["sudo"]


def test_neither_pkexec_nor_sudo(bin_dir: Path) -> None:
    result = PowerLimiter(helper=HELPER).apply(0, 200)
    assert result.outcome is Outcome.NO_PERMISSION and "neither pkexec nor sudo" in result.message
    assert SETUP_HINT in result.message


def test_helper_missing(bin_dir: Path, tmp_path: Path) -> None:
    install_fake_tool(bin_dir, "pkexec", "run")
    result = PowerLimiter(helper=tmp_path / "nope").apply(0, 200)
    assert result.outcome is Outcome.HELPER_MISSING and "packaging/README.md" in result.message


class RecordingRunner:
    def __init__(self, result: RunOutput | Exception) -> None:
        self.result = result
        self.argv: list[str] = []
        self.timeout = 0.0

    def __call__(self, argv: Sequence[str], timeout_s: float) -> RunOutput:
        self.argv, self.timeout = list(argv), timeout_s
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def limiter_with(result: RunOutput | Exception, **kwargs: object) -> tuple[PowerLimiter, RecordingRunner]:
    runner = RecordingRunner(result)
    which = {"pkexec": "/usr/bin/pkexec", "sudo": "/usr/bin/sudo"}.get
    return PowerLimiter(helper=HELPER, runner=runner, which=which, **kwargs), runner  # type: ignore[arg-type]


class ToolRunner:
    """Answers per tool (pkexec, sudo) and records which ran, in order."""

    def __init__(self, **answers: RunOutput | Exception) -> None:
        self.answers = answers
        self.ran: list[str] = []

    def __call__(self, argv: Sequence[str], timeout_s: float) -> RunOutput:
        tool = Path(argv[0]).name
        self.ran.append(tool)
        answer = self.answers[tool]
        if isinstance(answer, Exception):
            raise answer
        return answer


def limiter_for(runner: ToolRunner) -> PowerLimiter:
    which = {"pkexec": "/usr/bin/pkexec", "sudo": "/usr/bin/sudo"}.get
    return PowerLimiter(helper=HELPER, runner=runner, which=which)


def test_a_pkexec_that_cannot_be_run_falls_back_to_sudo() -> None:
    runner = ToolRunner(pkexec=PermissionError(13, "Permission denied"), sudo=RunOutput(0, '{"enforced_w": 200}', ""))
    result = limiter_for(runner).apply(0, 200)
    assert result.outcome is Outcome.APPLIED and runner.ran == ["pkexec", "sudo"]
    assert "via sudo -n; pkexec could not be run" in result.message


def test_a_pkexec_timeout_is_not_retried_through_sudo() -> None:
    # The dialog may still be open and the helper may yet run: a second path could apply it twice.
    runner = ToolRunner(pkexec=subprocess.TimeoutExpired("pkexec", 30), sudo=RunOutput(0, "", ""))
    result = limiter_for(runner).apply(0, 200)
    assert (result.outcome, result.via, runner.ran) == (Outcome.TIMED_OUT, "pkexec", ["pkexec"])


def test_the_helper_not_ready_comes_through_in_words() -> None:
    report = '{"status": "not ready", "message": "the NVIDIA driver is not loaded yet (Driver Not Loaded)"}'
    runner = ToolRunner(pkexec=RunOutput(8, report, "tightfit-power-helper: the NVIDIA driver is not loaded yet"))
    result = limiter_for(runner).apply(0, 200)
    assert result.outcome is Outcome.DRIVER_UNAVAILABLE and "not loaded yet" in result.message
    assert runner.ran == ["pkexec"]


@pytest.mark.parametrize(
    ("code", "outcome"),
    [
        (2, Outcome.BAD_ARGUMENTS),
        (3, Outcome.NO_SUCH_GPU),
        (4, Outcome.OUT_OF_RANGE),
        (5, Outcome.NOT_SUPPORTED),
        (6, Outcome.NO_PERMISSION),
        (7, Outcome.DRIVER_UNAVAILABLE),
        (9, Outcome.FAILED),
    ],
)
def test_every_helper_exit_code_maps_to_an_outcome(code: int, outcome: Outcome) -> None:
    limiter, _ = limiter_with(RunOutput(code, "", "tightfit-power-helper: something specific\n"))
    result = limiter.apply(0, 200)
    assert result.outcome is outcome and result.exit_code == code and "something specific" in result.message


def test_a_timeout_says_nothing_was_confirmed() -> None:
    limiter, runner = limiter_with(subprocess.TimeoutExpired("pkexec", 30), timeout_s=30)
    result = limiter.apply(0, 200)
    assert result.outcome is Outcome.TIMED_OUT and runner.timeout == 30 and "nothing was confirmed" in result.message


def test_the_command_is_an_argv_of_plain_integers() -> None:
    limiter, runner = limiter_with(RunOutput(0, '{"enforced_w": 200.0}\n', ""))
    limiter.apply(0, 200)
    assert runner.argv == ["/usr/bin/pkexec", "--disable-internal-agent", str(HELPER), "0", "200"]
    for index, watts in [("0; id", 200), (0, "200"), (0, 200.5), (-1, 200), (True, 200), (0, 0)]:
        assert limiter.apply(index, watts).outcome is Outcome.BAD_ARGUMENTS  # type: ignore[arg-type]


def test_restore_default_reads_the_default_from_nvml() -> None:
    limiter, runner = limiter_with(RunOutput(0, '{"enforced_w": 250.0}\n', ""), nvml=Nvml(v100()))
    result = limiter.restore_default(0)
    assert result.outcome is Outcome.APPLIED and runner.argv[-2:] == ["0", "250"]
    fake = v100()
    fake.gpus[0].failures["nvmlDeviceGetPowerManagementDefaultLimit"] = pynvml.NVML_ERROR_NOT_SUPPORTED
    limiter, runner = limiter_with(RunOutput(0, "", ""), nvml=Nvml(fake))
    assert limiter.restore_default(0).outcome is Outcome.NOT_SUPPORTED and runner.argv == []


def test_read_back_through_nvml() -> None:
    fake = v100()
    nvml = Nvml(fake)
    assert PowerLimiter().read_back(nvml, 0) == 250.0
    fake.gpus[0].readings["power_limit_mw"] = 200_000
    assert PowerLimiter().read_back(nvml, 0) == 200.0


def test_simulated_cards_are_capped_without_privileges() -> None:
    gpu = SimulatedGpu("v100-pcie-16gb")
    limiter, runner = limiter_with(RunOutput(0, "", ""), simulators={0: gpu})
    result = limiter.apply(0, 200)
    assert (result.outcome, result.enforced_w) == (Outcome.APPLIED, 200.0) and runner.argv == []
    assert limiter.read_back(Nvml(FakeNvml([])), 0) == 200.0 and gpu.sample().power_limit_w == 200.0
    assert limiter.apply(0, 50).outcome is Outcome.CLAMPED and gpu.power_limit_w == 100.0
    assert limiter.restore_default(0).enforced_w == 250.0
    assert limiter.check(150, gpu.sample()).watts == 150


def test_bad_limiter_configuration() -> None:
    with pytest.raises(ValueError):
        PowerLimiter(method="doas")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        PowerLimiter(timeout_s=0)


# --- packaging --------------------------------------------------------------------------------------------


def test_polkit_policy_declares_the_action_for_the_installed_helper() -> None:
    tree = ET.parse(ROOT / "packaging" / "org.tightfit.power-limit.policy")
    (action,) = tree.getroot().findall("action")
    assert action.get("id") == "org.tightfit.power-limit"
    assert action.findtext("defaults/allow_active") == "auth_admin_keep"
    assert action.findtext("defaults/allow_any") == "auth_admin"
    annotations = {a.get("key"): a.text for a in action.findall("annotate")}
    assert annotations["org.freedesktop.policykit.exec.path"] == "/usr/libexec/tightfit-power-helper"


def test_systemd_unit_reapplies_the_cap_with_exactly_two_arguments() -> None:
    text = (ROOT / "packaging" / "tightfit-power-cap@.service").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    exec_start = next(line for line in lines if line.startswith("ExecStart="))
    assert exec_start.removeprefix("ExecStart=").split() == ["/usr/libexec/tightfit-power-helper", "%i", "${WATTS}"]
    assert "EnvironmentFile=/etc/tightfit/power-cap/%i.conf" in lines and "Type=oneshot" in lines
    assert "WantedBy=multi-user.target" in lines


def unit_file() -> configparser.ConfigParser:
    # systemd units are INI-like; keys are case-sensitive and none of ours repeats.
    parser = configparser.ConfigParser(interpolation=None, strict=True, comment_prefixes=("#", ";"))
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(UNIT.read_text())
    return parser


def test_systemd_unit_retries_only_while_the_driver_is_not_ready_and_gives_up() -> None:
    unit = unit_file()
    service = unit["Service"]
    assert service["Type"] == "oneshot" and service["Restart"] == "on-failure"  # the one Restart= oneshot allows
    prevented = {int(code) for code in service["RestartPreventExitStatus"].split()}
    retried = set(HELPER_EXIT_CODES) - prevented
    assert retried == {helper.EXIT_NOT_READY}, "only 'not loaded yet' is worth another start"
    assert {helper.EXIT_BAD_ARGUMENTS, helper.EXIT_NO_SUCH_GPU, helper.EXIT_NVML_UNAVAILABLE} <= prevented
    # The start limit must bite before the interval ends, or the unit would retry for ever.
    restart_s = int(service["RestartSec"])
    interval_s, burst = int(unit["Unit"]["StartLimitIntervalSec"]), int(unit["Unit"]["StartLimitBurst"])
    assert restart_s > 0 and burst > 1 and burst * restart_s < interval_s
    assert int(service["TimeoutStartSec"]) > 0  # a hung NVML call must end (oneshot has no timeout by default)
    assert "nvidia-persistenced.service" in unit["Unit"]["After"].split()


def test_systemd_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze not found (Debian: apt-get install systemd); the INI checks above still ran")
    # verify wants ExecStart= to exist: point it at the helper in this checkout, change nothing else.
    text = UNIT.read_text().replace(str(HELPER_PATH), str(HELPER))
    instance = tmp_path / "tightfit-power-cap@0.service"
    instance.write_text(text)
    done = subprocess.run(
        [analyze, "verify", "--man=no", str(instance)], capture_output=True, text=True, timeout=60, check=False
    )
    # Unknown keys are only warned about (exit 0), so any output at all is a failure too.
    assert done.returncode == 0 and done.stdout.strip() == "" and done.stderr.strip() == "", done.stderr


def documented(pattern: str) -> re.Match[str]:
    match = re.search(pattern, PACKAGING_README.read_text(), re.MULTILINE)
    assert match is not None, f"packaging/README.md no longer documents {pattern!r}"
    return match


def sudoers_line() -> str:
    """The sudoers rule exactly as packaging/README.md tells people to write it, for this user."""
    line = documented(r'^echo "(?P<line>[^"]+)" > tightfit\.sudoers$')["line"]
    return line.replace("$USER", getpass.getuser())


def test_the_documented_sudoers_rule_allows_the_helper_alone_without_a_password() -> None:
    line = sudoers_line()
    user, rule = line.split(" ", 1)
    assert user == getpass.getuser() and rule == f"ALL=(root) NOPASSWD: {HELPER_PATH}"
    # What the client runs must be what the rule allows: sudo -n -- <the helper> GPU WATTS.
    argv = PowerLimiter(which={"sudo": "/usr/bin/sudo"}.get).command(0, 200)
    assert argv == ["/usr/bin/sudo", "-n", "--", str(HELPER_PATH), "0", "200"]
    documented(r"sudo visudo -cf tightfit\.sudoers && sudo install -m 0440 -o root -g root tightfit\.sudoers "
               r"/etc/sudoers\.d/tightfit$")  # fmt: skip


def test_the_documented_sudoers_rule_passes_visudo(tmp_path: Path) -> None:
    # /usr/sbin is not on every user's PATH.
    candidates = [shutil.which("visudo"), "/usr/sbin/visudo", "/sbin/visudo"]
    visudo = next((path for path in candidates if path and os.access(path, os.X_OK)), None)
    if visudo is None:
        pytest.skip("visudo not found: install the sudo package (Debian: apt-get install sudo) to check the rule")
    rule = tmp_path / "tightfit"
    rule.write_text(sudoers_line() + "\n")
    done = subprocess.run([visudo, "-cf", str(rule)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "parsed OK" in done.stdout, done.stdout + done.stderr
    broken = tmp_path / "broken"  # visudo really checks: the same rule without the colon is refused
    broken.write_text(sudoers_line().replace("NOPASSWD:", "NOPASSWD") + "\n")
    done = subprocess.run([visudo, "-cf", str(broken)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0


def test_the_documented_helper_environment_only_changes_the_interpreter(tmp_path: Path) -> None:
    venv = documented(r"^sudo python3 -m venv (?P<venv>\S+)$")["venv"]
    documented(rf"^sudo {re.escape(venv)}/bin/python3 -m pip install nvidia-ml-py$")
    script = documented(rf"^sudo sed -i '(?P<script>[^']+)' {re.escape(str(HELPER_PATH))}$")["script"]
    installed = tmp_path / "tightfit-power-helper"
    shutil.copy(HELPER, installed)
    subprocess.run(["sed", "-i", script, str(installed)], check=True, timeout=60)
    before, after = HELPER.read_text().splitlines(), installed.read_text().splitlines()
    assert after[0] == f"#!{venv}/bin/python3 -I" and after[1:] == before[1:]
    assert os.access(installed, os.X_OK)


def test_docs_say_how_long_polkit_keeps_the_password() -> None:
    policy = ET.parse(ROOT / "packaging" / "org.tightfit.power-limit.policy").getroot()
    assert policy.findtext("action/defaults/allow_active") == "auth_admin_keep"  # the wording below depends on it
    for doc in (ROOT / "README.md", PACKAGING_README, ROOT / "packaging" / "org.tightfit.power-limit.policy"):
        text = " ".join(doc.read_text().split())
        assert "five minutes" in text, doc
        assert "once per session" not in text, doc
        for found in re.finditer("for the session", text):  # other things (a hub token) may last the session
            around = text[max(0, found.start() - 150) : found.end() + 150].lower()
            assert not any(word in around for word in ("polkit", "pkexec", "password")), (doc, around)


def test_the_set_up_section_that_messages_point_to_exists() -> None:
    assert f"## {SETUP_SECTION}\n" in PACKAGING_README.read_text()
    assert SETUP_SECTION in (ROOT / "README.md").read_text()


def _fake_tool(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    tool.chmod(0o755)
    return tool


def test_pkexec_and_sudo_are_never_taken_from_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the user can write to first on the window's PATH must not decide what runs as the helper."""
    planted = tmp_path / "planted"
    _fake_tool(planted, "pkexec")
    _fake_tool(planted, "sudo")
    monkeypatch.setenv("PATH", f"{planted}{os.pathsep}{os.environ.get('PATH', '')}")
    assert shutil.which("pkexec") == str(planted / "pkexec")  # what a PATH look-up would run
    # The real system folders: whatever is found there (or nothing), never the planted one.
    for method in ("auto", "pkexec", "sudo"):
        argv = PowerLimiter(helper=HELPER, method=method).command(0, 200)  # type: ignore[arg-type]
        assert argv is None or (Path(argv[0]).parent in power_limit.SYSTEM_BIN and not argv[0].startswith(str(planted)))
    from gui.services.doctor_facts import Machine

    assert Machine().system_tool("pkexec") in (None, "/usr/bin/pkexec", "/bin/pkexec")
    # System folders that have them: /usr/bin first, then /bin.
    usr_bin, bin_ = tmp_path / "usr" / "bin", tmp_path / "bin"
    monkeypatch.setattr(power_limit, "SYSTEM_BIN", (usr_bin, bin_))
    assert power_limit.system_tool("pkexec") is None and PowerLimiter(helper=HELPER).command(0, 200) is None
    _fake_tool(bin_, "sudo")
    assert PowerLimiter(helper=HELPER).command(0, 200) == [str(bin_ / "sudo"), "-n", "--", str(HELPER), "0", "200"]
    _fake_tool(usr_bin, "pkexec")
    _fake_tool(usr_bin, "sudo")
    attempts = PowerLimiter(helper=HELPER)._attempts(0, 200)
    assert [argv[0] for _via, argv in attempts] == [str(usr_bin / "pkexec"), str(usr_bin / "sudo")]
    (usr_bin / "pkexec").chmod(0o644)  # not executable: not a program to run
    assert power_limit.system_tool("pkexec") is None
