"""The mentions relation extraction reads, and who they stand for.

Pronouns ("He was CEO of X", "X, which is based in Y") are mentions too:
they resolve to the nearest preceding PERSON / ORG (or the relative clause's
head) and keep their own span as evidence. Names given in parentheses after a
name are more names of it ("The Los Angeles Philharmonic (LA Phil, LAPO)"),
and :func:`coreference_groups` puts the mentions of one entity together, so
that a relation found between two mentions holds for all of them.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from extraction.names import display_form
from extraction.nlp.relation_words import CLAUSAL, ORG_PRONOUNS, PERSON_PRONOUNS, RELATIVE


@dataclass(frozen=True, slots=True)
class Mention:
    """An entity (or pronoun) span with our type and its canonical name."""

    span: Span
    label: str
    canonical: str
    pronoun: bool = False
    resolved: bool = True
    """False for a pronoun with no antecedent in the text."""
    guessed: bool = False
    """A proper-noun run NER did not tag (:func:`~extraction.nlp.spans.proper_noun_runs`):
    its label is a guess, and only the trained classifier relates it."""


def pronoun_mentions(doc: Doc, mentions: Sequence[Mention]) -> list[Mention]:
    """Pronouns that can stand for a PERSON or ORG, resolved when possible.

    ``he/she/his/her`` take the nearest preceding PERSON, ``it/its/they``
    the nearest preceding ORG, ``who/which`` the entity their relative
    clause hangs on. Unresolved pronouns keep their own text as canonical.
    """
    if not mentions:
        return []
    owner = token_owner(doc, mentions)
    starts = [m.span.start for m in mentions]
    found: list[Mention] = []
    for tok in doc:
        low = tok.lower_
        if owner[tok.i] >= 0 or (
            low not in PERSON_PRONOUNS and low not in ORG_PRONOUNS and low not in CLAUSAL
        ):
            continue
        if low in CLAUSAL:
            # "X, where he worked", "X, a company that provides ...": only a
            # relative clause on an organisation (or on a noun in apposition to
            # one); "where" after a place is the place itself
            if not (
                tok.head.dep_ == "relcl"
                and (low != "that" or tok.tag_ == "WDT")
                and _owner_label(owner, mentions, _clause_host(tok.head.head, owner)) == "ORG"
            ):
                continue
        elif tok.pos_ not in ("PRON", "DET") and tok.tag_ not in ("WP", "WDT", "WP$", "PRP$"):
            continue
        antecedent: Mention | None = None
        if low in RELATIVE:
            # "X, who founded Y": who <-nsubj- founded <-relcl- X
            verb = tok.head
            host = _clause_host(verb.head, owner)
            if verb.dep_ == "relcl" and owner[host.i] >= 0:
                antecedent = mentions[owner[host.i]]
            want = "PERSON" if low in PERSON_PRONOUNS else "ORG"
            if antecedent is not None and antecedent.label == "LOCATION" and want == "ORG":
                # "CEO of Acme, based in Brisbane, which she founded": the
                # parser hangs the clause on the nearest noun, a place that
                # cannot be founded or worked for; take the sentence's last ORG
                antecedent = _previous(mentions, starts, tok, "ORG", tok.sent.start)
            label = (
                antecedent.label
                if antecedent is not None
                else ("PERSON" if low in PERSON_PRONOUNS else "ORG")
            )
        else:
            label = "PERSON" if low in PERSON_PRONOUNS else "ORG"
            antecedent = _previous(mentions, starts, tok, label, 0)
        if antecedent is not None and antecedent.label not in ("PERSON", "ORG"):
            antecedent = None
        span = doc[tok.i : tok.i + 1]
        found.append(
            Mention(
                span,
                label,
                antecedent.canonical if antecedent is not None else tok.text,
                pronoun=True,
                resolved=antecedent is not None,
            )
        )
    return found


def _clause_host(tok: Token, owner: list[int]) -> Token:
    """The mention token a relative clause is about.

    "Altiscale, a company that provides ...": the clause hangs on "company",
    which stands in apposition to the organisation.
    """
    if owner[tok.i] < 0 and tok.dep_ == "appos" and tok.pos_ == "NOUN":
        return tok.head
    return tok


def _previous(
    mentions: Sequence[Mention], starts: list[int], tok: Token, label: str, floor: int
) -> Mention | None:
    """The nearest mention of ``label`` that starts before ``tok`` and at or after ``floor``."""
    k = bisect.bisect_left(starts, tok.i) - 1
    while k >= 0 and starts[k] >= floor:
        if mentions[k].label == label:
            return mentions[k]
        k -= 1
    return None


def _owner_label(owner: list[int], mentions: Sequence[Mention], tok: Token) -> str | None:
    k = owner[tok.i]
    return mentions[k].label if k >= 0 else None


def token_owner(doc: Doc, mentions: Sequence[Mention]) -> list[int]:
    owner = [-1] * len(doc)
    for k, m in enumerate(mentions):
        for i in range(m.span.start, m.span.end):
            owner[i] = k
    return owner


def sentence_groups(doc: Doc, mentions: Sequence[Mention]) -> list[tuple[Span, list[Mention]]]:
    sents = list(doc.sents)
    starts = [s.start for s in sents]
    groups: dict[int, list[Mention]] = {}
    for m in mentions:
        groups.setdefault(bisect.bisect_right(starts, m.span.start) - 1, []).append(m)
    return [(sents[k], ms) for k, ms in sorted(groups.items()) if len(ms) >= 2]


_ALIAS_SEPARATORS = frozenset([",", "or", "and", ";"])
_ALIAS_CUES = frozenset(["formerly", "aka", "a.k.a.", "also", "known", "as", "called", "now"])


def alias_mentions(doc: Doc, mentions: Sequence[Mention]) -> list[tuple[Mention, Mention]]:
    """Names given in parentheses right after a named mention.

    "The Los Angeles Philharmonic (LA Phil, LAP, or LAPO)", "Champions Soccer
    Radio Network (CSRN)", "Tata Chemicals Europe (formerly Brunner Mond)":
    every capitalised part is another name of the entity before the
    bracket, whatever label NER gave it (it tagged "LA Phil" a facility).
    Aliases take the entity's label and their own text as canonical name;
    they only receive relations (:func:`extract_relations`), never start
    a path. Returns ``(alias, entity)`` pairs.
    """
    out: list[tuple[Mention, Mention]] = []
    for m in mentions:
        if m.pronoun or m.label not in ("ORG", "PERSON") or m.span.end >= len(doc):
            continue
        if doc[m.span.end].text != "(":
            continue
        close = next(
            (t.i for t in doc[m.span.end + 1 : m.span.end + 16] if t.text in (")", "(")), None
        )
        if close is None or doc[close].text != ")":
            continue
        part: list[Token] = []
        for tok in [*doc[m.span.end + 1 : close], None]:
            if tok is not None and tok.lower_ not in _ALIAS_SEPARATORS:
                if not (tok.lower_ in _ALIAS_CUES and not part):
                    part.append(tok)
                continue
            if part and _looks_like_name(part):
                span = doc[part[0].i : part[-1].i + 1]
                alias = Mention(span, m.label, display_form(span.text), guessed=m.guessed)
                out.append((alias, m))
            part = []
    return out


def _looks_like_name(tokens: list[Token]) -> bool:
    """Capitalised, short, no digits-only token and no ticker colon: a name."""
    if len(tokens) > 5 or not tokens[0].text[:1].isupper():
        return False
    return not any(t.like_num or t.text == ":" or (t.is_punct and t.text != ".") for t in tokens)


def coreference_groups(
    mentions: Sequence[Mention], aliases: Sequence[tuple[Mention, Mention]]
) -> list[int]:
    """Group id per mention of ``[*mentions, *(alias for alias, _ in aliases)]``.

    KnowledgeNet (and a reader) counts "She is the CEO of Acme, which she
    founded" as facts about every mention of both entities: a relation found
    between two mentions holds for all mentions of their groups. Groups are
    built from what the text already says:

    * named mentions with the same canonical name;
    * resolved pronouns with their antecedent (same canonical name);
    * unresolved non-relative pronouns of one label together: in a passage
      about an unnamed person "He ... his ..." is that person;
    * a parenthesised alias with the entity before the bracket.
    """
    everything = [*mentions, *(alias for alias, _ in aliases)]
    parent = list(range(len(everything)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    by_key: dict[tuple[str, str], int] = {}
    for i, m in enumerate(everything):
        if m.pronoun and not m.resolved:
            if m.span.root.lower_ in RELATIVE:
                continue
            key = ("?", m.label)
        else:
            key = ("", m.canonical.casefold())
        parent[find(i)] = find(by_key.setdefault(key, i))
    index = {id(m): i for i, m in enumerate(mentions)}
    for k, (_, head) in enumerate(aliases, start=len(mentions)):
        parent[find(k)] = find(index[id(head)])
    return [find(i) for i in range(len(everything))]
