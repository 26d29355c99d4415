"""Spec detection: data files of many shapes, generated Python and brace code, arbitrary text.

Each `name.ext.case` file under tests/data/spec marks the cursor with ‸ (the `.case` suffix
keeps linters off these deliberately unfinished files). `name.ext.expected` holds the spec
kind, what closes it, the request text and the suffix; files named `*.none.*` have no spec.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_server.documents import Document
from lsp_server.spec import (
    Edit,
    answer_edit,
    find_respec,
    find_spec,
    language_of,
    without_lines_below,
)
from lsp_server.spec.changes import body_edits, code_edits, lines_touched
from tests.paths import TEST_DATA

pytestmark = pytest.mark.timeout(60)

DATA = TEST_DATA / "spec"
CURSOR = "‸"
CASES = sorted(DATA.glob("*.case"))


def load(path: Path) -> tuple[str, int]:
    document = path.read_text(encoding="utf-8")
    return document.replace(CURSOR, ""), document.index(CURSOR)


def render(path: Path) -> str | None:
    text, cursor = load(path)
    language = language_of(None, path.stem)
    assert language is not None
    spec = find_spec(text, cursor, language)
    if spec is None:
        return None
    return (
        f"kind: {spec.kind}\nclosing: {spec.closing!r}\n--- request ---\n{spec.request.text}"
        f"--- suffix ---\n{spec.request.suffix}"
    )


@pytest.mark.parametrize("path", CASES, ids=[p.name for p in CASES])
def test_spec_cases(path: Path):
    found = render(path)
    if ".none." in path.name:
        assert found is None
    else:
        assert found == path.with_suffix(".expected").read_text(encoding="utf-8")


def test_every_expectation_has_its_case():
    for expected in DATA.glob("*.expected"):
        assert expected.with_suffix(".case").exists(), expected.name


@pytest.mark.parametrize(
    ("language_id", "uri", "language"),
    [
        ("python", "file:///a.txt", "python"),
        ("typescriptreact", "file:///a.tsx", "brace"),
        (None, "file:///src/main.rs", "brace"),
        ("plaintext", "file:///notes.md", None),
        (None, "untitled:Untitled-1", None),
        (None, "file:///dir.d/Makefile", None),
    ],
)
def test_language_of(language_id, uri, language):
    assert language_of(language_id, uri) == language


# -- where the answer goes ----------------------------------------------------------------------

BODY = "    return a + b\n"


def apply(text: str, edit: Edit) -> str:
    return text[: edit.start] + edit.text + text[edit.end :]


def test_an_unclosed_docstring_is_closed_before_the_body():
    text, cursor = load(DATA / "py_unclosed_one_line.py.case")
    spec = find_spec(text, cursor, "python")
    assert spec is not None
    edit = answer_edit(text, spec, cursor, BODY)
    assert edit == Edit(cursor, cursor, '"""\n    return a + b')
    assert apply(text, edit).startswith(spec.request.text + "    return a + b\n")


def test_inside_closed_quotes_the_edit_restates_them():
    text, cursor = load(DATA / "py_autoclosed_quotes.py.case")
    spec = find_spec(text, cursor, "python")
    assert spec is not None
    edit = answer_edit(text, spec, cursor, BODY)
    assert edit is not None and edit.text == '"""\n    return a + b'
    assert "\n" not in text[edit.start : edit.end]


def test_on_the_body_line_the_typed_text_must_start_the_answer():
    text, cursor = load(DATA / "py_typed_prefix.py.case")
    spec = find_spec(text, cursor, "python")
    assert spec is not None
    edit = answer_edit(text, spec, cursor, "    return x * 2\n")
    assert edit is not None and text[edit.start : edit.end] == "    ret"
    assert edit.text == "    return x * 2"
    assert answer_edit(text, spec, cursor, "    x = x * 2\n") is None


def test_a_blank_answer_is_no_edit():
    text, cursor = load(DATA / "py_body_line.py.case")
    spec = find_spec(text, cursor, "python")
    assert spec is not None
    assert answer_edit(text, spec, cursor, "\n\n") is None


def test_the_prefix_and_suffix_are_cut_at_line_boundaries():
    filler = "".join(f"x{i} = {i}\n" for i in range(2000))
    text = f'{filler}\n\ndef f():\n    """Return one."""\n\n\n{filler}'
    cursor = text.index('."""') + 1
    spec = find_spec(text, cursor, "python", prefix_chars=500, suffix_chars=300)
    assert spec is not None
    spec_text = '    """Return one."""\n'
    assert len(spec.request.text) <= 500 + len(spec_text)  # the window above, then the spec
    assert spec.request.text.endswith(f"def f():\n{spec_text}")
    assert spec.request.text.startswith("x") and spec.request.text.split("\n")[0] in filler
    assert len(spec.request.suffix) <= 300 and spec.request.suffix.endswith("\n")
    assert spec.request.suffix.startswith("x0 = 0\n")


@pytest.mark.parametrize(
    ("spec_line", "typed"),
    [
        ('    """', "Return the rows of this week, newest first, as a list of tuples."),
        ("    # ", "keep only the rows of this week, newest first, then the oldest ones"),
    ],
)
def test_typing_a_spec_never_moves_the_window_above(spec_line, typed):
    # a window ending at the cursor dropped a line at its far end every line or so typed, and
    # the model read the whole window again
    filler = "".join(f"x{i} = {i}\n" for i in range(2000))
    head = f"{filler}\n\ndef f(rows):\n"
    body = "    rows = list(rows)\n" if spec_line.strip() == "#" else ""
    below = "\n    return rows\n" if body else "\n\n\ndef g():\n    pass\n"
    starts = set()
    for n in range(1, len(typed) + 1):
        text = f"{head}{body}{spec_line}{typed[:n]}{below}"
        cursor = len(head) + len(body) + len(spec_line) + n
        spec = find_spec(text, cursor, "python", prefix_chars=500, suffix_chars=300)
        assert spec is not None, typed[:n]
        above = spec.request.text.split("def f(rows):")[0]
        starts.add(above)
        if spec.kind == "block":  # a block's comment opens the prompt's middle (spec_start)
            assert spec.request.text[spec.request.spec_start :].startswith(spec_line)
    assert len(starts) == 1


def test_a_spec_longer_than_the_window_keeps_the_request_within_twice_the_window():
    filler = "".join(f"x{i} = {i}\n" for i in range(2000))
    spec = "".join(f"    Line {i} of a long docstring.\n" for i in range(30))  # > 500
    text = f'{filler}\n\ndef f():\n    """Return one.\n{spec}'
    found = find_spec(text, len(text) - 1, "python", prefix_chars=500, suffix_chars=300)
    assert found is not None
    line = len("    Line 29 of a long docstring.\n")  # the cut goes back to a line start
    assert len(found.request.text) <= 2 * 500 + line + len('    """\n')
    assert found.request.text.endswith('Line 29 of a long docstring.\n    """\n')


def test_edits_far_below_leave_the_request_alone():
    text, cursor = load(DATA / "py_unclosed_one_line.py.case")
    before = find_spec(text, cursor, "python", suffix_chars=40)
    text_after = text + "\n" * 5 + "def late():\n    pass\n"
    after = find_spec(text_after, cursor, "python", suffix_chars=40)
    assert before is not None and after is not None and before.request == after.request


# -- generated Python ----------------------------------------------------------------------------

SPEC_WORDS = (
    "return the sum of a and b list items sorted by key none raise ValueError when empty "
    "count words in text (x, y) [0, 1] n-th 'quoted' e.g. 42 -> >= == % {k: v}"
)
WORDS = st.sampled_from(SPEC_WORDS.split(" "))
SENTENCE = st.lists(WORDS, min_size=1, max_size=10).map(" ".join)
BLOCKS = st.sampled_from(
    [
        "import os\nimport sys\n",
        "from collections import Counter\n",
        "LIMIT = 10\n",
        'def helper(x):\n    """Help with x."""\n    return x + 1\n',
        "def bare(y):\n    return y\n",
        "class Box:\n    def __init__(self, v):\n        self.v = v\n",
        '@decorator\ndef decorated():\n    """Decorated.\n\n    More text.\n    """\n    pass\n',
        "if __name__ == '__main__':\n    main()\n",
        "# a comment\nVALUE = '''a\nmulti-line string'''\n",
        'async def later():\n    """Docstring of a later function."""\n    await x()\n',
    ]
)
HEADERS = st.sampled_from(
    [
        "def f(a, b):",
        "def count_words(text: str) -> dict[str, int]:",
        "async def fetch(url: str, *, retries: int = 3) -> bytes:",
        "def pad(s, width=10, fill=' ('):",
        "def multi(\n    a: int,\n    b: int,\n) -> int:",
    ]
)


@st.composite
def python_document(draw):
    """A module with code above and below a function whose docstring is being typed."""
    before = "".join(b + "\n\n" for b in draw(st.lists(BLOCKS, max_size=4)))
    after = "".join("\n\n" + b for b in draw(st.lists(BLOCKS, max_size=4)))
    in_class = draw(st.booleans())
    indent = "    " if in_class else ""
    header = "\n".join(indent + line for line in draw(HEADERS).split("\n"))
    body = indent + "    "
    quote = draw(st.sampled_from(['"""', "'''"]))
    lines = draw(st.lists(SENTENCE, min_size=1, max_size=3))
    content = f"\n{body}".join(lines)
    if content.endswith(quote[0]):
        content += "."  # a quote right before the closing ones would end the string early
    closed = draw(st.booleans())
    head = f"{before}{'class C:' + chr(10) if in_class else ''}{header}\n{body}{quote}{content}"
    text = head + (quote if closed else "") + "\n" + after
    return text, len(head), head, quote, content, closed, body, after


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(python_document())
def test_generated_python_docstrings(case):
    text, cursor, head, quote, content, closed, body, after = case
    spec = find_spec(text, cursor, "python", prefix_chars=100_000, suffix_chars=100_000)
    assert spec is not None
    assert spec.kind == "docstring"
    if closed:
        closing = ""
    elif "\n" in content.rstrip():
        closing = f"\n{body}{quote}"
    else:
        closing = quote
    expected_head = head.rstrip() if not closed else head
    assert spec.closing == closing
    assert spec.request.text == expected_head + (quote if closed else closing) + "\n"
    assert spec.request.suffix == after.lstrip("\n")


# -- generated brace code --------------------------------------------------------------------------

BRACE_HEADERS = st.sampled_from(
    [
        "function total(items) {",
        "export async function load(path: string): Promise<string> {",
        "int sum(const int *xs, size_t n) {",
        "fn parse(input: &str) -> Result<u32, Error> {",
        "func (s *Store) Get(key string) (string, error) {",
        "const area = (w, h) => {",
        "public static int max(int a, int b) {",
    ]
)
BRACE_BLOCKS = st.sampled_from(
    [
        "import x from 'y';\n",
        "function other() {\n  // Other.\n  return 1;\n}\n",
        "/* A file comment. */\nconst LIMIT = 3;\n",
        "if (ready) {\n  start();\n}\n",
    ]
)


@st.composite
def brace_document(draw):
    before = "".join(b + "\n" for b in draw(st.lists(BRACE_BLOCKS, max_size=3)))
    after = "".join("\n" + b for b in draw(st.lists(BRACE_BLOCKS, max_size=3)))
    lines = draw(st.lists(SENTENCE, min_size=1, max_size=3))
    style = draw(st.sampled_from(["line", "block", "above"]))
    header = draw(BRACE_HEADERS)
    if style == "line":
        comment = "\n".join(f"  // {line}" for line in lines)
        head = f"{before}{header}\n{comment}"
        return head + "\n}\n" + after, len(head), head + "\n", "}\n" + after
    if style == "block":
        comment = "  /* " + "\n     ".join(lines)
        head = f"{before}{header}\n{comment}"
        closing = "\n   */" if len(lines) > 1 or lines[-1].endswith("*") else " */"
        return head + "\n}\n" + after, len(head), head + closing + "\n", "}\n" + after
    comment = "\n".join(f"// {line}" for line in lines)
    head = f"{before}{comment}"
    text = f"{head}\n{header}\n}}\n{after}"
    return text, len(head), f"{head}\n{header}\n", "}\n" + after


@settings(max_examples=200, deadline=None)
@given(brace_document())
def test_generated_brace_comments(case):
    text, cursor, request_text, suffix = case
    spec = find_spec(text, cursor, "brace", prefix_chars=100_000, suffix_chars=100_000)
    assert spec is not None
    assert spec.kind == "comment"
    assert spec.request.text == request_text
    assert spec.request.suffix == suffix


# -- anything at all -----------------------------------------------------------------------------

CODEISH = st.text(alphabet=st.sampled_from(list("def ():\n\t#\"'/*{}@xyz_=\r")), max_size=300)


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(st.text(max_size=300), CODEISH),
    st.floats(0, 1),
    st.sampled_from(["python", "brace"]),
)
def test_any_text_gives_a_consistent_spec_or_none(text, where, language):
    cursor = int(where * len(text))
    spec = find_spec(text, cursor, language)
    if spec is None:
        return
    assert 0 <= spec.start <= spec.end <= spec.insert_at <= len(text)
    assert spec.start <= cursor
    assert spec.request.text.endswith("\n")
    edit = answer_edit(text, spec, cursor, "    body\n")
    if edit is not None:
        assert 0 <= edit.start <= edit.end <= len(text)


# -- edits away from the spec -------------------------------------------------------------------


def test_an_edit_above_the_spec_changes_the_request_and_one_far_below_does_not():
    """The document keeps an anchor on its spec, moved along by edits above it."""
    text, cursor = load(DATA / "py_unclosed_one_line.py.case")
    doc = Document("file:///a.py", "python", len(text))
    first = doc.find(text, cursor, 8000, 40)
    assert first is not None

    above = "import os\n" + text  # typed at the top: the cursor is not in the spec any more
    doc.edited(len(above), 0)
    moved = doc.find(above, len("import os\n"), 8000, 40)
    assert moved is not None and moved.request.text == "import os\n" + first.request.text

    below = above + "\n" * 40 + "def late():\n    pass\n"
    doc.edited(len(below), len(above))
    same = doc.find(below, len(below), 8000, 40)
    assert same is not None and same.request == moved.request

    gone = below.replace('"""Return the area', "pass  # Return the area")
    doc.edited(len(gone), 0)
    assert doc.find(gone, 0, 8000, 40) is None and doc.anchor is None


# -- closing delimiters typed one character at a time ----------------------------------------

HEAD = 'def double(x: int) -> int:\n    """Return x doubled.'


@pytest.mark.parametrize(
    ("typed", "rest"),
    [
        ("", '"""'),  # a line was opened for the quotes: they go there
        ('"', '""'),
        ('""', '"'),
    ],
)
def test_the_request_stays_put_while_the_closing_quotes_are_typed(typed, rest):
    text = f"{HEAD}\n    {typed}"
    spec = find_spec(text, len(text), "python")
    closed = f'{HEAD}\n    """\n    '
    final = find_spec(closed, len(closed), "python")
    assert spec is not None and final is not None
    assert spec.request == final.request
    edit = answer_edit(text, spec, len(text), "    return 2 * x\n")
    assert edit is not None
    assert spec.closing == rest
    assert apply(text, edit) == f'{HEAD}\n    {typed}{rest}\n    return 2 * x'


def test_a_closing_quote_typed_on_the_same_line_is_completed():
    text = f'{HEAD}"'
    spec = find_spec(text, len(text), "python")
    assert spec is not None and spec.closing == '""'
    assert spec.request.text == f'{HEAD}"""\n'


def test_a_quote_that_ends_a_word_is_kept():
    text = 'def greet():\n    """Say "hi"'
    spec = find_spec(text, len(text), "python")
    assert spec is not None
    assert spec.request.text == 'def greet():\n    """Say "hi"\n    """\n'


def test_a_jsdoc_line_being_opened_becomes_the_closing_line():
    text = "function sum(xs) {\n  /**\n   * Return the sum of xs.\n   *"
    spec = find_spec(text, len(text), "brace")
    assert spec is not None and spec.closing == "/"
    assert spec.request.text.endswith("   * Return the sum of xs.\n   */\n")


def test_in_the_empty_body_under_a_comment_the_answer_replaces_the_indentation():
    """VS Code after Enter on `function f() {` below a `/** */`: the cursor on an indented line."""
    text, cursor = load(DATA / "ts_body_under_comment_above.ts.case")
    spec = find_spec(text, cursor, "brace")
    assert spec is not None and spec.kind == "comment"
    answer = "  return [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];\n"
    start = text.rindex("\n", 0, cursor) + 1
    assert answer_edit(text, spec, cursor, answer) == Edit(start, cursor, answer.rstrip("\n"))


def test_an_answer_stops_before_the_closing_brace_the_editor_put_below():
    """VS Code auto-closes `{`: the `}` below the cursor is not repeated by the answer."""
    text, cursor = load(DATA / "ts_body_under_comment_above.ts.case")
    spec = find_spec(text, cursor, "brace")
    assert spec is not None
    answer = "  return [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];\n}\n"
    edit = answer_edit(text, spec, cursor, answer)
    assert edit is not None and edit.text == "  return [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2];"
    accepted = text[: edit.start] + edit.text + text[edit.end :]
    assert accepted.count("{") == accepted.count("}")


def test_a_comment_spec_in_the_body_gets_no_second_closing_brace():
    """`// spec` as the body's first line, `}` below it: the answer ends before the `}`."""
    text = "export function clampAll(values: number[], lo: number, hi: number): number[] {\n"
    text += "  // Clamp each value into [lo, hi].\n}\n"
    cursor = text.index("]." ) + 2
    spec = find_spec(text, cursor, "brace")
    assert spec is not None
    answer = "  return values.map((v) => Math.min(hi, Math.max(lo, v)));\n}"
    edit = answer_edit(text, spec, cursor, answer)
    assert edit is not None
    accepted = text[: edit.start] + edit.text + text[edit.end :]
    assert accepted == text.replace("].\n}", "].\n" + answer)
    assert accepted.count("}") == 1


def test_only_the_lines_right_below_are_compared_in_a_long_document():
    """A long file below the function changes nothing: the brace is still left out."""
    head = "function f(x) {\n  // Return x doubled.\n}\n"
    text = head + "const y = 1;\n}\n" * 50_000
    spec = find_spec(text, head.index(".") + 1, "brace")
    assert spec is not None
    edit = answer_edit(text, spec, head.index(".") + 1, "  return 2 * x;\n}")
    assert edit is not None and edit.text.endswith("\n  return 2 * x;")


@pytest.mark.parametrize(
    ("body", "below", "kept"),
    [
        ("  x();\n}", "\n}\n", "  x();"),  # the closing brace
        ("  x();\n}", "\n\n  }\n", "  x();"),  # blank lines and another indent between
        ("  x();\n  y();\n}", "\n  y();\n}", "  x();"),  # a longer run of the lines below
        ("  x();\n}", "\n// other\n}", "  x();\n}"),  # the next line differs: kept whole
        ("  x();\n}", "", "  x();\n}"),  # nothing below: the brace is the answer's to give
        ("  x();\n\n}", "\n}", "  x();"),  # a blank line before the brace goes with it
        ("}", "\n}", ""),  # all of it is there already: nothing to add
    ],
)
def test_without_lines_below(body, below, kept):
    assert without_lines_below(body, below) == kept


@pytest.mark.parametrize(
    ("text", "written"),
    [
        (f"{HEAD}", False),  # still typing the docstring
        (f'{HEAD}\n    ""', False),  # two of the closing quotes
        (f'{HEAD}\n    """', True),  # the closing quotes typed
        (f'{HEAD}\n    """\n    ', True),  # on the first body line
        ('def double(x: int) -> int:\n    """Return x doubled.‸"""', False),  # auto-closed
        ('def double(x: int) -> int:\n    """Return x doubled."""\n    ‸', True),
        ("def double(x: int) -> int:\n    # Return x doubled.", False),  # a comment being typed
        ("def double(x: int) -> int:\n    # Return x doubled.\n    ", True),
        ("function double(x) {\n  /** Return x doubled.", False),
        ("function double(x) {\n  /** Return x doubled. */", False),  # Enter comes next
        ("function double(x) {\n  /** Return x doubled. */\n  ", True),
        ("function double(x) {\n  // Return x doubled.\n  ", True),
    ],
)
def test_a_spec_is_written_once_it_is_closed_and_the_user_is_past_it(text, written):
    cursor = text.index(CURSOR) if CURSOR in text else len(text)
    text = text.replace(CURSOR, "")
    spec = find_spec(text, cursor, "brace" if text.startswith("function") else "python")
    assert spec is not None and spec.written_at(cursor) == written


RESPEC_PY = '''import math


def area(radius):
    """The area of a circle.

    Raise ValueError when radius is negative.
    """
    return math.pi * radius ** 2


def other():
    pass
'''


def test_a_closed_docstring_of_a_function_with_a_body_is_a_respec():
    cursor = RESPEC_PY.index("negative.") + len("negative.")
    respec = find_respec(RESPEC_PY, cursor, "python")
    assert respec is not None
    spec = respec.spec(RESPEC_PY).strip()
    assert spec.startswith('"""The area') and spec.endswith('"""')
    assert respec.body(RESPEC_PY) == "    return math.pi * radius ** 2\n"
    assert respec.request.text.endswith('negative.\n    """\n')
    assert respec.request.suffix.lstrip().startswith("def other():")
    assert find_spec(RESPEC_PY, cursor, "python") is None  # drafting has nothing to write here


@pytest.mark.parametrize(
    "where", ["return math.pi", "def other", "import math", "def area"], ids=str
)
def test_outside_the_spec_there_is_no_respec(where):
    assert find_respec(RESPEC_PY, RESPEC_PY.index(where) + 2, "python") is None


def test_a_function_without_a_body_and_an_unclosed_docstring_are_no_respec():
    empty = 'def f(x):\n    """Double x."""\n\n\ndef g():\n    pass\n'
    assert find_respec(empty, empty.index("Double") + 3, "python") is None
    unclosed = 'def f(x):\n    """Double x.\n    return 2 * x\n'
    assert find_respec(unclosed, unclosed.index("Double") + 3, "python") is None


def test_a_brace_comment_above_a_function_with_a_body_is_a_respec():
    text = (
        "/** Sum of xs. Throws on an empty array. */\n"
        "function sum(xs: number[]): number {\n"
        "  return xs.reduce((a, b) => a + b, 0);\n"
        "}\n"
        "\n"
        "const y = 1;\n"
    )
    respec = find_respec(text, text.index("Throws") + 3, "brace")
    assert respec is not None
    assert respec.body(text) == "  return xs.reduce((a, b) => a + b, 0);\n}\n"
    assert respec.request.text.endswith("function sum(xs: number[]): number {\n")
    assert respec.request.suffix.strip() == "const y = 1;"


@pytest.mark.parametrize(
    "body, rewritten, edits",
    [
        ("a\nb\n", "a\nb\n", []),
        ("a\nb\n", "a  \nb\n", []),  # trailing spaces aside
        ("a\nb\n", "x\na\nb\n", [(0, 0, "x\n")]),
        ("a\nb\nc\n", "a\nB\nc\n", [(2, 4, "B\n")]),
        ("a\nb\nc\n", "a\nc\n", [(2, 4, "")]),
        ("a\n}", "a\nb\n}", [(2, 2, "b\n")]),  # a brace body's last line has no newline
    ],
)
def test_body_edits_replace_only_the_lines_that_change(body, rewritten, edits):
    found = body_edits(body, rewritten, 0)
    assert [(e.start, e.end, e.text) for e in found] == edits
    result = body
    for edit in reversed(found):
        result = result[: edit.start] + edit.text + result[edit.end :]
    assert [line.rstrip() for line in result.splitlines()] == [
        line.rstrip() for line in rewritten.splitlines()
    ]
    assert lines_touched(body, found, 0) == sum(body[e.start : e.end].count("\n") for e in found)


def test_an_offer_of_comments_only_changes_nothing_the_body_does():
    body = "    x = 1\n    return x\n"
    only_comments = body_edits(body, "    # check x\n    x = 1\n    return x\n", 0)
    assert only_comments and code_edits(only_comments, "python") == []
    code = body_edits(body, "    # check x\n    assert x\n    x = 1\n    return x\n", 0)
    assert code_edits(code, "python") == code
    replaced = body_edits(body, "    x = 2  # two\n    return x\n", 0)
    assert code_edits(replaced, "python") == replaced
    brace = body_edits("  return 1;\n}\n", "  // one\n  return 1;\n}\n", 0)
    assert code_edits(brace, "brace") == []
