"""How many cores a forward may use, by the load of other processes; how the CPU is named."""

from __future__ import annotations

import pytest

from inference.runtimes.cpu_load import FreeCores
from inference.runtimes.machine import amx_state, describe_cpu, llamacpp_features, llamacpp_vector

pytestmark = pytest.mark.timeout(60)

TICKS = 100  # os.sysconf("SC_CLK_TCK") on Linux


class FakeProc:
    """/proc/stat and /proc/self/stat of a 2-core machine, advanced by the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.busy = [0, 0]  # ticks each core was busy
        self.idle = [0, 0]
        self.own = 0  # ticks this process ran

    def advance(self, seconds: float, others: float, own: float = 0.0) -> None:
        """`others` and `own`: cores' worth of busy time over `seconds`."""
        self.now += seconds
        busy = (others + own) * seconds * TICKS
        for core in (0, 1):
            share = busy / 2
            self.busy[core] += round(share)
            self.idle[core] += round(seconds * TICKS - share)
        self.own += round(own * seconds * TICKS)

    def read(self, path: str) -> str:
        if path == "/proc/stat":
            lines = ["cpu 0 0 0 0 0 0 0 0 0 0"]
            for core in (0, 1):
                lines.append(f"cpu{core} {self.busy[core]} 0 0 {self.idle[core]} 0 0 0 0 0 0")
            return "\n".join(lines) + "\nintr 1 2 3\n"
        assert path == "/proc/self/stat"
        fields = ["S", *["0"] * 10, str(self.own), "0", *["0"] * 30]
        return "1234 (python (x)) " + " ".join(fields)


def test_the_free_cores_follow_other_processes_not_our_own() -> None:
    proc = FakeProc()
    free = FreeCores(cores=2, read=proc.read, clock=lambda: proc.now)
    proc.advance(0.2, others=0.05, own=1.9)  # we use both cores, nobody else does
    assert free.free() == 2
    proc.advance(0.2, others=1.0, own=1.0)  # another process holds a core
    assert free.free() == 1
    proc.advance(0.2, others=0.5)  # half a core is still in the way of a thread
    assert free.free() == 1
    proc.advance(0.2, others=2.0)  # both busy: one thread, never none
    assert free.free() == 1
    proc.advance(0.05, others=0.0)  # sampled at most every 0.1 s: the last answer stands
    assert free.free() == 1
    proc.advance(0.2, others=0.1)
    assert free.free() == 2


def test_without_proc_it_is_all_cores_but_one() -> None:
    def missing(path: str) -> str:
        raise OSError(2, "No such file", path)

    assert FreeCores(cores=4, read=missing).free() == 3
    assert FreeCores(cores=1, read=missing).free() == 1


def test_the_cpu_is_described_by_its_model_its_cores_and_vector_instructions():
    cpuinfo = "processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t\t: fpu avx2\n"
    text = describe_cpu("AVX2", read=lambda path: cpuinfo)
    assert text.startswith("AMD EPYC 9B14, ") and text.endswith(" cores, AVX2")

    def missing(path: str) -> str:
        raise OSError(path)

    assert describe_cpu(None, read=missing).startswith("unknown CPU, ")


def test_llamacpps_widest_vector_instructions_are_read_from_its_system_info():
    avx2 = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | OPENMP = 1 | "
    assert llamacpp_vector(avx2) == "AVX2"
    avx512 = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | "
    assert llamacpp_vector(avx512) == "AVX512"
    assert llamacpp_vector("CPU : NEON = 1 | ARM_FMA = 1 | ") == "NEON"
    assert llamacpp_vector("CPU : SSE3 = 1 | ") == "no vector instructions"


def test_llamacpps_amx_kernels_stay_unused_unless_asked_for_where_they_are_built():
    sapphire = "CPU : AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | OPENMP = 1 | REPACK = 1 | "
    assert {"AMX_INT8", "REPACK", "AVX512"} <= llamacpp_features(sapphire)
    assert "AMX_INT8" not in llamacpp_features("CPU : AVX512 = 1 | AMX_INT8 = 0 | ")
    assert amx_state(sapphire, "") == "off"
    assert amx_state(sapphire, "0") == "off"
    assert amx_state(sapphire, "1") == "on"
    assert amx_state("CPU : AVX2 = 1 | REPACK = 1 | ", "1") == "absent"
