"""Explorer benchmark: ``python -m bench.explorer [--repeats N]``.

On the shared vendor corpus (database ``kb_eval_vendor_corpus``, brought up to date
first, as the evaluation harnesses do), ``python -m server --transport
streamable-http`` serves the explorer and headless Chromium (Debian's, through
Playwright) opens its pages; times come from the performance marks the pages set,
from navigation start (or from the click) to the graph drawn. In one run, medians
(p50) and p95 over ``--repeats`` of:

1. **capped vendor page**: the vendors with the most entities (both over the cap of
   100 entities / 500 relationships), from navigation to the capped graph drawn
   (``graph-drawn``); the first visit (every cache cold) is reported apart;
2. **expand**: choosing an entity (its neighbours added to the graph, its mentions
   listed), from the click to the graph redrawn (``expand``);
3. **whole graph** of the largest vendor: from the click on "Show all" to the whole
   graph drawn, then an expand on it (does it stay interactive);
4. **lifecycle page** of the vendor with the most release cycles (``lifecycle-drawn``);
5. **/api/ against the MCP tool in process**: the same tool calls through
   ``/api/tools/<name>`` and through the MCP tool in this process (and ``Service.call``
   beside them; how each is timed: :mod:`bench.explorer_api`), on the same database
   with the same settings, interleaved; cached (the default server) and uncached (a
   second server with every cache off, against in-process ones without caches).
   ``--api-only`` runs this part alone.

Targets: capped page p50 <= 1.0 s, expand <= 200 ms, whole graph of the largest vendor
<= 3 s to first draw, /api/ <= 1.2 x the MCP tool in process, lifecycle page <= 1.5 s.
Screenshots of every page go to ``docs/explorer/`` (``--no-screenshots``: left as they
are). Results: ``bench/results/explorer.json`` and ``explorer.md``. Needs
``/usr/bin/chromium`` (``make chromium``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from rich.console import Console
from rich.table import Table

from bench import (
    REPO,
    RESULTS,
    bench_queries,
    machine,
    measuring_parser,
    parse_measuring,
    write_results,
)
from bench.explorer_api import compare_api
from evals.corpus import build_vendor_corpus, default_corpus, eval_database
from search.embedder import Embedder
from search.metrics import percentile
from server.auth import KeyStore
from sql.database import Database

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TARGETS = {"capped_ms": 1000.0, "expand_ms": 200.0, "whole_ms": 3000.0, "ratio": 1.2}
TARGETS["lifecycle_ms"] = 1500.0
#: The columns of the /api/ comparison (bench.explorer_api.compare_api).
API_COLUMNS = (
    "api_p50_ms",
    "api_httpx_p50_ms",
    "mcp_p50_ms",
    "service_p50_ms",
    "ratio",
    "ratio_to_service",
)
SHOTS = REPO / "docs" / "explorer"
LIMITS = {"BMCIS_RATE_LIMIT_MINUTE": "1000000", "BMCIS_RATE_LIMIT_HOUR": "10000000"}
LIMITS["BMCIS_RATE_LIMIT_DAY"] = "100000000"
NO_CACHES = {"VENDOR_CACHE_TTL": "0", "SEARCH_CACHE_TTL": "0"}


def stats(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values, 50), 1),
        "p95": round(percentile(values, 95), 1),
        "n": len(values),
    }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(db: Database, extra: dict[str, str]) -> Iterator[str]:
    """``python -m server --transport streamable-http`` on ``db``; its base URL."""
    port = _free_port()
    env = {
        **{k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"},
        "DATABASE_URL": db.conninfo,
        "KB_API_KEYS_FILE": str(Path(tempfile.mkdtemp()) / "keys.json"),
        "LOG_LEVEL": "WARNING",
        **LIMITS,
        **extra,
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "server", "--transport", "streamable-http", "--port", str(port)],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise SystemExit(proc.stderr.read().decode() if proc.stderr else "server exited")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start in 180 s") from None
                time.sleep(0.3)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def api_calls(largest: str, second: str) -> list[tuple[str, dict[str, Any]]]:
    """The tool calls /api/ is compared on: each page's main call."""
    return [
        ("find_vendor_info", {"vendor_name": largest, "response_mode": "full"}),
        ("find_vendor_info", {"vendor_name": second, "response_mode": "metadata"}),
        ("get_entity_neighbors", {"vendor_name": second, "entity": second, "limit": 50}),
        ("get_lifecycle", {"vendor_name": second, "response_mode": "preview"}),
        ("semantic_search", {"query": "end of support for the LTS release", "page_size": 10}),
        ("list_vendors", {"page_size": 100}),
    ]


def _mark(page: Any, name: str) -> float:
    value = page.evaluate(
        "name => { const m = performance.getEntriesByName(name); "
        "return m.length ? m[m.length - 1].startTime : null; }",
        name,
    )
    if value is None:
        raise SystemExit(f"the page set no performance mark {name!r}")
    return float(value)


def _measure(page: Any, name: str) -> float:
    value = page.evaluate(
        "name => { const m = performance.getEntriesByName(name, 'measure'); "
        "return m.length ? m[m.length - 1].duration : null; }",
        name,
    )
    if value is None:
        raise SystemExit(f"the page set no performance measure {name!r}")
    return float(value)


def expand(page: Any, i: int, answered: list[float]) -> float:
    """Choose the ``i``-th top entity (cycling); ms from the click to the graph redrawn,
    and (into ``answered``) to both answers in hand. (Waits with selectors: the pages'
    policy refuses the eval a waiting function needs.)"""
    page.evaluate("document.querySelector('#graph').removeAttribute('data-expanded')")
    buttons = page.locator("#top-entities button")
    buttons.nth(i % max(1, buttons.count())).click()
    page.wait_for_selector("#graph[data-expanded]")
    answered.append(_mark(page, "expand-answered") - _mark(page, "expand-start"))
    return _measure(page, "expand")


def browse(
    base: str, key: str, vendors: list[str], most_cycles: str, repeats: int, shots: bool
) -> dict[str, Any]:
    """Page timings in headless Chromium (and the screenshots)."""
    from playwright.sync_api import sync_playwright

    results: dict[str, Any] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx = browser.new_context(viewport={"width": 1280, "height": 800})
        signed = ctx.request.post(
            base + "/api/session",
            data=json.dumps({"api_key": key}),
            headers={"Content-Type": "application/json"},
        )
        if not signed.ok:
            raise SystemExit(f"sign-in refused: {signed.text()}")
        page = ctx.new_page()

        def open_page(path: str, ready: str) -> None:
            page.goto(base + path)
            page.wait_for_selector(ready, timeout=60_000)

        for vendor in vendors:
            url = f"/vendor?name={quote(vendor)}"
            times: list[float] = []
            expands: list[float] = []
            answers: list[float] = []
            first: float | None = None
            for i in range(repeats + 1):
                open_page(url, "#graph[data-drawn]")
                drawn = _mark(page, "graph-drawn")
                if first is None:
                    first = drawn
                    continue
                times.append(drawn)
                expands.append(expand(page, i, answers))
            counts = page.inner_text("#graph-count")
            results[f"capped page: {vendor}"] = {
                **stats(times),
                "first_visit_ms": round(first or 0, 1),
                "shown": counts,
            }
            results[f"expand: {vendor}"] = {
                **stats(expands),
                "shown": f"answers in hand after {percentile(answers, 50):.0f} ms (p50)",
            }
        largest = vendors[0]
        whole: list[float] = []
        whole_expand: list[float] = []
        whole_answers: list[float] = []
        drawn_count = 0
        for i in range(repeats):
            open_page(f"/vendor?name={quote(largest)}", "#graph[data-drawn]")
            page.click("#show-all")
            page.wait_for_selector('#graph[data-mark="whole-graph-drawn"]', timeout=60_000)
            whole.append(_mark(page, "whole-graph-drawn") - _mark(page, "whole-requested"))
            drawn_count = int(page.get_attribute("#graph", "data-drawn") or 0)
            whole_expand.append(expand(page, i, whole_answers))
        results[f"whole graph: {largest}"] = {**stats(whole), "entities_drawn": drawn_count}
        results[f"expand on the whole graph: {largest}"] = {
            **stats(whole_expand),
            "shown": f"answers in hand after {percentile(whole_answers, 50):.0f} ms (p50)",
        }
        life: list[float] = []
        for _ in range(repeats):
            open_page(f"/lifecycle?vendor={quote(most_cycles)}", "#timelines[data-complete]")
            life.append(_mark(page, "lifecycle-drawn"))
        results[f"lifecycle page: {most_cycles}"] = {
            **stats(life),
            "shown": page.evaluate("document.querySelector('#cycle-count').firstChild.textContent"),
        }
        if shots:
            screenshots(browser, base, key, vendors[1])
        browser.close()
    return results


def _shot(page: Any, url: str, ready: str, file: str, then: Callable[[], None] | None) -> None:
    page.goto(url)
    page.wait_for_selector(ready, timeout=60_000)
    if then is not None:
        then()
    page.wait_for_timeout(400)
    page.screenshot(path=str(SHOTS / file))


def screenshots(browser: Any, base: str, key: str, vendor: str) -> None:
    """Every page at 1280x800, and the vendor page at phone width, in docs/explorer/."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    session = {
        "data": json.dumps({"api_key": key}),
        "headers": {"Content-Type": "application/json"},
    }
    vendor_url = f"{base}/vendor?name={quote(vendor)}"
    phone = browser.new_context(viewport={"width": 390, "height": 844})
    phone.request.post(base + "/api/session", **session)
    _shot(phone.new_page(), vendor_url, "#graph[data-drawn]", "vendor-phone.png", None)
    phone.close()
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.request.post(base + "/api/session", **session)
    page = ctx.new_page()

    def choose_entity() -> None:
        page.locator("#top-entities button").nth(1).click()
        page.wait_for_selector("#mentions li")
        page.evaluate("window.scrollTo(0, 0)")

    _shot(page, base + "/", "#vendor-rows tr", "vendors.png", None)
    _shot(page, vendor_url, "#graph[data-drawn]", "vendor.png", choose_entity)
    note = page.locator("#mentions a").first.get_attribute("href") or "/note?chunk=1"
    _shot(page, base + note, "#note-title", "note.png", None)
    life = f"{base}/lifecycle?vendor={quote(vendor)}"
    _shot(page, life, "#timelines[data-complete]", "lifecycle.png", None)
    found = base + "/search?q=" + quote("end of extended support")
    _shot(page, found, "article.hit", "search.png", None)
    ctx.close()


def main(argv: list[str] | None = None) -> int:
    parser = measuring_parser(
        "explorer", __doc__, repeats=15, what="page loads per measure", corpus=default_corpus()
    )
    parser.add_argument("--no-screenshots", action="store_true", help="leave docs/explorer/")
    parser.add_argument(
        "--api-only",
        action="store_true",
        help="only part 5, /api/ against the MCP tool in process (no browser); its results "
        "go to --out, which then must be given",
    )
    args = parse_measuring(parser, argv)
    if args.api_only and args.out == RESULTS / "explorer.json":
        parser.error("--api-only writes part of the results: give --out FILE")
    if not args.api_only and not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: `make chromium` installs Debian's Chromium")
    console = Console()
    db = eval_database()
    console.print(f"bringing {db.description} up to date with {args.corpus} ...")
    build_vendor_corpus(db, args.corpus, quiet=True)
    with db.connect() as conn:
        largest = [r["name"] for r in conn.execute(bench_queries()["explorer_largest_vendors"])]
        top = conn.execute(bench_queries()["explorer_most_cycles"]).fetchone()
    assert top is not None and len(largest) == 2
    most_cycles = top["vendor"]
    store = KeyStore(db)
    key = store.create(f"bench-explorer-{os.getpid()}")
    embedder = Embedder.from_settings()
    calls = api_calls(*largest)
    try:
        with serving(db, {}) as base:
            pages: dict[str, Any] = {}
            if not args.api_only:
                console.print(f"explorer at {base}; pages in headless Chromium ...")
                pages = browse(
                    base, key, largest, most_cycles, args.repeats, not args.no_screenshots
                )
            console.print("/api/ against the MCP tool in process ...")
            cached = compare_api(base, db, embedder, key, calls, args.repeats, caches=True)
        with serving(db, NO_CACHES) as base:
            uncached = compare_api(base, db, embedder, key, calls, args.repeats, caches=False)
    finally:
        store.revoke(f"bench-explorer-{os.getpid()}")
    results = {
        "machine": machine(),
        "corpus": str(args.corpus),
        "repeats": args.repeats,
        "targets": TARGETS,
        "pages": pages,
        "api_cached": cached,
        "api_uncached": uncached,
        "screenshots": None if args.no_screenshots else str(SHOTS.relative_to(REPO)),
    }
    table = Table(title="explorer in headless Chromium (ms from the performance marks)")
    for col in ("measure", "p50", "p95", "n", "note"):
        table.add_column(col)
    for label, row in pages.items():
        note = row.get("shown") or ""
        if "first_visit_ms" in row:
            note = f"first visit {row['first_visit_ms']} ms; {note}"
        if "entities_drawn" in row:
            note = f"{row['entities_drawn']} entities"
        table.add_row(label, str(row["p50"]), str(row["p95"]), str(row["n"]), note)
    console.print(table)
    api = Table(title="/api/ against the MCP tool in process (p50 ms)")
    for col in ("call", "caches", *API_COLUMNS):
        api.add_column(col)
    for label in cached:
        for caches, rows in (("on", cached), ("off", uncached)):
            row = rows[label]
            api.add_row(label[:60], caches, *(str(row[k]) for k in API_COLUMNS))
    console.print(api)
    write_results(args.out, results)
    md = args.out.with_suffix(".md")
    md.write_text("\n".join(report(results)), encoding="utf-8")
    console.print(f"results: {args.out} and {md}")
    return 0


def report(results: dict[str, Any]) -> list[str]:
    """The markdown report of a run."""
    lines = [
        "# Explorer benchmark (`python -m bench.explorer`)",
        "",
        f"Corpus {results['corpus']}, {results['repeats']} repeats per measure, "
        f"{results['machine']['cpus']} CPUs; headless Chromium (Debian), times from the pages' "
        "performance marks. Targets: capped page <= 1,000 ms, expand <= 200 ms, whole graph "
        "<= 3,000 ms, lifecycle page <= 1,500 ms, /api/ <= 1.2 x the MCP tool in process.",
        "",
        "| measure | p50 ms | p95 ms | note |",
        "|---|---|---|---|",
    ]
    for label, row in results["pages"].items():
        note = row.get("shown", "")
        if "first_visit_ms" in row:
            note = f"first visit {row['first_visit_ms']} ms; {note}"
        if "entities_drawn" in row:
            note = f"{row['entities_drawn']} entities drawn"
        lines.append(f"| {label} | {row['p50']} | {row['p95']} | {note} |")
    lines += [
        "",
        "/api/ (`http.client`, keep-alive; `httpx2` beside it) against the MCP tool in "
        "process (an SDK client session in memory) and `Service.call`, p50 ms; ratio = "
        "/api/ / MCP tool.",
        "",
        "| call | caches | " + " | ".join(API_COLUMNS) + " |",
        "|---|---|" + "---|" * len(API_COLUMNS),
    ]
    for label, c in results["api_cached"].items():
        for caches, row in (("on", c), ("off", results["api_uncached"][label])):
            cells = " | ".join(str(row[k]) for k in API_COLUMNS)
            lines.append(f"| `{label}` | {caches} | {cells} |")
    return [*lines, ""]


if __name__ == "__main__":
    raise SystemExit(main())
