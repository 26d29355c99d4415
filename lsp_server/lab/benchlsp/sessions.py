"""The editing sessions of `prewrite bench-lsp`: a real file, one function's spec to type.

A Python session is the code above the function (its header line included, the cursor on the
indented line below it), the docstring's text, and the code below. A brace-language session
is the same with the spec as `//` comment lines opening the body and the editor's `}` below.
The default set draws from four sources in turn: modules of our own (imports, helpers above,
callers below), more-itertools' functions among their neighbours, HumanEval's prompts placed
between other HumanEval solutions, and TypeScript modules of our own. Sessions of the comment
kind (`--kind comment`) type a comment inside a body that has code, above the block it asks
for (comments.py). A JSONL file of sessions can replace them.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from inference.lab.problems.problem import Problem
from inference.lab.problems.segment import DocstringNotFound, split_prompt
from inference.lab.problems.suites import load_suite
from lsp_server.errors import ServerError
from lsp_server.lab.benchlsp.comments import comment_parts
from lsp_server.lab.benchlsp.library import more_itertools_parts
from lsp_server.lab.benchlsp.modules import MODULES
from lsp_server.lab.benchlsp.modules_ts import MODULES_TS, brace_parts

FIELDS = ("name", "above", "docstring", "below")
OPTIONAL_FIELDS = {"language": "python", "kind": "docstring"}
EXTENSIONS = {"python": "py", "typescript": "ts"}
KINDS = ("docstring", "comment")  # a new function's spec; a comment in a body (comments.py)
# the order the default set takes its sources in: period 5, prime to HELD_OUT_EVERY, so that
# the held-out split draws from every source
SOURCE_ORDER = ("own", "more-itertools", "humaneval", "typescript", "more-itertools")
HELD_OUT_EVERY = 4  # every fourth session (by index) is held out: never tune on its figures


def held_out(index: int) -> bool:
    """True for a session of the held-out split (its figures are reported apart)."""
    return index % HELD_OUT_EVERY == HELD_OUT_EVERY - 1


@dataclass(frozen=True)
class Session:
    """One function to spec: `above` ends with its header and the new line's indentation."""

    name: str
    above: str
    docstring: str  # the spec's text: between the quotes, or the comment lines without `// `
    below: str
    language: str = "python"  # a key of EXTENSIONS; other than Python, a `//` comment spec
    kind: str = "docstring"  # one of KINDS: comment: `docstring` is a comment typed in a body

    @property
    def indent(self) -> str:
        """The indentation of the docstring's line."""
        return self.above.rsplit("\n", 1)[-1]


def default_sessions(count: int, kind: str = "docstring") -> list[Session]:
    """`count` sessions, taken from the sources in turn (SOURCE_ORDER) while each lasts; of the
    comment kind, from comments.py's real comments in bodies."""
    if kind == "comment":
        parts = comment_parts()[:count]
        return [Session(*part, kind="comment") for part in parts]
    sources = {
        "own": [module_session(name, source) for name, source in MODULES.items()],
        "more-itertools": [Session(*part) for part in more_itertools_parts()],
        "humaneval": humaneval_sessions(),
        "typescript": [
            Session(f"{module}/{name}", above, comment, below, "typescript")
            for module, source in MODULES_TS.items()
            for name, above, comment, below in brace_parts(source)
        ],
    }
    queues = {name: iter(sessions) for name, sessions in sources.items()}
    chosen: list[Session] = []
    while len(chosen) < count and queues:
        for name in SOURCE_ORDER:
            queue = queues.get(name)
            session = next(queue, None) if queue is not None else None
            if session is None:
                queues.pop(name, None)
            elif len(chosen) < count:
                chosen.append(session)
    return chosen


def humaneval_sessions() -> list[Session]:
    """Every HumanEval prompt that makes a session, among its neighbours."""
    problems = load_suite("humaneval")
    return [
        session
        for i in range(len(problems))
        if (session := humaneval_session(problems, i)) is not None
    ]


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
            fields = {key: str(record[key]) for key in FIELDS}
            fields |= {key: str(record.get(key, value)) for key, value in OPTIONAL_FIELDS.items()}
            sessions.append(Session(**fields))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ServerError(
                f"{path}:{number}: a session needs string fields {', '.join(FIELDS)} ({exc})"
            ) from exc
        if sessions[-1].kind not in KINDS:
            raise ServerError(
                f"{path}:{number}: kind {sessions[-1].kind!r} is not one of {', '.join(KINDS)}"
            )
        if sessions[-1].language not in EXTENSIONS:
            raise ServerError(
                f"{path}:{number}: language {sessions[-1].language!r} is not one of "
                f"{', '.join(EXTENSIONS)}"
            )
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
