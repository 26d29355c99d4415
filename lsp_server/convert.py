"""All conversion between lsprotocol types and the server's own values (offsets, edits, answers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from lsprotocol import types
from pygls.workspace import ServerTextPosition, TextDocument

from inference.api import Completion
from inference.examples.sandbox import ExampleRun
from lsp_server.spec import Edit
from lsp_server.wire import (
    AlternativeParams,
    DraftParams,
    DraftStatus,
    ExamplesParams,
    ServerState,
    StatusParams,
)

_SNIPPET_SPECIAL = str.maketrans({"\\": "\\\\", "$": "\\$", "}": "\\}"})


def offset_at(document: TextDocument, position: types.Position) -> int:
    """Offset of a client position, clamped into the document."""
    line = max(0, position.line)
    character = max(0, position.character)
    # pygls mutates the position it converts; hand it a copy.
    offset = document.offset_at_position(types.Position(line=line, character=character))
    return min(offset, len(document.source))


def position_at(document: TextDocument, offset: int) -> types.Position:
    """Client position of an offset."""
    lines = document.lines
    if not lines:
        return types.Position(line=0, character=0)
    if offset >= len(document.source) and not lines[-1].endswith(("\n", "\r")):
        # pygls maps the end of a document without a final newline to (last line + 1, 0)
        end = ServerTextPosition(len(lines) - 1, len(lines[-1]))
        return document.position_to_client_units(end)
    return document.client_position_at_offset(offset)


def edit_point(
    document: TextDocument, changes: Sequence[types.TextDocumentContentChangeEvent]
) -> tuple[int | None, int | None]:
    """(where the user is now, where the first edit started), None when a change was whole-text.

    The editing point is the end of the last change's inserted text.
    """
    starts = []
    point = None
    for change in changes:
        if not isinstance(change, types.TextDocumentContentChangePartial):
            return None, None
        start = offset_at(document, change.range.start)
        starts.append(start)
        point = start + len(change.text)
    return point, (min(starts) if starts else None)


WORD_ENDS = frozenset(" \t\n.,;:!?)]}'\"`")


def ends_a_word(changes: Sequence[types.TextDocumentContentChangeEvent]) -> bool:
    """True when the last change inserted text ending in a space, a line break or punctuation."""
    if not changes:
        return True
    last = changes[-1]
    if not isinstance(last, types.TextDocumentContentChangePartial):
        return True  # the whole text was replaced
    return bool(last.text) and last.text[-1] in WORD_ENDS


def inline_list(
    document: TextDocument | None, edit: Edit | None, *others: Edit
) -> types.InlineCompletionList:
    """The answer as an inline completion item with the range it replaces; `others` (an
    alternative found by searchOnFailure first) become items before it."""
    if document is None or edit is None:
        return types.InlineCompletionList(items=[])
    items = [
        types.InlineCompletionItem(insert_text=e.text, range=edit_range(document, e))
        for e in (*others, edit)
    ]
    return types.InlineCompletionList(items=items)


def completion_list(
    document: TextDocument | None, edit: Edit | None, snippets: bool
) -> types.CompletionList:
    """The answer as one completion item; only where its range fits on one line."""
    if document is None or edit is None or "\n" in document.source[edit.start : edit.end]:
        return types.CompletionList(is_incomplete=True, items=[])
    first_line = next((line.strip() for line in edit.text.splitlines() if line.strip()), "")
    text = edit.text.translate(_SNIPPET_SPECIAL) if snippets else edit.text
    item = types.CompletionItem(
        label=first_line[:60] or "prewrite",
        kind=types.CompletionItemKind.Snippet,
        detail="prewrite",
        filter_text=edit.text,
        insert_text_format=(
            types.InsertTextFormat.Snippet if snippets else types.InsertTextFormat.PlainText
        ),
        text_edit=types.TextEdit(range=edit_range(document, edit), new_text=text),
    )
    return types.CompletionList(is_incomplete=False, items=[item])


def snippet_support(capabilities: types.ClientCapabilities | None) -> bool:
    """True when the client accepts snippet completion items."""
    document = capabilities.text_document if capabilities else None
    completion = document.completion if document else None
    item = completion.completion_item if completion else None
    return bool(item and item.snippet_support)


def progress_support(capabilities: types.ClientCapabilities | None) -> bool:
    """True when the client shows server-initiated work done progress."""
    window = capabilities.window if capabilities else None
    return bool(window and window.work_done_progress)


def inline_trigger(params: types.InlineCompletionParams) -> Literal["invoked", "automatic"]:
    """'invoked' when the user asked explicitly, else 'automatic'."""
    automatic = params.context.trigger_kind == types.InlineCompletionTriggerKind.Automatic
    return "automatic" if automatic else "invoked"


def completion_invoked(params: types.CompletionParams) -> bool:
    """True when the user asked for completion explicitly (not while typing)."""
    context = params.context
    return context is None or context.trigger_kind == types.CompletionTriggerKind.Invoked


def draft_params(
    uri: str,
    version: int,
    position: types.Position,
    status: DraftStatus,
    text: str,
    completion: Completion | None,
    examples: ExampleRun | None = None,
    alternative: AlternativeParams | None = None,
) -> DraftParams:
    """A prewrite/draft notification's params."""
    cost = completion.cost if completion else None
    checked = (
        ExamplesParams(examples.passed, examples.failed, examples.total, examples.first_failure)
        if examples is not None
        else None
    )
    return DraftParams(
        uri=uri,
        version=version,
        status=status,
        text=text,
        position=position,
        accepted_tokens=cost.accepted_tokens if cost else 0,
        draft_tokens=cost.draft_tokens if cost else 0,
        generated_tokens=cost.generated_tokens if cost else 0,
        forwards=cost.forwards if cost else 0,
        ms=round(cost.wall_ms, 3) if cost else 0.0,
        examples=checked,
        alternative=alternative,
    )


def status_params(state: ServerState, model: str, message: str) -> StatusParams:
    """A prewrite/status notification's params."""
    return StatusParams(state=state, model=model, message=message)


def show_message(kind: types.MessageType, text: str) -> types.ShowMessageParams:
    """window/showMessage params."""
    return types.ShowMessageParams(type=kind, message=text)


def log_message(kind: types.MessageType, text: str) -> types.LogMessageParams:
    """window/logMessage params."""
    return types.LogMessageParams(type=kind, message=text)


def progress_begin(message: str) -> types.WorkDoneProgressBegin:
    """The start of the model-loading progress."""
    return types.WorkDoneProgressBegin(title="prewrite", message=message, cancellable=False)


def progress_end(message: str) -> types.WorkDoneProgressEnd:
    """The end of the model-loading progress."""
    return types.WorkDoneProgressEnd(message=message)


def settings_section(settings: Any, section: str) -> Any:
    """The `section` object of didChangeConfiguration's settings, None when absent."""
    if isinstance(settings, dict):
        return settings.get(section)
    return None


def edit_range(document: TextDocument, edit: Edit) -> types.Range:
    return types.Range(start=position_at(document, edit.start), end=position_at(document, edit.end))
