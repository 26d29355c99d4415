"""Brace languages end to end on a real code model: the accepted file compiles.

The editor has closed the function's `{` already (VS Code and most Neovim setups auto-close),
so the model's answer, which ends with the function's `}`, must not repeat it. Each case types
a spec key by key into the real server (qwen2.5-coder-0.5b on llama.cpp), triggers at the end
of it, applies the inline item (its range and text) as an editor would, and hands the file to
the language's own compiler: TypeScript's `tsc` (from the VS Code extension's node_modules,
which `make test` installs) and `javac`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types

from lsp_server.client import inline_params
from tests.lsp_fixtures import CURSOR, DATA, SERVER, Doc, PrewriteClient, finish, start, verified

pytestmark = [
    pytest.mark.real_model,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.timeout(300),
]

ROOT = Path(__file__).resolve().parents[1]
CASES = DATA / "brace"
TSC = ROOT / "editor-clients" / "vscode" / "node_modules" / "typescript" / "bin" / "tsc"
LANGUAGE_IDS = {".ts": "typescript", ".java": "java"}


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: PrewriteClient, code_model_name: str):
    await start(lsp_client, {"model": code_model_name, "maxTokens": 96, "draftPreview": True})
    yield
    await finish(lsp_client)


def tool(path: Path | None, what: str) -> str:
    """A compiler's path; missing is a failure in CI (make test installs it), else a skip."""
    if path is not None and path.exists():
        return str(path)
    message = f"{what} is not installed (make test installs it)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def compile_errors(source: Path) -> str:
    """The compiler's complaints about `source` ('' when it compiles)."""
    if source.suffix == ".ts":
        command = ["node", tool(TSC, "typescript"), "--noEmit", "--target", "es2020", str(source)]
    else:
        javac = shutil.which("javac")
        compiler = tool(Path(javac) if javac else None, "javac")
        command = [compiler, "-d", str(source.parent), str(source)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    return "" if done.returncode == 0 else (done.stdout + done.stderr).strip()


def offset_of(text: str, position: types.Position) -> int:
    """The offset of an LSP position (UTF-16 columns)."""
    start = 0
    for _ in range(position.line):
        start = text.index("\n", start) + 1
    line = text[start:].split("\n", 1)[0].encode("utf-16-le")
    return start + len(line[: position.character * 2].decode("utf-16-le"))


def accept(text: str, item: types.InlineCompletionItem) -> str:
    """The document after the editor applies the item."""
    assert item.range is not None
    insert = item.insert_text if isinstance(item.insert_text, str) else item.insert_text.value
    start, end = offset_of(text, item.range.start), offset_of(text, item.range.end)
    return text[:start] + insert + text[end:]


def case(name: str) -> tuple[Doc, str]:
    """A case's document (cursor where the spec is typed) and what is typed there."""
    document = (CASES / f"{name}.txt").read_text(encoding="utf-8")
    typed = (CASES / f"{name}.typed.txt").read_text(encoding="utf-8")
    doc = Doc(f"file:///workspace/{name}", document.replace(CURSOR, ""))
    doc.cursor = document.index(CURSOR)
    return doc, typed


@pytest.mark.parametrize("name", ["clamp_all.ts", "point_add.ts", "Stats.java"])
async def test_the_accepted_answer_compiles_and_repeats_no_closing_brace(
    client: PrewriteClient, name: str, tmp_path: Path
):
    doc, typed = case(name)
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
