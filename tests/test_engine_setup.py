"""The set-up's engine step on a real machine: toolkits found by running nvcc (fake ones in a folder, and the
real one where this machine has it), the driver through NVML's fake, the requirement from pyproject.toml,
the stamp and wheel cache with pip stood in for (nothing is compiled), and `tightfit engine` as users call it."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import subprocess
import sys
import tomllib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pynvml
import pytest
from fake_nvml import FakeGpu, FakeNvml

from gui.commands import engine_setup
from gui.commands.engine_setup import ProgressLine, build_step
from gui.core.cards import find_card
from gui.core.engine_route import (
    NO_AMX_ARGS,
    RPC_ARGS,
    DriverFacts,
    RoutePlan,
    Toolkit,
    archs_for_version,
    host_cmake_args,
    plan_route,
)
from gui.services import engine_facts
from gui.services.engine_facts import find_toolkits, plan_here, read_cpu_flags, read_driver, read_stamp, requirement
from gui.services.engine_install import Installed, InstallFailed, ensure_engine, wheel_key
from gui.services.nvml import Nvml

ROOT = Path(__file__).resolve().parent.parent
REAL_CUDA_13 = Path("/usr/local/cuda-13.0/bin/nvcc")
REQUIREMENT = requirement()


# ---- toolkits --------------------------------------------------------------------------------------


def fake_nvcc(folder: Path, release: str, archs: Sequence[int] | None = None, *, exit_status: int = 0) -> Path:
    """An nvcc that answers as NVIDIA's does (version, architectures, its folder in a dry run); without
    ``archs`` it is an old nvcc that has no --list-gpu-arch."""
    folder.mkdir(parents=True, exist_ok=True)
    listing = "printf '%s\\n' " + " ".join(f"compute_{a}" for a in archs) if archs is not None else "exit 1"
    script = folder / "nvcc"
    script.write_text(
        "#!/bin/sh\n"
        f"[ {exit_status} -ne 0 ] && exit {exit_status}\n"
        'case "$1" in\n'
        "  --version) printf 'nvcc: NVIDIA (R) Cuda compiler driver\\n"
        f"Cuda compilation tools, release {release}, V{release}.99\\n';;\n"
        f"  --list-gpu-arch) {listing};;\n"
        '  -v) echo "#$ _HERE_=$(cd "$(dirname "$0")" && pwd -P)" >&2;;\n'
        "  *) exit 1;;\n"
        "esac\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script


def wrapper(folder: Path, target: Path) -> Path:
    """A script that runs another nvcc, as some systems put on PATH (/usr/local/bin/nvcc here)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "nvcc"
    script.write_text(f'#!/bin/sh\nexec {target} "$@"\n')
    script.chmod(0o755)
    return script


def test_toolkits_are_found_on_path_in_cuda_home_and_under_the_root(tmp_path: Path) -> None:
    root = tmp_path / "usr-local"
    on_path = fake_nvcc(tmp_path / "opt" / "cuda-12.2" / "bin", "12.2", [60, 61, 70, 75])
    home = fake_nvcc(tmp_path / "home-cuda" / "bin", "12.6", [61, 70])
    in_root = fake_nvcc(root / "cuda-12.8" / "bin", "12.8", [61, 70, 75, 120])
    (root / "cuda").symlink_to(root / "cuda-12.8")  # the usual symlink: the same toolkit, counted once
    found = find_toolkits(str(on_path.parent), str(home.parent.parent), [str(root)])
    assert [(t.path, t.version) for t in found] == [
        (str(on_path.resolve()), (12, 2)),
        (str(home.resolve()), (12, 6)),
        (str(in_root.resolve()), (12, 8)),
    ]
    assert found[2].archs == (61, 70, 75, 120)


def test_a_wrapper_on_path_counts_as_the_toolkit_it_runs(tmp_path: Path) -> None:
    root = tmp_path / "usr-local"
    real = fake_nvcc(root / "cuda-12.4" / "bin", "12.4", [61, 70])
    shim = wrapper(tmp_path / "bin", real)
    found = find_toolkits(str(shim.parent), "", [str(root)])
    assert [t.path for t in found] == [str(real.resolve())]


def test_an_old_nvcc_gets_its_architectures_from_the_table(tmp_path: Path) -> None:
    old = fake_nvcc(tmp_path / "cuda-12.1" / "bin", "12.1", None)
    (toolkit,) = find_toolkits(str(old.parent), "", [])
    assert toolkit.version == (12, 1) and toolkit.archs == archs_for_version((12, 1))


def test_a_broken_or_hanging_nvcc_is_not_found_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = fake_nvcc(tmp_path / "broken" / "bin", "12.4", [70], exit_status=3)
    hanging = tmp_path / "hanging" / "bin" / "nvcc"
    hanging.parent.mkdir(parents=True)
    hanging.write_text("#!/bin/sh\nexec sleep 30\n")
    hanging.chmod(0o755)
    not_executable = tmp_path / "plain" / "bin" / "nvcc"
    not_executable.parent.mkdir(parents=True)
    not_executable.write_text("not a program")
    monkeypatch.setattr(engine_facts, "NVCC_TIMEOUT_S", 0.5)
    path = os.pathsep.join(str(p.parent) for p in (broken, hanging, not_executable))
    with caplog.at_level(logging.INFO, logger="gui.services.engine_facts"):
        assert find_toolkits(path, "", []) == ()
    assert f"{broken} --version: exit status 3" in caplog.text
    assert f"{hanging} --version: not usable" in caplog.text


@pytest.mark.skipif(not REAL_CUDA_13.is_file(), reason="this machine has no CUDA 13.0 toolkit")
def test_the_real_cuda_13_toolkit_is_found() -> None:
    found = find_toolkits(os.environ.get("PATH", ""), None, ["/usr/local"])
    cuda13 = [t for t in found if t.path == str(REAL_CUDA_13)]
    assert len(cuda13) == 1, found  # /usr/local/cuda, /usr/local/cuda-13.0 and any wrapper on PATH: one toolkit
    assert cuda13[0].version == (13, 0)
    assert 75 in cuda13[0].archs and 70 not in cuda13[0].archs and 61 not in cuda13[0].archs


# ---- the driver, the distribution, the requirement ----------------------------------------------------


def test_the_driver_and_each_gpus_capability_come_from_nvml() -> None:
    gpus = [FakeGpu(name="Tesla P40", compute_capability=(6, 1)), FakeGpu(compute_capability=(7, 0))]
    fake = FakeNvml(gpus, system={"driver_version": "570.133.20", "cuda_driver_version": 12080})
    facts = read_driver(Nvml(fake))
    assert facts == DriverFacts("570.133.20", (12, 8), (61, 70), ("Tesla P40", "Tesla V100-SXM2-16GB"), "")


def test_no_driver_is_a_reason_not_an_error() -> None:
    fake = FakeNvml([], init_error=pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)
    facts = read_driver(Nvml(fake))
    assert facts.capabilities == () and facts.driver_version is None
    assert facts.error == "no NVIDIA driver found (NVML library missing)"


def test_a_driver_that_does_not_say_its_cuda_version_still_plans() -> None:
    fake = FakeNvml([FakeGpu()], system={"driver_version": "535.183.01"})
    facts = read_driver(Nvml(fake))
    assert facts.cuda_version is None and facts.capabilities == (70,)
    plan = plan_route(facts, [Toolkit("/x/nvcc", (12, 4), archs_for_version((12, 4)))], {}, None, REQUIREMENT)
    assert plan.route == "cpu" and "CUDA 12.2" in plan.reason  # from the driver's branch


def test_the_requirement_is_the_one_in_pyproject(monkeypatch: pytest.MonkeyPatch) -> None:
    with open(ROOT / "pyproject.toml", "rb") as fh:
        dependencies = tomllib.load(fh)["project"]["dependencies"]
    assert REQUIREMENT in dependencies and REQUIREMENT.startswith("llama-cpp-python")
    assert requirement("nvidia-ml-py") in dependencies
    # Installed without a checkout, the project's own metadata says the same.
    monkeypatch.setattr(engine_facts, "checkout_root", lambda: None)

    def specifiers(text: str) -> set[str]:
        return set(text.replace(" ", "").removeprefix("llama-cpp-python").split(","))

    assert requirement().startswith("llama-cpp-python") and specifiers(requirement()) == specifiers(REQUIREMENT)
    with pytest.raises(LookupError, match="does not require torch"):
        requirement("torch")


def test_a_simulated_card_plans_with_this_machines_toolkits() -> None:
    plan = plan_here(find_card("v100-16gb"), environ={}, toolkits=[])
    assert plan.route == "cpu" and plan.cuda_archs == (70,) and plan.driver is not None and plan.driver.simulated
    cuda = plan_here(find_card("p40"), environ={}, toolkits=[Toolkit("/c/nvcc", (12, 8), archs_for_version((12, 8)))])
    assert cuda.route == "cuda" and cuda.cmake_args.startswith("-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=61 ")
    with pytest.raises(ValueError, match="TIGHTFIT_ENGINE must be cpu or cuda"):
        plan_here(find_card("p40"), environ={"TIGHTFIT_ENGINE": "vulkan"}, toolkits=[])


# ---- the stamp, the wheel cache, pip --------------------------------------------------------------


class FakePip:
    """Stands in for `python -m pip`: records each call, "builds" a wheel where asked, and tracks what
    would be installed, so the set-up's decisions are tested without compiling anything."""

    def __init__(self, fail_on: str = "") -> None:
        self.calls: list[tuple[list[str], dict[str, str]]] = []
        self.installed = Installed(None, False)
        self.fail_on = fail_on

    def __call__(self, args: Sequence[str], env: Mapping[str, str], on_line: Callable[[str], None]) -> int:
        args = list(args)
        self.calls.append((args, dict(env)))
        command = next(a for a in args if not a.startswith("-"))
        on_line(f"pip {command}")
        for n in range(1, 4):
            on_line(f"  [{n}/3] Building CUDA object ggml/src/ggml-cuda/part{n}.cu.o")
        if self.fail_on and self.fail_on in args:
            on_line("error: the compiler gave up")
            return 1
        if command == "wheel":
            folder = Path(args[args.index("-w") + 1])
            (folder / "llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl").write_bytes(b"wheel")
        elif command == "install" and any(a.endswith(".whl") for a in args):
            wheel = next(a for a in args if a.endswith(".whl"))  # the cache folder says which build it is
            self.installed = Installed("0.3.36", Path(wheel).parent.name.startswith("cuda"))
        elif command == "install" and REQUIREMENT in args:
            self.installed = Installed("0.3.36", False)
        return 0

    def commands(self) -> list[str]:
        return [next(a for a in args if not a.startswith("-")) for args, _ in self.calls]


def cuda_plan(archs: tuple[int, ...] = (70,), version: tuple[int, int] = (12, 8), path: str = "") -> RoutePlan:
    path = path or f"/usr/local/cuda-{version[0]}.{version[1]}/bin/nvcc"
    facts = DriverFacts("575.57.08", (12, 9), archs, ("Tesla V100-SXM2-16GB",) * len(archs), "")
    plan = plan_route(facts, [Toolkit(path, version, archs_for_version(version))], {}, None, REQUIREMENT)
    assert plan.route == "cuda"
    return plan


CPU_PLAN = plan_route(DriverFacts(None, None, (), (), "no NVIDIA driver"), [], {}, None, REQUIREMENT)


def setup(plan: RoutePlan, pip: FakePip, prefix: Path, cache: Path) -> str:
    log = prefix / "build.log"
    return ensure_engine(plan, log, prefix=prefix, cache_dir=cache, pip=pip, installed=lambda: pip.installed).action


def test_the_cpu_build_is_built_once_with_rpc_then_the_stamp_says_it_is_there(tmp_path: Path) -> None:
    """Every build carries llama.cpp's RPC backend (GPUs on other machines), so even the CPU build is compiled
    here, into Tightfit's wheel cache, rather than taken as pip's plain build."""
    pip = FakePip()
    assert CPU_PLAN.cmake_args == RPC_ARGS
    assert setup(CPU_PLAN, pip, tmp_path, tmp_path / "cache") == "built"
    (wheel_args, wheel_env), (install_args, _env), *_ = pip.calls
    assert pip.commands()[:2] == ["wheel", "install"] and wheel_env["CMAKE_ARGS"] == RPC_ARGS
    assert "--no-binary" in wheel_args and install_args[-1].endswith(".whl")
    stamp = read_stamp(tmp_path)
    assert stamp is not None
    assert {k: stamp[k] for k in ("route", "requirement", "cmake_args", "llama_cpp_python")} == {
        "route": "cpu",
        "requirement": REQUIREMENT,
        "cmake_args": RPC_ARGS,
        "llama_cpp_python": "0.3.36",
    }
    pip.calls.clear()
    assert setup(CPU_PLAN, pip, tmp_path, tmp_path / "cache") == "unchanged"
    assert pip.calls == []


AMX_CPU = frozenset({"avx512f", "avx512_vnni", "amx_tile", "amx_int8", "amx_bf16"})


def test_a_cpu_with_amx_gets_a_build_without_llama_cpps_amx_kernels() -> None:
    """ggml-org/llama.cpp#20824: the AMX kernels crash the first prompt on some Sapphire Rapids machines."""
    no_driver = DriverFacts(None, None, (), (), "no NVIDIA driver")
    plan = plan_route(no_driver, [], {}, None, REQUIREMENT, cpu_flags=AMX_CPU)
    assert plan.route == "cpu" and plan.cmake_args == f"{RPC_ARGS} {NO_AMX_ARGS}"
    assert f'CMAKE_ARGS="{RPC_ARGS} {NO_AMX_ARGS}"' in plan.command and "--no-cache-dir" in plan.command
    assert "without llama.cpp's AMX kernels" in plan.reason
    # The user's own CMAKE_ARGS come after Tightfit's; an ARM machine or a CPU without AMX needs nothing.
    mine = plan_route(no_driver, [], {}, None, REQUIREMENT, cpu_flags=AMX_CPU, extra_cmake_args="-DGGML_BLAS=ON")
    assert mine.cmake_args == f"{RPC_ARGS} {NO_AMX_ARGS} -DGGML_BLAS=ON"
    assert plan_route(no_driver, [], {}, None, REQUIREMENT, cpu_flags=AMX_CPU, machine="aarch64").cmake_args == RPC_ARGS
    assert plan_route(no_driver, [], {}, None, REQUIREMENT, cpu_flags={"avx512f"}).command == CPU_PLAN.command
    # A CUDA build carries them too: layers left on the CPU run its kernels.
    v100 = DriverFacts("570.124.06", (12, 8), (70,), ("Tesla V100-SXM2-16GB",), "")
    toolkit = Toolkit("/usr/local/cuda-12.8/bin/nvcc", (12, 8), archs_for_version((12, 8)))
    cuda = plan_route(v100, [toolkit], {}, None, REQUIREMENT, cpu_flags=AMX_CPU)
    assert cuda.route == "cuda" and cuda.cmake_args.endswith(NO_AMX_ARGS)


def test_a_cpu_build_with_cmake_arguments_is_built_into_tightfits_cache_not_pips(tmp_path: Path) -> None:
    no_driver = DriverFacts(None, None, (), (), "no NVIDIA driver")
    plan = plan_route(no_driver, [], {}, None, REQUIREMENT, cpu_flags=AMX_CPU)
    pip, cache = FakePip(), tmp_path / "cache"
    assert setup(plan, pip, tmp_path, cache) == "built"
    (wheel_args, wheel_env), (install_args, _env), *_ = pip.calls
    assert pip.commands()[:2] == ["wheel", "install"]
    assert "--no-cache-dir" in wheel_args and wheel_env["CMAKE_ARGS"] == f"{RPC_ARGS} {NO_AMX_ARGS}"
    assert "CUDACXX" not in wheel_env
    assert wheel_key(plan).startswith("cpu-") and install_args[-1].startswith(str(cache / wheel_key(plan)))
    stamp = read_stamp(tmp_path)
    assert stamp is not None and stamp["cmake_args"] == f"{RPC_ARGS} {NO_AMX_ARGS}"
    pip.calls.clear()
    assert setup(plan, pip, tmp_path, cache) == "unchanged" and pip.calls == []
    # Another CPU (without AMX): other arguments, so another wheel, built and installed over this one.
    assert setup(CPU_PLAN, pip, tmp_path, cache) == "built"
    assert wheel_key(CPU_PLAN) != wheel_key(plan) and read_stamp(tmp_path)["cmake_args"] == RPC_ARGS


def test_read_cpu_flags(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu sse avx512f amx_int8\n\n")
    assert read_cpu_flags(cpuinfo) == {"fpu", "sse", "avx512f", "amx_int8"}
    assert read_cpu_flags(tmp_path / "missing") == frozenset()


def test_a_cuda_build_is_built_once_into_the_cache_and_installed_from_it(tmp_path: Path) -> None:
    pip, cache = FakePip(), tmp_path / "cache"
    venv = tmp_path / "venv"
    venv.mkdir()
    plan = cuda_plan((61, 70))
    assert setup(plan, pip, venv, cache) == "built"
    assert pip.commands()[:2] == ["wheel", "install"]
    wheel_args, wheel_env = pip.calls[0]
    assert wheel_env["CMAKE_ARGS"] == plan.cmake_args and "-DCMAKE_CUDA_ARCHITECTURES=61;70" in plan.cmake_args
    # Never pip's own wheel cache for a CUDA build: it keys on the source and would hand back another build.
    assert {"--no-cache-dir", "--no-deps", "--no-binary"} <= set(wheel_args) and wheel_args[-1] == REQUIREMENT
    install_args = pip.calls[1][0]
    assert "--force-reinstall" in install_args and "--no-deps" in install_args
    wheel = cache / wheel_key(plan) / "llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl"
    assert install_args[-1] == str(wheel) and wheel.is_file()
    assert not list(cache.glob(".building-*"))
    stamp = read_stamp(venv)
    assert stamp is not None and stamp["route"] == "cuda" and stamp["cuda_archs"] == [61, 70]
    assert stamp["toolkit"] == "12.8" and stamp["toolkit_path"] == "/usr/local/cuda-12.8/bin/nvcc"
    assert stamp["wheel"] == str(wheel)

    pip.calls.clear()
    assert setup(plan, pip, venv, cache) == "unchanged" and pip.calls == []

    # A fresh environment with the same toolkit and cards takes the cached wheel: nothing is compiled.
    fresh = tmp_path / "fresh-venv"
    fresh.mkdir()
    pip.installed = Installed(None, False)
    assert setup(plan, pip, fresh, cache) == "from-cache"
    assert "wheel" not in pip.commands()


def test_new_cards_or_a_new_toolkit_rebuild(tmp_path: Path) -> None:
    pip, cache = FakePip(), tmp_path / "cache"
    assert setup(cuda_plan((70,)), pip, tmp_path, cache) == "built"
    assert setup(cuda_plan((61, 70)), pip, tmp_path, cache) == "built"  # a P40 joined the V100
    assert setup(cuda_plan((61, 70), (12, 9)), pip, tmp_path, cache) == "built"  # a newer toolkit
    # The same toolkit version by another path: the same wheel, installed again, not rebuilt.
    moved = cuda_plan((61, 70), (12, 9), "/opt/cuda-12.9/bin/nvcc")
    pip.calls.clear()
    assert setup(moved, pip, tmp_path, cache) == "from-cache" and "wheel" not in pip.commands()
    assert len({wheel_key(cuda_plan((70,))), wheel_key(cuda_plan((61, 70))), wheel_key(moved)}) == 3


def test_back_to_cpu_replaces_the_cuda_build(tmp_path: Path) -> None:
    pip = FakePip()
    setup(cuda_plan(), pip, tmp_path, tmp_path / "cache")
    pip.calls.clear()
    assert setup(CPU_PLAN, pip, tmp_path, tmp_path / "cache") == "built"
    (_wheel_args, wheel_env), (install_args, _env), *_ = pip.calls
    assert wheel_env["CMAKE_ARGS"] == RPC_ARGS and "CUDACXX" not in wheel_env
    assert "--force-reinstall" in install_args and "--no-deps" in install_args
    assert pip.installed.cuda is False and read_stamp(tmp_path)["route"] == "cpu"


def test_a_build_that_no_longer_matches_its_stamp_is_installed_again(tmp_path: Path) -> None:
    pip = FakePip()
    setup(cuda_plan(), pip, tmp_path, tmp_path / "cache")
    pip.installed = Installed("0.3.36", False)  # someone put the CPU build back by hand
    assert setup(cuda_plan(), pip, tmp_path, tmp_path / "cache") == "from-cache"


def test_a_failed_build_leaves_its_log_and_no_stamp(tmp_path: Path) -> None:
    pip = FakePip(fail_on="wheel")
    with pytest.raises(InstallFailed) as info:
        setup(cuda_plan(), pip, tmp_path, tmp_path / "cache")
    assert info.value.log_path == tmp_path / "build.log"
    log = info.value.log_path.read_text()
    assert "error: the compiler gave up" in log and "[3/3] Building CUDA object" in log
    assert "# pip exited with status 1" in log
    assert read_stamp(tmp_path) is None
    assert not list((tmp_path / "cache").glob("*/*.whl")) and not list((tmp_path / "cache").glob(".building-*"))


def test_ninja_steps_are_read_from_the_build_output() -> None:
    assert build_step("[12/150] Building CUDA object ggml/src/ggml-cuda/mmq.cu.o") == (12, 150)
    assert build_step("  [3/9] Linking CXX shared library bin/libggml-cuda.so") == (3, 9)
    assert build_step("Building wheel for llama-cpp-python (pyproject.toml): started") is None


class Terminal:
    def __init__(self, tty: bool) -> None:
        self.text = ""
        self.tty = tty

    def write(self, text: str) -> int:
        self.text += text
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("tty", [True, False])
def test_the_progress_line_shows_the_step_the_time_and_the_log(tmp_path: Path, tty: bool) -> None:
    terminal = Terminal(tty)
    with ProgressLine(terminal, tmp_path / "engine-build.log", "Engine: installing") as progress:
        progress.report("building llama-cpp-python for CUDA 12.8", "")
        progress.report("building llama-cpp-python for CUDA 12.8", "[41/120] Building CUDA object x.cu.o")
        line = progress.text()
    assert terminal.text.startswith("Engine: installing\n")
    assert line.startswith("  building llama-cpp-python for CUDA 12.8, step 41/120, ")
    assert line.endswith(f"s (log: {tmp_path / 'engine-build.log'})")
    assert ("\r\033[K" in terminal.text) is tty


# ---- the entry point, with pip stood in for ---------------------------------------------------------


def test_the_set_up_installs_then_says_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TIGHTFIT_ENGINE", raising=False)
    pip = FakePip()
    monkeypatch.setattr(engine_setup, "plan_here", lambda: CPU_PLAN)
    monkeypatch.setattr(engine_setup, "ensure_engine", _ensure_in(tmp_path, pip))
    log = tmp_path / "engine-build.log"
    assert engine_setup.main(["--log", str(log)], pip=pip) == 0
    out = capsys.readouterr().out
    assert "Engine: installing the CPU build — no NVIDIA driver, so the CPU build" in out
    done = rf"Engine: CPU build of llama-cpp-python 0\.3\.36 built and installed in \d+s; log: {re.escape(str(log))}\n"
    assert re.search(done, out)
    assert engine_setup.main(["--log", str(log)], pip=pip) == 0
    assert capsys.readouterr().out == "Engine: up to date, CPU build (llama-cpp-python 0.3.36)\n"


def test_a_failed_set_up_shows_the_logs_last_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pip = FakePip(fail_on="wheel")
    monkeypatch.setattr(engine_setup, "plan_here", cuda_plan)
    monkeypatch.setattr(engine_setup, "ensure_engine", _ensure_in(tmp_path, pip))
    log = tmp_path / "engine-build.log"
    assert engine_setup.main(["--log", str(log)], pip=pip) == 1
    err = capsys.readouterr().err
    assert err.startswith("Engine: building llama-cpp-python for CUDA 12.8 failed (pip exited with status 1) after ")
    assert f"The last lines of {log}:" in err and "    error: the compiler gave up" in err
    assert "TIGHTFIT_ENGINE=cpu" in err


def _ensure_in(prefix: Path, pip: FakePip) -> Callable[..., object]:
    real = ensure_engine

    def ensure(plan: RoutePlan, log_path: Path, **kw: object) -> object:
        kw.update(prefix=prefix, cache_dir=prefix / "cache", installed=lambda: pip.installed)
        return real(plan, log_path, **kw)

    return ensure


# ---- as users call it: real processes -------------------------------------------------------------


def tightfit(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`tightfit ARGS` with the overrides of the set-up's choice only where a test sets them."""
    clean = {k: v for k, v in os.environ.items() if k not in ("TIGHTFIT_ENGINE", "TIGHTFIT_CUDA_ARCHS", "CMAKE_ARGS")}
    return subprocess.run(
        [sys.executable, "-m", "gui", *args], capture_output=True, text=True, timeout=300, cwd=ROOT,
        env={**clean, **(env or {})},
    )  # fmt: skip


def test_engine_plan_for_a_simulated_v100() -> None:
    result = tightfit("engine", "--plan", "--simulate", "v100-16gb", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["cuda_archs"] == [70] and data["simulated"] is True and data["driver_cuda"] == "12.8"
    for key in ("route", "toolkit", "command", "reason", "install_help", "toolkit_path", "driver_version"):
        assert key in data
    usable = [t for t in find_toolkits() if t.version[0] == 12 and 70 in t.archs and t.version <= (12, 8)]
    if usable:  # a machine with a CUDA 12 toolkit builds for the card
        assert data["route"] == "cuda" and "-DCMAKE_CUDA_ARCHITECTURES=70 " in data["command"]
        return
    assert data["route"] == "cpu" and data["toolkit"] is None
    assert "pip install" in data["command"]
    # Always with the RPC backend; this machine's CPU decides the rest: with AMX, a build without its kernels.
    assert f'CMAKE_ARGS="{RPC_ARGS}' in data["command"]
    assert (NO_AMX_ARGS in data["command"]) == bool(host_cmake_args(read_cpu_flags(), os.uname().machine))
    assert "cuda-toolkit-12-8" in data["install_help"] or "cuda_12.8.1" in data["install_help"]
    assert "run the same command again" in data["install_help"]
    if REAL_CUDA_13.is_file():
        assert "CUDA 13.0 (/usr/local/cuda-13.0/bin/nvcc) cannot build for compute capability 7.0" in data["reason"]
        assert "can stay installed" in data["install_help"]


def test_engine_plan_here_in_words() -> None:
    result = tightfit("engine", "--plan")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(("CPU build: ", "CUDA build: ")) and "command: " in result.stdout


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["engine", "--simulate", "p40"], {}, "--simulate goes with --plan"),
        (["engine", "--plan", "--simulate", "v99"], {}, "unknown GPU 'v99'"),
        (["engine", "--plan"], {"TIGHTFIT_ENGINE": "metal"}, "TIGHTFIT_ENGINE must be cpu or cuda"),
        (["engine", "--plan"], {"TIGHTFIT_ENGINE": "cuda", "TIGHTFIT_CUDA_ARCHS": "volta"}, "TIGHTFIT_CUDA_ARCHS"),
    ],
)
def test_bad_engine_flags_are_one_line(args: list[str], env: dict[str, str], message: str) -> None:
    result = tightfit(*args, env=env)
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr


@pytest.mark.engine
def test_engine_json_reports_the_installed_build() -> None:
    result = tightfit("engine", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    import llama_cpp  # here, not at collection: runs without the engine do not load it

    assert data["llama_cpp_python"] == llama_cpp.__version__
    assert data["ggml"] and data["system_info"].startswith(("CPU", "CUDA"))
    # A build with the RPC backend says it supports offload (to other machines); a GPU here is what counts.
    if data["backend"] == "CUDA":
        assert data["backend"] == "CUDA" and data["gpu_offload"] is True and data["cuda_archs"]
        assert data["cuda_runtime"] and all(isinstance(a, int) for a in data["cuda_archs"])
    else:
        assert data["backend"] == "CPU" and data["gpu_offload"] is False
        assert data["cuda_archs"] == [] and data["cuda_runtime"] is None
    words = tightfit("engine")
    assert words.returncode == 0 and words.stdout.startswith(f"llama.cpp {data['backend']} build")


def test_the_set_up_needs_nothing_beyond_the_standard_library_and_nvml() -> None:
    """It runs before the project is installed: importing it (and deciding the route) must not load
    anything else, or a fresh machine's first set-up fails."""
    probe = subprocess.run(
        [sys.executable, "-c",
         "import sys; import gui.commands.engine_setup, gui.commands.engine;"
         "from gui.services.engine_facts import plan_here; plan_here();"
         "third = {m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'gui', 'pynvml'};"
         "print(','.join(sorted(m for m in third if not m.startswith('_'))))"],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == ""
