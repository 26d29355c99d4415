"""Accepted answers build, end to end on a real code model (qwen2.5-coder-0.5b on llama.cpp).

Brace languages: the editor has closed the function's `{` already (VS Code and most Neovim
setups auto-close), so the model's answer, which ends with the function's `}`, must not repeat
it. Each case types a spec key by key into the real server, triggers at the end of it, applies
the inline item (its range and text) as an editor would, and hands the file to the language's
own compiler: TypeScript's `tsc` (from the VS Code extension's node_modules, which `make test`
installs) and `javac`.

A comment inside a body that has code above and below the typing point: the test types the
comment, presses Enter, triggers on the empty line and applies the item. The block lands between
the comment and the code below, that code is there once and unchanged, the file builds (Python's
parser, `tsc`), and the answer is the one the server's conventional request (plain greedy
decoding of the final text) gives.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp

from lsp_server.client import inline_params
from tests.compilers import compile_errors
from tests.lsp_fixtures import (
    CURSOR,
    DATA,
    SERVER,
    Doc,
    PrewriteClient,
    accept,
    finish,
    plain,
    start,
    stats,
    verified,
)

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]

LANGUAGE_IDS = {".ts": "typescript", ".java": "java", ".py": "python"}


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: PrewriteClient, code_model_name: str):
    await start(lsp_client, {"model": code_model_name, "maxTokens": 96, "draftPreview": True})
    yield
    await finish(lsp_client)


def case(folder: str, name: str) -> tuple[Doc, str]:
    """A case's document (cursor where the spec is typed) and what is typed there."""
    document = (DATA / folder / f"{name}.txt").read_text(encoding="utf-8")
    typed = (DATA / folder / f"{name}.typed.txt").read_text(encoding="utf-8")
    doc = Doc(f"file:///workspace/{name}", document.replace(CURSOR, ""))
    doc.cursor = document.index(CURSOR)
    return doc, typed


@pytest.mark.parametrize("name", ["clamp_all.ts", "point_add.ts", "Stats.java"])
async def test_the_accepted_answer_compiles_and_repeats_no_closing_brace(
    client: PrewriteClient, name: str, tmp_path: Path
):
    doc, typed = case("brace", name)
    doc.open(client, LANGUAGE_IDS[Path(name).suffix])
    doc.type(client, typed)
    await verified(client, doc)
    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked=True)
    )
    assert result is not None and result.items, f"{name}: no answer"
    accepted = accept(doc.text, result.items[0])

    code = [line for line in accepted.splitlines() if line.strip()]
    assert len(code) > len([line for line in doc.text.splitlines() if line.strip()]), accepted
    assert accepted.count("{") == accepted.count("}"), f"{name}: unbalanced braces:\n{accepted}"
    source = tmp_path / name
    source.write_text(accepted, encoding="utf-8")
    assert compile_errors(source) == "", f"{name} does not compile:\n{accepted}"


@pytest.mark.parametrize("name", ["recent_rows.py", "summarize.ts"])
async def test_a_comment_in_a_body_gets_the_block_between_it_and_the_code_below(
    client: PrewriteClient, name: str, tmp_path: Path
):
    doc, typed = case("body", name)
    line_start = doc.text.rfind("\n", 0, doc.cursor) + 1
    above, below = doc.text[:line_start], doc.text[doc.text.index("\n", doc.cursor) + 1 :]
    doc.open(client, LANGUAGE_IDS[Path(name).suffix])
    doc.type(client, typed)
    comment_line = typed.split("\n", 1)[0].strip()
    await verified(client, doc)
    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked=True)
    )
    assert result is not None and result.items, f"{name}: no block offered"
    accepted = accept(doc.text, result.items[0])

    assert accepted.startswith(above), accepted
    assert accepted.endswith(below), f"{name}: the code below changed:\n{accepted}"
    lines = accepted[len(above) : len(accepted) - len(below)].split("\n")
    assert lines[0].strip() == comment_line, lines
    written = [line for line in lines[1:] if line.strip()]
    assert written, f"{name}: an empty block:\n{accepted}"
    indent = len(lines[0]) - len(lines[0].lstrip())
    assert all(len(line) - len(line.lstrip()) >= indent for line in written), lines
    first_below = next(line for line in below.split("\n") if line.strip())
    assert accepted.count(f"\n{first_below}\n") == 1, f"{name}: repeats the code below"
    source = tmp_path / name
    source.write_text(accepted, encoding="utf-8")
    assert compile_errors(source) == "", f"{name} does not build:\n{accepted}"
    assert await plain(client, doc) == result.items[0].insert_text, "not plain greedy's answer"


async def test_a_comment_typed_right_above_existing_code_is_drafted_and_exact(
    client: PrewriteClient,
):
    doc, _ = case("body", "recent_rows.py")
    doc.uri = "file:///workspace/recent_rows_above.py"
    doc.open(client)
    doc.type(client, "# drop the rows without an id")
    await verified(client, doc)  # only a spec is drafted: no spec, no verified draft (timeout)
    at_trigger = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked=True)
    )
    offered = at_trigger.items[0].insert_text if at_trigger and at_trigger.items else None
    assert offered == await plain(client, doc)


async def test_a_document_read_before_its_first_edit_is_prefilled_and_answers_exactly(
    client: PrewriteClient,
):
    doc, typed = case("body", "recent_rows.py")
    doc.uri = "file:///workspace/recent_rows_read.py"
    before = await stats(client)
    doc.open(client)
    for _ in range(600):  # the person reads the file: its head is encoded meanwhile
        report = await stats(client)
        if report["prefills"]["processed"] > before["prefills"]["processed"]:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError(f"no prefill processed: {report['prefills']}")
    assert report["forwards"]["prefill"] > before["forwards"].get("prefill", 0)
    drafting = report["forwards"]["drafting"]
    doc.type(client, typed)
    await verified(client, doc)
    result = await client.text_document_inline_completion_async(
        inline_params(doc.uri, doc.position, invoked=True)
    )
    assert result is not None and result.items, "no block offered"
    assert await plain(client, doc) == result.items[0].insert_text, "not plain greedy's answer"
    after = await stats(client)
    assert after["prefills"]["dropped"] == before["prefills"]["dropped"]
    assert after["forwards"]["drafting"] > drafting
