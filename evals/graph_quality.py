"""How right the vendor graphs are, against hand-labelled vendor folders.

``python -m evals graph`` brings the evaluation knowledge base
(``kb_eval_vendor_corpus``, shared with the search and disambiguation
harnesses) up to date with the vendor corpus (incrementally), then scores
each labelled folder (``evals/data/vendor_graph/gold/*.json``, format and rule in
``evals/data/vendor_graph/README.md``):

* an extracted entity counts when it has a mention in a chunk of the folder's
  notes; it is a true positive if its name or an alias matches a required gold
  entity (name or alias; case, punctuation and legal suffixes ignored), neutral if
  it matches an optional one, a false positive otherwise. A second entity matching
  a gold entity already matched is a duplicate: a false positive, because the graph
  should hold one entity per real thing. Recall is over required gold entities;
  type accuracy is over the extracted entities that matched a gold one. Per type,
  an entity counts for the type it was given, and a name found with another type
  than its label is an error of that type and a miss of the labelled one.
* a typed relationship (every type but the weak MENTIONED_WITH) counts when its
  evidence lies in the folder's notes; it matches a gold relation of its type whose
  ends match its ends (either order for symmetric types), with the same three
  outcomes. Recall is over required gold relations.

The labelled folders come in splits (``evals/data/vendor_graph/splits.json``):
``first``, ``tune`` to ``tune6``, ``tune8`` and ``tune9`` are the folders rules may be
tuned on (``tune3`` to ``tune6`` and ``tune8`` were each read untuned first, their scores
only, then their misses; ``tune9`` is the former holdout, read after ten sessions),
``holdout`` is only ever reported, and ``tune7``, the newest draw, is read untuned (its
scores only) until its misses are read. Every split is reported apart (overall and per
type), beside the total of the splits scored; ``--split`` scores only the splits named,
so that a tuning run never reads the untuned folders' results.

The scoring is pure (:func:`score_folder`); :func:`read_folder` reads what the
knowledge base holds for a folder.

The module is long (about 690 lines) because the scoring rules above, the splits, the
reading of a folder and the report's tables follow one another and share the matching
of names.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evals import DATA, eval_queries
from evals.cli import HarnessError, reported, show_report
from evals.corpus import build_vendor_corpus, checked_corpus, default_corpus, eval_database
from extraction.names import normalize_name

GOLD_DIR = DATA / "vendor_graph" / "gold"
#: Which labelled folder is in which split; beside the gold folder.
SPLITS_FILE = "splits.json"
#: The split only ever reported.
HOLDOUT = "holdout"
#: The splits no rule was tuned on: the holdout, and the newest draw (``tune7``) until
#: its misses are read (then it is tuned on, as ``tune3`` to ``tune6`` were: each was
#: read untuned first, as ``tune8`` was after it, docs/building-the-graph.md; ``tune9``,
#: the former holdout, had its misses read once every large folder was labelled). Every
#: other split's figures are tuned figures.
UNTUNED = frozenset([HOLDOUT, "tune7"])
#: The one split of a gold folder without a splits file beside it.
NO_SPLITS = "all"
SYMMETRIC = frozenset({"PARTNERS_WITH", "COMPETES_WITH", "RELATED_TO"})
ENTITY_TYPES = ("ORG", "PERSON", "PRODUCT", "LOCATION", "EVENT")


class GoldError(ValueError):
    """A labelled file that cannot be used (the message names the file and the problem)."""


@dataclass(frozen=True, slots=True)
class GoldEntity:
    name: str
    type: str
    aliases: tuple[str, ...]
    required: bool

    def keys(self) -> set[str]:
        return {k for k in (_key(n) for n in (self.name, *self.aliases)) if k}


@dataclass(frozen=True, slots=True)
class GoldRelation:
    source: str
    type: str
    target: str
    required: bool


@dataclass(frozen=True, slots=True)
class GoldFolder:
    folder: str
    vendor: str
    notes: tuple[str, ...]
    entities: tuple[GoldEntity, ...]
    relations: tuple[GoldRelation, ...]


@dataclass(frozen=True, slots=True)
class FoundEntity:
    name: str
    type: str
    aliases: tuple[str, ...] = ()

    def keys(self) -> set[str]:
        return {k for k in (_key(n) for n in (self.name, *self.aliases)) if k}


@dataclass(frozen=True, slots=True)
class FoundRelation:
    source: FoundEntity
    type: str
    target: FoundEntity
    confidence: float = 1.0


@dataclass(slots=True)
class Tally:
    tp: int = 0
    fp: int = 0
    neutral: int = 0
    required: int = 0
    found_required: int = 0

    def add(self, other: Tally) -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.neutral += other.neutral
        self.required += other.required
        self.found_required += other.found_required

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.found_required / self.required if self.required else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "neutral": self.neutral,
            "required": self.required,
            "found_required": self.found_required,
            "precision": _round(self.precision),
            "recall": _round(self.recall),
        }


@dataclass(slots=True)
class FolderScore:
    folder: str
    split: str = NO_SPLITS
    entities: Tally = field(default_factory=Tally)
    entity_types: dict[str, Tally] = field(default_factory=dict)
    typed_right: int = 0
    typed_matched: int = 0
    relations: Tally = field(default_factory=Tally)
    relation_types: dict[str, Tally] = field(default_factory=dict)
    false_entities: list[str] = field(default_factory=list)
    missed_entities: list[str] = field(default_factory=list)
    wrong_types: list[str] = field(default_factory=list)
    false_relations: list[str] = field(default_factory=list)
    missed_relations: list[str] = field(default_factory=list)

    @property
    def type_accuracy(self) -> float | None:
        return self.typed_right / self.typed_matched if self.typed_matched else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _key(name: str) -> str:
    return normalize_name(name) or name.strip().casefold()


def load_gold(path: Path) -> GoldFolder:
    """One labelled folder; a file that breaks the format is refused, naming why."""
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise GoldError(f"{path}: cannot read ({exc.strerror})") from None
    except orjson.JSONDecodeError as exc:
        raise GoldError(f"{path}: not JSON ({exc})") from None
    try:
        entities = tuple(
            GoldEntity(
                str(e["name"]),
                str(e["type"]),
                tuple(str(a) for a in e.get("aliases", [])),
                bool(e.get("required", True)),
            )
            for e in data["entities"]
        )
        relations = tuple(
            GoldRelation(str(r["source"]), str(r["type"]), str(r["target"]), bool(r["required"]))
            for r in data["relations"]
        )
        gold = GoldFolder(
            str(data["folder"]),
            str(data.get("vendor", data["folder"])),
            tuple(str(n) for n in data["notes"]),
            entities,
            relations,
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise GoldError(
            f"{path}: not in the labelled format ({type(exc).__name__}: {exc})"
        ) from None
    names = {e.name for e in gold.entities}
    for e in gold.entities:
        if e.type not in ENTITY_TYPES:
            raise GoldError(f"{path}: entity {e.name!r} has the unknown type {e.type!r}")
    for r in gold.relations:
        for end in (r.source, r.target):
            if end not in names:
                raise GoldError(f"{path}: relation end {end!r} is not a labelled entity")
    if not gold.notes:
        raise GoldError(f"{path}: lists no notes")
    return gold


def load_gold_dir(folder: Path) -> list[GoldFolder]:
    files = sorted(folder.glob("*.json"))
    if not files:
        raise GoldError(f"{folder}: no labelled folders (*.json)")
    return [load_gold(p) for p in files]


def load_splits(gold_dir: Path, golds: Sequence[GoldFolder]) -> dict[str, str]:
    """The split of every labelled folder, from ``splits.json`` beside ``gold_dir``
    (``{"first": [folder, ...], "tune": [...], "holdout": [...]}``); every folder is
    in :data:`NO_SPLITS` when there is no such file. A file that lists a folder twice,
    lists one without a labelled file or leaves a labelled folder out is refused."""
    path = gold_dir.parent / SPLITS_FILE
    if not path.is_file():
        return {g.folder: NO_SPLITS for g in golds}
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise GoldError(f"{path}: cannot read ({exc.strerror})") from None
    except orjson.JSONDecodeError as exc:
        raise GoldError(f"{path}: not JSON ({exc})") from None
    if not (
        isinstance(data, dict)
        and all(isinstance(v, list) and all(isinstance(f, str) for f in v) for v in data.values())
    ):
        raise GoldError(f"{path}: not a map of split names to lists of folders")
    split_of: dict[str, str] = {}
    for split, folders in data.items():
        for folder in folders:
            if folder in split_of:
                raise GoldError(f"{path}: {folder!r} is in {split_of[folder]!r} and {split!r}")
            split_of[folder] = split
    labelled = {g.folder for g in golds}
    if extra := sorted(set(split_of) - labelled):
        raise GoldError(
            f"{path}: {len(extra)} folder(s) without a labelled file (first: {extra[0]})"
        )
    if left := sorted(labelled - set(split_of)):
        raise GoldError(f"{path}: {len(left)} labelled folder(s) in no split (first: {left[0]})")
    return split_of


def score_folder(
    gold: GoldFolder,
    entities: Sequence[FoundEntity],
    relations: Sequence[FoundRelation],
    split: str = NO_SPLITS,
) -> FolderScore:
    """Score what the graph holds for one folder (see the module docstring)."""
    score = FolderScore(gold.folder, split)
    gold_keys = [g.keys() for g in gold.entities]

    def match(found: FoundEntity) -> int | None:
        keys = found.keys()
        hits = [i for i, k in enumerate(gold_keys) if k & keys]
        if not hits:
            return None
        # the gold entity named as the found one is named, else one whose own name
        # matches any of its names ("Oracle GraalVM", alias "GraalVM", is Oracle
        # GraalVM, not GraalVM), else the first listed
        named = _key(found.name)
        exact = [i for i in hits if _key(gold.entities[i].name) == named]
        own = exact or [i for i in hits if _key(gold.entities[i].name) in keys]
        same_type = [i for i in (own or hits) if gold.entities[i].type == found.type]
        return (same_type or own or hits)[0]

    matched: dict[int, int] = {}
    entity_match: dict[FoundEntity, int | None] = {}
    for found in sorted(set(entities), key=lambda e: (e.name, e.type)):
        i = match(found)
        entity_match[found] = i
        tally = score.entity_types.setdefault(found.type, Tally())
        if i is None:
            score.entities.fp += 1
            tally.fp += 1
            score.false_entities.append(f"{found.name} ({found.type})")
            continue
        g = gold.entities[i]
        score.typed_matched += 1
        if g.type == found.type:
            score.typed_right += 1
        else:
            score.wrong_types.append(f"{found.name}: {found.type}, labelled {g.type}")
        if i in matched:
            score.entities.fp += 1
            tally.fp += 1
            score.false_entities.append(f"{found.name} ({found.type}; duplicate of {g.name})")
            continue
        matched[i] = int(g.type == found.type)
        # per type, a name found with another type is an error of that type
        if g.required:
            score.entities.tp += 1
        else:
            score.entities.neutral += 1
        if g.type != found.type:
            tally.fp += 1
        elif g.required:
            tally.tp += 1
        else:
            tally.neutral += 1
    for i, g in enumerate(gold.entities):
        tally = score.entity_types.setdefault(g.type, Tally())
        if g.required:
            score.entities.required += 1
            tally.required += 1
            if i in matched:
                score.entities.found_required += 1
                tally.found_required += matched[i]
            else:
                score.missed_entities.append(f"{g.name} ({g.type})")

    by_name = {g.name: i for i, g in enumerate(gold.entities)}
    found_gold: set[int] = set()
    for rel in sorted(set(relations), key=lambda r: (r.type, r.source.name, r.target.name)):
        tally = score.relation_types.setdefault(rel.type, Tally())
        s, t = entity_match.get(rel.source), entity_match.get(rel.target)
        if s is None:
            s = match(rel.source)
        if t is None:
            t = match(rel.target)
        hit: int | None = None
        for j, gr in enumerate(gold.relations):
            if gr.type != rel.type or s is None or t is None:
                continue
            ends = (by_name[gr.source], by_name[gr.target])
            if ends == (s, t) or (gr.type in SYMMETRIC and ends == (t, s)):
                better = hit is None or (gr.required and not gold.relations[hit].required)
                hit = j if better else hit
        shown = f"{rel.source.name} {rel.type} {rel.target.name}"
        if hit is None:
            score.relations.fp += 1
            tally.fp += 1
            score.false_relations.append(shown)
        elif gold.relations[hit].required:
            if hit in found_gold:
                continue  # the same fact twice (symmetric, both orders): counted once
            found_gold.add(hit)
            score.relations.tp += 1
            tally.tp += 1
        else:
            score.relations.neutral += 1
            tally.neutral += 1
    for j, gr in enumerate(gold.relations):
        if not gr.required:
            continue
        tally = score.relation_types.setdefault(gr.type, Tally())
        score.relations.required += 1
        tally.required += 1
        if j in found_gold:
            score.relations.found_required += 1
            tally.found_required += 1
        else:
            score.missed_relations.append(f"{gr.source} {gr.type} {gr.target}")
    return score


@dataclass(slots=True)
class GraphEvalReport:
    folders: list[FolderScore]
    entities: Tally = field(default_factory=Tally)
    entity_types: dict[str, Tally] = field(default_factory=dict)
    relations: Tally = field(default_factory=Tally)
    relation_types: dict[str, Tally] = field(default_factory=dict)
    typed_right: int = 0
    typed_matched: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def type_accuracy(self) -> float | None:
        return self.typed_right / self.typed_matched if self.typed_matched else None

    def splits(self) -> dict[str, GraphEvalReport]:
        """The report of each split scored, in the order the folders came."""
        names = list(dict.fromkeys(f.split for f in self.folders))
        return {n: combine(f for f in self.folders if f.split == n) for n in names}

    def totals(self) -> dict[str, Any]:
        """The aggregate figures, without the folders."""
        return {
            "folders": len(self.folders),
            "entities": self.entities.to_dict() | {"type_accuracy": _round(self.type_accuracy)},
            "entity_types": {t: v.to_dict() for t, v in sorted(self.entity_types.items())},
            "relations": self.relations.to_dict(),
            "relation_types": {t: v.to_dict() for t, v in sorted(self.relation_types.items())},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "meta": self.meta,
            **self.totals(),
            "splits": {
                name: report.totals() | {"tuned": name not in UNTUNED}
                for name, report in self.splits().items()
            },
            "folders": [
                {
                    "folder": f.folder,
                    "split": f.split,
                    "entities": f.entities.to_dict() | {"type_accuracy": _round(f.type_accuracy)},
                    "relations": f.relations.to_dict(),
                    "false_entities": f.false_entities,
                    "missed_entities": f.missed_entities,
                    "wrong_types": f.wrong_types,
                    "false_relations": f.false_relations,
                    "missed_relations": f.missed_relations,
                }
                for f in self.folders
            ],
        }


def combine(folders: Iterable[FolderScore]) -> GraphEvalReport:
    report = GraphEvalReport(list(folders))
    for f in report.folders:
        report.entities.add(f.entities)
        report.relations.add(f.relations)
        report.typed_right += f.typed_right
        report.typed_matched += f.typed_matched
        for t, tally in f.entity_types.items():
            report.entity_types.setdefault(t, Tally()).add(tally)
        for t, tally in f.relation_types.items():
            report.relation_types.setdefault(t, Tally()).add(tally)
    return report


def read_folder(conn: Any, gold: GoldFolder) -> tuple[list[FoundEntity], list[FoundRelation]]:
    """What the knowledge base holds with a mention (entities) or evidence
    (relationships) in the labelled folder's notes."""
    q = eval_queries()
    chunk_ids = [
        int(r["id"]) for r in conn.execute(q["graph_eval_chunks"], {"paths": list(gold.notes)})
    ]
    entities = [
        FoundEntity(r["name"], r["type"], tuple(r["aliases"]))
        for r in conn.execute(q["graph_eval_entities"], {"chunk_ids": chunk_ids})
    ]
    relations = [
        FoundRelation(
            FoundEntity(r["source"], r["source_type"], tuple(r["source_aliases"])),
            r["type"],
            FoundEntity(r["target"], r["target_type"], tuple(r["target_aliases"])),
            float(r["confidence"]),
        )
        for r in conn.execute(q["graph_eval_relationships"], {"chunk_ids": chunk_ids})
    ]
    return entities, relations


def missing_notes(conn: Any, gold: GoldFolder) -> list[str]:
    """Labelled notes the knowledge base does not hold (a wrong corpus, or a typo)."""
    held = {
        r["source_path"]
        for r in conn.execute(eval_queries()["graph_eval_documents"], {"paths": list(gold.notes)})
    }
    return [n for n in gold.notes if n not in held]


def run_graph_eval(
    corpus: Path,
    gold_dir: Path,
    *,
    quiet: bool = False,
    splits: Sequence[str] | None = None,
) -> GraphEvalReport:
    """Bring the evaluation database up to date with ``corpus`` (incrementally),
    then score every labelled folder of ``gold_dir`` (of the ``splits`` named, when
    given: the others are not read at all)."""
    golds = load_gold_dir(gold_dir)
    split_of = load_splits(gold_dir, golds)
    order = {name: k for k, name in enumerate(dict.fromkeys(split_of.values()))}
    golds = sorted(golds, key=lambda g: (order[split_of[g.folder]], g.folder))
    if splits is not None:
        known = sorted(set(split_of.values()))
        if unknown := sorted(set(splits) - set(known)):
            raise GoldError(f"no split named {unknown[0]!r} (the splits: {', '.join(known)})")
        golds = [g for g in golds if split_of[g.folder] in splits]
    db = eval_database()
    started = time.perf_counter()
    build = build_vendor_corpus(db, corpus, quiet=quiet)
    rebuild_s = time.perf_counter() - started
    scores = []
    with db.connect() as conn:
        for gold in golds:
            absent = missing_notes(conn, gold)
            if absent:
                raise GoldError(
                    f"{gold.folder}: {len(absent)} labelled note(s) are not in the knowledge "
                    f"base built from {corpus} (first: {absent[0]})"
                )
            scores.append(score_folder(gold, *read_folder(conn, gold), split_of[gold.folder]))
    report = combine(scores)
    report.meta = {
        "corpus": str(corpus),
        "gold": str(gold_dir),
        "splits": list(dict.fromkeys(split_of[g.folder] for g in golds)),
        "folders": len(golds),
        "notes": sum(len(g.notes) for g in golds),
        "database": db.description,
        "rebuild_seconds": round(rebuild_s, 1),
        "documents_rebuilt": build.documents_new
        + build.documents_changed
        + build.documents_reextracted,
        "vendor_graphs_rebuilt": build.vendors_rebuilt,
        "build_id": build.build_id,
    }
    return report


def _share(value: float | None) -> str:
    # three places: a target of 0.85 is not met by 0.846, which two would show as 0.85
    return "-" if value is None else f"{value:.3f}"


def render_graph_eval(console: Console, report: GraphEvalReport, *, details: bool = False) -> None:
    """The vendor-graph harness's tables (:class:`GraphEvalReport`): each split apart
    (``tuned`` says whether rules were tuned on it), then the folders."""
    meta = report.meta
    console.print(
        f"[bold]Vendor graphs against {meta['folders']} labelled folders "
        f"({meta['notes']} notes)[/] in {escape(meta['database'])}; rebuild brought "
        f"{meta['documents_rebuilt']} note(s) up to date in {meta['rebuild_seconds']} s."
    )
    splits = report.splits()
    parts = [*splits.items(), ("all scored", report)] if len(splits) > 1 else list(splits.items())
    head = Table(title="Overall, by split", title_justify="left")
    for col in ("split", "", "precision", "recall", "type accuracy", "TP", "FP", "neutral",
                "required"):  # fmt: skip
        head.add_column(col, justify="left" if col in ("split", "") else "right")
    for name, part in parts:
        e, r = part.entities, part.relations
        shown = escape(name) + ("" if name in (*UNTUNED, "all scored") else " (tuned)")
        head.add_row(
            shown,
            "entities",
            _share(e.precision),
            _share(e.recall),
            _share(part.type_accuracy),
            str(e.tp),
            str(e.fp),
            str(e.neutral),
            str(e.required),
        )
        head.add_row(
            "",
            "typed relationships",
            _share(r.precision),
            _share(r.recall),
            "",
            str(r.tp),
            str(r.fp),
            str(r.neutral),
            str(r.required),
        )
    console.print(head)
    kinds: list[tuple[str, Callable[[GraphEvalReport], dict[str, Tally]]]] = [
        ("Entities by type and split", lambda p: p.entity_types),
        ("Typed relationships by type and split", lambda p: p.relation_types),
    ]
    for title, per_type in kinds:
        table = Table(title=title, title_justify="left")
        for col in ("type", "split", "precision", "recall", "TP", "FP", "neutral", "required"):
            table.add_column(col, justify="left" if col in ("type", "split") else "right")
        types = sorted({t for _, part in parts for t in per_type(part)})
        for name in types:
            for split, part in parts:
                t = per_type(part).get(name)
                if t is None:
                    continue
                table.add_row(
                    name,
                    escape(split),
                    _share(t.precision),
                    _share(t.recall),
                    str(t.tp),
                    str(t.fp),
                    str(t.neutral),
                    str(t.required),
                )
        console.print(table)
    folders = Table(title="By folder", title_justify="left")
    for col in ("folder", "split", "ent. P", "ent. R", "types", "rel. P", "rel. R"):
        folders.add_column(col, justify="left" if col in ("folder", "split") else "right")
    for f in report.folders:
        folders.add_row(
            escape(f.folder),
            escape(f.split),
            _share(f.entities.precision),
            _share(f.entities.recall),
            _share(f.type_accuracy),
            _share(f.relations.precision),
            _share(f.relations.recall),
        )
    console.print(folders)
    if details:
        for f in report.folders:
            console.print(f"[bold]{escape(f.folder)}[/] ({escape(f.split)})")
            for label, items in (
                ("false entities", f.false_entities),
                ("missed entities", f.missed_entities),
                ("wrong types", f.wrong_types),
                ("false relationships", f.false_relations),
                ("missed relationships", f.missed_relations),
            ):
                if items:
                    console.print(f"  {label}: " + escape("; ".join(items)), soft_wrap=True)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m evals graph``."""
    parser = argparse.ArgumentParser(
        prog="python -m evals graph",
        description="Bring the evaluation knowledge base (database kb_eval_vendor_corpus on "
        "the configured server) up to date with the vendor corpus, incrementally, then score "
        "each labelled folder's graph: entity precision, recall and type accuracy, and "
        "typed-relationship precision and recall, overall and per type, for each split of "
        "the labelled folders apart (first, tune to tune6, tune8 and tune9: tuned on; "
        "holdout: only reported; tune7: read untuned). The labelled format, the splits and how the "
        "folders were chosen: evals/data/vendor_graph/README.md.",
    )
    parser.add_argument(
        "--gold",
        type=Path,
        default=None,
        help="folder of labelled vendor folders (*.json; default: evals/data/vendor_graph/gold)",
    )
    parser.add_argument(
        "--corpus",
        type=Path,
        default=None,
        help="vendor corpus the labels are on (default: $KB_EVAL_DATA/vendor_corpus, else "
        "shared/data/vendor_corpus beside this repository)",
    )
    parser.add_argument(
        "--split",
        action="append",
        default=None,
        metavar="NAME",
        help="score only this split of splits.json (first, tune, tune2 ... tune9, holdout; "
        "repeat for several; default: every split). Tune with --split first --split tune "
        "--split tune2 --split tune3 --split tune4 --split tune5 --split tune6 --split tune8 "
        "--split tune9: the untuned folders' results are then never read",
    )
    parser.add_argument(
        "--details", action="store_true", help="also list each folder's errors and misses"
    )
    parser.add_argument(
        "--json", action="store_true", help="print JSON (every folder's errors too)"
    )
    args = parser.parse_args(argv)
    return reported(lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    gold: Path = args.gold or GOLD_DIR
    corpus: Path = args.corpus or default_corpus()
    if not gold.is_dir():
        raise HarnessError(f"{gold}: no such folder of labelled vendor folders")
    checked_corpus(corpus)
    try:
        report = run_graph_eval(corpus, gold, quiet=args.json, splits=args.split)
    except GoldError as exc:
        raise HarnessError(str(exc)) from None
    return show_report(
        report.to_dict(),
        args.json,
        lambda: render_graph_eval(Console(), report, details=args.details),
    )
