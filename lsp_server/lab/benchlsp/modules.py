'''Modules of our own for `prewrite bench-lsp`: imports, helpers above, callers below.

In each, `"""SPEC ... END"""` is the docstring the typist writes into a function that has no
body yet; everything else is there from the start, as in a file someone is working on.
'''

from __future__ import annotations

INVENTORY = '''"""Stock levels for the warehouse dashboard."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Item:
    sku: str
    name: str
    quantity: int
    reorder_level: int


def load_items(path: Path) -> list[Item]:
    """Read the items of a CSV export with columns sku, name, quantity, reorder_level."""
    with open(path, newline="", encoding="utf-8") as handle:
        return [
            Item(row["sku"], row["name"], int(row["quantity"]), int(row["reorder_level"]))
            for row in csv.DictReader(handle)
        ]


def items_to_reorder(items: list[Item]) -> list[Item]:
    """SPEC Return the items whose quantity is at or below their reorder level.
    The result is sorted by how far below the level they are, the furthest first;
    items with the same shortfall keep their order in the input.
    END"""


def report(items: list[Item]) -> str:
    lines = [f"{item.sku}: {item.quantity} left" for item in items_to_reorder(items)]
    return "\\n".join(lines) or "nothing to reorder"
'''

TEXT_STATS = '''"""Word statistics for the weekly newsletter."""

import re
from collections import Counter

WORD = re.compile(r"[a-z']+")


def words(text: str) -> list[str]:
    """Lowercase words of a text, apostrophes kept."""
    return WORD.findall(text.lower())


def reading_time(text: str, words_per_minute: int = 230) -> int:
    """SPEC Estimate the minutes needed to read text at words_per_minute.
    Count the words with words() and round up to a whole minute.
    An empty text takes zero minutes.
    END"""


def summary(text: str) -> dict[str, int]:
    counts = Counter(words(text))
    return {"words": sum(counts.values()), "distinct": len(counts),
            "minutes": reading_time(text)}
'''

GEOMETRY = '''"""Plane geometry helpers for the floor-plan editor."""

import math
from typing import NamedTuple


class Point(NamedTuple):
    x: float
    y: float


def distance(a: Point, b: Point) -> float:
    """Euclidean distance between two points."""
    return math.hypot(a.x - b.x, a.y - b.y)


def polygon_area(points: list[Point]) -> float:
    """SPEC Return the area of the simple polygon whose corners are points, in order.
    Use the shoelace formula; the result is positive whatever the orientation.
    Fewer than three points enclose no area.
    END"""


def perimeter(points: list[Point]) -> float:
    return sum(distance(a, b) for a, b in zip(points, points[1:] + points[:1]))
'''

DATES = '''"""Scheduling helpers for the booking service."""

from datetime import date, timedelta

HOLIDAYS = {date(2026, 12, 25), date(2026, 12, 26), date(2027, 1, 1)}


def is_business_day(day: date) -> bool:
    """True on weekdays that are not holidays."""
    return day.weekday() < 5 and day not in HOLIDAYS


def add_business_days(start: date, days: int) -> date:
    """SPEC Return the date that is days business days after start.
    Weekends and HOLIDAYS do not count; start itself is never counted.
    A negative days counts backwards in the same way.
    END"""


def due_date(ordered: date) -> date:
    return add_business_days(ordered, 5)
'''

PARSING = '''"""Parsing of the key=value lines the sensors send."""

from __future__ import annotations


class ParseError(ValueError):
    """A line that is not a well-formed reading."""


def parse_value(text: str) -> float | int | str:
    """An int, else a float, else the text itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_reading(line: str) -> dict[str, float | int | str]:
    """SPEC Parse a line such as 'id=7 temp=21.5 unit=C' into a dictionary.
    Pairs are separated by whitespace and each value goes through parse_value.
    Raise ParseError naming the pair when a pair has no '=' or an empty key,
    and when the same key appears twice.
    END"""


def parse_all(lines: list[str]) -> list[dict[str, float | int | str]]:
    return [parse_reading(line) for line in lines if line.strip()]
'''

MATRIX = '''"""Small dense matrices for the physics prototype (no numpy on the device)."""

Matrix = list[list[float]]


def identity(n: int) -> Matrix:
    """The n x n identity matrix."""
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def multiply(a: Matrix, b: Matrix) -> Matrix:
    """SPEC Return the matrix product of a and b.
    Raise ValueError when the number of columns of a differs from the number of rows of b.
    Empty matrices give an empty result.
    END"""


def power(m: Matrix, k: int) -> Matrix:
    result = identity(len(m))
    for _ in range(k):
        result = multiply(result, m)
    return result
'''

MODULES = {
    "own/inventory": INVENTORY,
    "own/text_stats": TEXT_STATS,
    "own/geometry": GEOMETRY,
    "own/dates": DATES,
    "own/parsing": PARSING,
    "own/matrix": MATRIX,
}
