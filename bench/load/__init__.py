"""MCP server under load: ``python -m bench.load [--quick]`` (``make bench-load``).

A bounded load generator on loopback. It builds (or brings up to date, with the real
incremental rebuild) a knowledge base of its own, ``kb_bench_load``, from the bundled
sample corpus ``samples/vendor_notes`` on the configured PostgreSQL (``DATABASE_URL``,
else the embedded default server); the user's knowledge base is never touched. It starts a
real ``python -m server --transport streamable-http`` subprocess on 127.0.0.1 with a keys
file of its own and one API key per simulated client, and drives it with real MCP client
sessions (the SDK's ``Client`` over streamable HTTP) spread over worker processes.

Every client runs a closed loop (its next call when the previous one returns) over a mix
of all seven tools and every mode: semantic_search in the four response modes (some with
``fields``, some following the cursor to page 2), find_vendor_info in the four modes with
and without relationships, get_chunk on chunk ids its searches returned, list_vendors
with paging, find_entity_path and get_entity_neighbors on vendor / entity pairs read from
the database at start-up, get_server_metrics. Most searches repeat popular queries (cache
hits), the rest are fresh variations (cache misses); the observed share of
``execution_context.cache_hit`` is reported. Every call has a hard timeout (counted as a
TIMEOUT error) and every phase a hard deadline.

Measured per call: tool, mode, start, end, latency, the outcome (``ok``, the envelope's
``error.code``, or the exception type of a transport failure or TIMEOUT), the cache hit
and the time inside the server's tool code (``execution_context.execution_time_ms``).
Reported per phase and tool (and tool and mode): calls, p50 / p95 / p99 latency, p99/p50,
errors by code, cache-hit share; per phase: throughput (calls/s) and the CPU of the server
process, of PostgreSQL's backends for this database, of the client processes and of the
machine (psutil).

Phases of one run: (1) a single-client baseline (15 s); (2) the target run, 50 clients for
60 s; (3) escalation, 100, 200, 400, 800 clients for 20 s each, until something gives:
a call timed out, unintended errors above 1 % of calls, a tool's p99 above 5 x its p50,
throughput below 3/4 of the best phase so far, or the server process died. The first
level where throughput rose by less than 5 % over the previous one is named as the
saturation point (the escalation goes on). For the level that gave, the report names the
tools and codes, the latency growth, and where the CPU went.

Rate limits (BMCIS_RATE_LIMIT_MINUTE/_HOUR/_DAY) are set to ``--key-limit`` calls, more
than any normal key makes in the run, so the normal mix is never limited. One extra client
(4 calls/s) uses a key whose budget was spent before the measured phases (the spending,
on the normal mix from 8 sessions, is the unmeasured warm-up), so its RATE_LIMIT answers
are intended, counted apart, and show that one key's limit does not touch the others.

Targets (the target run): zero errors other than those intended rate limits; p99 <= 5 x
p50 for every tool; throughput reported against the single-client baseline of the same
run. Results: ``bench/results/load.json`` (everything, with machine and settings) and
``load.md``. Tracebacks in the server's stderr (kept in a file, copied next to the results
when there are any) are failures: exit status 1, as for missed targets with ``--strict``.

The client side is reusable: :func:`bench.load.clients.run_clients` runs N sessions for a
while and returns one :class:`bench.load.records.CallRecord` per call,
:func:`bench.load.stats.summarize` turns records into the statistics.
"""
