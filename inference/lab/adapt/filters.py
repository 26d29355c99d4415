"""Which harvested functions are worth training on: length bounds, no test code, no secrets."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

from inference.lab.adapt.harvest import Function

# Assignments and literals that look like credentials; any hit drops the whole function.
_SECRET_PATTERNS = (
    re.compile(
        r"(?i)(api[_-]?key|secret|token|passw(or)?d|passwd|credential|auth)[\w-]*['\"]?\s*[:=]\s*"
        r"[rbuf]*['\"][^'\"\s]{8,}['\"]"
    ),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"),  # GitHub token
    re.compile(r"\b(sk|pk|rk)[-_](live|test|proj)?[-_]?[A-Za-z0-9]{20,}\b"),  # API secret keys
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),  # Slack token
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\."),  # JSON web token
)
# A run of letters and digits (mixed) this long with this much entropy reads as a key or hash.
_RANDOM_RUN = re.compile(r"[A-Za-z0-9+=_-]{24,}")  # no "/": URL paths are not keys
_ENTROPY_BITS = 4.0
_HEX_RUN = re.compile(r"\b[0-9a-fA-F]{32,}\b")
_HEX_ENTROPY_BITS = 3.0


@dataclass(frozen=True)
class Bounds:
    """Length limits: long enough to stream, short enough to fit a training sequence."""

    min_docstring_chars: int = 30
    max_docstring_chars: int = 2000
    min_body_lines: int = 1
    max_body_lines: int = 60
    max_prompt_chars: int = 4000


def rejection(function: Function, bounds: Bounds) -> str | None:
    """Why the function is left out, or None when it is kept."""
    docstring = function.docstring.strip()
    body_lines = sum(1 for line in function.body.splitlines() if line.strip())
    if function.name.startswith("test") or function.name.endswith("_test"):
        return "a test"
    if len(docstring) < bounds.min_docstring_chars:
        return "docstring too short"
    if len(docstring) > bounds.max_docstring_chars:
        return "docstring too long"
    if body_lines < bounds.min_body_lines:
        return "body too short"
    if body_lines > bounds.max_body_lines:
        return "body too long"
    if len(function.prompt) > bounds.max_prompt_chars:
        return "prompt too long"
    if looks_secret(function.source):
        return "looks like it holds a secret"
    return None


def looks_secret(text: str) -> bool:
    """True when the text has a credential-like assignment, a key format or a random-looking run."""
    if any(pattern.search(text) for pattern in _SECRET_PATTERNS):
        return True
    for run in _RANDOM_RUN.findall(text):
        has_both = any(c.isdigit() for c in run) and any(c.isalpha() for c in run)
        if has_both and shannon_bits(run) >= _ENTROPY_BITS:
            return True
    return any(shannon_bits(run) >= _HEX_ENTROPY_BITS for run in _HEX_RUN.findall(text))


def shannon_bits(text: str) -> float:
    """Shannon entropy of the characters of `text`, in bits per character."""
    counts = Counter(text)
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())
