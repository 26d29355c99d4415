"""The test sandbox: runs prompt + answer + test in a separate process with hard limits.

WARNING: this executes code a model wrote. The child is a fresh isolated interpreter
(`python -I`) in an empty temporary directory, in its own process group that is killed
whole at the timeout, under rlimits on address space, CPU time, file size and core dumps.
That contains runaway loops, memory hogs, crashes and output floods; it is NOT a security
boundary: the code runs with your user's rights and can read your files and reach the
network. Run the bench only where that is acceptable, and never use this outside the bench.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import secrets
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from inference.lab.problems.problem import Problem

Status = Literal["passed", "failed", "timeout", "crashed"]
_OUTPUT_LIMIT = 16 << 20  # bytes a test may write to stdout or stderr (files, so rlimited)


@dataclass(frozen=True)
class Limits:
    """What one test run may use."""

    timeout_s: float = 10.0  # wall clock, for the whole process group
    memory_mb: int = 1024  # address space
    check_examples: bool = True  # run the prompt's >>> examples on the streamed answer too


@dataclass(frozen=True)
class Outcome:
    """How a test run ended: passed, or why not."""

    status: Status
    detail: str = ""  # the last line of stderr, or the signal, or the reason

    @property
    def passed(self) -> bool:
        """True when the test ran to its end and every check held."""
        return self.status == "passed"


def judge_program(problem: Problem, answer: str, marker: str) -> str:
    """The file that judges `answer`: the prompt, the answer, the test, then `check(entry)`.

    `marker` is printed only after `check` returns, so an answer that exits early with status
    0 does not pass.
    """
    return (
        f"{problem.prompt}{answer}\n\n{problem.test}\n\n"
        f"check({problem.entry_point})\nprint({marker!r})\n"
    )


def run_test(problem: Problem, answer: str, limits: Limits, prompt: str | None = None) -> Outcome:
    """Run the problem's test on `answer` (written after `prompt`, default the problem's)."""
    marker = f"prewrite-check-passed-{secrets.token_hex(8)}"
    shown = problem if prompt is None else replace(problem, prompt=prompt)
    return run_program(judge_program(shown, answer, marker), limits, marker)


def run_program(source: str, limits: Limits, marker: str) -> Outcome:
    """Execute `source` in a limited child; it passes when it exits 0 after printing `marker`."""
    with tempfile.TemporaryDirectory(prefix="prewrite-bench-") as folder:
        work = Path(folder)
        (work / "program.py").write_text(source, encoding="utf-8")
        with open(work / "stdout", "wb") as out, open(work / "stderr", "wb") as err:
            code = _execute(work, limits, out.fileno(), err.fileno())
        stdout = _read(work / "stdout")
        stderr = _read(work / "stderr")
    return _outcome(code, stdout, stderr, marker)


def _execute(work: Path, limits: Limits, out: int, err: int) -> int | None:
    """Run program.py; its exit status, or None when it ran past the timeout."""
    child = subprocess.Popen(
        [sys.executable, "-I", "program.py"],
        cwd=work,
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=err,
        env={"PATH": os.defpath, "HOME": str(work), "LC_ALL": "C.UTF-8", "OMP_NUM_THREADS": "1"},
        start_new_session=True,  # its own process group, killed whole below
        preexec_fn=lambda: _limit(limits),  # the bench calls this from one thread only
    )
    try:
        return child.wait(timeout=limits.timeout_s)
    except subprocess.TimeoutExpired:
        return None
    finally:
        _kill_group(child)


def _limit(limits: Limits) -> None:
    """In the child before exec: cap memory, CPU seconds, file size; no core dumps."""
    memory = limits.memory_mb << 20
    cpu = math.ceil(limits.timeout_s) + 1
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
    resource.setrlimit(resource.RLIMIT_FSIZE, (_OUTPUT_LIMIT, _OUTPUT_LIMIT))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _kill_group(child: subprocess.Popen) -> None:
    """Kill whatever is left of the child's process group, then reap the child."""
    with contextlib.suppress(ProcessLookupError):  # the group is already gone
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _read(path: Path) -> str:
    return path.read_bytes()[-_OUTPUT_LIMIT:].decode("utf-8", errors="replace")


def _outcome(code: int | None, stdout: str, stderr: str, marker: str) -> Outcome:
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    if code is None:
        return Outcome("timeout", "ran past the time limit")
    if code < 0:
        return Outcome("crashed", f"killed by {signal.Signals(-code).name}")
    if code != 0:
        return Outcome("failed", last[:200] or f"exit status {code}")
    if marker not in stdout.splitlines():
        return Outcome("failed", "exited before the test finished")
    return Outcome("passed")
