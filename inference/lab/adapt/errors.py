"""The adaptation tool's errors: a corpus, a dataset or a checkpoint it cannot use."""

from __future__ import annotations

from inference.errors import PrewriteError


class AdaptError(PrewriteError):
    """Base of the data builder's and trainer's errors; `prewrite` prints them and exits 2."""


class CorpusError(AdaptError):
    """The sources hold no usable function (empty, all filtered out, or unreadable)."""


class DatasetError(AdaptError):
    """A training data folder is missing, malformed, or was built for another model."""


class CheckpointError(AdaptError):
    """A training checkpoint cannot be resumed (missing, damaged, or other settings)."""
