"""Loading benchmark suites: the HumanEval wheel's data, JSONL files, and clear errors."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from inference.lab.problems.errors import SuiteError
from inference.lab.problems.suites import load_suite
from tests.paths import TEST_DATA

pytestmark = pytest.mark.timeout(60)

DATA = TEST_DATA / "bench"


def test_humaneval_comes_from_the_wheel() -> None:
    problems = load_suite("humaneval")
    assert len(problems) == 164
    first = problems[0]
    assert (first.task_id, first.entry_point) == ("HumanEval/0", "has_close_elements")
    assert "def check(candidate)" in first.test


def test_a_jsonl_path_is_a_suite(tmp_path: Path) -> None:
    problems = load_suite(str(DATA / "mini.jsonl"))
    tasks = [p.task_id for p in problems]
    assert tasks == ["mini/add", "mini/largest", "mini/square", "mini/is_even"]
    packed = tmp_path / "mini.jsonl.gz"
    packed.write_bytes(gzip.compress((DATA / "mini.jsonl").read_bytes()))
    assert load_suite(str(packed)) == problems


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("not_json.jsonl", "not_json.jsonl:2: not a JSON object"),
        ("missing_key.jsonl", "missing_key.jsonl:1: missing entry_point"),
        ("wrong_type.jsonl", "wrong_type.jsonl:1: task_id must be non-empty strings"),
        ("duplicate.jsonl", "task_id 'a' appears twice"),
        ("empty.jsonl", "the suite has no problems"),
        ("absent.jsonl", "neither 'humaneval', 'more-itertools' nor a JSONL file"),
    ],
)
def test_bad_suites_say_what_is_wrong(name: str, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        load_suite(str(DATA / name))
