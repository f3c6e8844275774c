"""Typed relations between the entities of one parsed sentence.

Each candidate pair of mentions in a sentence is joined by its shortest path
in the dependency tree. A relation type fires when a trigger word of that
type lies on the path (``CEO`` in "Satya Nadella, CEO of Microsoft",
``based`` in "a Seattle-based company") and the entity types fit; the
direction of organisation-to-organisation relations comes from the
syntactic role each end has towards the trigger ("A, a subsidiary *of* B",
"owned *by* B"). Pairs without a typed relation get a weak, capped
``MENTIONED_WITH``.

When an end carries the wrong NER type for the trigger's slot ("CEO of
Odyssey Golf" with a PERSON "Odyssey Golf"), the slot decides (``*_x``
families). A relation found between two mentions is repeated for every
mention of the same two entities: same name, resolved pronouns, and
parenthesised aliases ("The Los Angeles Philharmonic (LA Phil, LAPO)").

Confidences are measured, not guessed: :data:`CONFIDENCE` holds the
precision each (type, trigger family, path bucket, pronoun end) family
reached on KnowledgeNet folds 1-2 (fold 3 is held out). Calibration rule: a
family may reach 0.5 or more only if, on folds 1-2, the Wilson 95 % lower
bound of its precision is at least 0.65 *and* its point estimate at least
0.75, so that ">= 0.5" keeps >= 0.7 precision on unseen text. Every other
family is capped below 0.5 at about its measured precision; families below
~0.28 are not emitted at all. Today only LOCATED_IN with a pronoun end passes
(44/46); FOUNDED_BY "founded by Y" reached 45/60 (lower bound 0.63) and no
WORKS_FOR or SUBSIDIARY_OF family came close, so they stay weak. Types
KnowledgeNet cannot measure (PRODUCES, PARTNERS_WITH, COMPETES_WITH,
ACQUIRED) stay below 0.5 until someone measures them.

When a trained :class:`~extraction.relclf.RelationClassifier` is passed to
:func:`extract_relations` (the :class:`~extraction.nlp.Extractor` passes the
shipped one), it decides WORKS_FOR, FOUNDED_BY, LOCATED_IN and SUBSIDIARY_OF
with its own out-of-fold calibration, and the families below become its
features; the table then only sets the other types' confidences. Guessed
mentions (proper-noun runs NER missed) reach the classifier only: the rules
were calibrated without them.

Pronouns ("He was CEO of X", "X, which is based in Y") are mentions too:
they resolve to the nearest preceding PERSON / ORG (or the relative clause's
head) and keep their own span as evidence.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from spacy.tokens import Doc, Span, Token

from extraction.models import RelationMention
from extraction.names import display_form
from extraction.relation_words import (
    ACQ_NOUNS,
    ACQ_VERBS,
    BASE_WORDS,
    CLAUSAL,
    COMPETE_WORDS,
    FOUND_WORDS,
    HQ_WORDS,
    MAKE_VERBS,
    NOT_ORGS,
    ORG_PRONOUNS,
    OWN_VERBS,
    PARENT_NOUNS,
    PARTNER_WORDS,
    PERSON_PRONOUNS,
    PRODUCE_WORDS,
    PRODUCT_NOUNS,
    RELATIVE,
    SUB_NOUNS,
    WORK_NOUNS,
    WORK_VERBS,
)
from extraction.spans import name_chars

if TYPE_CHECKING:  # relclf builds on this module: no import cycle at run time
    from extraction.relclf import RelationClassifier

#: Confidence per (relation type, trigger family, path bucket, pronoun end).
#: Buckets: ``s`` <= 3 dependency edges, ``m`` 4-5, ``l`` 6-7; ``*`` matches
#: any bucket or pronoun flag. Comments give tp/n on KnowledgeNet folds 1-2,
#: counted as the harness scores them (after group expansion). A family gets
#: >= 0.5 only if the Wilson 95 % lower bound of that precision is >= 0.65
#: and the point estimate >= 0.75 (see the module docstring); every other
#: family stays below 0.5 at roughly its measured precision. Families under
#: ~0.28 are not emitted: below half the micro F1 they cost more than they add.
MAX_PATH = 7
CONFIDENCE: dict[tuple[str, str, str, str], float] = {
    # "X was founded by Y", "Y, founder of X": 45/60 = 0.75, lower bound 0.63
    ("FOUNDED_BY", "found_arg", "s", "*"): 0.45,
    ("FOUNDED_BY", "found_arg", "m", "*"): 0.45,  # 22/35
    ("FOUNDED_BY", "found_arg", "l", "*"): 0.3,  # 4/12
    ("FOUNDED_BY", "found", "m", "n"): 0.45,  # 13/19
    ("FOUNDED_BY", "found", "l", "*"): 0.3,  # 14/34
    ("FOUNDED_BY", "found_arg_x", "*", "*"): 0.4,  # 16/30
    # "its headquarters are in Y", "it is based in Y": 44/46, lower bound 0.85
    ("LOCATED_IN", "hq_arg", "*", "p"): 0.75,
    ("LOCATED_IN", "hq_arg", "s", "n"): 0.45,  # 31/42, lower bound 0.59
    ("LOCATED_IN", "hq_arg", "m", "n"): 0.45,  # 78/121
    ("LOCATED_IN", "hq_arg", "l", "n"): 0.4,  # 21/37
    ("LOCATED_IN", "hq_arg_x", "s", "*"): 0.35,  # 4/5
    ("LOCATED_IN", "prep_in", "*", "*"): 0.3,  # 4/13
    # ORG and place close together, no trigger: a guess from the types alone
    ("LOCATED_IN", "near", "s", "p"): 0.15,  # 8/24
    ("SUBSIDIARY_OF", "sub", "s", "n"): 0.45,  # 15/23
    ("SUBSIDIARY_OF", "sub", "s", "p"): 0.4,  # 5/11
    ("SUBSIDIARY_OF", "sub", "m", "n"): 0.4,  # 21/42
    ("SUBSIDIARY_OF", "sub", "m", "p"): 0.25,  # 6/22
    ("SUBSIDIARY_OF", "own", "m", "*"): 0.35,  # 2/2
    # WORKS_FOR never passes the rule (NER noise, titles read as ORGs)
    ("WORKS_FOR", "work_noun_arg", "m", "p"): 0.45,  # 93/142
    ("WORKS_FOR", "work_noun_arg", "l", "p"): 0.45,  # 35/52
    ("WORKS_FOR", "work_noun_arg", "s", "n"): 0.3,  # 10/28
    ("WORKS_FOR", "work_noun_arg", "*", "*"): 0.4,  # 62/123
    ("WORKS_FOR", "work_verb", "s", "p"): 0.45,  # 42/65
    ("WORKS_FOR", "work_verb", "s", "n"): 0.4,  # 18/32
    ("WORKS_FOR", "work_verb", "m", "*"): 0.35,  # 40/81
    ("WORKS_FOR", "work_verb", "l", "p"): 0.3,  # 7/17
    ("WORKS_FOR", "work_noun", "l", "*"): 0.35,  # 12/27
    ("WORKS_FOR", "work_noun_arg_x", "m", "*"): 0.35,  # 14/30
    ("WORKS_FOR", "work_noun_arg_x", "s", "n"): 0.3,  # 5/11
    ("WORKS_FOR", "at", "s", "*"): 0.45,  # 17/23
    ("WORKS_FOR", "at", "m", "*"): 0.35,  # 18/41
    # person and organisation close together, no trigger: a guess from the types
    ("WORKS_FOR", "near", "s", "*"): 0.15,  # 54/157
    ("WORKS_FOR", "near", "m", "n"): 0.15,  # 8/28
    # Unmeasured on KnowledgeNet: kept under 0.5 on purpose.
    ("ACQUIRED", "acq", "*", "*"): 0.4,
    ("PRODUCES", "produce", "s", "*"): 0.45,
    ("PRODUCES", "produce", "*", "*"): 0.35,
    ("PRODUCES", "poss", "*", "*"): 0.4,
    ("PRODUCES", "by", "*", "*"): 0.45,
    ("BASED_ON", "base", "*", "*"): 0.45,
    ("PARTNERS_WITH", "partner", "s", "*"): 0.45,
    ("PARTNERS_WITH", "partner", "*", "*"): 0.35,
    ("COMPETES_WITH", "compete", "s", "*"): 0.45,
    ("COMPETES_WITH", "compete", "*", "*"): 0.35,
}


def path_bucket(edges: int) -> str:
    """``s`` (<= 3 edges), ``m`` (4-5) or ``l`` (longer)."""
    return "s" if edges <= 3 else ("m" if edges <= 5 else "l")


def confidence(rtype: str, family: str, edges: int, pronoun: bool) -> float | None:
    """Calibrated confidence of a relation family, or None if it is not emitted."""
    bucket, p = path_bucket(edges), ("p" if pronoun else "n")
    for key in ((bucket, p), (bucket, "*"), ("*", p), ("*", "*")):
        conf = CONFIDENCE.get((rtype, family, *key))
        if conf is not None:
            return conf
    return None


COOCCURRENCE_NEAR = 0.3
COOCCURRENCE_FAR = 0.2
MAX_COOCCURRENCE_PER_SENTENCE = 8


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
    """A proper-noun run NER did not tag (:func:`~extraction.spans.proper_noun_runs`):
    its label is a guess, and only the trained classifier relates it."""


@dataclass(frozen=True, slots=True)
class Found:
    type: str
    source: Mention
    target: Mention
    family: str
    edges: int


def pronoun_mentions(doc: Doc, mentions: Sequence[Mention]) -> list[Mention]:
    """Pronouns that can stand for a PERSON or ORG, resolved when possible.

    ``he/she/his/her`` take the nearest preceding PERSON, ``it/its/they``
    the nearest preceding ORG, ``who/which`` the entity their relative
    clause hangs on. Unresolved pronouns keep their own text as canonical.
    """
    if not mentions:
        return []
    owner = _token_owner(doc, mentions)
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


def _token_owner(doc: Doc, mentions: Sequence[Mention]) -> list[int]:
    owner = [-1] * len(doc)
    for k, m in enumerate(mentions):
        for i in range(m.span.start, m.span.end):
            owner[i] = k
    return owner


def _effective_root(
    m: Mention, k: int, owner: list[int], mentions: Sequence[Mention]
) -> tuple[Token, frozenset[int]]:
    """Climb conj/appos chains to the first entity of the chain.

    "founded by John Smith and Jane Doe" and "in Tempe, Arizona": the second
    entity inherits the first one's attachment instead of being blocked by it.
    Returns the token to start the path from and the mentions of the chain.
    """
    tok = m.span.root
    chain = {k}
    for _ in range(6):
        if tok.dep_ not in ("conj", "appos", "npadvmod") or tok.head.i == tok.i:
            break
        head_owner = owner[tok.head.i]
        if head_owner < 0 or mentions[head_owner].label != m.label:
            break
        chain.add(head_owner)
        tok = mentions[head_owner].span.root
    return tok, frozenset(chain)


def _path(a: Token, b: Token) -> tuple[list[Token], Token, list[Token]] | None:
    """Tokens from ``a`` up to (excluding) the lowest common ancestor, the LCA, and
    tokens from ``b`` up to it."""
    up_a = [a, *a.ancestors]
    where = {t.i: k for k, t in enumerate(up_a)}
    up_b: list[Token] = []
    for t in (b, *b.ancestors):
        if t.i in where:
            return up_a[: where[t.i]], t, up_b
        up_b.append(t)
    return None


def _role(end: Token, trigger: Token) -> str:
    """How one end attaches to the trigger: ``of``, ``by``, ``subj``, ``obj`` or ``holder``."""
    child = end
    while child.head.i != child.i and child.head.i != trigger.i:
        child = child.head
    if child.head.i != trigger.i or child.i == trigger.i:
        return "holder"
    dep = child.dep_
    if dep == "agent" or (dep == "prep" and child.lower_ == "by"):
        return "by"
    if dep == "prep":
        return "of" if child.lower_ in ("of", "within", "under", "from") else "prep:" + child.lower_
    if dep in ("poss", "compound", "nmod", "amod", "npadvmod"):
        return "of"
    if dep == "nsubj":
        return "subj"
    if dep in ("dobj", "nsubjpass", "attr"):
        return "obj"
    if dep in ("appos", "acl", "relcl"):
        return "holder"
    return "other"


def _structured(
    inner: list[Token], lexicon: frozenset[str], arg: Token, other: Token, arg_roles: frozenset[str]
) -> bool:
    """Does ``arg`` hang on a trigger as its argument while ``other`` does not?"""
    for t in inner:
        if t.lower_ in lexicon:
            a, o = _role(arg, t), _role(other, t)
            if a in arg_roles and o not in arg_roles:
                return True
    return False


_ORG_OF_ROLE = frozenset({"of", "prep:at", "prep:for", "prep:with", "by"})
_FOUNDED_ROLE = frozenset({"of", "obj", "prep:of"})
_LOC_ROLE = frozenset({"prep:in", "of", "prep:at"})


def _classify(
    m1: Mention, m2: Mention, r1: Token, r2: Token, inner: list[Token], edges: int
) -> list[tuple[str, Mention, Mention, str]]:
    """Typed relations between two mentions, given the tokens between them on the path."""
    words = {t.lower_ for t in inner}
    labels = (m1.label, m2.label)
    out: list[tuple[str, Mention, Mention, str]] = []
    if set(labels) == {"PERSON", "ORG"}:
        (person, rp), (org, ro) = (
            ((m1, r1), (m2, r2)) if m1.label == "PERSON" else ((m2, r2), (m1, r1))
        )
        if org.canonical.casefold() in NOT_ORGS:
            return out
        if words & WORK_NOUNS:
            tight = _structured(inner, WORK_NOUNS, ro, rp, _ORG_OF_ROLE)
            out.append(("WORKS_FOR", person, org, "work_noun_arg" if tight else "work_noun"))
        elif words & WORK_VERBS:
            out.append(("WORKS_FOR", person, org, "work_verb"))
        elif not words & FOUND_WORDS:
            # "professor emerita at Boston University", "working for Havas
            # Media": no title word, but the organisation is an "at/for" place
            roles = {_role(ro, t) for t in inner}
            at = bool(roles & {"prep:at", "prep:for", "prep:with"})
            out.append(("WORKS_FOR", person, org, "at" if at else "near"))
        if words & FOUND_WORDS:
            tight = _structured(inner, FOUND_WORDS, ro, rp, _FOUNDED_ROLE)
            out.append(("FOUNDED_BY", org, person, "found_arg" if tight else "found"))
    elif set(labels) == {"ORG", "LOCATION"}:
        (org, ro), (loc, rl) = ((m1, r1), (m2, r2)) if m1.label == "ORG" else ((m2, r2), (m1, r1))
        if words & HQ_WORDS:
            tight = _structured(inner, HQ_WORDS, rl, ro, _LOC_ROLE)
            out.append(("LOCATED_IN", org, loc, "hq_arg" if tight else "hq"))
        elif (
            edges == 2
            and len(inner) == 1
            and inner[0].lower_ == "in"
            and inner[0].head.i == org.span.root.i
        ):
            # "the National Museum of Denmark in Copenhagen": LOC hangs on the ORG
            out.append(("LOCATED_IN", org, loc, "prep_in"))
        else:
            out.append(("LOCATED_IN", org, loc, "near"))
    elif labels == ("ORG", "ORG"):
        out.extend(_org_org(m1, m2, inner))
    elif set(labels) == {"ORG", "PRODUCT"}:
        (org, ro), (product, rp) = (
            ((m1, r1), (m2, r2)) if m1.label == "ORG" else ((m2, r2), (m1, r1))
        )
        if words & PRODUCE_WORDS:
            out.append(("PRODUCES", org, product, "produce"))
        elif (
            edges == 1
            and org.span.root.head.i == product.span.root.i
            and (org.span.root.dep_ in ("poss", "compound"))
        ):
            out.append(("PRODUCES", org, product, "poss"))
        elif _made_by(inner, ro, rp):
            out.append(("PRODUCES", org, product, "by"))
    elif set(labels) == {"PERSON", "PRODUCT"}:
        (person, rp_), (product, rpr) = (
            ((m1, r1), (m2, r2)) if m1.label == "PERSON" else ((m2, r2), (m1, r1))
        )
        if _made_by(inner, rp_, rpr, person=True):
            out.append(("PRODUCES", person, product, "by"))
    elif labels == ("PRODUCT", "PRODUCT"):
        based = _based_on(m1, m2, r1, r2, inner)
        if based is not None:
            out.append(based)
    return out


_BASE_ROLES = frozenset({"of", "prep:on", "prep:upon", "prep:off"})


def _made_by(inner: list[Token], maker: Token, product: Token, *, person: bool = False) -> bool:
    """The maker is the agent of a making word or of a product noun on the path
    ("developed by X", "a software tool by X", "a service from X"), or the
    subject of a making verb whose object side holds the product ("X created Y")."""
    if _modifier_on_path(product, inner):
        return False  # "a PHP framework created by X": X made the framework, not PHP
    for t in inner:
        low = t.lower_
        role, other = _role(maker, t), _role(product, t)
        if other.startswith("prep:"):
            continue  # "a toolkit by X for managing Kubernetes": the toolkit, not Kubernetes
        if role == "by" and other != "by" and (low in MAKE_VERBS or low in PRODUCT_NOUNS):
            return True
        if low in PRODUCT_NOUNS and not person and role == "of" and _prep(maker, t) == "from":
            return True
        if low in MAKE_VERBS and t.pos_ == "VERB" and role == "subj" and other == "obj":
            return True
    return False


def _prep(end: Token, trigger: Token) -> str | None:
    """The preposition through which ``end`` hangs on ``trigger``, if any."""
    child = end
    while child.head.i != child.i and child.head.i != trigger.i:
        child = child.head
    return child.lower_ if child.head.i == trigger.i and child.dep_ == "prep" else None


def _based_on(
    m1: Mention, m2: Mention, r1: Token, r2: Token, inner: list[Token]
) -> tuple[str, Mention, Mention, str] | None:
    """``BASED_ON`` from the product built on the other to its base."""
    for trig in inner:
        if trig.lower_ not in BASE_WORDS:
            continue
        a, b = _role(r1, trig), _role(r2, trig)
        if any(_modifier_on_path(r, inner) for r in (r1, r2)):
            continue
        if a in _BASE_ROLES and b not in _BASE_ROLES:
            return ("BASED_ON", m2, m1, "base")
        if b in _BASE_ROLES and a not in _BASE_ROLES:
            return ("BASED_ON", m1, m2, "base")
    return None


def _modifier_on_path(end: Token, inner: list[Token]) -> bool:
    """``end`` only modifies a noun of the path ("PHP" in "a PHP framework",
    "JavaScript" and "Chrome" in "built on Chrome's V8 JavaScript engine"); a
    noun of making or deriving it modifies is its own ("a Linux distribution")."""
    return (
        end.dep_ in ("compound", "amod", "nmod", "poss")
        and any(t.i == end.head.i for t in inner)
        and end.head.lower_ not in BASE_WORDS
    )


#: Families whose argument sits in the trigger's own slot ("CEO *of* Y",
#: "founded *by* Y", "headquartered *in* Y"): the slot says the type.
_SLOT_FAMILIES = frozenset(["work_noun_arg", "found_arg", "hq_arg", "sub"])
_RELABEL_FROM = frozenset(["LOCATION", "PRODUCT", "PERSON", "EVENT"])


def _classify_relabelled(
    m1: Mention, m2: Mention, r1: Token, r2: Token, inner: list[Token], edges: int
) -> list[tuple[str, Mention, Mention, str]]:
    """Relations when one end carries the wrong NER type for its slot.

    The small model often calls companies places or people ("CEO of Odyssey
    Golf" with Odyssey Golf a PERSON, "subsidiary of Las Vegas Sands Corp."
    a GPE). When the pair fits a trigger's argument slot once one named end
    is read as an ORG, the slot wins; such findings get their own ``*_x``
    family so that they are calibrated apart from correctly typed ones.
    """
    out: list[tuple[str, Mention, Mention, str]] = []
    for k, m in enumerate((m1, m2)):
        if m.pronoun or m.label not in _RELABEL_FROM:
            continue
        org = replace(m, label="ORG")
        pair = (org, m2) if k == 0 else (m1, org)
        for rtype, src, tgt, family in _classify(*pair, r1, r2, inner, edges):
            if family in _SLOT_FAMILIES:
                out.append((rtype, src, tgt, family + "_x"))
        if out:
            break
    return out


def _org_org(
    m1: Mention, m2: Mention, inner: list[Token]
) -> list[tuple[str, Mention, Mention, str]]:
    out: list[tuple[str, Mention, Mention, str]] = []
    r1, r2 = m1.span.root, m2.span.root
    for trig in inner:
        low = trig.lower_
        a, b = _role(r1, trig), _role(r2, trig)
        if low in SUB_NOUNS:
            if a == "of" and b == "holder":
                out.append(("SUBSIDIARY_OF", m2, m1, "sub"))
            elif b == "of" and a == "holder":
                out.append(("SUBSIDIARY_OF", m1, m2, "sub"))
        elif low in PARENT_NOUNS:
            if a == "of" and b == "holder":
                out.append(("SUBSIDIARY_OF", m1, m2, "sub"))
            elif b == "of" and a == "holder":
                out.append(("SUBSIDIARY_OF", m2, m1, "sub"))
        elif low in OWN_VERBS or low in ACQ_VERBS:
            owner_roles, owned_roles = ("subj", "by"), ("obj", "holder")
            family = "own" if low in OWN_VERBS else "acq"
            if a in owner_roles and b in owned_roles:
                parent, child = m1, m2
            elif b in owner_roles and a in owned_roles:
                parent, child = m2, m1
            else:
                continue
            out.append(("SUBSIDIARY_OF", child, parent, family))
            if family == "acq":
                out.append(("ACQUIRED", parent, child, "acq"))
        elif low in ACQ_NOUNS:
            if a == "by" or (a == "of" and r1.dep_ == "poss"):
                out.append(("ACQUIRED", m1, m2, "acq"))
            elif b == "by" or (b == "of" and r2.dep_ == "poss"):
                out.append(("ACQUIRED", m2, m1, "acq"))
        elif low in PARTNER_WORDS:
            out.append(("PARTNERS_WITH", m1, m2, "partner"))
        elif low in COMPETE_WORDS:
            out.append(("COMPETES_WITH", m1, m2, "compete"))
        if out:
            break
    return out


def _sentence_groups(doc: Doc, mentions: Sequence[Mention]) -> list[tuple[Span, list[Mention]]]:
    sents = list(doc.sents)
    starts = [s.start for s in sents]
    groups: dict[int, list[Mention]] = {}
    for m in mentions:
        groups.setdefault(bisect.bisect_right(starts, m.span.start) - 1, []).append(m)
    return [(sents[k], ms) for k, ms in sorted(groups.items()) if len(ms) >= 2]


RootedGroup = tuple[Span, list[Mention], list[tuple[Token, frozenset[int]]]]


def rooted_sentence_groups(
    doc: Doc, mentions: Sequence[Mention]
) -> tuple[list[int], list[RootedGroup]]:
    """Token owners, and per sentence its mentions with their effective roots.

    The shared start of rule matching and of classifier candidates; empty when
    no pair of mentions can hold a relation (fewer than two, or no name).
    """
    if len(mentions) < 2 or all(m.pronoun for m in mentions):
        return [], []
    ordered = sorted(mentions, key=lambda m: m.span.start)
    owner = _token_owner(doc, ordered)
    index = {id(m): k for k, m in enumerate(ordered)}
    groups = [
        (sent, group, [_effective_root(m, index[id(m)], owner, ordered) for m in group])
        for sent, group in _sentence_groups(doc, ordered)
    ]
    return owner, groups


def find_relations(doc: Doc, mentions: Sequence[Mention]) -> list[tuple[Found, Span]]:
    """Typed relation candidates with their family and path length (for calibration)."""
    owner, groups = rooted_sentence_groups(doc, mentions)
    found: list[tuple[Found, Span]] = []
    for sent, group, rooted in groups:
        for i in range(len(group)):
            for j in range(i + 1, len(group)):
                m1, m2 = group[i], group[j]
                if m1.pronoun and m2.pronoun:
                    continue
                if m1.label == m2.label and m1.canonical == m2.canonical:
                    continue
                (root1, chain1), (root2, chain2) = rooted[i], rooted[j]
                if chain1 & chain2:
                    continue
                path = _path(root1, root2)
                if path is None:
                    continue
                up_a, lca, up_b = path
                edges = len(up_a) + len(up_b)
                if edges == 0 or edges > MAX_PATH:
                    continue
                inner = [*up_a, lca, *reversed(up_b)]
                allowed = chain1 | chain2
                inner = [t for t in inner if owner[t.i] < 0 or owner[t.i] not in allowed]
                # another entity on the path means the pair is not directly linked
                if any(owner[t.i] >= 0 for t in inner):
                    continue
                typed = _classify(m1, m2, root1, root2, inner, edges)
                if not typed:
                    typed = _classify_relabelled(m1, m2, root1, root2, inner, edges)
                for rtype, src, tgt, family in typed:
                    found.append((Found(rtype, src, tgt, family, edges), sent))
    return found


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


def extract_relations(
    doc: Doc,
    mentions: Sequence[Mention],
    *,
    keep_unresolved_pronouns: bool = False,
    max_cooccurrence: int = MAX_COOCCURRENCE_PER_SENTENCE,
    classifier: RelationClassifier | None = None,
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
        A trained :class:`~extraction.relclf.RelationClassifier`: it decides
        the types it was trained on (the rule families become its features);
        the rules keep every other type.
    """
    out: list[RelationMention] = []
    best: dict[tuple[str, tuple[int, int], tuple[int, int]], int] = {}
    linked: set[tuple[int, int]] = set()
    aliases = alias_mentions(doc, mentions)
    everything = [*mentions, *(alias for alias, _ in aliases)]
    group = coreference_groups(mentions, aliases)
    # by span, not identity: a relabelled end (``_classify_relabelled``) is a copy
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
    if max_cooccurrence > 0:
        out.extend(_cooccurrences(doc, mentions, linked, max_cooccurrence))
    return out


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
    for sent, group in _sentence_groups(doc, named):
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
