"""Prompt formats: raw continuation, fill-in-the-middle, and the model's chat template."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from transformers import PreTrainedTokenizerBase

from inference.api import Request
from inference.engine.stopping import BodyEnd
from inference.errors import ConfigError, EmptyRequestError

FIM_TOKENS = ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
FIM_STOPS = ("<|fim_pad|>", "<|endoftext|>", "<|file_sep|>", "<|repo_name|>")
CHAT_INSTRUCTION = (
    "Complete the function below. Reply with the complete function in one code block."
)
CODE_FENCE = "```"
_IMPORT = re.compile(r"^(?:import[ \t]+\w|from[ \t]+[\w.]+[ \t]+import\b)")
_FUNCTION_LINE = {
    "python": re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+"),
    "brace": re.compile(
        r"^([ \t]*)(?:export\s+)?(?:async\s+)?(?:function\b|[\w<>\[\]*&:,\s]+\([^;]*\)\s*\{?\s*$)"
    ),
}


@dataclass(frozen=True)
class Prompt:
    """A request rendered for the model: its tokens and where the answer ends."""

    ids: list[int]
    answer_start: str  # the text the answer continues (for the body-end scanner)
    body_end: BodyEnd
    extra_eos: frozenset[int]
    request: Request
    whole_function: bool = False  # the answer restates the function (chat): keep its body only


def has_fim(tokenizer: PreTrainedTokenizerBase) -> bool:
    """True when the tokenizer knows the fill-in-the-middle tokens."""
    vocab = tokenizer.get_vocab()
    return all(token in vocab for token in FIM_TOKENS)


def function_indent(text: str, language: str) -> int | None:
    """Indentation of the last function header in `text`, or None if there is none."""
    pattern = _FUNCTION_LINE[language]
    for line in reversed(text.splitlines()):
        match = pattern.match(line)
        if match:
            return len(match.group(1).expandtabs(4))
    return None


def block_end(request: Request, stops: tuple[str, ...]) -> BodyEnd:
    """Where a block inside a body ends: at a line indented less than the block (a brace
    language's `}` there closes an enclosing block, already in the document), or where the
    answer reaches the first line of the code below, which it must not repeat."""
    assert request.block_indent is not None
    below = next((line for line in request.suffix.split("\n") if line.strip()), "")
    if below:
        stops = (*stops, f"\n{below.rstrip()}\n")
    return BodyEnd(
        language=request.language,
        def_indent=request.block_indent - 1,
        stop_strings=stops,
        keep_closing=False,
    )


def split_spec(request: Request) -> tuple[str, str]:
    """A fill-in-the-middle prompt's prefix and the start of its middle: a block's comment
    (from `spec_start`) opens the middle, after the code below, so that typing it changes only
    the prompt's last tokens; otherwise the whole text is the prefix."""
    start = request.spec_start
    if request.block_indent is None or start is None or not 0 <= start <= len(request.text):
        return request.text, ""
    return request.text[:start], request.text[start:]


class PromptBuilder:
    """Renders requests into token ids for one tokenizer in one format."""

    def __init__(
        self,
        tokenizer: PreTrainedTokenizerBase,
        prompt_format: str,
        stop_strings: tuple[str, ...] = (),
        system_prompt: str | None = None,
        preferred: str | None = None,
        code_below: bool = True,
    ):
        """`auto` is FIM where there is code below in the prompt and the model has FIM tokens;
        else `preferred`, the model's format without code below (its pack's, chosen by pass@1),
        else raw. `code_below`: put the request's suffix in the prompt (FIM, chat) or not."""
        self.tokenizer = tokenizer
        self.fim = has_fim(tokenizer)
        if prompt_format == "fim" and not self.fim:
            raise ConfigError("prompt format 'fim' needs a model with fill-in-the-middle tokens")
        if prompt_format == "chat" and not getattr(tokenizer, "chat_template", None):
            raise ConfigError("prompt format 'chat' needs a model with a chat template")
        self.prompt_format = prompt_format
        self.preferred = preferred if preferred != "fim" or self.fim else None
        self.code_below = code_below
        self.stop_strings = stop_strings
        self.system_prompt = system_prompt

    def format_for(self, request: Request) -> str:
        """The concrete format used for `request` ('auto' resolved).

        A block inside a body is always fill-in-the-middle where the model has the tokens (its
        end depends on the code below), else raw: a chat answer restates the whole function."""
        if request.block_indent is not None:
            return "fim" if self.fim else "raw"
        if self.prompt_format != "auto":
            return self.prompt_format
        if self.fim and self._suffix(request).strip():
            return "fim"
        return self.preferred or "raw"

    def _suffix(self, request: Request) -> str:
        return request.suffix if self.code_below or request.block_indent is not None else ""

    def build(self, request: Request) -> Prompt:
        """Token ids and stop settings for `request`."""
        if not request.text.strip():
            raise EmptyRequestError("the request is empty: there is no code or spec to answer")
        fmt = self.format_for(request)
        stops = self.stop_strings
        extra: frozenset[int] = frozenset()
        if fmt == "fim":
            prefix, middle = split_spec(request)
            suffix = self._suffix(request)
            text = f"{FIM_TOKENS[0]}{prefix}{FIM_TOKENS[1]}{suffix}{FIM_TOKENS[2]}{middle}"
            extra = self._token_ids(FIM_STOPS)
        elif fmt == "chat":
            text = self._chat_text(request)
            stops = (*stops, CODE_FENCE)
        else:
            text = request.text
        ids = self.tokenizer(text, add_special_tokens=fmt != "chat")["input_ids"]
        chat = fmt == "chat"
        if request.block_indent is not None:
            body_end = block_end(request, stops)
        else:
            body_end = BodyEnd(
                language=request.language,
                def_indent=None if chat else function_indent(request.text, request.language),
                stop_strings=stops,
            )
        return Prompt(
            ids=list(ids),
            answer_start="" if chat else request.text,
            body_end=body_end,
            extra_eos=extra,
            request=request,
            whole_function=chat,
        )

    def _chat_text(self, request: Request) -> str:
        """Chat template with the assistant's reply already opened on the code so far."""
        code = request.text
        if self._suffix(request).strip():
            code += f"\n# ... code after the cursor ...\n{request.suffix}"
        messages = []
        if self.system_prompt:
            messages.append({"role": "system", "content": self.system_prompt})
        fence = "python" if request.language == "python" else ""
        question = f"{CHAT_INSTRUCTION}\n{CODE_FENCE}{fence}\n{code}\n{CODE_FENCE}"
        messages.append({"role": "user", "content": question})
        rendered = self.tokenizer.apply_chat_template(
            messages, tokenize=False, add_generation_prompt=True
        )
        return f"{rendered}{CODE_FENCE}{fence}\n"

    def _token_ids(self, tokens: tuple[str, ...]) -> frozenset[int]:
        vocab = self.tokenizer.get_vocab()
        return frozenset(vocab[t] for t in tokens if t in vocab)


def extract_body(answer: str, request: Request) -> str | None:
    """The body of the request's function inside an answer that restates the whole function.

    Chat answers write the function from its header; the editor needs only what follows the
    header and its docstring. An answer that does not restate the header is kept only if it
    is a body: its first line of code (after a repeated docstring) indented under the header.
    Anything else, such as another function or a class at the header's level, is no body of
    this function: None.
    """
    header = _last_header(request.text, request.language)
    lines = answer.splitlines(keepends=True)
    restates = _restates(header, request.language)
    starts = [i for i, line in enumerate(lines) if restates(line)]
    if not starts:
        return _body_as_is(answer, request) if _is_body(answer, request) else None
    start = starts[0]
    indent = len(lines[start]) - len(lines[start].lstrip())
    rest = _skip_docstring(lines[start + 1 :])
    body = []
    for line in rest:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break
        body.append(line)
    if not body:
        return ""
    return "".join(_imports_inside(lines[:start], body, request) + body).rstrip() + "\n"


def _imports_inside(before: list[str], body: list[str], request: Request) -> list[str]:
    """The answer's imports above the restated function that the code so far lacks, indented
    as the body's first line: the body needs them, and an import is no new definition."""
    if request.language != "python":
        return []
    known = {line.strip() for line in request.text.splitlines()}
    code = next((line for line in body if line.strip()), "")
    pad = code[: len(code) - len(code.lstrip())]
    wanted: list[str] = []
    statement: list[str] = []
    for line in before:
        if statement or (_indent(line) == 0 and _IMPORT.match(line)):
            statement.append(line)
            if "(" in statement[0] and ")" not in line:
                continue  # a parenthesised import goes on
            joined = "".join(statement).strip()
            if joined not in known and not joined.endswith("*"):  # `import *` only at the top
                for i, part in enumerate(statement):
                    inner = "    " if i and not part.strip().startswith(")") else ""
                    wanted.append(f"{pad}{inner}{part.strip()}\n")
            statement = []
    return wanted


def _restates(header: str | None, language: str) -> Callable[[str], bool]:
    """Whether an answer's line restates the function: its header, or in a brace language
    the same name defined another way (`const name = (...) => {`, as chat answers often do)."""
    if not header:
        return lambda line: False
    names = re.findall(r"(\w+)\s*\($", header)
    other = None
    if language == "brace" and names:
        name = re.escape(names[-1])
        defined = rf"(?:(?:const|let|var)\s+{name}\s*[:=]|function\s+{name}\s*\()"
        other = re.compile(rf"^(?:export\s+)?{defined}")
    return lambda line: line.strip().startswith(header) or bool(other and other.match(line.strip()))


def _body_as_is(answer: str, request: Request) -> str:
    """A body answer up to where it leaves the function: the first line at the header's indent
    or less (kept when it is the brace language's closing `}`); what follows is other code."""
    header_indent = function_indent(request.text, request.language)
    if header_indent is None:
        return answer
    lines = answer.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() and _indent(line) <= header_indent:
            keep = request.language == "brace" and line.strip().startswith("}")
            body = "".join(lines[: i + 1 if keep else i]).rstrip()
            return body + "\n" if body else ""
    return answer


def _is_body(answer: str, request: Request) -> bool:
    """True when the answer's first code line is indented deeper than the function's header."""
    header_indent = function_indent(request.text, request.language)
    if header_indent is None or request.language != "python":
        return True
    code = [line for line in _skip_docstring(answer.splitlines()) if line.strip()]
    if not code:
        return True  # nothing yet (or a partial draft): no answer to refuse
    return _indent(code[0]) > header_indent


def _indent(line: str) -> int:
    """Leading whitespace columns of a line (tabs as 4), as function_indent counts them."""
    expanded = line.expandtabs(4)
    return len(expanded) - len(expanded.lstrip())


def _last_header(text: str, language: str) -> str | None:
    """`def name(` (or the brace language's header) of the last function in `text`."""
    pattern = _FUNCTION_LINE[language]
    for line in reversed(text.splitlines()):
        if pattern.match(line):
            stripped = line.strip()
            return stripped.split("(", 1)[0] + "(" if "(" in stripped else stripped
    return None


def _skip_docstring(lines: list[str]) -> list[str]:
    """Drop a leading docstring (and blank lines before it) from body lines."""
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i == len(lines):
        return lines
    first = lines[i].strip()
    quote = next((q for q in ('"""', "'''") if first.lstrip("rbuRBU").startswith(q)), None)
    if quote is None:
        return lines
    opened = first.lstrip("rbuRBU")[3:]
    if quote in opened:
        return lines[i + 1 :]
    for j in range(i + 1, len(lines)):
        if quote in lines[j]:
            return lines[j + 1 :]
    return []
