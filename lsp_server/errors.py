"""The server's errors and the one place where any failure becomes a JSON-RPC error or a message."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcContentModified,
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
)

from inference.errors import ConfigError, PrewriteError, Superseded

P = ParamSpec("P")
R = TypeVar("R")

REQUEST_FAILED = -32803  # LSP's RequestFailed: the request was valid but could not be served


class ServerError(PrewriteError):
    """A failure of the server itself (not of the engine)."""


class NotReadyError(ServerError):
    """The model is not loaded (yet, or loading failed)."""


class WorkerStoppedError(ServerError):
    """The engine worker was stopped (the server is shutting down)."""


class SettingsError(ConfigError):
    """Server settings are invalid; `fields` holds the wire names of the bad ones."""

    def __init__(self, message: str, fields: list[str]):
        super().__init__(message)
        self.fields = fields


def to_jsonrpc(exc: BaseException) -> JsonRpcException:
    """The JSON-RPC error a request answers with when `exc` stopped it."""
    if isinstance(exc, JsonRpcException):
        return exc
    if isinstance(exc, Superseded):
        return JsonRpcContentModified("the document changed; the answer is stale")
    if isinstance(exc, ConfigError):
        return JsonRpcInvalidParams(str(exc))
    if isinstance(exc, PrewriteError):  # RequestError, ModelError, ServerError, ...
        return JsonRpcException(message=f"prewrite: {exc}", code=REQUEST_FAILED)
    return JsonRpcInternalError(f"prewrite: internal error: {type(exc).__name__}: {exc}")


def to_message(exc: BaseException) -> tuple[types.MessageType, str]:
    """How a failure nobody waits for (drafting, loading, settings) is told to the user."""
    if isinstance(exc, Superseded):
        return types.MessageType.Log, f"prewrite: {exc}"
    if isinstance(exc, PrewriteError):
        return types.MessageType.Error, f"prewrite: {exc}"
    return types.MessageType.Error, f"prewrite: internal error: {type(exc).__name__}: {exc}"


def answering(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Wrap an async request handler so that anything it raises leaves as `to_jsonrpc` maps it."""

    @functools.wraps(handler)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the request boundary: every failure is answered
            raise to_jsonrpc(exc) from exc

    return wrapper
