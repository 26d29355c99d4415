"""Choosing llama.cpp's numerics: invariant where the build and the environment allow it."""

from __future__ import annotations

import pytest

from inference.errors import ConfigError
from inference.runtimes.llamacpp_numerics import choose_numerics, invariance_blocker

pytestmark = pytest.mark.timeout(60)

BUILT_OUT = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | OPENMP = 1 | REPACK = 1 | "
WITH_SGEMM = "CPU : SSE3 = 1 | AVX2 = 1 | AVX512 = 1 | LLAMAFILE = 1 | OPENMP = 1 | "
TILED_OFF = {"GGML_CPU_TILED_MM": "0"}


def test_invariant_needs_the_cpu_a_build_without_llamafile_and_the_tiled_matmul_off():
    assert invariance_blocker(BUILT_OUT, TILED_OFF, offload=False) == ""
    assert invariance_blocker(BUILT_OUT, {"GGML_CPU_TILED_MM_FORCE": "1"}, offload=False) == ""
    assert "GGML_LLAMAFILE=OFF" in invariance_blocker(WITH_SGEMM, TILED_OFF, offload=False)
    assert "GGML_CPU_TILED_MM" in invariance_blocker(BUILT_OUT, {}, offload=False)
    assert "GPU" in invariance_blocker(BUILT_OUT, TILED_OFF, offload=True)


def test_auto_falls_back_to_fast_saying_why_and_invariant_is_refused_where_it_cannot_be_had():
    assert choose_numerics("auto", BUILT_OUT, TILED_OFF, offload=False).kind == "invariant"
    fallback = choose_numerics("auto", WITH_SGEMM, TILED_OFF, offload=False)
    assert fallback.kind == "fast" and "llamafile" in fallback.reason
    assert choose_numerics("fast", BUILT_OUT, TILED_OFF, offload=False).reason == ""
    lossy = choose_numerics("auto", BUILT_OUT, TILED_OFF, offload=False, acceptance="threshold")
    assert lossy.kind == "fast" and "not exact" in lossy.reason  # nothing to keep exact
    asked = choose_numerics("invariant", BUILT_OUT, TILED_OFF, offload=False, acceptance="sample")
    assert asked.invariant
    with pytest.raises(ConfigError, match="numerics 'invariant' is not available: .*llamafile"):
        choose_numerics("invariant", WITH_SGEMM, TILED_OFF, offload=False)
