"""How many cores other processes leave free: for a forward's thread count, chosen per forward.

On a CPU a llama.cpp forward on all cores is about twice as fast as on one (qwen 0.5B Q4_K_M,
2 cores: a 50-token verify pass 1704 -> 841 ms, one token 88 -> 58 ms), but a thread that waits
for a core another process holds stalls the whole forward (10-20x slower). So the thread count
follows the load: the cores' busy time from /proc/stat minus this process's own, over the last
fraction of a second. Where /proc is not there, it is all cores but one.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

_WINDOW_S = 0.1  # a sample older than this is taken again
_SPARE = 0.25  # a core counts as free when others use less than this share of it
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _read(path: str) -> str:
    return Path(path).read_text(encoding="ascii")


def _allowed_cpus() -> set[int]:
    """The CPUs this process may run on (all of them where the OS does not say)."""
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set()


def usable_cores() -> int:
    """How many cores this process may run on (the CPU count where the OS does not say)."""
    return len(_allowed_cpus()) or os.cpu_count() or 1


class FreeCores:
    """The cores not busy with other processes, sampled at most every 0.1 s."""

    def __init__(
        self,
        cores: int | None = None,
        read: Callable[[str], str] = _read,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.allowed = _allowed_cpus()
        self.cores = cores or usable_cores()
        self._read = read
        self._clock = clock
        self._last: tuple[float, float, float] | None = None  # time, all busy, own busy (s)
        self._free = max(1, self.cores - 1)
        try:
            self._last = self._sample()
        except (OSError, ValueError, IndexError):
            self._last = None  # no /proc: all cores but one, always

    def free(self) -> int:
        """Cores other processes left free lately (at least 1)."""
        if self._last is None:
            return self._free
        now = self._clock()
        if now - self._last[0] < _WINDOW_S:
            return self._free
        try:
            sample = self._sample()
        except (OSError, ValueError, IndexError):
            return self._free
        elapsed = sample[0] - self._last[0]
        others = max(0.0, (sample[1] - self._last[1]) - (sample[2] - self._last[2])) / elapsed
        self._last = sample
        self._free = max(1, self.cores - max(0, math.ceil(others - _SPARE)))
        return self._free

    def _sample(self) -> tuple[float, float, float]:
        """Now, the seconds this process's cores were busy, the seconds this process was."""
        now = self._clock()
        busy = 0
        for line in self._read("/proc/stat").splitlines():
            name, *values = line.split()
            if not name.startswith("cpu") or name == "cpu":
                continue
            if self.allowed and int(name[3:]) not in self.allowed:
                continue
            ticks = [int(v) for v in values]
            idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)  # idle + iowait
            busy += sum(ticks[:8]) - idle  # guest time is already in user time
        own = self._read("/proc/self/stat").rsplit(")", 1)[1].split()
        mine = int(own[11]) + int(own[12])  # utime, stime (fields 14 and 15)
        return now, busy / _CLOCK_TICKS, mine / _CLOCK_TICKS
