"""The adaptation tool's errors: a corpus, a dataset, a checkpoint or an adapter it cannot use."""

from __future__ import annotations

from inference.errors import ModelError, PrewriteError


class AdaptError(PrewriteError):
    """Base of the data builder's and trainer's errors; `prewrite` prints them and exits 2."""


class CorpusError(AdaptError):
    """The sources hold no usable function (empty, all filtered out, or unreadable)."""


class DatasetError(AdaptError):
    """A training data folder is missing, malformed, or was built for another model."""


class CheckpointError(AdaptError):
    """A training checkpoint cannot be resumed (missing, damaged, or other settings)."""


class AdapterError(ModelError):
    """An adapter folder could not be loaded."""


class AdapterFolderError(AdapterError):
    """The adapter folder does not exist or lacks the files peft writes."""


class AdapterMismatchError(AdapterError):
    """The adapter was trained on another model than the one it is being applied to."""
