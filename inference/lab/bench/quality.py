"""`prewrite bench pass1`: answer quality alone, plain greedy on every problem and its tests.

A third of a streaming bench's work (no warm base, no streaming), for comparing models and
prompt formats on a whole suite. The prompt is the one the streaming bench finalizes on (the
whole docstring, closed), so the figures compare with its pass@1.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from tqdm import tqdm

from inference.api import Request
from inference.engine import Engine
from inference.errors import RequestError
from inference.examples.sandbox import Sandbox
from inference.examples.search import SEARCH_TEMPERATURE, SearchPlan, examples_pass
from inference.lab.bench.errors import ResultsError
from inference.lab.bench.examples import examples_figures, examples_sandbox, run_examples
from inference.lab.bench.failures import Failure, judge_failure, summarize_failures
from inference.lab.problems.problem import Problem
from inference.lab.problems.sandbox import Limits, run_test
from inference.lab.problems.segment import DocstringNotFound, split_prompt

PASS1_FILE = "pass1.json"
SPLIT_FILE = "split.json"  # pass1.json with the verdicts on its failures (`split`)


@dataclass(frozen=True)
class Answer:
    """One problem's plain greedy answer and its verdict."""

    task_id: str
    passed: bool
    tokens: int
    finish_reason: str
    ms: float
    status: str  # the sandbox's verdict: passed, failed, timeout, error ...
    text: str = ""  # the suggestion, as the editor would get it
    raw: str = ""  # the model's text before body extraction (chat), cut by the stop rule
    token_ids: tuple[int, ...] = ()  # the answer's tokens: later extraction needs no decode
    detail: str = ""  # the sandbox's last line of stderr, or why it stopped
    examples_passed: int = 0  # the prompt's >>> examples on this answer (0 of 0: none run)
    examples_total: int = 0
    # --search: sampled answers tried when the examples failed, the seed of the first whose
    # examples pass (0: none), whether that one passes the hidden tests, and the time it took
    search_drawn: int = 0
    alternative_seed: int = 0
    alternative_passed: bool = False
    search_ms: float = 0.0


def final_prompt(problem: Problem) -> str:
    """The streaming bench's last prompt (all units, docstring closed), else the prompt."""
    try:
        spec = split_prompt(problem.prompt)
    except DocstringNotFound:
        return problem.prompt
    return spec.prompt(len(spec.units))


@dataclass
class Pass1Run:
    """The answers so far, the refusals, and whether the run was stopped before the end."""

    answers: list[Answer] = field(default_factory=list)
    refused: dict[str, str] = field(default_factory=dict)
    interrupted: bool = False

    def has(self, task_id: str) -> bool:
        """Whether this problem already has its answer or refusal."""
        return task_id in self.refused or any(a.task_id == task_id for a in self.answers)


def measure_pass1(
    engine: Engine,
    problems: list[Problem],
    limits: Limits,
    progress: bool = True,
    resumed: Pass1Run | None = None,
    checkpoint: Callable[[Pass1Run], None] | None = None,
    search: int = 0,
) -> Pass1Run:
    """Every problem's answer and verdict; refusals (too long, say) are kept apart.

    A `resumed` run's problems are not decoded again; `checkpoint` sees the run after every
    problem (a crash loses one answer); Ctrl-C ends the run with what is done, `interrupted`.
    With `search`, an answer whose examples fail gets up to that many sampled alternatives
    (inference/examples/search.py); the first whose examples pass is tested too.
    """
    run = resumed or Pass1Run()
    todo = [p for p in problems if not run.has(p.task_id)]
    bar = tqdm(todo, desc="pass@1", unit="problem", disable=not progress, dynamic_ncols=True)
    try:
        for problem in bar:
            _answer_one(engine, problem, limits, run, search)
            passed = sum(a.passed for a in run.answers)
            bar.set_postfix_str(f"pass@1 {100 * passed / max(len(run.answers), 1):.1f}%")
            if checkpoint is not None:
                checkpoint(run)
    except KeyboardInterrupt:
        run.interrupted = True
    finally:
        bar.close()
    order = {p.task_id: i for i, p in enumerate(problems)}
    run.answers.sort(key=lambda a: order.get(a.task_id, len(order)))
    return run


def _answer_one(
    engine: Engine, problem: Problem, limits: Limits, run: Pass1Run, search: int = 0
) -> None:
    prompt = final_prompt(problem)
    try:
        answer = engine.generate(Request(prompt))
    except RequestError as exc:
        run.refused[problem.task_id] = str(exc)
        return
    outcome = run_test(problem, answer.text, limits, prompt=prompt)
    raw, _ = engine.stop_rule(engine.prompt(Request(prompt))).answer(answer.token_ids)
    sandbox = examples_sandbox() if limits.check_examples else None
    examples = run_examples(sandbox, prompt, answer.text) if sandbox is not None else (0, 0)
    drawn, seed, hidden, ms = 0, 0, False, 0.0
    if search and sandbox is not None and examples[1] and not examples_pass(*examples):
        drawn, seed, hidden, ms = _search(engine, problem, prompt, answer.text, limits, sandbox,
                                          search)  # fmt: skip
    run.answers.append(Answer(problem.task_id, outcome.passed, len(answer.token_ids),
                              answer.finish_reason, round(answer.cost.wall_ms, 1),
                              outcome.status, answer.text, raw, tuple(answer.token_ids),
                              outcome.detail[-300:], *examples, search_drawn=drawn,
                              alternative_seed=seed, alternative_passed=hidden,
                              search_ms=ms))  # fmt: skip


def _search(
    engine: Engine,
    problem: Problem,
    prompt: str,
    greedy: str,
    limits: Limits,
    sandbox: Sandbox,
    tries: int,
) -> tuple[int, int, bool, float]:
    """(samples drawn, seed of the first whose examples pass or 0, its hidden tests, ms)."""
    plan = SearchPlan(tries, greedy)
    started = time.perf_counter()
    for seed in plan.seeds():
        sampled = engine.sample(Request(prompt), seed, SEARCH_TEMPERATURE)
        if not plan.is_new(sampled.text):
            continue
        if examples_pass(*run_examples(sandbox, prompt, sampled.text)):
            ms = (time.perf_counter() - started) * 1000.0
            hidden = run_test(problem, sampled.text, limits, prompt=prompt).passed
            return plan.drawn, seed, hidden, round(ms, 1)
    return plan.drawn, 0, False, round((time.perf_counter() - started) * 1000.0, 1)


# Settings that change the answers: a resumed pass1 run must match the stored one on all.
PASS1_RESUME_KEYS = ("suite", "model", "runtime", "adapter", "system_prompt", "dtype",
                     "device", "max_tokens", "prompt_format", "code_below", "shard",
                     "test_timeout_s", "test_memory_mb", "search")  # fmt: skip


def resume_pass1(stored: dict[str, Any], meta: dict[str, Any], where: str) -> Pass1Run:
    """The answers of a stored pass1.json, to be continued under the settings `meta`;
    ResultsError when it was made with other settings (its answers would not pool)."""
    differ = [k for k in PASS1_RESUME_KEYS if stored.get(k) != meta.get(k)]
    if differ:
        changes = ", ".join(f"{k} {stored.get(k)!r} -> {meta.get(k)!r}" for k in differ)
        raise ResultsError(f"{where}: cannot resume a run made with other settings: {changes}")
    names = {f.name for f in fields(Answer)}
    try:
        answers = [Answer(**({k: v for k, v in a.items() if k in names}
                             | {"token_ids": tuple(a.get("token_ids", ()))}))
                   for a in stored["answers"]]  # fmt: skip
    except (KeyError, TypeError, AttributeError) as exc:
        raise ResultsError(f"{where}: not a pass1 result: {exc}") from exc
    return Pass1Run(answers, dict(stored.get("refused") or {}))


def summarize_pass1(answers: list[Answer], refused: dict[str, str]) -> dict[str, Any]:
    """pass@1 over all problems (a refused one counts as failed) and the answers' shape."""
    total = len(answers) + len(refused)
    return {
        "problems": total,
        "pass_at_1": sum(a.passed for a in answers) / max(total, 1),
        "refused": len(refused),
        "median_tokens": statistics.median(a.tokens for a in answers) if answers else 0,
        "median_ms": statistics.median(a.ms for a in answers) if answers else 0.0,
        "statuses": {s: sum(a.status == s for a in answers) for s in {a.status for a in answers}},
        **examples_figures((a.examples_passed, a.examples_total, a.passed) for a in answers),
        **search_figures(answers, total),
    }


def search_figures(answers: list[Answer], total: int) -> dict[str, Any]:
    """pass@1 when an alternative whose examples pass replaces a greedy answer whose examples
    fail (a refused problem counts as failed), and what the search cost."""
    searched = [a for a in answers if a.search_drawn]
    if not searched:
        return {}
    found = [a for a in searched if a.alternative_seed]
    offered = [a.alternative_passed if a.alternative_seed else a.passed for a in answers]
    return {
        "searched": len(searched),
        "search_found": len(found),
        "search_found_passed": sum(a.alternative_passed for a in found),
        "search_found_greedy_passed": sum(a.passed for a in found),
        "pass_at_1_with_search": sum(offered) / max(total, 1),
        "search_samples": sum(a.search_drawn for a in searched),
        "search_median_ms": statistics.median(a.search_ms for a in searched),
        "search_total_s": round(sum(a.search_ms for a in searched) / 1000.0, 1),
    }


def search_line(summary: dict[str, Any]) -> str | None:
    """The search's figures of a summary, in words (None when nothing was searched)."""
    if not summary.get("searched"):
        return None
    return (
        f"search: {summary['searched']} answers failed their examples, an alternative passing "
        f"them was found for {summary['search_found']} ({summary['search_found_passed']} of "
        f"those pass the hidden tests, the greedy answer {summary['search_found_greedy_passed']}"
        f"); pass@1 with search {100 * summary['pass_at_1_with_search']:.1f}%; "
        f"{summary['search_samples']} samples, median {summary['search_median_ms']:.0f} ms, "
        f"{summary['search_total_s']:.0f} s in all"
    )


def pass1_document(meta: dict[str, Any], run: Pass1Run, complete: bool) -> dict[str, Any]:
    """What pass1.json holds; `complete` false while problems are still to be answered."""
    return {**meta, "complete": complete, "summary": summarize_pass1(run.answers, run.refused),
            "answers": [asdict(a) for a in run.answers], "refused": run.refused}  # fmt: skip


def rejudge(
    engine: Engine, problems: list[Problem], answers: list[dict], limits: Limits
) -> list[dict]:
    """The answers as this code's stop rule and extraction render their tokens, tested again
    where the text changed: a fix to extraction measured without decoding again."""
    by_id = {p.task_id: p for p in problems}
    rendered = []
    for answer in answers:
        problem = by_id[answer["task_id"]]
        prompt = final_prompt(problem)
        text, reason = engine.answer_text(engine.prompt(Request(prompt)), answer["token_ids"])
        if text != answer["text"]:
            outcome = run_test(problem, text, limits, prompt=prompt)
            answer = {**answer, "text": text, "finish_reason": reason, "passed": outcome.passed,
                      "status": outcome.status, "detail": outcome.detail[-300:]}  # fmt: skip
        rendered.append(answer)
    return rendered


def split_failures(
    engine: Engine,
    problems: list[Problem],
    answers: list[dict],
    limits: Limits,
    progress: bool = True,
) -> list[Failure]:
    """Each failed answer's verdict (failures.py): cut by the budget, cut by us, or wrong."""
    by_id = {p.task_id: p for p in problems}
    tokenizer = engine.runtime.tokenizer

    def carry_on(text: str) -> str:
        return engine.generate(Request(text), body_rule=False).text

    failed = [a for a in answers if not a["passed"]]
    verdicts = []
    for answer in tqdm(failed, desc="failures", unit="answer", disable=not progress):
        problem = by_id[answer["task_id"]]
        prompt = final_prompt(problem)
        chat = engine.builder.format_for(Request(prompt)) == "chat"
        uncut = str(tokenizer.decode(answer["token_ids"], skip_special_tokens=True))
        verdicts.append(judge_failure(problem, prompt, answer, chat, uncut, carry_on, limits))
    return verdicts


def split_document(
    before: list[dict], after: list[dict], failures: list[Failure], refused: dict[str, str]
) -> dict[str, Any]:
    """pass@1 as run and with this code's extraction, and the verdicts on what failed."""
    total = max(len(before) + len(refused), 1)
    return {
        "pass_at_1_as_run": sum(a["passed"] for a in before) / total,
        "pass_at_1": sum(a["passed"] for a in after) / total,
        "verdicts": summarize_failures(after, failures),
        "changed_by_extraction": [
            a["task_id"] for a, b in zip(before, after, strict=True) if a["text"] != b["text"]
        ],  # fmt: skip
        "failures": [asdict(f) for f in failures],
    }
