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
        self.unavailable: str | None = None  # why examples are not checked here

    def check(self, uri: str, source: str, spec: Spec, answer: str) -> None:
        """Run the spec's examples against the document with `answer` applied, unless known."""
        found = docstring_examples(source[spec.start : spec.end])
        key: DraftKey = (spec.request, answer)
        if found is None or self.known(uri, key) is not None or self.unavailable:
            return
        edit = answer_edit(source, spec, spec.insert_at, answer)
        if edit is None:
            return
        module = source[: edit.start] + edit.text + source[edit.end :]
        docstring, _ = found
        checker = self._started()
        if checker is not None:
            checker.check(uri, key, module, docstring)
        else:  # the sandbox is being probed: the first draft waits for it
            self._after_probe = (uri, key, module, docstring)

    def known(self, uri: str, key: Hashable) -> ExampleRun | None:
        """The result for this draft of the document, if it has come."""
        doc = self.documents.get(uri)
        kept = doc.examples if doc is not None else None
        return kept[1] if kept is not None and kept[0] == key else None

    def forget(self, uri: str) -> None:
        """The document closed, or has a new draft: its result and runs go."""
        if (doc := self.documents.get(uri)) is not None:
            doc.examples = None
        if self._checker is not None:
            self._checker.forget(uri)

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
        doc = self.documents.get(uri)
        if doc is None:  # closed meanwhile
            return
        doc.examples = (key, run)
        self.arrived(uri)

    def _failed(self, words: str) -> None:
        """From the checker's thread: the sandbox itself failed."""
        self.loop.call_soon_threadsafe(
            self.notify.log_once, types.MessageType.Warning, f"prewrite: {words}"
        )
