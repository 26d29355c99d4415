"""bench pass1 --search: the pass@1 an alternative gives, and pooling the shards of a run."""

from __future__ import annotations

import pytest

from inference.examples.search import SearchPlan, examples_pass
from inference.lab.bench.errors import ResultsError
from inference.lab.bench.merge import merge_pass1
from inference.lab.bench.quality import Answer, Pass1Run, pass1_document, search_figures


def _answer(task: str, passed: bool, examples: tuple[int, int], seed: int = 0,
            alternative_passed: bool = False, drawn: int = 0) -> Answer:  # fmt: skip
    return Answer(task, passed, 10, "stop", 100.0, "passed" if passed else "failed",
                  examples_passed=examples[0], examples_total=examples[1], search_drawn=drawn,
                  alternative_seed=seed, alternative_passed=alternative_passed,
                  search_ms=50.0 * drawn)  # fmt: skip


ANSWERS = [
    _answer("HumanEval/0", True, (2, 2)),
    _answer("HumanEval/1", False, (0, 1), seed=2, alternative_passed=True, drawn=2),
    _answer("HumanEval/2", False, (1, 2), drawn=4),  # nothing found: the greedy answer stays
    _answer("HumanEval/3", False, (0, 1), seed=1, alternative_passed=False, drawn=1),
]


def test_an_alternative_counts_in_place_of_the_greedy_answer_and_a_refusal_as_failed():
    figures = search_figures(ANSWERS, total=5)  # one more problem was refused
    assert figures["searched"] == 3 and figures["search_found"] == 2
    assert figures["search_found_passed"] == 1 and figures["search_found_greedy_passed"] == 0
    assert figures["pass_at_1_with_search"] == pytest.approx(2 / 5)
    assert figures["search_samples"] == 7 and figures["search_median_ms"] == 100.0
    assert search_figures(ANSWERS[:1], total=1) == {}  # nothing searched: no figures


def test_a_plan_runs_each_new_text_once_and_passing_needs_every_example():
    plan = SearchPlan(3, "return x\n")
    assert list(plan.seeds()) == [1, 2, 3]
    assert [plan.is_new(t) for t in ("return x", "return y\n", "return y", "")] == [
        False, True, False, False,
    ]  # fmt: skip
    assert (plan.drawn, plan.run) == (4, 1)
    assert examples_pass(3, 3) and not examples_pass(2, 3) and not examples_pass(0, 0)


def test_shards_pool_into_one_pass1_document():
    meta = {"suite": "humaneval", "model": "m", "runtime": "llamacpp", "search": 4}
    first = pass1_document({**meta, "shard": "1/2"}, Pass1Run(ANSWERS[:2]), complete=True)
    rest = Pass1Run(ANSWERS[2:], {"HumanEval/4": "too long"})
    second = pass1_document({**meta, "shard": "2/2"}, rest, complete=True)
    merged = merge_pass1([("b", second), ("a", first)])
    assert [a["task_id"] for a in merged["answers"]] == [a.task_id for a in ANSWERS]
    assert merged["summary"]["problems"] == 5 and merged["summary"]["refused"] == 1
    assert merged["summary"]["pass_at_1_with_search"] == pytest.approx(2 / 5)
    assert merged["complete"] is True and merged["shard"] is None
    with pytest.raises(ResultsError, match="in both"):
        merge_pass1([("a", first), ("again", first)])
    with pytest.raises(ResultsError, match="other settings"):
        merge_pass1([("a", first), ("b", {**second, "search": 0})])
