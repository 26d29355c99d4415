"""Prefix-to-answer rows: one per docstring prefix, all supervised with the complete spec's answer.

The prefixes are the bench's units (`lab.problems.segment`) and the same cumulative prompts:
prompt i holds units 1..i and a closed docstring. The target is the model's own greedy answer
to the last prompt (self-distillation) or the function's real body (reference).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inference.api import Request
from inference.engine import Engine
from inference.errors import RequestError
from inference.lab.adapt.harvest import Function
from inference.lab.problems.segment import DocstringNotFound, SplitPrompt, split_prompt

MAX_UNITS = 16  # longer docstrings would dominate the data with near-identical rows
CODE_FENCE = "```"


@dataclass(frozen=True)
class Target:
    """The answer every prefix of one function is trained towards."""

    text: str  # in the prompt format's answer shape (chat: the whole function and the fence)
    ids: list[int] | None  # the exact answer tokens when the model wrote them (self)
    cut: bool = False  # the answer ran into the token budget (kept: the engine serves it so)


def function_spec(function: Function) -> tuple[SplitPrompt | None, str]:
    """The function's docstring cut into units, or None and why it cannot be streamed."""
    try:
        spec = split_prompt(function.prompt)
    except DocstringNotFound as exc:
        return None, f"docstring not found ({exc})"
    if not spec.streamable:
        return None, "a single unit (nothing to stream)"
    if len(spec.units) > MAX_UNITS:
        return None, f"more than {MAX_UNITS} units"
    return spec, ""


def reference_target(function: Function, spec: SplitPrompt, prompt_format: str) -> Target:
    """The real body; in chat format the restated function closed by the code fence."""
    if prompt_format == "chat":
        return Target(f"{spec.prompt(len(spec.units))}{function.body}{CODE_FENCE}", None)
    return Target(function.body, None)


class SelfTeacher:
    """The model's own greedy answer to the complete docstring, as the engine serves it."""

    def __init__(self, engine: Engine):
        self.engine = engine

    def target(self, spec: SplitPrompt) -> tuple[Target | None, str]:
        """The target tokens for one function, or None and why there is none."""
        try:
            answer = self.engine.generate(Request(spec.prompt(len(spec.units))))
        except RequestError as exc:
            return None, f"the engine refused the prompt ({type(exc).__name__})"
        if not answer.text.strip():
            return None, "empty answer"
        tokenizer = self.engine.runtime.tokenizer
        text = str(tokenizer.decode(answer.token_ids))
        return Target(text, list(answer.token_ids), answer.finish_reason == "length"), ""


def prefix_rows(
    function: Function, spec: SplitPrompt, target: Target, split: str
) -> list[dict[str, Any]]:
    """One row per prefix length 1..n, all with the same target."""
    keys = function.keys
    assert keys.body is not None  # harvested functions always have a body
    name = keys.body[:16]
    units = len(spec.units)
    return [
        {
            "id": f"{name}/{typed}",
            "function": name,
            "origin": function.origin,
            "split": split,
            "units": units,
            "typed": typed,
            "prompt": spec.prompt(typed),
            "answer": target.text,
            "answer_ids": target.ids,
            "body_hash": keys.body,
            "docstring_hash": keys.docstring,
            "name_docstring_hash": keys.name_docstring,
        }
        for typed in range(1, units + 1)
    ]
