"""The bench's errors: a suite or a results folder it cannot use."""

from __future__ import annotations

from inference.errors import PrewriteError


class BenchError(PrewriteError):
    """Base of the bench's errors; the `prewrite` command prints them and exits 2."""


class SuiteError(BenchError):
    """A suite could not be found or one of its problems is malformed."""


class ResultsError(BenchError):
    """A results folder is missing its results.json or the file is not a bench result."""
