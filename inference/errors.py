"""The engine's error hierarchy: every failure a caller can act on has a type here."""

from __future__ import annotations


class PrewriteError(Exception):
    """Base of every error the engine raises on purpose."""


class ModelError(PrewriteError):
    """A model could not be found, installed or loaded."""


class ModelNotFoundError(ModelError):
    """The model name is neither a pack, a local folder nor a reachable hub id."""


class ModelNotInstalledError(ModelError):
    """A known model pack is named but has not been installed yet."""


class ModelFolderError(ModelError):
    """A local model folder is incomplete or unreadable."""


class PackInstallError(ModelError):
    """Installing a model pack failed (download, checksum or conversion)."""


class RequestError(PrewriteError):
    """A request the engine cannot serve as given."""


class EmptyRequestError(RequestError):
    """The request text is empty."""


class ContextOverflowError(RequestError):
    """The request does not fit in the model's context window."""


class UnknownSessionError(RequestError):
    """A session id that was never opened, or was already closed."""


class RuntimeFailure(PrewriteError):
    """The runtime could not run a forward (a llama.cpp decode failed, say)."""


class ConfigError(PrewriteError):
    """An engine setting is invalid."""


class Superseded(PrewriteError):  # noqa: N818 - it is a signal, not a failure
    """Work was dropped because a newer version of the same session arrived."""
