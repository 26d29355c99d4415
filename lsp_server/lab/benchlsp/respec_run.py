"""bench-lsp's respec kind: a sentence typed into the docstring of a function that has a body,
and the offer the server makes (respecs.py has the cases).

Each case opens its file, types the sentence key by key in real time, and waits: for the Hint
diagnostic (the offer), or for the server to have nothing left to re-verify. Edit to offer is
the time from the last keystroke to the diagnostic, as the editor sees it (it includes the
server's `respecIdleMs` pause). Then the code action's edit is taken apart: the person's lines
it replaces or deletes (an `adds` offer should replace none), the lines it adds, whether those
raise the error the sentence names, and whether the file parses after it.
"""

from __future__ import annotations

import ast
import asyncio
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from lsprotocol import types

from lsp_server.client import Editor, open_params, position_of, sleep_until
from lsp_server.lab.benchlsp.respecs import RespecCase
from lsp_server.lab.benchlsp.sessions import held_out
from lsp_server.lab.benchlsp.typist import Profile, Typist
from lsp_server.spec import find_respec

OFFER_TIMEOUT_S = 300.0
VARIANTS = ("adds", "holds")


@dataclass
class RespecResult:
    """One case in one variant."""

    name: str
    variant: str  # adds: the body lacks what the sentence asks; holds: it has it
    error: str  # the error the sentence names ('' for a sentence about something else)
    held_out: bool
    keystrokes: int
    typing_s: float
    offered: bool
    offer_ms: float | None  # last keystroke to the offer's diagnostic
    body_lines: int
    lines_touched: int = 0  # the person's lines the offer replaces or deletes
    lines_added: int = 0
    adds_check: bool = False  # the added lines raise `error`
    parses: bool = True  # the file after the offer's edit
    offer: str = ""  # the added text


async def run_respecs(
    editor: Editor, cases: list[RespecCase], cps: float, profile: Profile, seed: int, idle_ms: int
) -> list[RespecResult]:
    """Type each case's sentence in both variants (one where it has no check) into the server."""
    results = []
    for index, case in enumerate(cases):
        for variant in VARIANTS if case.check else ("holds",):
            typist = Typist(cps, seed * 1000 + index, profile)
            result = await _case(editor, index, case, variant, typist, idle_ms)
            results.append(result)
            offer = f"offer in {result.offer_ms:.0f} ms" if result.offered else "no offer"
            print(f"{index:3d} {variant:5} {case.name}: {offer}", file=sys.stderr, flush=True)
    return results


async def _case(editor: Editor, index: int, case: RespecCase, variant: str, typist: Typist,
                idle_ms: int) -> RespecResult:  # fmt: skip
    client = editor.client
    uri = f"file:///prewrite-bench-lsp/respec-{index:03d}-{variant}.py"
    text = case.file(variant)
    typing = typist.insert(text, case.at, case.sentence)
    client.text_document_did_open(open_params(uri, typing.initial, "python"))
    began = time.perf_counter()
    deadline = began
    for number, stroke in enumerate(typing.keystrokes):
        deadline += stroke.delay_s
        await sleep_until(deadline)
        where = position_of(text, stroke.offset)
        change = types.TextDocumentContentChangePartial(range=types.Range(where, where),
                                                        text=stroke.text)  # fmt: skip
        document = types.VersionedTextDocumentIdentifier(uri=uri, version=number + 1)
        client.text_document_did_change(types.DidChangeTextDocumentParams(document, [change]))
        text = text[: stroke.offset] + stroke.text + text[stroke.offset :]
    last_key = time.perf_counter()
    respec = find_respec(text, case.at + len(case.sentence), "python")
    result = RespecResult(
        case.name, variant, case.error, held_out(index), len(typing.keystrokes),
        round(last_key - began, 3), offered=False, offer_ms=None,
        body_lines=respec.body(text).count("\n") if respec else 0,
    )  # fmt: skip
    hint = await _offer(editor, uri, last_key, idle_ms)
    if hint is not None:
        arrived, diagnostic = hint
        result.offered, result.offer_ms = True, round((arrived - last_key) * 1000, 1)
        await _take_apart(editor, uri, text, diagnostic, case, result)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return result


async def _offer(
    editor: Editor, uri: str, last_key: float, idle_ms: int
) -> tuple[float, types.Diagnostic] | None:
    """(when it came, the Hint) once the server offers; None once it has nothing left to do."""
    quiet_after = last_key + idle_ms / 1000 + 0.5
    while time.perf_counter() < last_key + OFFER_TIMEOUT_S:
        arrived, diagnostics = editor.diagnostics.get(uri, (0.0, []))
        hints = [d for d in diagnostics if d.source == "prewrite"]
        if hints:
            return arrived, hints[0]
        if time.perf_counter() > quiet_after:
            counts = (await editor.stats())["respecs"]
            if counts["pending"] == 0:
                await asyncio.sleep(0.2)  # the offer may be on its way
                arrived, diagnostics = editor.diagnostics.get(uri, (0.0, []))
                hints = [d for d in diagnostics if d.source == "prewrite"]
                return (arrived, hints[0]) if hints else None
        await asyncio.sleep(0.05)
    return None


async def _take_apart(editor: Editor, uri: str, text: str, hint: types.Diagnostic,
                      case: RespecCase, result: RespecResult) -> None:  # fmt: skip
    """The offer's code action at the Hint: what its edit touches, adds, and leaves."""
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri),
        range=hint.range,
        context=types.CodeActionContext(diagnostics=[hint]),
    )
    actions = await editor.client.text_document_code_action_async(params) or []
    action = next((a for a in actions if isinstance(a, types.CodeAction) and a.edit), None)
    if action is None or action.edit is None or not action.edit.document_changes:
        return
    change = action.edit.document_changes[0]
    assert isinstance(change, types.TextDocumentEdit)
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    applied = text
    added = []
    for edit in sorted(change.edits, key=lambda e: e.range.start.line, reverse=True):
        assert isinstance(edit, types.TextEdit)
        start, end = starts[edit.range.start.line], starts[edit.range.end.line]
        applied = applied[:start] + edit.new_text + applied[end:]
        result.lines_touched += edit.range.end.line - edit.range.start.line
        result.lines_added += edit.new_text.count("\n")
        added.append(edit.new_text)
    result.offer = "".join(reversed(added))
    result.adds_check = bool(case.error) and f"raise {case.error}" in result.offer
    try:
        ast.parse(applied)
    except SyntaxError:
        result.parses = False


def summarize_respecs(results: list[RespecResult]) -> list[dict[str, Any]]:
    """Per variant and split: offers, edit to offer, what the offers touch."""
    rows = []
    for variant in VARIANTS:
        for split in ("tuned", "held-out", "all"):
            part = [r for r in results if r.variant == variant and
                    (split == "all" or r.held_out == (split == "held-out"))]  # fmt: skip
            if not part:
                continue
            offers = [r for r in part if r.offered]
            times = sorted(r.offer_ms for r in offers if r.offer_ms is not None)
            rows.append({
                "variant": variant, "split": split, "cases": len(part), "offers": len(offers),
                "offer_ms_p50": _quantile(times, 0.5), "offer_ms_p95": _quantile(times, 0.95),
                "limited": sum(r.lines_touched == 0 for r in offers),
                "adds_check": sum(r.adds_check for r in offers),
                "parses": sum(r.parses for r in offers),
                "lines_touched": sum(r.lines_touched for r in offers),
                "body_lines": sum(r.body_lines for r in offers),
            })  # fmt: skip
    return rows


def format_respecs(rows: list[dict[str, Any]]) -> str:
    """The summary as a table."""
    head = ("variant  split     cases offers  offer p50/p95 ms  no person's line touched  "
            "raises the error  parses  lines touched/body")  # fmt: skip
    lines = [head]
    for r in rows:
        times = f"{_ms(r['offer_ms_p50'])}/{_ms(r['offer_ms_p95'])}"
        lines.append(
            f"{r['variant']:8} {r['split']:9} {r['cases']:5} {r['offers']:6}  {times:>16}  "
            f"{r['limited']:>24}  {r['adds_check']:>16}  {r['parses']:>6}  "
            f"{r['lines_touched']}/{r['body_lines']}"
        )
    return "\n".join(lines)


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"
