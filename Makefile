# akasha_explorer — two commands do all the set-up on a fresh machine:
#   make lab    build .venv, install, build the demo memory, open JupyterLab on notebooks/
#   make test   build .venv if needed and run the whole test suite
# and, while working:
#   make test-fast  the suite without the slow and the browser tests (a couple of minutes)
#   make lint       ruff and mypy on the package
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
AKASHA := $(VENV)/bin/akasha
STORE  ?= demo_store
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install test test-fast lab demo demo-store lint stress bench clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# torch first: 2.13.0 is a CPU build on local disk; any other spec pulls a CUDA build
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[dev,all]'
	touch $@

install: $(VENV)/.installed

# every test: unit, doctests, real stores, notebooks, Chromium, slow ones included
test: $(VENV)/.installed
	$(PY) -m pytest -n 2 --dist loadfile

# tests marked slow (kill -9 and crash loops, lint, whole-notebook runs, long soaks) and
# the real-browser ones left out
test-fast: $(VENV)/.installed
	$(PY) -m pytest -n 2 --dist loadfile -m "not slow and not browser"

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check akasha_explorer tests benchmarks
	$(VENV)/bin/mypy akasha_explorer

# always run: a no-op on a built store, except that it migrates one an older version made;
# a built store that is busy (a running lab's kernels hold it) is used as it is
demo-store: $(VENV)/.installed
	$(AKASHA) demo $(STORE) || { test -f $(STORE)/akasha.json && echo "using $(STORE) as it is"; }

demo: $(VENV)/.installed demo-store
	$(AKASHA) stats $(STORE)
	$(AKASHA) recall $(STORE) "和阿岚打杀戮尖塔，A10 过了吗" --now last

lab: $(VENV)/.installed demo-store
	AKASHA_STORE=$(abspath $(STORE)) $(AKASHA) lab $(STORE)

stress: $(VENV)/.installed
	AKASHA_STRESS_RUNS=200 $(PY) -m pytest tests/test_crash.py -x

bench: $(VENV)/.installed demo-store
	$(AKASHA) bench engine
	$(AKASHA) bench serve --store $(STORE) --store synthetic:10000 --out benchmarks/results/serve.json
	$(AKASHA) bench scale --sizes 10000,100000 --commits 10000 --out benchmarks/results/scale-100k.json
	$(PY) benchmarks/soak.py --nodes 10000 --commits 10000 --workload recall --sample-every 1000 > benchmarks/results/soak-recall.json
	$(PY) benchmarks/bench_map.py --workdir build/bench-map --out benchmarks/results/map.json

clean:
	rm -rf $(VENV) $(STORE) build *.egg-info
