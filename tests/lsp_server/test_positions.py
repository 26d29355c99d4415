"""Positions and versions over real JSON-RPC on smollm2-135m: the server's text stays the client's.

Characters outside the BMP count 2 UTF-16 units, 4 UTF-8 ones and 1 UTF-32 one; the server
speaks the encoding it chose from the client's offer. An answer's edit, applied by the test's
own converter, must leave the client's text with the answer after the spec. A client whose
versions go back or skip ahead has its edits applied in order.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcContentModified, JsonRpcException

from lsp_server.client import inline_params
from tests.lsp_fixtures import (
    SERVER,
    TEST_SETTINGS,
    Doc,
    PrewriteClient,
    apply_edit,
    finish,
    position_in,
    stats,
    verified,
)

pytestmark = [pytest.mark.real_model, pytest.mark.timeout(240)]

HEADER = (
    "import math\n\n# Areas in 𝒳 units, 😀.\n\n\ndef area(width: float, height: float) -> float:\n"
)
SPEC = '    """Return the area 😀 of the 𝒳 rectangle.'


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: PrewriteClient, real_model_name: str):
    yield
    await finish(lsp_client)


async def start_offering(
    client: PrewriteClient, encodings: list[str] | None, **settings: Any
) -> str:
    """initialize offering `encodings`; the encoding the server chose."""
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    capabilities.general = types.GeneralClientCapabilities(position_encodings=encodings)
    result = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities, initialization_options={**TEST_SETTINGS, **settings}
        )
    )
    await client.watch.settled()
    chosen = result.capabilities.position_encoding
    return "utf-16" if chosen is None else str(chosen)


async def inline_item(client: PrewriteClient, doc: Doc) -> types.InlineCompletionItem:
    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position)
    )
    assert result is not None and len(result.items) == 1
    item: types.InlineCompletionItem = result.items[0]
    return item


def answered(doc: Doc, item: types.InlineCompletionItem) -> str:
    """The client's text once the item's edit is applied."""
    assert item.range is not None and isinstance(item.insert_text, str)
    return apply_edit(doc.text, item.range, item.insert_text, doc.encoding)


def typed_spec(doc: Doc, client: PrewriteClient, spec: str) -> None:
    doc.open(client)
    for change in doc.changes(spec):
        client.text_document_did_change(change)


@pytest.mark.parametrize("offered", [None, "utf-16", "utf-8", "utf-32"])
async def test_astral_characters_before_the_cursor_leave_the_answer_where_it_belongs(
    client, offered
):
    encoding = await start_offering(client, [offered] if offered else None)
    assert encoding == (offered or "utf-16")
    doc = Doc("file:///workspace/astral.py", HEADER, cursor=len(HEADER), encoding=encoding)
    typed_spec(doc, client, SPEC)
    draft = await verified(client, doc)
    line_end = len(doc.text)
    assert draft.position == position_in(doc.text, line_end, encoding)

    doc.cursor = doc.text.index("𝒳 rectangle")  # back into the line, before an astral character
    item = await inline_item(client, doc)

    assert item.range == types.Range(
        start=position_in(doc.text, doc.cursor, encoding),
        end=position_in(doc.text, line_end, encoding),
    )
    assert item.insert_text == "𝒳 rectangle." + draft.text
    assert draft.text.startswith('"""\n    ') and draft.text.strip() != '"""'
    assert answered(doc, item) == doc.text + draft.text  # the answer after the spec


async def test_versions_that_go_back_or_skip_ahead_keep_the_text_in_step(client):
    encoding = await start_offering(client, ["utf-8"])  # the most units per character
    doc = Doc("file:///workspace/versions.py", HEADER, cursor=len(HEADER), encoding=encoding)
    typed_spec(doc, client, SPEC)
    top = doc.text.index("# Areas")
    spec_end = len(doc.text)
    back = doc.version - 5
    client.text_document_did_change(doc.replace(top, top, "# 𝒳 first\n", version=back))
    client.text_document_did_change(doc.replace(top, top, "# then 😀\n", version=back + 100))
    doc.cursor = spec_end + len("# 𝒳 first\n# then 😀\n")
    client.text_document_did_change(doc.replace(doc.cursor, doc.cursor, " Twice."))

    draft = await verified(client, doc)
    item = await inline_item(client, doc)

    assert answered(doc, item) == doc.text + draft.text
    assert draft.text.startswith('"""\n')
    server_doc = document_stats(await stats(client), doc.uri)
    assert (server_doc["version"], server_doc["length"]) == (back + 101, len(doc.text))
    went_back = [m for m in client.log_messages if "version went back" in m.message]
    assert len(went_back) == 1 and went_back[0].type == types.MessageType.Warning


async def test_an_answer_the_document_changed_under_is_content_modified_or_fits_the_new_text(
    client,
):
    await start_offering(client, None, prefixChars=200)
    filler = "".join(f"VALUE_{i} = {i}  # 𝒳 😀\n" for i in range(40))
    doc = Doc("file:///workspace/overtaken.py", filler + HEADER, cursor=len(filler + HEADER))
    typed_spec(doc, client, SPEC + '"""\n    ')
    pending = client.protocol.send_request(
        types.TEXT_DOCUMENT_INLINE_COMPLETION, inline_params(doc.uri, doc.position)
    )
    # an edit far above the spec (beyond prefixChars): the request, and the draft, stay
    first_line = "# a new first line 😀\n"
    cursor = doc.cursor + len(first_line)
    client.text_document_did_change(doc.replace(0, 0, first_line))
    doc.cursor = cursor

    try:
        result = await asyncio.wrap_future(pending)
    except JsonRpcException as stale:
        assert stale.code == JsonRpcContentModified.CODE  # the client asks again
        return
    (item,) = result.items
    assert answered(doc, item) == doc.text + item.insert_text  # typed nothing on the body line


def document_stats(report: dict[str, Any], uri: str) -> dict[str, Any]:
    found: dict[str, Any] = next(d for d in report["documents"] if d["uri"] == uri)
    return found
