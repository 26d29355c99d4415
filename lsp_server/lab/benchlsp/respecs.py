"""Sessions of the respec kind: a sentence added to the docstring of a function that has a body.

Taken from real code nobody wrote for this benchmark: functions of more-itertools and of
standard-library modules whose body checks an argument (`if ...: raise SomeError(...)` among
its top-level statements) and whose docstring has a sentence naming that error. The person
types that sentence back into the docstring. Two variants of each function:

- `adds`: the check is missing from the body too. The spec now asks for it: the offer should
  add the check and leave every other line as it was.
- `holds`: the body has the check already. The body does what the new spec says: no offer
  should come (or one that changes nothing).

At most PER_FILE functions come from one file; the order is fixed, so the sessions are the same
everywhere.
"""

from __future__ import annotations

import ast
import re
import sysconfig
from dataclasses import dataclass, replace
from pathlib import Path

from lsp_server.lab.benchlsp.library import FILES as MORE_ITERTOOLS_FILES
from lsp_server.lab.benchlsp.library import first_line, module_outline, neighbours, package_folder
from lsp_server.spec import find_respec

PER_FILE = 2
RESTATED = 40  # functions without a check (holds only)
BODY_LINES = (3, 40)  # the body with its check
CHECK_LINES = (2, 6)
SENTENCE_CHARS = 200
_SENTENCE = re.compile(r"[^.!?]*?[.!?](?=\s|$)", re.S)


@dataclass(frozen=True)
class RespecCase:
    """One function: the file before the sentence is typed, where it goes, and what it is.

    `text` holds the function with its docstring less `sentence` (which goes at `at`);
    `check` is the body's check (its lines, as in the file) and `body_at` where it starts in
    `text` for the `holds` variant: the `adds` variant's file is `text` less those lines.
    """

    name: str
    text: str
    at: int
    sentence: str
    check: str
    check_at: int
    error: str

    def file(self, variant: str) -> str:
        """The file as the person finds it: `holds` with the check, `adds` without."""
        if variant == "holds" or not self.check:
            return self.text
        return self.text[: self.check_at] + self.text[self.check_at + len(self.check) :]


def respec_cases(restated: int = RESTATED) -> list[RespecCase]:
    """The cases from more-itertools' and the standard library's files, in a fixed order: every
    function with a check, then `restated` functions without one (a `holds` variant only)."""
    sources = [(f"more-itertools/{f}", package_folder() / f) for f in MORE_ITERTOOLS_FILES]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources += [(f"stdlib/{p.name}", p) for p in sorted(stdlib.glob("*.py"))]
    checked: list[RespecCase] = []
    others: list[RespecCase] = []
    for label, path in sources:
        found = file_cases(path.read_text(encoding="utf-8"))
        for case in found:
            named = replace(case, name=f"{label}:{case.name}")
            (checked if case.check else others).append(named)
    return checked + others[:: max(1, len(others) // restated)][:restated]


def file_cases(source: str) -> list[RespecCase]:
    """The cases of one module: at most PER_FILE of its functions with a check, and one
    without (its docstring's last sentence of the first paragraph is the one typed)."""
    try:
        lines, imports, functions = module_outline(source)
    except SyntaxError:
        return []
    cases: list[RespecCase] = []
    other = None
    for i, function in enumerate(functions):
        found = _check(function, lines)
        if found is None and other is not None:
            continue
        check, error, sentence = found or ("", "", _last_sentence(function, lines))
        if not sentence:
            continue
        before, after = neighbours(functions, i, lines)
        head = f"{imports}\n\n{before}\n\n\n" if before else f"{imports}\n\n"
        own = "".join(lines[first_line(function) : function.end_lineno])
        if own.count(sentence) != 1 or (check and own.count(check) != 1):
            continue
        cut = own.index(sentence)
        gap = len(own[:cut]) - len(own[:cut].rstrip(" "))  # the space before it goes too
        removed = own[: cut - gap] + own[cut + len(sentence) :]
        text = head + removed + (f"\n\n{after}\n" if after else "")
        at = len(head) + cut - gap
        check_at = text.index(check, at) if check else 0
        case = RespecCase(function.name, text, at, " " * gap + sentence, check, check_at, error)
        if not _found(case):
            continue
        if check and sum(bool(c.check) for c in cases) < PER_FILE:
            cases.append(case)
        elif not check:
            other = case
    return cases + ([other] if other else [])


def _found(case: RespecCase) -> bool:
    """True when the server finds the function's spec and body before and after the typing."""
    for variant in ("adds", "holds") if case.check else ("holds",):
        text = case.file(variant)
        typed = text[: case.at] + case.sentence + text[case.at :]
        if None in (find_respec(text, case.at, "python"),
                    find_respec(typed, case.at + len(case.sentence), "python")):  # fmt: skip
            return False
    return True


def _last_sentence(function: ast.FunctionDef, lines: list[str]) -> str:
    """The last sentence of the docstring's first paragraph, when it has 2 to 4 ('' else)."""
    body = function.body
    if len(body) < 2 or function.name.startswith("_") or not isinstance(body[0], ast.Expr):
        return ""
    doc = body[0].value
    if not (isinstance(doc, ast.Constant) and isinstance(doc.value, str)):
        return ""
    code = "".join(lines[body[1].lineno - 1 : function.end_lineno])
    if not BODY_LINES[0] <= code.count("\n") <= BODY_LINES[1]:
        return ""
    docstring = "".join(lines[doc.lineno - 1 : doc.end_lineno])
    paragraph = docstring.split("\n\n", 1)[0]
    sentences = [m.group().strip() for m in _SENTENCE.finditer(paragraph)]
    if not 2 <= len(sentences) <= 4 or ">>>" in paragraph:
        return ""
    last = sentences[-1]
    return last if len(last) >= 20 and _plain(last) else ""


def _plain(sentence: str) -> bool:
    """A sentence one types as it is: short, no example or quote, starting as sentences do."""
    return (
        len(sentence) <= SENTENCE_CHARS
        and ">>>" not in sentence
        and '"' not in sentence
        and (sentence[0].isupper() or sentence[0] in "`*")
    )


def _check(function: ast.FunctionDef, lines: list[str]) -> tuple[str, str, str] | None:
    """(the check's lines, the error's name, the docstring sentence naming it)."""
    body = function.body
    if len(body) < 2 or not isinstance(body[0], ast.Expr):
        return None
    doc = body[0].value
    if function.name.startswith("_"):
        return None
    if not (isinstance(doc, ast.Constant) and isinstance(doc.value, str)):
        return None
    code = "".join(lines[body[1].lineno - 1 : function.end_lineno])
    if not BODY_LINES[0] <= code.count("\n") <= BODY_LINES[1]:
        return None
    for statement in body[1:]:
        error = _raised(statement)
        if error is None:
            continue
        check = "".join(lines[statement.lineno - 1 : statement.end_lineno])
        if not CHECK_LINES[0] <= check.count("\n") <= CHECK_LINES[1]:
            continue
        docstring = "".join(lines[doc.lineno - 1 : doc.end_lineno])
        for match in _SENTENCE.finditer(docstring):
            sentence = match.group().strip()
            if error in sentence and _plain(sentence):
                return check, error, sentence
    return None


def _raised(statement: ast.stmt) -> str | None:
    """The error an `if ...: raise Error(...)` statement raises (no else), else None."""
    if not isinstance(statement, ast.If) or statement.orelse or len(statement.body) != 1:
        return None
    raised = statement.body[0]
    if not isinstance(raised, ast.Raise) or raised.exc is None:
        return None
    target = raised.exc.func if isinstance(raised.exc, ast.Call) else raised.exc
    return target.id if isinstance(target, ast.Name) and target.id.endswith("Error") else None
