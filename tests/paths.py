"""Where the tests' data and the repository are, for test modules at any depth of tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
TEST_DATA = TESTS / "data"
REPO = TESTS.parent
