"""What the worker needs of an engine: `inference.engine.Engine`, or a test's stand-in."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from inference.api import CacheUse, Completion, Request, Rewrite, Update

if TYPE_CHECKING:
    from inference.api import RuntimeInfo


class DraftEngine(Protocol):
    """Sessions that draft, answers at trigger, plain decoding, and figures for prewrite.stats.

    Model work comes from the worker's thread only; `supersede` may come from any thread.
    """

    @property
    def batch_limit(self) -> int:
        """How many sessions `update_many` serves in one forward per step (1: no batching)."""
        ...

    def open(self, session_id: str) -> None:
        """Start a session (re-opening one resets it)."""

    def close(self, session_id: str) -> None:
        """Forget a session and free its cache."""

    def supersede(self, session_id: str, version: int, soft: bool = False) -> None:
        """Work on older versions of the session stops at its next forward (`soft`: after its
        `min_forwards`)."""

    def update(
        self, session_id: str, request: Request, version: int = 0, min_forwards: int = 0
    ) -> Completion:
        """Bring the session's draft up to `request`."""
        ...

    def update_many(
        self,
        updates: Sequence[Update],
        on_done: Callable[[int, Completion | Exception], None] | None = None,
        admit: Callable[[], Sequence[Update]] | None = None,
    ) -> list[Completion | Exception]:
        """Several sessions' updates together; `admit()` gives more before every step."""
        ...

    def finalize(self, session_id: str, request: Request, version: int = 0) -> Completion:
        """Finish the answer for exactly `request` now."""
        ...

    def prefill(
        self, session_id: str, request: Request, stopped_by: tuple[str, int] | None = None
    ) -> int:
        """Encode `request`'s prompt into a session that has not drafted yet."""
        ...

    def rewrite(
        self,
        session_id: str,
        request: Request,
        body: str,
        version: int = 0,
        before: Request | None = None,
    ) -> Rewrite:
        """The body a function's changed spec (`request`; `before`: as it was) asks for, from
        the person's `body`."""
        ...

    def generate(self, request: Request, *, cached_by: str | None = None) -> Completion:
        """Plain decoding with no draft (from the prefix session `cached_by` has cached)."""
        ...

    def sample(
        self,
        request: Request,
        seed: int,
        temperature: float | None = None,
        cached_by: str | None = None,
        stopped_by: tuple[str, int] | None = None,
    ) -> Completion:
        """One answer sampled with `seed`; a `supersede` of `stopped_by`'s session newer than
        its version stops it."""
        ...

    def is_verified(self, session_id: str, request: Request) -> bool:
        """True when the session's draft is a finished answer for exactly `request`."""
        ...

    def draft_of(self, session_id: str, request: Request) -> Completion:
        """The session's current draft as an answer to `request`, with no model work."""
        ...

    def runtime_info(self) -> RuntimeInfo:
        """What runs the model (kind, device, threads)."""
        ...

    def cache_use(self) -> CacheUse:
        """The sessions' caches: bytes held, the budget, evictions so far."""
        ...

    def forwards(self) -> dict[str, int]:
        """Model forwards so far by phase."""
        ...
