"""Answers at the trigger: a trigger whose draft the server replaced waits again, unless stale."""

from __future__ import annotations

import asyncio

import pytest
from pygls.workspace import TextDocument

from inference.api import Completion, Cost
from inference.errors import Superseded
from lsp_server.answers import STALE_RETRIES, Answers
from lsp_server.context import ServerContext

pytestmark = pytest.mark.timeout(60)

URI = "file:///a.py"
ANSWER = Completion("    return 1\n", [1], "stop", Cost())


class ReplacingDrafting:
    """Drafts that the server replaces `replaced` times before one answers."""

    def __init__(self, replaced: int, document: TextDocument, edit_on_replace: bool = False):
        self.replaced, self.document, self.edit_on_replace = replaced, document, edit_on_replace
        self.calls = 0

    def when_drafted(self, uri, document, spec) -> asyncio.Future[Completion]:
        self.calls += 1
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        if self.calls <= self.replaced:
            if self.edit_on_replace:
                self.document.version = (self.document.version or 0) + 1  # the user typed on
            future.set_exception(Superseded("the draft was replaced"))
        else:
            future.set_result(ANSWER)
        return future


def answers_for(drafting: ReplacingDrafting, document: TextDocument) -> Answers:
    def unused():
        raise AssertionError("not used by a trigger that waits for its draft")

    context = ServerContext(
        documents=None, notify=None, settings=unused, worker=unused,  # type: ignore[arg-type]
        document=lambda uri: document, active=lambda: True,
    )  # fmt: skip
    return Answers(context, drafting, trace=None, snippets=lambda: False)  # type: ignore[arg-type]


async def test_a_trigger_whose_draft_was_replaced_while_nothing_changed_waits_again():
    document = TextDocument(URI, "def f():\n    \n", version=7)
    drafting = ReplacingDrafting(replaced=2, document=document)
    answer = await answers_for(drafting, document)._wait(URI, document, None, "automatic")
    assert answer is ANSWER and drafting.calls == 3


async def test_a_trigger_is_stale_once_the_document_changed():
    document = TextDocument(URI, "def f():\n    \n", version=7)
    drafting = ReplacingDrafting(replaced=1, document=document, edit_on_replace=True)
    with pytest.raises(Superseded):
        await answers_for(drafting, document)._wait(URI, document, None, "automatic")
    assert drafting.calls == 1


async def test_a_trigger_stops_waiting_again_after_its_retries():
    document = TextDocument(URI, "def f():\n    \n", version=7)
    drafting = ReplacingDrafting(replaced=STALE_RETRIES + 1, document=document)
    with pytest.raises(Superseded):
        await answers_for(drafting, document)._wait(URI, document, None, "automatic")
    assert drafting.calls == STALE_RETRIES + 1
