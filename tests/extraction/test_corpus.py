"""Reading the corpus: metadata, paths, and every kind of bad input.

The module is long (about 540 lines) because it keeps every bad-input case of one
reader together: 37 small tests, one per kind of file a corpus may hold.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from extraction.notes import corpus
from extraction.notes.corpus import (
    UNATTRIBUTED,
    CorpusError,
    CorpusNotFoundError,
    iter_documents,
    list_files,
    parse_document,
    read_corpus,
)
from extraction.notes.front_matter import iso_date
from tests.fixtures import REPO

SHARED = REPO.parent / "shared" / "data" / "vendor_corpus" / "vendors"

TOPIC = """---
topic: swift
aliases: swift3, swift-3
display_name: Swift
created_by: Apple
released: June 2, 2014
short_description: Swift is a modern programming language.
---
Swift is a general-purpose programming language.
"""

EOL = """---
title: Apple iOS
addedAt: 2022-10-08
category: os
auto:
  methods:
    - apple: ios
releases:
  - releaseCycle: "18"
    releaseDate: 2024-09-16
    eoas: 2025-09-15
    eol: false
    latest: "18.7.10"
    latestReleaseDate: 2026-08-17
  - releaseCycle: "17"
    releaseDate: 2023-09-18
    eol: 2025-05-13
    latest: "17.7.7"
    latestReleaseDate: 2025-05-13
---

> [iOS](https://www.apple.com/ios/) is a mobile operating system.
"""


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def kinds(problems: tuple[corpus.Problem, ...] | list[corpus.Problem]) -> list[str]:
    return [p.kind for p in problems]


# --- good input -----------------------------------------------------------------------------


def test_topic_document_fields(tmp_path: Path) -> None:
    write(tmp_path, "vendors/Apple_Inc./topic-swift.md", TOPIC)
    (doc,) = read_corpus(tmp_path).documents
    assert doc.path == "vendors/Apple_Inc./topic-swift.md"
    assert doc.vendor == "Apple Inc."
    assert doc.title == "Swift"
    assert doc.category == "topic"
    assert doc.body == "Swift is a general-purpose programming language.\n"
    assert doc.content_hash == hashlib.sha256(TOPIC.encode()).hexdigest()
    meta = doc.metadata
    assert meta["vendor_folder"] == "Apple_Inc."
    assert meta["document_type"] == "topic"
    assert meta["dates"] == {"released": "2014-06-02"}
    assert meta["date"] == "2014-06-02"
    assert meta["aliases"] == "swift3, swift-3"


def test_eol_document_releases_rendered_and_summarised(tmp_path: Path) -> None:
    write(tmp_path, "vendors/Apple/eol-ios.md", EOL)
    (doc,) = read_corpus(tmp_path).documents
    assert doc.category == "os"
    meta = doc.metadata
    assert meta["document_type"] == "end-of-life"
    assert "auto" not in meta
    assert meta["releases"]["count"] == 2
    assert meta["releases"]["latest"][0]["releaseDate"] == "2024-09-16"
    assert meta["dates"]["added"] == "2022-10-08"
    assert meta["dates"]["latest_release"] == "2024-09-16"
    assert meta["date"] == "2026-08-17"  # newest latestReleaseDate: how fresh the facts are
    assert "## Releases" in doc.body
    assert "- 17: released 2023-09-18; end of life: 2025-05-13; latest: 17.7.7" in doc.body
    assert "end of life: not yet" in doc.body
    json.dumps(meta, allow_nan=False)


def test_release_rows_capped(tmp_path: Path) -> None:
    rows = "".join(f'  - releaseCycle: "{i}"\n    releaseDate: 2020-01-01\n' for i in range(45))
    write(tmp_path, "vendors/X/eol-x.md", f"---\ntitle: X\nreleases:\n{rows}---\nBody.\n")
    (doc,) = read_corpus(tmp_path).documents
    assert doc.body.count("\n- ") == 31
    assert "15 more releases" in doc.body
    assert doc.metadata["releases"]["count"] == 45


@pytest.mark.parametrize(
    ("front", "body", "expected"),
    [
        ("title: T\ndisplay_name: D\n", "# H\n", "T"),
        ("display_name: D\n", "# H\n", "D"),
        ("topic: x\n", "intro\n\n# Heading One\n", "Heading One"),
        ("topic: x\n", "no heading\n", "topic-x"),
        ("topic: x\n", "```sh\n# install\n```\n", "topic-x"),
    ],
)
def test_title_fallbacks(tmp_path: Path, front: str, body: str, expected: str) -> None:
    write(tmp_path, "vendors/V/topic-x.md", f"---\n{front}---\n{body}")
    assert read_corpus(tmp_path).documents[0].title == expected


@pytest.mark.parametrize(
    ("value", "iso"),
    [
        ("June 2, 2014", "2014-06-02"),
        ("June 2 2014", "2014-06-02"),
        ("17 October 2016", "2016-10-17"),
        ("October 2017", "2017-10"),
        ("Sept 2016", "2016-09"),
        ("Dec. 4, 1995", "1995-12-04"),
        ("06 2008", "2008-06"),
        (2011, "2011"),
        ("'2019'", None),
        ("2019", "2019"),
        ("2020-02-30", None),
        ("soon", None),
        (True, None),
    ],
)
def test_date_normalisation(value: object, iso: str | None) -> None:
    assert iso_date(value) == iso


def test_best_date_is_padded(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/topic-a.md", "---\nreleased: 2011\n---\nx\n")
    doc = read_corpus(tmp_path).documents[0]
    assert doc.metadata["dates"] == {"released": "2011"}
    assert doc.metadata["date"] == "2011-01-01"


def test_vendor_attribution(tmp_path: Path) -> None:
    write(tmp_path, "vendors/_unattributed/topic-a.md", "---\ncreated_by: Jane_Doe\n---\nx\n")
    write(tmp_path, "vendors/_unattributed/topic-b.md", "---\ntopic: b\n---\nx\n")
    write(tmp_path, "notes/c.md", "---\nvendor: Acme\ncreated_by: Other\n---\nx\n")
    write(tmp_path, "vendors/Folder/d.md", "---\nvendor: Acme\n---\nx\n")
    docs = {d.path: d for d in read_corpus(tmp_path).documents}
    assert docs["vendors/_unattributed/topic-a.md"].vendor == "Jane Doe"
    assert docs["vendors/_unattributed/topic-b.md"].vendor == UNATTRIBUTED
    assert docs["notes/c.md"].vendor == "Acme"
    assert "vendor_folder" not in docs["notes/c.md"].metadata
    assert docs["vendors/Folder/d.md"].vendor == "Folder"  # the folder wins
    assert docs["vendors/Folder/d.md"].metadata["front_matter_vendor"] == "Acme"


def test_root_variants_store_the_same_paths(tmp_path: Path) -> None:
    write(tmp_path, "vendors/Acme/a.md", "x")
    write(tmp_path, "vendors/Acme/sub/b.markdown", "y")
    write(tmp_path, "vendors/Beta/c.MD", "z")
    whole = [d.path for d in read_corpus(tmp_path).documents]
    assert whole == ["vendors/Acme/a.md", "vendors/Acme/sub/b.markdown", "vendors/Beta/c.MD"]
    assert [d.path for d in read_corpus(tmp_path / "vendors").documents] == whole
    single = read_corpus(tmp_path / "vendors" / "Acme").documents
    assert [(d.path, d.vendor) for d in single] == [
        ("vendors/Acme/a.md", "Acme"),
        ("vendors/Acme/sub/b.markdown", "Acme"),
    ]
    (one,) = read_corpus(tmp_path / "vendors" / "Acme" / "a.md").documents
    assert (one.path, one.vendor) == ("vendors/Acme/a.md", "Acme")


def test_corpus_scope(tmp_path: Path) -> None:
    write(tmp_path, "vendors/Acme/a.md", "x")
    assert corpus.corpus_scope(tmp_path) == ""
    assert corpus.corpus_scope(tmp_path / "vendors") == "vendors"
    assert corpus.corpus_scope(tmp_path / "vendors" / "Acme") == "vendors/Acme"
    assert corpus.corpus_scope(tmp_path / "vendors" / "Acme" / "a.md") == "vendors/Acme/a.md"


def test_only_reads_the_given_paths(tmp_path: Path) -> None:
    write(tmp_path, "vendors/Acme/a.md", "x")
    write(tmp_path, "vendors/Acme/b.md", b"\x00")  # not read, so no problem
    result = read_corpus(tmp_path, only={"vendors/Acme/a.md"})
    assert [d.path for d in result.documents] == ["vendors/Acme/a.md"]
    assert result.problems == ()


def test_single_file_outside_vendors(tmp_path: Path) -> None:
    write(tmp_path, "note.md", "---\ncreated_by: Acme\n---\n# Hello\n")
    (doc,) = read_corpus(tmp_path / "note.md").documents
    assert (doc.path, doc.vendor, doc.title) == ("note.md", "Acme", "Hello")


def test_corpus_docs_at_the_root_are_not_notes(tmp_path: Path) -> None:
    for name in ("README.md", "LICENSE-foo.md", "vendors/V/README.md", "notes.md"):
        write(tmp_path, name, "x")
    assert [d.path for d in read_corpus(tmp_path).documents] == ["notes.md", "vendors/V/README.md"]
    assert [f.path for f in list_files(tmp_path)] == ["notes.md", "vendors/V/README.md"]


def test_hidden_and_editor_temporary_files_are_not_notes(tmp_path: Path) -> None:
    names = (
        ".obsidian/workspace.md",  # hidden folders: tools' settings, trash, versions
        ".trash/old.md",
        "vendors/V/.#a.md",  # Emacs lock, macOS resource fork, office owner file
        "vendors/V/._a.md",
        "vendors/V/~$a.md",
        "vendors/V/#a.md#",
        "vendors/V/a.md",
        "vendors/V/2024/b.md",  # a folder named by a year is a folder like any other
    )
    for name in names:
        write(tmp_path, name, "x")
    result = read_corpus(tmp_path)
    assert [d.path for d in result.documents] == ["vendors/V/2024/b.md", "vendors/V/a.md"]
    assert result.problems == ()
    assert [f.path for f in list_files(tmp_path)] == ["vendors/V/2024/b.md", "vendors/V/a.md"]


def test_non_markdown_ignored_and_order_deterministic(tmp_path: Path) -> None:
    for name in ("b.md", "a.md", "c.txt", "d.md.bak", "A.md"):
        write(tmp_path, f"vendors/V/{name}", "x")
    paths = [d.path for d in read_corpus(tmp_path).documents]
    assert paths == ["vendors/V/A.md", "vendors/V/a.md", "vendors/V/b.md"]


def test_metadata_is_json_safe_and_small(tmp_path: Path) -> None:
    huge = "x" * 20_000
    front = (
        "when: 2024-01-02 03:04:05\n"
        "tags: !!set {b: null, a: null}\n"
        "ratio: .nan\n"
        "blob: !!binary aGVsbG8=\n"
        "2020-01-01: keyed by a date\n"
        f"notes: {huge}\n"
        f"items: [{', '.join(str(i) for i in range(500))}]\n"
    )
    write(tmp_path, "vendors/V/x.md", f"---\n{front}---\nbody\n")
    meta = read_corpus(tmp_path).documents[0].metadata
    text = json.dumps(meta, allow_nan=False)
    assert len(text) < 4096
    assert meta["when"] == "2024-01-02T03:04:05"
    assert meta["tags"] == ["a", "b"]
    assert meta["ratio"] == "nan"
    assert meta["blob"] == "<5 bytes>"
    assert meta["2020-01-01"] == "keyed by a date"
    assert "notes" in meta["truncated"]


def test_yaml_alias_bomb_stays_small(tmp_path: Path) -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    write(tmp_path, "vendors/V/bomb.md", "---\n" + "\n".join(lines) + "\n---\nbody\n")
    (doc,) = read_corpus(tmp_path).documents
    assert len(json.dumps(doc.metadata)) < 4096


# --- bad input ------------------------------------------------------------------------------


def test_missing_root(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(CorpusNotFoundError, match="nope"):
        read_corpus(missing)
    assert issubclass(CorpusNotFoundError, CorpusError)


def test_root_is_a_non_markdown_file(tmp_path: Path) -> None:
    path = write(tmp_path, "data.csv", "a,b")
    with pytest.raises(CorpusError, match=r"data\.csv"):
        read_corpus(path)


def test_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "vendors" / "Empty").mkdir(parents=True)
    result = read_corpus(tmp_path)
    assert result.documents == ()
    assert kinds(result.problems) == ["empty"]


def test_invalid_utf8_kept_as_cp1252(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/a.md", "---\ntitle: Café\n---\nSmart “quotes”\n".encode("cp1252"))
    result = read_corpus(tmp_path)
    (doc,) = result.documents
    (problem,) = result.problems
    assert problem.kind == "not_utf8"
    assert "byte offset 14" in problem.message and "cp1252" in problem.message
    assert doc.title == "Café"
    assert doc.body == "Smart “quotes”\n"
    assert doc.metadata["encoding"] == "cp1252"


def test_undefined_cp1252_bytes_fall_back_to_latin1(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/a.md", b"odd \x81 byte")
    result = read_corpus(tmp_path)
    assert result.documents[0].body == "odd \x81 byte"
    assert "latin-1" in result.problems[0].action


def test_utf8_bom_is_not_a_problem(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/a.md", "\ufeff---\ntitle: T\n---\nb\n".encode())
    result = read_corpus(tmp_path)
    assert result.problems == ()
    assert result.documents[0].title == "T"


@pytest.mark.parametrize(
    "content", [b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR", bytes(range(1, 32)) * 20]
)
def test_binary_file_skipped(tmp_path: Path, content: bytes) -> None:
    write(tmp_path, "vendors/V/image.md", content)
    write(tmp_path, "vendors/V/ok.md", "fine")
    result = read_corpus(tmp_path)
    assert [d.path for d in result.documents] == ["vendors/V/ok.md"]
    assert kinds(result.problems) == ["binary"]
    assert result.problems[0].action == "skipped"


def test_huge_file_skipped(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/big.md", "x" * 2000)
    result = read_corpus(tmp_path, max_bytes=1000)
    assert result.documents == ()
    (problem,) = result.problems
    assert (problem.kind, problem.path) == ("too_large", "vendors/V/big.md")
    assert "1000" in problem.message and "2000" in problem.message


def test_malformed_yaml_keeps_document(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/a.md", "---\ntitle: ok\nbad: [unclosed\nmore: x\n---\nBody text\n")
    result = read_corpus(tmp_path)
    (doc,) = result.documents
    (problem,) = result.problems
    assert problem.kind == "front_matter_error"
    assert "line" in problem.message
    assert doc.body == "Body text\n"
    assert "not valid YAML" in doc.metadata["front_matter_error"]
    assert "unclosed" in doc.metadata["front_matter_raw"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("---\n- a\n- b\n---\nbody\n", "not a mapping"),
        ("---\njust text\n---\nbody\n", "not a mapping"),
        ("---\ntitle: x\nbody without end\n", "no closing"),
    ],
)
def test_front_matter_not_a_mapping_or_unterminated(tmp_path: Path, text: str, reason: str) -> None:
    write(tmp_path, "vendors/V/a.md", text)
    result = read_corpus(tmp_path)
    (doc,) = result.documents
    assert reason in result.problems[0].message
    assert "body" in doc.body
    assert reason in doc.metadata["front_matter_error"]


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "vendors/V/locked.md", "secret")
    write(tmp_path, "vendors/V/ok.md", "fine")
    real = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if self.name == "locked.md":
            raise PermissionError(13, "Permission denied")
        return real(self)

    # chmod 000 does not stop root, who runs these tests in CI containers
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = read_corpus(tmp_path)
    assert [d.path for d in result.documents] == ["vendors/V/ok.md"]
    (problem,) = result.problems
    assert (problem.kind, problem.path, problem.action) == (
        "unreadable",
        "vendors/V/locked.md",
        "skipped",
    )
    assert "Permission denied" in problem.message


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_unreadable_file_by_permissions(tmp_path: Path) -> None:
    path = write(tmp_path, "vendors/V/locked.md", "secret")
    path.chmod(0)
    try:
        assert kinds(read_corpus(tmp_path).problems) == ["unreadable"]
    finally:
        path.chmod(0o644)


def test_symlink_loop(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/a.md", "x")
    (tmp_path / "vendors" / "V" / "loop").symlink_to(tmp_path / "vendors")
    (tmp_path / "vendors" / "V" / "self").symlink_to(".")
    result = read_corpus(tmp_path)
    assert [d.path for d in result.documents] == ["vendors/V/a.md"]
    assert kinds(result.problems) == ["symlink_loop", "symlink_loop"]


def test_symlink_inside_root_followed_once(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/a.md", "x")
    (tmp_path / "vendors" / "W").symlink_to(tmp_path / "vendors" / "V")
    result = read_corpus(tmp_path)
    # the real folder is visited first (sorted), the second link to it is reported
    assert [d.path for d in result.documents] == ["vendors/V/a.md"]
    assert kinds(result.problems) == ["symlink_loop"]


def test_symlinks_escaping_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.md", "do not read")
    root = tmp_path / "corpus"
    write(root, "vendors/V/a.md", "x")
    (root / "vendors" / "V" / "out").symlink_to(outside)
    (root / "vendors" / "V" / "leak.md").symlink_to(outside / "secret.md")
    (root / "vendors" / "V" / "broken.md").symlink_to(root / "missing.md")
    (root / "vendors" / "V" / "inside.md").symlink_to(root / "vendors" / "V" / "a.md")
    result = read_corpus(root)
    assert [d.path for d in result.documents] == ["vendors/V/a.md", "vendors/V/inside.md"]
    assert sorted(kinds(result.problems)) == ["symlink_escape", "symlink_escape", "unreadable"]


def test_duplicate_vendor_folders(tmp_path: Path) -> None:
    for folder in ("Acme", "ACME", "Anthropic", "Anthropic.", "Solo"):
        write(tmp_path, f"vendors/{folder}/a.md", "x")
    result = read_corpus(tmp_path)
    dupes = [p for p in result.problems if p.kind == "duplicate_vendor"]
    assert len(dupes) == 2
    assert "ACME, Acme" in dupes[0].message
    assert "Anthropic, Anthropic." in dupes[1].message
    folders = {d.metadata["vendor_folder"]: d.vendor for d in result.documents}
    assert folders == {
        "ACME": "ACME",
        "Acme": "Acme",
        "Anthropic": "Anthropic",
        "Anthropic.": "Anthropic.",
        "Solo": "Solo",
    }


def test_iter_documents_streams_and_collects_problems(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/a.md", "x")
    write(tmp_path, "vendors/V/b.md", b"\x00")
    problems: list[corpus.Problem] = []
    docs = iter_documents(tmp_path, problems)
    assert next(docs).path == "vendors/V/a.md"
    assert list(docs) == []
    assert kinds(problems) == ["binary"]


def test_parse_document_is_pure() -> None:
    doc, problems = parse_document("x.md", b"# Title\n\nText")
    assert doc is not None and problems == []
    assert (doc.title, doc.vendor, doc.category) == ("Title", UNATTRIBUTED, "note")


def test_list_files(tmp_path: Path) -> None:
    write(tmp_path, "vendors/V/b.md", "bbb")
    write(tmp_path, "vendors/V/a.md", "a")
    write(tmp_path, "vendors/V/c.txt", "ignored")
    stats = list_files(tmp_path)
    assert [(s.path, s.size) for s in stats] == [("vendors/V/a.md", 1), ("vendors/V/b.md", 3)]
    assert stats[1].sha256 == hashlib.sha256(b"bbb").hexdigest()
    assert stats[0].mtime_ns > 0
    assert [s.sha256 for s in stats] == [d.content_hash for d in read_corpus(tmp_path).documents]


# --- real files -----------------------------------------------------------------------------

REAL = [
    "Apple/eol-ios.md",
    "Apple/topic-swift.md",
    "Microsoft_Corporation/topic-windows.md",
    "_unattributed/eol-samsung-mobile.md",
    "Red_Hat/eol-ansible.md",
]


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared corpus not present")
def test_real_files(tmp_path: Path) -> None:
    for rel in REAL:
        target = tmp_path / "vendors" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / rel, target)
    result = read_corpus(tmp_path)
    assert result.problems == ()
    docs = {d.path: d for d in result.documents}
    assert len(docs) == len(REAL)
    ios = docs["vendors/Apple/eol-ios.md"]
    assert (ios.title, ios.vendor, ios.category) == ("Apple iOS", "Apple", "os")
    assert "- 17: released 2023-09-18" in ios.body
    windows = docs["vendors/Microsoft_Corporation/topic-windows.md"]
    assert windows.vendor == "Microsoft Corporation"
    assert windows.metadata["dates"]["released"] == "1985-11-20"
    samsung = docs["vendors/_unattributed/eol-samsung-mobile.md"]
    assert samsung.vendor == UNATTRIBUTED
    assert samsung.metadata["releases"]["count"] > 400
    assert "end of Security Updates" in samsung.body  # the page's own column names
    for doc in docs.values():
        assert len(json.dumps(doc.metadata, allow_nan=False)) < 4096


SAMPLES = REPO / "samples" / "vendor_notes"


def test_bundled_samples_read_cleanly() -> None:
    result = read_corpus(SAMPLES)
    assert len(result.documents) == 39
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    assert all(f"`{d.path}`" in readme for d in result.documents)
    assert sorted(p.path for p in result.problems) == [
        "vendors/Anthropic",
        "vendors/Apple",
        "vendors/Microsoft",
    ]
    assert {p.kind for p in result.problems} == {"duplicate_vendor"}
