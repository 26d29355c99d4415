"""Checking drafts against their spec's examples off the event loop, the newest draft first.

One thread runs the sandbox, one run at a time. Each document has at most one job waiting: a
newer draft replaces the waiting one and cancels the one running for the same document, so
the machine never works on a draft the user has already typed past.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from inference.examples.sandbox import (
    ExampleRun,
    RunCancelled,
    Sandbox,
    SandboxFailure,
    count_examples,
)

_QUOTES = re.compile(r"^[rRuU]?('''|\"\"\")")


def docstring_examples(spec_text: str) -> tuple[str, int] | None:
    """(the docstring's text, its number of examples) for a docstring spec with examples."""
    spec_text = spec_text.lstrip()  # a spec may start at its line's indentation
    match = _QUOTES.match(spec_text)
    if match is None:
        return None
    quotes = match.group(1)
    content = spec_text[match.end() :].removesuffix(quotes)
    count = count_examples(content)
    return (content, count) if count else None


@dataclass
class _Job:
    uri: str
    key: Hashable  # what the result is for (the caller's draft)
    module: str
    docstring: str
    cancel: threading.Event = field(default_factory=threading.Event)


Report = Callable[[str, Hashable, ExampleRun], None]


class ExampleChecker:
    """Runs examples in the sandbox; `report(uri, key, run)` is called from its thread, and
    `on_failure(uri, words)` when the sandbox itself failed."""

    def __init__(
        self, sandbox: Sandbox, report: Report, on_failure: Callable[[str, str], None]
    ):
        self.sandbox, self.report, self.on_failure = sandbox, report, on_failure
        self._lock = threading.Condition()
        self._waiting: dict[str, _Job] = {}
        self._running: _Job | None = None
        self._closed = False
        self.runs = 0
        self._thread = threading.Thread(target=self._loop, name="prewrite-examples", daemon=True)
        self._thread.start()

    def check(self, uri: str, key: Hashable, module: str, docstring: str) -> None:
        """Run `docstring`'s examples against `module`; drops older work for the document."""
        with self._lock:
            if self._running is not None and self._running.uri == uri:
                self._running.cancel.set()
            self._waiting.pop(uri, None)
            self._waiting[uri] = _Job(uri, key, module, docstring)
            self._lock.notify()

    def forget(self, uri: str) -> None:
        """The document closed or its spec went: no result is wanted."""
        with self._lock:
            self._waiting.pop(uri, None)
            if self._running is not None and self._running.uri == uri:
                self._running.cancel.set()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._waiting.clear()
            if self._running is not None:
                self._running.cancel.set()
            self._lock.notify()
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._waiting and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
                uri = next(iter(self._waiting))
                job = self._running = self._waiting.pop(uri)
            try:
                run = self.sandbox.run(job.module, job.docstring, _module_name(uri), job.cancel)
            except RunCancelled:
                continue
            except (SandboxFailure, OSError) as exc:
                self.on_failure(job.uri, f"examples could not run: {exc}")
                continue
            finally:
                with self._lock:
                    self._running = None
            self.runs += 1
            if not job.cancel.is_set():
                self.report(job.uri, job.key, run)


def _module_name(uri: str) -> str:
    """A module name for the document (what tracebacks and `__name__` show)."""
    stem = uri.rsplit("/", 1)[-1].split(".", 1)[0]
    return re.sub(r"\W", "_", stem) or "draft"
