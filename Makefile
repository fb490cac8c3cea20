# mlagen: `make test` is what CI runs (.ci/run); `make kernels` and
# `make golden` regenerate what is checked in; `make bench` prints the speed
# figures the issues ask for.
GO      ?= go
BIN     := bin/mlagen
VENV    := .venv
PY      := $(VENV)/bin/python3
# The Triton the lent GPU runs (DESIGN.md); the budget model is calibrated
# against it, so CI compiles with exactly this version.
TRITON  := triton==3.6.0
TARGETS := sm90:sm_90 sm120:sm_120

.PHONY: build test gotest kernels-check pycheck calibrate interp qdesc kernels golden bench deps clean

build:
	$(GO) build -o $(BIN) ./cmd/mlagen

test: build gotest kernels-check pycheck calibrate interp qdesc
	@echo "make test: all checks passed"

gotest:
	$(GO) vet ./...
	$(GO) test ./...

# The checked-in kernels and budget inputs must be what the generator emits.
kernels-check: build
	@for tt in $(TARGETS); do d=$${tt%%:*}; t=$${tt##*:}; \
	  $(BIN) emit --target $$t --check >/dev/null || { $(BIN) emit --target $$t --check; exit 1; }; \
	  $(BIN) budget --target $$t --json | cmp -s - calib/$$d.budget.json || \
	    { echo "calib/$$d.budget.json is stale: run 'make kernels'"; exit 1; }; \
	done
	@echo "kernels/ and calib/*.budget.json are up to date"

# Every emitted file compiles as Python and is black-formatted.
pycheck: $(VENV)/.done
	$(PY) -m py_compile kernels/*/*.py golden/emit/*/*.py calib/*.py gpu/*.py
	$(VENV)/bin/black --check -q kernels golden/emit calib gpu
	@echo "py_compile and black: ok"

# The budget model against the real compiler, for every default variant,
# with no GPU: Triton cross-compiles for an explicit target.
calibrate: build $(VENV)/.done
	@for tt in $(TARGETS); do d=$${tt%%:*}; \
	  $(PY) calib/calibrate.py --budget calib/$$d.budget.json --kernel kernels/$$d/sparse_mla_mma.py \
	    --known calib/known-$$d.txt --json $(VENV)/calib-$$d.json > $(VENV)/calib-$$d.log \
	    || { cat $(VENV)/calib-$$d.log; exit 1; }; tail -n 1 $(VENV)/calib-$$d.log; \
	done

# Each default variant on a tiny case under the Triton interpreter, where
# torch is installed (CI installs it; `make deps TORCH=1` does locally).
interp: $(VENV)/.done
	@if $(PY) -c 'import torch' 2>/dev/null; then \
	  for d in sm90 sm120; do TRITON_INTERPRET=1 $(PY) calib/interp.py kernels/$$d/harness.py 2>/dev/null \
	    | grep -v '^mma\|^simt' || exit 1; done; \
	else echo "interp: skipped (no torch in $(VENV); run 'make deps TORCH=1')"; fi

# The ws_* kernels read Q through a host-side TMA descriptor; check on the
# CPU that it covers Q's heads in order for every layout the harness tests
# (the kernels themselves only run on a GPU).
qdesc: $(VENV)/.done
	@if $(PY) -c 'import torch' 2>/dev/null; then $(PY) calib/qdesc.py kernels/sm90; \
	else echo "qdesc: skipped (no torch in $(VENV); run 'make deps TORCH=1')"; fi

kernels: build
	@for tt in $(TARGETS); do d=$${tt%%:*}; t=$${tt##*:}; \
	  $(BIN) emit --target $$t | tail -n 1; $(BIN) budget --target $$t --json > calib/$$d.budget.json; done

golden:
	$(GO) test ./... -update

bench:
	$(GO) test -run '^$$' -bench . -benchtime 5x ./gen ./patches

$(VENV)/.done:
	$(MAKE) deps

deps:
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q "$(TRITON)" black "numpy<2.3"
	@if [ -n "$(TORCH)" ]; then $(VENV)/bin/pip install -q torch==2.11.0 "numpy<2.3"; fi
	touch $(VENV)/.done

clean:
	rm -rf bin $(VENV)
