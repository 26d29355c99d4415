"""The bench's docstring segmentation: units, cumulative prompts and the exclusion rule."""

from __future__ import annotations

import ast
import json

import pytest

from inference.lab.problems.segment import DocstringNotFound, split_docstring, split_prompt
from inference.lab.problems.suites import load_suite, read_jsonl
from tests.paths import TEST_DATA

pytestmark = pytest.mark.timeout(60)

DATA = TEST_DATA / "bench"
CASES = json.loads((DATA / "segmentation.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_docstring_is_cut_into_sentences_and_examples(case: dict) -> None:
    units = split_docstring(case["docstring"])
    assert [unit.text for unit in units] == case["units"]
    assert [unit.kind for unit in units] == case["kinds"]


@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_units_join_back_into_the_docstring(case: dict) -> None:
    units = split_docstring(case["docstring"])
    assert "".join(unit.text for unit in units) == case["docstring"].rstrip()


def test_prompts_grow_one_unit_at_a_time_and_stay_closed() -> None:
    problem = {p.task_id: p for p in read_jsonl(DATA / "mini.jsonl")}["mini/is_even"]
    spec = split_prompt(problem.prompt)
    prompts = spec.prompts()
    assert len(prompts) == 4
    assert prompts[0] == (
        'def is_even(n: int) -> bool:\n'
        '    """Return True if n is even, e.g. 4, and False otherwise.\n'
        '    """\n'
    )
    assert prompts[1].endswith('otherwise.\n    Zero counts as even.\n    """\n')
    assert prompts[-1] == problem.prompt
    for prompt in prompts:  # every prompt is a function whose body starts on the next line
        ast.parse(prompt + "    return True\n")


def test_single_unit_requests_are_excluded() -> None:
    assert not split_prompt('def f(x):\n    """Return x squared."""\n').streamable
    assert not split_prompt('def f(x):\n    """   """\n').streamable
    assert split_prompt('def f(x):\n    """Return x squared. X is an int."""\n').streamable


def test_one_line_docstring_is_closed_on_its_own_line() -> None:
    spec = split_prompt('def f(x):\n    """Return x squared. X is an int."""\n')
    assert spec.prompt(1) == 'def f(x):\n    """Return x squared.\n    """\n'


def test_the_spec_is_the_last_docstring() -> None:
    prompt = (
        'def helper(s):\n    """Encode s. Shift every letter."""\n    return s\n\n\n'
        "def decode(s):\n    '''Decode s. It was made by helper.'''\n"
    )
    spec = split_prompt(prompt)
    assert [unit.text for unit in spec.units] == ["Decode s.", " It was made by helper."]
    assert spec.prompt(1).endswith("def decode(s):\n    '''Decode s.\n    '''\n")


def test_docstring_after_a_statement_and_with_a_prefix() -> None:
    prompt = 'def f(grid):\n    import math\n    r"""Fill the grid. Use math.\n    """\n'
    spec = split_prompt(prompt)
    assert spec.head.endswith('    import math\n    r"""')
    assert spec.prompt(1) == 'def f(grid):\n    import math\n    r"""Fill the grid.\n    """\n'
    assert spec.prompt(2) == prompt


@pytest.mark.parametrize(
    "prompt",
    ["def f(x):\n    return x\n", 'def f(x):\n    """Spec. More."""\n    return x\n', 'x = "(\n'],
    ids=["no docstring", "code after the docstring", "does not tokenize"],
)
def test_prompts_not_ending_in_a_docstring_are_refused(prompt: str) -> None:
    with pytest.raises(DocstringNotFound):
        split_prompt(prompt)


def test_every_humaneval_prompt_segments_and_replays_its_own_docstring() -> None:
    problems = load_suite("humaneval")
    excluded = []
    for problem in problems:
        spec = split_prompt(problem.prompt)
        if not spec.streamable:
            excluded.append(problem.task_id)
        final = spec.prompts()[-1]
        assert _docstring(final, problem.entry_point) == _docstring(
            problem.prompt, problem.entry_point
        ), problem.task_id
    assert len(problems) == 164
    assert excluded == ["HumanEval/83"]  # its docstring is one sentence


def _docstring(prompt: str, name: str) -> str:
    tree = ast.parse(prompt + "    pass\n")
    function = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name]
    strings = [
        n.value.value
        for n in function[-1].body
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
    ]
    return str(strings[-1]).rstrip()
