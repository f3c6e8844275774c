"""Who a token of a parse names, for the relation patterns: a mention, the note's
subject standing in for "It", or the names a plain noun stands for ("for bare metal
Kubernetes clusters"), with the names coordinated to it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from spacy.tokens import Doc, Token

from extraction.nlp.coref import Mention, token_owner
from extraction.nlp.pattern_rules import (
    FOR_NOUNS,
    GENERIC,
    GROUP_NOUNS,
    KIND_NOUNS,
    MAX_CLIMB,
    NOMINAL,
    PRONOUNS,
    SUBJECT_NOUNS,
    UP,
    WORKER_NOUNS,
)


class Ends:
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
        if self.subject and (
            (tok.dep_ in ("nsubj", "nsubjpass") and _stands_for_subject(tok))
            or (tok.dep_ in ("pobj", "dobj") and _names_subject(tok))
        ):
            return Mention(self.doc[tok.i : tok.i + 1], "PRODUCT", self.subject, pronoun=True)
        if guessed and (g := self.guessed_owner[tok.i]) >= 0:
            m = self.guessed[g]
            # not the head of a longer name ("JVM" of "the Eclipse OpenJ9 JVM")
            if not any(c.dep_ in MODIFIERS and c.text[:1].isupper() for c in m.span.root.children):
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
            for t in (head, *conjuncts(head)):
                for m in self._one(t, inside, guessed) if t is not tok else first:
                    if (m.span.start, m.span.end) not in seen:
                        seen.add((m.span.start, m.span.end))
                        out.append(m)
        return out

    def _one(self, tok: Token, inside: bool, guessed: bool = False) -> list[Mention]:
        found = self.at(tok)
        if found is not None:
            return [self.bracketed(found) or found]
        inner = self._inside(tok) if inside else []
        if inner:
            return inner
        # a run the model missed, after the names a plain noun holds ("the Eclipse
        # OpenJ9 JVM" is OpenJ9's)
        found = self.at(tok, guessed) if guessed else None
        return [found] if found is not None else []

    def bracketed(self, m: Mention) -> Mention | None:
        """The declared name in brackets right after a name the model only guessed, as
        something other than a product: the same thing's short name ("the Structured
        Query Language (SQL)" is SQL; "the Open Java Development Kit (OpenJDK)")."""
        end = m.span.end
        if not (guessed_other(m) and end + 2 < len(self.doc) and self.doc[end].text == "("):
            return None
        k = self.owner[end + 1]
        if k < 0:
            return None
        inner = self.named[k]
        closed = inner.span.end < len(self.doc) and self.doc[inner.span.end].text == ")"
        declared = inner.span.start == end + 1 and inner.span.kb_id_ != "ner"
        return inner if closed and declared else None

    def _comma_host(self, tok: Token) -> Mention | None:
        """The name an indefinite noun phrase after a comma stands beside, where the
        parser attached the phrase to the verb: the object of a preposition right
        before the comma ("part of the Operator Framework, an open source toolkit")."""
        left = tok.left_edge.i
        if left < 2 or self.doc[left - 1].text != "," or self.doc[left].lower_ not in ("a", "an"):
            return None
        k = self.owner[left - 2]
        if k < 0:
            return None
        m = self.named[k]
        return m if m.span.root.dep_ == "pobj" and not m.pronoun else None

    def closing_appositive(self, tok: Token) -> Mention | None:
        """The name that closes ``tok``'s sentence after a comma right after the noun's
        phrase, an apposition the parser attached elsewhere ("designed for Apple's
        spatial computing device, the Apple Vision Pro.")."""
        if tok.pos_ != "NOUN" or self.owner[tok.i] >= 0:
            return None
        comma = tok.right_edge.i + 1
        sent_end = tok.sent.end
        if comma >= sent_end or self.doc[comma].text != ",":
            return None
        start = comma + 1 + (comma + 1 < sent_end and self.doc[comma + 1].lower_ == "the")
        k = self.owner[start] if start < sent_end else -1
        if k < 0:
            return None
        m = self.named[k]
        rest = [t for t in self.doc[m.span.end : sent_end] if not t.is_punct]
        return m if m.span.start in (comma + 1, start) and not rest else None

    def _inside(self, tok: Token, depth: int = 0) -> list[Mention]:
        """The names a plain noun stands for."""
        # "the open source WildFly application server", parsed as "source" with the
        # server in apposition: "open source" is a plain noun there
        open_source = tok.lower_ == "source" and any(c.lower_ == "open" for c in tok.children)
        if (closing := self.closing_appositive(tok)) is not None:
            return [closing]
        if (employer := self._employer(tok)) is not None:
            return [employer]
        if tok.pos_ == "NOUN" and (examples := self._examples(tok, depth)):
            return examples
        if tok.pos_ not in ("NOUN", "PROPN") or (
            tok.lower_ not in GENERIC | FOR_NOUNS and not open_source
        ):
            return []
        # "ESLint's partners, Tidelift and HeroDevs": the names in apposition, and the
        # names of a plain noun in apposition
        for child in tok.children:
            if child.dep_ != "appos":
                continue
            if (m := self.at(child)) is not None:
                return [m]
            if depth < 2 and (inner := self._inside(child, depth + 1)):
                return inner
        # "bare metal Kubernetes clusters", "the Ruby language", "V8 JavaScript engine":
        # the leftmost name modifying the noun, its owner only when nothing else does
        # ("Debian's architecture"; not "Chrome's" V8 engine)
        modifiers = [
            m
            for child in tok.children
            if child.dep_ in MODIFIERS
            for t in modifier_words(child)
            if (m := self.at(t))
        ]
        # a name that runs on into an unknown word is not that name ("Eclipse" of
        # "the Eclipse OpenJ9 JVM")
        modifiers = [m for m in modifiers if not self._runs_on(m, tok)]
        if not modifiers and (before := self._right_before(tok)) is not None:
            modifiers = [before]
        # a name before a word for a kind of product is a product, whatever the model
        # guessed ("the GObject type system", "the Fluentd project"); an owner is not
        kind = bool(modifiers) and tok.lower_ in KIND_NOUNS - BODY_WORKS
        if not modifiers:
            modifiers = [m for c in tok.children if c.dep_ == "poss" and (m := self.at(c))]
        if modifiers:
            # a product before an owner ("the Eclipse OpenJ9 JVM" is OpenJ9)
            products = [m for m in modifiers if m.label == "PRODUCT"] or modifiers
            first = min(products, key=lambda m: m.span.start)
            return [_as_product(first) if kind else first]
        # "versions of Keycloak", "API standards like OpenAPI", and a plain noun there
        # in turn ("a modified version of the Linux kernel" is Linux)
        for child in tok.children:
            if child.dep_ == "prep" and child.lower_ in ("of", "like", "including"):
                for pobj in child.children:
                    if pobj.dep_ != "pobj":
                        continue
                    if (m := self.at(pobj)) is not None:
                        return [m]
                    if depth < 2 and (inner := self._inside(pobj, depth + 1)):
                        return inner
        return []

    def _examples(self, tok: Token, depth: int) -> list[Mention]:
        """The names a plain noun gives as its examples ("hypervisors such as VMware
        ESXi", "a range of container tools, including Docker", "web frameworks like
        Flask"), and those of a plain noun a word of quantity stands before ("a variety
        of guest operating systems, including Windows")."""
        for child in tok.children:
            if child.dep_ != "prep":
                continue
            such_as = child.lower_ == "as" and any(c.lower_ == "such" for c in child.children)
            example = such_as or child.lower_ in ("including", "like")
            quantity = child.lower_ == "of" and tok.lower_ in QUANTITY_NOUNS and depth < 2
            for pobj in child.children:
                if pobj.dep_ != "pobj":
                    continue
                if example and (m := self.at(pobj)) is not None and not m.pronoun:
                    listed = [m, *(c for t in conjuncts(pobj) if (c := self.at(t)) is not None)]
                    # examples of a kind of product are products, whatever the model
                    # guessed ("specifications, including JSP, Servlets, and WebSockets")
                    kind = tok.lower_ in GENERIC | FOR_NOUNS | KIND_NOUNS
                    return [_as_product(e) if kind else e for e in listed]
                if quantity and (inner := self._inside(pobj, depth + 1)):
                    return inner
        return []

    def _right_before(self, tok: Token) -> Mention | None:
        """The name right in front of a noun inside its own phrase, however the parser
        hung it ("OpenJ9" of "the Eclipse OpenJ9 JVM", read as a conjunction or a
        case marker under "Eclipse")."""
        k = self.owner[tok.i - 1] if tok.i > 0 else -1
        if k < 0:
            return None
        m = self.named[k]
        start = m.span.start
        inside = start >= tok.left_edge.i and all(
            tok.is_ancestor(self.doc[i]) for i in range(start, tok.i)
        )
        return m if inside and m.span.end == tok.i and not m.pronoun else None

    def _employer(self, tok: Token) -> Mention | None:
        """The organisation people are of ("the network engineering team at
        DigitalOcean", "engineers at Google"): what they make, it makes."""
        if tok.lower_ not in WORKER_NOUNS or tok.pos_ != "NOUN":
            return None
        for child in tok.children:
            if child.dep_ == "prep" and child.lower_ == "at":
                for pobj in child.children:
                    m = self.at(pobj) if pobj.dep_ == "pobj" else None
                    if m is not None and not m.pronoun and m.label == "ORG":
                        return m
        return None

    def _named_kind(self, noun: Token) -> Mention | None:
        """The name of a definite noun phrase made of a name and a kind of thing ("the
        MeeGo operating system"); an indefinite one ("a PHP framework") only
        describes, and what modifies it is no product."""
        if (
            self.owner[noun.i] >= 0
            or noun.lower_ not in KIND_NOUNS
            or not any(c.dep_ == "det" and c.lower_ == "the" for c in noun.children)
        ):
            return None  # not "the modern Jamstack era", not "the Linux distribution"
        names = [
            m
            for c in noun.children
            # "The Bosque programming language": the parser may hang a name as a modifier
            if (c.dep_ in ("compound", "nmod") or (c.dep_ == "amod" and c.pos_ == "PROPN"))
            and (m := self.at(c)) is not None
            and not m.pronoun
        ]
        return names[0] if len(names) == 1 else None

    def _subject_by_kind(self, noun: Token) -> list[Mention]:
        """The note's subject named in front of its kind as a clause's subject ("The
        Bosque programming language is a Microsoft Research project"); not another name
        there ("The PHP framework is ..." is no PHP)."""
        named = self._named_kind(noun)
        if named is None or not self.subject:
            return []
        return [named] if named.canonical.casefold() == self.subject.casefold() else []

    def _subject_by_release_word(self, noun: Token) -> list[Mention]:
        """The note's subject named in front of a word for its releases that is a
        clause's subject ("Spring Cloud release trains are designed to work with ..."),
        or after it ("Builds of Oracle JDK are available for ..."): that product; not
        its policy or its users ("The Oracle Solaris support policy is based on ...",
        "Flathub apps run on ...")."""
        if noun.pos_ != "NOUN" or noun.lower_ not in RELEASE_NOUNS or not self.subject:
            return []
        named = [c for c in noun.children if c.dep_ == "compound"] + [
            p for c in noun.children if c.dep_ == "prep" and c.lower_ == "of" for p in c.children
        ]
        return [
            m
            for c in named
            if (m := self.at(c)) is not None
            and not m.pronoun
            and m.canonical.casefold() == self.subject.casefold()
        ][:1]

    def _part_owner(self, noun: Token) -> list[Mention]:
        """The product whose part a plain noun is, by a possessive ("WebKit's HTML and
        JavaScript engine ... has been developed by ..."): what is done to the part is
        done to the product; not an organisation's ("Apple's engine")."""
        if noun.pos_ != "NOUN" or noun.lower_ not in GENERIC or self.owner[noun.i] >= 0:
            return []
        return [
            m
            for c in noun.children
            if c.dep_ == "poss" and (m := self.at(c)) is not None and m.label == "PRODUCT"
        ][:1]

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
        # an infinitive: what something is there to do ("an API to control Chrome")
        purpose = infinitive(trigger)
        for _ in range(MAX_CLIMB):
            # a plain noun on the way is the product's kind, and what modifies it is
            # not the product ("a PHP framework developed by X": X did not make PHP)
            nominal = tok.pos_ in NOMINAL or self.owner[tok.i] >= 0
            found = self.names(tok, inside=False) if tok is not trigger and nominal else []
            if found and not (product and all(guessed_other(m) for m in found)):
                return found
            subjects = [c for c in tok.children if c.dep_ in ("nsubj", "nsubjpass")]
            relative = bool(subjects) and subjects[0].tag_ in ("WDT", "WP")
            if subjects and subjects[0].lower_ in ENABLED and tok.dep_ in ("ccomp", "xcomp"):
                # "It allows developers to build apps using Y": what the developers do
                # with it is the enabler's ("It")
                tok = tok.head
                continue
            if subjects and not (relative and tok.dep_ == "relcl"):
                return (
                    self.names(subjects[0], inside=False)
                    or self._subject_by_release_word(subjects[0])
                    or self._part_owner(subjects[0])
                    or self._subject_by_kind(subjects[0])
                )
            if tok.dep_ == "attr" and (host := self._comma_host(tok)) is not None:
                # "OLM is part of the Operator Framework, an open source toolkit by Red
                # Hat": an apposition the parser made the copula's second complement
                return [host]
            if tok.dep_ == "appos":
                # an appositive describes the name it stands beside ("OpenOffice.org, an
                # open-sourced version of StarOffice"): no name there, no relation; beside
                # a copula's complement it says what the subject is too ("X is an Open
                # Source, free RHEL derivative")
                host_names = self.names(tok.head, inside=False)
                if host_names or tok.head.dep_ not in ("attr", "oprd"):
                    return host_names
                tok = tok.head
                continue
            if tok.dep_ == "acl" and (named := self._named_kind(tok.head)) is not None:
                return [named]  # "the MeeGo operating system made by Nokia" is MeeGo
            if (
                complement := self._comma_participle(tok) or self._group_of(tok) or _way_to(tok)
            ) is not None:
                tok = complement
                continue
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
                owner = noun_host(tok.head)
                if owner is None:
                    return []
                tok = owner
                found = self.names(tok, inside=False)
                if found and not (product and all(guessed_other(m) for m in found)):
                    return found
                continue
            if _misread_participle(tok):
                tok = tok.head.head  # past the participle and a subject the model gave it
            elif (
                tok.dep_ in UP
                or (tok.dep_ == "advcl" and tok.tag_ == "VBN")
                # a purpose ("Flux is built ... to integrate with Prometheus")
                or (tok.dep_ == "advcl" and infinitive(tok))
                or (tok.dep_ == "dobj" and tok.head.lower_ in ("has", "have", "had"))
                # what a product provides to do something does what it does
                # ("Playwright provides a set of APIs to automate Chromium"); not the
                # support or the implementation it provides
                or (tok.dep_ == "dobj" and tok.head.lower_ in PROVIDE_VERBS and purpose)
            ):
                # a participle in front is about the main clause's subject
                # ("Published by Mojang, Minecraft is a game")
                tok = tok.head
            else:
                return []
            if tok.dep_ == "ROOT" and not any(
                c.dep_ in ("nsubj", "nsubjpass") for c in tok.children
            ):
                return self.names(tok, inside=False) or self._misparsed_subject(tok)
        return []

    def _comma_participle(self, tok: Token) -> Token | None:
        """The complement a participle set off by a comma describes, where the parser
        hung it on the object of the complement's preposition ("X is the official IDE
        for Google's Android operating system, built on JetBrains' IntelliJ IDEA": X
        is built on it, not Android); none without the comma ("a platform for
        embedded systems built with Java" may be the systems')."""
        if not (
            tok.dep_ == "acl"
            and tok.tag_ == "VBN"
            and tok.left_edge.i > 0
            and self.doc[tok.left_edge.i - 1].text == ","
            and tok.head.dep_ == "pobj"
            and tok.head.head.dep_ == "prep"
        ):
            return None
        complement = tok.head.head.head
        # the complement, or a noun or participle the parser hung from it ("a free and
        # open source codebase for a web browser, principally developed ... by Google",
        # "a distribution composed of open source software, developed by the Debian
        # Project")
        if complement.dep_ in ("attr", "appos") or complement.pos_ == "NOUN":
            return complement
        return complement if complement.dep_ == "acl" and complement.tag_ == "VBN" else None

    @staticmethod
    def _group_of(tok: Token) -> Token | None:
        """The group a clause on its members describes ("a set of common interfaces
        defined by PHP-FIG": the set is)."""
        if tok.dep_ not in ("acl", "relcl") or tok.head.dep_ != "pobj":
            return None
        of = tok.head.head
        if of.dep_ != "prep" or of.lower_ != "of" or of.head.lower_ not in GROUP_NOUNS:
            return None
        return of.head

    def _misparsed_subject(self, root: Token) -> list[Mention]:
        """The name a copula's clause opens with where the parser gave it no subject's
        role ("AwesomeWM is a dynamic window manager ...", the name taken for a symbol;
        "visionOS is Apple's ... operating system", for an adverbial noun): the one
        name before the verb that hangs from it, when the verb is "is", "are" or "was",
        or a passive participle."""
        passive = root.tag_ == "VBN" and any(c.dep_ == "auxpass" for c in root.children)
        if root.lower_ not in ("is", "are", "was", "were") and not passive:
            return []  # "AngularJS, referred to as Angular 1, was built ... by Google"
        before = [
            m
            for c in root.children
            if c.i < root.i
            and c.dep_ in ("punct", "npadvmod", "dep", "nmod", "compound", "advmod")
            and any(ch.isalpha() for ch in c.text)
            and (m := self.at(c)) is not None
            and not m.pronoun
            and m.span.start == root.sent.start
        ]
        return before[:1] if len(before) == 1 else []


#: People a product lets do things ("It allows developers to build ..."), whose
#: doing is the product's.
ENABLED = frozenset(["developers", "users", "programmers", "engineers", "you"])
#: Words for a product's releases, which do what the product does.
RELEASE_NOUNS = frozenset(
    ["trains", "releases", "release", "versions", "version", "builds", "editions", "binaries"]
)


def _misread_participle(tok: Token) -> bool:
    """A noun the model made the object of a participle that modifies it ("a GPLv2
    with CPE licensed build of Y": "licensed" an adverbial clause, "build" its
    object): what the noun's phrase is about is the participle's host's."""
    head = tok.head
    return (
        tok.dep_ == "dobj"
        and head.tag_ in ("VBN", "VBD")
        and head.dep_ == "advcl"
        and not any(c.dep_ in ("aux", "auxpass") for c in head.children)
    )


def _stands_for_subject(tok: Token) -> bool:
    """A subject that, in a note about a product, is that product: "It", "This", or
    "the" and a word for what the product is, alone ("The game is based on Dota Auto
    Chess", "The project is maintained by ..."; not "The Linux kernel", not "The
    engine": a part of the product); or each of its releases ("Each major version is
    based on a corresponding Debian release", "Every release is built on ...": a word
    for its releases after "each", "every" or "all", with plain adjectives only)."""
    if tok.lower_ in PRONOUNS:
        return True
    if tok.pos_ != "NOUN":
        return False
    kids = list(tok.children)
    if tok.lower_ in SUBJECT_NOUNS and [(c.dep_, c.lower_) for c in kids] == [("det", "the")]:
        return True
    return (
        tok.lower_ in RELEASE_NOUNS
        and any(c.dep_ in ("det", "predet") and c.lower_ in _EVERY for c in kids)
        and all(
            c.dep_ in ("det", "predet") or (c.dep_ == "amod" and c.pos_ == "ADJ" and c.is_lower)
            for c in kids
        )
    )


def _names_subject(tok: Token) -> bool:
    """An object that, in a note about a product, is that product: "the" and a word
    for what the product is, alone ("Microsoft Edge and Opera are based on the code",
    "Google uses the code to make its Chrome web browser"); not "it", which an object
    is as often of another thing the sentence names."""
    return (
        tok.pos_ == "NOUN"
        and tok.lower_ in SUBJECT_NOUNS | CODE_NOUNS
        and [(c.dep_, c.lower_) for c in tok.children] == [("det", "the")]
    )


#: Words for a product's code, which stand for it as "the code".
CODE_NOUNS = frozenset(["code", "codebase"])
#: Determiners that make a word for a product's releases stand for all of them.
_EVERY = frozenset(["each", "every", "all"])


def noun_host(noun: Token) -> Token | None:
    """The noun a relative or participle clause on ``noun`` is about: ``noun`` itself,
    unless it is one of a list or the object of a preposition inside a larger noun
    phrase, then the noun that phrase belongs to."""
    if noun.dep_ != "conj" and not any(c.dep_ == "conj" for c in noun.children):
        return noun
    tok = noun
    for _ in range(MAX_CLIMB):
        if tok.dep_ in ("conj", "pobj", "prep"):
            tok = tok.head
        else:
            # a complement the parser headed by an adjective of the list ("a proprietary
            # and no longer recommended web browser developed by Microsoft")
            return tok if tok.pos_ in ("NOUN", "PROPN") or tok.dep_ in ("attr", "oprd") else None
    return None


def _way_to(tok: Token) -> Token | None:
    """The noun a purpose describes through what it comes with ("a framework with an
    intuitive way to create ... web applications with Vue.js": the framework's)."""
    if tok.dep_ not in ("relcl", "acl") or not infinitive(tok):
        return None
    with_ = tok.head.head
    if tok.head.dep_ != "pobj" or with_.dep_ != "prep" or with_.lower_ != "with":
        return None
    return with_.head if with_.head.pos_ in ("NOUN", "PROPN") else None


def infinitive(tok: Token) -> bool:
    """Whether ``tok`` is a verb with "to" ("to control Chrome", "to integrate with")."""
    return any(c.dep_ == "aux" and c.lower_ == "to" for c in tok.children)


def _as_product(m: Mention) -> Mention:
    """``m`` read as a product where only the model typed it as something else."""
    if not guessed_other(m):
        return m
    return Mention(m.span, "PRODUCT", m.canonical, m.pronoun, True, True)


def given_as_example(slot: Token, m: Mention) -> bool:
    """Whether ``m`` is an example a plain noun in ``slot`` gives ("platforms such as
    Windows API"), not the slot's own name."""
    tok = m.span.root
    for _ in range(MAX_CLIMB):
        if tok.i == slot.i or tok.head.i == tok.i:
            return False
        if tok.dep_ == "prep" and (tok.lower_ in ("including", "like", "as")):
            return True
        tok = tok.head
    return False


def guessed_other(m: Mention) -> bool:
    """A name only the statistical model typed, as something other than a product."""
    return m.label != "PRODUCT" and m.span.kb_id_ == "ner"


MODIFIERS = frozenset(["compound", "nmod", "amod"])
#: Kinds of product a standards body names in front of them ("the ISO standard", "the
#: W3C specification"): what names them may be no product.
BODY_WORKS = frozenset(["standard", "standards", "specification", "specifications"])
#: Verbs of providing: what the object is there to do, the subject does.
PROVIDE_VERBS = frozenset(["provides", "provide", "offers", "offer"])
#: Words of a quantity of things, which stand for the things ("a variety of guest
#: operating systems").
QUANTITY_NOUNS = frozenset(["variety", "range", "number", "host", "multitude", "array", "lot"])


def modifier_words(tok: Token) -> Iterator[Token]:
    """``tok`` and the words modifying it in turn ("V8" of "V8 JavaScript engine")."""
    yield tok
    for child in tok.children:
        if child.dep_ in MODIFIERS:
            yield from modifier_words(child)


def lists_things(tok: Token) -> bool:
    """A list whose items include a common noun ("containers, Kubernetes and VMs")."""
    items = [tok, *conjuncts(tok)]
    return len(items) > 1 and any(t.pos_ == "NOUN" for t in items)


def conjuncts(tok: Token) -> Iterator[Token]:
    """Tokens coordinated to ``tok`` ("V8, Rust, and Tokio"), and a list the parser
    hung from it as an apposition ("for Windows, macOS, Android, iOS, and Linux":
    "macOS" in apposition, the rest coordinated to it)."""
    stack = [
        c
        for c in tok.children
        if c.dep_ == "conj"
        or (
            c.dep_ == "appos"
            and tok.pos_ == "PROPN"
            and c.pos_ == "PROPN"
            and any(g.dep_ == "conj" for g in c.children)
        )
    ]
    while stack:
        t = stack.pop()
        yield t
        stack.extend(c for c in t.children if c.dep_ == "conj")
