"""The `prewrite bench` command: run a suite against base and stream, or compare two runs."""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inference.cli import add_engine_arguments, engine_config_from, positive
from inference.lab.problems.sandbox import Limits
from inference.loading import load_engine
from inference.packs import DEFAULT_MODEL

if TYPE_CHECKING:
    from inference.engine import Engine
    from inference.lab.bench.quality import Pass1Run

DEFAULT_OUT = Path("bench-out")
BEFORE, AFTER = "before", "after"  # result sub-folders of a --adapter run
TABLE_3 = "table3.txt"


def register(commands: argparse._SubParsersAction) -> None:
    """Add `bench` (and `bench compare`) to the `prewrite` parser."""
    bench = commands.add_parser(
        "bench",
        help="measure streaming's residual cost and pass@1 against plain decoding",
        description="Replay each problem's docstring unit by unit; compare the residual cost "
        "of streaming with plain greedy decoding, and run both answers' tests. This executes "
        "model-written code in a limited subprocess (see docs/bench.md).",
    )
    add_engine_arguments(bench)
    bench.add_argument("--suite", default="humaneval", help="'humaneval' or a JSONL file path")
    bench.add_argument("--limit", type=positive, default=None, help="first N problems only")
    bench.add_argument(
        "--shard",
        type=_shard,
        default=None,
        metavar="K/N",
        help="every N-th problem from the K-th (1-based): run N shards side by side or on N "
        "machines, then pool them with `bench merge`",
    )
    bench.add_argument("--out", type=Path, default=None, help=f"folder (default {DEFAULT_OUT}/...)")
    bench.add_argument("--test-timeout", type=float, default=Limits.timeout_s, help="seconds")
    bench.add_argument("--test-memory-mb", type=positive, default=Limits.memory_mb)
    _add_check_examples(bench)
    bench.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out: keep its examples, measure only the missing problems "
        "(refused when its settings differ)",
    )
    bench.epilog = (
        "With --adapter, every example runs without and with the adapter side by side: "
        f"OUT/{BEFORE} and OUT/{AFTER} hold the usual results; the seed's Table 3 "
        f"(before -> after) is printed and written to OUT/{TABLE_3}."
    )
    bench.set_defaults(handler=_dispatch)
    actions = bench.add_subparsers(
        dest="bench_command", metavar="{compare,merge,runtimes,pass1,split}"
    )
    compare = actions.add_parser("compare", help="print the deltas between two result folders")
    compare.add_argument("before", type=Path, help="result folder A")
    compare.add_argument("after", type=Path, help="result folder B")
    merge = actions.add_parser(
        "merge",
        help="pool the result folders of one run's shards into one",
        description="Pool runs made with the same settings on disjoint problems (the shards of "
        "--shard K/N, or any split of a suite) into OUT/results.json, with its plot and table; "
        "pass1 folders into OUT/pass1.json.",
    )
    merge.add_argument("out", type=Path, help="folder to write the pooled results to")
    merge.add_argument("folders", type=Path, nargs="+", help="the shards' result folders")
    runtimes = actions.add_parser(
        "runtimes",
        help="ms per forward by token count and greedy ms/token on each runtime, side by side",
        description="The same model on each runtime in one run: forwards of n tokens after a "
        "prefix, and plain greedy decoding (llama.cpp also against llama-cpp-python's Llama).",
    )
    runtimes.add_argument("--model", default=DEFAULT_MODEL, help="pack name, folder or file")
    runtimes.add_argument("--runtimes", default="torch,llamacpp", help="comma-separated")
    runtimes.add_argument("--threads", type=positive, default=2)
    runtimes.add_argument("--sizes", default="1,4,9,32,64,150", help="tokens per forward")
    runtimes.add_argument("--prefix-tokens", type=positive, default=300)
    runtimes.add_argument("--repeats", type=positive, default=5, help="forwards per size")
    runtimes.add_argument("--prompts", type=positive, default=5, help="HumanEval prompts decoded")
    runtimes.add_argument("--max-tokens", type=positive, default=64, help="tokens per decode")
    runtimes.add_argument("--out", type=Path, default=DEFAULT_OUT / "runtimes")
    pass1 = actions.add_parser(
        "pass1",
        help="answer quality alone: plain greedy on every problem and its tests (pass@1)",
        description="Plain greedy decoding of each problem's final prompt and its test, with "
        "no streaming: a third of the bench's work, to compare models and prompt formats.",
    )
    add_engine_arguments(pass1)
    pass1.add_argument(
        "--suite", default="humaneval", help="'humaneval', 'more-itertools' or a JSONL file path"
    )
    pass1.add_argument("--limit", type=positive, default=None, help="first N problems only")
    pass1.add_argument("--shard", type=_shard, default=None, metavar="K/N")
    pass1.add_argument("--out", type=Path, default=DEFAULT_OUT / "pass1")
    pass1.add_argument("--test-timeout", type=float, default=Limits.timeout_s, help="seconds")
    pass1.add_argument("--test-memory-mb", type=positive, default=Limits.memory_mb)
    _add_check_examples(pass1)
    pass1.add_argument(
        "--search",
        type=int,
        default=0,
        metavar="N",
        help="when an answer fails the prompt's examples, try up to N sampled answers and test "
        "the first whose examples pass (the server's searchOnFailure); 0: off",
    )
    pass1.add_argument(
        "--no-split", action="store_true", help="skip judging failures (cut by us, or wrong)"
    )
    pass1.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out (pass1.json is written after every problem): decode "
        "only the problems it lacks (refused when its settings differ)",
    )
    split = actions.add_parser(
        "split",
        help="judge the failures of pass1 runs: cut by the budget, cut by us, or wrong",
        description="For each pass1 folder: the answers rendered from their tokens by this "
        "code's stop rule and extraction (tested again where the text changed), then each "
        "failure judged as the model wrote it (see docs/bench.md); writes FOLDER/split.json and "
        "prints one row per folder.",
    )
    split.add_argument("folders", type=Path, nargs="+", help="pass1 result folders")
    split.add_argument("--threads", type=positive, default=None, help="default: as run")


def default_out(args: argparse.Namespace) -> Path:
    """bench-out/<suite>-<model>-<runtime>-<acceptance>-<dtype>, path characters made safe."""
    suite = args.suite if args.suite == "humaneval" else Path(args.suite).name.split(".")[0]
    name = f"{suite}-{args.model}-{args.runtime}-{args.acceptance}-{args.dtype}"
    if args.adapter:
        name += f"-adapter-{Path(args.adapter).name}"
    if args.shard:
        name += f"-shard{args.shard[0]}of{args.shard[1]}"
    return DEFAULT_OUT / re.sub(r"[^\w.+-]", "_", name)


def _dispatch(args: argparse.Namespace) -> int:
    if args.bench_command == "compare":
        from inference.lab.bench.compare import compare

        print(compare(args.before, args.after))
        return 0
    if args.bench_command == "merge":
        return _merge(args)
    if args.bench_command == "runtimes":
        return _runtimes(args)
    if args.bench_command == "pass1":
        return _pass1(args)
    if args.bench_command == "split":
        return _split(args)
    return _run(args)


def _add_check_examples(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check-examples",
        choices=("auto", "off"),
        default="auto",
        help="run each prompt's >>> examples on the answer in the server's sandbox (auto: "
        "where bubblewrap works) and split pass@1 by them",
    )


def _pass1(args: argparse.Namespace) -> int:
    from inference.config import validate_engine_config
    from inference.lab.bench.examples import examples_line
    from inference.lab.bench.quality import (
        PASS1_FILE,
        measure_pass1,
        pass1_document,
        resume_pass1,
        search_line,
    )
    from inference.lab.bench.results import read_json, write_results

    engine = load_engine(validate_engine_config(engine_config_from(args)))
    limits = Limits(args.test_timeout, args.test_memory_mb, args.check_examples == "auto")
    problems = _problems(args)
    meta = _meta(args, engine, len(problems))
    path = args.out / PASS1_FILE
    resumed = None
    if args.resume and path.exists():
        resumed = resume_pass1(read_json(path), meta, str(path))

    def checkpoint(run: Pass1Run) -> None:  # after every problem: a crash loses one answer
        write_results(args.out, pass1_document(meta, run, complete=False), PASS1_FILE)

    run = measure_pass1(
        engine, problems, limits, resumed=resumed, checkpoint=checkpoint, search=args.search
    )
    done = len(run.answers) + len(run.refused)
    document = pass1_document({**meta, "problems": done}, run, complete=not run.interrupted)
    summary = document["summary"]
    print(f"{args.model} on {engine.runtime.info.kind}: pass@1 {100 * summary['pass_at_1']:.1f}% "
          f"of {summary['problems']} ({summary['refused']} refused), median "
          f"{summary['median_tokens']} tokens in {summary['median_ms']:.0f} ms")  # fmt: skip
    print(examples_line(summary))
    if (searched := search_line(summary)) is not None:
        print(searched)
    print(f"wrote {write_results(args.out, document, PASS1_FILE)}")
    if run.interrupted:
        print(f"prewrite: interrupted after {done} of {len(problems)} problems; "
              "`--resume` with the same --out goes on", file=sys.stderr)  # fmt: skip
        return 130
    if not args.no_split:
        _write_split(engine, problems, document, args.out, limits)
    return 0


def _split(args: argparse.Namespace) -> int:
    """Judge the failures of finished pass1 runs, one engine per model and format."""
    from inference.config import validate_engine_config
    from inference.lab.bench.errors import ResultsError
    from inference.lab.bench.quality import PASS1_FILE
    from inference.lab.bench.results import read_json
    from inference.lab.problems.suites import load_suite

    for folder in args.folders:
        document = read_json(folder / PASS1_FILE)
        if "answers" not in document or any("token_ids" not in a for a in document["answers"]):
            raise ResultsError(f"{folder}: no answers with their tokens (rerun `bench pass1`)")
        keys = ("model", "runtime", "prompt_format", "max_tokens", "system_prompt", "adapter")
        values = {key: document[key] for key in keys}
        values["code_below"] = document.get("code_below", "auto")
        values["threads"] = args.threads or document["threads"]
        engine = load_engine(validate_engine_config(values))
        try:
            problems = load_suite(document["suite"])
            limits = Limits(document["test_timeout_s"], document["test_memory_mb"])
            _write_split(engine, problems, document, folder, limits)
        finally:
            engine.shutdown()
    return 0


def _write_split(
    engine: Engine, problems: list, document: dict, folder: Path, limits: Limits
) -> None:
    from inference.lab.bench.quality import SPLIT_FILE, rejudge, split_document, split_failures
    from inference.lab.bench.results import write_results

    before = document["answers"]
    after = rejudge(engine, problems, before, limits)
    failures = split_failures(engine, problems, after, limits)
    split = split_document(before, after, failures, document["refused"])
    v = split["verdicts"]
    print(f"{document['model']} {document['prompt_format']} {document['suite']}: pass@1 "
          f"{100 * split['pass_at_1_as_run']:.1f}% as run, {100 * split['pass_at_1']:.1f}% now; "
          f"failed: {v['cut_by_budget']} cut by maxTokens, {v['cut_by_us']} cut by us, "
          f"{v['wrong']} wrong")  # fmt: skip
    print(f"wrote {write_results(folder, {**document, 'split': split}, SPLIT_FILE)}")


def _problems(args: argparse.Namespace) -> list:
    """The suite's problems, cut to --limit and --shard."""
    from inference.lab.problems.suites import load_suite

    problems = load_suite(args.suite)[: args.limit]
    if args.shard:
        index, count = args.shard
        problems = problems[index - 1 :: count]
    return problems


def _runtimes(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from inference.config import validate_engine_config
    from inference.lab.bench.results import write_results
    from inference.lab.bench.runtimes import (
        RUNTIMES_FILE,
        format_figures,
        measure_runtime,
        write_plot,
    )
    from inference.lab.problems.suites import load_suite

    sizes = [int(n) for n in args.sizes.split(",")]
    prompts = [p.prompt for p in load_suite("humaneval")[: args.prompts]]
    figures = []
    for runtime in args.runtimes.split(","):
        values = {"model": args.model, "runtime": runtime, "threads": args.threads,
                  "max_tokens": args.max_tokens, "lookahead": 0}  # fmt: skip
        if runtime == "torch":
            values["dtype"] = "float32"
        config = validate_engine_config(values)
        figures.append(measure_runtime(config, prompts, sizes, args.prefix_tokens, args.repeats))
        print(f"{runtime}: done", file=sys.stderr)
    table = format_figures(figures)
    print(table)
    document = {"model": args.model, "threads": args.threads, "prefix_tokens": args.prefix_tokens,
                "figures": [asdict(f) for f in figures], "table": table}  # fmt: skip
    path = write_results(args.out, document, RUNTIMES_FILE)
    print(f"wrote {path} and {write_plot(figures, args.out)}")
    return 0


def _merge(args: argparse.Namespace) -> int:
    from inference.lab.bench.merge import merge
    from inference.lab.bench.quality import PASS1_FILE
    from inference.lab.bench.report import format_table, write_plot
    from inference.lab.bench.results import write_results

    if all((folder / PASS1_FILE).exists() for folder in args.folders):
        return _merge_pass1(args)
    results = merge(args.folders)
    write_results(args.out, results)
    write_plot(results, args.out)
    print(format_table(results))
    print(f"\nwrote {args.out / 'results.json'} and its plot")
    return 0


def _merge_pass1(args: argparse.Namespace) -> int:
    from inference.lab.bench.examples import examples_line
    from inference.lab.bench.merge import merge_pass1
    from inference.lab.bench.quality import PASS1_FILE, search_line
    from inference.lab.bench.results import read_json, write_results

    stored = [(str(f), read_json(f / PASS1_FILE)) for f in args.folders]
    document = merge_pass1(stored)
    summary = document["summary"]
    print(f"{document['model']}: pass@1 {100 * summary['pass_at_1']:.1f}% of "
          f"{summary['problems']} ({summary['refused']} refused)")  # fmt: skip
    print(examples_line(summary))
    if (searched := search_line(summary)) is not None:
        print(searched)
    print(f"wrote {write_results(args.out, document, PASS1_FILE)}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from inference.lab.bench.report import format_adaptation, format_table, write_plot
    from inference.lab.bench.results import build_results, resume_run, write_results
    from inference.lab.bench.runner import BenchRun, run_suites

    problems = _problems(args)
    out = args.out or default_out(args)
    engines = _engines(args)
    folders = {name: out / name for name in engines}  # "" (one engine): out itself
    limits = Limits(args.test_timeout, args.test_memory_mb, args.check_examples == "auto")
    metas = {name: _meta(args, engine, len(problems)) for name, engine in engines.items()}
    resumed = (
        {name: resume_run(folders[name], metas[name]) for name in engines} if args.resume else None
    )

    def checkpoint(done: dict[str, BenchRun]) -> None:  # after every example: a crash loses little
        for name, run in done.items():
            write_results(folders[name], build_results(run, metas[name]))

    runs = run_suites(engines, problems, limits, checkpoint=checkpoint, resumed=resumed)
    results = {name: build_results(run, metas[name]) for name, run in runs.items()}
    for name, result in results.items():
        write_results(folders[name], result)
        write_plot(result, folders[name])
        if name:
            print(f"\n{name}:")
        print(format_table(result))
    if BEFORE in results:
        table = format_adaptation(results[BEFORE], results[AFTER])
        (out / TABLE_3).write_text(table + "\n", encoding="utf-8")
        print(f"\n{table}")
    print(f"\nwrote {', '.join(str(f / 'results.json') for f in folders.values())} and plots")
    if any(run.interrupted for run in runs.values()):
        print("prewrite: interrupted; the results hold the finished examples", file=sys.stderr)
        return 130
    return 0


def _engines(args: argparse.Namespace) -> dict[str, Engine]:
    """One engine; with --adapter, the same engine without it (before) and with it (after).

    `before` keeps the prompt format the adapter was trained with, so the adapter (and its
    system message) is the only difference.
    """
    from inference.config import validate_engine_config

    values = engine_config_from(args)
    if not values.get("adapter"):
        return {"": load_engine(validate_engine_config(values))}
    before = {**values, "adapter": None, "system_prompt": None}
    return {
        BEFORE: load_engine(validate_engine_config(before)),
        AFTER: load_engine(validate_engine_config(values)),
    }


def _meta(args: argparse.Namespace, engine: Engine, problems: int) -> dict[str, Any]:
    """The run's settings as stored in results.json (runtime, dtype and device as resolved)."""
    config, info = engine.config, engine.runtime.info
    return {
        "suite": args.suite,
        "model": config.model,
        "runtime": info.kind,
        "adapter": config.adapter,
        "system_prompt": config.system_prompt,
        "acceptance": config.acceptance,
        "dtype": info.dtype,
        "device": info.device,
        "threshold": config.threshold,
        "max_tokens": config.max_tokens,
        "prompt_format": config.prompt_format,
        "code_below": config.code_below,
        "lookahead": engine.shape.lookahead,
        "verify_chunk": engine.shape.verify_chunk,
        "drafter": config.drafter,
        "drafter_mode": config.drafter_mode,
        "shard": f"{args.shard[0]}/{args.shard[1]}" if args.shard else None,
        "threads": info.threads,
        "runtime_version": info.version,
        "runtime_settings": info.extra,
        "problems": problems,
        "test_timeout_s": args.test_timeout,
        "test_memory_mb": args.test_memory_mb,
        "search": getattr(args, "search", 0),  # pass1's sampled alternatives per failure
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"(\d+)/(\d+)", text.strip())
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, e.g. 2/4; got {text!r}")
    return int(match[1]), int(match[2])
