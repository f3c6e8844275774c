"""The extraction CLI on hostile files, run as a user runs it: real subprocesses and a
real database.

A corpus of good notes gets company: a binary file named ``.md``, a NUL byte, invalid
UTF-8 (cp1252 text, and byte garbage), a 24 MiB note (over the 5 MiB limit: big enough
to make the point, skipped by its size so CI stays fast), markdown nested thousands of
levels deep (block quotes and lists on one line and over many lines, brackets,
emphasis, front matter 5,000 and 40,000 levels deep), a YAML alias bomb, symlink loops
(files pointing at each other, a link to itself, a folder link to its parent), a
dangling symlink, a symlink out of the corpus, a FIFO, an empty file, front matter
only, malformed, unterminated and non-mapping front matter, a NUL escape and a
``!!python`` tag in front matter, a kilobytes-long front-matter vendor and "entity
names", file and folder names that are not UTF-8, and a path too long to index.

What it proves:

- ``rebuild-graph`` finishes with exit 0 and no traceback; every bad file gets exactly
  the problem it should (kind, a one-line message, skipped or kept) in ``--json`` and as
  one line of the printed table; every good note is built with its text (nothing lost),
  no stored name is too long to query, and a second run is up to date and changes
  nothing in the database;
- ``extract FILE --json`` on every hostile file prints valid JSON, or one ``error:``
  line with exit 2 (never a traceback), quickly: spaCy's tokenizer used to take minutes
  on a long run of brackets (see :class:`extraction.nlp.extractor._TailSuffixSearch`);
- ``extract - --json`` on fuzzed standard input (hypothesis: text, markdown, binary) is
  the same, and the faster tokenizer splits text exactly as spaCy's own.

Figures go to the reliability report (``fuzz_extraction_cli``).
"""

from __future__ import annotations

import json
import os
import random
import string
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import psycopg
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokenizer import Tokenizer

from extraction.names import MAX_NAME_CHARS
from extraction.nlp.extractor import _TailSuffixSearch
from sql.database import Database
from tests.fixtures import REPO
from tests.fixtures.reliability import fingerprint, record

pytestmark = pytest.mark.slow

HUGE_BYTES = 24 * 1024 * 1024
DEEP = 5_000  # nesting levels on one line
DEEP_LINES = 1_000  # list levels over as many lines (each line one tab deeper)
# block quote levels over as many lines: each ">" is a token, so the text has
# DEEP_QUOTE_LINES**2 / 2 of them, and `extract` (spaCy on the whole text) takes ~0.3 ms each
DEEP_QUOTE_LINES = 300
DEEPEST_YAML = 40_000  # libyaml crashed from ~30,000 levels
EXTRACT_TIMEOUT_S = 120
PWNED = "kb-fuzz-pwned"  # what a !!python tag would create if YAML ran code


@dataclass(frozen=True)
class Hostile:
    """A file of the corpus and what is expected of it."""

    kind: str | None  # the problem it gets; None: none
    action: str | None = None  # how the problem's action starts: "skipped" or "kept"
    extract: str | None = None  # what `extract FILE` says on stderr; None: valid JSON
    built: bool = False  # a document in the knowledge base (with chunks)


SKIPPED_BINARY = Hostile("binary", "skipped", "binary data")

GOOD = {
    "vendors/Acme/rockets.md": (
        "---\ntitle: Acme rockets\n---\n# Acme rockets\n\nAcme Corporation makes the "
        "Roadrunner 3000 rocket sled. Wile E. Coyote works for Acme Corporation.\n",
        "Roadrunner 3000 rocket sled",
    ),
    "vendors/Acme/support.md": (
        "# Acme support\n\nAcme support for the Roadrunner 3000 ends in 2031. Acme is "
        "headquartered in Phoenix.\n",
        "ends in 2031",
    ),
    "vendors/Globex/overview.md": (
        "# Globex\n\nGlobex Corporation was founded by Hank Scorpio in Cypress Creek.\n",
        "founded by Hank Scorpio",
    ),
    "vendors/Initech/tps.md": (
        "# Initech\n\nInitech produces TPS reports. Bill Lumbergh works for Initech.\n",
        "produces TPS reports",
    ),
}


def _junk(n: int, seed: int) -> str:
    """Letters that do not compress: an index entry of them takes its full size."""
    rng = random.Random(seed)
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(n))


def write_hostile_corpus(root: Path) -> dict[str, Hostile]:
    """The corpus; returns what is expected of each hostile file, by stored path."""
    for rel, (text, _) in GOOD.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    h = root / "vendors" / "Hostile"
    h.mkdir(parents=True)
    expect: dict[str, Hostile] = {}

    def put(name: str, data: bytes | str, hostile: Hostile) -> None:
        path = h / name
        if isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)
        expect[f"vendors/Hostile/{name}"] = hostile

    built = Hostile(None, built=True)
    front_matter_error = Hostile("front_matter_error", "kept", built=True)
    put("binary.md", bytes(range(256)) * 64, SKIPPED_BINARY)
    put("nul.md", b"# Text\n\nUntil a NUL\x00 byte.\n", SKIPPED_BINARY)
    put("controls.md", b"# Ctl\n\n" + bytes(range(1, 32)) * 50, Hostile("binary", "skipped"))
    put(
        "cp1252.md",
        "# Café\n\nNotes about the café vendor, déjà vu.\n".encode("cp1252"),
        Hostile("not_utf8", "kept", "not UTF-8", built=True),
    )
    put(
        "garbage-utf8.md",
        b"# Broken\n\n" + b"\xff\xfe\xc3\x28\xa0\xa1\xe2\x28\xa1\xf0\x28\x8c\xbc\x81\x8d" * 200,
        Hostile("binary", "skipped", "not UTF-8"),
    )
    line = b"Acme Corporation makes rocket sleds and anvils for desert use. " * 16 + b"\n"
    put(
        "huge.md",
        line * (HUGE_BYTES // len(line) + 1),
        Hostile("too_large", "skipped", "over 4,000,000 bytes"),
    )
    put("deep-quote.md", "# Deep quote\n\n" + "> " * DEEP + "Acme at the bottom.\n", built)
    put(
        "deep-quote-lines.md",
        "# Deep quotes\n\n" + "".join(">" * i + f" level {i}\n" for i in range(DEEP_QUOTE_LINES)),
        built,
    )
    put("deep-list.md", "# Deep lists\n\n" + "- " * DEEP + "x\n\n" + "1. " * DEEP + "y\n", built)
    put(
        "deep-list-lines.md",
        "# Deep list\n\n" + "".join("\t" * i + f"- level {i}\n" for i in range(DEEP_LINES)),
        built,
    )
    put(
        "deep-brackets.md",
        "# Brackets\n\n"
        + "[" * 2000
        + "a"
        + "](x)" * 2000
        + "\n\n"
        + "*" * 2000
        + "b"
        + "*" * 2000
        + "\n\n"
        + "<div>" * 2000
        + "c"
        + "</div>" * 2000
        + "\n",
        built,
    )
    put("deep-yaml.md", f"---\nx: {'[' * 50}{']' * 50}\n---\n# Nested YAML\n\nBody.\n", built)
    for n in (DEEP, DEEPEST_YAML):
        put(
            f"deep-yaml-{n}.md",
            f"---\nx: {'[' * n}{']' * n}\n---\n# Deep YAML\n\nBody after deep YAML.\n",
            front_matter_error,
        )
    bomb = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for prev, name in zip("abcdef", "bcdefg", strict=True):
        bomb.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    put("yaml-bomb.md", "---\n" + "\n".join(bomb) + "\n---\n# Bomb\n\nBody.\n", built)
    put("empty.md", b"", built)
    put("front-matter-only.md", "---\ntitle: Only front matter\n---\n", built)
    put(
        "malformed-front-matter.md",
        "---\ntitle: [unclosed\n  : : :\n---\n# Malformed\n\nThe body survives.\n",
        front_matter_error,
    )
    put(
        "unterminated-front-matter.md",
        "---\ntitle: never closed\n\n# Body\n\nText.\n",
        front_matter_error,
    )
    put("list-front-matter.md", "---\n- a\n- b\n---\n# List\n\nText.\n", front_matter_error)
    put(
        "nul-escape-front-matter.md",  # YAML turns "\0" into a NUL PostgreSQL cannot store
        '---\ntitle: "Evil\\0title"\nnote: "a\\x00b"\n---\n# NUL escape\n\nAcme text.\n',
        front_matter_error,
    )
    put(
        "python-tag.md",
        f"---\nx: !!python/object/apply:os.system ['touch {h / PWNED}']\n---\n# Tag\n\nBody.\n",
        front_matter_error,
    )
    put("crlf.md", b"---\r\ntitle: CRLF\r\n---\r\n# CRLF\r\n\r\nWindows endings.\r\n", built)
    put("bom.md", b"\xef\xbb\xbf# BOM\n\nText with a byte-order mark.\n", built)
    put("one-long-line.md", "# Long\n\n" + "A" * 100_000 + "\n", built)
    put("unicode-\u202eevil-\U0001f600.md", "# Name\n\nRTL and emoji: Ac\u0301me.\n", built)
    words = " ".join(f"Z{_junk(3000, i)}" for i in range(3))
    put(
        "long-names.md",  # "entities" too long for an index entry
        f"# Long names\n\nThe {words} 3 release was made by Z{_junk(3000, 9)} Corporation.\n",
        built,
    )
    unattributed = root / "vendors" / "_unattributed"
    unattributed.mkdir()
    (unattributed / "long-vendor.md").write_text(
        f"---\nvendor: V{_junk(4000, 7)}\n---\n# Long vendor\n\nSome text.\n", encoding="utf-8"
    )
    expect["vendors/_unattributed/long-vendor.md"] = built
    # names and places that are not files
    os.mkfifo(h / "fifo.md")
    expect["vendors/Hostile/fifo.md"] = Hostile("unreadable", "skipped", "not a regular file")
    (h / "folder.md").mkdir()
    expect["vendors/Hostile/folder.md"] = Hostile(None, None, "not a regular file")
    loop = Hostile("symlink_loop", "skipped", "broken symlink or symlink loop")
    os.symlink("b-loop.md", h / "a-loop.md")
    os.symlink("a-loop.md", h / "b-loop.md")
    os.symlink("self.md", h / "self.md")
    expect |= {f"vendors/Hostile/{n}": loop for n in ("a-loop.md", "b-loop.md", "self.md")}
    os.symlink("..", h / "up")
    expect["vendors/Hostile/up"] = Hostile("symlink_loop", "skipped", "not a regular file")
    os.symlink("nowhere.md", h / "dangling.md")
    expect["vendors/Hostile/dangling.md"] = Hostile(
        "unreadable", "skipped", "broken symlink or symlink loop"
    )
    outside = root.parent / "outside[" / "i]note.md"  # "[/i]": text to Rich, not markup
    outside.parent.mkdir()
    outside.write_text("# Outside\n\nA note outside the corpus.\n")
    os.symlink(outside, h / "escape.md")
    expect["vendors/Hostile/escape.md"] = Hostile("symlink_escape", "skipped")
    (h / "x[").mkdir()
    (h / "x[" / "b]y.md").write_bytes(b"\x00binary under a path with [/b] in it")
    expect["vendors/Hostile/x[/b]y.md"] = SKIPPED_BINARY
    (h / os.fsdecode(b"bad-\xff\xfe-name.md")).write_text("# Bad name\n\nText.\n")
    expect["vendors/Hostile/bad-\\xff\\xfe-name.md"] = Hostile("bad_name", "skipped")
    bad_vendor = root / "vendors" / os.fsdecode(b"Bad\xffVendor")
    bad_vendor.mkdir()
    (bad_vendor / "note.md").write_text("# Note\n\nA vendor folder that is not UTF-8.\n")
    expect["vendors/Bad\\xffVendor"] = Hostile("bad_name", "skipped")
    deep = h.joinpath(*(_junk(100, 100 + i) for i in range(11)))
    deep.mkdir(parents=True)
    (deep / "deep-folder.md").write_text("# Deep folder\n\nA note 1.1 KB down.\n")
    stored = (deep / "deep-folder.md").relative_to(root).as_posix()
    expect[stored] = Hostile("path_too_long", "skipped")
    return expect


def run_cli(
    *args: str | bytes, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "extraction", *args],
        cwd=REPO,
        env={**os.environ, **(env or {})},
        input=stdin,
        capture_output=True,
        timeout=EXTRACT_TIMEOUT_S if args[:1] == ("extract",) else 900,
        check=False,
    )


def problems_by_path(report: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for p in report["problems"]:
        out.setdefault(p["path"], []).append(p)
    return out


def _size(path: bytes) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def check_extract_answer(proc: subprocess.CompletedProcess[bytes], expect: str | None) -> None:
    """Valid JSON (exit 0), or one `error:` line naming the failure (exit 2)."""
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr[-3000:]
    if expect is None:
        assert proc.returncode == 0, stderr[-3000:]
        data = json.loads(proc.stdout)
        assert set(data) >= {"entities", "relationships"}, data
    else:
        lines = stderr.strip().splitlines()
        assert proc.returncode == 2 and len(lines) == 1, stderr
        assert lines[0].startswith("error:") and expect in lines[0], stderr


def test_rebuild_reports_every_hostile_file_and_builds_every_good_note(
    db: Database, tmp_path: Path
) -> None:
    root = tmp_path / "notes"
    expect = write_hostile_corpus(root)
    env = {"DATABASE_URL": db.conninfo, "COLUMNS": "8000"}
    started = time.perf_counter()
    proc = run_cli("rebuild-graph", str(root), "--json", env=env)
    build_s = time.perf_counter() - started
    stderr = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0 and "Traceback" not in stderr, stderr[-3000:]
    report = json.loads(proc.stdout)
    found = problems_by_path(report)
    for path, hostile in expect.items():
        got = found.pop(path, [])
        if hostile.kind is None:
            assert got == [], (path, got)
            continue
        assert [p["kind"] for p in got] == [hostile.kind], (path, got)
        message, action = got[0]["message"], got[0]["action"]
        assert message and "\n" not in message and "Traceback" not in message, got
        assert action.startswith(hostile.action or ""), got
    assert found == {}, f"problems nobody expected: {found}"
    assert not (root / "vendors" / "Hostile" / PWNED).exists(), "front matter ran code"

    with psycopg.connect(db.conninfo) as conn:
        documents = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT d.source_path, count(c.id) FROM documents d "
                "LEFT JOIN chunks c ON c.document_id = d.id GROUP BY 1"
            )
        }
        longest = conn.execute(
            "SELECT coalesce(max(length(name)), 0) FROM (SELECT name FROM entities "
            "UNION ALL SELECT name FROM vendors) n"
        ).fetchone()
        for rel, (_, phrase) in GOOD.items():
            hit = conn.execute(
                "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
                "WHERE d.source_path = %s AND strpos(c.content, %s) > 0",
                (rel, phrase),
            ).fetchone()
            assert hit is not None and hit[0] >= 1, f"{rel}: its text was not stored"
    should_build = set(GOOD) | {p for p, h in expect.items() if h.built}
    assert set(documents) == should_build, set(documents) ^ should_build
    assert all(n >= 1 for n in documents.values()), documents
    assert longest is not None and longest[0] <= MAX_NAME_CHARS

    # a second run: up to date, the skipped files reported again, one table row each
    before = fingerprint(db.conninfo)
    again = run_cli("rebuild-graph", str(root), env=env)
    stdout = again.stdout.decode("utf-8", "replace")
    assert again.returncode == 0 and b"Traceback" not in again.stderr, again.stderr[-3000:]
    assert "Up to date" in stdout
    rows = [line for line in stdout.splitlines() if line.startswith("│ vendors/")]
    skipped = {p: h for p, h in expect.items() if (h.action or "").startswith("skipped")}
    for path in skipped:
        row = [r for r in rows if r.startswith(f"│ {path} ")]
        assert len(row) == 1 and "skipped" in row[0], (path, row)
    assert fingerprint(db.conninfo) == before, "an up-to-date run changed the database"
    record(
        "fuzz_extraction_cli",
        hostile_files=len(expect),
        problems_reported=len(report["problems"]),
        problem_kinds=sorted({p["kind"] for p in report["problems"]}),
        good_notes_built=len(GOOD),
        documents_built=len(documents),
        huge_file_mib=HUGE_BYTES // 2**20,
        nesting_levels=DEEP,
        rebuild_s=round(build_s, 1),
        rebuild_stage_s=report["stage_seconds"],
    )


def test_extract_on_every_hostile_file_is_json_or_one_error_line(tmp_path: Path) -> None:
    root = tmp_path / "notes"
    expect = write_hostile_corpus(root)
    targets = [
        (os.fsencode(root / path), hostile)
        for path, hostile in expect.items()
        if path.startswith("vendors/Hostile/") and hostile.kind not in ("bad_name", "path_too_long")
    ]
    # readable text under a name that is not UTF-8
    targets.append((os.fsencode(root) + b"/vendors/Hostile/bad-\xff\xfe-name.md", Hostile(None)))
    targets.sort(key=lambda t: -_size(t[0]))  # the slowest first, while the rest share a core

    def extract(target: tuple[bytes, Hostile]) -> float:
        started = time.perf_counter()
        check_extract_answer(run_cli("extract", target[0], "--json"), target[1].extract)
        return time.perf_counter() - started

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        seconds = list(pool.map(extract, targets))
    record(
        "fuzz_extraction_cli",
        extract_files=len(targets),
        extract_slowest_s=round(max(seconds), 1),
        extract_total_s=round(time.perf_counter() - started, 1),
    )


@cache
def _plain_tokenizer(nlp: Any) -> Tokenizer:
    """The pipeline's tokenizer with spaCy's own suffix search."""
    fast = nlp.tokenizer.suffix_search
    assert isinstance(fast, _TailSuffixSearch)
    return Tokenizer(
        nlp.vocab,
        rules=nlp.tokenizer.rules,
        prefix_search=nlp.tokenizer.prefix_search,
        suffix_search=fast.search,
        infix_finditer=nlp.tokenizer.infix_finditer,
        token_match=nlp.tokenizer.token_match,
        url_match=nlp.tokenizer.url_match,
        faster_heuristics=nlp.tokenizer.faster_heuristics,
    )


BYTES = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.lists(
        st.sampled_from(
            [
                "# ",
                "> ",
                "- ",
                "1. ",
                "[",
                "](",
                ")",
                "*",
                "`",
                "```",
                "<div>",
                "---\n",
                "\n",
                " ",
                "Acme Corporation",
                "Jane Doe",
                "works for",
                "in Denver",
                ".",
                "\x00",
                "\ufeff",
                "e\u0301",
                "\u202e",
                "😀",
            ]
        ),
        max_size=80,
    ).map(lambda parts: "".join(parts).encode("utf-8")),
    st.tuples(st.sampled_from(["[", "*", "(", "> ", "- ", "\t"]), st.integers(1, 3000)).map(
        lambda p: (p[0] * p[1] + "x").encode()
    ),
)


@settings(max_examples=1, deadline=None, database=None, derandomize=True)
@given(st.lists(BYTES, min_size=6, max_size=6))
def test_extract_from_fuzzed_stdin_is_json_or_one_error_line(payloads: Sequence[bytes]) -> None:
    """Brief: each run loads spaCy in a new process (~5 s), two at a time."""

    def extract(data: bytes) -> None:
        proc = run_cli("extract", "-", "--json", stdin=data)
        if proc.returncode == 0:
            check_extract_answer(proc, None)
        elif b"\x00" in data:
            check_extract_answer(proc, "binary data")
        else:
            check_extract_answer(proc, "not UTF-8")

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(extract, payloads))


@settings(max_examples=200, deadline=None, database=None, derandomize=True)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=20),
            st.tuples(st.sampled_from(list(".,;:!?)]}>*'\"`…%$-_/\\")), st.integers(1, 150)).map(
                lambda p: p[0] * p[1]
            ),
            st.sampled_from(["U.S.", "e.g.", "3.5%", "10km", "Acme's", "(Acme)", "www.x.org"]),
        ),
        max_size=8,
    ).map("".join)
)
def test_the_faster_suffix_search_tokenizes_exactly_like_spacy(extractor: Any, text: str) -> None:
    nlp = extractor.nlp
    assert [t.text for t in nlp.make_doc(text)] == [t.text for t in _plain_tokenizer(nlp)(text)]


def test_a_long_run_of_brackets_tokenizes_in_linear_time(extractor: Any) -> None:
    text = "[" * 4000 + "a" + "](x)" * 4000  # spaCy's own suffix search: ~30 s
    started = time.perf_counter()
    doc = extractor.nlp.make_doc(text)
    assert len(doc) > 4000 and time.perf_counter() - started < 5.0
