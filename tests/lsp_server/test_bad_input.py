"""Bad input never takes the server down: each gets an error or an empty answer, then it serves on.

One real server for the module; after every mistake the canary document (whose draft is
verified, so answering it needs no model work) must still get its answer.
"""

from __future__ import annotations

import random

import pytest
import pytest_asyncio
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound

from lsp_server.client import inline_params
from lsp_server.errors import REQUEST_FAILED
from tests.lsp_fixtures import (
    SERVER,
    Doc,
    PrewriteClient,
    configure,
    finish,
    inline,
    last_trigger,
    plain,
    raw_notification,
    raw_request,
    shown,
    start,
    stats,
    verified,
)

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: PrewriteClient, real_model_name: str):
    await start(lsp_client)
    yield
    await finish(lsp_client)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def canary(client: PrewriteClient) -> Doc:
    doc = Doc.from_case("geometry", uri="file:///workspace/canary.py")
    doc.open(client)
    doc.type(client, doc.typed_case("geometry"))
    await verified(client, doc)
    return doc


async def still_serving(client: PrewriteClient, canary: Doc) -> None:
    assert await inline(client, canary)
    report = await stats(client)
    assert report["state"] == "ready" and report["model"] == "smollm2-135m"


async def test_an_unknown_document_gets_empty_answers(client, canary):
    text = 'def f():\n    """Return 1."""\n    '
    ghost = Doc("file:///workspace/never-opened.py", text, cursor=len(text))
    assert await inline(client, ghost) is None
    assert await plain(client, ghost) is None
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=ghost.uri), position=ghost.position
        )
    )
    assert isinstance(result, types.CompletionList) and len(result.items) == 0
    ghost.type(client, "x")  # didChange for a document that was never opened
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=ghost.uri))
    )
    await still_serving(client, canary)


async def test_a_position_outside_the_document_is_clamped(client, canary):
    far = types.Position(line=100_000, character=100_000)
    result = await client.text_document_inline_completion_async(inline_params(canary.uri, far))
    # the end of the document, where the canary's cursor is
    assert isinstance(result, types.InlineCompletionList) and len(result.items) == 1
    assert result.items[0].insert_text == await inline(client, canary)
    with pytest.raises(JsonRpcInvalidParams):  # positions are unsigned in LSP
        await raw_request(
            client,
            "textDocument/inlineCompletion",
            {
                "textDocument": {"uri": canary.uri},
                "position": {"line": -1, "character": -7},
                "context": {"triggerKind": 1},
            },
        )
    await still_serving(client, canary)


async def test_malformed_params_are_answered_with_invalid_params(client, canary):
    with pytest.raises(JsonRpcInvalidParams):
        await raw_request(client, "textDocument/inlineCompletion", {"textDocument": 5})
    with pytest.raises(JsonRpcInvalidParams):
        await raw_request(client, "prewrite/plainCompletion", "junk")
    with pytest.raises(JsonRpcInvalidParams):
        await raw_request(client, "workspace/executeCommand", {"command": "prewrite.nothing"})
    with pytest.raises(JsonRpcMethodNotFound):
        await raw_request(client, "prewrite/nothing", {})
    raw_notification(client, "textDocument/didChange", {"contentChanges": 3})
    raw_notification(client, "textDocument/didOpen", {"textDocument": None})
    await still_serving(client, canary)


async def test_invalid_settings_are_named_and_the_previous_ones_stay(client, canary):
    configure(client, {"maxTokens": -3, "acceptance": "greedy"})
    message = await shown(client, "maxTokens")
    assert message.type == types.MessageType.Error and "acceptance" in message.message
    assert (await stats(client))["settings"]["maxTokens"] == 48

    configure(client, {"model": "/no/such/model/folder"})
    message = await shown(client, "/no/such/model/folder")
    assert message.message.startswith("prewrite: model:")
    report = await stats(client)
    assert report["settings"]["model"] == "smollm2-135m"
    await still_serving(client, canary)


async def test_a_five_megabyte_document_is_served(client, canary):
    block = 'def helper_{0}(x: int) -> int:\n    """Return x plus {0}."""\n    return x + {0}\n\n\n'
    filler = "".join(block.format(i) for i in range(60_000))
    assert len(filler) > 5_000_000
    doc = Doc(
        "file:///workspace/huge.py",
        filler + 'def area(width: float, height: float) -> float:\n    """Return the area\n',
    )
    doc.cursor = len(doc.text) - 1  # typing on from "Return the area"
    configure(client, {"prefixChars": 100})  # the size is the point, not a long prompt
    doc.open(client)
    doc.type(client, ' of the rectangle."""\n    ')

    draft = await verified(client, doc)
    assert draft.text.startswith("\n    ") and draft.text.strip()  # a body: `return ...`
    answer = await inline(client, doc)  # on the body line: the typed indent restated
    assert answer is not None and answer.strip() == draft.text.strip()
    trigger = last_trigger(await stats(client), doc.uri)
    assert trigger["fromDraft"] and trigger["residualForwards"] == 0
    doc.cursor = 10  # in the middle of the first function's header: nothing to write there
    assert await inline(client, doc) is None
    configure(client, {})
    await still_serving(client, canary)


async def test_binary_junk_is_survived_and_lines_end_only_where_lsp_ends_them(client, canary):
    rng = random.Random(4)
    # NUL, controls, a surrogate, and what str.splitlines ends a line at but LSP does not
    odd = [0, 1, 7, 0xB, 0xC, 0x1C, 27, 0x85, 0x2028, 0x2029, 0xD800, 0xFFFE]
    junk = "".join(chr(rng.choice([*odd, rng.randrange(0x110000)])) for _ in range(20_000))
    junk = junk.replace("\r", "").replace("\n", "")  # the document's own line count stays known
    doc = Doc("file:///workspace/junk.py", f'{junk}\ndef f(x):\n    """Return x\n{junk}')
    doc.cursor = doc.text.index('"""Return x') + len('"""Return x')
    doc.open(client)
    doc.type(client, " twice.")

    draft = await verified(client, doc)  # the spec was found where the client typed it
    assert draft.position == doc.position
    server_doc = next(d for d in (await stats(client))["documents"] if d["uri"] == doc.uri)
    assert (server_doc["version"], server_doc["length"]) == (doc.version, len(doc.text))
    assert (await inline(client, doc) is None) == (not draft.text)
    await still_serving(client, canary)


async def test_an_engine_exception_is_reported_and_the_next_request_works(client, canary):
    configure(client, {"prefixChars": 1_000_000})
    filler = "".join(f"value_{i} = compute({i}, 'label {i}')\n" for i in range(4000))
    doc = Doc("file:///workspace/too-long.py", f'{filler}\n\ndef f(x):\n    """Return x\n')
    doc.cursor = len(doc.text) - 1
    doc.open(client)
    doc.type(client, " doubled.")

    reported = await shown(client, "context")
    assert reported.type == types.MessageType.Error
    with pytest.raises(JsonRpcException) as failure:
        await inline(client, doc)
    assert failure.value.code == REQUEST_FAILED and "context" in failure.value.message

    configure(client, {"prefixChars": 8000})
    await still_serving(client, canary)
