"""A better answer when the greedy one fails its examples: sampled alternatives in spare time.

With `searchOnFailure` on, a verified draft whose docstring examples fail starts a search for
its document: one sampled answer at a time (the worker's lowest priority, `Worker.sample`,
decoded from the document's cached prefix), each run against the same examples in the
sandbox, at most `searchTries`; the first that passes is kept (`Document.alternative`), sent
with the draft's notification, and offered first at the trigger beside the greedy answer,
marked as not the greedy answer. Any other work comes first; the document's next request
stops the search; a trigger never waits for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from inference.api import Completion, Request
from inference.errors import PrewriteError
from inference.examples.sandbox import ExampleRun
from inference.examples.search import SearchPlan, examples_pass
from lsp_server.context import ServerContext, UsesContext
from lsp_server.documents import Alternative, Document
from lsp_server.examples import DraftExamples
from lsp_server.spec import Spec

# An alternative's examples run longer than this only when the sandbox is stuck: give up.
RUN_WAIT_S = 60.0


class Searches(UsesContext):
    """Searches for alternatives to drafts that fail their examples, one per document."""

    def __init__(
        self,
        context: ServerContext,
        examples: Callable[[], DraftExamples],
        found: Callable[[Document], None],
    ):
        super().__init__(context)
        self.examples = examples
        self.found = found  # told when a document's alternative was found
        self.searched = 0  # searches started
        self.alternatives = 0  # of them, found an alternative

    def failed(
        self, doc: Document, source: str, spec: Spec, greedy: Completion, run: ExampleRun
    ) -> None:
        """The verified draft `greedy` for the document's `spec` failed its examples (`run`):
        search, unless switched off or a search for this very answer ran already."""
        if not self.settings().search_on_failure or _searched(doc, spec.request, greedy.text):
            return
        doc.stop_search()
        doc.alternative = None
        self.searched += 1
        doc.search = asyncio.get_running_loop().create_task(
            self._search(doc, source, spec, greedy.text)
        )
        doc.search.add_done_callback(lambda task: self._ended(doc, task))
        doc.search_for = (spec.request, greedy.text)

    def changed(self, doc: Document, request: Request | None) -> None:
        """The document's spec is now `request` (None: no spec there): a search for another
        request stops, and its alternative no longer stands."""
        if doc.search_for is not None and doc.search_for[0] != request:
            self.stop(doc)

    def stop(self, doc: Document) -> None:
        """Stop the document's search and forget its alternative."""
        doc.stop_search()
        doc.search_for = None
        doc.alternative = None
        self.worker().drop_background(doc.uri, "search")
        self.examples().forget_alternatives(doc.uri)

    def stats(self) -> dict[str, object]:
        """For prewrite.stats: searches started and alternatives found, the worker's jobs."""
        jobs = self.worker().background_stats("search")
        return {"started": self.searched, "found": self.alternatives, "samples": jobs}

    async def _search(self, doc: Document, source: str, spec: Spec, greedy: str) -> None:
        plan = SearchPlan(self.settings().search_tries, greedy)
        for seed in plan.seeds():
            try:
                sampled = await self.worker().sample(doc.uri, spec.request, seed)
            except PrewriteError:  # superseded by an edit, or the model failed: stop
                return
            if not plan.is_new(sampled.text):
                continue
            waiting = self.examples().run(doc.uri, source, spec, sampled.text)
            if waiting is None:
                return
            try:
                run = await asyncio.wait_for(waiting, RUN_WAIT_S)
            except (asyncio.CancelledError, TimeoutError):
                if _cancelling():  # the search itself was stopped
                    raise
                return  # the run was dropped (the sandbox failed, or stuck): stop
            if examples_pass(run.passed, run.total):
                doc.alternative = Alternative(
                    spec.request, greedy, sampled, run, seed, plan.drawn
                )
                self.alternatives += 1
                self.found(doc)
                return


    def _ended(self, doc: Document, task: asyncio.Task[None]) -> None:
        if doc.search is task:
            doc.search = None
        if not task.cancelled() and (error := task.exception()) is not None:
            self.notify.report(error)


def _searched(doc: Document, request: Request, greedy: str) -> bool:
    return doc.search_for == (request, greedy)


def _cancelling() -> bool:
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
