"""The memory budget of the sessions' caches: the least recently used give theirs up first.

An evicted session keeps its draft (token ids, a few kilobytes); its cache is rebuilt by the
next forward it asks for, which encodes its tokens again. Caches a runtime allocates up front
(llama.cpp's cells, bounded by its `context_size`) count nothing here.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inference.engine.session import Session

MIB = 1 << 20


def default_budget_mib() -> int:
    """A quarter of the machine's memory."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 << 30
    return max(64, total // 4 // MIB)


class MemoryBudget:
    """Sessions by recent use, and the evictions that keep their caches within `budget_mib`."""

    def __init__(self, budget_mib: int):
        self.budget = budget_mib * MIB
        self.evictions = 0
        self.held = 0  # bytes the caches held after the last fit
        self._recent: OrderedDict[str, None] = OrderedDict()  # least recently used first

    def touch(self, session_id: str) -> None:
        """`session_id` is being used now."""
        self._recent[session_id] = None
        self._recent.move_to_end(session_id)

    def forget(self, session_id: str) -> None:
        """The session was closed."""
        self._recent.pop(session_id, None)

    def fit(self, sessions: Mapping[str, Session], keep: Collection[str] = ()) -> int:
        """Evict caches, least recently used first (never `keep`), until all fit; bytes held."""
        held = {sid: s.cache_bytes for sid, s in sessions.items()}
        total = sum(held.values())
        for sid in list(self._recent):
            if total <= self.budget:
                break
            if sid in keep or not held.get(sid):
                continue
            sessions[sid].evict()
            total -= held[sid]
            self.evictions += 1
        self.held = total
        return total
