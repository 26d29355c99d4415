"""prewrite's own JSON-RPC methods and their types, shared by the server, the demo and the tests.

The attrs classes go through lsprotocol's converter like the standard types, so field names
are camelCase on the wire. No field has a default: lsprotocol's converter omits fields equal
to their default, and every field is always sent, which keeps clients in other languages
simple.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

DRAFT = "prewrite/draft"  # server -> client notification, opt-in with the draftPreview setting
STATUS = "prewrite/status"  # server -> client notification: model loading / ready / error
PLAIN_COMPLETION = "prewrite/plainCompletion"  # client -> server request: decode at trigger
STATS_COMMAND = "prewrite.stats"  # workspace/executeCommand
TOGGLE_COMMAND = "prewrite.toggle"  # workspace/executeCommand, optional argument: true/false

DraftStatus = Literal["regenerating", "accepted", "verified"]
ServerState = Literal["loading", "ready", "error", "disabled"]


@attrs.define
class ExamplesParams:
    """How a draft did on its spec's `>>>` examples, run in the sandbox."""

    passed: int
    failed: int
    total: int
    first_failure: str | None  # "f(2) returned 5, expected 4", or null when all passed


@attrs.define
class AlternativeParams:
    """A sampled answer whose examples all pass where the verified draft's fail
    (`searchOnFailure`): offered first at the trigger, and not the greedy answer."""

    passed: int
    total: int
    seed: int  # the sample it is (1, 2, ...)
    drawn: int  # samples drawn to find it
    text: str  # the alternative's text, as `text` is the draft's


@attrs.define
class DraftParams:
    """The live draft of one document.

    `regenerating`: the engine started on this version (text is the previous draft, stale);
    `accepted`: newer typing interrupted it, text is the part verified for this version;
    `verified`: text is the complete answer for exactly this version. The text goes at
    `position` (the end of the spec's last line) and starts with what closes the spec. A
    verified draft is sent again, with `examples`, once its examples have run, and again with
    `alternative` when its examples failed and a sampled answer passing them was found.
    """

    uri: str
    version: int
    status: DraftStatus
    text: str
    position: types.Position
    accepted_tokens: int
    draft_tokens: int
    generated_tokens: int
    forwards: int
    ms: float
    examples: ExamplesParams | None  # null: no examples, not checked (yet), or not this draft
    alternative: AlternativeParams | None = None  # null: none found (or searchOnFailure off)


@attrs.define
class StatusParams:
    """Where the server stands: `loading`, `ready`, `error` (message says why), `disabled`."""

    state: ServerState
    model: str
    message: str


@attrs.define
class DraftNotification:
    params: DraftParams
    method: str
    jsonrpc: str


@attrs.define
class StatusNotification:
    params: StatusParams
    method: str
    jsonrpc: str


@attrs.define
class PlainCompletionRequest:
    """Same params as textDocument/inlineCompletion; the answer is decoded with no draft."""

    id: int | str
    params: types.InlineCompletionParams
    method: str
    jsonrpc: str


@attrs.define
class PlainCompletionResponse:
    id: int | str | None
    result: types.InlineCompletionList | None
    jsonrpc: str


MESSAGE_TYPES: dict[str, Any] = {
    DRAFT: DraftNotification,
    STATUS: StatusNotification,
    PLAIN_COMPLETION: PlainCompletionRequest,
}
RESULT_TYPES: dict[str, Any] = {PLAIN_COMPLETION: PlainCompletionResponse}


class WireProtocolMixin(LanguageServerProtocol):
    """Teaches a pygls protocol (server's or client's) prewrite's own methods."""

    # pygls caches these per method with lru_cache; a plain override is enough here.
    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        return MESSAGE_TYPES.get(method) or super().get_message_type(method)

    def get_result_type(self, method: str) -> Any:  # type: ignore[override]
        return RESULT_TYPES.get(method) or super().get_result_type(method)
