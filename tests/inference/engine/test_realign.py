"""Re-verifying a body against a changed spec (realign.py), on tiny random-weight models.

What holds for any model: a spec that did not change keeps every line of the body (the ratio
rule compares the spec with itself); kept lines are the person's bytes; the rewrite is
abandoned when a newer version comes; and the pure parts (where a person's lines resume, when
the model's lines are complete) on their own.
"""

from __future__ import annotations

import pytest

from inference.api import Request
from inference.config import EngineConfig
from inference.engine import Engine
from inference.engine.realign import complete, resume_at
from inference.errors import Superseded
from inference.loading import load_engine

pytestmark = pytest.mark.timeout(120)

SPEC = Request('def scale(values, factor):\n    """Multiply each value by factor."""\n')
CHANGED = Request('def scale(values, factor):\n    """Multiply each by a positive factor."""\n')
BODY = "    out = []\n    for v in values:\n        out.append(v * factor)\n    return out\n"


@pytest.fixture(scope="module", params=["torch", "llamacpp"])
def engine(request, tiny_model_dir, tiny_gguf_dir) -> Engine:
    folder = tiny_model_dir if request.param == "torch" else tiny_gguf_dir
    settings = {"model": str(folder), "runtime": request.param, "threads": 1, "max_tokens": 16}
    if request.param == "torch":
        settings["dtype"] = "float64"
    return load_engine(EngineConfig(**settings))


def test_an_unchanged_spec_keeps_every_line_of_the_body(engine):
    engine.open("r")
    rewrite = engine.rewrite("r", SPEC, BODY, before=SPEC)
    assert rewrite.kept_lines == rewrite.body_lines == 4
    # the person's bytes, and nothing after them: the old spec would add the same
    assert rewrite.text == BODY and rewrite.finish_reason == "stop", rewrite.text
    engine.close("r")


def test_the_old_spec_is_scored_in_a_cache_of_its_own_that_closes_with_the_session(engine):
    engine.open("r")
    engine.rewrite("r", CHANGED, BODY, before=SPEC)
    session = engine._sessions["r"]
    assert session.contrast is not None and session.contrast.ids
    assert session.cache_bytes >= session.kv.sequence.cache_bytes
    engine.close("r")
    assert "r" not in engine._sessions


def test_a_newer_version_stops_the_rewrite(engine):
    engine.open("r")
    engine.supersede("r", 2)
    with pytest.raises(Superseded):
        engine.rewrite("r", CHANGED, BODY, version=1, before=SPEC)
    assert engine.rewrite("r", CHANGED, BODY, version=2, before=SPEC).body_lines == 4
    engine.close("r")


def test_without_the_old_spec_the_threshold_decides(engine):
    engine.open("r")
    engine.config = engine.config.model_copy(update={"respec_threshold": 1e-9})
    assert engine.rewrite("r", CHANGED, BODY).kept_lines == 4  # every token is that likely
    engine.config = engine.config.model_copy(update={"respec_threshold": 1.0})
    assert engine.rewrite("r", CHANGED, BODY).kept_lines == 0  # no token is certain
    engine.close("r")


@pytest.mark.parametrize(
    "written, complete_",
    [
        ("    if size <= 0:\n", False),
        ('    if size <= 0:\n        raise ValueError("size: must be > 0")\n', True),
        ("  if (xs.length === 0) {\n", False),
        ('  if (!xs.length) {\n    throw new RangeError("empty {");\n  }\n', True),
        ("    total = add(a,\n", False),
        ("    x = 1  # note:\n", True),
        ("    f = lambda v: (\n", False),
    ],
)
def test_a_persons_line_may_follow_only_complete_lines_of_the_model(written, complete_):
    assert complete(written) is complete_


@pytest.mark.parametrize(
    "written, at, resumed",
    [
        ("    x = 1", 0, 1),  # restated line 0
        ("    y = 2", 0, 2),  # skipped line 0, restated line 1
        ("    check(z)", 0, 0),  # an insertion
        ("", 1, 1),  # a blank line
        ("    return x", 1, 3),
    ],
)
def test_the_persons_lines_resume_after_the_one_the_model_restated(written, at, resumed):
    texts = ["    x = 1\n", "    y = 2\n", "    return x\n"]
    assert resume_at(texts, at, written) == resumed
