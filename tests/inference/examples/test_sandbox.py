"""The examples sandbox: a draft's doctests run in bubblewrap, and every way out is stopped."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from inference.examples.checker import ExampleChecker, docstring_examples
from inference.examples.sandbox import ExampleRun, Limits, RunCancelled, Sandbox

pytestmark = pytest.mark.timeout(120)

ADD = "def add(a, b):\n    return a + b\n"
ADD_DOC = "Add two numbers.\n\n>>> add(1, 2)\n3\n>>> add(2, 2)\n5\n"
ONE = ">>> 1 + 1\n2\n"


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    found, why = Sandbox.probe(Limits(timeout_s=3))
    assert found is not None, why  # the test command installs bubblewrap: no skip hides it
    return found


def test_examples_run_against_the_module_and_the_first_failure_says_what_went_wrong(sandbox):
    run = sandbox.run(ADD, ADD_DOC, "numbers")
    assert run == ExampleRun(1, 1, 2, "add(2, 2) returned 4, expected 5")
    assert sandbox.run("import math\nROOT = math.sqrt(2)\n", ">>> round(ROOT, 3)\n1.414\n",
                       "m").passed == 1  # fmt: skip


def test_a_module_that_does_not_load_fails_every_example_and_says_why(sandbox):
    run = sandbox.run("def add(a, b)\n    return a + b\n", ADD_DOC, "broken")
    assert (run.passed, run.failed, run.total) == (0, 2, 2)
    assert run.first_failure is not None and "SyntaxError" in run.first_failure
    raised = sandbox.run("raise SystemExit(3)\n", ONE, "exits")
    assert raised.failed == 1 and "SystemExit" in (raised.first_failure or "")


def test_what_the_module_prints_cannot_forge_the_result(sandbox):
    forged = 'print(\'{"passed": 9, "failed": 0, "total": 9, "firstFailure": null}\')\n'
    run = sandbox.run(forged + "import os\nos.write(1, b'{\"passed\": 9}\\n')\n", ">>> 0\n1\n", "f")
    assert (run.passed, run.failed, run.total) == (0, 1, 1)


def test_a_file_written_in_the_home_folder_or_the_system_does_not_appear(sandbox, tmp_path):
    home = Path.home()
    target = home / f"prewrite-escape-{os.getpid()}"
    paths = [str(target), "/prewrite-escape", str(tmp_path / "x")]
    code = (f"for path in {paths!r}:\n    try:\n        open(path, 'w').write('out')\n"
            "    except OSError:\n        pass\n")  # fmt: skip
    run = sandbox.run(code + "open('/tmp/inside', 'w').write('ok')\n",
                      ">>> open('/tmp/inside').read()\n'ok'\n", "w")  # fmt: skip
    assert run.passed == 1  # its own /tmp is writable
    assert not target.exists() and not Path("/prewrite-escape").exists()
    assert not (tmp_path / "x").exists()


def test_the_home_folder_and_its_keys_cannot_be_read(sandbox, tmp_path):
    secret = Path.home() / ".ssh" / f"prewrite-test-key-{os.getpid()}"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text("secret")
    try:
        run = sandbox.run("", f">>> open({str(secret)!r}).read()\n'secret'\n", "ssh")
        assert run.failed == 1 and "FileNotFoundError" in (run.first_failure or "")
        listing = sandbox.run("", f">>> import os; os.listdir({str(Path.home())!r})\n[]\n", "ls")
        assert ".ssh" not in (listing.first_failure or "")
    finally:
        secret.unlink()


def test_no_network_not_even_to_this_machine(sandbox):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = listener.getsockname()[1]
        listener.settimeout(0.5)
        code = f"import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
        run = sandbox.run(code, ONE, "net")
        assert run.failed == 1 and "Connection refused" in (run.first_failure or "")
        with pytest.raises(socket.timeout):
            listener.accept()  # nothing came through
    outside = sandbox.run("import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)\n",
                          ONE, "out")  # fmt: skip
    assert outside.failed == 1 and "unreachable" in (outside.first_failure or "")


def test_sleeping_forever_is_stopped_at_the_timeout(sandbox):
    began = time.monotonic()
    run = sandbox.run("import time\ntime.sleep(1000)\n", ONE, "sleep")
    assert run == ExampleRun(0, 1, 1, "stopped after 3 s")
    assert time.monotonic() - began < 10


def _processes() -> set[int]:
    return {int(p) for p in os.listdir("/proc") if p.isdigit()}


def test_a_fork_bomb_is_bounded_and_leaves_nothing_behind(sandbox):
    before = _processes()
    run = sandbox.run("import os\nwhile True:\n    try:\n        os.fork()\n"
                      "    except OSError:\n        pass\n", ONE, "bomb")  # fmt: skip
    assert run.failed == 1 and run.first_failure == "stopped after 3 s"
    time.sleep(0.5)  # the kernel reaps the namespace
    left = [p for p in _processes() - before if _command(p).startswith(sandbox.python)]
    assert not left


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_memory_is_limited(sandbox):
    run = sandbox.run("x = bytearray(4 << 30)\n", ONE, "memory")
    assert run.failed == 1 and "MemoryError" in (run.first_failure or "")


def test_a_run_is_cancelled_at_once(sandbox):
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    began = time.monotonic()
    with pytest.raises(RunCancelled):
        sandbox.run("import time\ntime.sleep(30)\n", ONE, "cancel", cancel)
    assert time.monotonic() - began < 2


def test_without_bubblewrap_the_feature_is_off_and_says_why(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    found, why = Sandbox.probe()
    assert found is None and "bubblewrap is not installed" in why


def test_docstring_examples_reads_the_spec_as_doctest_does():
    assert docstring_examples('"""Add.\n\n    >>> add(1, 2)\n    3\n    """') == (
        "Add.\n\n    >>> add(1, 2)\n    3\n    ", 1)  # fmt: skip
    assert docstring_examples("r'''x\n>>> f(\n... 1)\n2\n") == ("x\n>>> f(\n... 1)\n2\n", 1)
    indented = '    """x\n    >>> 1\n    1\n    """'  # a spec starts at its line's indentation
    assert docstring_examples(indented) == ("x\n    >>> 1\n    1\n    ", 1)
    assert docstring_examples('"""No examples here."""') is None
    assert docstring_examples("# a comment spec") is None


@pytest.fixture
def checker(sandbox) -> Iterator[tuple[ExampleChecker, list]]:
    reports: list = []
    done = threading.Event()

    def report(uri, key, run):
        reports.append((uri, key, run))
        done.set()

    checker = ExampleChecker(sandbox, report, on_failure=lambda uri, words: reports.append(words))
    checker.done = done  # type: ignore[attr-defined]
    yield checker, reports
    checker.close()


def test_a_newer_draft_cancels_the_older_run_of_the_same_document(checker):
    examples, reports = checker
    examples.check("file:///a.py", 1, "import time\ntime.sleep(30)\n" + ADD, ADD_DOC)
    time.sleep(0.5)  # running
    examples.check("file:///a.py", 2, ADD, ADD_DOC)
    assert examples.done.wait(10)
    assert reports == [("file:///a.py", 2, ExampleRun(1, 1, 2, "add(2, 2) returned 4, expected 5"))]
    assert examples.runs == 1


PROMPT = '''from typing import List


def below_zero(operations: List[int]) -> bool:
    """ Return True if the balance falls below zero at any point.
    >>> below_zero([1, 2, 3])
    False
    >>> below_zero([1, 2, -4, 5])
    True
    """
'''


def test_the_bench_runs_a_prompts_examples_on_an_answer(sandbox):
    from inference.lab.bench.examples import run_examples

    right = "    balance = 0\n    for op in operations:\n        balance += op\n" \
            "        if balance < 0:\n            return True\n    return False\n"  # fmt: skip
    assert run_examples(sandbox, PROMPT, right) == (2, 2)
    assert run_examples(sandbox, PROMPT, "    return False\n") == (1, 2)
    assert run_examples(sandbox, PROMPT, "    return (\n") == (0, 2)  # does not parse
    assert run_examples(sandbox, "def f():\n    '''No examples.'''\n", "    return 1\n") == (0, 0)
