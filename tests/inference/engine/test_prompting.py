"""Prompt formats and the chat answer's body extraction."""

from __future__ import annotations

import json

import pytest

from inference.api import Request
from inference.engine.prompting import PromptBuilder, extract_body, function_indent
from inference.errors import ConfigError, EmptyRequestError
from inference.loading import load_engine
from tests.paths import TEST_DATA
from tests.tiny_models import build_tokenizer

pytestmark = pytest.mark.timeout(60)

SPEC = 'import os\n\n\ndef size(path):\n    """Return the size of the file at path."""\n'


@pytest.fixture(scope="module")
def tokenizer():
    return build_tokenizer()


def test_raw_prompt_is_the_text(tokenizer):
    prompt = PromptBuilder(tokenizer, "auto").build(Request(SPEC))
    assert tokenizer.decode(prompt.ids) == SPEC
    assert prompt.body_end.def_indent == 0


def test_fim_is_used_when_code_follows_the_cursor(tokenizer):
    builder = PromptBuilder(tokenizer, "auto")
    prompt = builder.build(Request(SPEC, suffix="\n\ndef other():\n    pass\n"))
    text = tokenizer.decode(prompt.ids)
    assert text.startswith("<|fim_prefix|>import os")
    assert text.endswith("<|fim_suffix|>\n\ndef other():\n    pass\n<|fim_middle|>")
    assert tokenizer.convert_tokens_to_ids("<|endoftext|>") in prompt.extra_eos
    assert builder.format_for(Request(SPEC, suffix="   \n")) == "raw"


BELOW = "\n\ndef other():\n    pass\n"


def test_without_the_code_below_an_edit_of_the_spec_leaves_the_prompt_tail_alone(tokenizer):
    """On a CPU the suffix stays out: it follows the spec, so every edit would encode it again."""
    request = Request(SPEC, suffix=BELOW)
    assert PromptBuilder(tokenizer, "auto", code_below=False).format_for(request) == "raw"
    fim = PromptBuilder(tokenizer, "fim", code_below=False).build(request)
    assert tokenizer.decode(fim.ids).endswith('at path."""\n<|fim_suffix|><|fim_middle|>')
    # without code below, auto is the model's own format, chosen by pass@1 (packs.py)
    preferred = PromptBuilder(tokenizer, "auto", preferred="chat", code_below=False)
    assert preferred.format_for(request) == "chat"
    # with code below in the prompt, FIM, the format that reads it
    assert PromptBuilder(tokenizer, "auto", preferred="chat").format_for(request) == "fim"
    assert PromptBuilder(tokenizer, "raw", preferred="chat").format_for(request) == "raw"


@pytest.mark.parametrize(("setting", "used"), [("auto", False), ("always", True), ("never", False)])
def test_the_code_below_stays_out_on_a_cpu_unless_asked_for(tiny_gguf_dir, setting, used):
    from inference.config import validate_engine_config

    config = validate_engine_config(
        {"model": str(tiny_gguf_dir), "runtime": "llamacpp", "code_below": setting}
    )
    engine = load_engine(config)
    try:
        assert engine.runtime.info.device == "cpu"
        assert engine.builder.code_below is used
    finally:
        engine.shutdown()


def test_fim_and_chat_need_model_support(tokenizer):
    tokenizer.chat_template = None
    with pytest.raises(ConfigError, match="chat template"):
        PromptBuilder(tokenizer, "chat")


def test_empty_request_is_rejected(tokenizer):
    with pytest.raises(EmptyRequestError):
        PromptBuilder(tokenizer, "raw").build(Request("\n\n  "))


@pytest.mark.parametrize(
    ("text", "language", "indent"),
    [
        (SPEC, "python", 0),
        ("class A:\n    async def f(self):\n        '''x'''\n", "python", 4),
        ("x = 1\n", "python", None),
        ("export async function load(url) {\n  // fetch it\n", "brace", 0),
        ("  int add(int a, int b) {\n", "brace", 2),
    ],
)
def test_function_indent(text, language, indent):
    assert function_indent(text, language) == indent


def test_extract_body_drops_the_restated_header_and_docstring():
    answer = (
        "import os\n\ndef size(path):\n    \"\"\"Return the size\n    of the file.\"\"\"\n"
        "    return os.path.getsize(path)\n\nprint(size('x'))\n"
    )
    assert extract_body(answer, Request(SPEC)) == "    return os.path.getsize(path)\n"


def test_extract_body_brings_the_imports_the_code_so_far_lacks_into_the_body():
    spec = 'def root(x):\n    """The square root of x, to 4 places."""\n'
    answer = (
        "import math\nfrom functools import (\n    reduce,\n)\nimport os\n\n"
        'def root(x):\n    """The square root."""\n    return round(math.sqrt(x), 4)\n'
    )
    assert extract_body(answer, Request(f"import os\n\n\n{spec}")) == (
        "    import math\n    from functools import (\n        reduce,\n    )\n"
        "    return round(math.sqrt(x), 4)\n"
    )  # os is imported already; an import below the function is not the body's
    star = "from math import *\n\n" + answer.split("\n\n", 1)[1]
    assert extract_body(star, Request(spec)) == "    return round(math.sqrt(x), 4)\n"
    later = 'def root(x):\n    """The root."""\n    return x\n\nimport math\n'
    assert extract_body(later, Request(spec)) == "    return x\n"
    brace = Request("/** The sum. */\nfunction add(a, b) {\n", language="brace")
    answer = "import x from 'y';\nfunction add(a, b) {\n  return a + b;\n}\n"
    assert extract_body(answer, brace) == "  return a + b;\n"


def test_extract_body_keeps_an_answer_without_the_header():
    assert extract_body("    return 1\n", Request(SPEC)) == "    return 1\n"


def test_extract_body_refuses_an_answer_that_is_another_function():
    answer = 'def other(path):\n    """Return 1."""\n    return 1\n'
    assert extract_body(answer, Request(SPEC)) is None
    assert extract_body('    """Return the size."""\n    return 2\n', Request(SPEC)) == (
        '    """Return the size."""\n    return 2\n'
    )  # a repeated docstring, then a body: a body


def test_real_chat_answers_saved_as_fixtures():
    """Answers real models gave (tests/data/answers): another function is no body at all."""
    saved = TEST_DATA / "answers" / "chat_answers.json"
    cases = json.loads(saved.read_text(encoding="utf-8"))
    assert any(case["body"] is None for case in cases) and any(case["body"] for case in cases)
    for case in cases:
        assert extract_body(case["answer"], Request(case["request"])) == case["body"], case["about"]


def test_a_body_answer_ends_where_it_leaves_the_function():
    answer = "    return 1\n\n\ndef other():\n    pass\n"
    assert extract_body(answer, Request(SPEC)) == "    return 1\n"
    brace = Request("/** The sum. */\nfunction add(a, b) {\n", language="brace")
    assert extract_body("  return a + b;\n}\n\nfunction midpoint() {}\n", brace) == (
        "  return a + b;\n}\n"
    )


def test_a_brace_answer_that_defines_the_function_another_way_gives_its_body():
    """smollm2 in chat format restates `function add(` as an arrow function."""
    request = Request("/** The sum. */\nexport function add(a: Point, b: Point): Point {\n",
                      language="brace")  # fmt: skip
    answer = "const add = (a: Point, b: Point): Point => {\n  return a + b;\n};\n```"
    assert extract_body(answer, request) == "  return a + b;\n"
    assert extract_body("const other = () => {\n  return 1;\n};\n", request) == ""


BLOCK = "def totals(orders):\n    result = {}\n    for order in orders:\n        # add it\n"


@pytest.mark.parametrize("prompt_format", ["auto", "raw", "chat"])
def test_a_block_in_a_body_is_fill_in_the_middle_with_the_code_below_whatever_the_settings(
    tokenizer, prompt_format
):
    tokenizer.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    builder = PromptBuilder(tokenizer, prompt_format, code_below=False)
    request = Request(BLOCK, suffix="        pass\n    return result\n", block_indent=8)
    text = tokenizer.decode(builder.build(request).ids)
    assert text.endswith("<|fim_suffix|>        pass\n    return result\n<|fim_middle|>")


def test_a_blocks_comment_opens_the_middle_so_typing_it_leaves_the_code_below_encoded(tokenizer):
    builder = PromptBuilder(tokenizer, "auto")
    suffix = "        pass\n    return result\n"
    start = BLOCK.index("        # add it")
    ids = []
    for typed in ("# add", "# add it", "# add it to the totals of its customer"):
        text = BLOCK.replace("# add it", typed)
        ids.append(builder.build(Request(text, suffix, block_indent=8, spec_start=start)).ids)
    decoded = tokenizer.decode(ids[-1])
    assert decoded.startswith("<|fim_prefix|>def totals(orders):")
    assert decoded.endswith(
        "<|fim_suffix|>        pass\n    return result\n<|fim_middle|>"
        "        # add it to the totals of its customer\n"
    )
    middle = ids[0].index(tokenizer.convert_tokens_to_ids("<|fim_middle|>")) + 1
    assert all(other[:middle] == ids[0][:middle] for other in ids)  # only the middle changed
    without = builder.build(Request(BLOCK, suffix, block_indent=8)).ids  # no spec_start: prefix
    prefix_order = f"# add it\n<|fim_suffix|>{suffix}<|fim_middle|>"
    assert tokenizer.decode(without).endswith(prefix_order)


def _block_answer(answer: str, request: Request, tokenizer) -> str:
    body_end = PromptBuilder(tokenizer, "auto").build(request).body_end
    _, cut = body_end.scan(body_end.initial_state(request.text), answer)
    return answer if cut is None else answer[:cut]


def test_a_block_ends_where_it_leaves_its_indentation_or_reaches_the_code_below(tokenizer):
    request = Request(BLOCK, suffix="\n        pass\n    return result\n", block_indent=8)
    deeper = "        if order.ok:\n            result[order.id] = 1\n"
    assert _block_answer(deeper + "    return result\n", request, tokenizer) == deeper
    repeated = "        result[order.id] = 1\n        pass\n    x = 1\n"
    assert _block_answer(repeated, request, tokenizer) == "        result[order.id] = 1"
    passing = "        passed = True\n"  # a line that only begins like the code below goes on
    assert _block_answer(passing + "    y\n", request, tokenizer) == passing


def test_a_brace_block_leaves_the_enclosing_closing_brace_to_the_document(tokenizer):
    text = "function f(x) {\n  if (x) {\n    // log it\n"
    request = Request(text, suffix="  }\n}\n", language="brace", block_indent=4)
    answer = "    console.log(x);\n  }\n}\n"
    assert _block_answer(answer, request, tokenizer) == "    console.log(x);\n"
    body = PromptBuilder(tokenizer, "raw").build(Request(text, language="brace")).body_end
    assert body.keep_closing  # a new function's answer keeps its own `}`
