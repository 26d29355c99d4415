"""An adapter or drafter folder that cannot be loaded onto the model."""

from __future__ import annotations

from inference.errors import ModelError


class AdapterError(ModelError):
    """An adapter folder could not be loaded."""


class AdapterFolderError(AdapterError):
    """The adapter folder does not exist or lacks the files peft writes."""


class AdapterMismatchError(AdapterError):
    """The adapter was trained on another model than the one it is being applied to."""
