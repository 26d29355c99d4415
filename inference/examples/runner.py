"""Runs inside the sandbox: a module's source, then its docstring's examples, as doctest would.

Reads one JSON object on stdin ({"module", "docstring", "name", "limits"}), limits itself,
executes the module in a fresh namespace, runs the examples and prints one JSON object:
{"passed", "failed", "total", "firstFailure"}. Standard library only: it runs under the
isolated interpreter of the sandbox, with nothing of the project importable.
"""

import doctest
import json
import os
import resource
import sys
import types


class _Recorder(doctest.DocTestRunner):
    """Counts examples and keeps the first failure's words."""

    def __init__(self) -> None:
        super().__init__(verbose=False, optionflags=doctest.ELLIPSIS)
        self.first_failure: str | None = None

    def report_failure(self, out, test, example, got):  # noqa: ANN001
        self._first(
            f"{example.source.strip()} returned {got.strip() or 'nothing'}, "
            f"expected {example.want.strip() or 'nothing'}"
        )

    def report_unexpected_exception(self, out, test, example, exc_info):  # noqa: ANN001
        kind, value, _ = exc_info
        self._first(f"{example.source.strip()} raised {kind.__name__}: {value}")

    def _first(self, words: str) -> None:
        if self.first_failure is None:
            self.first_failure = words[:300]


def _limit(limits: dict) -> None:
    for name, value in limits.items():
        resource.setrlimit(getattr(resource, name), (value, value))


def main() -> None:
    job = json.loads(sys.stdin.read())
    _limit(job["limits"])
    # the result goes out on a descriptor of its own; what the module prints goes nowhere
    result_out = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (open for the run's life)
    module = types.ModuleType(job["name"])
    sys.modules[job["name"]] = module
    result: dict[str, object] = {"passed": 0, "failed": 0, "total": 0, "firstFailure": None}
    parser = doctest.DocTestParser()
    result["total"] = len(parser.get_examples(job["docstring"]))
    try:
        exec(compile(job["module"], f"<{job['name']}>", "exec"), module.__dict__)
    except BaseException as exc:  # the draft's module does not even load: every example fails
        result.update(
            failed=result["total"],
            firstFailure=f"the module raised {type(exc).__name__}: {exc}"[:300],
        )
    else:  # the examples see the module's names (a DocTest copies its globals)
        test = parser.get_doctest(job["docstring"], module.__dict__, job["name"], None, 0)
        runner = _Recorder()
        outcome = runner.run(test, out=lambda _text: None, clear_globs=False)
        result.update(
            failed=outcome.failed,
            passed=outcome.attempted - outcome.failed,
            firstFailure=runner.first_failure,
        )
    result_out.write(json.dumps(result) + "\n")
    result_out.flush()


if __name__ == "__main__":
    main()
