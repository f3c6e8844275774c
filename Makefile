# The few commands people run. `make demo` and `make test` set everything up
# from nothing (a virtual environment in .venv) on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install inspector chromium demo explore serve test lint eval eval-search eval-kg bench bench-search bench-embedding bench-kg bench-lifecycle bench-sbom bench-server bench-load bench-replicas bench-workers bench-watch bench-explorer reliability notebook clean-db

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

install: $(STAMP)

# The MCP Inspector CLI (npm), an external client the tests drive the server with.
INSPECTOR := .ci/inspector/node_modules/.bin/mcp-inspector
$(INSPECTOR):
	npm install --prefix .ci/inspector --no-audit --no-fund --loglevel=error \
		@modelcontextprotocol/inspector@2.12.0

inspector: $(INSPECTOR)

# Debian's Chromium, the browser the explorer's tests and benchmark drive through
# Playwright (which never downloads a browser of its own here).
CHROMIUM := /usr/bin/chromium
chromium:
	@if [ ! -x $(CHROMIUM) ]; then \
		echo "installing Debian's chromium (apt-get) for the explorer's browser tests"; \
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 || \
		  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }; } || \
		{ echo "error: could not install chromium with apt-get (it needs root and Debian's" \
		       "package lists): install the chromium package so that $(CHROMIUM) exists," \
		       "then run make again" >&2; exit 1; }; \
	fi

## Build the knowledge base from the bundled sample notes into the embedded
## PostgreSQL, then show what it holds.
demo: install
	$(BIN)/python -m extraction rebuild-graph
	$(BIN)/python -m extraction status

## The web explorer on the bundled sample notes: builds them into the embedded
## PostgreSQL when they changed (incremental), then serves it on this machine only,
## without a key (local-only mode); Ctrl-C stops it.
EXPLORE_PORT ?= 8000
explore: install
	$(BIN)/python -m extraction rebuild-graph
	@echo "explorer: open http://127.0.0.1:$(EXPLORE_PORT)/ (local-only mode, no key needed)"
	$(BIN)/python -m server --transport streamable-http --port $(EXPLORE_PORT) --local-explorer

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## Lint, type-check and run the whole test suite (real PostgreSQL, real models,
## real MCP sessions over stdio and HTTP, the MCP Inspector CLI, the explorer in
## Debian's Chromium).
test: lint $(INSPECTOR) chromium
	$(BIN)/python -m pytest

## Extraction quality against KnowledgeNet and wikigold, and the vendor graphs against
## the labelled vendor folders (builds ../shared/data/vendor_corpus into the
## kb_eval_vendor_corpus database first; incremental after the first run).
eval: install
	$(BIN)/python -m evals extraction
	$(BIN)/python -m evals graph

## Rebuild benchmark over ../shared/data/vendor_corpus; writes bench/results/.
bench: install
	$(BIN)/python -m bench.rebuild

## Search quality: SciFact train (BEIR) and the labelled vendor queries (every boost and
## both fusions; builds kb_eval_vendor_corpus first, incremental after the first run).
eval-search: install
	$(BIN)/python -m evals search --dataset ../shared/data/scifact --split train
	$(BIN)/python -m evals vendor-queries

## Search latency at SciFact scale and 100k chunks, and the ingest cost.
bench-search: install
	$(BIN)/python -m bench.search

## Embedding engines: one query and a bulk of chunks through onnx int8 / fp32 and torch
## beside a bare SentenceTransformer.encode; hybrid_search end to end beside txtai's hybrid
## search on SciFact (txtai: the [bench] extra, which this target installs).
bench-embedding: install
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python -m bench.embedding

## Vendor-name disambiguation on the labelled queries (builds ../shared/data/vendor_corpus
## into the kb_eval_vendor_corpus database first; incremental after the first run).
eval-kg: install
	$(BIN)/python -m evals disambiguation --out bench/results/disambiguation.json

## Vendor graph benchmark (synthetic 1k/10k/50k and the largest real vendors).
bench-kg: install
	$(BIN)/python -m bench.kg

## Release cycles: get_lifecycle for one vendor and eol-risk over every cycle, beside
## the bare SQL (builds kb_eval_vendor_corpus first, incremental after the first run).
bench-lifecycle: install
	$(BIN)/python -m bench.lifecycle

## Bills of materials: synthetic 1,000 / 10,000-component bills and the three real ones
## read and checked, and the hand-checked bills' accuracy on the whole corpus.
bench-sbom: install
	$(BIN)/python -m bench.sbom

## Run the exploration notebook against the knowledge base `make demo` built and
## refresh the README picture.
notebook: install
	$(BIN)/python -m kg run-notebook notebooks/explore_vendor_graph.ipynb \
		--output notebooks/explore_vendor_graph.out.ipynb --figure docs/vendor_graph.png

## MCP server latency per tool and mode, over stdio and HTTP, next to the bare calls.
bench-server: install
	$(BIN)/python -m bench.server

## The MCP server under load: 1 client, then 50 for 60 s, then more until something gives
## (its own database kb_bench_load from the sample notes); bench/results/load.md.
bench-load: install
	$(BIN)/python -m bench.load

## Shared server state: admitting a call through PostgreSQL against in-process, and
## 1, 2 and 3 server replicas on one database under the load mix.
bench-replicas: install
	$(BIN)/python -m bench.ratelimit
	$(BIN)/python -m bench.replicas

## A full rebuild of ../shared/data/vendor_corpus by one process, then by 1 and 2 worker
## processes; the queue's cost per unit; an estimate for 100,000 notes on 10 machines
## (about 12 min)
bench-workers: install
	$(BIN)/python -m bench.workers

## The notes watcher on a copy of ../shared/data/vendor_corpus (its own database
## kb_bench_watch): save to answer over 20 edits, idle CPU, 200-note branch switches
## against rebuild-graph (about 10 min)
bench-watch: install
	$(BIN)/python -m bench.watch

## The web explorer in headless Chromium on the shared vendor corpus (builds
## kb_eval_vendor_corpus first, incremental after the first run): first draw of a
## capped and of the whole graph, expanding an entity, the lifecycle page, /api/
## against the same calls in process; screenshots in docs/explorer/.
bench-explorer: install chromium
	$(BIN)/python -m bench.explorer

## Rerun the fault, fuzzing and security tests and the load benchmark; rewrite
## docs/reliability.md from what they measured.
reliability: install $(INSPECTOR)
	$(BIN)/python -m bench.reliability
