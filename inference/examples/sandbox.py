"""The sandbox that runs model-written code: bubblewrap namespaces, rlimits and a timeout.

A draft is code nobody has read, run automatically on the user's machine, so it runs where it
can do no harm: bubblewrap (`bwrap`) gives it new user, PID, network, IPC and UTS namespaces
(no network at all, no other process to see or signal), a read-only view of the system's
programs and of the interpreter's standard library, a private empty /tmp as its only writable
place and no home folder; it dies with the server. Inside, the runner (runner.py) limits its
own memory, CPU time, file size, open files and processes before it executes the module; the
whole namespace is killed at the timeout. Where bubblewrap is missing or cannot make its
namespaces, nothing runs and `probe` says why.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

RUNNER = Path(__file__).with_name("runner.py")
_SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib64", "/sbin", "/etc/alternatives")
_TRIAL = ">>> 1 + 1\n2\n"


@dataclass(frozen=True)
class ExampleRun:
    """How a draft did on its spec's examples."""

    passed: int
    failed: int
    total: int
    first_failure: str | None = None

    def to_wire(self) -> dict[str, object]:
        return {"passed": self.passed, "failed": self.failed, "total": self.total,
                "firstFailure": self.first_failure}  # fmt: skip


@dataclass(frozen=True)
class Limits:
    """What one run may use."""

    timeout_s: float = 5.0
    memory_bytes: int = 1 << 30
    file_bytes: int = 16 << 20
    open_files: int = 64
    processes: int = 16  # beyond those the user already runs (the limit counts them all)


class Sandbox:
    """Runs a module and its docstring's examples inside bubblewrap."""

    def __init__(self, bwrap: str, limits: Limits | None = None):
        self.bwrap = bwrap
        self.limits = limits or Limits()
        self.python = os.path.realpath(sys.executable)  # a venv's python is a link to the base
        self._runner = RUNNER.read_text(encoding="utf-8")

    @classmethod
    def probe(cls, limits: Limits | None = None) -> tuple[Sandbox | None, str]:
        """A working sandbox, or None and why there is none (said once, in the status)."""
        if not sys.platform.startswith("linux"):
            return None, f"examples are checked on Linux only (bubblewrap), not on {sys.platform}"
        bwrap = shutil.which("bwrap")
        if bwrap is None:
            return None, "bubblewrap is not installed (apt-get install bubblewrap)"
        sandbox = cls(bwrap, limits)
        try:
            trial = sandbox.run("", _TRIAL, "trial")
        except SandboxFailure as exc:
            return None, f"bubblewrap cannot run here: {exc}"
        if trial.passed != 1:
            return None, f"bubblewrap ran, but a trial example did not pass: {trial}"
        return sandbox, "examples are checked in a bubblewrap sandbox"

    def run(
        self, module: str, docstring: str, name: str, cancel: threading.Event | None = None
    ) -> ExampleRun:
        """Execute `module`, then the examples in `docstring` against it; `cancel` stops it."""
        job = {"module": module, "docstring": docstring, "name": name, "limits": self._rlimits()}
        group = _pids_group(self.limits.processes)
        command = self._command()
        if group is not None:  # the shell joins the group, then becomes bubblewrap
            command = ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"',
                       str(group), *command]  # fmt: skip
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True,  # one group: killed as one
        )  # fmt: skip
        watcher = _Watcher(process, cancel)
        try:
            out, err = process.communicate(json.dumps(job).encode(), self.limits.timeout_s)
        except subprocess.TimeoutExpired:
            _kill(process)
            process.communicate()
            total = count_examples(docstring)
            words = f"stopped after {self.limits.timeout_s:g} s"
            return ExampleRun(0, total, total, words)
        finally:
            watcher.stop()
            _remove_group(group)
        if watcher.cancelled:
            raise RunCancelled(name)
        return _result(out, err, process.returncode, docstring)

    def _command(self) -> list[str]:
        command = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session",
                   "--cap-drop", "ALL", "--clearenv", "--setenv", "PATH", "/usr/bin:/bin",
                   "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8"]  # fmt: skip
        for folder in _SYSTEM_DIRS:
            command += ["--ro-bind-try", folder, folder]
        prefix = sys.base_prefix  # the interpreter and its standard library, wherever they are
        if not prefix.startswith("/usr/"):
            command += ["--ro-bind", prefix, prefix]
        command += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--chdir", "/tmp",
                    "--remount-ro", "/"]  # fmt: skip
        return [*command, "--", self.python, "-I", "-c", self._runner]

    def _rlimits(self) -> dict[str, int]:
        limits = self.limits
        return {
            "RLIMIT_AS": limits.memory_bytes,
            "RLIMIT_CPU": math.ceil(limits.timeout_s) + 1,
            "RLIMIT_FSIZE": limits.file_bytes,
            "RLIMIT_NOFILE": limits.open_files,
            "RLIMIT_CORE": 0,
            "RLIMIT_NPROC": _processes_of_user() + limits.processes,
        }


class SandboxFailure(RuntimeError):
    """The sandbox itself failed (not the code in it)."""


class RunCancelled(RuntimeError):
    """A newer draft took the run's place."""


class _Watcher:
    """Kills the run's process group when `cancel` is set."""

    def __init__(self, process: subprocess.Popen[bytes], cancel: threading.Event | None):
        self.process, self.cancel, self.cancelled = process, cancel, False
        self._done = threading.Event()
        if cancel is not None:
            threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self) -> None:
        assert self.cancel is not None
        while not self._done.is_set():
            if self.cancel.wait(0.05):
                self.cancelled = True
                _kill(self.process)
                return

    def stop(self) -> None:
        self._done.set()


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the group: bubblewrap's child is PID 1 of the namespace, and takes it all along."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)


def _result(out: bytes, err: bytes, returncode: int, docstring: str) -> ExampleRun:
    lines = out.decode("utf-8", "replace").strip().splitlines()
    if returncode == 0 and lines:
        try:
            data = json.loads(lines[-1])
            return ExampleRun(int(data["passed"]), int(data["failed"]), int(data["total"]),
                              data.get("firstFailure"))  # fmt: skip
        except (ValueError, KeyError, TypeError):
            pass
    stderr = err.decode("utf-8", "replace").strip()
    if stderr.startswith("bwrap:"):
        raise SandboxFailure(stderr.splitlines()[-1])
    total = count_examples(docstring)
    why = stderr.splitlines()[-1] if stderr else f"exit status {returncode}"
    return ExampleRun(0, total, total, f"the run ended without a result: {why}"[:300])


_PIDS_ROOTS = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))  # cgroup v1, v2


def _pids_group(processes: int) -> Path | None:
    """As root, a pids cgroup of its own for one run, or None. The kernel never applies
    RLIMIT_NPROC to root, and a fork bomb run as root filled the machine's process table within
    the timeout (CI: every later fork failed); a cgroup's pids.max holds for root too."""
    if os.getuid() != 0:
        return None
    for root in _PIDS_ROOTS:
        group = root / f"prewrite-sandbox-{os.getpid()}-{threading.get_ident()}"
        try:
            group.mkdir(exist_ok=True)
            if not (group / "pids.max").is_file():  # not a cgroup with the pids controller
                group.rmdir()  # (a plain folder, say, where /sys/fs/cgroup is a tmpfs)
                continue
            (group / "pids.max").write_text(f"{processes + 8}\n")  # bwrap's own too
            return group
        except OSError:
            _remove_group(group)
    return None


def _remove_group(group: Path | None) -> None:
    """Remove a run's cgroup once its processes are gone (the namespace dies with its PID 1)."""
    if group is None:
        return
    for _ in range(50):
        try:
            group.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.02)


def _processes_of_user() -> int:
    """How many processes this user runs now: RLIMIT_NPROC counts them all, not only ours."""
    uid, count = os.getuid(), 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                count += entry.stat().st_uid == uid
            except OSError:
                continue
    return count


def count_examples(docstring: str) -> int:
    """How many examples doctest finds in a docstring's text (0 when it cannot read them)."""
    import doctest  # here: it brings pdb and unittest, which the server needs only now

    try:
        return len(doctest.DocTestParser().get_examples(docstring))
    except ValueError:  # an example doctest cannot read (say, a bad indentation): none run
        return 0
