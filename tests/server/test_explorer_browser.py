"""The web explorer in a real browser: Playwright driving Debian's Chromium
(``make chromium`` installs it; never Playwright's own download) against
``python -m server --transport streamable-http`` on the sample notes plus one
hostile note, every page and the flows a person follows."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, sync_playwright
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

from server.auth import KeyStore
from sql.database import Database, open_database
from sql.settings import DatabaseSettings
from tests.fixtures import SAMPLE
from tests.fixtures.server import start_http, stop

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
#: Headless Chromium as root on a machine without a network: no sandbox (root), and
#: nothing that phones home (its connections would be refused and logged)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: A note written to attack the page: markup and script URLs that must show as text.
HOSTILE = """---
title: Hostile Widgets
category: topic
---
# Hostile Widgets

Hostile Corp makes the Widget 3000 in Springfield. Its manual shows this snippet:

```html
<script>window.__pwned = 1</script>
<img src=x onerror="window.__pwned = 2">
<a href="javascript:window.__pwned = 3">click me</a>
```

Visit javascript:window.__pwned=4 or https://example.com/widgets for more.
"""
CAP = 10  # KB_GRAPH_MAX_ENTITIES of the test server: sample vendors go over it


@dataclass(frozen=True)
class Site:
    base: str
    key: str
    db: Database


@pytest.fixture(scope="module")
def explorer_kb(
    pg_admin: str,
    template_db: str,
    embedder: Any,
    extractor: Any,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Database]:
    """The sample notes and the hostile note, built by the real rebuild."""
    import psycopg

    from extraction.rebuild.pipeline import Rebuilder

    corpus = tmp_path_factory.mktemp("explorer") / "notes"
    shutil.copytree(SAMPLE, corpus)
    hostile = corpus / "vendors" / "Hostile Corp"
    hostile.mkdir()
    (hostile / "topic-hostile-widgets.md").write_text(HOSTILE, encoding="utf-8")
    name = f"kb_test_explorer_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_admin, autocommit=True) as conn:
        conn.execute(
            pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                pgsql.Identifier(name), pgsql.Identifier(template_db)
            )
        )
    db = open_database(DatabaseSettings(database_url=make_conninfo(pg_admin, dbname=name)))
    Rebuilder(db, embedder=embedder, extractor=extractor).run(corpus)
    yield db
    with psycopg.connect(pg_admin, autocommit=True) as conn:
        conn.execute(
            pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name))
        )


@pytest.fixture(scope="module")
def site(explorer_kb: Database, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    key = KeyStore(explorer_kb).create(f"browser-{uuid.uuid4().hex[:8]}")
    env = {
        **{k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"},
        "DATABASE_URL": explorer_kb.conninfo,
        "KB_API_KEYS_FILE": str(tmp_path_factory.mktemp("keys") / "keys.json"),
        "KB_GRAPH_MAX_ENTITIES": str(CAP),
        "BMCIS_RATE_LIMIT_MINUTE": "10000",
        "LOG_LEVEL": "WARNING",
    }
    proc, url = start_http(env)
    try:
        yield Site(url.removesuffix("/mcp"), key, explorer_kb)
    finally:
        stop(proc)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM.exists(), (
        f"{CHROMIUM} is missing: `make chromium` installs Debian's Chromium (apt-get)"
    )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


class Watched:
    """A page and what went wrong on it: console errors and uncaught exceptions."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"pageerror: {exc}"))

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def csp_violations(self) -> list[str]:
        return [e for e in self.errors if "Content Security Policy" in e or "Refused to" in e]


def _signed_in(browser: Browser, site: Site, **context: Any) -> Watched:
    ctx = browser.new_context(**({"viewport": {"width": 1280, "height": 800}} | context))
    # the sign-in the page's form makes, through the browser context's own cookie jar
    response = ctx.request.post(
        site.base + "/api/session",
        data=json.dumps({"api_key": site.key}),
        headers={"Content-Type": "application/json"},
    )
    assert response.ok, response.text()
    return Watched(ctx.new_page())


@pytest.fixture()
def watched(browser: Browser, site: Site) -> Iterator[Watched]:
    w = _signed_in(browser, site)
    yield w
    w.page.context.close()


def _open(w: Watched, site: Site, path: str) -> Page:
    w.page.goto(site.base + path)
    w.page.wait_for_selector("body[data-ready]")
    return w.page


def test_every_page_renders_without_errors(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/")
    rows = page.locator("#vendor-rows tr")
    assert rows.count() >= 10
    assert "Microsoft" in page.inner_text("#vendor-rows")
    assert page.inner_text(".build").startswith("Build ")
    page = _open(watched, site, "/vendor?name=Microsoft")
    page.wait_for_selector("#graph[data-drawn]")
    assert page.inner_text("h1") == "Microsoft"
    assert page.locator("#top-entities li").count() >= 5
    assert page.locator("#stats div").count() == 5
    page = _open(watched, site, "/lifecycle?vendor=Apple")
    page.wait_for_selector("#timelines[data-complete]")
    assert page.locator("#timelines section.timeline svg rect").count() > 10
    page = _open(watched, site, "/search?q=iOS%2017%20end%20of%20support")
    assert page.locator("article.hit").count() == 10
    chunk = page.locator("article.hit").first.get_attribute("data-chunk")
    page = _open(watched, site, f"/note?chunk={chunk}")
    assert page.locator(f"#c-{chunk}.target").count() == 1
    assert watched.errors == []


def test_vendor_entity_neighbours_evidence_and_note(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/vendor?name=Microsoft")
    page.wait_for_selector("#graph[data-drawn]")
    before = int(page.get_attribute("#graph", "data-drawn") or 0)
    entity = page.locator("#top-entities button").nth(1)
    name = entity.inner_text()
    entity.focus()
    page.keyboard.press("Enter")  # keyboard: the list is the graph's way in without a mouse
    page.wait_for_selector("#mentions li")
    assert page.inner_text("#entity-name") == name
    page.wait_for_selector("#graph[data-expanded]")
    assert page.evaluate("performance.getEntriesByName('expand').length") == 1
    mention = page.locator("#mentions li").first
    sentence = mention.locator(".sentence").inner_text()
    assert mention.locator("mark").count() >= 1  # the mention is marked in its sentence
    assert int(page.get_attribute("#graph", "data-expanded") or 0) >= 0
    link = mention.locator("a").first
    href = link.get_attribute("href") or ""
    assert href.startswith("/note?chunk=")
    link.click()
    page.wait_for_selector("body[data-ready]")
    chunk = href.split("#c-")[1]
    target = page.locator(f"#c-{chunk}")
    assert "target" in (target.get_attribute("class") or "")
    assert sentence.rstrip("…")[:40] in page.inner_text("main").replace("\n", " ") or sentence
    assert before > 0 and watched.errors == []


def test_the_vendor_search_disambiguates_as_you_type(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/")
    box = page.locator("#vendor-search")
    box.fill("zzyzx qqq")
    page.wait_for_selector("#vendor-not-found")
    box.fill("microsoft corp")
    page.wait_for_selector("#vendor-unique")
    assert page.locator("#vendor-options [role=option]").first.inner_text() == "Microsoft"
    box.press("Enter")
    page.wait_for_url("**/vendor?name=Microsoft")
    page.wait_for_selector("#graph[data-drawn]")


def test_a_path_between_two_entities_is_highlighted(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/vendor?name=Microsoft")
    page.wait_for_selector("#graph[data-drawn]")
    first = page.locator("#top-entities button").nth(0).inner_text()
    second = page.locator("#top-entities button").nth(2).inner_text()
    page.fill("#path-from", second)
    page.fill("#path-to", first)
    page.click("#path-form button[type=submit]")
    page.wait_for_selector("#path-steps")
    steps = page.inner_text("#path-steps")
    assert steps.split(": ", 1)[1].startswith(second) and steps.rstrip().endswith(first)
    page.fill("#path-to", "no such entity at all")
    page.click("#path-form button[type=submit]")
    page.wait_for_selector("#path-result .error")
    assert "INVALID_PARAMS" in page.inner_text("#path-result")


def test_a_vendor_over_the_cap_says_so_and_offers_the_rest(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/vendor?name=Microsoft")
    page.wait_for_selector("#graph[data-drawn]")
    notice = page.inner_text("#graph-count")
    assert notice.startswith(f"Showing {CAP} of ")
    total = int(notice.split(" of ")[1].split(" ")[0])
    assert total > CAP
    assert page.get_attribute("#graph", "data-drawn") == str(CAP)
    page.click("#show-all")
    page.wait_for_selector('#graph[data-mark="whole-graph-drawn"]')
    assert page.inner_text("#graph-count").startswith(f"Showing all {total} entities")
    assert page.get_attribute("#graph", "data-drawn") == str(total)
    weak = page.locator("#show-weak")
    assert not weak.is_checked()  # MENTIONED_WITH starts hidden
    weak.check()


def test_moving_the_as_of_date_changes_statuses(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/lifecycle?vendor=Apple&as_of=2015-06-01")
    page.wait_for_selector("#timelines[data-complete]")

    def statuses() -> list[str]:
        return page.locator("#timelines td.status").all_text_contents()  # in closed <details>

    early = statuses()
    page.fill("#as-of", "2030-06-01")
    page.wait_for_selector('#timelines[data-as-of="2030-06-01"]')
    late = statuses()
    assert len(early) == len(late) > 10
    assert early != late
    assert late.count("end of life") > early.count("end of life")
    page.fill("#product", "Apple iOS")
    page.fill("#version", "17.0.2")
    page.click("#version-form button[type=submit]")
    page.wait_for_selector("#version-result")
    assert "17.0.2 is in Apple iOS 17" in page.inner_text("#version-result")
    page.fill("#as-of", "2016-01-01")
    page.wait_for_selector('#timelines[data-as-of="2016-01-01"]')
    page.fill("#within-days", "3650")
    page.locator("#within-days").press("Enter")
    page.wait_for_selector("#risk-table")
    assert "Apple" in page.inner_text("#risk-table")
    assert watched.errors == []


def test_search_marks_the_query_and_links_notes_and_vendors(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/search")
    page.fill("#query", "Swift programming language")
    page.locator("#query").press("Enter")
    page.wait_for_selector("body[data-searched]")
    hit = page.locator("article.hit").first
    assert hit.locator("mark").count() >= 1
    assert (hit.locator("a.note-link").get_attribute("href") or "").startswith("/note?chunk=")
    assert (hit.locator("a.vendor-link").get_attribute("href") or "").startswith("/vendor?name=")
    assert "q=Swift" in page.url


def test_a_hostile_note_renders_as_text(watched: Watched, site: Site) -> None:
    page = _open(watched, site, "/search?q=Hostile%20Widgets%20script%20snippet")
    hit = page.locator("article.hit", has_text="Hostile").first
    hit.locator("a.note-link").click()
    page.wait_for_selector("#note-title")
    text = page.inner_text("main")
    assert "<script>window.__pwned = 1</script>" in text
    assert '<img src=x onerror="window.__pwned = 2">' in text
    assert page.evaluate("window.__pwned") is None
    hrefs = page.eval_on_selector_all("a", "links => links.map(a => a.getAttribute('href'))")
    assert not any(h and h.strip().lower().startswith("javascript") for h in hrefs), hrefs
    assert "https://example.com/widgets" in hrefs  # http(s) stays a link
    scripts = page.eval_on_selector_all("script", "s => s.map(x => x.getAttribute('src'))")
    assert all(src and src.startswith("/static/") for src in scripts), scripts
    assert page.locator("img").count() == 0
    page = _open(watched, site, "/vendor?name=Hostile%20Corp")
    page.wait_for_selector("#graph[data-drawn], #graph-notice .empty")
    assert page.evaluate("window.__pwned") is None
    assert watched.csp_violations() == []


def test_a_revoked_key_is_refused_on_the_next_request(browser: Browser, site: Site) -> None:
    name = f"revoked-{uuid.uuid4().hex[:8]}"
    key = KeyStore(site.db).create(name)
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    page = ctx.new_page()
    try:
        page.goto(site.base + "/")
        page.wait_for_selector("#signed-out, .signin")  # no key yet: the page asks for one
        page.fill("#api-key", key)
        page.locator("#api-key").press("Enter")
        page.wait_for_selector("text=Signed in")
        page.wait_for_selector("#vendor-rows tr")
        cookies = {c["name"]: c for c in ctx.cookies()}
        assert cookies["kb_session"]["httpOnly"] and cookies["kb_session"]["sameSite"] == "Strict"
        assert key not in cookies["kb_session"]["value"]
        assert page.evaluate("document.cookie") == ""  # the page's scripts cannot read it
        KeyStore(site.db).revoke(name)
        page.fill("#vendor-search", "microsoft")
        page.wait_for_selector("#signed-out")
        assert "revoked" in page.inner_text("#signed-out")
        page.reload()
        page.wait_for_selector(".signin")  # the session is gone
    finally:
        ctx.close()


def test_phone_width_and_keyboard(browser: Browser, site: Site) -> None:
    w = _signed_in(browser, site, viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        for path in ("/", "/vendor?name=Apple", "/lifecycle?vendor=Apple", "/search?q=swift"):
            page = _open(w, site, path)
            overflow = page.evaluate("document.documentElement.scrollWidth")
            assert overflow <= 392, (path, overflow)
        page = _open(w, site, "/")
        page.keyboard.press("Tab")  # the first stop is the brand link, then the pages
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Vendors"
        assert w.errors == []
    finally:
        w.page.context.close()


def test_local_only_mode_says_so_on_the_page(
    browser: Browser, explorer_kb: Database, tmp_path: Path
) -> None:
    env = {
        **{k: v for k, v in os.environ.items() if k != "BMCIS_API_KEY"},
        "DATABASE_URL": explorer_kb.conninfo,
        "KB_API_KEYS_FILE": str(tmp_path / "keys.json"),
        "LOG_LEVEL": "WARNING",
    }
    proc, url = start_http(env, None, "--local-explorer")
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        page = ctx.new_page()
        page.goto(url.removesuffix("/mcp") + "/")
        page.wait_for_selector("#vendor-rows tr")  # no key asked for
        assert "Local-only mode: no key needed on this machine" in page.inner_text("#local-only")
        assert page.locator(".signin").count() == 0
    finally:
        ctx.close()
        stop(proc)


def test_a_new_build_shows_as_updated_just_now(browser: Browser, site: Site) -> None:
    """Runs last in the module: it adds a graph build."""
    w = _signed_in(browser, site)
    try:
        w.page.context.add_init_script("window.KB_BUILD_POLL_MS = 300")
        page = _open(w, site, "/")
        page.wait_for_selector(".build[data-build]")
        with site.db.connect(autocommit=True) as conn:
            conn.execute(
                "INSERT INTO graph_builds (status, corpus_root, finished_at) "
                "VALUES ('complete', 'test', now())"
            )
        page.wait_for_selector("#build-updated", timeout=15_000)
        assert "updated just now" in page.inner_text("#build-updated")
    finally:
        w.page.context.close()
