"""Typed relations that product notes state in a few recurring shapes, read as
dependency patterns (spaCy's :class:`~spacy.matcher.DependencyMatcher`) over the
parse, never as regular expressions over the text.

Each rule (:data:`RULES`) anchors on a trigger word and the slot its argument
fills ("built *on* Y", "a fork *of* Y", "developed *by* V"); the other end is
whatever the trigger's phrase is about: the subject of its clause, the noun it
modifies or stands in apposition to, the subject of the copula it completes,
or the main clause's subject for a participle in front ("Published by Mojang,
Minecraft is ..."). Around that:

- **coordination**: every name joined by "and", "or" or commas to an end is an end
  too ("built on V8, Rust, and Tokio" is three relationships);
- **names inside a phrase**: an end that is a plain noun stands for the name that
  modifies it ("for bare metal Kubernetes clusters", "Chrome's V8 JavaScript
  engine", "the Ruby language"), or the names in apposition to it ("ESLint's
  partners, Tidelift and HeroDevs");
- **the note's subject for "It"**: in a note about a product, "It" (or "This")
  as the subject is that product ("It's built on V8").

The rules and what they find:

========================  ==================================================================
``based_on``              BASED_ON: "X is built on (top of / upon) Y", "based on Y", "runs on
                          Y", "relies/depends on Y", "X builds on Y"
``derived``               BASED_ON: "forked / derived / ported from Y"
``base_noun``             BASED_ON: "X is a fork / build / distribution / implementation /
                          derivative / superset / version of Y"
``powered``               BASED_ON: "powered by Y"
``uses_as``               BASED_ON: "X uses Y as its engine"; "Y is used as the backing store
                          by X"
``y_based``               BASED_ON: "a Kubernetes-based platform"
``for_noun``              BASED_ON: "X, a framework / controller / compiler ... for Y"
``made_by``               PRODUCES: "developed / created / maintained / managed / published /
                          hosted by V"
``maker_verb``            PRODUCES: "V developed / created / released / launched X"
``project_of``            PRODUCES: "X is a project of V", "part of V", "a V project"
``poss``                  PRODUCES: "V's X"
``acquired``              ACQUIRED: "V acquired X (in YEAR)", "X was acquired by V", "V's
                          acquisition of X"
``support``               SUPPORTS: "commercial support for X is available through V",
                          "V provides extended support for X"
========================  ==================================================================

Each rule's confidence is measured, per rule, on the labelled vendor folders rules
may be tuned on (:data:`extraction.nlp.relation_rules.CONFIDENCE`); the graph's
per-type floors (``extraction.graph.build.MIN_CONFIDENCE``) still decide what enters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from spacy.matcher import DependencyMatcher
from spacy.tokens import Doc, Span, Token
from spacy.vocab import Vocab

from extraction.names import has_org_word
from extraction.nlp.coref import Mention, token_owner
from extraction.nlp.relation_words import PRODUCT_NOUNS

#: Words of each rule's trigger (lower case: the lemmatizer is off).
BUILD_ON = frozenset(
    """
    built build builds building based base bases relies rely relying depends depend depending
    layered sits sit
    """.split()  # noqa: SIM905
)
RUN = frozenset(["runs", "run", "running"])
DERIVE = frozenset(["forked", "derived", "ported", "spun", "branched"])
BASE_NOUNS = frozenset(
    """
    fork forks derivative derivatives clone port variant flavor flavour build builds distribution
    distributions distro rebuild respin implementation reimplementation superset version edition
    downstream
    """.split()  # noqa: SIM905
)
#: Nouns of a derived thing named after its base ("a Linux distribution"); not
#: "edition" or "version", which name a variant ("the Go edition", "Community version").
DERIVED_KINDS = frozenset(
    """
    distribution distributions distro derivative fork build rebuild respin spin port clone
    flavor flavour variant downstream
    """.split()  # noqa: SIM905
)
#: Nouns of a kind of product a name can stand in front of ("the MeeGo operating system").
_KIND_NOUNS = (PRODUCT_NOUNS | frozenset(["system"])) - frozenset(["distribution", "distributions"])
#: Nouns of what extends a platform, in "X, a <noun> for Y" ("a controller for
#: Kubernetes", "a compiler for Clojure"); not what merely targets one ("a desktop
#: environment for Linux", "a language for the JVM", "a suite for Windows").
FOR_NOUNS = frozenset(
    """
    tool tools controller controllers operator operators plugin plugins plug-in extension
    extensions addon add-on addons add-ons driver drivers provider providers wrapper binding
    bindings implementation system autoscaler framework library module modules sdk compiler
    transpiler port manager dashboard gateway proxy registry agent orchestrator scheduler
    engine platform service distribution runtime toolkit
    """.split()  # noqa: SIM905
)
#: Participles of "X is designed for Y".
MADE_FOR = frozenset(
    ["designed", "built", "made", "intended", "tailored", "optimized", "optimised"]
)
USE_AS_NOUNS = frozenset(
    """
    engine runtime backend back-end base foundation kernel core store database storage layer
    proxy balancer server
    """.split()  # noqa: SIM905
)
USE = frozenset(["uses", "use", "used", "using", "deploys", "deploying", "deploy"])
MADE_BY = frozenset(
    """
    developed created maintained managed made designed written authored built published produced
    released launched sponsored stewarded governed hosted incubated started invented founded
    co-created co-developed originated
    """.split()  # noqa: SIM905
)
MAKER_VERBS = frozenset(
    """
    developed develops created creates released releases launched launches introduced introduces
    designed designs built builds wrote writes published publishes maintains maintained
    produces produced invented
    """.split()  # noqa: SIM905
)
PROJECT_NOUNS = frozenset(["project", "projects", "subproject", "part", "member", "product"])
ACQUIRE = frozenset(["acquired", "acquires", "acquire", "bought", "buys", "purchased", "purchases"])
#: Words that make support something sold ("commercial support", "Extended support");
#: "long-term support" alone is a release phase.
SUPPORT_KINDS = frozenset(
    ["commercial", "extended", "paid", "premium", "enterprise", "professional", "third-party"]
)
OFFER_VERBS = frozenset(
    """
    provides provide provided offers offer offered sells sell sold available obtained purchased
    purchase
    """.split()  # noqa: SIM905
)
PROVIDER_PREPS = frozenset(["through", "from", "via", "by", "at"])
#: Plain nouns that stand for the names around them ("Kubernetes clusters").
GENERIC = frozenset(
    """
    clusters cluster workloads workload applications application apps app projects project
    environments environment language languages platform platforms engine engines runtime
    framework frameworks library libraries version versions release releases branches branch
    partners partner initiative program programme providers provider team community systems
    system servers server services service specification standard standards stack ecosystem
    architecture kernel jvm
    """.split()  # noqa: SIM905
)
EMBED = frozenset(["embeds", "embed", "embedding", "embedded", "bundles", "bundling"])
_PRONOUNS = frozenset(["it", "this"])
#: Dependencies climbed from a trigger to what its phrase is about.
_UP = frozenset(
    """
    acl appos relcl amod compound nmod attr acomp oprd conj xcomp ccomp prep pobj pcomp
    """.split()  # noqa: SIM905
)
_MAX_CLIMB = 8
#: Longest sentence the patterns read (longer: a list or a table, not prose).
MAX_SENTENCE_TOKENS = 250
_NOMINAL = frozenset(["NOUN", "PROPN", "PRON", "X"])
#: Nouns of organisations: "a Seattle-based company" says where, not what on.
_ORG_NOUNS = frozenset(
    """
    company companies firm startup start-up organization organisation group team studio
    """.split()  # noqa: SIM905
)


@dataclass(frozen=True, slots=True)
class PatternFound:
    """A relation a pattern found: its type, rule, ends and what else it names."""

    type: str
    rule: str
    source: Mention
    target: Mention
    sentence: Span
    detail: str = ""


def _any(words: frozenset[str]) -> dict[str, object]:
    return {"LOWER": {"IN": sorted(words)}}


def _prep(words: Sequence[str]) -> dict[str, object]:
    return {"DEP": "prep", "LOWER": {"IN": list(words)}}


def _node(left: str, rel: str, right: str, attrs: dict[str, object]) -> dict[str, object]:
    return {"LEFT_ID": left, "REL_OP": rel, "RIGHT_ID": right, "RIGHT_ATTRS": attrs}


def _trigger(attrs: dict[str, object]) -> dict[str, object]:
    return {"RIGHT_ID": "trigger", "RIGHT_ATTRS": attrs}


#: Rule name -> (relation type, dependency patterns). Node ``trigger`` anchors the
#: phrase; ``tgt`` is the end in the trigger's slot, ``src`` the other end when the
#: pattern names it (else it is what the trigger's phrase is about); ``inverse``
#: patterns put the slot's end first ("used as the store *by X*").
PATTERNS: dict[str, tuple[str, list[list[dict[str, object]]]]] = {
    "based_on": (
        "BASED_ON",
        [
            [
                _trigger(_any(BUILD_ON)),
                _node("trigger", ">", "prep", _prep(["on", "upon", "atop", "off"])),
                _node("prep", ">", "tgt", {"DEP": "pobj", "LOWER": {"NOT_IN": ["top"]}}),
            ],
            [  # "binaries built with the Eclipse OpenJ9 JVM"
                _trigger({"LOWER": {"IN": ["built", "build", "builds"]}}),
                _node("trigger", ">", "prep", _prep(["with"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "built on top of Y"
                _trigger(_any(BUILD_ON)),
                _node("trigger", ">", "prep", _prep(["on", "upon"])),
                _node("prep", ">", "top", {"DEP": "pobj", "LOWER": "top"}),
                _node("top", ">", "of", _prep(["of"])),
                _node("of", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a (software) dependency on Y"
                _trigger({"LOWER": {"IN": ["dependency", "dependencies"]}}),
                _node("trigger", ">", "prep", _prep(["on", "upon"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "based off of GNOME 3"
                _trigger({"LOWER": "based"}),
                _node("trigger", ">", "prep", _prep(["off"])),
                _node("prep", ">", "of", _prep(["of"])),
                _node("of", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "runs_on": (
        "BASED_ON",
        [
            [  # "Clojure runs on JVM", "capable of running on top of TensorFlow"
                _trigger(_any(RUN)),
                _node("trigger", ">", "prep", _prep(["on", "atop"])),
                _node("prep", ">", "tgt", {"DEP": "pobj", "LOWER": {"NOT_IN": ["top"]}}),
            ],
            [
                _trigger(_any(RUN)),
                _node("trigger", ">", "prep", _prep(["on"])),
                _node("prep", ">", "top", {"DEP": "pobj", "LOWER": "top"}),
                _node("top", ">", "of", _prep(["of"])),
                _node("of", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "derived": (
        "BASED_ON",
        [
            [
                _trigger(_any(DERIVE)),
                _node("trigger", ">", "prep", _prep(["from", "off"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ]
        ],
    ),
    "base_noun": (
        "BASED_ON",
        [
            [
                _trigger({**_any(BASE_NOUNS), "DEP": {"IN": ["attr", "appos", "ROOT", "oprd"]}}),
                _node("trigger", ">", "prep", _prep(["of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a Linux distribution", "a community-driven Debian derivative"
                _trigger({**_any(DERIVED_KINDS), "DEP": {"IN": ["attr", "appos", "oprd"]}}),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
        ],
    ),
    "embeds": (
        "BASED_ON",
        [
            [  # "By embedding Chromium and Node.js into its binary, Electron ..."
                _trigger({**_any(EMBED), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ]
        ],
    ),
    "powered": (
        "BASED_ON",
        [
            [
                _trigger({"LOWER": "powered"}),
                _node("trigger", ">", "by", {"DEP": {"IN": ["agent", "prep"]}, "LOWER": "by"}),
                _node("by", ">", "tgt", {"DEP": "pobj"}),
            ]
        ],
    ),
    "uses_as": (
        "BASED_ON",
        [
            [  # "X uses Y as its engine"
                _trigger({**_any(USE), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
                _node("trigger", ">", "as", _prep(["as"])),
                _node("as", ">", "role", {"DEP": "pobj", **_any(USE_AS_NOUNS)}),
            ],
            [  # "Y is used as the backing store by X"
                _trigger({"LOWER": "used"}),
                _node("trigger", ">", "tgt", {"DEP": "nsubjpass"}),
                _node("trigger", ">", "as", _prep(["as"])),
                _node("as", ">", "role", {"DEP": "pobj", **_any(USE_AS_NOUNS)}),
                _node("trigger", ">>", "by", {"DEP": {"IN": ["agent", "prep"]}, "LOWER": "by"}),
                _node("by", ">", "src", {"DEP": "pobj"}),
            ],
        ],
    ),
    "y_based": (
        "BASED_ON",
        [
            [  # "a Kubernetes-based platform": based <-amod- platform; Kubernetes -> based
                _trigger({"LOWER": "based", "DEP": "amod"}),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["npadvmod", "compound", "nmod"]}}),
            ]
        ],
    ),
    "for_noun": (
        "BASED_ON",
        [
            [
                _trigger({**_any(FOR_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a tool for keeping Kubernetes clusters in sync"
                _trigger({**_any(FOR_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "doing", {"DEP": "pcomp", "TAG": "VBG"}),
                _node("doing", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "an engine for orchestrating parallel jobs on Kubernetes"
                _trigger({**_any(FOR_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "doing", {"DEP": "pcomp", "TAG": "VBG"}),
                _node("doing", ">>", "on", _prep(["on", "in"])),
                _node("on", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a clustering system for horizontal scaling of MySQL"
                _trigger({**_any(FOR_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "what", {"DEP": "pobj", "POS": "NOUN"}),
                _node("what", ">", "of", _prep(["of"])),
                _node("of", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a policy engine designed for Kubernetes"
                _trigger({**_any(MADE_FOR), "TAG": "VBN"}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "made_by": (
        "PRODUCES",
        [
            [
                _trigger({**_any(MADE_BY), "TAG": "VBN"}),
                _node("trigger", ">", "by", {"DEP": {"IN": ["agent", "prep"]}, "LOWER": "by"}),
                _node("by", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a software tool by HashiCorp", "a managed database service from Microsoft"
                _trigger({**_any(PRODUCT_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "by", _prep(["by", "from"])),
                _node("by", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "maker_verb": (
        "PRODUCES",
        [
            [
                _trigger({**_any(MAKER_VERBS), "POS": "VERB", "TAG": {"NOT_IN": ["VBN"]}}),
                _node("trigger", ">", "src", {"DEP": "nsubj"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ]
        ],
    ),
    "project_of": (
        "PRODUCES",
        [
            [
                _trigger({**_any(PROJECT_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "prep", _prep(["of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "X is a CNCF project"
                _trigger(
                    {"LOWER": {"IN": ["project", "subproject"]}, "DEP": {"IN": ["attr", "appos"]}}
                ),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
        ],
    ),
    "poss": (
        "PRODUCES",
        [
            [  # the possessive marker anchors it: a rare word, where a proper noun is not
                _trigger({"LOWER": {"IN": ["'s", "’s"]}, "DEP": "case"}),
                _node("trigger", "<", "tgt", {"DEP": "poss", "POS": "PROPN"}),
                _node("tgt", "<", "owned", {"POS": "PROPN"}),
            ]
        ],
    ),
    "acquired": (
        "ACQUIRED",
        [
            [
                _trigger({**_any(ACQUIRE), "POS": "VERB", "TAG": {"NOT_IN": ["VBN"]}}),
                _node("trigger", ">", "src", {"DEP": "nsubj"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
            [
                _trigger({**_any(ACQUIRE), "TAG": "VBN"}),
                _node("trigger", ">", "by", {"DEP": {"IN": ["agent", "prep"]}, "LOWER": "by"}),
                _node("by", ">", "src", {"DEP": "pobj"}),
            ],
            [
                _trigger({"LOWER": {"IN": ["acquisition", "purchase", "takeover"]}}),
                _node("trigger", ">", "of", _prep(["of"])),
                _node("of", ">", "tgt", {"DEP": "pobj"}),
                _node("trigger", ">", "src", {"DEP": "poss"}),
            ],
            [
                _trigger({"LOWER": {"IN": ["acquisition", "purchase", "takeover"]}}),
                _node("trigger", ">", "of", _prep(["of"])),
                _node("of", ">", "tgt", {"DEP": "pobj"}),
                _node("trigger", ">", "by", {"DEP": "prep", "LOWER": "by"}),
                _node("by", ">", "src", {"DEP": "pobj"}),
            ],
        ],
    ),
    "support": (
        "SUPPORTS",
        [[_trigger({"LOWER": "support", "POS": {"IN": ["NOUN", "PROPN"]}})]],
    ),
}


@lru_cache(maxsize=64)
def _matcher(vocab: Vocab, rules: frozenset[str]) -> DependencyMatcher:
    """One matcher for the patterns of ``rules``, each under its own key (``rule#k``), so
    a match says which pattern's nodes its tokens are."""
    matcher = DependencyMatcher(vocab, validate=True)
    for name in sorted(rules):
        for k, pattern in enumerate(PATTERNS[name][1]):
            matcher.add(f"{name}#{k}", [pattern])
    return matcher


def _trigger_words(patterns: list[list[dict[str, object]]]) -> frozenset[str]:
    """The words a rule's patterns anchor on (their first node's ``LOWER``)."""
    words: set[str] = set()
    for pattern in patterns:
        attrs = pattern[0]["RIGHT_ATTRS"]
        lower = attrs.get("LOWER") if isinstance(attrs, dict) else None
        if isinstance(lower, str):
            words.add(lower)
        elif isinstance(lower, dict) and isinstance(lower.get("IN"), list):
            words.update(str(w) for w in lower["IN"])
    return frozenset(words)


#: Each rule's trigger words: a text without one of them is not matched for the rule
#: (spaCy's matcher tries every token against every node of every pattern it holds).
TRIGGERS: dict[str, frozenset[str]] = {
    name: _trigger_words(patterns) for name, (_, patterns) in PATTERNS.items()
}


class _Ends:
    """Who a token of the parse names: a mention, the note's subject for "It", or
    the names a plain noun stands for; with the names coordinated to it."""

    def __init__(self, doc: Doc, mentions: Sequence[Mention], subject: str | None) -> None:
        self.doc = doc
        self.named = [m for m in mentions if not (m.pronoun or m.guessed)]
        self.owner = token_owner(doc, self.named)
        # proper-noun runs the model did not tag: only a product slot makes them names
        self.guessed = [m for m in mentions if m.guessed and not m.pronoun]
        self.guessed_owner = token_owner(doc, self.guessed)
        self.subject = subject

    def at(self, tok: Token, guessed: bool = False) -> Mention | None:
        k = self.owner[tok.i]
        if k >= 0:
            return self.named[k]
        if self.subject and tok.lower_ in _PRONOUNS and tok.dep_ in ("nsubj", "nsubjpass"):
            return Mention(self.doc[tok.i : tok.i + 1], "PRODUCT", self.subject, pronoun=True)
        if guessed and (g := self.guessed_owner[tok.i]) >= 0:
            m = self.guessed[g]
            # not the head of a longer name ("JVM" of "the Eclipse OpenJ9 JVM")
            if not any(c.dep_ in _MODIFIERS and c.text[:1].isupper() for c in m.span.root.children):
                return Mention(m.span, "PRODUCT", m.canonical, guessed=True)
        return None

    def names(self, tok: Token, *, inside: bool = True, guessed: bool = False) -> list[Mention]:
        """The mentions ``tok`` names: its own, or (``inside``) those of the plain noun
        it is, with every name coordinated to it; ``guessed`` (a product slot) takes
        proper-noun runs the model missed as products ("runs on JVM")."""
        first = self._one(tok, inside, guessed)
        out: list[Mention] = []
        seen: set[tuple[int, int]] = set()
        # the coordinated names count even where the first is no mention ("V8, Rust")
        for head in [tok, *(m.span.root for m in first)]:
            for t in (head, *_conjuncts(head)):
                for m in self._one(t, inside, guessed) if t is not tok else first:
                    if (m.span.start, m.span.end) not in seen:
                        seen.add((m.span.start, m.span.end))
                        out.append(m)
        return out

    def _one(self, tok: Token, inside: bool, guessed: bool = False) -> list[Mention]:
        found = self.at(tok)
        if found is not None:
            return [found]
        inner = self._inside(tok) if inside else []
        if inner:
            return inner
        # a run the model missed, after the names a plain noun holds ("the Eclipse
        # OpenJ9 JVM" is OpenJ9's)
        found = self.at(tok, guessed) if guessed else None
        return [found] if found is not None else []

    def _inside(self, tok: Token) -> list[Mention]:
        """The names a plain noun stands for."""
        if tok.pos_ not in ("NOUN", "PROPN") or tok.lower_ not in GENERIC | FOR_NOUNS:
            return []
        # "ESLint's partners, Tidelift and HeroDevs": the names in apposition
        for child in tok.children:
            if child.dep_ == "appos" and (m := self.at(child)) is not None:
                return [m]
        # "bare metal Kubernetes clusters", "the Ruby language", "V8 JavaScript engine":
        # the leftmost name modifying the noun, its owner only when nothing else does
        # ("Debian's architecture"; not "Chrome's" V8 engine)
        modifiers = [
            m
            for child in tok.children
            if child.dep_ in _MODIFIERS
            for t in _modifier_words(child)
            if (m := self.at(t))
        ]
        # a name that runs on into an unknown word is not that name ("Eclipse" of
        # "the Eclipse OpenJ9 JVM")
        modifiers = [m for m in modifiers if not self._runs_on(m, tok)]
        if not modifiers:
            modifiers = [m for c in tok.children if c.dep_ == "poss" and (m := self.at(c))]
        if modifiers:
            # a product before an owner ("the Eclipse OpenJ9 JVM" is OpenJ9)
            products = [m for m in modifiers if m.label == "PRODUCT"] or modifiers
            return [min(products, key=lambda m: m.span.start)]
        # "versions of Keycloak", "API standards like OpenAPI"
        for child in tok.children:
            if child.dep_ == "prep" and child.lower_ in ("of", "like"):
                for pobj in child.children:
                    if pobj.dep_ == "pobj" and (m := self.at(pobj)) is not None:
                        return [m]
        return []

    def _named_kind(self, noun: Token) -> Mention | None:
        """The name of a definite noun phrase made of a name and a kind of thing ("the
        MeeGo operating system"); an indefinite one ("a PHP framework") only
        describes, and what modifies it is no product."""
        if (
            self.owner[noun.i] >= 0
            or noun.lower_ not in _KIND_NOUNS
            or not any(c.dep_ == "det" and c.lower_ == "the" for c in noun.children)
        ):
            return None  # not "the modern Jamstack era", not "the Linux distribution"
        names = [
            m
            for c in noun.children
            if c.dep_ in ("compound", "nmod") and (m := self.at(c)) is not None and not m.pronoun
        ]
        return names[0] if len(names) == 1 else None

    def _runs_on(self, m: Mention, head: Token) -> bool:
        end = m.span.end
        if end >= len(self.doc) or end == head.i:
            return False
        nxt = self.doc[end]
        return nxt.i < head.i and self.owner[nxt.i] < 0 and nxt.text[:1].isupper()

    def about(self, trigger: Token, product: bool = False) -> list[Mention]:
        """What the trigger's phrase is about: the subject of its clause, the noun it
        modifies or stands in apposition to, or the subject of the copula it completes.
        With ``product``, a name the model alone typed as something else is a
        description on the way, not the end ("a Kubernetes-based Event Driven
        Autoscaler" is KEDA)."""
        tok = trigger
        for _ in range(_MAX_CLIMB):
            # a plain noun on the way is the product's kind, and what modifies it is
            # not the product ("a PHP framework developed by X": X did not make PHP)
            nominal = tok.pos_ in _NOMINAL or self.owner[tok.i] >= 0
            found = self.names(tok, inside=False) if tok is not trigger and nominal else []
            if found and not (product and all(_guessed_other(m) for m in found)):
                return found
            subjects = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")]
            relative = bool(subjects) and subjects[0].tag_ in ("WDT", "WP")
            if subjects and not (relative and tok.dep_ == "relcl"):
                return self.names(subjects[0], inside=False)
            if tok.dep_ == "appos":
                # an appositive describes the name it stands beside ("OpenOffice.org, an
                # open-sourced version of StarOffice"): no name there, no relation
                host_names = self.names(tok.head, inside=False)
                return host_names if host_names else []
            if tok.dep_ == "acl" and (named := self._named_kind(tok.head)) is not None:
                return [named]  # "the MeeGo operating system made by Nokia" is MeeGo
            if (
                tok.dep_ in ("relcl", "acl")
                and tok.head.dep_ == "pobj"
                and not (self.names(tok.head, inside=False))
            ):
                return []  # "the next step for sites running on Drupal 7": the sites'
            if tok.dep_ in ("relcl", "acl"):
                # "X, which was acquired by V", "a fork of Y that is managed by V";
                # a clause on a name in a list or a phrase ("for Windows and MacOS made
                # by Microsoft", "for Linux and other systems, which was based on GNOME")
                # is about the noun the phrase belongs to
                host = _host(tok.head)
                if host is None:
                    return []
                tok = host
                found = self.names(tok, inside=False)
                if found and not (product and all(_guessed_other(m) for m in found)):
                    return found
                continue
            if (
                tok.dep_ in _UP
                or (tok.dep_ == "advcl" and tok.tag_ == "VBN")
                or (tok.dep_ == "dobj" and tok.head.lower_ in ("has", "have", "had"))
            ):
                # a participle in front is about the main clause's subject
                # ("Published by Mojang, Minecraft is a game")
                tok = tok.head
            else:
                return []
            if tok.dep_ == "ROOT" and not any(
                c.dep_ in ("nsubj", "nsubjpass") for c in tok.children
            ):
                return self.names(tok, inside=False)
        return []


def _host(noun: Token) -> Token | None:
    """The noun a relative or participle clause on ``noun`` is about: ``noun`` itself,
    unless it is one of a list or the object of a preposition inside a larger noun
    phrase, then the noun that phrase belongs to."""
    if noun.dep_ != "conj" and not any(c.dep_ == "conj" for c in noun.children):
        return noun
    tok = noun
    for _ in range(_MAX_CLIMB):
        if tok.dep_ in ("conj", "pobj", "prep"):
            tok = tok.head
        else:
            return tok if tok.pos_ in ("NOUN", "PROPN") else None
    return None


def _guessed_other(m: Mention) -> bool:
    """A name only the statistical model typed, as something other than a product."""
    return m.label != "PRODUCT" and m.span.kb_id_ == "ner"


_MODIFIERS = frozenset(["compound", "nmod", "amod"])


def _modifier_words(tok: Token) -> Iterator[Token]:
    """``tok`` and the words modifying it in turn ("V8" of "V8 JavaScript engine")."""
    yield tok
    for child in tok.children:
        if child.dep_ in _MODIFIERS:
            yield from _modifier_words(child)


def _lists_things(tok: Token) -> bool:
    """A list whose items include a common noun ("containers, Kubernetes and VMs")."""
    items = [tok, *_conjuncts(tok)]
    return len(items) > 1 and any(t.pos_ == "NOUN" for t in items)


def _conjuncts(tok: Token) -> Iterator[Token]:
    """Tokens coordinated to ``tok`` ("V8, Rust, and Tokio")."""
    stack = [c for c in tok.children if c.dep_ == "conj"]
    while stack:
        t = stack.pop()
        yield t
        stack.extend(c for c in t.children if c.dep_ == "conj")


def find_pattern_relations(
    doc: Doc, mentions: Sequence[Mention], subject: str | None = None
) -> list[PatternFound]:
    """Typed relations the patterns find in a parsed text (see the module docstring).

    ``subject`` is the product the note is about: "It" as a subject stands for it.
    Pronoun and guessed mentions are never ends (the patterns resolve "It" themselves).
    """
    if not mentions and not subject:
        return []
    ends = _Ends(doc, mentions, subject)
    if not ends.named:
        return []
    out: list[PatternFound] = []
    seen: set[tuple[str, int, int, int, int]] = set()
    vocab = doc.vocab
    for match_id, tokens in _matches(doc):
        rule, k = vocab.strings[match_id].split("#")
        rtype, patterns = PATTERNS[rule]
        at = {
            str(node["RIGHT_ID"]): doc[i] for node, i in zip(patterns[int(k)], tokens, strict=True)
        }
        trigger = at["trigger"]
        if rule == "support":
            found = list(_support(ends, trigger))
        else:
            found = list(_pairs(ends, rule, rtype, at))
        for f in found:
            key = (
                f.type,
                f.source.span.start,
                f.source.span.end,
                f.target.span.start,
                f.target.span.end,
            )
            if key in seen or f.source.canonical.casefold() == f.target.canonical.casefold():
                continue
            seen.add(key)
            out.append(_slot_typed(f))
    return out


def _matches(doc: Doc) -> Iterator[tuple[int, list[int]]]:
    """The matcher's matches, sentence by sentence when one is too long to be prose
    (spaCy's matcher climbs every candidate token's ancestors and multiplies the
    candidates of a sentence: a list of thousands of names parsed as one sentence
    would cost minutes); such a sentence is not read."""
    words = {t.lower_ for t in doc}
    rules = frozenset(name for name, triggers in TRIGGERS.items() if triggers & words)
    if not rules:
        return
    matcher = _matcher(doc.vocab, rules)
    sents = list(doc.sents) if doc.has_annotation("SENT_START") else [doc[:]]
    if all(len(s) <= MAX_SENTENCE_TOKENS for s in sents):
        yield from matcher(doc)
        return
    for sent in sents:
        if len(sent) <= MAX_SENTENCE_TOKENS:
            for match_id, tokens in matcher(sent.as_doc()):
                yield match_id, [sent.start + i for i in tokens]


#: The type each end's slot says, by relation type (None: the slot says nothing). What
#: is made ("developed by V") is no product slot: in general prose it is as often an
#: organisation or a work (retyping it cost wikigold's ORG F1 0.005).
SLOT_TYPES: dict[str, tuple[str | None, str | None]] = {
    "BASED_ON": ("PRODUCT", "PRODUCT"),
    "PRODUCES": (None, None),
    "SUPPORTS": (None, "PRODUCT"),
    "ACQUIRED": (None, None),
}


def _slot_typed(f: PatternFound) -> PatternFound:
    """The finding with a product slot's end read as a product where only the model
    (or nobody) typed it: "runs on ... Common Language Runtime" is no person."""
    want_source, want_target = SLOT_TYPES[f.type]
    source, target = f.source, f.target
    if want_source and _retyped(source, want_source):
        source = Mention(source.span, want_source, source.canonical, source.pronoun, True, True)
    if want_target and _retyped(target, want_target):
        target = Mention(target.span, want_target, target.canonical, target.pronoun, True, True)
    return PatternFound(f.type, f.rule, source, target, f.sentence, f.detail)


def _retyped(m: Mention, want: str) -> bool:
    """A slot's type wins over a run nobody typed or over the model's organisation or
    person; a place stays a place ("California-based")."""
    return m.label != want and (m.guessed or (_guessed_other(m) and m.label != "LOCATION"))


def slot_typed_spans(found: Sequence[PatternFound]) -> dict[tuple[int, int], str]:
    """Token spans (start, end) of the proper-noun runs the model missed that a
    product slot makes names of ("runs on JVM"), with that type."""
    out: dict[tuple[int, int], str] = {}
    for f in found:
        for m in (f.source, f.target):
            if m.guessed and not m.pronoun and m.span.kb_id_ != "ner":
                out[m.span.start, m.span.end] = m.label
    return out


def _pairs(ends: _Ends, rule: str, rtype: str, at: dict[str, Token]) -> Iterator[PatternFound]:
    trigger = at["trigger"]
    if rule == "base_noun" and "prep" not in at:
        # "a Linux distribution": the product the derived thing is named after (not an
        # organisation the notes declare: "a Red Hat build" is Red Hat's, not based on it)
        named = [
            m
            for t in _modifier_words(at["tgt"])
            if (m := ends.at(t)) is not None
            and not m.pronoun
            and (m.label == "PRODUCT" or m.span.kb_id_ == "ner")
        ]
        if not named:
            return
        base = min(named, key=lambda m: m.span.start)
        for s in ends.about(trigger, True):
            if s.span.start != base.span.start:
                yield PatternFound(rtype, rule, s, base, trigger.sent)
        return
    if rule == "poss":
        owner, owned = ends.at(at["tgt"]), ends.at(at["owned"])
        if owner is not None and owned is not None and not owner.pronoun:
            yield PatternFound(rtype, rule, owner, owned, trigger.sent)
        return
    if any(c.dep_ == "neg" for c in trigger.children):
        return  # "It does not rely on browsers, DOM, or any JavaScript framework"
    if rule == "runs_on" and any(c.dep_ == "dobj" for c in trigger.children):
        return  # "used to run Kubernetes on Azure": Kubernetes runs on Azure, not the service
    if rule == "y_based":
        # the noun that says what the subject is ("KEDA is a Kubernetes-based Event Driven
        # Autoscaler"), not one it mentions ("UDP-based media traffic"); a thing, not a
        # place ("a San Francisco, California-based software company")
        noun = trigger.head
        while noun.dep_ in ("compound", "nmod", "amod") and noun.head.i != noun.i:
            noun = noun.head
        if (
            noun.dep_ not in ("attr", "appos", "ROOT")
            or noun.lower_ in _ORG_NOUNS
            or any(m.label == "LOCATION" for m in ends.names(at["tgt"]))
        ):
            return
    if rule == "for_noun" and _lists_things(at["tgt"]):
        return  # "a service mesh for containers, Kubernetes and VMs": targets, not a base
    if "doing" in at and at["tgt"].dep_ == "dobj" and ends.at(at["tgt"]) is not None:
        # "a tool for keeping Kubernetes clusters in sync" is Kubernetes's; "a tool for
        # executing JavaScript" runs a language
        return
    # the end in the trigger's slot, and the other end (named, or what the phrase is about)
    product = rtype == "BASED_ON"
    targets = (
        ends.names(at["tgt"], guessed=product) if "tgt" in at else ends.about(trigger, product)
    )
    sources = ends.names(at["src"]) if "src" in at else ends.about(trigger, product)
    if rule in ("made_by", "project_of"):
        sources, targets = targets, sources  # the slot holds the maker
    if rule == "project_of":
        # "part of the Cloud Native Computing Foundation", not "part of the OpenJS
        # Foundation's Ecosystem Sustainability Program": an organisation the notes
        # declare or one named as an organisation
        sources = [m for m in sources if m.span.kb_id_ != "ner" or has_org_word(m.canonical)]
    for s in sources:
        for t in targets:
            # an end holding the trigger is the phrase itself ("Component Framework")
            if s.span.start != t.span.start and not any(
                m.span.start <= trigger.i < m.span.end for m in (s, t)
            ):
                yield PatternFound(rtype, rule, s, t, trigger.sent)


def _support(ends: _Ends, support: Token) -> Iterator[PatternFound]:
    """SUPPORTS from a sentence that sells commercial or extended support: the
    provider in a "through / from / by V" slot of the offer (or the subject of
    "provides"), the product in its "for X" slot (else the note's subject)."""
    sent = support.sent
    if any(a.dep_ == "prep" and a.lower_ in PROVIDER_PREPS for a in support.ancestors):
        return  # the offering's own name ("through TuxCare's Endless Lifecycle Support")
    # the noun phrase the support is part of ("Commercial offerings with long-term
    # support"), up to the predicate that offers it ("is available", "are provided")
    phrase = [support]
    tok = support
    for _ in range(4):
        if tok.dep_ not in ("prep", "pobj", "compound", "conj") or tok.head.i == tok.i:
            break
        tok = tok.head
        phrase.append(tok)
    top = phrase[-1]
    words = {t.lower_ for head in phrase for t in head.children if t.dep_ in ("amod", "compound")}
    words |= {t.lower_ for t in support.subtree if t.i < support.i}
    named = support.text == "Support" and support.i > sent.start
    if not (words & SUPPORT_KINDS or named):
        return
    predicate = top.head if top.dep_ in ("nsubj", "nsubjpass", "dobj", "attr") else top
    clause = [predicate, *(c for c in predicate.children if c.dep_ in ("acomp", "xcomp"))]
    providers: list[Mention] = []
    for head in clause:
        for t in head.subtree:
            if t.dep_ in ("prep", "agent") and t.lower_ in PROVIDER_PREPS and t.sent == sent:
                for pobj in t.children:
                    if pobj.dep_ == "pobj":
                        providers.extend(_providers(ends, pobj))
    if predicate.lower_ in OFFER_VERBS and predicate.pos_ == "VERB":
        for child in predicate.children:
            if child.dep_ == "nsubj":
                providers.extend(m for m in ends.names(child) if not m.pronoun)
    products: list[Mention] = []
    for head in (*phrase, *clause):
        for child in head.children:
            if child.dep_ == "prep" and child.lower_ in ("for", "of"):
                for pobj in child.children:
                    if pobj.dep_ == "pobj":
                        products.extend(m for m in ends.names(pobj) if not m.pronoun)
        if products:
            break
    if not products and ends.subject:
        at = support.doc[support.i : support.i + 1]
        products = [Mention(at, "PRODUCT", ends.subject, pronoun=True)]
    offering = _offering(support)
    seen: set[tuple[int, int]] = set()
    for p in providers:
        if (p.span.start, p.span.end) in seen or (p.label == "PRODUCT" and p.span.kb_id_ != "ner"):
            continue  # a declared product sells nothing ("ESLint's partners")
        seen.add((p.span.start, p.span.end))
        # the seller's noun phrase ("the OpenSSL Software Services"), not the words
        # before it ("of jQuery through the HeroDevs ...")
        first = p.span.start
        while first > sent.start and first > p.span.start - 3:
            before = support.doc[first - 1]
            if before.pos_ not in ("PROPN", "NOUN", "DET", "ADJ") or before.is_punct:
                break
            first -= 1
        named_as = support.doc[first : p.span.end].text.casefold()
        for product in products:
            if not (
                _same_maker(p.canonical, product.canonical)
                or product.canonical.casefold() in named_as
            ):
                yield PatternFound("SUPPORTS", "support", p, product, sent, offering)


def _same_maker(provider: str, product: str) -> bool:
    """The maker's own support ("Kong" for Kong Gateway, "Grafana Labs" for Grafana):
    the seller's name and the product's share their first word.

    >>> _same_maker("Grafana Labs", "Grafana"), _same_maker("HeroDevs", "Vue")
    (True, False)
    """
    a, b = provider.casefold().split(), product.casefold().split()
    return bool(a) and bool(b) and a[0].strip(".,") == b[0].strip(".,")


def _providers(ends: _Ends, pobj: Token) -> list[Mention]:
    """The sellers a "through / from / by" object names: the name itself, the owner of
    a named offering ("TuxCare's Endless Lifecycle Support"), the names around a plain
    noun ("the HeroDevs Never-Ending Support initiative", "partners, A and B")."""
    if ends.at(pobj) is None and pobj.pos_ == "PROPN":
        owners = [m for c in pobj.children if c.dep_ == "poss" and (m := ends.at(c)) is not None]
        if owners:
            return owners
    if ends.at(pobj) is None:
        # "the HeroDevs Never-Ending Support initiative (NES, formerly XLTS)": the name
        # modifying the offering, not the acronym beside it
        named = [
            m
            for c in pobj.children
            if c.dep_ in _MODIFIERS
            for t in _modifier_words(c)
            if (m := ends.at(t)) is not None and not m.pronoun
        ]
        if named:
            first = _seller(min(named, key=lambda m: m.span.start))
            return [first] if first is not None else []
    return [s for m in ends.names(pobj) if not m.pronoun and (s := _seller(m)) is not None]


def _seller(m: Mention) -> Mention | None:
    """The seller an offering's name starts with, when the model took the whole name
    for one thing ("HeroDevs Never-Ending Support" is HeroDevs's)."""
    words = [t for t in m.span if t.lower_ != "the"]
    if len(words) < 2 or words[-1].lower_ != "support" or m.span.kb_id_ != "ner":
        return m
    end = next(
        (
            k
            for k, t in enumerate(words)
            if t.lower_ in SUPPORT_KINDS or (k + 1 < len(words) and words[k + 1].text == "-")
        ),
        len(words),
    )
    end = min(end, len(words) - 1)
    if end == 0:
        return None  # an offering's name and no seller ("Premium Enterprise Level Support")
    span = m.span.doc[words[0].i : words[end - 1].i + 1]
    return Mention(span, "ORG", span.text)


def _offering(support: Token) -> str:
    """The offering's name: a capitalised name holding "Support" ("HeroDevs Never-Ending
    Support"), else the kind of support sold ("Commercial support")."""
    sent = support.sent
    for tok in sent:
        if tok.text == "Support" and tok.i > sent.start:
            left = tok
            while left.i > sent.start and (
                left.nbor(-1).text[:1].isupper() or left.nbor(-1).text in ("-", "'s")
            ):
                left = left.nbor(-1)
            return support.doc[left.i : tok.i + 1].text
    lefts = [c for c in support.lefts if c.dep_ in ("amod", "compound")]
    start = min((c.i for c in lefts), default=support.i)
    while start - 2 >= sent.start and support.doc[start - 1].text == "-":
        start -= 2  # "long-term support"
    return support.doc[start : support.i + 1].text
