"""`adapt build-data`: harvesting, filters, HumanEval exclusion, prefix rows = the bench's units."""

from __future__ import annotations

import gzip
import json
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from inference.api import Request
from inference.config import EngineConfig
from inference.lab.adapt.build import build_dataset
from inference.lab.adapt.dataset import read_manifest, read_rows
from inference.lab.adapt.errors import CorpusError
from inference.lab.adapt.filters import looks_secret
from inference.lab.adapt.settings import BuildSettings
from inference.lab.problems.segment import split_prompt
from inference.lab.problems.suites import humaneval_path
from inference.loading import load_engine
from tests.paths import TEST_DATA
from tests.tiny_models import build_tiny_model

pytestmark = [pytest.mark.usefixtures("one_torch_thread"), pytest.mark.timeout(60)]

DATA = TEST_DATA / "adapt"
CLAMP_PROMPT = (
    "def clamp(value, low, high):\n"
    '    """Limit value to the closed interval [low, high].\n'
    "\n"
    "    Values below low become low. Values above high become high.\n"
    '    """\n'
)


def copy_corpus(folder: Path) -> Path:
    """The fixture corpus as .py files, plus a verbatim HumanEval/0 and HumanEval/2's body."""
    for source in (DATA / "corpus").rglob("*.py.txt"):
        target = folder / source.relative_to(DATA / "corpus").with_suffix("")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
    with gzip.open(humaneval_path(), "rt", encoding="utf-8") as lines:
        problems = {row["task_id"]: row for row in map(json.loads, lines)}
    zero, two = problems["HumanEval/0"], problems["HumanEval/2"]
    renamed = (
        "def fractional_part(number: float) -> float:\n"
        '    """Keep what follows the decimal point. The whole part is dropped."""\n'
        f"{two['canonical_solution']}"
    )
    (folder / "planted.py").write_text(
        f"{zero['prompt']}{zero['canonical_solution']}\n\n{renamed}", encoding="utf-8"
    )
    (folder / "latin1.py").write_bytes(b'def f():\n    """Caf\xe9 au lait."""\n    return 1\n')
    return folder


def build(folder: Path, out: Path, **overrides) -> dict:
    settings = {"out": out, "sources": [str(folder)], "target": "reference", "progress": False}
    return build_dataset(BuildSettings(**{**settings, **overrides}))


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_corpus(tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def built(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data")
    build(corpus, out, exclude=[str(DATA / "exclude.jsonl")])
    return out


def all_rows(folder: Path) -> list[dict]:
    return read_rows(folder, "train") + read_rows(folder, "validation")


def test_humaneval_and_excluded_suites_are_removed_and_counted(built: Path) -> None:
    manifest = read_manifest(built)
    humaneval, local = manifest["exclusions"]
    assert humaneval["suite"] == "humaneval" and humaneval["problems"] == 164
    assert humaneval["removed"] == {"name+docstring": 1, "body": 1}  # verbatim, renamed copy
    assert local["removed"] == {"name+docstring": 1}
    origins = {row["origin"].split(":")[1] for row in all_rows(built)}
    names = {row["prompt"].split("(")[0] for row in all_rows(built)}
    assert "planted.py" not in origins
    assert {"def has_close_elements", "def fractional_part", "def shout"}.isdisjoint(names)


def test_filters_dedup_and_bad_files_are_counted(built: Path) -> None:
    counts = read_manifest(built)["counts"]
    assert counts["files skipped: tests"] == 1
    assert counts["files skipped: unparsable"] == 1
    assert counts["files skipped: unreadable"] == 1  # not UTF-8 and no encoding declaration
    assert counts["functions skipped: duplicate"] == 1  # limit() is clamp() re-laid-out
    assert counts["functions skipped: looks like it holds a secret"] == 1
    assert counts["functions skipped: a single unit (nothing to stream)"] == 1  # square
    kept = {row["prompt"].split("(")[0].removeprefix("def ") for row in all_rows(built)}
    assert kept == {"circle_area", "midpoint", "clamp", "__init__", "perimeter", "count_words"}
    assert counts["functions"] == 6 and counts["validation_functions"] == 1


def test_prefix_rows_are_the_bench_units_and_prompts(built: Path) -> None:
    functions = defaultdict(list)
    for row in all_rows(built):
        functions[row["function"]].append(row)
    for rows in functions.values():
        rows.sort(key=lambda row: row["typed"])
        spec = split_prompt(rows[-1]["prompt"])
        assert [row["prompt"] for row in rows] == spec.prompts()
        assert [row["typed"] for row in rows] == list(range(1, len(spec.units) + 1))
        assert len({row["answer"] for row in rows}) == 1  # every prefix, the same target
    clamp = next(rows for rows in functions.values() if rows[0]["prompt"].startswith("def clamp"))
    assert [row["prompt"] for row in clamp] == split_prompt(CLAMP_PROMPT).prompts()
    assert clamp[0]["answer"] == "    return max(low, min(high, value))\n"


def test_the_build_is_deterministic(corpus: Path, built: Path, tmp_path: Path) -> None:
    build(corpus, tmp_path, exclude=[str(DATA / "exclude.jsonl")])
    for name in ("train.jsonl", "validation.jsonl"):
        assert (tmp_path / name).read_bytes() == (built / name).read_bytes()


def test_self_targets_are_the_engines_greedy_answers(corpus: Path, tmp_path: Path) -> None:
    # Seed 1: the tiny model starts some answers indented; seed 0 dedents at once (empty body)
    model = build_tiny_model(tmp_path / "model", seed=1)
    engine_settings = {"model": str(model), "dtype": "float64", "max_tokens": 6}
    manifest = build(corpus, tmp_path / "data", target="self", engine=engine_settings)
    assert manifest["model"] == str(model) and manifest["prompt_format"] == "raw"
    assert manifest["tokenizer"] and manifest["max_tokens"] == 6
    counts = manifest["counts"]
    answered = counts["functions"] - counts["functions skipped: empty answer"]
    assert answered >= 1 and counts["answers cut at the token budget (kept)"] == answered
    engine = load_engine(EngineConfig(**engine_settings))
    rows = all_rows(tmp_path / "data")
    assert len({row["function"] for row in rows}) == answered
    complete = {row["function"]: row["prompt"] for row in rows if row["typed"] == row["units"]}
    for row in rows:  # every prefix is trained towards the answer to the complete docstring
        greedy = engine.generate(Request(complete[row["function"]]))
        assert row["answer_ids"] == greedy.token_ids and greedy.text.strip()


def test_an_empty_corpus_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match="no usable function .*no Python files found"):
        build(tmp_path, tmp_path / "out")
    (tmp_path / "broken.py").write_text("def f(:\n", encoding="utf-8")
    with pytest.raises(CorpusError, match="files skipped: unparsable: 1"):
        build(tmp_path, tmp_path / "out")


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('API_KEY = "a8f5f167f44f4964e6c998dee827110c"', True),
        ("token: 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA'", True),
        ("-----BEGIN RSA PRIVATE KEY-----", True),
        ("x = 'aB3dE5fG7hJ9kL1mN3pQ5rS7tU9v'", True),
        ("password = getpass()", False),
        ("see https://docs.python.org/3/library/secrets.html", False),
        ("return self._token_count + 1", False),
    ],
)
def test_secret_scan(text: str, secret: bool) -> None:
    assert looks_secret(text) is secret
