"""The bench's errors: a suite or a results folder it cannot use."""

from __future__ import annotations

from inference.errors import PrewriteError


class BenchError(PrewriteError):
    """Base of the bench's errors; the `prewrite` command prints them and exits 2."""


class ResultsError(BenchError):
    """A results folder is missing its results.json or the file is not a bench result."""
