# Every task of the guide. `make help` lists them.
# The first run creates .venv: `make serve` and `make build` install requirements-site.txt into it,
# every other task requirements.txt (and more); later runs reuse it.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export NO_MKDOCS_2_WARNING := 1

.DEFAULT_GOAL := help

# pip installs uv into .venv, and uv everything else (requirements-installer.txt says why): torch
# as PyPI serves it, from uv's cache after the first time. --compile-bytecode does what pip does:
# without .pyc files, a library's first import compiles its source inside the test process, where
# warnings are errors (jieba's invalid escape sequences then raise SyntaxError), and the test
# processes that start together each compile the same modules: tried without it, a fresh clone's
# `make test` installed in 40 s less and tested in 67 s more.
UV = $(BIN)/python -m uv pip install --quiet --compile-bytecode --python $(BIN)/python

# Two layers in one .venv: the site's requirements (no torch: make serve, make build), then
# everything the tests need on top (make install, make test). A .venv that never finished its
# first layer is removed when venv, pip or uv fails: nothing half-installed stays behind. An
# existing .venv is kept (check-python has checked its Python).
# mkdocs-jupyter requires ipykernel (and IPython, jedi, debugpy: 75 MB) only to execute notebooks,
# which the site build does not (they are saved executed): the site layer leaves it out.
$(BIN)/.installed-site: requirements-site.txt requirements-installer.txt | check-python
	[ -e $(BIN)/python ] || $(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); exit 1; }
	echo ipykernel > $(VENV)/site-excludes.txt
	{ $(BIN)/python -m pip install --quiet -r requirements-installer.txt \
	  && $(UV) --excludes $(VENV)/site-excludes.txt -r requirements-site.txt; } \
	  || { [ -e $@ ] || [ -e $(BIN)/.installed ] || rm -rf $(VENV); exit 1; }
	touch $@

$(BIN)/.installed: $(BIN)/.installed-site requirements.txt
	$(UV) -r requirements.txt
	touch $@

# The Pythons the pins support: requires-python in pyproject.toml. Outside them pip's resolver fails
# deep into `make install` without naming the cause, so this stops first, in one line: on .venv's
# Python when .venv exists, else on $(PYTHON), which is about to create it.
REQUIRES_PYTHON = $(shell sed -n 's/^requires-python *= *"\(.*\)"/\1/p' pyproject.toml)
GOAL = $(or $(firstword $(MAKECMDGOALS)),install)
.PHONY: check-python
check-python:
	@if [ -e $(BIN)/python ] || [ -L $(BIN)/python ]; then \
	  py=$(BIN)/python; fix="rm -rf $(VENV), then pick"; else py="$(PYTHON)"; fix=pick; fi; \
	if ! err=$$($$py -c "" 2>&1); then \
	  echo "$$py does not run here ($$(printf '%s\n' "$$err" | head -n 1)), but the guide needs\
	 Python $(REQUIRES_PYTHON) (requires-python in pyproject.toml): $$fix one that runs:\
	 make $(GOAL) PYTHON=<a Python in that range>" >&2; exit 1; fi; \
	if [ "$$py" = $(BIN)/python ]; then $$py tools/dev/check_python.py --venv $(VENV) --goal $(GOAL); \
	else $$py tools/dev/check_python.py --name "$$py" --goal $(GOAL); fi

# TensorFlow and JAX, for the comparison page's examples: the tests need them, the site does not.
$(BIN)/.installed-frameworks: $(BIN)/.installed requirements-frameworks.txt
	$(UV) -r requirements-frameworks.txt
	touch $@

# torchvision, transformers, captum, Lightning, Opacus, diffusers and PyG, for the real-model and training-loop
# pages: the tests need them, the site does not. torch is reinstalled with them where .venv holds a
# CPU-only torch build (a .venv made by an older Makefile), which torchvision's wheel cannot load
# with; a new .venv has PyPI's build already (reinstalling it cost 8 s).
# Left out (models-excludes.txt): what ultralytics and transformer-lens pull in for logging and
# data frames, which no example imports (about 225 MB).
$(BIN)/.installed-models: $(BIN)/.installed requirements-models.txt models-excludes.txt
	$(UV) $$($(BIN)/python -c "import importlib.metadata as m; print('--reinstall-package torch' * ('+cpu' in m.version('torch')))") \
	  --excludes models-excludes.txt -r requirements-models.txt
	touch $@

.PHONY: help
help:  ## List the tasks
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-19s %s\n", $$1, $$2}'

.PHONY: install-site
install-site: $(BIN)/.installed-site  ## Create .venv with what the site build needs: no torch (about 280 MB)

.PHONY: install
install: $(BIN)/.installed  ## Create .venv with the pinned requirements: the site's, torch, the test tools

.PHONY: serve
serve: install-site  ## Build and serve both languages at http://127.0.0.1:8000/ (Chinese at /zh/)
	$(BIN)/mkdocs serve

.PHONY: install-frameworks
install-frameworks: $(BIN)/.installed-frameworks  ## Add TensorFlow and JAX to .venv (about 2.2 GB)

.PHONY: install-models
install-models: $(BIN)/.installed-models  ## Add torchvision, transformers, captum, Lightning, accelerate, Opacus, diffusers, PyTorch Geometric, ONNX, ONNX Runtime, timm, ultralytics, TransformerLens, nnsight, bitsandbytes and PEFT to .venv (about 1 GB)

# DeepSpeed in a folder of its own, .venv/deepspeed/ (requirements-deepspeed.txt says why): only a
# script that imports it gets the folder on its path (tools/examples/scripts.py). Its own
# requirements pydantic and tqdm come from .venv's model layer (transformers, accelerate): that
# layer goes first.
$(BIN)/.installed-deepspeed: $(BIN)/.installed requirements-deepspeed.txt | $(BIN)/.installed-models
	rm -rf $(VENV)/deepspeed
	$(UV) --no-deps --target $(VENV)/deepspeed -r requirements-deepspeed.txt
	touch $@

.PHONY: install-deepspeed
install-deepspeed: $(BIN)/.installed-deepspeed  ## Add DeepSpeed to .venv/deepspeed/, apart from .venv's packages (about 25 MB; install-models first)

$(BIN)/.installed-matrix: $(BIN)/.installed requirements-matrix.txt
	$(UV) -r requirements-matrix.txt
	touch $@

.PHONY: matrix
matrix: $(BIN)/.installed-matrix system-packages  ## Run the doc-tests on every tracked torch version (nox + uv, about 3 GB each); rewrites the compatibility page and each page's "Verified on" line
	-$(BIN)/nox
	$(BIN)/python -m tools.examples.compat

.PHONY: upgrade
upgrade: $(BIN)/.installed-matrix  ## Move the guide to torch TORCH=X.Y.Z (TORCHVISION=... if not tracked yet): matrix, pins, install, outputs, recordings, generated files; ends with the review list
	$(BIN)/python -m tools.examples.upgrade $(TORCH) $(if $(TORCHVISION),--torchvision $(TORCHVISION))

.PHONY: recordings
recordings: $(BIN)/.installed-matrix  ## Record what gated snippets print on the releases older than the matrix that their gates name (torch 2.0.1, 1.13.1; about 3 GB each, deleted after)
	$(BIN)/nox -s recordings

# Python 3.13, the newest requires-python allows; the pins as they are. Not part of `make matrix`.
# PY313 names the interpreter when `python3.13` on PATH is not one (a pyenv shim, say).
PY313 ?= python3.13
.PHONY: test-py313
test-py313: $(BIN)/.installed-matrix system-packages  ## Run the doc-tests on Python 3.13 (nox + uv, about 3 GB, deleted after)
	$(BIN)/nox -s doctests_py313 --force-python $(PY313)

.PHONY: system-packages
system-packages:  ## Install the Debian packages the tests need, if missing (g++, chromium, chromium-headless-shell)
	@.ci/system-packages

.PHONY: test
test: install-frameworks install-models install-deepspeed system-packages  ## Run every test: snippets, pages, strict build, browser (what CI runs); GUIDE_RUN_ALL=1: nothing left out as unchanged (tests/unchanged.py)
	GUIDE_RUN_ALL=1 $(BIN)/python -m pytest

# NAME=<snippet or page>: only the tests whose id names it: the snippet's examples (its path holds
# its page's folder, so a page's name selects all of them) and the page's structural tests.
# `make outputs` and `make test-docs` install the optional layers (TensorFlow and JAX, the model
# libraries, DeepSpeed: about 2.5 GB) only for the snippets they run that import one of their
# libraries: `refresh_outputs --needs` names the targets (without NAME: every layer).
NAME ?=
NEEDS = $(BIN)/python -m tools.examples.refresh_outputs --needs
.PHONY: test-docs
test-docs: install system-packages  ## Every test but the browser's: the quick loop while writing (NAME=<snippet or page>: just those); installs the optional libraries the selected snippets import
	@targets=$$($(NEEDS) --matching $(NAME)) && $(MAKE) --no-print-directory $$targets
	$(BIN)/python -m pytest -m "not browser" $(if $(NAME),-k "$(NAME)")

.PHONY: lighthouse
lighthouse: install system-packages  ## Lighthouse scores (mobile, median of 3 runs) of every page in both languages, one run after another (about 45 min; npx, Chromium); build/lighthouse/scores.md
	$(BIN)/python -m tools.measure.lighthouse

.PHONY: translation-status
translation-status:  ## Chinese pages whose English page changed since the Chinese one was last updated
	@$(PYTHON) -m tools.site.translation_status

.PHONY: build
build: install-site  ## Build the site into site/ with --strict
	$(BIN)/mkdocs build --strict

.PHONY: outputs
outputs: install  ## Rewrite the snippets' expected outputs from a real run (NAME=<snippet>: that one, in seconds; installs only the optional libraries it imports, all of them without NAME); review with git diff
	@targets=$$($(NEEDS) $(NAME)) && $(MAKE) --no-print-directory $$targets
	$(BIN)/python -m tools.examples.refresh_outputs $(NAME)
	$(BIN)/python -m tools.examples.compat --stored

.PHONY: benchmark
benchmark: install-models  ## Measure every technique's memory and time (about 2 min); rewrites the cost page's figures
	$(BIN)/python -m tools.measure.benchmark

# build/check_guide.py: the file the site serves as check_guide.py (tools/reader/checker.py renders both).
.PHONY: check-guide
check-guide: install-frameworks install-models install-deepspeed  ## Run every example of the guide on this torch, as a reader's check_guide.py does
	$(BIN)/python -m tools.reader.checker --out build/check_guide.py
	$(BIN)/python build/check_guide.py --diff

.PHONY: generate
generate: install  ## Regenerate the notebooks, the figures and the Questions page's lists from snippets, torch and questions.yml
	$(BIN)/python -m tools.generate.notebook
	$(BIN)/python -m tools.generate.toy_graph
	$(BIN)/python -m tools.generate.grad_cam_figure
	$(BIN)/python -m tools.generate.grad_norm_figure
	$(BIN)/python -m tools.generate.questions

.PHONY: social-card
social-card: install system-packages  ## Redraw the picture shared links show (docs/assets/social-card.png; needs a Chinese font)
	$(BIN)/python -m tools.generate.social_card

.PHONY: clean
clean:  ## Remove the built site and caches (keeps .venv)
	rm -rf site .pytest_cache
	find . -name __pycache__ -not -path './$(VENV)/*' -prune -exec rm -rf {} +
