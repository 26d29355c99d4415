"""The editing sessions of `prewrite bench-lsp`: a real file, one new function's docstring to type.

A session is the code above the function (its header line included, the cursor on the indented
line below it), the docstring's text, and the code below. The default set places HumanEval's
prompts between other HumanEval solutions (a file with code above and below) and adds modules
of our own (imports, helpers above, callers below). A JSONL file of sessions can replace them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from inference.bench.segment import DocstringNotFound, split_prompt
from inference.bench.suites import Problem, load_suite
from lsp_server.benchlsp.modules import MODULES
from lsp_server.errors import ServerError

FIELDS = ("name", "above", "docstring", "below")
HELD_OUT_EVERY = 4  # every fourth session (by index) is held out: never tune on its figures


def held_out(index: int) -> bool:
    """True for a session of the held-out split (its figures are reported apart)."""
    return index % HELD_OUT_EVERY == HELD_OUT_EVERY - 1


@dataclass(frozen=True)
class Session:
    """One function to spec: `above` ends with its header and the new line's indentation."""

    name: str
    above: str
    docstring: str  # the text between the quotes, internal newlines and indentation included
    below: str

    @property
    def indent(self) -> str:
        """The indentation of the docstring's line."""
        return self.above.rsplit("\n", 1)[-1]


def default_sessions(count: int) -> list[Session]:
    """`count` sessions: our own modules first, then HumanEval prompts among their neighbours."""
    own = [module_session(name, source) for name, source in MODULES.items()]
    problems = load_suite("humaneval")
    humaneval = [
        session
        for i in range(len(problems))
        if (session := humaneval_session(problems, i)) is not None
    ]
    return (own + humaneval)[:count]


def humaneval_session(problems: list[Problem], index: int) -> Session | None:
    """Problem `index`'s prompt with the previous solution above and the next one below."""
    problem = problems[index]
    try:
        spec = split_prompt(problem.prompt)
    except DocstringNotFound:
        return None
    text = "".join(unit.text for unit in spec.units).strip()
    if not spec.streamable:
        return None
    before = problems[index - 1] if index else problems[-1]
    after = problems[(index + 1) % len(problems)]
    quotes = spec.head[-3:]
    above = f"{_solution(before)}\n\n\n{spec.head.removesuffix(quotes).lstrip(chr(10))}"
    below = f"\n\n\n{_solution(after)}\n"
    return Session(problem.task_id, above, text, below)


def module_session(name: str, source: str) -> Session:
    """A module of ours; `SPEC` marks the docstring to type (the text after it, to `END`)."""
    above, rest = source.split('    """SPEC', 1)
    docstring, below = rest.split('END"""\n', 1)
    return Session(name, above + "    ", docstring.strip(), "\n" + below)


def read_sessions(path: Path) -> list[Session]:
    """Sessions from a JSONL file, one object with FIELDS a line."""
    sessions = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ServerError(f"cannot read sessions from {path}: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            sessions.append(Session(**{key: str(record[key]) for key in FIELDS}))
        except (ValueError, KeyError, TypeError) as exc:
            raise ServerError(
                f"{path}:{number}: a session needs string fields {', '.join(FIELDS)} ({exc})"
            ) from exc
    if not sessions:
        raise ServerError(f"{path} holds no session")
    return sessions


def write_sessions(sessions: list[Session], path: Path) -> None:
    """The sessions as JSONL (what --sessions-file reads back)."""
    text = "".join(json.dumps(asdict(s), ensure_ascii=False) + "\n" for s in sessions)
    path.write_text(text, encoding="utf-8")


def _solution(problem: Problem) -> str:
    """A whole function: the prompt and its reference body."""
    return (problem.prompt + problem.solution).strip("\n")
