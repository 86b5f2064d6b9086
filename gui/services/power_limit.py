"""The one-click power cap: decide what to ask for, run the privileged helper, say what happened in words.

The GUI never runs as root. A small helper (packaging/tightfit-power-helper, installed as
/usr/libexec/tightfit-power-helper) takes a GPU index and whole watts, checks them against NVML and
applies them; this client runs it through pkexec (a polkit dialog, policy in packaging/) or `sudo -n`
(for machines with a sudoers rule), then the caller reads the enforced limit back through NVML.
Simulated cards are capped directly, without privileges.

Which path, in "auto" (the default): pkexec where installed, and `sudo -n` when pkexec cannot ask —
no authentication agent (headless, SSH), no polkit daemon, or polkit refusing the authentication
(which polkit 127's socket-activated agent helper does even for the right password). `sudo -n` never
prompts: it succeeds only where an administrator has allowed the helper in sudoers, so trying it adds
no way in that was not granted. A dismissed dialog (pkexec exit 126) is the user's answer and is not
retried through sudo. Every outcome message names the path that was used.

`apply` blocks until the helper is done (pkexec waits for the user to type a password): call it off the
UI thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Literal

from gui.core.gpu_sample import GpuSample
from gui.core.simulated_gpu import SimulatedGpu
from gui.core.words import Text, Words, joined, message_of, words
from gui.services.desktop import packaging_dir
from gui.services.nvml import Nvml

__all__ = [
    "HELPER_EXIT_CODES",
    "HELPER_PATH",
    "NO_GPU_TO_CAP",
    "NO_READING",
    "OUTCOME_WORDS",
    "Decision",
    "Outcome",
    "PowerLimiter",
    "PowerResult",
    "RunOutput",
    "Via",
    "all_words",
    "click_words",
    "not_run",
    "system_tool",
]

HELPER_PATH = Path("/usr/libexec/tightfit-power-helper")
# The helper runs with this environment and nothing inherited: its behaviour must not depend on ours.
_HELPER_ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
# Where pkexec and sudo are looked for, in order; never the window's PATH, where a folder the user can write
# to, put first, could hold another program under the name (run with the helper's arguments, or worse).
SYSTEM_BIN = (Path("/usr/bin"), Path("/bin"))
PKEXEC_DISMISSED = 126  # pkexec(1): the user dismissed the authentication dialog
PKEXEC_FAILED = 127  # pkexec(1): not authorised, no authentication agent, or any other error of its own
SUDO_REFUSED = 1  # sudo -n: a password would be needed, or the rule does not allow it
# Where the set-up for the sudo path is written down; every "neither path worked" message points here.
SETUP_SECTION = "Without a polkit agent: sudo -n"
# The helper, its polkit policy and the boot unit, as shipped with Tightfit.
PACKAGING_DIR = packaging_dir()  # in a checkout, packaging/; in an installed copy, the package's own copy
SETUP_HINT = words('packaging/README.md, section "{section}"', section=SETUP_SECTION)


class Outcome(StrEnum):
    APPLIED = "applied"
    CLAMPED = "clamped"  # applied, but the card holds a different limit than asked for
    CANCELLED = "cancelled"
    NO_PERMISSION = "no permission"
    NOT_SUPPORTED = "not supported"
    HELPER_MISSING = "helper missing"
    NO_SUCH_GPU = "no such GPU"
    OUT_OF_RANGE = "out of range"
    BAD_ARGUMENTS = "bad arguments"
    DRIVER_UNAVAILABLE = "driver unavailable"
    TIMED_OUT = "timed out"
    FAILED = "failed"


# Each outcome in words, as the window says it (an Outcome's value is the English the reports keep).
OUTCOME_WORDS: dict[Outcome, Words] = {
    Outcome.APPLIED: words("applied"),
    Outcome.CLAMPED: words("clamped"),
    Outcome.CANCELLED: words("cancelled"),
    Outcome.NO_PERMISSION: words("no permission"),
    Outcome.NOT_SUPPORTED: words("not supported"),
    Outcome.HELPER_MISSING: words("helper missing"),
    Outcome.NO_SUCH_GPU: words("no such GPU"),
    Outcome.OUT_OF_RANGE: words("out of range"),
    Outcome.BAD_ARGUMENTS: words("bad arguments"),
    Outcome.DRIVER_UNAVAILABLE: words("driver unavailable"),
    Outcome.TIMED_OUT: words("timed out"),
    Outcome.FAILED: words("failed"),
}
NO_READING = words("there is no reading of this GPU yet")
NO_GPU_TO_CAP = words("there is no GPU to cap")

# The helper's documented exit codes (see its docstring); 0 is APPLIED or CLAMPED after reading back.
HELPER_EXIT_CODES: dict[int, Outcome] = {
    2: Outcome.BAD_ARGUMENTS,
    3: Outcome.NO_SUCH_GPU,
    4: Outcome.OUT_OF_RANGE,
    5: Outcome.NOT_SUPPORTED,
    6: Outcome.NO_PERMISSION,
    7: Outcome.DRIVER_UNAVAILABLE,
    8: Outcome.DRIVER_UNAVAILABLE,  # not loaded yet: the boot unit retries on it, the window just says so
}

Via = Literal["pkexec", "sudo -n", "simulator"]


@dataclass(frozen=True)
class Decision:
    """What a cap request becomes before anything runs: refused, or whole watts within the constraints."""

    allowed: bool
    watts: int | None
    clamped: bool
    message: Text


@dataclass(frozen=True)
class PowerResult:
    outcome: Outcome
    index: int
    requested_w: int
    enforced_w: float | None  # what the helper (or simulator) read back; None where unknown
    message: Text
    exit_code: int | None = None
    via: Via | None = None  # the path that ran last; None where nothing ran

    @property
    def ok(self) -> bool:
        return self.outcome in (Outcome.APPLIED, Outcome.CLAMPED)


@dataclass(frozen=True)
class RunOutput:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str], float], RunOutput]  # raises subprocess.TimeoutExpired, OSError
Method = Literal["auto", "pkexec", "sudo"]


def system_tool(name: str) -> str | None:
    """The absolute path of a system program (pkexec, sudo) in /usr/bin or else /bin, or None; PATH is not read."""
    for folder in SYSTEM_BIN:
        path = folder / name
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def run_command(argv: Sequence[str], timeout_s: float) -> RunOutput:
    """Run without a shell, stdin closed, clean environment; raise TimeoutExpired after timeout_s."""
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_HELPER_ENV,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        # pkexec runs as root once authorised: we may not be allowed to kill it, and that is fine.
        with contextlib.suppress(OSError):
            process.kill()
        raise
    return RunOutput(process.returncode, stdout, stderr)


class PowerLimiter:
    def __init__(
        self,
        *,
        helper: str | Path = HELPER_PATH,
        method: Method = "auto",
        timeout_s: float = 120.0,
        runner: Runner = run_command,
        which: Callable[[str], str | None] = system_tool,
        simulators: Mapping[int, SimulatedGpu] | None = None,
        nvml: Nvml | None = None,
    ) -> None:
        """`method`: "auto" uses pkexec where installed, else `sudo -n`; "sudo" where a sudoers rule is set
        up. `timeout_s` includes the time the user takes to answer the password dialog."""
        if method not in ("auto", "pkexec", "sudo"):
            raise ValueError(f"method must be auto, pkexec or sudo (got {method!r})")
        if timeout_s <= 0:
            raise ValueError(f"timeout must be positive (got {timeout_s} s)")
        self.helper = Path(helper)
        self.method = method
        self.timeout_s = float(timeout_s)
        self._runner = runner
        self._which = which
        self._simulators = dict(simulators or {})
        self._nvml = nvml

    @property
    def simulated(self) -> bool:
        """Every GPU this limiter acts on is simulated: no helper, no privileges."""
        return bool(self._simulators)

    def readiness(self) -> Text:
        """Why a cap cannot work yet on this machine, with what to run once to fix it; "" when it can.
        (A look at two paths on disk: no privileges, no helper run.)"""
        if self.simulated:
            return ""
        if not os.access(self.helper, os.X_OK):
            install = (
                f"sudo install -m 0755 -o root -g root tightfit-power-helper {self.helper} "
                "&& sudo install -m 0644 org.tightfit.power-limit.policy /usr/share/polkit-1/actions/"
            )
            return words(
                "The power cap needs its small helper, which is not installed at {helper}. Install it once "
                "(from {folder}): {command} — then the cap asks for your password once. Details: {hint}.",
                helper=str(self.helper),
                folder=str(PACKAGING_DIR),
                command=install,
                hint=SETUP_HINT,
            )
        if not self._attempts(0, 0):
            return words(
                "Neither pkexec nor sudo is installed, so nothing can run the helper as root (see {hint}).",
                hint=SETUP_HINT,
            )
        return ""

    # --- deciding ---------------------------------------------------------------------------------

    def check(self, target_w: float, sample: GpuSample | None) -> Decision:
        """Turn a requested cap into whole watts the card accepts, or refuse with the reason."""
        if sample is None:
            return Decision(False, None, False, NO_READING)
        if sample.lost:
            return Decision(False, None, False, words("the GPU fell off the bus; a power limit cannot be set now"))
        if sample.power_min_w is None or sample.power_max_w is None:
            why = sample.errors.get("power_min_w") or words("the driver reports no power-limit range")
            return Decision(False, None, False, words("this GPU's power limit cannot be changed ({why})", why=why))
        if isinstance(target_w, bool) or not isinstance(target_w, int | float) or not math.isfinite(target_w):
            message = words("a power limit must be a number of watts (got {value})", value=repr(target_w))
            return Decision(False, None, False, message)
        low, high = math.ceil(sample.power_min_w), math.floor(sample.power_max_w)
        watts = round(target_w)
        target = f"{target_w:g}"
        if watts < low:
            message = words("{target} W is below this card's minimum; capping at {low} W", target=target, low=low)
            return Decision(True, low, True, message)
        if watts > high:
            message = words("{target} W is above this card's maximum; capping at {high} W", target=target, high=high)
            return Decision(True, high, True, message)
        if sample.power_limit_w is not None and round(sample.power_limit_w) == watts:
            return Decision(True, watts, False, words("already capped at {watts} W", watts=watts))
        return Decision(True, watts, watts != target_w, words("cap at {watts} W", watts=watts))

    # --- applying ---------------------------------------------------------------------------------

    def apply(self, index: int, watts: int) -> PowerResult:
        """Set GPU `index` to `watts` (whole watts, normally from `check`). Blocks: not on the UI thread."""
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            message = words("GPU index must be a whole number (got {value})", value=repr(index))
            return PowerResult(Outcome.BAD_ARGUMENTS, -1, -1, None, message)
        if isinstance(watts, bool) or not isinstance(watts, int) or watts <= 0:
            message = words("watts must be whole and positive ({value})", value=repr(watts))
            return PowerResult(Outcome.BAD_ARGUMENTS, index, -1, None, message)
        simulator = self._simulators.get(index)
        if simulator is not None:
            applied = simulator.set_power_limit(watts)
            outcome = Outcome.APPLIED if applied == watts else Outcome.CLAMPED
            message = words("simulated card capped at {watts} W", watts=f"{applied:g}")
            return PowerResult(outcome, index, watts, applied, message, via="simulator")
        return self._run_helper(index, watts)

    def restore_default(self, index: int) -> PowerResult:
        """Back to the card's default limit (what it boots with)."""
        simulator = self._simulators.get(index)
        if simulator is not None:
            return _as_default(self.apply(index, round(simulator.default_limit_w)))
        limits = (self._nvml or Nvml()).power_limits(index)
        if limits.default_w is None:
            why = limits.error or words("the driver reports no default power limit")
            message = words("cannot restore the default: {why}", why=why)
            return PowerResult(Outcome.NOT_SUPPORTED, index, -1, None, message)
        watts = round(limits.default_w)
        if limits.min_w is not None and limits.max_w is not None:  # a fractional default stays in range
            watts = min(max(watts, math.ceil(limits.min_w)), math.floor(limits.max_w))
        return _as_default(self.apply(index, watts))

    def read_back(self, nvml: Nvml, index: int) -> float | None:
        """The limit the driver enforces now, as NVML reports it (None where it will not say)."""
        simulator = self._simulators.get(index)
        if simulator is not None:
            return simulator.power_limit_w
        return nvml.power_limits(index).enforced_w

    def command(self, index: int, watts: int) -> list[str] | None:
        """The argv tried first (no shell ever sees it), or None where neither pkexec nor sudo is usable."""
        attempts = self._attempts(index, watts)
        return attempts[0][1] if attempts else None

    def _attempts(self, index: int, watts: int) -> list[tuple[Via, list[str]]]:
        """The paths to try, in order: pkexec first (it can ask for a password), then `sudo -n`."""
        args = [str(self.helper), str(int(index)), str(int(watts))]
        attempts: list[tuple[Via, list[str]]] = []
        if self.method in ("auto", "pkexec") and (pkexec := self._which("pkexec")):
            # No internal text agent: from a GUI there is no terminal to ask on, so fail fast instead.
            attempts.append(("pkexec", [pkexec, "--disable-internal-agent", *args]))
        if self.method in ("auto", "sudo") and (sudo := self._which("sudo")):
            attempts.append(("sudo -n", [sudo, "-n", "--", *args]))
        return attempts

    def _run_helper(self, index: int, watts: int) -> PowerResult:
        if not os.access(self.helper, os.X_OK):
            message = words(
                "the power-limit helper is not installed at {helper} (see packaging/README.md)", helper=str(self.helper)
            )
            return PowerResult(Outcome.HELPER_MISSING, index, watts, None, message)
        attempts = self._attempts(index, watts)
        if not attempts:
            return PowerResult(Outcome.NO_PERMISSION, index, watts, None, _nothing_to_run_as_root(self.method))
        pkexec_failed: Words | None = None  # why pkexec could not ask, once it has been tried
        for via, argv in attempts:
            try:
                done = self._runner(argv, self.timeout_s)
            except subprocess.TimeoutExpired:
                # Not retried: the helper may have run, and a dialog may still be open.
                message = words(
                    "no answer from {via} within {seconds} s; nothing was confirmed",
                    via=via,
                    seconds=f"{self.timeout_s:g}",
                )
                return PowerResult(Outcome.TIMED_OUT, index, watts, None, message, via=via)
            except OSError as exc:
                if via == "pkexec":
                    pkexec_failed = words("pkexec could not be run ({error})", error=message_of(exc))
                    continue
                message = words("could not run {program}: {error}", program=argv[0], error=message_of(exc))
                return PowerResult(Outcome.FAILED, index, watts, None, message, via=via)
            if via == "pkexec" and done.returncode == PKEXEC_DISMISSED:
                message = words(
                    "the password dialog was dismissed; the power limit is unchanged (sudo -n was not tried)"
                )
                return PowerResult(Outcome.CANCELLED, index, watts, None, message, done.returncode, via)
            if via == "pkexec" and done.returncode == PKEXEC_FAILED:
                pkexec_failed = _why_pkexec_failed(done.stderr)
                continue
            return _interpret(done, index, watts, via, pkexec_failed)
        # Only pkexec was tried, and it could not ask.
        if self.method == "pkexec":
            why = words("sudo -n was not tried (this limiter uses pkexec only)")
        else:
            why = words(
                "sudo is not installed: run a polkit agent, or install sudo and add the sudoers rule for the helper"
            )
        message = words("{failed}, and {why} (see {hint})", failed=pkexec_failed or "", why=why, hint=SETUP_HINT)
        return PowerResult(Outcome.NO_PERMISSION, index, watts, None, message, PKEXEC_FAILED, "pkexec")


def _nothing_to_run_as_root(method: Method) -> Words:
    """Neither path this limiter may use is installed."""
    if method == "pkexec":
        return words(
            "pkexec is not installed, so the power limit cannot be set without running as root (see {hint})",
            hint=SETUP_HINT,
        )
    if method == "sudo":
        return words(
            "sudo is not installed, so the power limit cannot be set without running as root (see {hint})",
            hint=SETUP_HINT,
        )
    return words(
        "neither pkexec nor sudo is installed, so the power limit cannot be set without running as root (see {hint})",
        hint=SETUP_HINT,
    )


def _why_pkexec_failed(stderr: str) -> Words:
    """pkexec exits 127 for every failure but a dismissal; the line it prints says which (polkit's pkexec.c)."""
    if "No authentication agent found" in stderr:
        return words("pkexec found no polkit authentication agent to ask for the password")
    if "Not authorized" in stderr:
        # polkit 127's socket-activated polkit-agent-helper-1 fails PAM even for the right password.
        return words(
            "polkit did not authorise pkexec (a wrong password, a rule that says no, or polkit 127's "
            "socket-activated agent helper, which rejects even the right password)"
        )
    if "Error getting authority" in stderr or "Error checking for authorization" in stderr:
        return words("pkexec could not reach polkit (no polkit daemon or no system D-Bus)")
    if "must be setuid root" in stderr:
        return words("pkexec is not setuid root here")
    return words("pkexec failed ({detail})", detail=_first_line(stderr) or words("exit status 127, no message"))


def _interpret(done: RunOutput, index: int, watts: int, via: Via, pkexec_failed: Text | None = None) -> PowerResult:
    report = _last_json_line(done.stdout)
    enforced = report.get("enforced_w")
    enforced_w = float(enforced) if isinstance(enforced, int | float) else None
    stderr = _last_line(done.stderr)
    code = done.returncode
    path = (
        words("via {via}", via=via)
        if pkexec_failed is None
        else words("via {via}; {failed}", via=via, failed=pkexec_failed)
    )

    def result(outcome: Outcome, message: Text) -> PowerResult:
        return PowerResult(outcome, index, watts, enforced_w, message, code, via)

    if code == 0:
        if enforced_w is not None and abs(enforced_w - watts) >= 0.5:
            message = words(
                "asked for {watts} W; the driver enforces {enforced} W ({path})",
                watts=watts,
                enforced=f"{enforced_w:g}",
                path=path,
            )
            return result(Outcome.CLAMPED, message)
        return result(
            Outcome.APPLIED, words("GPU {index} capped at {watts} W ({path})", index=index, watts=watts, path=path)
        )
    if code == SUDO_REFUSED and via == "sudo -n":
        refused = words("sudo -n was refused ({detail})", detail=stderr or words("no message"))
        if pkexec_failed is None:
            message = words(
                "{refused}: add the sudoers rule for the helper (see {hint})", refused=refused, hint=SETUP_HINT
            )
            return result(Outcome.NO_PERMISSION, message)
        message = words(
            "{failed}, and {refused}: run a polkit agent or add the sudoers rule for the helper (see {hint})",
            failed=pkexec_failed,
            refused=refused,
            hint=SETUP_HINT,
        )
        return result(Outcome.NO_PERMISSION, message)
    if code in HELPER_EXIT_CODES:
        said = report.get("message")
        helper_said = str(said) if said else stderr or OUTCOME_WORDS[HELPER_EXIT_CODES[code]]
        return result(HELPER_EXIT_CODES[code], words("{message} ({path})", message=helper_said, path=path))
    message = words(
        "the helper exited with status {code}: {detail} ({path})",
        code=code,
        detail=stderr or words("no message"),
        path=path,
    )
    return result(Outcome.FAILED, message)


def _last_json_line(text: str) -> dict[str, object]:
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                return {}
            return value if isinstance(value, dict) else {}
    return {}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _first_line(text: str) -> str:
    # pkexec's own last line can be "This incident has been reported."; the first one says what went wrong.
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else ""


def _as_default(result: PowerResult) -> PowerResult:
    """The words of a restore: the card is back at its default, not "capped"."""
    if not result.ok:
        return result
    watts = f"{result.enforced_w if result.enforced_w is not None else result.requested_w:g}"
    if result.via and result.via != "simulator":
        message = words(
            "GPU {index} is back at its default limit, {watts} W (via {via})",
            index=result.index,
            watts=watts,
            via=result.via,
        )
    else:
        message = words("GPU {index} is back at its default limit, {watts} W", index=result.index, watts=watts)
    return dataclasses.replace(result, message=message)


# --- what a click ended in, as the window says it -------------------------------------------------------


def click_words(decision: Decision | None, result: PowerResult) -> tuple[Outcome, Words | str]:
    """The outcome and message of one card's cap: a cap the card took, but not as typed, is clamped, and the
    decision says why before the helper's answer."""
    if result.ok and decision is not None and decision.clamped:
        return Outcome.CLAMPED, joined("; ", (decision.message, result.message))
    return result.outcome, result.message


def all_words(
    refused: Mapping[int, Text], done: Sequence[tuple[int, Decision, PowerResult, float | None]]
) -> tuple[Outcome, Words]:
    """What "Cap all" ended in: one outcome (the first failure, else clamped where any card was, else applied)
    and a line per GPU in GPU order — why a card was refused, or its outcome, the helper's answer and the
    limit read back."""
    parts = {index: words("GPU {index}: {message}", index=index, message=why) for index, why in refused.items()}
    outcomes: list[Outcome] = [Outcome.FAILED] * len(refused)
    for index, decision, result, enforced in done:
        outcome, message = click_words(decision, result)
        outcomes.append(outcome)
        if enforced is None:
            parts[index] = words(
                "GPU {index}: {outcome}: {message}", index=index, outcome=OUTCOME_WORDS[outcome], message=message
            )
        else:
            parts[index] = words(
                "GPU {index}: {outcome}: {message} (read back {watts} W)",
                index=index,
                outcome=OUTCOME_WORDS[outcome],
                message=message,
                watts=f"{enforced:.0f}",
            )
    if not parts:
        return Outcome.FAILED, NO_GPU_TO_CAP
    failed = [o for o in outcomes if o not in (Outcome.APPLIED, Outcome.CLAMPED)]
    overall = failed[0] if failed else Outcome.CLAMPED if Outcome.CLAMPED in outcomes else Outcome.APPLIED
    return overall, joined("; ", (parts[index] for index in sorted(parts)))


def not_run(exc: BaseException) -> Words:
    """The helper's worker thread raised instead of answering."""
    return words("the power helper could not run: {error}", error=message_of(exc))
