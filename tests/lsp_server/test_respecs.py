"""A changed docstring of a function that has a body, end to end on a real code model.

The real server over JSON-RPC with qwen2.5-coder-0.5b on llama.cpp: the test types a sentence
into the spec of a function whose body exists, waits for the Hint diagnostic, asks for the
code actions there, applies the offered edit as an editor would and checks the file: it parses
(Python's parser, TypeScript's `tsc`), the person's lines are all still there in their order,
and the new lines do what the sentence asks. A spec typed back to what it was offers nothing,
and an edit of the body while the re-verification runs leaves no offer behind.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types

from tests.compilers import compile_errors
from tests.lsp_fixtures import SERVER, Doc, PrewriteClient, apply_edit, finish, start, stats
from tests.paths import REPO

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]

IDLE_MS = 300
OFFER_TIMEOUT_S = 120

TEST_DATA = REPO / "editor-clients" / "test-data"
CHUNKS = (TEST_DATA / "chunks.py").read_text(encoding="utf-8").replace("in order.", "in order.‸")
CHUNKS_SENTENCE = " Raise ValueError when size is not positive."
LARGEST_TS = (TEST_DATA / "largest.ts").read_text(encoding="utf-8").replace("xs.", "xs.‸", 1)
LARGEST_SENTENCE = " Throws a RangeError when xs is empty."


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: PrewriteClient, code_model_name: str):
    settings = {"model": code_model_name, "respecIdleMs": IDLE_MS, "drafting": False}
    await start(lsp_client, settings)
    yield
    await finish(lsp_client)


def document(uri: str, marked: str) -> Doc:
    doc = Doc(uri, marked.replace("‸", ""))
    doc.cursor = marked.index("‸")
    return doc


async def offered(client: PrewriteClient, doc: Doc) -> types.Diagnostic:
    """The Hint prewrite publishes for the doc's version once the body is re-verified."""
    deadline = time.monotonic() + OFFER_TIMEOUT_S
    while time.monotonic() < deadline:
        hints = [d for d in client.diagnostics.get(doc.uri, []) if d.source == "prewrite"]
        if hints:
            return hints[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"no offer for {doc.uri}; stats: {(await stats(client))['respecs']}")


async def actions(client: PrewriteClient, doc: Doc, line: int) -> list[Any]:
    where = types.Range(types.Position(line, 0), types.Position(line, 0))
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(doc.uri),
            range=where,
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return list(result or [])


def applied(doc: Doc, action: types.CodeAction) -> tuple[str, list[types.TextEdit]]:
    """The text after the action's edit, and its text edits (for this very version)."""
    assert action.edit is not None and action.edit.document_changes
    (change,) = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    assert change.text_document.uri == doc.uri and change.text_document.version == doc.version
    text = doc.text
    edits = sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character))
    for edit in reversed(edits):
        assert isinstance(edit, types.TextEdit)
        text = apply_edit(text, edit.range, edit.new_text)
    return text, edits  # type: ignore[return-value]


def _written(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def keeps_in_order(lines: list[str], within: list[str]) -> bool:
    """True when every line of `lines` is in `within`, in the same order."""
    it = iter(within)
    return all(any(line == other for other in it) for line in lines)


async def quiet(client: PrewriteClient) -> dict[str, int]:
    """The respec counts once no re-verification is pending or running."""
    await asyncio.sleep(3 * IDLE_MS / 1000)
    while (counts := (await stats(client))["respecs"])["pending"]:
        await asyncio.sleep(0.1)
    return counts


async def offer_applied(
    client: PrewriteClient, doc: Doc, sentence: str, title: str, body: str, source: Path
) -> str:
    """Type `sentence` at the doc's cursor, take the offer at its Hint and apply it; the text
    after it, checked: it builds, keeps every line of `body` in order and only inserts."""
    doc.type(client, sentence)
    hint = await offered(client, doc)
    assert hint.severity == types.DiagnosticSeverity.Hint
    (action,) = await actions(client, doc, hint.range.start.line)
    assert action.title == title
    text, edits = applied(doc, action)
    assert not compile_errors(_written(source, text)), text
    assert keeps_in_order(body.splitlines(), text.splitlines()), text
    assert all(e.range.start == e.range.end for e in edits), edits  # no person's line replaced
    return text


async def test_a_sentence_added_to_a_docstring_offers_the_lines_it_asks_for(
    client, tmp_path: Path
):
    doc = document("file:///workspace/chunks.py", CHUNKS)
    doc.open(client, "python")
    body = doc.text[doc.text.index("    out = []") : doc.text.index("\n\n\ndef pairs")]
    assert await actions(client, doc, 0) == []
    title = "prewrite: update the body to the docstring"
    text = await offer_applied(client, doc, CHUNKS_SENTENCE, title, body, tmp_path / "c.py")
    assert "raise ValueError" in text[text.index("def chunks") : text.index("def pairs")], text
    assert await actions(client, doc, 0) == []  # not on a line outside the function
    assert text.endswith("def pairs(items):\n    return chunks(items, 2)\n")


async def test_a_spec_typed_back_to_what_it_was_offers_nothing(client):
    doc = document("file:///workspace/unchanged.py", CHUNKS)
    doc.open(client, "python")
    before = (await stats(client))["respecs"]
    doc.type(client, " Extra")
    for _ in " Extra":
        client.text_document_did_change(doc.backspace())

    after = await quiet(client)
    assert after["submitted"] == before["submitted"], after
    assert not [d for d in client.diagnostics.get(doc.uri, []) if d.source == "prewrite"]
    assert await actions(client, doc, 4) == []


async def test_an_edit_of_the_body_while_it_is_checked_leaves_no_offer(client):
    doc = document("file:///workspace/edited.py", CHUNKS)
    doc.open(client, "python")
    before = (await stats(client))["respecs"]
    doc.type(client, CHUNKS_SENTENCE)
    while (await stats(client))["respecs"]["submitted"] == before["submitted"]:
        await asyncio.sleep(0.02)
    at = doc.text.index("    return out") + len("    return out")
    client.text_document_did_change(doc.replace(at, at, "  # done"))

    after = await quiet(client)
    assert after["submitted"] == before["submitted"] + 1
    assert not [d for d in client.diagnostics.get(doc.uri, []) if d.source == "prewrite"]
    assert await actions(client, doc, 6) == []


async def test_a_typescript_comment_asks_for_a_check_and_the_file_still_compiles(
    client, tmp_path: Path
):
    doc = document("file:///workspace/largest.ts", LARGEST_TS)
    doc.open(client, "typescript")
    body = doc.text[doc.text.index("  let best") :]
    title = "prewrite: update the body to the comment"
    text = await offer_applied(client, doc, LARGEST_SENTENCE, title, body, tmp_path / "l.ts")
    assert "throw new RangeError" in text, text
