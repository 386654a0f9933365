# The two commands of the README. Each bootstraps .venv on first use (created and installed
# from pyproject.toml), reuses it afterwards, and re-installs when pyproject.toml/setup.py change.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: verify test bench clean

$(STAMP): pyproject.toml setup.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kverify needs Python >= 3.11 (set PYTHON=...)")'
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check --upgrade pip "setuptools>=77" wheel
	$(PY) -m pip install -q --disable-pip-version-check -e '.[dev,tlc,clients,java,bench]'
	@touch $(STAMP)

# exit 3 = nothing failed but some check was INCONCLUSIVE (the quick profile caps its searches; its summary
# line says how many): not a failure of `make verify`. `kverify verify --profile ci` is the complete gate.
verify: $(STAMP)
	$(VENV)/bin/kverify verify --profile quick || test $$? -eq 3

test: $(STAMP)
	$(PY) -m pytest -n auto --dist worksteal

bench: $(STAMP)
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info reports/out
