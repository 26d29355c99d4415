"""The specs the GPU check types: small files with one function's docstring to write.

Each is what `prewrite bench-lsp` calls a session (the code above with the new function's header,
the docstring, the code below), so the same texts drive the engine directly (requests at word
ends, as the server makes them while a docstring grows) and the real server (a sessions file).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from inference.api import Request

QUOTES = '"""'


@dataclass(frozen=True)
class TypedFunction:
    """A function whose docstring gets typed: `above` ends with its header and the indentation."""

    name: str
    above: str
    docstring: str
    below: str

    @property
    def indent(self) -> str:
        """The indentation of the docstring's line."""
        return self.above.rsplit("\n", 1)[-1]

    def request(self, typed: str) -> Request:
        """The request for `typed` (a prefix of the docstring) with the docstring closed."""
        closing = f"\n{self.indent}{QUOTES}\n"
        return Request(f"{self.above}{QUOTES}{typed.rstrip()}{closing}", suffix=self.below)

    def requests_while_typing(self, updates: int) -> list[Request]:
        """`updates` requests at evenly spaced word ends, the last one the whole docstring."""
        ends = [i for i, c in enumerate(self.docstring) if c == " " and i > 0]
        chosen = [ends[(k * len(ends)) // updates] for k in range(1, updates)] if ends else []
        typed = [self.docstring[:end] for end in dict.fromkeys(chosen)]
        return [self.request(text) for text in [*typed, self.docstring]]


SPECS = (
    TypedFunction(
        "own/clamp",
        "import math\n\n\ndef clamp(value: float, low: float, high: float) -> float:\n    ",
        "Return value limited to the range from low to high. Raise ValueError when low is "
        "greater than high, and return NaN unchanged.",
        "\n\n\ndef scale(values: list[float], factor: float) -> list[float]:\n"
        "    return [clamp(v * factor, 0.0, 1.0) for v in values]\n",
    ),
    TypedFunction(
        "own/word_counts",
        "from collections import Counter\n\n\ndef word_counts(text: str, top: int = 10) -> "
        "list[tuple[str, int]]:\n    ",
        "Count the words of text, ignoring case and punctuation at either end of a word.\n\n"
        "    Return the `top` most common words with their counts, most common first; ties "
        "keep the order in which the words first appear.",
        '\n\n\nif __name__ == "__main__":\n    print(word_counts("a b a"))\n',
    ),
    TypedFunction(
        "own/parse_duration",
        'import re\n\nUNITS = {"h": 3600, "m": 60, "s": 1}\n\n\ndef parse_duration(text: '
        "str) -> int:\n    ",
        "Parse a duration such as '1h30m' or '45s' into seconds. Units are h, m and s, each "
        "at most once and in that order; anything else raises ValueError.",
        "\n\n\ndef format_duration(seconds: int) -> str:\n    hours, rest = divmod(seconds, "
        '3600)\n    return f"{hours}h{rest // 60}m{rest % 60}s"\n',
    ),
    TypedFunction(
        "own/Stack.pop",
        "class Stack:\n    def __init__(self) -> None:\n        self.items: list[object] = []\n\n"
        "    def push(self, item: object) -> None:\n        self.items.append(item)\n\n"
        "    def pop(self) -> object:\n        ",
        "Remove and return the item on top. Raise IndexError with a clear message when the "
        "stack is empty.",
        "\n\n    def __len__(self) -> int:\n        return len(self.items)\n",
    ),
)


def write_sessions(specs: tuple[TypedFunction, ...] | list[TypedFunction], path: Path) -> Path:
    """The specs as a file for `prewrite bench-lsp --sessions-file` (JSONL, one spec a line)."""
    text = "".join(json.dumps(asdict(spec), ensure_ascii=False) + "\n" for spec in specs)
    path.write_text(text, encoding="utf-8")
    return path
