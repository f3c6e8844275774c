"""The rules of :mod:`extraction.nlp.relation_patterns` as data: each rule's trigger
words and its spaCy :class:`~spacy.matcher.DependencyMatcher` patterns, the matcher
made of them, and the words that name kinds of things, organisations and pronouns."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from spacy.matcher import DependencyMatcher
from spacy.vocab import Vocab

from extraction.nlp.relation_words import PRODUCT_NOUNS

#: Words of each rule's trigger (lower case: the lemmatizer is off).
BUILD_ON = frozenset(
    """
    built build builds building based base bases relies rely relying depends depend depending
    layered sits sit
    """.split()  # noqa: SIM905
)
RUN = frozenset(["runs", "run", "running"])
#: Verbs of making things with a tool ("a toolkit to build desktop applications with
#: Java"), and the things made (a product is what they are made with only then).
BUILD_VERBS = frozenset(
    """
    build builds building create creates creating develop develops developing write writes
    writing
    """.split()  # noqa: SIM905
)
BUILT = frozenset(
    """
    application applications app apps website websites interfaces interface programs
    games services apis
    """.split()  # noqa: SIM905
)
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
#: Nouns of what is made on a platform and named after it ("a Node.js web application
#: framework", "an open-source Vue Component Framework", "a Python library"); not
#: what merely runs or holds one ("a JavaScript runtime", "a MySQL database").
MADE_ON_KINDS = frozenset(
    """
    framework frameworks library libraries toolkit toolkits sdk plugin plugins plug-in
    extension extensions module modules wrapper wrappers binding bindings
    """.split()  # noqa: SIM905
)
#: Nouns of what speaks a protocol or reads a format named in front of them ("a PHP
#: HTTP client", "a scalable MQTT broker", "a pure-Java HTTP web server environment").
SPEAKER_NOUNS = frozenset(
    """
    client clients server servers broker brokers proxy proxies daemon gateway framework
    library parser environment implementation
    """.split()  # noqa: SIM905
)
#: Nouns of a group of things, in "a suite of shippers for Y": what the group is for.
GROUP_NOUNS = frozenset(["suite", "set", "collection", "family", "range", "series"])
#: Nouns of what runs a language or a format named in front of it ("a JavaScript and
#: WebAssembly engine", "a JavaScript runtime"): related to what it runs, not built on it.
ENGINE_NOUNS = frozenset(
    ["engine", "engines", "runtime", "runtimes", "interpreter", "interpreters"]
)
#: An operating system named after the system it is made on ("a proprietary Unix
#: operating system", "an open source Linux container host"): the noun and the word
#: that makes it a system of that kind.
SYSTEM_KINDS = frozenset(["system", "host"])
SYSTEM_WORDS = frozenset(["operating", "container"])
#: Participles of what is made for a device or a platform ("developed by Apple for the
#: Apple TV"); "designed for Y" is for_noun's (:data:`MADE_FOR`).
#: What a maker's "by" or "from" follows ("a software tool by HashiCorp", "an in-memory
#: data store from Amazon Web Services").
MAKER_NOUNS = PRODUCT_NOUNS | frozenset(["store", "stores"])
#: Devices a line of products is ("a line of Android phones").
DEVICE_NOUNS = frozenset(
    ["phones", "smartphones", "devices", "computers", "laptops", "tablets", "watches"]
)
#: What a managed offering is ("a managed broker service for running Apache ActiveMQ").
SERVICE_NOUNS = frozenset(["service", "services", "offering", "platform"])
MADE_FOR_VERBS = frozenset(["developed", "created", "written", "released", "produced"])
#: Nouns of a kind of product a name can stand in front of ("the MeeGo operating system").
KIND_NOUNS = (PRODUCT_NOUNS | frozenset(["system"])) - frozenset(["distribution", "distributions"])
#: Nouns of what extends a platform, in "X, a <noun> for Y" ("a controller for
#: Kubernetes", "a compiler for Clojure"), and a language for the platform it runs on
#: ("a programming language for .NET", "a new language for the Java Virtual Machine",
#: "a template language for PHP": over the corpus these four, each read right); not what
#: merely targets one ("a desktop environment for Linux", "a suite for Windows").
FOR_NOUNS = frozenset(
    """
    tool tools controller controllers operator operators plugin plugins plug-in extension
    extensions addon add-on addons add-ons driver drivers provider providers wrapper binding
    bindings implementation system autoscaler framework library module modules sdk compiler
    transpiler port manager dashboard gateway proxy registry agent orchestrator scheduler
    engine platform service distribution runtime toolkit language languages
    """.split()  # noqa: SIM905
)
#: What a model "for Y" is a model of, when it is built on Y ("a programming model").
MODEL_KINDS = frozenset(["programming", "coding", "configuration", "application", "component"])
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
#: Verbs of making a product with what is used ("uses the code to make its browser").
MAKE_VERBS = frozenset(["make", "build", "create", "develop", "power"])
#: What a product uses of another that makes it based on that one ("uses a fork of Y").
USED_BASES = frozenset(["build", "fork", "version", "port", "variant"])
#: Verbs of acting on a product that a product is for ("APIs to automate Chromium",
#: "an API to control Chrome", "a tool to manage Docker").
ACT_VERBS = frozenset(
    """
    automate control manage monitor extend administer orchestrate configure debug
    """.split()  # noqa: SIM905
)
#: Participles of making a thing, "X is developed by V"; not "sponsored" ("developed by
#: the community-supported Fedora Project and sponsored by Red Hat": who pays is no maker).
MADE_BY = frozenset(
    """
    developed created maintained managed made designed written authored built published produced
    conceived released launched stewarded governed hosted incubated started invented
    founded co-created co-developed originated owned defined specified standardized standardised
    """.split()  # noqa: SIM905
)
#: Participles of making a thing at an organisation ("originally developed at AT&T Bell
#: Labs", "created at Yahoo!"): the organisation made it.
MADE_AT = frozenset(
    """
    developed created designed built invented conceived started written originated incubated
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
    framework frameworks library libraries version versions release releases branches branch builds
    partners partner initiative program programme providers provider team community systems
    system servers server services service specification standard standards stack ecosystem
    architecture kernel jvm software protocol protocols product products specifications apis
    infrastructure database databases instances formats format templates template editor
    editors browser browsers series line lineup family suite
    """.split()  # noqa: SIM905
)
EMBED = frozenset(["embeds", "embed", "embedding", "embedded", "bundles", "bundling"])
#: Words of a whole and its parts ("X is part of Y", "a suite consisting of A, B and C").
CONSIST = frozenset(["consisting", "consists", "consist", "composed"])
COMPRISE = frozenset(["comprising", "comprises", "comprise"])
INCLUDE = frozenset(["includes", "include"])
#: Words of one product made to go with another ("integrates with Y", "compatible with
#: Y", "designed to work with Y", "is packaged with Y").
WITH_WORDS = frozenset(
    """
    integrates integrate integrated integrating integration interoperates interoperate
    compatible compatibility works work working packaged shipped ships bundled included
    """.split()  # noqa: SIM905
)
#: "X extends Y", "an extension to Y".
EXTEND = frozenset(["extends", "extend", "extending"])
EXTENSION = frozenset(["extension", "extensions"])
#: "X implements Y" (a protocol, a specification, another product's interface).
IMPLEMENT = frozenset(["implements", "implement", "implementing"])
#: "complements Y", "modeled after Y", "inspired by Y".
COMPLEMENT = frozenset(["complements", "complement", "complementing"])
SUCCESSOR_NOUNS = frozenset(["successor", "replacement", "rewrite"])
SUCCEEDED = frozenset(["succeeded", "replaced", "superseded"])
REPLACE = frozenset(["replaces", "replace"])
INSPIRED = frozenset(["inspired", "influenced", "modeled", "modelled", "patterned"])
PRONOUNS = frozenset(["it", "this"])
#: Words for what a note's product is that, as "the <word>" alone, name it as a subject
#: (not parts of a product: "the engine", "the kernel", "the server").
SUBJECT_NOUNS = frozenset(
    """
    game software project framework library tool application app language program
    programme editor browser product distribution
    """.split()  # noqa: SIM905
)
#: Dependencies climbed from a trigger to what its phrase is about.
UP = frozenset(
    """
    acl appos relcl amod compound nmod attr acomp oprd conj xcomp ccomp prep pobj pcomp
    """.split()  # noqa: SIM905
)
MAX_CLIMB = 8
#: Longest sentence the patterns read (longer: a list or a table, not prose).
MAX_SENTENCE_TOKENS = 250
NOMINAL = frozenset(["NOUN", "PROPN", "PRON", "X"])
#: People of an organisation, who work at it: what "the team at V" or "engineers at
#: V" make, V makes.
WORKER_NOUNS = frozenset(
    """
    team teams engineers developers researchers staff employees engineering
    """.split()  # noqa: SIM905
)
#: Nouns of organisations: "a Seattle-based company" says where, not what on.
ORG_NOUNS = frozenset(
    """
    company companies firm startup start-up organization organisation group team studio
    """.split()  # noqa: SIM905
)


def _any(words: frozenset[str]) -> dict[str, object]:
    return {"LOWER": {"IN": sorted(words)}}


def _prep(words: Sequence[str]) -> dict[str, object]:
    return {"DEP": "prep", "LOWER": {"IN": list(words)}}


def _node(left: str, rel: str, right: str, attrs: dict[str, object]) -> dict[str, object]:
    return {"LEFT_ID": left, "REL_OP": rel, "RIGHT_ID": right, "RIGHT_ATTRS": attrs}


def _trigger(attrs: dict[str, object]) -> dict[str, object]:
    return {"RIGHT_ID": "trigger", "RIGHT_ATTRS": attrs}


#: Participles of a thing made with another ("made with LÖVE", "written using Node.js";
#: "built with Y" is based_on's).
BUILT_WITH = frozenset(["written", "made", "developed", "implemented", "created"])
#: The nodes of building things (the trigger, and "obj": "build desktop applications").
_BUILD_THINGS = [
    _trigger(_any(BUILD_VERBS)),
    _node("trigger", ">", "obj", {"DEP": "dobj", "LOWER": {"IN": sorted(BUILT)}}),
]
#: The nodes of "an operating system" as what the subject is (the trigger).
_OPERATING_SYSTEM = [
    _trigger({"LOWER": {"IN": ["system", "systems"]}, "DEP": {"IN": ["attr", "appos"]}}),
    _node("trigger", ">", "operating", {"DEP": {"IN": ["compound", "amod"]}, "LOWER": "operating"}),
]

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
                # "conj": "an open source, community-driven fork of Y", parsed as a second
                # complement; "dobj": "a GPLv2 with CPE licensed build of Y", where the
                # model reads "licensed" as a verb (about() takes only that shape)
                _trigger(
                    {
                        **_any(BASE_NOUNS),
                        "DEP": {"IN": ["attr", "appos", "ROOT", "oprd", "conj", "dobj"]},
                    }
                ),
                _node("trigger", ">", "prep", _prep(["of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            *(
                [  # "Nano Server is a minimal installation option of Windows Server"
                    _trigger({"LOWER": "option", "DEP": {"IN": ["attr", "appos"]}}),
                    _node("trigger", ">", "kind", {"LOWER": "installation", "DEP": "compound"}),
                    _node("trigger", ">", "prep", _prep(["of"])),
                    *slot,
                ]
                for slot in (
                    [_node("prep", ">", "tgt", {"DEP": "pobj"})],
                    # "... of Windows Server offering a smaller footprint": the parser
                    # makes the name the subject of the participle after it
                    [
                        _node("prep", ">", "ing", {"DEP": "pcomp", "TAG": "VBG"}),
                        _node("ing", ">", "tgt", {"DEP": "nsubj"}),
                    ],
                )
            ),
            [  # "It started as a fork of the KHTML and KJS libraries"
                _trigger({**_any(BASE_NOUNS), "DEP": "pobj"}),
                _node("trigger", "<", "as", {"LOWER": "as", "DEP": "prep"}),
                _node("trigger", ">", "prep", _prep(["of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a Linux distribution", "a community-driven Debian derivative"
                _trigger({**_any(DERIVED_KINDS), "DEP": {"IN": ["attr", "appos", "oprd"]}}),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
        ],
    ),
    "speaks": (
        "RELATED_TO",
        [
            [  # "a PHP HTTP client", "an open source MQTT broker": what X speaks (only a
                # protocol, standard or format the corpus declares: extraction.graph.build)
                _trigger({**_any(SPEAKER_NOUNS), "DEP": {"IN": ["attr", "appos", "oprd"]}}),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
        ],
    ),
    "engine_of": (
        "RELATED_TO",
        [
            [  # "V8 is Google's JavaScript and WebAssembly engine": what X runs (only a
                # language or a format the corpus declares: extraction.graph.build)
                _trigger({**_any(ENGINE_NOUNS), "DEP": {"IN": ["attr", "appos", "oprd"]}}),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
        ],
    ),
    "kind_of": (
        "BASED_ON",
        [
            [  # "a Node.js web application framework": the framework says what X is
                _trigger({**_any(MADE_ON_KINDS), "DEP": {"IN": ["attr", "appos", "oprd"]}}),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
            [  # "a proprietary Unix operating system", "a Linux container host"
                # in lower case: "ROS 2 (Robot Operating System)" is a name
                _trigger(
                    {"ORTH": {"IN": sorted(SYSTEM_KINDS)}, "DEP": {"IN": ["attr", "appos", "oprd"]}}
                ),
                _node(
                    "trigger",
                    ">",
                    "kind",
                    {"ORTH": {"IN": sorted(SYSTEM_WORDS)}, "DEP": "compound"},
                ),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
            [  # "a commercial Linux OS"
                _trigger({"LOWER": "os", "DEP": {"IN": ["attr", "appos", "oprd"]}}),
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
    "build_with": (
        "BASED_ON",
        [
            [  # "a toolkit to build desktop applications with Java"
                *_BUILD_THINGS,
                _node("obj", ">", "prep", _prep(["with"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "to create full-stack web applications with Vue.js"
                *_BUILD_THINGS,
                _node("trigger", ">", "prep", _prep(["with"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "to build Android and iOS mobile apps using JavaScript"
                *_BUILD_THINGS,
                _node(
                    "trigger", ">", "using", {"DEP": {"IN": ["advcl", "xcomp"]}, "LOWER": "using"}
                ),
                _node("using", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "to build Android and iOS mobile apps using JavaScript": the apps a conjunct
                _trigger(_any(BUILD_VERBS)),
                _node("trigger", ">", "first", {"DEP": "dobj"}),
                _node("first", ">", "obj", {"DEP": "conj", "LOWER": {"IN": sorted(BUILT)}}),
                _node("obj", ">", "using", {"DEP": "acl", "LOWER": "using"}),
                _node("using", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "to build apps using JavaScript", "using" on the apps
                *_BUILD_THINGS,
                _node("obj", ">", "using", {"DEP": "acl", "LOWER": "using"}),
                _node("using", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "a fantasy computer made with LÖVE"
                _trigger({**_any(BUILT_WITH), "TAG": {"IN": ["VBN", "VBD"]}}),
                _node("trigger", ">", "prep", _prep(["with"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a web framework written using Node.js", "built using LÖVE"
                _trigger({**_any(BUILT_WITH | {"built"}), "TAG": {"IN": ["VBN", "VBD"]}}),
                _node("trigger", ">", "using", {"LOWER": "using"}),
                _node("using", ">", "tgt", {"DEP": {"IN": ["dobj", "pobj"]}}),
            ],
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
            [  # "Google uses the code to make its Chrome web browser": what is made is
                # built on what is used
                _trigger({**_any(USE), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
                _node(
                    "trigger",
                    ">",
                    "make",
                    {"DEP": {"IN": ["xcomp", "advcl"]}, "LOWER": {"IN": sorted(MAKE_VERBS)}},
                ),
                _node("make", ">", "src", {"DEP": "dobj"}),
            ],
            [  # "It uses a custom build of Pixi.js for WebGL"
                _trigger({**_any(USE), "POS": "VERB"}),
                _node("trigger", ">", "what", {"DEP": "dobj", **_any(USED_BASES)}),
                _node("what", ">", "of", _prep(["of"])),
                _node("of", ">", "tgt", {"DEP": "pobj"}),
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
            [  # "a coding and configuration model for Java applications": a model of
                # programming, not a person modelling for a brand ("a fashion model for Y")
                _trigger({"LOWER": "model", "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "kind", {"LOWER": {"IN": sorted(MODEL_KINDS)}}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a policy engine designed for Kubernetes"
                _trigger({**_any(MADE_FOR), "TAG": "VBN"}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "managed": (
        "BASED_ON",
        [
            [  # "the fully managed Kubernetes service": what it is, named after Y
                _trigger({"LOWER": "managed", "DEP": "amod"}),
                _node("trigger", "<", "tgt", {"DEP": {"IN": ["attr", "appos"]}, "POS": "NOUN"}),
            ],
            [  # "a managed broker service for running Apache ActiveMQ"
                _trigger({**_any(SERVICE_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "managed", {"LOWER": "managed", "DEP": "amod"}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "run", {"DEP": "pcomp", "LOWER": {"IN": sorted(RUN)}}),
                _node("run", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "a managed service that you can use to run Kubernetes on AWS"
                _trigger({**_any(SERVICE_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "managed", {"LOWER": "managed", "DEP": "amod"}),
                _node("trigger", ">>", "run", {"DEP": "xcomp", "LOWER": {"IN": sorted(RUN)}}),
                _node("run", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "a streaming data service that manages Apache Kafka infrastructure"
                _trigger({"LOWER": {"IN": ["manages", "manage"]}, "DEP": "relcl"}),
                _node(
                    "trigger",
                    "<",
                    "what",
                    {**_any(SERVICE_NOUNS), "DEP": {"IN": ["attr", "appos"]}},
                ),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
        ],
    ),
    "extends": (
        "BASED_ON",
        [
            [  # "`ansible` extends the basic `ansible-core`"
                _trigger({**_any(EXTEND), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "JSX is an XML-like syntax extension to ECMAScript"
                _trigger({**_any(EXTENSION), "DEP": {"IN": ["attr", "appos", "ROOT"]}}),
                _node("trigger", ">", "prep", _prep(["to", "of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "part_of": (
        "RELATED_TO",
        [
            [  # "X is (included as) part of Y", "a component / feature of Y"
                _trigger(
                    {
                        "LOWER": {"IN": ["part", "component", "feature"]},
                        "DEP": {"IN": ["attr", "appos", "pobj", "oprd"]},
                    }
                ),
                _node("trigger", ">", "prep", _prep(["of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a suite consisting of vSphere, NSX, and vSAN", "composed of"
                _trigger(_any(CONSIST)),
                _node("trigger", ">", "prep", _prep(["of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "X comprises A and B", "XAMPP also includes ... Apache Tomcat 7"
                _trigger({**_any(COMPRISE | INCLUDE), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
        ],
    ),
    "acts_on": (
        "RELATED_TO",
        [
            [  # "a set of APIs to automate Chromium, Firefox, and WebKit", "an API to
                # control Chrome": what a product is for doing, to another product
                _trigger(_any(ACT_VERBS)),
                _node("trigger", ">", "to", {"DEP": "aux", "LOWER": "to"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
        ],
    ),
    "works_with": (
        "RELATED_TO",
        [
            [  # "integrates with iOS", "compatible with Y", "designed to work with Y"
                _trigger({**_any(WITH_WORDS), "POS": {"IN": ["VERB", "ADJ", "NOUN"]}}),
                _node("trigger", ">", "prep", _prep(["with"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "an operating system for the Apple TV": made for the device, not built on it
                *_OPERATING_SYSTEM,
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "an operating system specifically designed for Apple's device"
                *_OPERATING_SYSTEM,
                _node("trigger", ">", "made", {"DEP": "acl", "LOWER": {"IN": sorted(MADE_FOR)}}),
                _node("made", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "a Redis OSS-compatible data store"
                _trigger({"LOWER": "compatible", "DEP": "amod"}),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["npadvmod", "compound", "nmod"]}}),
            ],
            [  # "a MongoDB-compatible database service", parsed as two modifiers of the noun
                _trigger({"LOWER": "compatible", "DEP": "amod"}),
                _node("trigger", ";", "hyphen", {"ORTH": "-"}),
                _node("hyphen", ";", "tgt", {"DEP": {"IN": ["amod", "compound", "nmod"]}}),
            ],
            [  # "It implements the ActivityPub and WebFinger protocols"
                _trigger({**_any(IMPLEMENT), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "Chef Infra Server complements Chef Infra Client"
                _trigger({**_any(COMPLEMENT), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "modeled after and inspired by Twitter"
                _trigger({**_any(INSPIRED), "TAG": "VBN"}),
                _node(
                    "trigger",
                    ">",
                    "by",
                    {"DEP": {"IN": ["agent", "prep"]}, "LOWER": {"IN": ["by", "after", "on"]}},
                ),
                _node("by", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "uses": (
        "RELATED_TO",
        [
            [  # "It uses the Structured Query Language (SQL)", "computers that use iOS"
                _trigger(
                    {
                        "LOWER": {"IN": ["uses", "use", "used"]},
                        "POS": "VERB",
                        "TAG": {"IN": ["VBZ", "VBP", "VBD"]},
                    }
                ),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ]
        ],
    ),
    "supports_product": (
        "RELATED_TO",
        [
            [  # "JQuery UI supports the latest stable releases of Chrome, Edge, Firefox"
                _trigger(
                    {
                        "LOWER": {"IN": ["supports", "support", "supported"]},
                        "POS": "VERB",
                        "TAG": {"IN": ["VBZ", "VBP", "VBD"]},
                    }
                ),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "written in PHP with support for the MySQL or MariaDB database"; not
                # what a product is ("X is commercial support for Y": the support rule's)
                _trigger({"LOWER": "support", "POS": "NOUN", "DEP": {"NOT_IN": ["attr", "appos"]}}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "made_for": (
        "RELATED_TO",
        [
            [  # "Xcode is an IDE for macOS", "a no-cost option for Oracle Database"
                _trigger({"LOWER": "for", "DEP": "prep"}),
                _node(
                    "trigger",
                    "<",
                    "kind",
                    {
                        "POS": "NOUN",
                        "DEP": {"IN": ["attr", "appos"]},
                        "LOWER": {"NOT_IN": ["support", "need"]},
                    },
                ),
                _node("trigger", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "Beats are a suite of lightweight shippers for Elasticsearch and Logstash"
                _trigger({"LOWER": "for", "DEP": "prep"}),
                _node("trigger", "<", "kind", {"POS": "NOUN", "DEP": "pobj"}),
                _node("kind", "<", "of", _prep(["of"])),
                _node(
                    "of",
                    "<",
                    "group",
                    {"DEP": {"IN": ["attr", "appos"]}, "LOWER": {"IN": sorted(GROUP_NOUNS)}},
                ),
                _node("trigger", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "an operating system developed by Apple for the Apple TV"
                _trigger({**_any(MADE_FOR_VERBS), "TAG": "VBN"}),
                _node("trigger", ">", "prep", _prep(["for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "an operating system ... for use on Amazon EC2", "for use with Kubernetes"
                _trigger({"LOWER": "use", "DEP": "pobj"}),
                _node("trigger", "<", "for", _prep(["for"])),
                _node("trigger", ">", "prep", _prep(["on", "with"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "Firefox is available for Windows, macOS, ...", "available on Linux"
                _trigger({"LOWER": "available", "DEP": {"IN": ["acomp", "amod", "oprd"]}}),
                _node("trigger", ">", "prep", _prep(["for", "on"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "certified": (
        "RELATED_TO",
        [
            [  # "Temurin is certified using the Oracle Java Compatibility Kit (JCK)"
                _trigger({"LOWER": "certified", "TAG": "VBN"}),
                _node(
                    "trigger", ">", "using", {"LOWER": "using", "DEP": {"IN": ["xcomp", "advcl"]}}
                ),
                _node("using", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "Temurin releases must also pass the AQAvit quality verification suite"
                _trigger({"LOWER": {"IN": ["pass", "passes", "passed"]}, "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj", "LOWER": {"IN": ["suite", "kit"]}}),
            ],
        ],
    ),
    "successor": (
        "RELATED_TO",
        [
            [  # "Eclipse Adoptium is the successor of AdoptOpenJDK", "the replacement for Y"
                _trigger(
                    {
                        **_any(SUCCESSOR_NOUNS),
                        "DEP": {"IN": ["attr", "appos", "pobj", "dobj", "oprd"]},
                    }
                ),
                _node("trigger", ">", "prep", _prep(["of", "to", "for"])),
                _node("prep", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "UEFI replaces the legacy BIOS", "Microsoft Edge can replace Internet Explorer"
                _trigger({**_any(REPLACE), "POS": "VERB"}),
                _node("trigger", ">", "tgt", {"DEP": "dobj"}),
            ],
            [  # "Debian was succeeded by Ubuntu", "... was replaced by Y"
                _trigger({**_any(SUCCEEDED), "TAG": "VBN"}),
                _node("trigger", ">", "by", {"DEP": "agent", "LOWER": "by"}),
                _node("by", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "line_of": (
        "RELATED_TO",
        [
            [  # "Pixel is Google's line of Android phones": devices named after Y
                _trigger({"LOWER": {"IN": ["line", "series"]}, "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "prep", _prep(["of"])),
                _node("prep", ">", "tgt", {"DEP": "pobj", "LOWER": {"IN": sorted(DEVICE_NOUNS)}}),
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
                _trigger({**_any(MAKER_NOUNS), "DEP": {"IN": ["attr", "appos"]}}),
                _node("trigger", ">", "by", _prep(["by", "from"])),
                _node("by", ">", "tgt", {"DEP": "pobj"}),
            ],
            [  # "the Google Docs Editors suite offered by Google"
                _trigger({"LOWER": {"IN": ["offered", "provided"]}, "DEP": "acl"}),
                _node("trigger", "<", "what", _any(MAKER_NOUNS)),
                _node("trigger", ">", "by", {"DEP": "agent", "LOWER": "by"}),
                _node("by", ">", "tgt", {"DEP": "pobj"}),
            ],
        ],
    ),
    "made_from": (
        "PRODUCES",
        [
            [  # "a fork of the KHTML and KJS libraries from KDE": a name from V is V's
                _trigger({"LOWER": "from", "DEP": "prep"}),
                _node("trigger", "<", "src", {"POS": "PROPN"}),
                _node("trigger", ">", "tgt", {"DEP": "pobj", "POS": "PROPN"}),
            ]
        ],
    ),
    "made_at": (
        "PRODUCES",
        [
            [  # "a platform originally created at Yahoo!", "Go was created at Google"
                _trigger({**_any(MADE_AT), "TAG": "VBN"}),
                _node("trigger", ">", "at", _prep(["at"])),
                _node("at", ">", "tgt", {"DEP": "pobj"}),
            ]
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
            [  # "X is a CNCF project", "a VMware product"
                _trigger(
                    {
                        "LOWER": {"IN": ["project", "subproject", "product"]},
                        "DEP": {"IN": ["attr", "appos"]},
                    }
                ),
                _node("trigger", ">", "tgt", {"DEP": {"IN": ["compound", "nmod"]}}),
            ],
        ],
    ),
    "poss": (
        "PRODUCES",
        [
            [  # the possessive marker anchors it: a rare word, where a proper noun is not
                # "JetBrains' IntelliJ IDEA": a name ending in "s" takes the mark alone
                _trigger({"LOWER": {"IN": ["'s", "’s", "'", "’"]}, "DEP": "case"}),
                _node("trigger", "<", "tgt", {"DEP": "poss", "POS": "PROPN"}),
                _node("tgt", "<", "owned", {"POS": {"IN": ["PROPN", "NOUN"]}}),
            ],
            [  # "its Safari web browser": the possessor is the organisation before it
                _trigger({"LOWER": {"IN": ["its", "their"]}, "DEP": "poss"}),
                _node("trigger", "<", "owned", {"POS": {"IN": ["PROPN", "NOUN"]}}),
            ],
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
def matcher_for(vocab: Vocab, rules: frozenset[str]) -> DependencyMatcher:
    """One matcher for the patterns of ``rules``, each under its own key (``rule#k``), so
    a match says which pattern's nodes its tokens are."""
    matcher = DependencyMatcher(vocab, validate=True)
    for name in sorted(rules):
        for k, pattern in enumerate(PATTERNS[name][1]):
            matcher.add(f"{name}#{k}", [pattern])
    return matcher


def _trigger_words(patterns: list[list[dict[str, object]]]) -> frozenset[str]:
    """The words a rule's patterns anchor on (their first node's ``LOWER``, or its
    ``ORTH`` when only the word in lower case anchors it)."""
    words: set[str] = set()
    for pattern in patterns:
        attrs = pattern[0]["RIGHT_ATTRS"]
        lower = attrs.get("LOWER", attrs.get("ORTH")) if isinstance(attrs, dict) else None
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
