"""Read a folder of markdown vendor notes into :class:`SourceDocument` objects.

The corpus is ``vendors/<Vendor>/<topic>.md`` with YAML front matter. Reading never
crashes on a bad file and never drops one silently: every file that is skipped, or kept
with a caveat, leaves a :class:`Problem` that the CLI prints.

Paths. Stored paths are POSIX and relative to the *corpus base*: the given root, except
when the root is a ``vendors`` folder, a folder directly inside one (a single vendor), or a
markdown file inside a vendor folder; then the base is the parent of that ``vendors``
folder. So ``corpus/``, ``corpus/vendors`` and ``corpus/vendors/Apple`` all store
``vendors/Apple/eol-ios.md`` and a partial re-run updates the same database rows.

Bad input, and what is done about it (``Problem.kind``):

* missing root: :class:`CorpusNotFoundError`; a root that is neither a folder nor a
  ``.md``/``.markdown`` file: :class:`CorpusError`. A single markdown file is a one-file corpus.
* ``empty``: no markdown files at all (no documents; the problem says so).
* ``not_utf8``: kept. UTF-8 (with or without BOM) is tried first, then cp1252 (what
  Windows editors write), then latin-1 which never fails; the problem names the first bad
  byte. Losing a note is worse than a few wrong accents, and the operator is told.
* ``binary``: NUL bytes, or more than 10 % control characters: skipped.
* ``too_large``: over ``max_bytes`` (default 5 MB, the corpus' largest note is 122 KB): skipped.
* ``unreadable``: permission denied, broken symlink, not a regular file (a FIFO would
  block the read), other ``OSError``: skipped.
* ``front_matter_error``: YAML error, unterminated block, not a mapping, nested over 100
  levels, or a NUL character (``"\\0"``, which PostgreSQL cannot store): kept, body is
  the text after the block, ``metadata["front_matter_error"]`` holds the reason
  (:mod:`extraction.notes.front_matter` reads the block and summarises it as metadata). A
  front-matter ``vendor`` over 200 characters is not a name and is ignored.
* ``symlink_loop`` / ``symlink_escape``: directory symlinks are followed only inside the
  root and only once per real directory; file symlinks only when they point inside the root;
  symlinks that point at each other are skipped.
* ``bad_name``: a note or folder whose name is not valid UTF-8 (the database stores
  names as text): skipped, shown with ``\\xNN`` escapes.
* ``path_too_long``: a stored path over 1 KB (it is an index key): skipped.
* ``README.md``, ``LICENSE*.md``, ``CHANGELOG.md``... directly in the root folder describe the
  corpus and are not read (the same names inside vendor folders are notes, and are read).
* hidden files and folders (a leading dot: ``.git``, ``.obsidian``, ``.trash``, an
  editor's ``.#note.md`` lock) and the temporary, swap, backup and lock files editors
  write beside a note (``note.md~``, ``#note.md#``, ``~$note.md``, ``*.tmp``...:
  :func:`~extraction.notes.walk.is_ignored_name`) are not notes and are passed over
  without a problem.
* ``duplicate_vendor``: vendor folders whose names normalise alike (``Apple`` and
  ``Apple_Inc.``): documents keep their own folder in ``metadata["vendor_folder"]``;
  the pipeline merges vendors by :func:`~extraction.names.normalize_name`.

The walk of the folder (symlinks, names, paths, what is a note) is
:mod:`extraction.notes.walk`, the front matter :mod:`extraction.notes.front_matter`;
this module reads and decodes what the walk finds.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from extraction.names import MAX_NAME_CHARS, normalize_name, vendor_display_name
from extraction.notes.document import SourceDocument
from extraction.notes.front_matter import document_metadata, parse_front_matter, render_releases
from extraction.notes.lifecycle import parse_lifecycle
from extraction.notes.walk import (
    MARKDOWN_SUFFIXES,
    UNATTRIBUTED,
    VENDORS_DIR,
    CorpusError,
    CorpusNotFoundError,
    FileStat,
    Problem,
    corpus_scope,
    list_files,
    walk,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "MARKDOWN_SUFFIXES",
    "UNATTRIBUTED",
    "Corpus",
    "CorpusError",
    "CorpusNotFoundError",
    "FileStat",
    "Problem",
    "corpus_scope",
    "iter_documents",
    "list_files",
    "parse_document",
    "read_corpus",
]

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
_FENCED = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,}).*?^[ \t]{0,3}\1", re.M | re.S)
_HEADING_1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.M)
_BINARY_SAMPLE = 8192
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True, slots=True)
class Corpus:
    documents: tuple[SourceDocument, ...]
    problems: tuple[Problem, ...]


def _decode(data: bytes) -> tuple[str, str, int | None]:
    """Text, encoding used, and the offset of the first non-UTF-8 byte (None if UTF-8)."""
    try:
        # utf-8-sig also accepts plain UTF-8 and drops a leading BOM
        return data.decode("utf-8-sig"), "utf-8", None
    except UnicodeDecodeError as exc:
        bad = exc.start
    try:
        return data.decode("cp1252"), "cp1252", bad
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1", bad


def _looks_binary(data: bytes, text: str) -> bool:
    if b"\x00" in data:
        return True
    sample = text[:_BINARY_SAMPLE]
    return bool(sample) and len(_CONTROL.findall(sample)) > len(sample) // 10


def _title(front: dict[str, Any], body: str, stem: str) -> str:
    for key in ("title", "display_name"):
        value = front.get(key)
        if isinstance(value, str | int | float) and str(value).strip():
            return str(value).strip()
    match = _HEADING_1.search(_FENCED.sub("", body))  # "# comment" in a shell block is no title
    if match:
        return match.group(1).strip()
    return stem


def _vendor(folder: str | None, front: dict[str, Any]) -> str:
    if folder and folder.casefold() != UNATTRIBUTED:
        name = vendor_display_name(folder)
        if name:
            return name
    for key in ("vendor", "created_by"):
        value = front.get(key)
        if isinstance(value, str) and value.strip() and len(value) <= MAX_NAME_CHARS:
            return vendor_display_name(value)
    return UNATTRIBUTED


def parse_document(
    path: str, data: bytes, *, vendor_folder: str | None = None
) -> tuple[SourceDocument | None, list[Problem]]:
    """Turn one file's bytes into a document (or ``None`` if it is not text).

    Parameters
    ----------
    path
        Stored path (POSIX, relative to the corpus base).
    data
        The file's bytes.
    vendor_folder
        The ``vendors/<Vendor>`` folder name, if any.

    Examples
    --------
    >>> doc, problems = parse_document(
    ...     "vendors/Apple/topic-swift.md",
    ...     b"---\\ndisplay_name: Swift\\nreleased: June 2, 2014\\n---\\nSwift is a language.\\n",
    ...     vendor_folder="Apple",
    ... )
    >>> doc.vendor, doc.title, doc.metadata["date"], doc.category, problems
    ('Apple', 'Swift', '2014-06-02', 'topic', [])
    """
    problems: list[Problem] = []
    text, encoding, bad_byte = _decode(data)
    if _looks_binary(data, text):
        return None, [Problem(path, "binary", "binary content in a markdown file", "skipped")]
    if bad_byte is not None:
        problems.append(
            Problem(
                path,
                "not_utf8",
                f"not valid UTF-8 at byte offset {bad_byte}; decoded as {encoding}",
                f"kept, decoded as {encoding}",
            )
        )
    front = parse_front_matter(text)
    if front.error is not None:
        where = f" (line {front.error_line})" if front.error_line else ""
        problems.append(
            Problem(
                path, "front_matter_error", f"{front.error}{where}", "kept, front matter ignored"
            )
        )
    stem = PurePosixPath(path).stem
    body = front.body
    title = _title(front.data, body, stem)
    metadata = document_metadata(front, stem)
    vendor = _vendor(vendor_folder, front.data)
    metadata["vendor"] = vendor
    if vendor_folder is not None:
        metadata["vendor_folder"] = vendor_folder
    if encoding != "utf-8":
        metadata["encoding"] = encoding
    releases = render_releases(front.data)
    if releases:
        # endoflife.date pages keep their facts in the front matter table; the body alone
        # would leave "when does iOS 17 go out of support" unsearchable
        body = f"{body.rstrip()}\n\n{releases}\n" if body.strip() else f"{releases}\n"
        metadata["generated_sections"] = ["Releases"]
    lifecycle, wrong = parse_lifecycle(front.data)
    problems.extend(Problem(path, "lifecycle", f"{w.field}: {w.message}", "noted") for w in wrong)
    doc = SourceDocument(
        path=path,
        vendor=vendor,
        category=metadata.get("category"),
        title=title,
        metadata=metadata,
        body=body,
        content_hash=hashlib.sha256(data).hexdigest(),
        lifecycle=lifecycle,
    )
    return doc, problems


def _duplicate_vendor_problems(folders: set[str]) -> list[Problem]:
    groups: dict[str, list[str]] = defaultdict(list)
    for folder in folders:
        if folder.casefold() != UNATTRIBUTED:
            groups[normalize_name(vendor_display_name(folder))].append(folder)
    problems = []
    for key, names in sorted(groups.items()):
        if len(names) > 1:
            listed = ", ".join(sorted(names))
            problems.append(
                Problem(
                    f"{VENDORS_DIR}/{sorted(names)[0]}",
                    "duplicate_vendor",
                    f"vendor folders {listed} normalise to the same name {key!r}",
                    "noted; merged as one vendor downstream",
                )
            )
    return problems


def iter_documents(
    root: str | os.PathLike[str],
    problems: list[Problem],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    only: Collection[str] | None = None,
) -> Iterator[SourceDocument]:
    """Yield the documents under ``root`` in sorted path order; append problems to ``problems``.

    ``only`` limits reading to these stored paths (an incremental run's changed files);
    the walk, the empty-corpus and duplicate-vendor checks still cover the whole root.

    Raises :class:`CorpusNotFoundError` or :class:`CorpusError` before yielding anything
    if the root itself is unusable; per-file trouble only ever becomes a :class:`Problem`.
    """
    found = walk(Path(root))
    problems.extend(found.problems)
    if not found.files:
        problems.append(Problem(str(root), "empty", "no .md or .markdown files found", "noted"))
        return
    problems.extend(_duplicate_vendor_problems({f[2] for f in found.files if f[2]}))
    for stored, path, folder in found.files:
        if only is not None and stored not in only:
            continue
        try:
            size = path.stat().st_size
            if size > max_bytes:
                problems.append(
                    Problem(
                        stored,
                        "too_large",
                        f"{size} bytes is over the limit of {max_bytes} bytes",
                        "skipped",
                    )
                )
                continue
            data = path.read_bytes()
        except OSError as exc:
            problems.append(Problem(stored, "unreadable", exc.strerror or str(exc), "skipped"))
            continue
        doc, file_problems = parse_document(stored, data, vendor_folder=folder)
        problems.extend(file_problems)
        if doc is not None:
            yield doc


def read_corpus(
    root: str | os.PathLike[str],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    only: Collection[str] | None = None,
) -> Corpus:
    """Read every document under ``root`` (see :func:`iter_documents`)."""
    problems: list[Problem] = []
    documents = tuple(iter_documents(root, problems, max_bytes=max_bytes, only=only))
    return Corpus(documents, tuple(problems))
