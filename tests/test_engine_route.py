"""The set-up's choice of engine build: the rules on facts alone (drivers, toolkits, distributions), the
text they are read from (nvcc's output, /etc/os-release, llama.cpp's system information), and the install
paragraph for each distribution family."""

from __future__ import annotations

from pathlib import Path

import pytest

from gui.core import protocol as p
from gui.core.cards import find_card
from gui.core.engine_route import (
    DriverFacts,
    RoutePlan,
    Toolkit,
    archs_for_version,
    capability_number,
    cuda_version_from_int,
    describe_capabilities,
    driver_cuda_from_branch,
    parse_archs,
    parse_gpu_archs,
    parse_nvcc_version,
    plan_route,
    recommended_toolkit,
    simulated_driver,
)
from gui.core.system_info import backend_of, cuda_archs, parse_system_info
from gui.services.engine_facts import read_os_release

OS_RELEASES = Path(__file__).resolve().parent / "data" / "os-release"
REQUIREMENT = "llama-cpp-python>=0.3.36,<0.4"

# `nvcc --version` and `nvcc --list-gpu-arch` of the CUDA 13.0 toolkit, as printed.
NVCC_13_VERSION = """nvcc: NVIDIA (R) Cuda compiler driver
Copyright (c) 2005-2025 NVIDIA Corporation
Built on Wed_Aug_20_01:58:59_PM_PDT_2025
Cuda compilation tools, release 13.0, V13.0.88
Build cuda_13.0.r13.0/compiler.36424714_0
"""
NVCC_13_ARCHS = "\n".join(
    f"compute_{a}" for a in (75, 80, 86, 87, 88, 89, 90, 100, 110, 103, 120, 121)
)  # nvcc's own order
# llama.cpp's system information of a CUDA build for a V100 (a llama-bench log) and of this machine's CPU build.
CUDA_INFO = (
    "CUDA : ARCHS = 700 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | "
    "AVX2 = 1 | F16C = 1 | FMA = 1 | LLAMAFILE = 1 | OPENMP = 1 | AARCH64_REPACK = 1 | "
)
CUDA_MULTI_INFO = (
    "CUDA : ARCHS = 610,700,750 | FORCE_MMQ = 1 | USE_GRAPHS = 1 | PEER_MAX_BATCH_SIZE = 128 | CPU : SSE3 = 1 | "
    "AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 | REPACK = 1 | "
)
CPU_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX_VNNI = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
    "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 |"
)


def driver(*caps: int, cuda: tuple[int, int] | None = (12, 8), version: str = "570.133.20") -> DriverFacts:
    names = {61: "Tesla P40", 60: "Tesla P100-PCIE-16GB", 70: "Tesla V100-SXM2-16GB", 75: "Tesla T4"}
    return DriverFacts(version, cuda, caps, tuple(names.get(c, f"GPU {c}") for c in caps), "")


def toolkit(version: tuple[int, int], path: str = "") -> Toolkit:
    path = path or f"/usr/local/cuda-{version[0]}.{version[1]}/bin/nvcc"
    return Toolkit(path, version, archs_for_version(version))


NO_DRIVER = DriverFacts(None, None, (), (), "no NVIDIA driver found (NVML library missing)")
DEBIAN = read_os_release(OS_RELEASES / "debian-12")


def route(
    facts: DriverFacts, *toolkits: Toolkit, override: str | None = None, os: dict[str, str] = DEBIAN, **kw: str
) -> RoutePlan:
    return plan_route(facts, toolkits, os, override, REQUIREMENT, **kw)


# ---- the rules --------------------------------------------------------------------------------------


def test_a_v100_with_cuda_12_gets_a_cuda_build_for_70() -> None:
    plan = route(driver(70), toolkit((12, 4)))
    assert plan.route == "cuda" and plan.cuda_archs == (70,)
    assert plan.toolkit is not None and plan.toolkit.version == (12, 4)
    assert plan.cmake_args == (
        "-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70 -DCMAKE_CUDA_COMPILER=/usr/local/cuda-12.4/bin/nvcc -DGGML_RPC=ON"
    )
    assert plan.command == (
        'CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=70 -DCMAKE_CUDA_COMPILER=/usr/local/cuda-12.4/bin/nvcc '
        '-DGGML_RPC=ON" python -m pip install --force-reinstall --no-deps --no-cache-dir --no-binary llama-cpp-python '
        "'llama-cpp-python>=0.3.36,<0.4'"
    )
    assert "CUDA 12.4" in plan.reason and "7.0" in plan.reason and plan.install_help == ""
    data = plan.as_json()
    assert data["route"] == "cuda" and data["cuda_archs"] == [70] and data["toolkit"] == "12.4"
    assert data["toolkit_path"] == "/usr/local/cuda-12.4/bin/nvcc"
    assert data["driver_version"] == "570.133.20" and data["driver_cuda"] == "12.8"
    for key in ("command", "reason", "install_help"):
        assert isinstance(data[key], str)


def test_a_p40_beside_two_v100s_builds_for_exactly_61_and_70() -> None:
    plan = route(driver(70, 61, 70), toolkit((12, 8)))
    assert plan.route == "cuda" and plan.cuda_archs == (61, 70)
    assert "-DCMAKE_CUDA_ARCHITECTURES=61;70 " in plan.cmake_args
    assert plan.as_json()["cuda_archs"] == [61, 70]
    assert "6.1 and 7.0" in plan.reason


def test_a_t4_may_use_cuda_13_where_the_driver_runs_it() -> None:
    plan = route(driver(75, cuda=(13, 0), version="580.95.05"), toolkit((13, 0)))
    assert plan.route == "cuda" and plan.toolkit is not None and plan.toolkit.version == (13, 0)
    assert plan.cuda_archs == (75,)


def test_cuda_12_is_preferred_to_13_and_the_newest_12_to_older() -> None:
    facts = driver(75, cuda=(13, 0), version="580.95.05")
    plan = route(facts, toolkit((13, 0)), toolkit((12, 4)), toolkit((12, 8)))
    assert plan.toolkit is not None and plan.toolkit.version == (12, 8)


def test_a_v100_with_only_cuda_13_gets_the_cpu_build_and_says_why() -> None:
    cuda13 = Toolkit("/usr/local/cuda-13.0/bin/nvcc", (13, 0), parse_gpu_archs(NVCC_13_ARCHS))
    plan = route(driver(70, cuda=(13, 0), version="580.95.05"), cuda13)
    assert plan.route == "cpu" and plan.toolkit is None and plan.cuda_archs == (70,)
    assert "CUDA 13.0 (/usr/local/cuda-13.0/bin/nvcc) cannot build for compute capability 7.0" in plan.reason
    assert "older than 7.5" in plan.reason
    assert plan.skipped and "CUDA 13" in plan.skipped[0]
    assert plan.command == (
        'CMAKE_ARGS="-DGGML_RPC=ON" python -m pip install --force-reinstall --no-deps --no-cache-dir '
        "--no-binary llama-cpp-python 'llama-cpp-python>=0.3.36,<0.4'"
    )
    help_text = plan.install_help
    assert "sudo apt-get install -y cuda-toolkit-12-9" in help_text  # the driver runs 13.0: the last 12.x
    assert "run the same command again" in help_text and "make run" in help_text
    assert "CUDA 13.0 (/usr/local/cuda-13.0/bin/nvcc) can stay installed" in help_text
    assert plan.as_json()["toolkit"] is None and plan.as_json()["cuda_archs"] == [70]


def test_a_mixed_p40_and_t4_machine_skips_cuda_13_for_the_p40() -> None:
    plan = route(driver(61, 75, cuda=(13, 0)), toolkit((13, 0)))
    assert plan.route == "cpu" and "compute capability 6.1" in plan.reason


def test_a_toolkit_newer_than_the_driver_is_passed_over() -> None:
    r535 = driver(70, cuda=(12, 2), version="535.183.01")
    plan = route(r535, toolkit((12, 4)))
    assert plan.route == "cpu"
    assert "CUDA 12.4 (/usr/local/cuda-12.4/bin/nvcc) is newer than the driver runs (CUDA 12.2)" in plan.reason
    assert "cuda-toolkit-12-2" in plan.install_help  # what this driver runs
    older = route(r535, toolkit((12, 4)), toolkit((12, 2)))
    assert older.route == "cuda" and older.toolkit is not None and older.toolkit.version == (12, 2)
    assert "passed over: CUDA 12.4" in older.reason


def test_a_toolkit_that_cannot_target_the_card_is_passed_over() -> None:
    no_pascal = Toolkit("/opt/cuda/bin/nvcc", (12, 6), (70, 75, 80, 86, 89, 90))
    plan = route(driver(61), no_pascal)
    assert plan.route == "cpu" and "cannot build for compute capability 6.1" in plan.reason
    assert "older than CUDA 12" in route(driver(70), toolkit((11, 8))).reason


def test_a_driver_older_than_cuda_12_must_be_updated_first() -> None:
    r470 = driver(70, cuda=(11, 4), version="470.256.02")
    plan = route(r470, toolkit((12, 4)), os=read_os_release(OS_RELEASES / "ubuntu-22.04"))
    assert plan.route == "cpu"
    assert "driver 470.256.02 runs CUDA up to 11.4" in plan.reason
    help_text = plan.install_help
    assert help_text.startswith("First update the NVIDIA driver")
    assert "R535 or newer" in help_text and "R580 branch" in help_text and "590" in help_text
    assert "sudo apt-get install -y nvidia-driver-580" in help_text
    assert "cuda-toolkit-12-9" in help_text and "run the same command again" in help_text
    # A Turing card is still driven past R580: no warning about newer branches.
    t4 = route(driver(75, cuda=(11, 4), version="470.256.02"))
    assert "R580 or newer" in t4.install_help and "590" not in t4.install_help


def test_the_driver_branch_stands_in_when_nvml_does_not_give_its_cuda_version() -> None:
    plan = route(driver(70, cuda=None, version="535.183.01"), toolkit((12, 4)))
    assert plan.route == "cpu" and "(CUDA 12.2)" in plan.reason
    assert driver_cuda_from_branch("535.183.01") == (12, 2)
    assert driver_cuda_from_branch("580.95.05") == (13, 0)
    assert driver_cuda_from_branch("418.67") is None and driver_cuda_from_branch(None) is None


def test_no_driver_or_no_gpu_is_the_cpu_build_with_nothing_to_install() -> None:
    plan = route(NO_DRIVER, toolkit((12, 4)))
    assert plan.route == "cpu" and plan.install_help == "" and plan.cuda_archs == ()
    assert "no NVIDIA driver found (NVML library missing)" in plan.reason
    assert plan.as_json()["driver_version"] is None
    none = route(DriverFacts("570.133.20", (12, 8), (), (), ""), toolkit((12, 4)))
    assert none.route == "cpu" and "NVML found none" in none.reason


def test_no_toolkit_at_all_says_where_it_looked() -> None:
    plan = route(driver(70))
    assert plan.route == "cpu" and "no CUDA toolkit found" in plan.reason
    assert "cuda-toolkit-12-8" in plan.install_help and "can stay installed" not in plan.install_help


def test_the_override_forces_the_cpu_build() -> None:
    plan = route(driver(70), toolkit((12, 4)), override="cpu")
    assert plan.route == "cpu" and plan.reason.startswith("TIGHTFIT_ENGINE=cpu") and "will not be used" in plan.reason
    assert route(driver(70), toolkit((12, 4)), override=" CUDA ").route == "cuda"
    assert route(driver(70), toolkit((12, 4)), override="").route == "cuda"


@pytest.mark.parametrize("value", ["gpu", "rocm", "1"])
def test_an_unknown_override_is_one_clear_sentence(value: str) -> None:
    with pytest.raises(ValueError, match=f"TIGHTFIT_ENGINE must be cpu or cuda .*not '{value}'") as info:
        route(driver(70), override=value)
    assert "\n" not in str(info.value)


def test_forcing_cuda_without_a_gpu_needs_the_architectures() -> None:
    with pytest.raises(ValueError, match=r"set TIGHTFIT_CUDA_ARCHS .* e\.g\. TIGHTFIT_CUDA_ARCHS=70"):
        route(NO_DRIVER, toolkit((12, 4)), override="cuda")
    plan = route(NO_DRIVER, toolkit((12, 8)), override="cuda", archs_override="61;70")
    assert plan.route == "cuda" and plan.cuda_archs == (61, 70) and plan.reason.startswith("TIGHTFIT_ENGINE=cuda")
    # Without a driver, the CUDA 13 rule still holds.
    with pytest.raises(ValueError, match="CUDA 13 dropped"):
        route(NO_DRIVER, toolkit((13, 0)), override="cuda", archs_override="70")


def test_forcing_cuda_without_a_usable_toolkit_gives_the_install_paragraph() -> None:
    with pytest.raises(ValueError) as info:
        route(driver(70), toolkit((13, 0)), override="cuda")
    message = str(info.value)
    assert message.startswith("TIGHTFIT_ENGINE=cuda, but no usable CUDA toolkit")
    assert "cuda-toolkit-12-8" in message


def test_the_architectures_override_replaces_the_gpus() -> None:
    plan = route(driver(70), toolkit((12, 8)), archs_override="6.1, 7.0")
    assert plan.cuda_archs == (61, 70)


def test_the_users_own_cmake_arguments_come_after_tightfits() -> None:
    plan = route(driver(70), toolkit((12, 8)), extra_cmake_args="-DGGML_CUDA_FORCE_MMQ=on ")
    assert plan.cmake_args.endswith("/usr/local/cuda-12.8/bin/nvcc -DGGML_RPC=ON -DGGML_CUDA_FORCE_MMQ=on")


def test_the_recommended_toolkit_is_one_nvidia_released() -> None:
    assert recommended_toolkit((12, 7)) == (12, 6)  # there was no 12.7
    assert recommended_toolkit((12, 4)) == (12, 4)
    assert recommended_toolkit((13, 1)) == (12, 9)
    assert recommended_toolkit(None) == (12, 9)


# ---- the paragraph, per distribution ---------------------------------------------------------------

DEB = "https://developer.download.nvidia.com/compute/cuda/repos/{}/x86_64/cuda-keyring_1.1-1_all.deb"
RPM = "https://developer.download.nvidia.com/compute/cuda/repos/{0}/x86_64/cuda-{0}.repo"


@pytest.mark.parametrize(
    ("release", "commands"),
    [
        ("ubuntu-20.04", [f"wget {DEB.format('ubuntu2004')}", "sudo dpkg -i cuda-keyring_1.1-1_all.deb",
                          "sudo apt-get update", "sudo apt-get install -y cuda-toolkit-12-8"]),
        ("ubuntu-22.04", [f"wget {DEB.format('ubuntu2204')}", "sudo apt-get install -y cuda-toolkit-12-8"]),
        ("ubuntu-24.04", [f"wget {DEB.format('ubuntu2404')}", "sudo apt-get install -y cuda-toolkit-12-8"]),
        ("linuxmint-21.3", [f"wget {DEB.format('ubuntu2204')}"]),  # by its Ubuntu base
        ("debian-11", [f"wget {DEB.format('debian11')}", "sudo apt-get install -y cuda-toolkit-12-8"]),
        ("debian-12", [f"wget {DEB.format('debian12')}", "sudo apt-get install -y cuda-toolkit-12-8"]),
        ("rhel-9.4", [f"sudo dnf config-manager --add-repo {RPM.format('rhel9')}",
                      "sudo dnf install -y cuda-toolkit-12-8"]),
        ("rocky-9.3", [f"sudo dnf config-manager --add-repo {RPM.format('rhel9')}"]),
        ("almalinux-8.9", [f"sudo dnf config-manager --add-repo {RPM.format('rhel8')}"]),
        ("fedora-41", [f"sudo dnf config-manager addrepo --from-repofile={RPM.format('fedora41')}",
                       "sudo dnf install -y cuda-toolkit-12-8"]),
        ("fedora-39", [f"sudo dnf config-manager --add-repo {RPM.format('fedora39')}"]),
        ("arch", ["wget https://developer.download.nvidia.com/compute/cuda/12.8.1/local_installers/"
                  "cuda_12.8.1_570.124.06_linux.run", "sudo sh cuda_12.8.1_570.124.06_linux.run --toolkit --silent"]),
        ("opensuse-leap-15.6", ["sudo sh cuda_12.8.1_570.124.06_linux.run --toolkit --silent"]),
    ],
)  # fmt: skip
def test_the_install_paragraph_has_the_distributions_commands(release: str, commands: list[str]) -> None:
    os_release = read_os_release(OS_RELEASES / release)
    plan = route(driver(70), os=os_release)
    lines = plan.install_help.splitlines()
    assert lines[0].startswith("To use the GPU (Tesla V100-SXM2-16GB, compute capability 7.0), install the CUDA 12.8")
    assert os_release["PRETTY_NAME"] in lines[0]
    for command in commands:
        assert f"    {command}" in lines, command
    assert lines[-1].startswith("then run the same command again (make run or make test)")
    assert "/usr/local/cuda-12.8" in lines[-1]


def test_an_arm_machine_gets_nvidias_sbsa_downloads() -> None:
    ubuntu = route(driver(70), os=read_os_release(OS_RELEASES / "ubuntu-24.04"), machine="aarch64")
    assert "/repos/ubuntu2404/sbsa/cuda-keyring_1.1-1_all.deb" in ubuntu.install_help
    arch = route(driver(70), os=read_os_release(OS_RELEASES / "arch"), machine="aarch64")
    assert "cuda_12.8.1_570.124.06_linux_sbsa.run --toolkit --silent" in arch.install_help


def test_an_unreadable_os_release_falls_back_to_the_runfile(tmp_path: Path) -> None:
    assert read_os_release(tmp_path / "absent") == {}
    plan = route(driver(70), os={"ID": ""})
    assert "--toolkit --silent" in plan.install_help and "this system" in plan.install_help


# ---- reading the facts' text ---------------------------------------------------------------------


def test_nvcc_output_is_read() -> None:
    assert parse_nvcc_version(NVCC_13_VERSION) == (13, 0)
    assert parse_nvcc_version("Cuda compilation tools, release 12.4, V12.4.131") == (12, 4)
    assert parse_nvcc_version("command not found") is None
    assert parse_gpu_archs(NVCC_13_ARCHS) == (75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121)
    assert archs_for_version((13, 0)) == parse_gpu_archs(NVCC_13_ARCHS)
    assert 61 in archs_for_version((12, 4)) and 70 in archs_for_version((12, 9)) and 120 in archs_for_version((12, 8))


def test_capabilities_and_versions_convert() -> None:
    assert capability_number("7.0") == 70 and capability_number((6, 1)) == 61 and capability_number("12.0") == 120
    assert cuda_version_from_int(12040) == (12, 4) and cuda_version_from_int(13000) == (13, 0)
    assert describe_capabilities((70,)) == "7.0"
    assert describe_capabilities((61, 70)) == "6.1 and 7.0"
    assert describe_capabilities((60, 61, 70)) == "6.0, 6.1 and 7.0"


@pytest.mark.parametrize(
    ("text", "archs"), [("70", (70,)), ("61;70", (61, 70)), ("7.0,6.1", (61, 70)), ("sm_75 sm_70", (70, 75))]
)
def test_the_architectures_variable_is_read(text: str, archs: tuple[int, ...]) -> None:
    assert parse_archs(text) == archs


@pytest.mark.parametrize("text", ["volta", "7", "700", ";"])
def test_a_bad_architectures_variable_is_one_sentence(text: str) -> None:
    with pytest.raises(ValueError, match="TIGHTFIT_CUDA_ARCHS"):
        parse_archs(text)


def test_os_release_values_are_unquoted() -> None:
    rocky = read_os_release(OS_RELEASES / "rocky-9.3")
    assert rocky["ID"] == "rocky" and rocky["ID_LIKE"] == "rhel centos fedora" and rocky["VERSION_ID"] == "9.3"
    assert read_os_release(OS_RELEASES / "fedora-41")["VERSION_CODENAME"] == ""


def test_a_simulated_card_has_a_plausible_driver() -> None:
    v100 = simulated_driver(find_card("v100-16gb"))
    assert v100.capabilities == (70,) and v100.simulated and v100.error == ""
    assert v100.driver_version is not None and v100.driver_version.startswith("570.")
    assert v100.cuda_version == (12, 8) and v100.gpu_names == ("Tesla V100 SXM2 16GB",)
    assert simulated_driver(find_card("p40")).capabilities == (61,)
    assert simulated_driver(find_card("t4")).capabilities == (75,)
    assert simulated_driver(find_card("p100")).capabilities == (60,)
    plan = route(simulated_driver(find_card("p40")), toolkit((12, 8)))
    assert plan.route == "cuda" and plan.as_json()["simulated"] is True


# ---- what llama.cpp says of its own build ----------------------------------------------------------


def test_the_system_information_of_a_cuda_build_is_read() -> None:
    assert cuda_archs(CUDA_INFO) == (70,)
    assert cuda_archs(CUDA_MULTI_INFO) == (61, 70, 75)
    assert cuda_archs("CUDA : ARCHS = 1200 | BLACKWELL_NATIVE_FP4 = 1 | ") == (120,)
    assert backend_of(CUDA_INFO, True) == "CUDA"
    sections = parse_system_info(CUDA_MULTI_INFO)
    assert sections["CUDA"]["FORCE_MMQ"] == "1" and sections["CPU"]["AVX2"] == "1"


def test_the_system_information_of_a_cpu_build_is_read() -> None:
    assert cuda_archs(CPU_INFO) == ()
    assert backend_of(CPU_INFO, False) == "CPU"
    assert backend_of(CPU_INFO, True) == "GPU"
    assert set(parse_system_info(CPU_INFO)) == {"CPU"}


def test_the_build_names_the_compute_capabilities_it_was_compiled_for() -> None:
    build = p.EngineBuild("CUDA", True, "0.3.36", CUDA_MULTI_INFO, (61, 70, 75), "12.8", "0.25.3")
    assert build.describe().endswith("GPU offload supported, for compute capability 6.1, 7.0, 7.5")
    assert "compute capability" not in p.EngineBuild("CPU", False, "0.3.36", CPU_INFO).describe()
