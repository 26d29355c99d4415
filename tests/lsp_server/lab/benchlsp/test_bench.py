"""`prewrite bench-lsp`: sessions, the typist's keystrokes, and a run against the real server."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_server.errors import ServerError
from lsp_server.lab.benchlsp.report import format_parts, format_table, summarize
from lsp_server.lab.benchlsp.respecs import respec_cases
from lsp_server.lab.benchlsp.run import SessionResult
from lsp_server.lab.benchlsp.sessions import (
    default_sessions,
    held_out,
    read_sessions,
    write_sessions,
)
from lsp_server.lab.benchlsp.typist import QUOTES, Typist
from lsp_server.spec import find_respec, find_spec

pytestmark = pytest.mark.timeout(600)


def test_default_sessions_are_real_files_with_a_function_to_spec():
    sessions = default_sessions(40)
    assert len(sessions) == 40 and len({s.name for s in sessions}) == 40
    sources = {"own/", "more-itertools/", "HumanEval/", "own-ts/"}
    assert {source for source in sources for s in sessions if s.name.startswith(source)} == sources
    held = [s for i, s in enumerate(sessions) if held_out(i)]
    assert len(held) == 10  # every source is in the split never tuned on, too
    assert {source for source in sources for s in held if s.name.startswith(source)} == sources
    for session in sessions:
        header = session.above.rstrip().rsplit("\n", 1)[-1]
        assert session.docstring.strip(), session.name
        if session.language == "python":
            assert header.lstrip().startswith("def ") and header.endswith(":"), session.name
            assert session.indent == "    "
            assert "def " in session.below  # code below the function, too
        else:
            assert session.language == "typescript" and header.endswith("{"), session.name
            assert session.indent == "  " and session.below.startswith("\n}\n")
            assert "function " in session.below


def test_library_sessions_take_the_installed_more_itertools_functions_with_neighbours():
    import more_itertools

    library = [s for s in default_sessions(40) if s.name.startswith("more-itertools/")]
    assert len(library) >= 10
    for session in library:
        function = getattr(more_itertools, session.name.split("/")[1])
        first_paragraph = (function.__doc__ or "").strip().split("\n\n")[0]
        assert " ".join(session.docstring.split()) == " ".join(first_paragraph.split())
        assert "import " in session.above and session.above.count("\ndef ") >= 1


@pytest.mark.parametrize("autoclose", [False, True])
def test_a_brace_language_spec_is_typed_as_comment_lines_inside_the_closed_body(autoclose):
    session = next(s for s in default_sessions(40) if s.language == "typescript")
    assert "\n" in session.docstring  # a two-line comment
    typing = Typist(12, seed=1).type(session, autoclose=autoclose)
    text = typing.initial
    for stroke in typing.keystrokes:
        text = text[: stroke.offset] + stroke.text + text[stroke.offset :]
    comment = "\n  ".join(f"// {line}" for line in session.docstring.split("\n"))
    assert text == typing.final == session.above + comment + "\n  " + session.below
    assert typing.final[typing.body_offset :].startswith("\n}\n")  # the body's first line
    # one keystroke before the spec's end: its last character not yet typed
    assert typing.warm == session.above + comment[:-1] + session.below
    assert typing.warm_cursor == len(session.above + comment) - 1
    spec = find_spec(typing.final, typing.body_offset, "brace")
    assert spec is not None and session.docstring.split("\n")[0] in spec.request.text


def test_comment_sessions_retype_real_comments_in_bodies_above_their_removed_block():
    sessions = default_sessions(40, kind="comment")
    assert len(sessions) == 40 and len({s.name for s in sessions}) == 40
    assert {s.name.split("/")[0] for s in sessions} == {"more-itertools", "stdlib"}
    assert {s.name.split("/")[0] for i, s in enumerate(sessions) if held_out(i)} == {
        "more-itertools", "stdlib"
    }
    for index, session in enumerate(sessions):
        assert session.kind == "comment" and len(session.docstring.split()) >= 3, session.name
        typing = Typist(6, seed=index, profile="steady").type(session, autoclose=False)
        comment = f"\n{session.indent}".join(f"# {line}" for line in session.docstring.split("\n"))
        assert typing.final == session.above + comment + "\n" + session.indent + session.below
        for text, cursor in ((typing.final, typing.body_offset), (typing.warm, typing.warm_cursor)):
            spec = find_spec(text, cursor, "python")
            assert spec is not None and spec.kind == "block", session.name
            assert spec.request.block_indent == len(session.indent)
            assert session.below.strip().startswith(spec.request.suffix.strip()[:40])


@pytest.mark.parametrize("autoclose", [False, True])
def test_the_keystrokes_write_the_docstring_and_open_the_body(autoclose):
    session = default_sessions(1)[0]
    typing = Typist(12, seed=1).type(session, autoclose=autoclose)
    text = typing.initial
    for stroke in typing.keystrokes:
        text = text[: stroke.offset] + stroke.text + text[stroke.offset :]
    assert text == typing.final
    # auto-closed quotes stay where the editor put them, right after the opening ones
    closing = QUOTES if autoclose else f"\n    {QUOTES}"
    docstring = f"{QUOTES}{session.docstring}{closing}\n    "
    assert typing.final == session.above + docstring + session.below
    assert typing.final[: typing.body_offset].endswith(docstring)
    if autoclose:  # the editor closed the quotes when the third was typed
        assert typing.keystrokes[2].text == '"' + QUOTES
    spec = find_spec(typing.final, typing.body_offset, "python")
    assert spec is not None and session.docstring.split("\n")[0] in spec.request.text


def test_typing_is_paced_like_a_person():
    session = default_sessions(1)[0]
    fast = Typist(12, seed=3).type(session, autoclose=False)
    slow = Typist(6, seed=3).type(session, autoclose=False)
    delays = [k.delay_s for k in fast.keystrokes]
    assert 1.5 < slow.typing_s / fast.typing_s < 2.5  # half the speed, the pauses alike
    assert statistics.median(delays) < 1 / 12 * 1.5 < max(delays)  # jitter, longer pauses
    again = Typist(12, seed=3).type(session, autoclose=False)
    assert [k.delay_s for k in again.keystrokes] == delays  # reproducible for a seed


def test_the_steady_typist_pauses_nowhere_longer_than_its_jitter():
    session = default_sessions(1)[0]
    thinking = Typist(6, seed=3, profile="thinking").type(session, autoclose=False)
    steady = Typist(6, seed=3, profile="steady").type(session, autoclose=False)
    delays = [k.delay_s for k in steady.keystrokes]
    # log-normal jitter (sigma 0.35) alone: no keystroke waits 4x the mean, and the mean is 1/cps
    assert max(delays) < 4 / 6 < max(k.delay_s for k in thinking.keystrokes)
    assert 0.8 / 6 < statistics.mean(delays) < 1.2 / 6
    assert steady.typing_s < thinking.typing_s and steady.final == thinking.final


def test_sessions_round_trip_through_jsonl_and_bad_files_are_clear(tmp_path: Path):
    path = tmp_path / "sessions.jsonl"
    write_sessions(default_sessions(4), path)
    assert read_sessions(path) == default_sessions(4)
    assert read_sessions(path)[3].language == "typescript"
    (tmp_path / "old.jsonl").write_text(
        '{"name": "x", "above": "a", "docstring": "d", "below": ""}'
    )
    assert read_sessions(tmp_path / "old.jsonl")[0].language == "python"  # the default
    (tmp_path / "go.jsonl").write_text(
        '{"name": "x", "above": "a", "docstring": "d", "below": "", "language": "cobol"}'
    )
    with pytest.raises(ServerError, match="go.jsonl:1: language 'cobol' is not one of python"):
        read_sessions(tmp_path / "go.jsonl")
    (tmp_path / "bad.jsonl").write_text('{"name": "x", "above": "def f():\\n    "}\n')
    with pytest.raises(ServerError, match="bad.jsonl:1: a session needs string fields"):
        read_sessions(tmp_path / "bad.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ServerError, match="holds no session"):
        read_sessions(tmp_path / "empty.jsonl")


def test_the_engine_busy_share_is_over_each_typists_window_or_the_shared_one():
    def result(typists: int, busy_s: float, window_s: float) -> SessionResult:
        return SessionResult(
            name="s", cps=12, pause_ms=1000, typists=typists, autoclose=False, keystrokes=1,
            typing_s=1.0, trigger_ms=1.0, answer="", residual_forwards=0, from_draft=True,
            drafting_forwards=None, conventional_ms=1.0, conventional_answer="", identical=True,
            engine_busy_s=busy_s, window_s=window_s,
        )  # fmt: skip

    alone = [result(1, 1.0, 4.0), result(1, 3.0, 4.0)]
    together = [result(4, 6.0, 8.0)] * 4  # four typists, one window over all of them
    unmeasured = [result(8, 0.0, 0.0)]
    rows = summarize([*alone, *together, *unmeasured])
    assert [row["engine_busy_share"] for row in rows] == [0.5, 0.75, None]
    table = format_table(rows, "torch")
    assert table.splitlines()[3].endswith("| 50% |") and table.splitlines()[-1].endswith("| - |")


def test_each_configuration_is_also_reported_by_split_and_answer_length():
    def result(index: int, tokens: int, forwards: int) -> SessionResult:
        return SessionResult(
            name=f"s{index}", cps=6, pause_ms=1000, typists=1, autoclose=False, keystrokes=1,
            typing_s=1.0, trigger_ms=1.0 + forwards, answer="", residual_forwards=forwards,
            from_draft=forwards == 0, drafting_forwards=1, conventional_ms=1.0,
            conventional_answer="", identical=True, profile="steady", answer_tokens=tokens,
            held_out=held_out(index),
        )  # fmt: skip

    results = [result(0, 30, 0), result(1, 80, 2), result(2, 150, 0), result(3, 40, 4)]
    parts = summarize(results)[0]["parts"]
    assert [held_out(i) for i in range(8)] == [False, False, False, True] * 2
    assert parts["held-out"]["sessions"] == 1 and parts["held-out"]["forwards_left_mean"] == 4
    assert parts["tuned"]["sessions"] == 3 and parts["tuned"]["zero_forward_rate"] == 2 / 3
    assert [parts[n]["sessions"] for n in ("short", "medium", "long")] == [2, 1, 1]
    table = format_parts(summarize(results))
    assert "| steady | 6 | 1000 ms | 1 | held-out | 1 | 5 / 5 | 0% | 100% | 4.0 | 40 |" in table


@pytest.mark.real_model
def test_bench_lsp_times_typed_sessions_against_both_conventional_requests(
    real_model_name: str, tmp_path: Path
):
    sessions = tmp_path / "sessions.jsonl"
    by_length = sorted(default_sessions(6), key=lambda s: len(s.docstring))
    short = [next(s for s in by_length if s.language == lang) for lang in ("python", "typescript")]
    write_sessions(short, sessions)
    command = [
        sys.executable, "-m", "lsp_server.cli", "bench-lsp", "--model", real_model_name,
        "--prompt-format", "chat", "--max-tokens", "24", "--sessions-file", str(sessions),
        "--cps", "60", "--pause-ms", "300", "--typists", "1,2", "--typist", "thinking",
        "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "streaming p50 / p90 / p95" in done.stdout
    assert "by split (every 4th session held out) and answer length" in done.stdout
    data = json.loads((tmp_path / "out" / "bench-lsp.json").read_text())
    assert [(s["profile"], s["cps"], s["pause_ms"], s["typists"]) for s in data["summary"]] == [
        ("thinking", 60.0, 300, 1), ("thinking", 60.0, 300, 2),
    ]  # fmt: skip
    assert all(s["profile"] == "thinking" for s in data["sessions"])
    assert len(data["sessions"]) == 4
    for session in data["sessions"]:
        assert session["trigger_ms"] > 0 and session["conventional_ms"] > 0
        assert session["typing_requests"] > 0  # VS Code asked while the docstring was typed
        assert session["answer_tokens"] > 0
        assert session["extra"]["llamacpp_ms"] > 0
        # llama-cpp-python's own greedy decoding of the final text gives the streamed answer
        assert session["extra"]["llamacpp_same"] is True, session
    alone = [s for s in data["sessions"] if s["typists"] == 1]
    assert all(s["drafting_forwards"] > 0 for s in alone)
    assert all(0 < s["engine_busy_s"] <= s["window_s"] for s in alone)
    together = [s for s in data["sessions"] if s["typists"] == 2]
    assert len({(s["engine_busy_s"], s["window_s"]) for s in together}) == 1  # one window
    assert all(0 < row["engine_busy_share"] <= 1 for row in data["summary"])
    assert "engine busy while typing" in done.stdout
    assert data["runtime"]["kind"] in ("torch", "llamacpp")
    assert "cores" in data["runtime"]["extra"]["cpu"]  # figures name the CPU they were got on
    assert (tmp_path / "out" / "bench-lsp-cdf.png").read_bytes()[:4] == b"\x89PNG"


def test_respec_cases_retype_a_real_sentence_into_the_docstring_of_a_function_with_a_body():
    cases = respec_cases()
    checked = [case for case in cases if case.check]
    assert len(checked) >= 8 and len(cases) >= len(checked) + 20
    assert {c.name.split("/")[0] for c in cases} == {"more-itertools", "stdlib"}
    for index, case in enumerate(cases):
        for variant in ("adds", "holds") if case.check else ("holds",):
            text = case.file(variant)
            typing = Typist(12, seed=index, profile="thinking").insert(text, case.at, case.sentence)
            assert typing.final == text[: case.at] + case.sentence + text[case.at :]
            typed = case.at + len(case.sentence)
            after, before = (find_respec(typing.final, typed, "python"),
                             find_respec(text, case.at, "python"))  # fmt: skip
            assert after is not None and before is not None, (case.name, variant)
            assert case.sentence.strip() in after.spec(typing.final)
            assert after.body(typing.final) == before.body(text)  # the body is not typed
            if case.check:  # the function's own body has its check, or lacks it
                assert (case.check in before.body(text)) == (variant == "holds"), case.name
        if case.check:
            assert "raise" in case.check and case.error in case.check, case.name


def test_bench_lsp_respec_times_edit_to_offer_and_takes_the_offers_apart(
    real_model_name: str, tmp_path: Path
):
    # the small model in a raw prompt: what it offers does not matter here, the run does
    command = [
        sys.executable, "-m", "lsp_server.cli", "bench-lsp", "--kind", "respec",
        "--model", real_model_name, "--prompt-format", "raw", "--max-tokens", "24",
        "--sessions", "1", "--cps", "60", "--typist", "steady", "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "offer p50/p95 ms" in done.stdout
    data = json.loads((tmp_path / "out" / "respec.json").read_text())
    assert [r["variant"] for r in data["results"]] == ["adds", "holds"]
    for result in data["results"]:
        assert result["keystrokes"] > 10 and result["body_lines"] > 3
        if result["offered"]:
            assert result["offer_ms"] > 0 and result["lines_added"] + result["lines_touched"] > 0
    assert {row["variant"] for row in data["summary"]} == {"adds", "holds"}
