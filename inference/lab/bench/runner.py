"""The measurement: per problem, plain decoding then streaming, side by side, then their tests.

Protocol (the seed's, section 4): the docstring is replayed unit by unit. base decodes the
final prompt greedily, once warm (the prompt above the last unit already encoded, like a
server that reuses its prefix KV) and once cold. stream drafts at unit 1, updates at each
later unit and finalizes at the last; only the finalize (the residual) is charged. Base and
stream of one example run back to back so that drift on a noisy machine hits both.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from tqdm import tqdm

from inference.api import Completion, Request
from inference.engine import DRAFTING, Engine
from inference.errors import RequestError
from inference.lab.bench.examples import examples_sandbox, run_examples
from inference.lab.problems.problem import Problem
from inference.lab.problems.sandbox import Limits, Outcome, run_test
from inference.lab.problems.segment import DocstringNotFound, SplitPrompt, split_prompt


@dataclass
class ExampleResult:
    """One example's figures: residual cost of both sides, the draft's fate, both verdicts."""

    task_id: str
    units: int
    base_forwards: int  # warm base: forwards after the last unit arrived
    stream_residual_forwards: int
    base_wall_ms: float
    stream_residual_wall_ms: float
    accepted_tokens: int  # draft tokens the finalize kept
    draft_tokens: int  # draft tokens the finalize verified
    identical: bool  # stream answer text == base answer text
    identical_tokens: bool  # and token for token
    base_pass: bool
    stream_pass: bool
    cold_base_forwards: int
    cold_base_wall_ms: float
    drafting_forwards: int  # spent while the spec was being typed (units 1..n-1)
    generated_tokens: int  # residual tokens written after the accepted prefix
    lookahead_tokens: int  # of those, confirmed from the stale draft
    base_tokens: int  # length of the base answer in tokens
    base_finish: str  # why each answer ended: stop, eos, length
    stream_finish: str
    base_status: str  # the sandbox's verdict: passed, failed, timeout, crashed
    stream_status: str
    base_detail: str
    stream_detail: str
    base_answer: str
    stream_answer: str
    drafter_tokens: int = 0  # residual tokens the parallel drafter proposed (with --drafter)
    # the prompt's >>> examples run on the streamed answer in the server's sandbox (0 of 0:
    # no examples, or no sandbox): what the user's badge would have said
    examples_total: int = 0
    examples_passed: int = 0

    @property
    def forward_speedup(self) -> float:
        """Residual speedup in forwards: base / stream."""
        return self.base_forwards / max(self.stream_residual_forwards, 1)

    @property
    def wall_speedup(self) -> float:
        """Residual speedup in wall clock against the warm base."""
        return self.base_wall_ms / max(self.stream_residual_wall_ms, 1e-3)

    @property
    def cold_wall_speedup(self) -> float:
        """Residual speedup in wall clock against the cold base."""
        return self.cold_base_wall_ms / max(self.stream_residual_wall_ms, 1e-3)


@dataclass
class BenchRun:
    """What a run produced: measured examples and why the others were left out."""

    examples: list[ExampleResult] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)  # task id -> why (fewer than 2 units)
    errors: dict[str, str] = field(default_factory=dict)  # task id -> the engine's refusal
    interrupted: bool = False


class Runner:
    """Measures problems one at a time against one engine."""

    def __init__(self, engine: Engine, limits: Limits):
        self.engine = engine
        self.limits = limits
        self.warm = False  # set by the untimed warm-up forward before the first example
        self.examples = examples_sandbox() if limits.check_examples else None

    def measure(self, problem: Problem, spec: SplitPrompt) -> ExampleResult:
        """Base (cold, warm) then stream on one example, then the tests of both answers."""
        requests = [Request(prompt) for prompt in spec.prompts()]  # cumulative: units 1..i
        cold = self.engine.generate(requests[-1])
        base = self.engine.generate(requests[-1], warm_from=requests[-2])
        stream, drafting = self._stream(problem.task_id, requests)
        base_outcome = run_test(problem, base.text, self.limits, prompt=requests[-1].text)
        stream_outcome = (
            base_outcome
            if stream.text == base.text
            else run_test(problem, stream.text, self.limits, prompt=requests[-1].text)
        )
        result = _result(problem, spec, cold, base, stream, drafting, base_outcome, stream_outcome)
        if self.examples is not None:
            checked = run_examples(self.examples, requests[-1].text, stream.text)
            result.examples_passed, result.examples_total = checked
        return result

    def _stream(self, session: str, requests: list[Request]) -> tuple[Completion, int]:
        """Draft while units 1..n-1 arrive, finalize at unit n; the answer and drafting forwards."""
        counter = self.engine.counter.by_phase
        self.engine.open(session)
        try:
            before = counter.get(DRAFTING, 0)
            for version, request in enumerate(requests[:-1], start=1):
                self.engine.update(session, request, version)
            drafting = counter.get(DRAFTING, 0) - before
            final = self.engine.finalize(session, requests[-1], len(requests))
        finally:
            self.engine.close(session)
        return final, drafting

    def warm_up(self, text: str) -> None:
        """One untimed forward, so the first example does not pay for lazy initialisation."""
        self.warm = True
        self.engine.warm_up(text)


def run_suite(
    engine: Engine,
    problems: list[Problem],
    limits: Limits,
    progress: bool = True,
    checkpoint: Callable[[BenchRun], None] | None = None,
) -> BenchRun:
    """Measure every streamable problem; Ctrl-C stops the run and keeps what was finished.

    `checkpoint` is called with the run so far after every measured example.
    """
    each = None if checkpoint is None else lambda runs: checkpoint(runs[""])
    return run_suites({"": engine}, problems, limits, progress, each)[""]


def run_suites(
    engines: Mapping[str, Engine],
    problems: list[Problem],
    limits: Limits,
    progress: bool = True,
    checkpoint: Callable[[dict[str, BenchRun]], None] | None = None,
    resumed: Mapping[str, BenchRun] | None = None,
) -> dict[str, BenchRun]:
    """`run_suite` for several engines side by side (e.g. without and with an adapter).

    Each example is measured on every engine before the next example starts, so drift on
    a noisy machine hits all of them alike. `resumed` holds earlier runs (per engine) to
    continue: problems measured in every one of them are not measured again.
    """
    excluded: dict[str, str] = {}  # the same problems are left out of every run
    runs = {name: BenchRun(excluded=excluded) for name in engines}
    done: set[str] = set()
    if resumed:
        done = set.intersection(*(_finished(resumed.get(name)) for name in engines))
    for name, run in runs.items():
        if resumed and name in resumed:
            run.examples = [e for e in resumed[name].examples if e.task_id in done]
            run.errors = {k: v for k, v in resumed[name].errors.items() if k in done}
    runners = {name: Runner(engine, limits) for name, engine in engines.items()}
    todo = [problem for problem in problems if problem.task_id not in done]
    bar = tqdm(todo, desc="bench", unit="problem", disable=not progress, dynamic_ncols=True)
    try:
        for problem, spec in _specs(bar, excluded):
            measured = [_measure(runners[name], runs[name], problem, spec) for name in runners]
            if not any(measured):
                continue
            bar.set_postfix_str(_running_medians(runs), refresh=False)
            if checkpoint is not None:
                checkpoint(runs)
    except KeyboardInterrupt:
        for run in runs.values():
            run.interrupted = True
    finally:
        bar.close()
    return runs


def _finished(run: BenchRun | None) -> set[str]:
    """Task ids a run has a verdict for: measured, or refused by the engine."""
    if run is None:
        return set()
    return {e.task_id for e in run.examples} | set(run.errors)


def _measure(runner: Runner, run: BenchRun, problem: Problem, spec: SplitPrompt) -> bool:
    """Measure one example into `run`; False when the engine refused it (recorded)."""
    if not runner.warm:
        runner.warm_up(spec.prompt(len(spec.units)))
    try:
        run.examples.append(runner.measure(problem, spec))
    except RequestError as exc:
        run.errors[problem.task_id] = str(exc)
        return False
    return True


def _specs(
    problems: Iterable[Problem], excluded: dict[str, str]
) -> Iterator[tuple[Problem, SplitPrompt]]:
    """The problems worth streaming with their specs; the rest go to `excluded`."""
    for problem in problems:
        try:
            spec = split_prompt(problem.prompt)
        except DocstringNotFound as exc:
            excluded[problem.task_id] = str(exc)
            continue
        if not spec.streamable:
            excluded[problem.task_id] = f"{len(spec.units)} unit(s): nothing to stream"
            continue
        yield problem, spec


def _running_medians(runs: dict[str, BenchRun]) -> str:
    return "; ".join(
        f"{name + ': ' if name else ''}{_running_median(run.examples)}"
        for name, run in runs.items()
        if run.examples
    )


def _running_median(examples: list[ExampleResult]) -> str:
    forwards = statistics.median(e.forward_speedup for e in examples)
    wall = statistics.median(e.wall_speedup for e in examples)
    return f"median {forwards:.1f}x forwards, {wall:.1f}x wall"


def _result(
    problem: Problem,
    spec: SplitPrompt,
    cold: Completion,
    base: Completion,
    stream: Completion,
    drafting: int,
    base_outcome: Outcome,
    stream_outcome: Outcome,
) -> ExampleResult:
    residual = stream.cost
    return ExampleResult(
        task_id=problem.task_id,
        units=len(spec.units),
        base_forwards=base.cost.forwards,
        stream_residual_forwards=residual.forwards,
        base_wall_ms=base.cost.wall_ms,
        stream_residual_wall_ms=residual.wall_ms,
        accepted_tokens=residual.accepted_tokens,
        draft_tokens=residual.draft_tokens,
        identical=stream.text == base.text,
        identical_tokens=stream.token_ids == base.token_ids,
        base_pass=base_outcome.passed,
        stream_pass=stream_outcome.passed,
        cold_base_forwards=cold.cost.forwards,
        cold_base_wall_ms=cold.cost.wall_ms,
        drafting_forwards=drafting,
        generated_tokens=residual.generated_tokens,
        lookahead_tokens=residual.lookahead_tokens,
        base_tokens=len(base.token_ids),
        base_finish=base.finish_reason,
        stream_finish=stream.finish_reason,
        base_status=base_outcome.status,
        stream_status=stream_outcome.status,
        base_detail=base_outcome.detail,
        stream_detail=stream_outcome.detail,
        base_answer=base.text,
        stream_answer=stream.text,
        drafter_tokens=residual.drafter_tokens,
    )
