"""End to end on smollm2-135m: typing, drafting, answers at trigger, coalescing, two documents.

One real `prewrite serve` process for the module, driven over stdio by pytest-lsp. In exact
mode the streamed answer must be token for token the plain greedy decoding of the final
text, which the same server computes with `prewrite/plainCompletion`.
"""

from __future__ import annotations

import itertools
import re

import pytest
import pytest_asyncio
import pytest_lsp
from lsprotocol import types

from tests.lsp_fixtures import (
    SERVER,
    Doc,
    PrewriteClient,
    configure,
    finish,
    inline,
    last_trigger,
    plain,
    start,
    stats,
    toggle,
    verified,
)

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: PrewriteClient, real_model_name: str):
    status = await start(lsp_client)
    assert status.capabilities.inline_completion_provider is not None
    yield
    await finish(lsp_client)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def geometry(client: PrewriteClient) -> Doc:
    """geometry.py with its docstring typed as fast as possible, and the draft verified."""
    doc = Doc.from_case("geometry")
    doc.open(client)
    doc.type(client, doc.typed_case("geometry"))
    await verified(client, doc)
    return doc


async def test_the_answer_after_a_pause_is_plain_decoding_and_needs_no_forward(client, geometry):
    draft = await verified(client, geometry)
    answer = await inline(client, geometry)

    assert answer is not None and answer.strip()
    assert answer == await plain(client, geometry)
    assert draft.text.endswith(answer.strip())
    trigger = last_trigger(await stats(client), geometry.uri)
    assert trigger["residualForwards"] == 0
    assert trigger["fromDraft"] is True
    assert trigger["version"] == geometry.version


async def test_completion_offers_the_same_text_as_one_snippet_item(client, geometry):
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=geometry.uri),
            position=geometry.position,
            context=types.CompletionContext(trigger_kind=types.CompletionTriggerKind.Invoked),
        )
    )

    assert isinstance(result, types.CompletionList) and len(result.items) == 1
    item = result.items[0]
    assert item.insert_text_format == types.InsertTextFormat.Snippet
    assert isinstance(item.text_edit, types.TextEdit)
    unescaped = re.sub(r"\\(.)", r"\1", item.text_edit.new_text)  # snippet escapes: \$ \} \\
    assert unescaped == await inline(client, geometry)


async def test_two_hundred_fast_changes_end_in_one_consistent_answer(client):
    doc = Doc.from_case("strings")
    doc.open(client)
    head, tail, end = "Return text in upper case", ", then exclamation marks", '."""\n    '
    tail = (tail * 4)[: (200 - len(head) - len(end)) // 2]
    doc.type(client, head + tail)
    for _ in tail:
        client.text_document_did_change(doc.backspace())
    doc.type(client, end)
    assert doc.version == 200
    assert doc.text.startswith('def shout(text: str) -> str:\n    """Return text in upper case."""')

    await verified(client, doc)
    answer = await inline(client, doc)

    assert answer is not None and answer == await plain(client, doc)
    report = await stats(client)
    drafts = report["drafts"]
    accounted = drafts["processed"] + drafts["superseded"] + drafts["dropped"] + drafts["failed"]
    assert drafts["pending"] == 0 and accounted == drafts["submitted"]
    assert drafts["processed"] < drafts["submitted"]
    busy = report["busySeconds"]  # the engine's time by job kind: drafting took some
    assert busy["load"] > 0 and busy["draft"] > 0 and busy["plain"] > 0


async def test_two_documents_typed_at_once_are_not_mixed(client):
    first = Doc.from_case("geometry", uri="file:///workspace/first.py")
    second = Doc.from_case("numbers", uri="file:///workspace/second.py")
    first.open(client)
    second.open(client)
    for pair in itertools.zip_longest(
        first.changes(first.typed_case("geometry")), second.changes(second.typed_case("numbers"))
    ):
        for change in pair:
            if change is not None:
                client.text_document_did_change(change)

    await verified(client, first)
    await verified(client, second)
    first_answer, second_answer = await inline(client, first), await inline(client, second)

    assert first_answer == await plain(client, first)
    assert second_answer == await plain(client, second)
    assert first_answer != second_answer


async def test_toggle_turns_answers_off_and_back_on(client, geometry):
    assert await toggle(client, False) == {"enabled": False}
    assert await inline(client, geometry) is None
    assert (await stats(client))["enabled"] is False
    assert await toggle(client) == {"enabled": True}
    assert await inline(client, geometry) is not None


async def test_drafting_on_word_ends_submits_once_a_word_and_answers_the_same(client):
    configure(client, {"draftOn": "word", "idleMs": 200})
    try:
        doc = Doc.from_case("strings", uri="file:///workspace/words.py")
        doc.open(client)
        before = (await stats(client))["drafts"]["submitted"]
        typed = "Return text in upper case."
        doc.type(client, typed + '"""\n    ')
        await verified(client, doc)
        submitted = (await stats(client))["drafts"]["submitted"] - before
        # one draft a word end (4 spaces, the period), the quotes and newline change nothing
        # more, and at most one more when the typing pause ends a word early
        assert submitted <= typed.count(" ") + 2 < len(typed)
        answer = await inline(client, doc)
        assert answer is not None and answer == await plain(client, doc)
    finally:
        configure(client, {})
