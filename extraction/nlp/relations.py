"""Typed relations between the entities of one parsed text.

The dependency rules (:mod:`extraction.nlp.relation_rules`) find typed relations
between the mentions of a sentence, each with the calibrated confidence of its
rule family; pairs without a typed relation get a weak, capped
``MENTIONED_WITH``. A relation found between two mentions is repeated for
every mention of the same two entities (:mod:`extraction.nlp.coref`): same name,
resolved pronouns, and parenthesised aliases ("The Los Angeles Philharmonic
(LA Phil, LAPO)").

When a trained :class:`~extraction.nlp.relclf.RelationClassifier` is passed to
:func:`extract_relations` (the :class:`~extraction.nlp.extractor.Extractor` passes the
shipped one), it decides WORKS_FOR, FOUNDED_BY, LOCATED_IN and SUBSIDIARY_OF
with its own out-of-fold calibration, and the rule families become its
features; the rules' table then only sets the other types' confidences.
Guessed mentions (proper-noun runs NER missed) reach the classifier only: the
rules were calibrated without them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from spacy.tokens import Doc, Span

from extraction.models import RelationMention
from extraction.nlp.coref import Mention, alias_mentions, coreference_groups, sentence_groups
from extraction.nlp.relation_patterns import PatternFound, find_pattern_relations
from extraction.nlp.relation_rules import Found, confidence, find_relations
from extraction.nlp.relclf import RelationClassifier
from extraction.nlp.spans import name_chars

_PARAGRAPH = re.compile(r"(?:(?!\n[ \t]*\n).)+", re.S)
COOCCURRENCE_NEAR = 0.3
COOCCURRENCE_FAR = 0.2
MAX_COOCCURRENCE_PER_SENTENCE = 8


def _mention(r: Found, sent: Span, confidence: float) -> RelationMention:
    return RelationMention(
        source=r.source.canonical,
        source_label=r.source.label,
        target=r.target.canonical,
        target_label=r.target.label,
        type=r.type,
        confidence=confidence,
        sentence=sent.text.strip(),
        source_span=name_chars(r.source.span),
        target_span=name_chars(r.target.span),
        method="dependency",
    )


def extract_relations(
    doc: Doc,
    mentions: Sequence[Mention],
    *,
    keep_unresolved_pronouns: bool = False,
    max_cooccurrence: int = MAX_COOCCURRENCE_PER_SENTENCE,
    classifier: RelationClassifier | None = None,
    subject: str | None = None,
    patterns: Sequence[PatternFound] | None = None,
) -> list[RelationMention]:
    """Typed relations plus capped ``MENTIONED_WITH`` for one parsed text.

    A typed relation found between two mentions is repeated for every other
    mention of the same two entities (:func:`coreference_groups`), with the
    same confidence and the evidence sentence of the original finding.

    Parameters
    ----------
    doc
        Parsed text (needs the parser for sentences and dependencies).
    mentions
        Entity mentions and pronoun mentions (:func:`pronoun_mentions`).
    keep_unresolved_pronouns
        Keep relations whose end is a pronoun with no antecedent.
    max_cooccurrence
        Most ``MENTIONED_WITH`` pairs per sentence (nearest pairs first).
    classifier
        A trained :class:`~extraction.nlp.relclf.RelationClassifier`: it decides
        the types it was trained on (the rule families become its features);
        the rules keep every other type.
    subject
        The product the text's note is about: "It" as a subject stands for it in
        the dependency patterns (:mod:`extraction.nlp.relation_patterns`), whose
        findings come after the classifier's and never become its features.
    patterns
        The patterns' findings, when the caller already has them (the
        :class:`~extraction.nlp.extractor.Extractor` types entities by them).
    """
    out: list[RelationMention] = []
    best: dict[tuple[str, tuple[int, int], tuple[int, int]], int] = {}
    linked: set[tuple[int, int]] = set()
    aliases = alias_mentions(doc, mentions)
    everything = [*mentions, *(alias for alias, _ in aliases)]
    group = coreference_groups(mentions, aliases)
    # by span, not identity: a relabelled end (``relation_rules._classify_relabelled``) is a copy
    index: dict[tuple[int, int], int] = {}
    for k, m in enumerate(everything):
        index.setdefault((m.span.start, m.span.end), k)
    members: dict[int, list[Mention]] = {}
    for m, g in zip(everything, group, strict=True):
        members.setdefault(g, []).append(m)

    def usable(m: Mention) -> bool:
        return keep_unresolved_pronouns or m.resolved

    by_rules = find_relations(doc, mentions)
    decided: list[tuple[Found, Span, float | None]] = []
    if classifier is not None:
        decided.extend(classifier.predict(doc, mentions, by_rules, usable))
    for r, sent in by_rules:
        if r.source.guessed or r.target.guessed:
            continue  # the rules' calibration never saw guessed names
        if classifier is None or r.type not in classifier.types:
            decided.append((r, sent, None))
    for r, sent, given in decided:
        if not (usable(r.source) and usable(r.target)):
            continue
        conf = (
            given
            if given is not None
            else confidence(r.type, r.family, r.edges, r.source.pronoun or r.target.pronoun)
        )
        if conf is None:
            continue
        a, b = sorted((r.source.span.start, r.target.span.start))
        linked.add((a, b))
        g_src = group[index[r.source.span.start, r.source.span.end]]
        g_tgt = group[index[r.target.span.start, r.target.span.end]]
        if g_src == g_tgt:
            continue
        for src in members[g_src]:
            for tgt in members[g_tgt]:
                if not (usable(src) and usable(tgt)):
                    continue
                found = Found(r.type, _as(src, r.source), _as(tgt, r.target), r.family, r.edges)
                rel = _mention(found, sent, conf)
                key = (rel.type, rel.source_span, rel.target_span)
                at = best.get(key)
                if at is None:
                    best[key] = len(out)
                    out.append(rel)
                elif out[at].confidence < conf:
                    out[at] = rel
    if patterns is None:
        patterns = find_pattern_relations(doc, mentions, subject)
    for p in patterns:
        conf = pattern_confidence(p)
        if conf is None:
            continue
        a, b = sorted((p.source.span.start, p.target.span.start))
        linked.add((a, b))
        rel = _pattern_mention(p, conf)
        key = (rel.type, rel.source_span, rel.target_span)
        at = best.get(key)
        if at is None:
            best[key] = len(out)
            out.append(rel)
        elif out[at].confidence < conf:
            out[at] = rel
    if max_cooccurrence > 0:
        out.extend(_cooccurrences(doc, mentions, linked, max_cooccurrence))
    return out


def pattern_confidence(p: PatternFound) -> float | None:
    """The calibrated confidence of a pattern's rule (None: the rule is not emitted)."""
    return confidence(p.type, f"pattern:{p.rule}", 1, p.source.pronoun or p.target.pronoun)


def evidence_text(sent: Span, *ends: Span) -> str:
    """The sentence, without the paragraphs the parser ran it across that hold neither
    end (a heading and the paragraph before it are no part of "OpenSearch is a fork of
    Elasticsearch")."""
    text = sent.text
    if "\n\n" not in text.strip() or not ends:
        return text.strip()
    lo = min(e.start_char for e in ends) - sent.start_char
    hi = max(e.end_char for e in ends) - sent.start_char
    parts = [(m.start(), m.end()) for m in _PARAGRAPH.finditer(text)]
    kept = [text[a:b] for a, b in parts if a < hi and b > lo]
    return " ".join(" ".join(k.split()) for k in kept) or text.strip()


def _pattern_mention(p: PatternFound, confidence: float) -> RelationMention:
    return RelationMention(
        source=p.source.canonical,
        source_label=p.source.label,
        target=p.target.canonical,
        target_label=p.target.label,
        type=p.type,
        confidence=confidence,
        sentence=evidence_text(p.sentence, p.source.span, p.target.span),
        source_span=name_chars(p.source.span),
        target_span=name_chars(p.target.span),
        method=f"pattern:{p.rule}",
        detail=p.detail,
    )


def _as(m: Mention, original: Mention) -> Mention:
    """``m`` with the label and canonical name of the group member the relation was found on."""
    if m is original or m.label == original.label:
        return m
    return replace(m, label=original.label)


def _cooccurrences(
    doc: Doc, mentions: Sequence[Mention], linked: set[tuple[int, int]], cap: int
) -> list[RelationMention]:
    named = sorted(
        (m for m in mentions if not (m.pronoun or m.guessed)), key=lambda m: m.span.start
    )
    out: list[RelationMention] = []
    for sent, group in sentence_groups(doc, named):
        pairs = sorted(
            (
                (b.span.start - a.span.end, a, b)
                for i, a in enumerate(group)
                for b in group[i + 1 :]
                if (a.span.start, b.span.start) not in linked
                and not (a.label == b.label and a.canonical == b.canonical)
            ),
            key=lambda p: p[0],
        )[:cap]
        for gap, a, b in pairs:
            conf = COOCCURRENCE_NEAR if gap <= 10 else COOCCURRENCE_FAR
            out.append(
                RelationMention(
                    source=a.canonical,
                    source_label=a.label,
                    target=b.canonical,
                    target_label=b.label,
                    type="MENTIONED_WITH",
                    confidence=conf,
                    sentence=sent.text.strip(),
                    source_span=(a.span.start_char, a.span.end_char),
                    target_span=(b.span.start_char, b.span.end_char),
                    method="cooccurrence",
                )
            )
    return out
