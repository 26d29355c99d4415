"""The runner's bookkeeping against a scripted engine: exclusion, refusals, Ctrl-C, checkpoints.

The engine here is a stand-in that answers instantly; what it checks (which problems are
measured, what is charged to which side, what survives an interrupt) holds for any model. The
real model runs in test_bench_e2e.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.api import Completion, Cost, ForwardCounter, Request
from inference.errors import ContextOverflowError
from inference.lab.bench.errors import ResultsError
from inference.lab.bench.results import build_results, resume_run, write_results
from inference.lab.bench.runner import BenchRun, run_suite, run_suites
from inference.lab.problems.problem import Problem
from inference.lab.problems.sandbox import Limits
from inference.lab.problems.suites import read_jsonl
from tests.paths import TEST_DATA

pytestmark = pytest.mark.timeout(60)

DATA = TEST_DATA / "bench"
ANSWER = "    return a + b\n"


class ScriptedEngine:
    """Answers every request with ANSWER; 'HUGE' in a request is refused, 'BOOM' is Ctrl-C."""

    def __init__(self) -> None:
        self.counter = ForwardCounter()
        self.sessions: set[str] = set()
        self.calls: list[str] = []

    def warm_up(self, text: str) -> None:
        self.calls.append("warm up")

    def generate(self, request: Request, warm_from: Request | None = None) -> Completion:
        self.calls.append("warm base" if warm_from else "cold base")
        return self._answer(request, Cost(forwards=10, wall_ms=100.0))

    def open(self, session: str) -> None:
        self.sessions.add(session)

    def close(self, session: str) -> None:
        self.sessions.discard(session)

    def update(self, session: str, request: Request, version: int) -> Completion:
        self.calls.append(f"update {version}")
        self.counter.record("drafting", 1)
        return self._answer(request, Cost(forwards=1))

    def finalize(self, session: str, request: Request, version: int) -> Completion:
        self.calls.append(f"finalize {version}")
        residual = Cost(forwards=1, wall_ms=20.0, draft_tokens=3, accepted_tokens=3)
        return self._answer(request, residual)

    def _answer(self, request: Request, cost: Cost) -> Completion:
        if "HUGE" in request.text:
            raise ContextOverflowError("the request is too long")
        if "BOOM" in request.text:
            raise KeyboardInterrupt
        return Completion(ANSWER, [7, 8, 9], "stop", cost)


def problem(task_id: str, spec: str) -> Problem:
    prompt = f'def add(a, b):\n    """{spec}\n    """\n'
    return Problem(task_id, prompt, "add", "def check(f):\n    assert f(1, 2) == 3\n")


def test_run_measures_excludes_refuses_and_stops_on_ctrl_c() -> None:
    mini = read_jsonl(DATA / "mini.jsonl")  # add (3 units), largest, square (1 unit), is_even
    problems = [
        mini[0],
        mini[2],
        problem("t/huge", "Add a and b. HUGE"),
        mini[1],
        problem("t/boom", "Add a and b. BOOM"),
        mini[3],
    ]
    engine = ScriptedEngine()
    checkpoints: list[list[str]] = []

    def checkpoint(run: BenchRun) -> None:
        checkpoints.append([e.task_id for e in run.examples])

    run = run_suite(engine, problems, Limits(timeout_s=5.0), progress=False,  # type: ignore[arg-type]
                    checkpoint=checkpoint)  # fmt: skip

    assert [e.task_id for e in run.examples] == ["mini/add", "mini/largest"]
    assert run.excluded == {"mini/square": "1 unit(s): nothing to stream"}
    assert run.errors == {"t/huge": "the request is too long"}
    assert run.interrupted
    assert checkpoints == [["mini/add"], ["mini/add", "mini/largest"]]
    assert engine.sessions == set()  # the interrupted session was closed
    assert engine.calls[:6] == ["warm up", "cold base", "warm base", "update 1", "update 2",
                               "finalize 3"]  # fmt: skip
    add = run.examples[0]
    assert (add.units, add.drafting_forwards) == (3, 2)
    assert (add.base_forwards, add.stream_residual_forwards, add.forward_speedup) == (10, 1, 10.0)
    assert add.wall_speedup == 5.0
    assert add.identical and add.base_pass and add.stream_pass
    largest = run.examples[1]
    assert not largest.base_pass and largest.base_status == "failed"


def test_an_interrupted_run_resumes_where_it_stopped_and_refuses_other_settings(
    tmp_path: Path,
) -> None:
    mini = read_jsonl(DATA / "mini.jsonl")
    boom = problem("t/boom", "Add a and b. BOOM")
    huge = problem("t/huge", "Add a and b. HUGE")
    meta = {"suite": "mini", "model": "m", "acceptance": "exact", "dtype": "float32"}
    first = run_suite(ScriptedEngine(), [mini[0], huge, boom, mini[1]],  # type: ignore[arg-type]
                      Limits(timeout_s=5.0), progress=False)  # fmt: skip
    assert first.interrupted
    write_results(tmp_path, build_results(first, meta))

    resumed = resume_run(tmp_path, meta)
    assert [e.task_id for e in resumed.examples] == ["mini/add"]
    assert resumed.examples[0] == first.examples[0]  # every field survives the round trip
    engine = ScriptedEngine()
    todo = [mini[0], huge, mini[1], mini[3]]
    limits = Limits(timeout_s=5.0)
    second = run_suites({"": engine}, todo, limits, False, resumed={"": resumed})[""]  # type: ignore[dict-item]
    assert [e.task_id for e in second.examples] == ["mini/add", "mini/largest", "mini/is_even"]
    assert second.errors == {"t/huge": "the request is too long"}  # kept, not retried
    assert engine.calls.count("cold base") == 2  # add and huge were not measured again

    with pytest.raises(ResultsError, match="other settings: dtype 'float32' -> 'bfloat16'"):
        resume_run(tmp_path, {**meta, "dtype": "bfloat16"})
    assert resume_run(tmp_path / "new", meta).examples == []
    newer = {**meta, "drafter": None, "drafter_mode": "fused"}  # settings added since: defaults
    assert [e.task_id for e in resume_run(tmp_path, newer).examples] == ["mini/add"]
