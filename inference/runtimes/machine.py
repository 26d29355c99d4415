"""The CPU a runtime runs on, for results files: figures from two machines compare only so.

Two machines of the same kind here differed in what a forward costs (a 400-token prompt on
two threads: about 12 s where the CPU had AVX2 only), so every result names its CPU.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inference.runtimes.cpu_load import usable_cores


def _read(path: str) -> str:
    return Path(path).read_text(encoding="utf-8", errors="replace")


def describe_cpu(vector: str | None, read: Callable[[str], str] = _read) -> str:
    """'<model>, <n> cores, <vector>': the model from /proc/cpuinfo where there is one.

    `vector` is the widest vector instruction set the runtime uses (None: not known).
    """
    model = "unknown CPU"
    try:
        for line in read("/proc/cpuinfo").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                model = value.strip()
                break
    except OSError:
        pass
    parts = [model, f"{usable_cores()} cores"] + ([vector] if vector else [])
    return ", ".join(parts)


def llamacpp_features(system_info: str) -> set[str]:
    """The CPU features llama.cpp's system info reports on ("AVX2", "AMX_INT8", "REPACK", ...)."""
    # "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | ...": the last word before each "= 1"
    return {
        name.split()[-1]
        for name, _, value in (item.partition("=") for item in system_info.split("|"))
        if name.strip() and value.strip() == "1"
    }


def llamacpp_vector(system_info: str) -> str:
    """The widest of AVX512 / AVX2 / AVX / NEON that llama.cpp's system info reports on."""
    on = llamacpp_features(system_info)
    return next((n for n in ("AVX512", "AVX2", "AVX", "NEON", "SVE") if n in on),
                "no vector instructions")  # fmt: skip


def amx_state(system_info: str, variable: str) -> str:
    """Whether llama.cpp's AMX kernels run: 'on', 'off' (built, kept out of use unless
    `variable` is "1": llamacpp_runtime.py says why) or 'absent' (not built)."""
    if "AMX_INT8" not in llamacpp_features(system_info):
        return "absent"
    return "on" if variable.strip() == "1" else "off"
