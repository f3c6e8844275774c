"""Markdown as chunking reads it: cleaned of markup that costs tokens but carries no
meaning, and split at ATX headings into sections of prose, line and code blocks.

Fenced code is kept verbatim, and a heading inside a fence is no heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Section", "clean_markdown", "split_sections"]

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_NOISE = (
    (re.compile(r"<!--.*?(?:-->|\Z)", re.S), ""),  # HTML comments
    (re.compile(r"\{%-?.*?-?%\}|\{\{.*?\}\}", re.S), ""),  # Liquid tags and outputs
    (re.compile(r"^[ \t]*\{:[^}\n]*\}[ \t]*$", re.M), ""),  # kramdown block attributes
    (re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*\S+.*$", re.M), ""),  # reference definitions
    (re.compile(r"!\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)"), r"\1"),  # images -> alt
    (re.compile(r"\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)"), r"\1"),  # links -> text
    (re.compile(r"\[([^\]\n]+)\]\[[^\]\n]*\]"), r"\1"),  # reference links -> text
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>"), ""),  # HTML tags
    (re.compile(r"^(?:[ \t]{0,3}>[ \t]?)+", re.M), ""),  # block quote markers
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # strong emphasis markers
)


def clean_markdown(markdown: str) -> str:
    """Remove markup that costs tokens but carries no meaning; fenced code stays as is.

    Examples
    --------
    >>> clean_markdown("> See [the docs](https://example.com/a/very/long/path) <!-- x -->")
    'See the docs '
    """
    out: list[str] = []
    prose: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if prose:
            text = "".join(prose)
            for pattern, replacement in _NOISE:
                text = pattern.sub(replacement, text)
            out.append(text)
            prose.clear()

    for line in markdown.replace("\r\n", "\n").splitlines(keepends=True):
        match = _FENCE.match(line)
        if fence is None and match:
            flush()
            fence = match.group(1)
            out.append(line)
        elif fence is not None:
            out.append(line)
            if match and match.group(1).startswith(fence) and not line.strip()[len(fence) :]:
                fence = None
        else:
            prose.append(line)
    flush()
    return "".join(out)


_HEADING = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_LINE_ITEM = re.compile(r"^[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|\|)")


@dataclass(frozen=True, slots=True)
class Section:
    """Text under one heading; ``path`` starts with the document title (when there is one)."""

    path: tuple[str, ...]
    level: int
    """Heading level (0 for the text before the first heading)."""
    blocks: tuple[tuple[str, str], ...]
    """(kind, text) with kind ``prose``, ``lines`` or ``code``."""


def _blocks(lines: list[str]) -> list[tuple[str, str]]:
    blocks: list[tuple[str, str]] = []
    current: list[str] = []
    fence: str | None = None

    def close(kind: str | None = None) -> None:
        if current and any(line.strip() for line in current):
            if kind is None:
                items = sum(1 for line in current if _LINE_ITEM.match(line))
                kind = "lines" if items * 2 >= len(current) and items else "prose"
            blocks.append((kind, "\n".join(line.rstrip() for line in current)))
        current.clear()

    for line in lines:
        match = _FENCE.match(line)
        if fence is None and match:
            close()
            fence = match.group(1)
            current.append(line)
        elif fence is not None:
            current.append(line)
            if match and match.group(1).startswith(fence) and not line.strip()[len(fence) :]:
                fence = None
                close("code")
        elif not line.strip():
            close()
        else:
            current.append(line)
    close("code" if fence is not None else None)
    return blocks


def split_sections(markdown: str, title: str = "") -> list[Section]:
    """Split (cleaned) markdown at ATX headings outside code fences.

    Examples
    --------
    >>> [s.path for s in split_sections("Intro.\\n\\n## Setup\\n\\nRun it.\\n", "Tool")]
    [('Tool',), ('Tool', 'Setup')]
    """
    root: tuple[str, ...] = (title,) if title else ()
    sections: list[Section] = []
    stack: list[tuple[int, str]] = []
    level = 0
    lines: list[str] = []
    fence: str | None = None

    def close() -> None:
        blocks = _blocks(lines)
        if blocks:
            names = [name for _, name in stack]
            # a top heading that repeats the title adds nothing to the path
            if names and root and names[0].casefold() == title.casefold():
                names = names[1:]
            sections.append(Section((*root, *names), level, tuple(blocks)))
        lines.clear()

    for line in markdown.split("\n"):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
        elif fence is not None and match and match.group(1).startswith(fence):
            fence = None
        heading = _HEADING.match(line) if fence is None and not match else None
        if heading is None:
            lines.append(line)
            continue
        close()
        level = len(heading.group(1))
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, heading.group(2).strip()))
    close()
    return sections
