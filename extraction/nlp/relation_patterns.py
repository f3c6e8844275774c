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
- **an apposition the parser attached elsewhere**: a name closing the sentence after a
  comma ("Apple's spatial computing device, the Apple Vision Pro."), and an indefinite
  phrase after a comma and a preposition's object ("part of the Operator Framework, an
  open source toolkit by Red Hat"), describe the noun before the comma;
- **what people do with it**: "It allows developers to build ..." is the subject's;
- **the note's subject for "It"**: in a note about a product, "It" (or "This")
  as the subject is that product ("It's built on V8"), and so is "the" with a word
  for what it is, alone ("The game is based on Dota Auto Chess"), or a word for its
  releases after its name ("Spring Cloud release trains are designed to work with");
- **a purpose**: "X is built ... to integrate with Y" is X's;
- **a plain noun inside a plain noun**: "a modified version of the Linux kernel" is
  Linux.

The rules and what they find:

========================  ==================================================================
``based_on``              BASED_ON: "X is built on (top of / upon) Y", "based on Y", "runs on
                          Y", "relies/depends on Y", "X builds on Y"
``derived``               BASED_ON: "forked / derived / ported from Y"
``base_noun``             BASED_ON: "X is a fork / build / distribution / implementation /
                          derivative / superset / version of Y", "an installation option
                          of Y"
``powered``               BASED_ON: "powered by Y"
``extends``               BASED_ON: "X extends Y", "X is an extension to / of Y"
``uses_as``               BASED_ON: "X uses Y as its engine", "uses a (custom) build / fork
                          of Y"; "Y is used as the backing store by X"
``y_based``               BASED_ON: "a Kubernetes-based platform"
``for_noun``              BASED_ON: "X, a framework / controller / compiler ... for Y"
``kind_of``               BASED_ON: "X is a Node.js web application framework", "a Vue
                          Component Framework" (a framework, library, toolkit, SDK, plugin,
                          extension, module, wrapper or binding named after Y), "a
                          proprietary Unix operating system", "a Linux container host",
                          "a Linux OS", where no other rule finds the pair; the graph keeps
                          only a Y the corpus declares, and not one its note says is a
                          language, protocol, standard, format or specification ("a PHP
                          web framework" is written in PHP)
``build_with``            BASED_ON: "X is a toolkit to build desktop applications with Y",
                          "It allows developers to build apps using Y", "X is a computer
                          made using Y", "a framework written using Y", "widgets
                          implemented with Y" (one name, not a list of tools nor of
                          examples; the graph keeps only a Y the corpus declares)
``made_for``              RELATED_TO: "X is an IDE for Y", "a no-cost option for Y",
                          "developed / created / written / released for Y", "X is
                          available for / on Y", "for use on / with Y" (Y a product), where
                          no other rule finds the pair of any type; not "no need for Y",
                          "support for Y"
``managed``               BASED_ON: "the fully managed Kubernetes service", "a managed broker
                          service for running Apache ActiveMQ", "a managed service that you
                          can use to run Kubernetes", "a service that manages Apache Kafka
                          infrastructure"
``line_of``               RELATED_TO: "Pixel is Google's line of Android phones" (phones,
                          devices, computers, laptops, tablets or watches named after a
                          product), where no other rule finds the pair of any type
``made_by``               PRODUCES: "developed / created / maintained / managed / published /
                          hosted / owned / defined / standardized by V" (not "As defined
                          by V, X is ..."), "a data store from V", "a suite offered by V"
``made_from``             PRODUCES: "the KHTML and KJS libraries from KDE" (a product's
                          name, from an organisation)
``made_at``               PRODUCES: "(originally) developed / created / designed at V" (V
                          an organisation: "created at Yahoo!", "developed at AT&T Bell
                          Labs")
``maker_verb``            PRODUCES: "V developed / created / released / launched X"
``project_of``            PRODUCES: "X is a project of V", "part of V", "a V project", "a V
                          product"
``poss``                  PRODUCES: "V's X", "V's X computers" (a name before a word for a
                          kind of product or device; not a language: "V's JavaScript
                          engine"), "its X web browser", "their headset, the X" (the one
                          organisation before it)
``acquired``              ACQUIRED: "V acquired X (in YEAR)", "X was acquired by V", "V's
                          acquisition of X"
``support``               SUPPORTS: "commercial support for X is available through V",
                          "V provides extended support for X"
``part_of``               RELATED_TO: "X is (included as) part of Y", "a component / feature
                          of Y" (Y a product: part of
                          an organisation is ``project_of``), "a suite consisting of A, B
                          and C", "X comprises A and B", "X also includes tools such as
                          A and B" (named: not "includes the CSS framework")
``certified``             RELATED_TO: "X is certified using the Java Compatibility Kit", "X
                          releases must pass the AQAvit quality verification suite" (Y a
                          product: the test suite a build is checked with)
``successor``             RELATED_TO: "X is the successor of / to Y", "the replacement
                          for Y", "a rewrite of Y", "X (can) replace(s) Y", "X was
                          succeeded / replaced by Y" (Y a product; not "a drop-in
                          replacement for Y", a competitor)
``uses``                  RELATED_TO: "X uses Y", "computers that use Y" (a finite verb:
                          not "build apps using Y"), where no other rule finds the pair of
                          any type ("uses Y as its engine" is ``uses_as``)
``supports_product``      RELATED_TO: "X supports Y", "with / provides support for Y" (X and
                          Y products: a company's support for a product is ``support``),
                          where no other rule finds the pair of any type
``speaks``                RELATED_TO: "X is a PHP HTTP client", "an open source MQTT
                          broker" (a client, server, broker, framework ... named after Y),
                          where no other rule finds the pair of any type; the graph keeps
                          only a Y the corpus declares a protocol, standard, format or
                          specification
``acts_on``               RELATED_TO: "a set of APIs to automate Chromium", "an API to
                          control Chrome", "a tool to manage Docker" (automate, control,
                          manage, monitor, extend, administer, orchestrate, configure or
                          debug Y, Y a product), where no other rule finds the pair
``works_with``            RELATED_TO: "integrates with Y", "compatible with Y", "designed
                          to work with Y", "packaged / shipped with Y", "X complements
                          Y", "modeled after / inspired by Y", "an operating system
                          (designed) for Y" (a device)
========================  ==================================================================

Each rule's confidence is measured, per rule, on the labelled vendor folders rules
may be tuned on (:data:`extraction.nlp.relation_rules.CONFIDENCE`); the graph's
per-type floors (``extraction.graph.build.MIN_CONFIDENCE``) still decide what enters.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from spacy.tokens import Doc, Span, Token

from extraction.models import NAMED_KIND_OWNED, PRODUCT_PAIR_RULES
from extraction.names import has_org_word
from extraction.nlp.coref import Mention
from extraction.nlp.pattern_ends import (
    MODIFIERS,
    Ends,
    conjuncts,
    given_as_example,
    guessed_other,
    lists_things,
    modifier_words,
)
from extraction.nlp.pattern_rules import (
    INCLUDE,
    KIND_NOUNS,
    MAX_SENTENCE_TOKENS,
    OFFER_VERBS,
    ORG_NOUNS,
    PATTERNS,
    PROVIDER_PREPS,
    SUPPORT_KINDS,
    TRIGGERS,
    matcher_for,
)
from extraction.nlp.seed_spans import LIST_END, LIST_LINKS


@dataclass(frozen=True, slots=True)
class PatternFound:
    """A relation a pattern found: its type, rule, ends and what else it names."""

    type: str
    rule: str
    source: Mention
    target: Mention
    sentence: Span
    detail: str = ""


def find_pattern_relations(
    doc: Doc, mentions: Sequence[Mention], subject: str | None = None
) -> list[PatternFound]:
    """Typed relations the patterns find in a parsed text (see the module docstring).

    ``subject`` is the product the note is about: "It" as a subject stands for it.
    Pronoun and guessed mentions are never ends (the patterns resolve "It" themselves).
    """
    if not mentions and not subject:
        return []
    ends = Ends(doc, mentions, subject)
    if not ends.named:
        return []
    found: list[PatternFound] = []
    vocab = doc.vocab
    for match_id, tokens in _matches(doc):
        rule, k = vocab.strings[match_id].split("#")
        rtype, patterns = PATTERNS[rule]
        at = {
            str(node["RIGHT_ID"]): doc[i] for node, i in zip(patterns[int(k)], tokens, strict=True)
        }
        trigger = at["trigger"]
        if rule == "support":
            found.extend(_support(ends, trigger))
        else:
            found.extend(_pairs(ends, rule, rtype, at))
    # one finding per pair and type, a fallback rule's last ("an Apache Groovy-based
    # web application framework" is y_based's, not kind_of's)
    found.sort(key=lambda f: (f.rule in PAIR_FALLBACK_RULES, f.rule in FALLBACK_RULES))
    out: list[PatternFound] = []
    seen: set[tuple[str, int, int, int, int]] = set()
    pairs: set[frozenset[int]] = set()
    for f in found:
        key = (
            f.type,
            f.source.span.start,
            f.source.span.end,
            f.target.span.start,
            f.target.span.end,
        )
        pair = frozenset([f.source.span.start, f.target.span.start])
        if (
            key in seen
            or (
                f.source.canonical.casefold() == f.target.canonical.casefold()
                and not _maker_named_after(f)
            )
            or (f.rule in PAIR_FALLBACK_RULES and pair in pairs)
        ):
            continue
        seen.add(key)
        pairs.add(pair)
        out.append(_slot_typed(f))
    return out


def _maker_named_after(f: PatternFound) -> bool:
    """A company named after its product, written with its legal word ("Roblox
    Corporation", "Unigine Corp."), making it: two ends, one name."""
    return (
        f.type == "PRODUCES"
        and f.source.label == "ORG"
        and f.target.label == "PRODUCT"
        and f.source.span.text.casefold() != f.target.span.text.casefold()
    )


#: Words for what a product is built on, when it uses one ("uses the GObject type
#: system", "uses the V8 engine"): not a language, a format or a protocol.
BASE_KINDS = frozenset(
    ["system", "engine", "library", "framework", "platform", "runtime", "kernel", "toolkit"]
)


#: Words before a tool's kind that make it serve what it is for, not be built on it
#: ("a package manager for JavaScript", "a test framework for Angular applications").
SERVING_WORDS = frozenset(["package", "test", "testing"])
#: What is built on a platform ("Angular applications").
BUILT_THINGS = frozenset(["applications", "application", "apps", "app", "programs", "code"])


#: Rules that find a pair only where no other rule does.
FALLBACK_RULES = frozenset(["kind_of"])
#: Rules that find a pair only where no other rule finds it of any type ("a
#: controller for Kubernetes" is for_noun's BASED_ON, not also made_for's RELATED_TO).
PAIR_FALLBACK_RULES = frozenset(
    ["made_for", "uses", "supports_product", "speaks", "engine_of", "line_of", "acts_on"]
)


def _matches(doc: Doc) -> Iterator[tuple[int, list[int]]]:
    """The matcher's matches, sentence by sentence when one is too long to be prose
    (spaCy's matcher climbs every candidate token's ancestors and multiplies the
    candidates of a sentence: a list of thousands of names parsed as one sentence
    would cost minutes); such a sentence is not read."""
    words = {t.lower_ for t in doc}
    rules = frozenset(name for name, triggers in TRIGGERS.items() if triggers & words)
    if not rules:
        return
    matcher = matcher_for(doc.vocab, rules)
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
    "RELATED_TO": (None, None),
}


def _slot_typed(f: PatternFound) -> PatternFound:
    """The finding with a product slot's end read as a product where only the model
    (or nobody) typed it: "runs on ... Common Language Runtime" is no person."""
    want_source, want_target = SLOT_TYPES[f.type]
    source, target = f.source, f.target
    if want_source and _retyped(source, want_source, f.rule):
        source = _typed_as(source, want_source)
    if want_target and _retyped(target, want_target, f.rule):
        target = _typed_as(target, want_target)
    return PatternFound(f.type, f.rule, source, target, f.sentence, f.detail)


def _typed_as(m: Mention, label: str) -> Mention:
    """``m`` with the type its slot or its kind word says (a guess of the patterns')."""
    return Mention(m.span, label, m.canonical, m.pronoun, True, True)


def _retyped(m: Mention, want: str, rule: str) -> bool:
    """A slot's type wins over a run nobody typed or over the model's organisation,
    person or place; in "<Y>-based" and "designed for Y" a place stays a place
    ("California-based"), but nothing is "built on" or "a fork of" a place ("based on
    the open-source Uyuni project")."""
    return m.label != want and (
        m.guessed or (guessed_other(m) and (m.label != "LOCATION" or rule not in PLACE_SLOTS))
    )


#: Rules whose slot may hold a place.
PLACE_SLOTS = frozenset(["y_based", "for_noun"])


def slot_typed_spans(found: Sequence[PatternFound]) -> dict[tuple[int, int], str]:
    """Token spans (start, end) of the proper-noun runs the model missed that a
    product slot makes names of ("runs on JVM"), with that type."""
    out: dict[tuple[int, int], str] = {}
    for f in found:
        for m in (f.source, f.target):
            if m.guessed and not m.pronoun and m.span.kb_id_ != "ner":
                out[m.span.start, m.span.end] = m.label
    return out


#: Rules relating X to every name in front of what X is ("a PHP JSON client", "a
#: JavaScript and WebAssembly engine", "a line of Android phones").
NAMED_AFTER_RULES = ("speaks", "engine_of", "line_of")


def _pairs(ends: Ends, rule: str, rtype: str, at: dict[str, Token]) -> Iterator[PatternFound]:
    trigger = at["trigger"]
    if rule in (*NAMED_AFTER_RULES, "kind_of") or (rule == "base_noun" and "prep" not in at):
        # "a Linux distribution": the product the derived thing is named after (not an
        # organisation the notes declare: "a Red Hat build" is Red Hat's, not based on
        # it); what a client speaks or an engine runs may be a list ("a JavaScript and
        # WebAssembly engine"), what a thing is named after is one name
        heads = [at["tgt"]]
        if rule in NAMED_AFTER_RULES:
            heads += list(conjuncts(at["tgt"]))
        named = [
            m
            for head in heads
            for t in modifier_words(head)
            if (m := ends.at(t)) is not None
            and not m.pronoun
            and (m.label == "PRODUCT" or (m.span.kb_id_ == "ner" and rule != "line_of"))
        ]
        if not named:
            return
        # what X is named after is its first modifier; what it speaks, any of them
        bases = named if rule in NAMED_AFTER_RULES else [min(named, key=lambda m: m.span.start)]
        for s in ends.about(trigger, True):
            for base in bases:
                if s.span.start != base.span.start:
                    yield PatternFound(rtype, rule, s, base, trigger.sent)
        return
    if rule == "poss":
        # "Apple's Safari", "Apple's Xcode and tvOS", "Apple's streaming device, the
        # Apple TV", "Apple's Mac computers"; "its Safari web browser" after the one
        # organisation its sentence names before it
        owner = ends.at(at["tgt"]) if "tgt" in at else _its_owner(ends, trigger)
        if owner is None or owner.pronoun:
            return
        owned = _owned_names(ends, at["owned"])
        detail = ""
        if not owned:
            owned, detail = _named_kind_owned(ends, at["owned"]), NAMED_KIND_OWNED
        for m in owned:
            if m.span.start != owner.span.start:
                yield PatternFound(rtype, rule, owner, m, trigger.sent, detail)
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
            or noun.lower_ in ORG_NOUNS
            or any(m.label == "LOCATION" for m in ends.names(at["tgt"]))
        ):
            return
    if rule == "build_with" and (any(conjuncts(at["tgt"])) or len(ends.names(at["tgt"])) > 1):
        # "building desktop applications using JavaScript, HTML, and CSS", "built using
        # web technologies such as TypeScript and Electron": the tools a thing is
        # written with, not one base
        return
    if rule == "for_noun" and (
        lists_things(at["tgt"]) or (trigger.lower_ == "model" and any(conjuncts(at["tgt"])))
    ):
        # "a service mesh for containers, Kubernetes and VMs": targets, not a base; "a
        # programming model for C, C++, and Fortran" serves several languages
        return
    serving = {
        c.lower_ for c in trigger.children if c.dep_ in ("compound", "nmod", "amod")
    } & SERVING_WORDS
    if rule == "for_noun" and (
        "package" in serving or (serving and at["tgt"].lower_ in BUILT_THINGS)
    ):
        # "a package manager for JavaScript" serves the language, "an end-to-end test
        # framework for Angular applications" tests what is built on it (made_for); "a
        # testing framework for PHP" is a PHP framework
        return
    if rule == "for_noun" and any(
        c.lower_ == "operating" for t in (trigger, trigger.head) for c in t.children
    ):
        # "an operating system (designed) for the Apple TV" is made for it (works_with)
        return
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
    if rule == "managed":
        if "what" in at:  # "a service that manages Y": what the service is about
            sources = ends.about(at["what"], product)
        elif "run" not in at:
            # "the fully managed Kubernetes service": a name in front of the service, not
            # its owner ("Amazon's managed broker service")
            targets = [m for m in targets if m.span.root.dep_ == "compound"]
    if rule == "part_of" and trigger.lower_ in INCLUDE:
        # what a product includes is named, not what names a plain noun it includes
        # ("this includes the CSS framework": the framework is the product's own)
        targets = [m for m in targets if m.span.root.dep_ != "compound"]
    if rule == "part_of" and not sources and _of_plain_noun(trigger):
        # "a suite of ... technologies consisting of vSphere, NSX, and vSAN": what the
        # suite is about consists of them
        sources = ends.about(trigger.head.head.head, product)
    if rule == "made_by" and "tgt" in at:
        # "developed by KDE contributors, Apple, Google, ..., and others": the makers
        # the parser hung elsewhere, listed after the slot's phrase
        targets = [*targets, *_listed_after(ends, at["tgt"])]
    if rule == "made_from":
        # a name, from an organisation the notes declare ("the KHTML and KJS libraries
        # from KDE"); not a plain noun's ("OpenJDK builds from Red Hat" are Red Hat's
        # builds, not its OpenJDK), not what is moved from V ("migrated Vue from
        # Intel"), not from an undeclared body ("the report on Mitigation of Climate
        # Change from the United Nations Intergovernmental Panel on Climate Change");
        # the small model often reads the name as an organisation, the slot says product
        src = at["src"]
        if (
            ends.at(src) is None
            or (src.dep_ in ("dobj", "pobj") and src.head.pos_ == "VERB")
            or not any(m.label == "ORG" and m.span.kb_id_ == "ruler" for m in targets)
        ):
            return
        sources = [
            m if m.label == "PRODUCT" else _typed_as(m, "PRODUCT")
            for m in ends.names(src)
            if m.span.kb_id_ != "guess"
            and (m.label == "PRODUCT" or (m.label == "ORG" and m.span.kb_id_ == "ner"))
        ]
    if rule in ("made_by", "made_at", "project_of", "made_from"):
        sources, targets = targets, sources  # the slot holds the maker
    if rule in ("made_at", "made_from"):
        # made at an organisation, not at a time or a place ("built at scale")
        sources = [m for m in sources if m.label == "ORG"]
    if rule == "supports_product" and "tgt" in at:
        # "supports the following runtimes: Node.js, Python, Ruby, Java"
        listed = _colon_list(ends, at["tgt"])
        targets = [*targets, *(m for m in listed if m not in targets)]
    if rule == "successor" and any(c.lower_ == "drop" for c in trigger.children):
        return  # "a drop-in replacement for XenServer" competes with it
    if rule == "certified" and not targets:
        # "the AQAvit quality verification suite": the suite named in front of its kind
        targets = [m for t in modifier_words(at["tgt"]) if (m := ends.at(t)) is not None]
    if rule == "certified":
        # the small model reads a test kit as an organisation as often as a place; the
        # graph keeps the edge only where both ends settle as products
        targets = [m for m in targets if not m.pronoun and m.label != "PERSON"]
    elif rule in PRODUCT_PAIR_RULES:
        # part of a product; part of an organisation is who makes it (project_of); made
        # for a product, not for a company; a product used. The small model often reads a
        # product's name as a place ("part of the Elastic Stack"): the graph keeps such an
        # edge only where the name settles as a product
        targets = [m for m in targets if m.label in ("PRODUCT", "LOCATION")]
    if rule == "works_with" and "tgt" in at:
        # an organisation is worked with where the slot names it ("inspired by Twitter"),
        # not as the owner of a plain noun there ("for Apple's Mac computers")
        slot = at["tgt"]
        targets = [
            m
            for m in targets
            if not (m.label == "ORG" and m.span.root.dep_ == "poss" and m.span.root.head == slot)
        ]
    if rule == "supports_product" and any(c.lower_ in SUPPORT_KINDS for c in trigger.children):
        return  # "provides extended support for Y" is selling support (the support rule)
    if rule in ("uses", "supports_product"):
        # a product using another, not a company or its users ("Netflix uses ..."); a
        # company's support for a product is the support rule's
        sources = [m for m in sources if m.label == "PRODUCT"]
    if rule == "uses" and "tgt" in at:
        # what a product uses is named: "uses Microsoft software development platforms
        # such as Windows API" says what it builds for, not what it is built with
        targets = [m for m in targets if not given_as_example(at["tgt"], m)]
    if rule == "project_of":
        # "part of the Cloud Native Computing Foundation", not "part of the OpenJS
        # Foundation's Ecosystem Sustainability Program": an organisation the notes
        # declare or one named as an organisation
        sources = [m for m in sources if m.span.kb_id_ != "ner" or has_org_word(m.canonical)]
    if rule == "made_by" and any(c.dep_ == "mark" and c.lower_ == "as" for c in trigger.children):
        return  # "As defined by NATO, OSINT is ...": a definition's source, not a maker
    # what a product uses is said to be a system, an engine, a library ... ("uses the
    # GObject type system"): the graph reads it as the product's base
    used = at["tgt"].lower_ if rule == "uses" and "tgt" in at else ""
    detail = used if used in BASE_KINDS else ""
    for s in sources:
        for t in targets:
            # an end holding the trigger is the phrase itself ("Component Framework")
            if s.span.start != t.span.start and not any(
                m.span.start <= trigger.i < m.span.end for m in (s, t)
            ):
                yield PatternFound(rtype, rule, s, t, trigger.sent, detail)


def _colon_list(ends: Ends, tok: Token) -> list[Mention]:
    """The names listed after a colon right after the noun ``tok``: "supports the
    following runtimes: Node.js, Python, Ruby", or one per item of a bullet list below
    it. An item that is no name must be a run of proper nouns the model did not name
    ("Apache TinkerPop, Gremlin, openCypher"); anything else ("caching, fast Java") is
    no list of names. At least two names, within :data:`MAX_LISTED_TOKENS`."""
    doc = ends.doc
    at = tok.i + 1  # the list may hang under the noun: its phrase runs on past the colon
    if at >= len(doc) or doc[at].text != ":":
        return []
    found: list[Mention] = []
    end = min(len(doc), at + MAX_LISTED_TOKENS)
    at += 1
    while at < end:
        t = doc[at]
        k = ends.owner[at]
        if k >= 0 and ends.named[k].span.start == at and not ends.named[k].pronoun:
            found.append(ends.named[k])
            at = ends.named[k].span.end
        elif t.is_space or t.text in ("-", "*", ",") or t.lower_ in LIST_LINKS:
            at += 1
        elif t.pos_ == "PROPN":
            at += 1  # a name the model left unnamed
        else:
            break  # the list's end ("." or a heading), or no list of names
    if at < end and doc[at].text not in (".", ";", "#") and not doc[at].is_space:
        return []
    return found if len(found) >= 2 else []


#: How far a list after a colon is read.
MAX_LISTED_TOKENS = 60


def _listed_after(ends: Ends, tok: Token) -> list[Mention]:
    """Organisations and people listed by commas right after ``tok``'s phrase, the
    list closed by "and" / "or" and a last name or "others" ("by KDE contributors,
    Apple, Google, Nokia, and others"); none when the commas hold anything else."""
    doc = ends.doc
    at = tok.right_edge.i + 1
    found: list[Mention] = []
    while at < tok.sent.end and doc[at].text == ",":
        at += 1
        closing = at < len(doc) and doc[at].lower_ in LIST_LINKS
        at += closing
        if closing and at < len(doc) and doc[at].lower_ in LIST_END:
            return found if len(found) >= 2 else []
        k = ends.owner[at] if at < len(doc) else -1
        if k < 0:
            return []
        m = ends.named[k]
        if m.span.start != at or m.label not in ("ORG", "PERSON"):
            return []
        found.append(m)
        at = m.span.end
        if closing:
            return found if len(found) >= 2 else []
    return []


def _owned_names(ends: Ends, owned: Token) -> list[Mention]:
    """What a possessive owns: the name it is, with every name coordinated to it
    ("Apple's Safari", "Apple's Xcode and tvOS"), or the name in apposition to the plain
    noun it is ("Apple's streaming device, the Apple TV"). A name modifying that noun
    is not owned: "Google's JavaScript engine" is Google's engine, not its JavaScript."""
    found = ends.names(owned, inside=False) or [
        m for c in owned.children if c.dep_ == "appos" for m in ends.names(c, inside=False)
    ]
    closing = ends.closing_appositive(owned) if not found else None
    if closing is None:
        return found
    if guessed_other(closing) and owned.lower_ in OWNED_KINDS:
        # "Apple's spatial computing device, the Apple Vision Pro": the word says what
        # the name the model typed otherwise is
        closing = _typed_as(closing, "PRODUCT")
    return [closing]


#: Nouns of devices a name stands in front of ("Apple's Mac computers").
DEVICE_NOUNS = frozenset(
    """
    computer computers device devices phone phones smartphone smartphones tablet tablets
    watch watches console consoles laptop laptops
    """.split()  # noqa: SIM905
)
#: Words for what a possessive owns that say its name is a product's.
OWNED_KINDS = KIND_NOUNS | DEVICE_NOUNS


def _named_kind_owned(ends: Ends, owned: Token) -> list[Mention]:
    """The product a possessive owns through a word for its kind: the first product
    name modifying that word ("Apple's Mac computers", "its Safari web browser"); a
    name only the model typed, or a proper-noun run it missed, is a product there (the
    word says what it is)."""
    if owned.lower_ not in OWNED_KINDS or ends.at(owned) is not None:
        return []
    names = [
        m
        for child in owned.children
        if child.dep_ in ("compound", "nmod")
        for t in modifier_words(child)
        if (m := ends.at(t, guessed=True)) is not None
        and not m.pronoun
        and (m.label == "PRODUCT" or guessed_other(m))
    ]
    if not names:
        return []
    first = min(names, key=lambda m: m.span.start)
    return [first if first.label == "PRODUCT" else _typed_as(first, "PRODUCT")]


def _its_owner(ends: Ends, its: Token) -> Mention | None:
    """Who "its" is in its sentence: the one organisation named before it ("a browser
    engine developed by Apple and primarily used in its Safari web browser"); none
    where the sentence names several before it, or none."""
    orgs = {
        m.canonical.casefold(): m
        for m in ends.named
        if m.label == "ORG" and its.sent.start <= m.span.start and m.span.end <= its.i
    }
    return next(iter(orgs.values())) if len(orgs) == 1 else None


def _of_plain_noun(trigger: Token) -> bool:
    """A clause on the object of "of" after a noun ("a suite of technologies
    consisting of ...")."""
    noun = trigger.head
    return (
        trigger.dep_ == "acl"
        and noun.dep_ == "pobj"
        and noun.head.lower_ == "of"
        and noun.head.head.pos_ == "NOUN"
    )


def _support(ends: Ends, support: Token) -> Iterator[PatternFound]:
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


def _providers(ends: Ends, pobj: Token) -> list[Mention]:
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
            if c.dep_ in MODIFIERS
            for t in modifier_words(c)
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
