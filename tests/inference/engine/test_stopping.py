"""Where an answer ends (`inference/engine/stopping.py`): body end, stop strings, scanning."""

from __future__ import annotations

import pytest

from inference.engine.stopping import BodyEnd

pytestmark = pytest.mark.timeout(60)


def test_python_body_end_cuts_before_the_dedented_line():
    rule = BodyEnd(language="python", def_indent=0)
    start = rule.initial_state('def f(x):\n    """Spec."""\n')
    text = "    y = x + 1\n\n    return y\n\ndef g():\n"
    _, cut = rule.scan(start, text)
    assert text[:cut] == "    y = x + 1\n\n    return y\n\n"


def test_python_body_end_ignores_indented_and_blank_lines():
    rule = BodyEnd(language="python", def_indent=4)
    start = rule.initial_state("class A:\n    def f(self):\n        ")
    _, cut = rule.scan(start, "return 1\n\n        # done\n")
    assert cut is None
    _, cut = rule.scan(start, "return 1\n    def g(self):\n")
    assert cut == len("return 1\n")


def test_brace_body_end_keeps_the_closing_brace():
    rule = BodyEnd(language="brace", def_indent=0)
    start = rule.initial_state("function f(a) {\n  // add one\n")
    text = "  return a + 1;\n}\n\nfunction g() {"
    _, cut = rule.scan(start, text)
    assert text[:cut] == "  return a + 1;\n}"


def test_stop_strings_cut_before_the_string():
    rule = BodyEnd(language="python", def_indent=None, stop_strings=("```",))
    _, cut = rule.scan(rule.initial_state(""), "x = 1\n```\nmore")
    assert cut == len("x = 1\n")


def test_scan_in_pieces_equals_scan_at_once():
    rule = BodyEnd(language="python", def_indent=0, stop_strings=("<stop>",))
    start = rule.initial_state("def f():\n")
    text = "    a = 1\n    b = '<st'\n    <stop>"
    _, whole = rule.scan(start, text)
    state, cut, fed = start, None, 0
    while cut is None:
        state, cut = rule.scan(state, text[fed])
        fed += 1
    assert whole == cut == text.index("<stop>")
    assert fed == len(text)
