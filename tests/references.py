"""Specs typed in steps, streamed by the engine and compared with an independent reference decoder.

Shared by tests/inference/engine/test_independent_references.py (llama-cpp-python, transformers) and
tests/inference/runtimes/test_vllm_runtime.py (vLLM's own completion).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inference.api import Completion, Request
from inference.engine import Engine

SESSIONS_FILE = Path(__file__).parent / "data" / "references" / "sessions.json"
PYTHON_CLOSE = '\n    """'


@dataclass(frozen=True)
class Session:
    """A spec typed in steps: `head`, then the steps, then what closes the spec."""

    name: str
    language: str
    head: str
    steps: tuple[str, ...]
    close: str

    def request(self, steps: int) -> Request:
        text = self.head + "".join(self.steps[:steps]) + self.close + "\n"
        return Request(text, language=self.language)  # type: ignore[arg-type]

    @property
    def final(self) -> Request:
        return self.request(len(self.steps))


def sessions(language: str | None = None) -> list[Session]:
    """The sessions of tests/data/references/sessions.json (of one language if named)."""
    rows = json.loads(SESSIONS_FILE.read_text(encoding="utf-8"))["sessions"]
    found = [
        Session(row["name"], row["language"], row["head"], tuple(row["steps"]),
                row.get("close", PYTHON_CLOSE))
        for row in rows
    ]  # fmt: skip
    return [s for s in found if language is None or s.language == language]


def streamed(engine: Engine, session: Session) -> Completion:
    """The answer at the trigger after each step was drafted while it was typed."""
    engine.open(session.name)
    for step in range(1, len(session.steps)):
        engine.update(session.name, session.request(step), version=step)
    answer = engine.finalize(session.name, session.final, version=len(session.steps))
    engine.close(session.name)
    return answer


def cut(engine: Engine, request: Request, tokens: list[int]) -> list[int]:
    """A reference's tokens up to where the engine's stop rule ends the answer."""
    _, end = engine.stop_rule(engine.prompt(request)).scan(tokens)
    return tokens[:end] if end is not None else tokens


Reference = Callable[[Request, int], list[int]]  # (final request, max tokens) -> greedy tokens


def check_identical(
    engine: Engine, reference: Reference, language: str | None = None, half: int | None = None
) -> None:
    """Stream every session and compare with `reference(request, max_tokens)`'s tokens.

    `half` 0 or 1: only the sessions at even or odd places (two slower runtimes share the
    sessions between them, each against its own reference)."""
    chosen = sessions(language)
    assert len(chosen) >= 10
    if half is not None:
        chosen = chosen[half::2]
    differing = []
    for session in chosen:
        answer = streamed(engine, session)
        tokens = cut(engine, session.final, reference(session.final, engine.config.max_tokens))
        if answer.token_ids != tokens:
            differing.append((session.name, answer.text, engine.runtime.tokenizer.decode(tokens)))
        assert answer.cost.draft_tokens > 0, f"{session.name}: nothing was drafted while typing"
    assert not differing, f"streamed answers that are not the reference's: {differing}"
