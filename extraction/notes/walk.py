"""Finding a corpus's notes: the walk of the folder, with every file that is skipped
named in a :class:`Problem`, and each note's path and hash (:func:`list_files`, the
"has anything changed" check of an incremental run). The cases a walk decides
(symlinks, names that are not UTF-8, paths too long to store, files that are not
regular, hidden and temporary names) are listed in :mod:`extraction.notes.corpus`,
which reads what the walk finds.

Hidden files and folders (``.git``, ``.obsidian``, ``.trash``, an editor's
``.note.md.swp`` or ``.#note.md``) and the temporary, backup and lock files editors
write beside a note (:func:`is_ignored_name`) are not notes: the walk passes over
them without a word, and the watcher (:mod:`extraction.rebuild.watch`) ignores their
changes, so the two always agree on what the corpus holds.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

#: Longest stored path (UTF-8 bytes): it is a btree index key, which holds ~2.7 KB.
MAX_PATH_BYTES = 1024
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
UNATTRIBUTED = "_unattributed"
VENDORS_DIR = "vendors"

#: Files at the top of a corpus folder that document the corpus itself.
_CORPUS_DOCS = frozenset({"readme", "license", "licence", "notice", "changelog", "contributing"})

#: Names editors, office suites and sync tools give the files they write beside a
#: note: vim's swap files (``.sw[a-p]``), backups (``note.md~``, ``.bak``), Emacs
#: autosaves (``#note.md#``), Kate's ``.kate-swp``, JetBrains' safe-write files,
#: Microsoft Office owner files (``~$note.md``), the temporary files of atomic-rename
#: saves and downloads (``.tmp``, ``.temp``, ``.part``, ``.crdownload``). Hidden names
#: (a leading dot: Emacs locks ``.#note.md``, macOS ``._note.md``, LibreOffice
#: ``.~lock.*``, gedit's ``.goutputstream-*``) are ignored as a whole.
_TEMPORARY = re.compile(
    r"""(
        ~$ | ^~\$ | ^\#.*\#$
      | \.sw[a-p]$ | \.kate-swp$ | \.bak$ | \.tmp$ | \.temp$ | \.part$ | \.crdownload$
      | ___jb_(tmp|old)___$
    )""",
    re.IGNORECASE | re.VERBOSE,
)


def is_ignored_name(name: str) -> bool:
    """Whether a file or folder named ``name`` is hidden, or a temporary, swap, backup
    or lock file an editor writes beside a note: never a note, and never a reason to
    rebuild.

    >>> [is_ignored_name(n) for n in (".note.md.swp", ".#note.md", "note.md~", ".obsidian")]
    [True, True, True, True]
    >>> [is_ignored_name(n) for n in ("#note.md#", "note.md.tmp", "~$note.md", ".git")]
    [True, True, True, True]
    >>> [is_ignored_name(n) for n in ("note.md", "Apple_Inc.", "3M", "Node.js", "2024")]
    [False, False, False, False, False]
    """
    return name.startswith(".") or _TEMPORARY.search(name) is not None


class CorpusError(Exception):
    """The corpus cannot be read at all."""


class CorpusNotFoundError(CorpusError):
    """The corpus root does not exist."""


@dataclass(frozen=True, slots=True)
class Problem:
    """Something wrong with one file (or with the corpus), and what was done about it."""

    path: str
    kind: str
    message: str
    action: str
    """``skipped``, ``kept`` or ``noted``, optionally with detail (``kept, decoded as cp1252``)."""


@dataclass(frozen=True, slots=True)
class FileStat:
    """What the incremental check compares: no parsing involved."""

    path: str
    size: int
    mtime_ns: int
    sha256: str


@dataclass(slots=True)
class Walk:
    """Markdown files found under a root: (stored path, real path, vendor folder)."""

    files: list[tuple[str, Path, str | None]] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)


def _base_and_prefix(root: Path) -> tuple[Path, PurePosixPath]:
    """Directory files are walked from, and the stored-path prefix of that directory."""
    start = root.parent if root.is_file() else root
    if start.name == VENDORS_DIR:
        return start, PurePosixPath(VENDORS_DIR)
    if start.parent.name == VENDORS_DIR and start.name:
        return start, PurePosixPath(VENDORS_DIR, start.name)
    return start, PurePosixPath()


def stored_path(root: str | os.PathLike[str], path: str | os.PathLike[str]) -> str | None:
    """The stored path of ``path``, a file under the corpus root ``root`` (a corpus,
    ``vendors`` or vendor folder), or None when it lies outside ``root``.

    >>> stored_path("/data/notes/vendors/Apple", "/data/notes/vendors/Apple/ios.md")
    'vendors/Apple/ios.md'
    >>> stored_path("/data/notes", "/data/notes/vendors/Apple/ios.md")
    'vendors/Apple/ios.md'
    >>> stored_path("/data/notes", "/elsewhere/ios.md") is None
    True
    """
    base, prefix = _base_and_prefix(Path(root))
    try:
        rel = Path(path).relative_to(base)
    except ValueError:
        return None
    return (prefix / rel.as_posix()).as_posix()


def corpus_scope(root: str | os.PathLike[str]) -> str:
    """The stored-path prefix a root covers: ``""`` (everything), ``vendors``,
    ``vendors/Apple`` or, for a one-file corpus, that file's stored path.

    A partial run may only delete database rows inside its own scope.

    >>> corpus_scope("/data/notes/vendors/Apple")
    'vendors/Apple'
    """
    path = Path(root)
    _, prefix = _base_and_prefix(path)
    if path.is_file():
        return (prefix / path.name).as_posix()
    return "" if prefix == PurePosixPath() else prefix.as_posix()


def _vendor_folder(rel: PurePosixPath) -> str | None:
    """``vendors/<Vendor>/...`` -> ``<Vendor>``; files directly in ``vendors/`` have none."""
    parts = rel.parts
    for i, part in enumerate(parts[:-2]):
        if part == VENDORS_DIR:
            return parts[i + 1]
    return None


def _is_corpus_doc(name: str) -> bool:
    """README, LICENSE... beside the notes describe the corpus; they are not notes."""
    stem = name.rsplit(".", 1)[0].casefold()
    return stem.split("-", 1)[0] in _CORPUS_DOCS


def _is_utf8(name: str) -> bool:
    """False for a name with bytes that are not UTF-8 (decoded as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _is_regular(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_file()
    except OSError:
        return True  # reading it will say what is wrong


def walk(root: Path) -> Walk:
    """Collect markdown files, sorted by stored path, guarding against symlink trouble."""
    out = Walk()
    if not root.exists():
        if root.is_symlink():
            raise CorpusNotFoundError(f"corpus root {root} is a broken symlink")
        raise CorpusNotFoundError(f"corpus root {root} does not exist")
    base, prefix = _base_and_prefix(root)
    real_root = base.resolve()
    if root.is_file():
        if root.suffix.lower() not in MARKDOWN_SUFFIXES:
            raise CorpusError(f"corpus root {root} is a file but not a .md/.markdown note")
        rel = prefix / root.name
        out.files.append((rel.as_posix(), root, _vendor_folder(rel)))
        return out
    if not root.is_dir():
        raise CorpusError(f"corpus root {root} is neither a folder nor a markdown file")

    seen_dirs: set[tuple[int, int]] = set()

    def visit(directory: Path, rel: PurePosixPath) -> None:
        st = directory.stat()
        seen_dirs.add((st.st_dev, st.st_ino))
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            out.problems.append(
                Problem((prefix / rel).as_posix(), "unreadable", str(exc), "skipped folder")
            )
            return
        for entry in entries:
            if is_ignored_name(entry.name):  # hidden, or an editor's temporary file
                continue
            entry_rel = rel / entry.name
            shown = (prefix / entry_rel).as_posix()
            path = Path(entry.path)
            if not _is_utf8(entry.name):  # the database stores names as UTF-8 text
                if _is_dir(entry) or Path(entry.name).suffix.lower() in MARKDOWN_SUFFIXES:
                    out.problems.append(
                        Problem(
                            os.fsencode(shown).decode("utf-8", "backslashreplace"),
                            "bad_name",
                            "the name is not valid UTF-8: rename it",
                            "skipped",
                        )
                    )
                continue
            if entry.is_symlink():
                try:
                    target = path.resolve()
                except (OSError, RuntimeError):  # links that point at each other
                    out.problems.append(Problem(shown, "symlink_loop", "symlink loop", "skipped"))
                    continue
                if not target.exists():
                    if entry.name.lower().endswith(tuple(MARKDOWN_SUFFIXES)):
                        out.problems.append(
                            Problem(shown, "unreadable", "broken symlink", "skipped")
                        )
                    continue
                if not target.is_relative_to(real_root):
                    out.problems.append(
                        Problem(
                            shown,
                            "symlink_escape",
                            f"symlink points outside the corpus root ({target})",
                            "skipped",
                        )
                    )
                    continue
            if _is_dir(entry):
                tst = path.stat()
                if (tst.st_dev, tst.st_ino) in seen_dirs:
                    out.problems.append(
                        Problem(
                            shown,
                            "symlink_loop",
                            "folder already visited (symlink loop or second link)",
                            "skipped",
                        )
                    )
                    continue
                visit(path, entry_rel)
            elif Path(entry.name).suffix.lower() in MARKDOWN_SUFFIXES and not (
                rel == PurePosixPath() and _is_corpus_doc(entry.name)
            ):
                if not _is_regular(entry):  # reading a FIFO would wait for a writer
                    out.problems.append(
                        Problem(
                            shown,
                            "unreadable",
                            "not a regular file (pipe, socket or device)",
                            "skipped",
                        )
                    )
                    continue
                stored = prefix / entry_rel
                size = len(stored.as_posix().encode())
                if size > MAX_PATH_BYTES:
                    out.problems.append(
                        Problem(
                            shown,
                            "path_too_long",
                            f"the path is {size:,} bytes long; at most {MAX_PATH_BYTES:,} "
                            "can be stored: move the note up or shorten folder names",
                            "skipped",
                        )
                    )
                    continue
                out.files.append((stored.as_posix(), path, _vendor_folder(stored)))

    visit(base, PurePosixPath())
    out.files.sort(key=lambda f: f[0])
    return out


def list_files(root: str | os.PathLike[str]) -> list[FileStat]:
    """Path, size, mtime and sha256 of every markdown file, without parsing.

    This is the "has anything changed" check of an incremental run: it reads and hashes
    the bytes (the whole 11 MB corpus in well under a second) but decodes nothing.
    Files that cannot be read are left out; :func:`iter_documents` reports them.
    """
    result = []
    for stored, path, _folder in walk(Path(root)).files:
        try:
            with path.open("rb") as handle:
                st = os.fstat(handle.fileno())
                if not stat.S_ISREG(st.st_mode):
                    continue
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError:
            continue
        result.append(FileStat(stored, st.st_size, st.st_mtime_ns, digest))
    return result
