# The few commands people run. `make demo` and `make test` set everything up
# from nothing (a virtual environment in .venv) on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install inspector demo serve test lint eval eval-search eval-kg bench bench-search bench-embedding bench-kg bench-lifecycle bench-sbom bench-server bench-load bench-replicas bench-workers bench-watch reliability notebook clean-db

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

## Build the knowledge base from the bundled sample notes into the embedded
## PostgreSQL, then show what it holds.
demo: install
	$(BIN)/python -m extraction rebuild-graph
	$(BIN)/python -m extraction status

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

## Lint, type-check and run the whole test suite (real PostgreSQL, real models,
## real MCP sessions over stdio and HTTP, the MCP Inspector CLI).
test: lint $(INSPECTOR)
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

## Rerun the fault, fuzzing and security tests and the load benchmark; rewrite
## docs/reliability.md from what they measured.
reliability: install $(INSPECTOR)
	$(BIN)/python -m bench.reliability
