"""A suite the lab cannot use."""

from __future__ import annotations

from inference.errors import PrewriteError


class SuiteError(PrewriteError):
    """A suite could not be found or one of its problems is malformed."""
