"""A verified draft meets its spec's examples: the module as it would be, run in the sandbox.

Each verified draft of a docstring with `>>>` examples is applied to the document as the
trigger would apply it (imports and neighbours included), and the examples run against that
module in the sandbox, off the event loop. The result is kept with the draft it is for (the
request and the answer's text) and goes out with the draft's notification and the trigger's
trace. Where the sandbox does not work, the feature is off and the status says why, once.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Hashable

from lsprotocol import types

from inference.api import Request
from inference.examples.checker import ExampleChecker, docstring_examples
from inference.examples.sandbox import ExampleRun, Sandbox
from lsp_server.documents import Documents
from lsp_server.notify import Notifier
from lsp_server.spec import Spec, answer_edit

DraftKey = tuple[Request, str]  # the request and the answer text a result is for


class DraftExamples:
    """Checks verified drafts against their examples; `arrived(uri)` says a result came."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        documents: Documents,
        notify: Notifier,
        arrived: Callable[[str], None],
        unavailable: Callable[[str], None],
    ):
        self.loop, self.documents, self.notify, self.arrived = loop, documents, notify, arrived
        self.on_unavailable = unavailable  # told once why, when the sandbox does not work
        self._checker: ExampleChecker | None = None
        self._probing: threading.Thread | None = None
        self._after_probe: tuple[str, Hashable, str, str] | None = None
        self._awaited: dict[str, tuple[Hashable, asyncio.Future[ExampleRun]]] = {}  # by `run`
        self.unavailable: str | None = None  # why examples are not checked here

    def check(self, uri: str, source: str, spec: Spec, answer: str) -> None:
        """Run the spec's examples against the document with `answer` applied, unless known."""
        key: DraftKey = (spec.request, answer)
        if self.known(uri, key) is not None or self.unavailable:
            return
        prepared = _applied(source, spec, answer)
        if prepared is None:
            return
        module, docstring = prepared
        checker = self._started()
        if checker is not None:
            checker.check(uri, key, module, docstring)
        else:  # the sandbox is being probed: the first draft waits for it
            self._after_probe = (uri, key, module, docstring)

    def run(
        self, uri: str, source: str, spec: Spec, answer: str
    ) -> asyncio.Future[ExampleRun] | None:
        """The spec's examples against the document with another `answer` applied (a sampled
        alternative), apart from the drafts' runs: a future, cancelled by the document's next
        `run` or `forget`. None where they cannot run (no sandbox, no examples)."""
        prepared = _applied(source, spec, answer)
        if prepared is None or self._checker is None:
            return None
        module, docstring = prepared
        slot = _alternatives(uri)
        self._cancel_awaited(slot)
        future: asyncio.Future[ExampleRun] = self.loop.create_future()
        key = (spec.request, answer)
        self._awaited[slot] = (key, future)
        self._checker.check(slot, key, module, docstring)
        return future

    def known(self, uri: str, key: Hashable) -> ExampleRun | None:
        """The result for this draft of the document, if it has come."""
        doc = self.documents.get(uri)
        kept = doc.examples if doc is not None else None
        return kept[1] if kept is not None and kept[0] == key else None

    def forget(self, uri: str) -> None:
        """The document closed, or has a new draft: its result and runs go."""
        if (doc := self.documents.get(uri)) is not None:
            doc.examples = None
        self.forget_alternatives(uri)
        if self._checker is not None:
            self._checker.forget(uri)

    def forget_alternatives(self, uri: str) -> None:
        """No result of `run` is wanted for the document any more."""
        self._cancel_awaited(_alternatives(uri))
        if self._checker is not None:
            self._checker.forget(_alternatives(uri))

    def _cancel_awaited(self, slot: str) -> None:
        awaited = self._awaited.pop(slot, None)
        if awaited is not None:
            awaited[1].cancel()

    def close(self) -> None:
        if self._checker is not None:
            self._checker.close()

    # -- the sandbox, probed once in the background ---------------------------------------------

    def probe(self) -> None:
        """Find out in the background whether the sandbox works here (once)."""
        if self._checker is None and self._probing is None and self.unavailable is None:
            self._probing = threading.Thread(target=self._probe, daemon=True)
            self._probing.start()

    def stats(self) -> dict[str, object]:
        """For prewrite.stats: whether examples run here, why not, how many runs."""
        runs = self._checker.runs if self._checker is not None else 0
        return {"checked": self._checker is not None, "unavailable": self.unavailable,
                "runs": runs}  # fmt: skip

    def _started(self) -> ExampleChecker | None:
        self.probe()
        return self._checker

    def _probe(self) -> None:
        sandbox, why = Sandbox.probe()
        self.loop.call_soon_threadsafe(self._probed, sandbox, why)

    def _probed(self, sandbox: Sandbox | None, why: str) -> None:
        if sandbox is None:
            self.unavailable = why
            self.notify.log_once(types.MessageType.Info, f"prewrite: examples not checked: {why}")
            self.on_unavailable(why)
            return
        self._checker = ExampleChecker(sandbox, self._report, self._failed)
        if self._after_probe is not None:
            self._checker.check(*self._after_probe)
            self._after_probe = None

    def _report(self, uri: str, key: Hashable, run: ExampleRun) -> None:
        """From the checker's thread."""
        self.loop.call_soon_threadsafe(self._store, uri, key, run)

    def _store(self, uri: str, key: Hashable, run: ExampleRun) -> None:
        awaited = self._awaited.get(uri)
        if awaited is not None and awaited[0] == key:
            del self._awaited[uri]
            if not awaited[1].done():
                awaited[1].set_result(run)
            return
        doc = self.documents.get(uri)
        if doc is None:  # closed meanwhile
            return
        doc.examples = (key, run)
        self.arrived(uri)

    def _failed(self, uri: str, words: str) -> None:
        """From the checker's thread: the sandbox itself failed."""
        self.loop.call_soon_threadsafe(self._sandbox_failed, uri, words)

    def _sandbox_failed(self, uri: str, words: str) -> None:
        self._cancel_awaited(uri)  # an alternative's run: its search stops
        self.notify.log_once(types.MessageType.Warning, f"prewrite: {words}")


def _alternatives(uri: str) -> str:
    """The checker's slot for a document's alternatives (apart from its drafts')."""
    return f"{uri}\x00alternatives"


def _applied(source: str, spec: Spec, answer: str) -> tuple[str, str] | None:
    """(the module with `answer` applied at the spec, the docstring) when the spec is a
    docstring with examples and the answer applies."""
    found = docstring_examples(source[spec.start : spec.end])
    edit = answer_edit(source, spec, spec.insert_at, answer) if found is not None else None
    if found is None or edit is None:
        return None
    return source[: edit.start] + edit.text + source[edit.end :], found[0]
