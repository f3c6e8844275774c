"""The dependency patterns of product notes (real spaCy model): each rule's shape,
coordination, appositives, passives, the note's subject for "It", the types a
product slot gives, and bad input."""

from __future__ import annotations

import time

import pytest

from extraction.models import NAMED_KIND_OWNED, ExtractionContext
from extraction.nlp.extractor import Extractor, shared_nlp
from extraction.nlp.pattern_rules import PATTERNS
from extraction.nlp.relation_patterns import find_pattern_relations
from extraction.nlp.relation_rules import CONFIDENCE

PRODUCTS = [
    *["Deno", "V8", "Rust", "Tokio", "Node.js", "Kubernetes", "Drupal", "Terraform"],
    *["OpenTofu", "KEDA", "Prometheus", "Minecraft", "XenServer", "XCP-ng", "Xen"],
    *["ESLint", "Vue", "Keycloak", "Electron", "Chromium", "OpenSearch", "Elasticsearch"],
    *["etcd", "Symfony", "PrestaShop", "Clojure", "JVM", "Angular", "Ubuntu", "Debian"],
    *["Gatekeeper", "Backdrop CMS", "Argo CD", "Clear Linux", "Linux Mint"],
    "Amazon OpenSearch Service",
    *["Express.js", "Vuetify", "Apache Grails", "Apache Groovy"],
    *["Oracle Solaris", "Unix", "Photon OS", "Linux", "ROS 2", "Oracle Linux", "RHEL"],
    *["Xcode", "macOS", "tvOS", "Apple TV", "abap2UI5", "JavaScript"],
    *["Spring Cloud", "Spring Boot", "Swing", "Java SDK", "Flux"],
    *["VMware Cloud Foundation", "vSphere", "NSX", "vSAN"],
    *["Salt", "SUSE Manager", "OpenID Connect", "JSON", "Atom"],
    *["Amazon DocumentDB", "MongoDB", "Mastodon", "ActivityPub", "WebFinger"],
    *["MySQL", "MariaDB", "Avalonia", "Windows", "SQL", "Oracle Database", "F#", ".NET"],
    *["WebKit", "Firefox", "Android", "iOS", "ChromeOS", "Oracle JDK", "Docker"],
    *["Beats", "Logstash", "Handlebars", "Mustache", "WebAssembly", "Chrome", "Opera"],
]
MAKERS = [
    "Netflix",
    *["Mojang", "Citrix", "HeroDevs", "TuxCare", "Tidelift", "GitHub", "Intel", "Microsoft"],
    "Linux Foundation",
    "Cloud Native Computing Foundation",
    "Red Hat",
    "Apple",
]
SEEDS = (
    *((name, "PRODUCT") for name in PRODUCTS),
    *((name, "ORG") for name in MAKERS),
    ("Cheng Zhao", "PERSON"),
)


@pytest.fixture(scope="module")
def extractor() -> Extractor:
    return Extractor(nlp=shared_nlp())


def _found(ex: Extractor, text: str, subject: str | None = None) -> set[tuple[str, str, str, str]]:
    ctx = ExtractionContext(known_entities=SEEDS, subject=subject)
    return {
        (r.source, r.type, r.target, r.method)
        for r in ex.extract(text, ctx).relations
        if r.method.startswith("pattern:")
    }


def _typed(ex: Extractor, text: str, subject: str | None = None) -> set[tuple[str, str, str]]:
    return {(s, t, o) for s, t, o, _ in _found(ex, text, subject)}


def _typed_in(
    ex: Extractor, text: str, ctx: ExtractionContext, *, patterns: bool = False
) -> set[tuple[str, str, str]]:
    """(source, type, target) of the relations found in ``text`` with ``ctx``'s seeds; with
    ``patterns``, only those the dependency patterns found."""
    return {
        (r.source, r.type, r.target)
        for r in ex.extract(text, ctx).relations
        if not patterns or r.method.startswith("pattern:")
    }


@pytest.mark.parametrize(
    ("text", "subject", "expected", "rule"),
    [
        # BASED_ON
        ("Backdrop CMS is a fork of Drupal.", None, ("Backdrop CMS", "Drupal"), "base_noun"),
        ("XCP-ng is a hypervisor based on Xen.", None, ("XCP-ng", "Xen"), "based_on"),
        (
            "WebKit's HTML and JavaScript engine started as a fork of the KHTML and KJS"
            " libraries from KDE.",
            None,
            ("WebKit", "KJS"),
            "base_noun",
        ),
        (
            "F# is a cross-platform, functional programming language for .NET.",
            None,
            ("F#", ".NET"),
            "for_noun",
        ),
        ("It builds on top of Symfony.", "PrestaShop", ("PrestaShop", "Symfony"), "based_on"),
        (
            "Argo CD is a declarative continuous delivery tool for Kubernetes.",
            None,
            ("Argo CD", "Kubernetes"),
            "for_noun",
        ),
        (
            "Spring Boot is a coding and configuration model for Java applications.",
            None,
            ("Spring Boot", "Java"),
            "for_noun",
        ),
        ("KEDA is a Kubernetes-based event autoscaler.", None, ("KEDA", "Kubernetes"), "y_based"),
        (
            "By embedding Chromium into its binary, Electron allows one codebase.",
            None,
            ("Electron", "Chromium"),
            "embeds",
        ),
        (
            "It is used as the backing store by Kubernetes.",
            "etcd",
            ("Kubernetes", "etcd"),
            "uses_as",
        ),
        (
            "It uses a custom build of Chromium for rendering.",
            "Electron",
            ("Electron", "Chromium"),
            "uses_as",
        ),
        (
            "Swing is a toolkit to build desktop applications with JavaScript.",
            None,
            ("Swing", "JavaScript"),
            "build_with",
        ),
        (  # what the developers do with it is the subject's
            "It allows developers to build Android and iOS apps using Vue.",
            "Vuetify",
            ("Vuetify", "Vue"),
            "build_with",
        ),
        (
            "LIKO-12 is an open source fantasy computer made using Vue.",
            None,
            ("LIKO-12", "Vue"),
            "build_with",
        ),
        (
            "Meteor is an isomorphic web framework written using Node.js.",
            None,
            ("Meteor", "Node.js"),
            "build_with",
        ),
        (
            "jQuery UI is a collection of GUI widgets implemented with jQuery.",
            None,
            ("jQuery UI", "jQuery"),
            "build_with",
        ),
        ("Clear Linux was derived from Ubuntu.", None, ("Clear Linux", "Ubuntu"), "derived"),
        (  # "open source" read as a noun, the server in apposition to it
            "It is based on the open source Keycloak application server.",
            "Argo CD",
            ("Argo CD", "Keycloak"),
            "based_on",
        ),
        (
            "Keycloak extends Kubernetes with custom resources.",
            None,
            ("Keycloak", "Kubernetes"),
            "extends",
        ),
        ("It is an extension of Angular.", "Vue", ("Vue", "Angular"), "extends"),
        (
            "Express.js is a minimal and flexible Node.js web application framework.",
            "Express",
            ("Express.js", "Node.js"),
            "kind_of",
        ),
        ("Vuetify is an open-source Vue Component Framework.", None, ("Vuetify", "Vue"), "kind_of"),
        (
            "Oracle Solaris is a proprietary Unix operating system.",
            None,
            ("Oracle Solaris", "Unix"),
            "kind_of",
        ),
        (
            "Photon OS is an open source Linux container host for cloud-native applications.",
            None,
            ("Photon OS", "Linux"),
            "kind_of",
        ),
        # RELATED_TO
        ("Argo CD is part of the Kubernetes platform.", None, ("Argo CD", "Kubernetes"), "part_of"),
        (
            "Argo CD is a suite consisting of Prometheus, Keycloak, and etcd.",
            None,
            ("Argo CD", "Keycloak"),
            "part_of",
        ),
        (
            "Argo CD also includes tools such as Keycloak and Logstash.",
            None,
            ("Argo CD", "Logstash"),
            "part_of",
        ),
        (
            "It integrates seamlessly with Prometheus.",
            "Argo CD",
            ("Argo CD", "Prometheus"),
            "works_with",
        ),
        (
            "Amazon DocumentDB is a MongoDB-compatible database service.",
            None,
            ("Amazon DocumentDB", "MongoDB"),
            "works_with",
        ),
        (
            "It implements the ActivityPub and WebFinger protocols.",
            "Mastodon",
            ("Mastodon", "WebFinger"),
            "works_with",
        ),
        (
            "Vue is a framework inspired by Angular.",
            None,
            ("Vue", "Angular"),
            "works_with",
        ),
        (
            "Xcode is an integrated development environment for macOS.",
            None,
            ("Xcode", "macOS"),
            "made_for",
        ),
        (
            "tvOS is an operating system developed by Apple for the Apple TV.",
            None,
            ("tvOS", "Apple TV"),
            "made_for",
        ),
        (
            "Beats are a suite of lightweight shippers for Elasticsearch and Logstash.",
            None,
            ("Beats", "Logstash"),
            "made_for",
        ),
        (
            "Handlebars is largely compatible with Mustache templates.",
            None,
            ("Handlebars", "Mustache"),
            "works_with",
        ),
        (
            "Avalonia supports Windows, Linux and macOS.",
            None,
            ("Avalonia", "Linux"),
            "supports_product",
        ),
        (
            "It is written in the PHP programming language with support for the MySQL or"
            " MariaDB database management system.",
            "PrestaShop",
            ("PrestaShop", "MariaDB"),
            "supports_product",
        ),
        # PRODUCES
        ("It was developed by Intel.", "Clear Linux", ("Intel", "Clear Linux"), "made_by"),
        (
            "Published by Mojang, Minecraft is a sandbox game.",
            None,
            ("Mojang", "Minecraft"),
            "made_by",
        ),
        (
            "Prometheus is part of the Cloud Native Computing Foundation.",
            None,
            ("Cloud Native Computing Foundation", "Prometheus"),
            "project_of",
        ),
        ("Argo CD is a Red Hat product.", None, ("Red Hat", "Argo CD"), "project_of"),
        ("Docker is a platform owned by Netflix.", None, ("Netflix", "Docker"), "made_by"),
        ("It is standardized by Microsoft.", "JSON", ("Microsoft", "JSON"), "made_by"),
        (
            "Unix is an operating system originally developed at Intel in the 1960s.",
            None,
            ("Intel", "Unix"),
            "made_at",
        ),
        (
            "Electron provides a set of APIs to automate Chromium, Firefox, and WebKit browsers.",
            None,
            ("Electron", "Firefox"),
            "acts_on",
        ),
        # ACQUIRED
        (
            "XCP-ng is a fork of XenServer, which was acquired by Citrix in 2013.",
            None,
            ("Citrix", "XenServer"),
            "acquired",
        ),
    ],
)
def test_each_rule_reads_its_shape(
    extractor: Extractor,
    text: str,
    subject: str | None,
    expected: tuple[str, str],
    rule: str,
) -> None:
    found = _found(extractor, text, subject)
    rtype = PATTERNS[rule][0]
    assert (expected[0], rtype, expected[1], f"pattern:{rule}") in found, found


def test_a_definition_s_source_is_no_maker(extractor: Extractor) -> None:
    text = "As defined by Microsoft, Docker is a platform."
    assert not _typed(extractor, text), text


def test_what_a_product_includes_is_named_not_a_name_of_its_own_plain_noun(
    extractor: Extractor,
) -> None:
    found = _typed(extractor, "Argo CD includes the Keycloak framework and etcd.")
    assert ("Argo CD", "RELATED_TO", "etcd") in found, found
    assert ("Argo CD", "RELATED_TO", "Keycloak") not in found, found


def test_a_model_for_a_platform_is_one_of_programming_not_a_person(extractor: Extractor) -> None:
    several = "Docker is a parallel programming model for Vue, Angular, and JavaScript."
    assert not [f for f in _typed(extractor, several) if f[1] == "BASED_ON"]
    text = "Kate Moss is a fashion model for Vue."
    result = extractor.extract(text, ExtractionContext(known_entities=SEEDS))
    assert not [r for r in result.relations if r.type == "BASED_ON"], result.relations
    assert ("Kate Moss", "PERSON") in {(e.text, e.label) for e in result.entities}


def test_a_sponsor_is_no_maker(extractor: Extractor) -> None:
    text = "Docker is developed by the Docker Project and sponsored by Microsoft."
    found = _typed(extractor, text)
    assert ("Microsoft", "PRODUCES", "Docker") not in found, found
    assert ("Microsoft", "PRODUCES", "Docker") in _typed(
        extractor, text.replace("sponsor", "design")
    )


def test_what_a_client_or_server_is_named_after_is_what_it_speaks(extractor: Extractor) -> None:
    found = _found(extractor, "Docker is a Xen JSON client.")
    # every name before the noun (the graph keeps protocols and formats only)
    assert {("Docker", "RELATED_TO", n, "pattern:speaks") for n in ("Xen", "JSON")} <= found
    # none where another rule relates the pair ("a Node.js web framework" is kind_of's)
    found = _found(extractor, "Docker is a Node.js web framework.")
    assert {f[3] for f in found} == {"pattern:kind_of"}


def test_a_name_the_parser_gave_no_subject_s_role_is_the_copula_s_subject(
    extractor: Extractor,
) -> None:
    # the small model takes "AwesomeWM" for a symbol hanging from "is"
    text = "AwesomeWM is a dynamic window manager for the X Window System."
    ctx = ExtractionContext(
        known_entities=(("AwesomeWM", "PRODUCT"), ("X Window System", "PRODUCT"))
    )
    found = {(r.source, r.type, r.target) for r in extractor.extract(text, ctx).relations}
    assert ("AwesomeWM", "BASED_ON", "X Window System") in found, found
    # a package manager for a language serves it: related, not built on it
    found = _found(extractor, "Deno is a package manager for JavaScript.")
    assert ("Deno", "RELATED_TO", "JavaScript", "pattern:made_for") in found, found
    assert not [f for f in found if f[1] == "BASED_ON"], found


def test_the_code_as_an_object_is_the_note_s_subject(extractor: Extractor) -> None:
    text = "Microsoft uses the code to make its Chrome web browser. Opera is based on the code."
    found = _typed(extractor, text, "Chromium")
    assert {("Chrome", "BASED_ON", "Chromium"), ("Opera", "BASED_ON", "Chromium")} <= found
    # no subject, no base; a word for the product with a name in front is that name
    assert not [f for f in _typed(extractor, text) if f[1] == "BASED_ON"]
    found = _typed(extractor, "Opera is based on the Chromium code.", "Electron")
    assert ("Opera", "BASED_ON", "Electron") not in found, found


def test_what_an_engine_is_named_after_is_what_it_runs(extractor: Extractor) -> None:
    text = "V8 is Google's open source high-performance JavaScript and WebAssembly engine."
    found = _found(extractor, text)
    # each name of the list (the graph keeps languages, protocols and formats only)
    runs = {("V8", "RELATED_TO", n, "pattern:engine_of") for n in ("JavaScript", "WebAssembly")}
    assert runs <= found, found
    # an engine the sentence only mentions is not what the subject is
    found = _found(extractor, "Docker was first built on a JavaScript engine.")
    assert not [f for f in found if f[3] == "pattern:engine_of"], found


def test_made_at_a_time_or_a_place_names_no_maker(extractor: Extractor) -> None:
    found = _typed(extractor, "Vue was built at scale. Vue was developed at Helsinki in 2014.")
    assert not [f for f in found if f[1] == "PRODUCES"], found
    # an organisation there is its maker
    found = _typed(extractor, "Vue was developed at Helsinki University.")
    assert ("Helsinki University", "PRODUCES", "Vue") in found


def test_an_operating_system_for_a_device_is_related_to_it_not_built_on_it(
    extractor: Extractor,
) -> None:
    found = _typed(extractor, "It is the operating system for the Xen server.", "Clear Linux")
    assert ("Clear Linux", "RELATED_TO", "Xen") in found
    assert ("Clear Linux", "BASED_ON", "Xen") not in found
    # made for a company's devices is not related to the company
    owner = _typed(extractor, "It is the operating system for Apple's server platforms.", "macOS")
    assert not [r for r in owner if "Apple" in r and r[1] == "RELATED_TO"], owner
    # any other kind of thing for a product is built on it
    assert ("Argo CD", "BASED_ON", "Kubernetes") in _typed(
        extractor, "Argo CD is a delivery tool for Kubernetes."
    )


def test_part_of_an_organisation_is_who_makes_it_not_a_related_product(
    extractor: Extractor,
) -> None:
    found = _typed(extractor, "Prometheus is part of the Cloud Native Computing Foundation.")
    assert ("Cloud Native Computing Foundation", "PRODUCES", "Prometheus") in found
    assert not any(t == "RELATED_TO" for _, t, _ in found)


def test_related_products_from_a_purpose_a_release_word_a_package_and_a_suite(
    extractor: Extractor,
) -> None:
    """ "to integrate with Y" after the main clause is the subject's purpose; "X release
    trains" do what X does; "is packaged with Y"; "a suite of technologies consisting of
    A, B and C"."""
    flux = (
        "Flux is built from the ground up to use the API extension system, and to "
        "integrate with Prometheus and other core components."
    )
    assert ("Flux", "RELATED_TO", "Prometheus") in _typed(extractor, flux, "Flux")
    trains = "Spring Cloud release trains are designed to work with versions of Spring Boot."
    assert ("Spring Cloud", "RELATED_TO", "Spring Boot") in _typed(
        extractor, trains, "Spring Cloud"
    )
    swing = "Swing is a user-interface toolkit and is packaged with the Java SDK."
    assert ("Swing", "RELATED_TO", "Java SDK") in _typed(extractor, swing, "Swing")
    suite = (
        "VMware Cloud Foundation is a suite of software-defined data center technologies "
        "consisting of vSphere, NSX, and vSAN."
    )
    found = _typed(extractor, suite, "VMware Cloud Foundation")
    for part in ("vSphere", "NSX", "vSAN"):
        assert ("VMware Cloud Foundation", "RELATED_TO", part) in found, found


def test_a_company_s_support_for_a_product_is_no_product_supporting_it(
    extractor: Extractor,
) -> None:
    """ "X supports Y" relates two products; a company that supports a product sells
    support (the support rule)."""
    found = _found(extractor, "Red Hat provides support for Keycloak and supports Vue.")
    assert not any(r == "pattern:supports_product" for *_, r in found)


def test_a_guessed_name_before_a_declared_one_in_brackets_is_that_one(
    extractor: Extractor,
) -> None:
    """ "the Structured Query Language (SQL)": the model's guess (an organisation) is
    the declared product's long name, so a slot holding it names SQL and the long name
    is typed as SQL is."""
    text = "Oracle Database uses the Structured Query Language (SQL) for data manipulation."
    result = extractor.extract(text, ExtractionContext(known_entities=SEEDS))
    guesses = {(e.text, e.label_) for e in extractor.nlp(text).ents}
    assert ("the Structured Query Language", "ORG") in guesses
    related = {(r.source, r.type, r.target) for r in result.relations}
    assert ("Oracle Database", "RELATED_TO", "SQL") in related
    labels = {e.text: e.label for e in result.entities}
    assert labels["the Structured Query Language"] == "PRODUCT"


def test_a_product_that_uses_another_is_related_to_it(extractor: Extractor) -> None:
    """ "X uses Y" (a finite verb) relates two products; "uses Y as its engine" stays
    BASED_ON alone; a company using a product and "apps using Y" are no such fact."""
    salt = "It uses the Salt configuration management system to manage clients."
    assert ("SUSE Manager", "RELATED_TO", "Salt", "pattern:uses") in _found(
        extractor, salt, "SUSE Manager"
    )
    oidc = "It uses JSON for communication with the identity provider."
    assert ("OpenID Connect", "RELATED_TO", "JSON") in _typed(extractor, oidc, "OpenID Connect")
    engine = "Atom uses Electron as its engine."
    found = _typed(extractor, engine)
    assert ("Atom", "BASED_ON", "Electron") in found
    assert ("Atom", "RELATED_TO", "Electron") not in found
    assert not _typed(extractor, "Netflix uses Kubernetes for its services.")
    apps = "Atom lets developers build desktop apps using JavaScript."
    assert not any(r == "pattern:uses" for *_, r in _found(extractor, apps, "Atom"))


def test_a_name_closing_the_sentence_after_a_comma_is_in_apposition_to_the_noun_before(
    extractor: Extractor,
) -> None:
    """ "designed for Apple's spatial computing device, the Apple Vision Pro.": the parser
    hangs the name on the main verb; it still names the device (Apple's product, what
    the operating system is made for). A name with more after it is not closing."""
    text = (
        "tvOS is an operating system specifically designed for Apple's spatial computing "
        "device, the Apple TV."
    )
    found = _typed(extractor, text)
    assert ("Apple", "PRODUCES", "Apple TV") in found
    assert ("tvOS", "RELATED_TO", "Apple TV") in found
    assert not [f for f in found if f[1] == "BASED_ON"]  # made for a device, not built on it
    more = (
        "tvOS is an operating system specifically designed for Apple's spatial computing "
        "device, the Apple TV and its remote."
    )
    assert ("Apple", "PRODUCES", "Apple TV") not in _typed(extractor, more)


def test_an_indefinite_phrase_after_a_comma_describes_the_name_before_it(
    extractor: Extractor,
) -> None:
    """ "X is part of Y, an open source toolkit by V": the parser makes the toolkit a
    second complement of "is"; V made Y, not X."""
    text = "Gatekeeper is part of the Argo CD, an open source toolkit by Red Hat for clusters."
    found = _typed(extractor, text)
    assert ("Red Hat", "PRODUCES", "Argo CD") in found
    assert ("Red Hat", "PRODUCES", "Gatekeeper") not in found


def test_what_a_product_builds_things_with_is_one_base_not_a_list_or_a_mere_use(
    extractor: Extractor,
) -> None:
    """ "a toolkit to build applications with Y" is one base; a list of tools ("using
    JavaScript, HTML, and CSS") is what things are written with; the developers' own
    doing, not enabled by the subject, names no base; nor does a thing built that is
    no application ("build a cluster with Kubernetes")."""
    listed = "Electron is a framework for building desktop apps using JavaScript, Vue and Rust."
    assert not [f for f in _found(extractor, listed) if f[3] == "pattern:build_with"]
    own = "Developers build apps with Vue at Netflix."
    assert not _found(extractor, own)
    cluster = "Terraform is a tool to build a cluster with Kubernetes."
    assert not [f for f in _found(extractor, cluster) if f[3] == "pattern:build_with"]
    examples = "VS Code is built using web technologies such as TypeScript and Electron."
    assert not [f for f in _found(extractor, examples) if f[3] == "pattern:build_with"]
    both = "Visual Studio is made with C# and Rust."
    assert not [f for f in _found(extractor, both) if f[3] == "pattern:build_with"]


def test_a_possessive_owns_its_name_the_names_beside_it_and_those_of_its_plain_noun(
    extractor: Extractor,
) -> None:
    """ "V's X" is V's product: the name owned, each name coordinated with it, the name
    in apposition to a plain noun owned; a name only modifying that noun is what the
    thing is for ("Google's JavaScript engine"), and a possessive owning no name is
    nothing."""
    pairs = {
        "Apple's Xcode and tvOS are popular with developers.": {"Xcode", "tvOS"},
        "It runs on Apple's streaming device, the Apple TV.": {"Apple TV"},
        "Intel's Clear Linux is optimized for its chips.": {"Clear Linux"},
        "Developers like Apple's innovation engine.": set(),
        # the mark alone after a name ending in "s"
        "It is built on HeroDevs' Vuetify framework.": {"Vuetify"},
    }
    for text, owned in pairs.items():
        found = _found(extractor, text)
        assert {t for s, r, t, m in found if m == "pattern:poss"} == owned, text
        assert all(
            s in ("Apple", "Intel", "HeroDevs") for s, r, t, m in found if m == "pattern:poss"
        )
    assert not _found(extractor, "Red Hat's customers include Netflix.")
    assert not _found(extractor, "Its release follows Microsoft's.")


def _poss_details(ex: Extractor, text: str) -> set[tuple[str, str, str]]:
    ctx = ExtractionContext(known_entities=SEEDS)
    return {
        (r.source, r.target, r.detail)
        for r in ex.extract(text, ctx).relations
        if r.method == "pattern:poss"
    }


def test_a_possessive_owns_the_name_of_a_kind_of_thing_and_its_is_the_one_organisation_before_it(
    extractor: Extractor,
) -> None:
    """ "Apple's Mac computers": a name in front of a word for a kind of product or
    device is owned, marked so (the graph drops a language there: "Apple's JavaScript
    engine" is its engine for JavaScript), even a proper noun the model missed or typed
    otherwise. "its" owns as the one organisation named before it in its sentence
    does; with two before it, or none, nothing."""
    kind = NAMED_KIND_OWNED
    assert _poss_details(extractor, "macOS runs on Apple's Mac computers.") == {
        ("Apple", "Mac", kind)
    }
    assert _poss_details(extractor, "Developers use Apple's JavaScript engine to build apps.") == {
        ("Apple", "JavaScript", kind)
    }
    # the name itself owned says no more than "V's X"
    assert _poss_details(extractor, "Apple's Xcode is popular.") == {("Apple", "Xcode", "")}
    webkit = (
        "WebKit is a browser engine developed by Apple and primarily used in its Safari web "
        "browser, as well as all iOS web browsers."
    )
    assert ("Apple", "Safari", kind) in _poss_details(extractor, webkit)
    safari = next(
        r
        for r in extractor.extract(webkit, ExtractionContext(known_entities=SEEDS)).relations
        if r.method == "pattern:poss"
    )
    assert safari.target_label == "PRODUCT"
    # "their" as "its": "visionOS is Apple's system, included with their headset, the
    # Apple Vision Pro"
    their = "Xcode is Apple's tool, included with their laptops, the Swift MacBook."
    assert ("Apple", "Swift MacBook") in {(s, t) for s, t, _ in _poss_details(extractor, their)}
    assert not _poss_details(extractor, "Red Hat sold Netflix its Xcode license.")  # two owners
    assert not _poss_details(extractor, "Xcode ships its Swift compiler.")  # no organisation


def test_a_policy_or_the_users_of_the_subject_do_not_stand_for_it(extractor: Extractor) -> None:
    """Only a word for the subject's releases stands for it: its support policy is
    based on a policy, not the product; its apps run on Linux, not the store."""
    policy = "The current Spring Boot support policy is based on the Spring Cloud policy."
    assert not _typed(extractor, policy, "Spring Boot")
    apps = "It is powered by Flux, allowing Swing apps to run on almost any Linux distribution."
    assert ("Swing", "BASED_ON", "Linux") not in _typed(extractor, apps, "Swing")


def test_coordinated_bases_are_one_relationship_each(extractor: Extractor) -> None:
    assert _typed(extractor, "It's built on V8, Rust, and Tokio.", "Deno") >= {
        ("Deno", "BASED_ON", "V8"),
        ("Deno", "BASED_ON", "Rust"),
        ("Deno", "BASED_ON", "Tokio"),
    }


def test_an_appositive_and_a_relative_clause_name_their_own_subject(extractor: Extractor) -> None:
    found = _typed(
        extractor, "Amazon OpenSearch Service is based on OpenSearch, a fork of Elasticsearch."
    )
    assert ("Amazon OpenSearch Service", "BASED_ON", "OpenSearch") in found
    assert ("OpenSearch", "BASED_ON", "Elasticsearch") in found
    assert ("Amazon OpenSearch Service", "BASED_ON", "Elasticsearch") not in found
    managed = _typed(
        extractor,
        "OpenTofu is a fork of Terraform that is open-source and managed by the Linux Foundation.",
    )
    assert ("Linux Foundation", "PRODUCES", "OpenTofu") in managed
    assert ("OpenTofu", "BASED_ON", "Terraform") in managed


def test_an_appositive_of_what_the_subject_is_describes_the_subject(extractor: Extractor) -> None:
    found = _typed(extractor, "Oracle Linux is an Open Source, free RHEL derivative.")
    assert ("Oracle Linux", "BASED_ON", "RHEL") in found
    # a name written with capitals is no kind of system
    assert not _typed(extractor, "ROS 2 (Robot Operating System) provides libraries.")


def test_made_for_a_product_is_said_only_where_no_other_rule_says_more(
    extractor: Extractor,
) -> None:
    # "a controller for Kubernetes" is built on it, not also related to it
    assert _typed(extractor, "Argo CD is a controller for Kubernetes.") == {
        ("Argo CD", "BASED_ON", "Kubernetes")
    }
    # no need for it, support for it, made for a company: nothing related
    assert not _typed(extractor, "abap2UI5 is a framework, no need for JavaScript!")
    sold = _typed(extractor, "Argo CD is commercial support for Vue.")
    assert not any(t == "RELATED_TO" for _, t, _ in sold)
    assert not _typed(extractor, "Argo CD is an app for Red Hat.")


def test_what_a_product_is_available_for_or_on_is_related_to_it(extractor: Extractor) -> None:
    """ "available for / on" a list of platforms: one relation each, the list the
    parser hung as an apposition included, and a plain noun's list ("platforms,
    including ..."); the subject may be its builds. Not a company ("on GitHub"), a
    price or a download."""
    platforms = {"Windows", "macOS", "Android", "iOS", "Linux", "ChromeOS"}
    text = "Firefox is available for Windows, macOS, Android, iOS, Linux, and ChromeOS."
    assert _typed(extractor, text) == {("Firefox", "RELATED_TO", p) for p in platforms}
    text = "It is available on Linux, Windows, and Docker."
    assert _typed(extractor, text, "Firefox") == {
        ("Firefox", "RELATED_TO", p) for p in ("Linux", "Windows", "Docker")
    }
    text = "Builds of Oracle JDK are available for multiple platforms, including Windows and Linux."
    assert _typed(extractor, text, "Oracle JDK") == {
        ("Oracle JDK", "RELATED_TO", p) for p in ("Windows", "Linux")
    }
    for text in (
        "The source code of Firefox is available on GitHub.",
        "Firefox is available for free.",
        "Firefox is available for download.",
    ):
        assert not _typed(extractor, text, "Firefox"), text


def test_passive_makers_each_make_the_subject(extractor: Extractor) -> None:
    found = _typed(extractor, "Electron is developed by GitHub and created by Cheng Zhao.")
    assert {("GitHub", "PRODUCES", "Electron"), ("Cheng Zhao", "PRODUCES", "Electron")} <= found


def test_it_is_the_note_s_subject_only_when_the_note_has_one(extractor: Extractor) -> None:
    assert ("Intel", "PRODUCES", "Clear Linux") in _typed(
        extractor, "It was developed by Intel.", "Clear Linux"
    )
    assert not _typed(extractor, "It was developed by Intel.")


def test_the_word_for_what_the_subject_is_stands_for_it_alone(extractor: Extractor) -> None:
    assert _typed(extractor, "The game is based on Minecraft.", "Terraform") == {
        ("Terraform", "BASED_ON", "Minecraft")
    }
    assert _typed(extractor, "The project is maintained by GitHub.", "Deno") == {
        ("GitHub", "PRODUCES", "Deno")
    }
    # not without a subject, not with more words, not a part of the product
    assert not _typed(extractor, "The game is based on Minecraft.")
    assert not _typed(extractor, "The new game is based on Minecraft.", "Terraform")
    assert not _typed(extractor, "The kernel is based on Xen.", "Ubuntu")


def test_each_of_the_subject_s_releases_stands_for_it(extractor: Extractor) -> None:
    text = "Each major version is based on a corresponding Debian release."
    assert _typed(extractor, text, "Photon OS") == {("Photon OS", "BASED_ON", "Debian")}
    assert _typed(extractor, "Every release is built on Ubuntu.", "Photon OS") == {
        ("Photon OS", "BASED_ON", "Ubuntu")
    }
    # not without a subject, not a release another name or a name-like word qualifies,
    # not one release
    assert not _typed(extractor, text)
    assert not _typed(extractor, "Each Debian version is based on Linux.", "Photon OS")
    assert not _typed(extractor, "The new version is based on Debian.", "Photon OS")


def test_a_plain_noun_inside_a_plain_noun_is_the_name_in_it(extractor: Extractor) -> None:
    found = _typed(
        extractor, "Ubuntu is a system based on a modified version of the Debian kernel."
    )
    assert ("Ubuntu", "BASED_ON", "Debian") in found


def test_a_base_noun_the_model_misattached_is_still_read(extractor: Extractor) -> None:
    # a second complement ("open source, community-driven fork"), the shared corpus's words
    conj = (
        "OpenBao is an open source, community-driven fork of Hashicorp Vault managed by "
        "the Linux Foundation."
    )
    found = _typed_in(
        extractor,
        conj,
        ExtractionContext(known_entities=(("OpenBao", "PRODUCT"), ("Hashicorp Vault", "PRODUCT"))),
    )
    assert ("OpenBao", "BASED_ON", "Hashicorp Vault") in found
    # a participle read as a verb with its own subject ("with CPE licensed build")
    licensed = (
        "Amazon Corretto is a GPLv2 with CPE licensed build of the Open Java Development "
        "Kit (OpenJDK) with long-term support and patches from Amazon."
    )
    found = _typed_in(
        extractor,
        licensed,
        ExtractionContext(known_entities=(("Amazon Corretto", "PRODUCT"), ("OpenJDK", "PRODUCT"))),
    )
    # ... of the declared name in brackets after the long one the model guessed
    assert ("Amazon Corretto", "BASED_ON", "OpenJDK") in found
    assert not [f for f in found if f[0] == "CPE" and f[1] != "MENTIONED_WITH"]
    # a real verb's object is no base of its subject
    assert not _typed(extractor, "Microsoft has released a build of Ubuntu.")


def test_a_subject_titled_in_lower_case_is_found_capitalised(extractor: Extractor) -> None:
    ctx = ExtractionContext(
        known_entities=(("elasticsearch", "PRODUCT"), ("Apache Lucene", "PRODUCT")),
        subject="elasticsearch",
    )
    text = "Elasticsearch is built on Apache Lucene."
    found = {(r.source, r.type, r.target) for r in extractor.extract(text, ctx).relations}
    assert ("Elasticsearch", "BASED_ON", "Apache Lucene") in found
    # only the note's own subject gets that spelling, not every lower-case seed
    other = ExtractionContext(known_entities=ctx.known_entities, subject="Apache Lucene")
    assert "Elasticsearch" not in {e.text for e in extractor.extract(text, other).entities}


def test_what_only_modifies_a_kind_of_thing_is_not_the_product(extractor: Extractor) -> None:
    # "a PHP framework created by X": X did not make PHP
    found = _typed(extractor, "Laravel is a Symfony framework created by Taylor Otwell.")
    assert not [f for f in found if f[2] == "Symfony" and f[1] == "PRODUCES"]
    # what a product targets is no base ("a service mesh for containers, Kubernetes and
    # VMs"), only related to it
    assert _typed(extractor, "Kuma is a service mesh for containers, Kubernetes and VMs.") == {
        ("Kuma", "RELATED_TO", "Kubernetes")
    }


def test_support_sellers_and_the_product_they_support(extractor: Extractor) -> None:
    found = _found(
        extractor,
        "Commercial support for Node.js is also available through TuxCare's Endless "
        "Lifecycle Support.",
    )
    assert ("TuxCare", "SUPPORTS", "Node.js", "pattern:support") in found
    partners = _typed(
        extractor,
        "Commercial support is available through ESLint's partners, Tidelift and HeroDevs.",
        "ESLint",
    )
    assert {("Tidelift", "SUPPORTS", "ESLint"), ("HeroDevs", "SUPPORTS", "ESLint")} <= partners
    ctx = ExtractionContext(known_entities=SEEDS, subject="Vue")
    nes = [
        r
        for r in extractor.extract(
            "Commercial support for Vue 2.x is available through the HeroDevs Never-Ending "
            "Support initiative.",
            ctx,
        ).relations
        if r.type == "SUPPORTS"
    ]
    assert [(r.source, r.target, r.detail) for r in nes] == [
        ("HeroDevs", "Vue", "HeroDevs Never-Ending Support")
    ]
    # a release phase is no offer
    assert not _typed(extractor, "Ubuntu has long-term support from Canonical.", "Ubuntu")


def test_a_product_slot_types_what_only_the_model_typed(extractor: Extractor) -> None:
    result = extractor.extract(
        "Clojure runs on JVM, JavaScript VMs, and Common Language Runtime.",
        ExtractionContext(known_entities=(("Clojure", "PRODUCT"),), subject="Clojure"),
    )
    types = {e.text: e.label for e in result.entities}
    assert types.get("Common Language Runtime") == "PRODUCT"
    assert types.get("JVM") == "PRODUCT"
    based = {(r.target, r.target_label) for r in result.relations if r.type == "BASED_ON"}
    assert ("Common Language Runtime", "PRODUCT") in based and ("JVM", "PRODUCT") in based


def test_what_a_sentence_denies_places_or_describes_in_passing_is_no_base(
    extractor: Extractor,
) -> None:
    assert not _typed(extractor, "It does not rely on Drupal or any Symfony framework.", "Vue")
    assert not _typed(extractor, "Ubuntu is a London-based software company.")
    assert not _typed(extractor, "Gatekeeper is a proxy for Kubernetes-based media traffic.")
    # an appositive describes the name beside it ...
    assert ("OpenOffice", "BASED_ON", "Drupal") in _typed(
        extractor, "It was forked from OpenOffice, a version of the earlier Drupal.", "Vue"
    )
    # ... none there, no relation (not the subject of the sentence)
    assert not _typed(
        extractor, "It was forked from the old codebase, a version of the earlier Drupal.", "Vue"
    )
    # a participle on a definite "name + kind" is about that name
    made = _typed(extractor, "It continues the Drupal operating system made by Intel.", "Vue")
    assert made == {("Intel", "PRODUCES", "Drupal")}


def test_a_maker_selling_its_own_support_is_no_support_seller(extractor: Extractor) -> None:
    assert not _typed(extractor, "Extended support by Kong Inc. is also available.", "Kong Gateway")
    found = _found(
        extractor,
        "Commercial support for Angular became available through the HeroDevs Never-Ending "
        "Support initiative (NES, formerly XLTS).",
        "Angular",
    )
    assert {(s, t) for s, _, t, _ in found} == {("HeroDevs", "Angular")}


def test_running_on_a_platform_is_its_own_rule(extractor: Extractor) -> None:
    assert ("Clojure", "BASED_ON", "JVM", "pattern:runs_on") in _found(
        extractor, "Clojure runs on JVM.", "Clojure"
    )
    # a product run on a platform is the object's, not the subject's
    run = _typed(extractor, "Gatekeeper is a service used to run Kubernetes on Linux Mint.")
    assert ("Gatekeeper", "BASED_ON", "Linux Mint") not in run


def test_the_evidence_is_the_paragraph_of_the_ends_not_a_heading_before_it(
    extractor: Extractor,
) -> None:
    text = (
        "Versions stay in maintenance for a year.\n\n## Elasticsearch Compatibility\n\n"
        "OpenSearch is a fork of Elasticsearch 7.10 and keeps its APIs."
    )
    rels = extractor.extract(text, ExtractionContext(known_entities=SEEDS)).relations
    based = [r for r in rels if r.type == "BASED_ON"]
    assert [r.sentence for r in based] == [
        "OpenSearch is a fork of Elasticsearch 7.10 and keeps its APIs."
    ]


def test_a_relation_to_itself_is_no_relation(extractor: Extractor) -> None:
    assert not _typed(extractor, "Drupal is based on Drupal.")
    assert not _typed(extractor, "It is a fork of Drupal.", "Drupal")


def test_a_five_thousand_token_sentence_is_no_prose_and_costs_little(extractor: Extractor) -> None:
    body = ", ".join(["Drupal"] * 2500)
    text = f"Backdrop CMS is based on {body}."
    ctx = ExtractionContext(known_entities=SEEDS)
    doc = extractor.nlp(text)
    assert len(doc) > 5000 and len(list(doc.sents)) == 1
    started = time.perf_counter()
    result = extractor._result(doc, ctx)
    assert time.perf_counter() - started < 10  # minutes before (seeds inside a long span)
    assert result.entities and all(0 < r.confidence < 1 for r in result.relations)
    # a sentence that long is a list, not prose: the patterns do not read it
    assert not find_pattern_relations(doc, extractor._mentions(doc, ctx))
    # ... but read the sentences around it
    doc = extractor.nlp(f"Backdrop CMS is a fork of Drupal. {text}")
    found = find_pattern_relations(doc, extractor._mentions(doc, ctx))
    assert [(f.source.canonical, f.type, f.target.canonical) for f in found] == [
        ("Backdrop CMS", "BASED_ON", "Drupal")
    ]


def test_a_note_of_only_a_table_gives_no_pattern_relation(extractor: Extractor) -> None:
    table = "\n".join(
        ["| Version | Based on | Released |", "|---|---|---|"]
        + [f"| {v} | Debian {v} | 2024 |" for v in range(1, 40)]
    )
    result = extractor.extract(table, ExtractionContext(known_entities=SEEDS, subject="Ubuntu"))
    assert all(0 < r.confidence < 1 for r in result.relations)


def test_every_rule_has_a_calibrated_confidence() -> None:
    for rule, (rtype, _) in PATTERNS.items():
        assert (rtype, f"pattern:{rule}", "*", "*") in CONFIDENCE, rule


def test_a_kind_named_after_a_product_yields_to_any_other_rule(extractor: Extractor) -> None:
    # "a <Y> framework" is kind_of's only where no rule says more ("Y-based")
    found = _found(extractor, "Apache Grails is an Apache Groovy-based web application framework.")
    assert ("Apache Grails", "BASED_ON", "Apache Groovy", "pattern:y_based") in found
    assert not any(m == "pattern:kind_of" for *_, m in found)
    # what only modifies a kind of thing ("a web framework for Vue") is for_noun's
    assert not any(
        m == "pattern:kind_of" for *_, m in _found(extractor, "Vuetify is a framework for Vue.")
    )


def test_nothing_is_built_on_a_place_but_a_y_based_place_stays_a_place(
    extractor: Extractor,
) -> None:
    # the model reads "Uyuni" as a place; "based on" a place says nothing, so it is a product
    text = "SUSE Manager is a SUSE product based on the open-source Uyuni project."
    ctx = ExtractionContext(known_entities=(("SUSE Manager", "PRODUCT"), ("SUSE", "ORG")))
    result = extractor.extract(text, ctx)
    based = {(r.source, r.target, r.target_label) for r in result.relations if r.type == "BASED_ON"}
    assert ("SUSE Manager", "Uyuni", "PRODUCT") in based
    assert {e.text: e.label for e in result.entities}.get("Uyuni") == "PRODUCT"
    assert not _typed(extractor, "Ubuntu is a London-based software company.")


def test_makers_listed_after_the_slot_and_a_product_s_part_made_by_them() -> None:
    ex = Extractor(nlp=shared_nlp())
    makers = ("Apple", "Google", "Nokia", "Sony", "KDE")
    seeds = (("WebKit", "PRODUCT"), *((n, "ORG") for n in makers))
    text = (
        "WebKit's HTML and JavaScript engine started as a fork of the KHTML and KJS "
        "libraries from KDE, and has since been further developed by KDE contributors, "
        "Apple, Google, Nokia, Bitstream, BlackBerry, Sony, Igalia, and others."
    )
    found = {
        (r.source, r.type, r.target)
        for r in ex.extract(text, ExtractionContext(known_entities=seeds)).relations
        if r.method == "pattern:made_by"
    }
    # each listed maker made the product whose engine it is (the parser hangs the list
    # on "started", not on "by")
    assert {(n, "PRODUCES", "WebKit") for n in makers[:4]} <= found, found
    # commas that hold anything but names are no list of makers
    text = "WebKit's engine was developed by KDE contributors, with help, and Apple."
    found = {
        (r.source, r.target)
        for r in ex.extract(text, ExtractionContext(known_entities=seeds)).relations
        if r.method == "pattern:made_by"
    }
    assert ("Apple", "WebKit") not in found


def test_a_managed_service_is_built_on_what_it_manages(extractor: Extractor) -> None:
    found = _found(extractor, "Amazon OpenSearch Service is the fully managed OpenSearch service.")
    assert ("Amazon OpenSearch Service", "BASED_ON", "OpenSearch", "pattern:managed") in found
    found = _found(extractor, "Argo CD is a managed service for running Kubernetes.")
    assert ("Argo CD", "BASED_ON", "Kubernetes", "pattern:managed") in found
    text = "Argo CD is a streaming data service that manages Kubernetes infrastructure."
    assert ("Argo CD", "BASED_ON", "Kubernetes", "pattern:managed") in _found(extractor, text)
    # the service's owner is no base; nor is a managed service someone else deploys
    found = _found(extractor, "Xcode is Apple's managed build service.")
    assert not [f for f in found if f[1] == "BASED_ON"], found
    found = _found(extractor, "Flux lets you deploy a managed Kubernetes service anywhere.")
    assert not [f for f in found if f[1] == "BASED_ON"], found


def test_a_line_of_devices_is_related_to_what_names_them(extractor: Extractor) -> None:
    found = _found(extractor, "Apple TV is a discontinued line of iOS devices.")
    assert ("Apple TV", "RELATED_TO", "iOS", "pattern:line_of") in found
    # an organisation's devices are no product they are related to
    found = _found(extractor, "Apple TV is a line of Intel devices.")
    assert not [f for f in found if f[3] == "pattern:line_of"], found


def test_compatible_with_a_product_s_file_formats_is_related_to_it(extractor: Extractor) -> None:
    found = _found(extractor, "The app is compatible with Windows file formats.", "Docker")
    assert ("Docker", "RELATED_TO", "Windows", "pattern:works_with") in found


def test_for_use_on_a_product_is_made_for_it(extractor: Extractor) -> None:
    found = _found(extractor, "Argo CD is a package manager for use with Kubernetes.")
    assert ("Argo CD", "RELATED_TO", "Kubernetes", "pattern:made_for") in found
    # someone's use of it says nothing of what it is for
    assert not _typed(extractor, "You can buy Argo CD for use with Kubernetes.")


def test_a_component_or_feature_of_a_product_is_part_of_it(extractor: Extractor) -> None:
    found = _found(extractor, "Argo CD is a component of Kubernetes.")
    assert ("Argo CD", "RELATED_TO", "Kubernetes", "pattern:part_of") in found
    assert not _typed(extractor, "A key feature of Kubernetes is scaling.")


def test_a_store_from_or_a_suite_offered_by_a_maker_is_its_product(extractor: Extractor) -> None:
    found = _found(extractor, "Keycloak is an in-memory data store from Red Hat.")
    assert ("Red Hat", "PRODUCES", "Keycloak", "pattern:made_by") in found
    found = _found(extractor, "Flux is part of the web-based Drupal suite offered by GitHub.")
    assert ("GitHub", "PRODUCES", "Drupal", "pattern:made_by") in found
    # support offered by a company is no product of it (the support rule's)
    found = _found(extractor, "Commercial support offered by Tidelift is available for Vue.")
    assert not [f for f in found if f[1] == "PRODUCES"], found


def test_a_successor_or_a_replacement_is_related_to_what_it_follows(extractor: Extractor) -> None:
    found = _found(extractor, "OpenSearch is the successor of Elasticsearch.")
    assert ("OpenSearch", "RELATED_TO", "Elasticsearch", "pattern:successor") in found
    found = _found(extractor, "Firefox can replace Chromium on Windows.")
    assert ("Firefox", "RELATED_TO", "Chromium", "pattern:successor") in found
    found = _found(extractor, "Angular is a rewrite of Vue.")
    assert ("Angular", "RELATED_TO", "Vue", "pattern:successor") in found
    found = _found(extractor, "Debian was later succeeded by Ubuntu.")
    assert {("Debian", "Ubuntu"), ("Ubuntu", "Debian")} & {
        (s, t) for s, _, t, m in found if m == "pattern:successor"
    }, found
    # a drop-in replacement competes with it; an organisation is followed by no product
    assert not [
        f
        for text in (
            "Vue is a drop-in replacement for Angular.",
            "Firefox is the successor of Microsoft.",
        )
        for f in _found(extractor, text)
        if f[3] == "pattern:successor"
    ]


def test_part_of_a_product_the_model_calls_a_place_reaches_the_graph(extractor: Extractor) -> None:
    """The small model reads "the Elastic Stack" as a place: the rule keeps it, and the
    graph keeps the edge only where the name settles as a product."""
    result = extractor.extract(
        "Kibana is part of the Elastic Stack.", ExtractionContext(subject="Kibana")
    )
    found = [(r.source, r.target) for r in result.relations if r.method == "pattern:part_of"]
    assert found == [("Kibana", "Elastic Stack")], result.relations


def test_an_installation_option_of_a_product_is_built_on_it(extractor: Extractor) -> None:
    found = _found(extractor, "Photon OS is a minimal installation option of Oracle Linux.")
    assert ("Photon OS", "BASED_ON", "Oracle Linux", "pattern:base_noun") in found
    assert not _found(extractor, "Photon OS offers an option of Oracle Linux support.")
    # the parser makes the base the subject of a participle after it
    text = "Photon OS is a minimal installation option of Oracle Linux offering a small footprint."
    assert ("Photon OS", "BASED_ON", "Oracle Linux") in _typed(extractor, text)


def test_the_subject_named_before_its_kind_is_the_clause_s_subject(extractor: Extractor) -> None:
    """ "The Bosque programming language is a Microsoft Research project": the note's
    subject; another name before a kind is not ("The PHP framework is ...")."""
    text = "The Bosque programming language is a Microsoft Research project."
    found = _found(extractor, text, "Bosque")
    assert ("Microsoft Research", "PRODUCES", "Bosque", "pattern:project_of") in found
    assert not _found(extractor, "The JavaScript framework is based on Vue.", "Flux")


def test_a_list_after_a_colon_is_what_a_product_supports(extractor: Extractor) -> None:
    text = "Docker supports the following runtimes: JavaScript, Java, and F#."
    found = _typed(extractor, text)
    assert {("Docker", "RELATED_TO", t) for t in ("JavaScript", "Java", "F#")} <= found
    # a list with anything but names in it is no list of products
    assert not _typed(extractor, "Docker supports these features: caching, fast Java.")


def test_a_build_is_related_to_the_kit_it_is_certified_with(extractor: Extractor) -> None:
    found = _found(extractor, "Oracle JDK is certified using the Java SDK.", "Oracle JDK")
    assert ("Oracle JDK", "RELATED_TO", "Java SDK", "pattern:certified") in found
    found = _found(
        extractor, "Oracle JDK releases must pass the Flux verification suite.", "Oracle JDK"
    )
    assert ("Oracle JDK", "RELATED_TO", "Flux", "pattern:certified") in found
    assert not _found(extractor, "Students pass the Java exam.")


def test_a_participle_after_a_comma_describes_the_complement(extractor: Extractor) -> None:
    """ "X is the IDE for Google's Android operating system, built on JetBrains'
    IntelliJ IDEA": the parser hangs "built" on the operating system; set off by a
    comma, it says what X is built on. Without the comma it stays the system's."""
    ide = (
        "Android Studio is the official integrated development environment (IDE) for "
        "Google's Android operating system, built on JetBrains' IntelliJ IDEA software and "
        "designed specifically for Android development."
    )
    seeds = ExtractionContext(
        known_entities=(
            ("Android Studio", "PRODUCT"),
            ("Android", "PRODUCT"),
            ("IntelliJ IDEA", "PRODUCT"),
            ("JetBrains", "ORG"),
            ("Google", "ORG"),
            ("Linux", "PRODUCT"),
        )
    )
    found = {(r.source, r.type, r.target) for r in extractor.extract(ide, seeds).relations}
    assert ("Android Studio", "BASED_ON", "IntelliJ IDEA") in found, found
    assert ("Android", "BASED_ON", "IntelliJ IDEA") not in found, found
    plain = (
        "Android Studio is the official integrated development environment for the Android "
        "operating system built on the Linux kernel."
    )
    found = {(r.source, r.type, r.target) for r in extractor.extract(plain, seeds).relations}
    assert ("Android Studio", "BASED_ON", "Linux") not in found, found
    # a participle on a noun the parser hung from the complement, and one after an
    # adverb: "a free and open source codebase for a web browser, principally developed
    # and maintained by Google"
    chromium = (
        "Chromium is a free and open source codebase for a web browser, principally "
        "developed and maintained by Google."
    )
    made = ExtractionContext(known_entities=(("Chromium", "PRODUCT"), ("Google", "ORG")))
    found = {(r.source, r.type, r.target) for r in extractor.extract(chromium, made).relations}
    assert ("Google", "PRODUCES", "Chromium") in found, found


def test_what_is_done_to_a_group_s_members_is_done_to_the_group(extractor: Extractor) -> None:
    """ "a set of common interfaces defined by V": the set is V's."""
    text = "PSR-7 is a set of common interfaces defined by PHP Framework Interop Group."
    ctx = ExtractionContext(
        known_entities=(("PSR-7", "PRODUCT"), ("PHP Framework Interop Group", "ORG"))
    )
    found = {(r.source, r.type, r.target) for r in extractor.extract(text, ctx).relations}
    assert ("PHP Framework Interop Group", "PRODUCES", "PSR-7") in found, found
    # members that are no group's: the clause stays theirs
    text = "PSR-7 is a list of common interfaces defined by PHP Framework Interop Group."
    found = {(r.source, r.type, r.target) for r in extractor.extract(text, ctx).relations}
    assert ("PHP Framework Interop Group", "PRODUCES", "PSR-7") not in found, found


def test_people_at_an_organisation_make_what_it_makes(extractor: Extractor) -> None:
    ctx = ExtractionContext(
        known_entities=(("NetBox", "PRODUCT"), ("DigitalOcean", "ORG"), ("Express", "PRODUCT"))
    )

    made = ("DigitalOcean", "PRODUCES", "NetBox")
    assert made in _typed_in(
        extractor, "NetBox was developed by the network engineering team at DigitalOcean.", ctx
    )
    assert made in _typed_in(extractor, "NetBox was conceived by the DigitalOcean team.", ctx)
    # people of no organisation, or the team behind a product: no maker
    assert not [
        r
        for r in _typed_in(extractor, "NetBox was designed by the team behind Express.", ctx)
        if r[1] == "PRODUCES"
    ]


def test_a_company_named_after_its_product_makes_it(extractor: Extractor) -> None:
    """ "Roblox Corporation" reads as "Roblox" with its legal word: two ends all the
    same, and still no relation of a name to itself."""
    ctx = ExtractionContext(known_entities=(("Roblox", "PRODUCT"), ("Roblox Corporation", "ORG")))
    text = "Roblox is a game creation system developed by Roblox Corporation."
    found = [
        (r.source_label, r.type, r.target_label) for r in extractor.extract(text, ctx).relations
    ]
    assert ("ORG", "PRODUCES", "PRODUCT") in found, found
    itself = extractor.extract("Roblox is based on Roblox.", ctx).relations
    assert not [r for r in itself if r.type != "MENTIONED_WITH"], itself


def test_a_parse_that_hides_the_subject_or_the_head(extractor: Extractor) -> None:
    """The small model's misreadings of three common shapes: a passive sentence whose
    subject it takes for punctuation, a list of complements it heads with an adjective,
    and a name inside a noun phrase it hangs as a case marker."""
    ctx = ExtractionContext(
        known_entities=(
            ("AngularJS", "PRODUCT"),
            ("Angular 1", "PRODUCT"),
            ("Internet Explorer", "PRODUCT"),
            ("Google", "ORG"),
            ("Microsoft", "ORG"),
            ("IBM Semeru Runtimes", "PRODUCT"),
            ("OpenJDK", "PRODUCT"),
            ("OpenJ9", "PRODUCT"),
        )
    )

    angular = "AngularJS, referred to as Angular 1, was built and maintained by Google."
    assert ("Google", "PRODUCES", "AngularJS") in _typed_in(extractor, angular, ctx, patterns=True)
    ie = (
        "Internet Explorer is a proprietary and no longer recommended web browser "
        "developed by Microsoft."
    )
    assert ("Microsoft", "PRODUCES", "Internet Explorer") in _typed_in(
        extractor, ie, ctx, patterns=True
    )
    semeru = (
        "The IBM Semeru Runtimes are free production-ready binaries built with the OpenJDK "
        "class libraries and the Eclipse OpenJ9 JVM. Release builds pass the full suite of "
        "open tests that are available from the Eclipse AQAvit project."
    )
    found = _typed_in(extractor, semeru, ctx, patterns=True)
    assert {
        ("IBM Semeru Runtimes", "BASED_ON", "OpenJDK"),
        ("IBM Semeru Runtimes", "BASED_ON", "OpenJ9"),
    } <= found, found


def test_an_ampersand_between_declared_names_lists_them(extractor: Extractor) -> None:
    ctx = ExtractionContext(
        known_entities=(
            ("Google Chrome", "PRODUCT"),
            ("Windows", "PRODUCT"),
            ("iPhone", "PRODUCT"),
            ("iPad", "PRODUCT"),
            ("Johnson", "PRODUCT"),
        ),
        subject="Google Chrome",
    )
    text = "It is available for Windows, iPhone & iPad, and Linux."
    found = {(r.source, r.type, r.target) for r in extractor.extract(text, ctx).relations}
    for device in ("iPhone", "iPad"):
        assert ("Google Chrome", "RELATED_TO", device) in found, found
    # one name written twice around it is one name
    names = [e.text for e in extractor.extract("It is sold by Johnson & Johnson.", ctx).entities]
    assert names.count("Johnson") < 2, names


def test_the_examples_a_plain_noun_gives_are_its_names(extractor: Extractor) -> None:
    """ "hypervisors such as VMware ESXi, Microsoft Hyper-V or KVM", "a range of container
    tools, including Docker", "frameworks like Flask": each example is an end; examples
    of a kind of product are products whatever the model guessed; what a product uses
    is named, not exemplified."""
    ctx = ExtractionContext(
        known_entities=(
            ("Stormshield Network Security", "PRODUCT"),
            ("VMware ESXi", "PRODUCT"),
            ("Microsoft Hyper-V", "PRODUCT"),
            ("KVM", "PRODUCT"),
            ("Kubernetes", "PRODUCT"),
            ("Docker", "PRODUCT"),
            ("Visual Studio", "PRODUCT"),
            ("Windows API", "PRODUCT"),
            ("Apache Tomcat", "PRODUCT"),
        )
    )

    found = _typed_in(
        extractor,
        "Stormshield Network Security is compatible with hypervisors such as VMware ESXi, "
        "Microsoft Hyper-V or KVM.",
        ctx,
        patterns=True,
    )
    for hypervisor in ("VMware ESXi", "Microsoft Hyper-V", "KVM"):
        assert ("Stormshield Network Security", "RELATED_TO", hypervisor) in found, found
    found = _typed_in(
        extractor,
        "Kubernetes supports a range of container tools, including Docker.",
        ctx,
        patterns=True,
    )
    assert ("Kubernetes", "RELATED_TO", "Docker") in found, found
    uses = "Visual Studio uses development platforms such as Windows API."
    assert not [
        r for r in _typed_in(extractor, uses, ctx, patterns=True) if r[2] == "Windows API"
    ], _typed_in(extractor, uses, ctx, patterns=True)
    tomcat = (
        "Apache Tomcat is a web server that implements various Jakarta web specifications, "
        "including JSP, Servlets, and WebSockets."
    )
    result = extractor.extract(tomcat, ctx)
    related = {r.target for r in result.relations if r.method == "pattern:works_with"}
    assert {"JSP", "Servlets", "WebSockets"} <= related, related
    labels = {e.text: e.label for e in result.entities}
    assert all(labels[n] == "PRODUCT" for n in ("JSP", "Servlets", "WebSockets")), labels


def test_a_name_before_a_word_for_a_kind_of_product_is_a_product(extractor: Extractor) -> None:
    """ "the GObject type system": the model guesses an organisation, the kind word
    says a product (and the use says what kind, for the graph to read a base); a
    standards body before "standard" stays what the model says."""
    ctx = ExtractionContext(known_entities=(("Vala", "PRODUCT"), ("mruby", "PRODUCT")))
    text = "Vala uses the GObject type system to create classes and interfaces."
    result = extractor.extract(text, ctx)
    labels = {e.text: e.label for e in result.entities}
    assert labels.get("GObject") == "PRODUCT", labels
    uses = [r for r in result.relations if r.method == "pattern:uses"]
    assert [(r.source, r.target, r.detail) for r in uses] == [("Vala", "GObject", "system")]
    standard = extractor.extract("mruby is compliant with part of the ISO standard.", ctx)
    assert all(e.label != "PRODUCT" for e in standard.entities if e.text == "ISO"), standard


def test_a_series_line_family_or_suite_stands_for_its_name(extractor: Extractor) -> None:
    ctx = ExtractionContext(
        known_entities=(
            ("Pixel Watch", "PRODUCT"),
            ("Google Pixel", "PRODUCT"),
            ("AQAvit", "PRODUCT"),
        ),
        subject="Pixel Watch",
    )
    for text, target in (
        ("Pixel Watch is part of the Google Pixel series.", "Google Pixel"),
        ("Pixel Watch is included as part of the free Google Pixel line.", "Google Pixel"),
        ("Pixel Watch releases must pass the AQAvit quality verification suite.", "AQAvit"),
    ):
        found = {
            (r.source, r.target)
            for r in extractor.extract(text, ctx).relations
            if r.type == "RELATED_TO"
        }
        assert ("Pixel Watch", target) in found, (text, found)


def test_what_a_product_is_for_doing_to_another(extractor: Extractor) -> None:
    """ "a set of APIs to automate Chromium, Firefox, and WebKit browsers": what the
    product provides does what the product does; "a framework with an intuitive way to
    create ... applications with Vue": the framework's purpose; not what the subject
    does with something ("Users automate Docker with scripts")."""
    found = _typed(
        extractor,
        "Electron provides a set of APIs to automate Chromium, Firefox, and WebKit browsers.",
    )
    for browser in ("Chromium", "Firefox", "WebKit"):
        assert ("Electron", "RELATED_TO", browser) in found, found
    nuxt = (
        "Vuetify is a free and open-source framework with an intuitive and extendable way to "
        "create type-safe, performant and production-grade full-stack web applications and "
        "websites with Vue."
    )
    assert ("Vuetify", "BASED_ON", "Vue") in _typed(extractor, nuxt), _typed(extractor, nuxt)
    # a finite verb is no purpose
    found = _found(extractor, "Netflix engineers automate Docker with Terraform.")
    assert not [f for f in found if f[3] == "pattern:acts_on"], found
    # what a product provides is its own only as a purpose: not the support it provides
    support = "Electron provides a total of 14 months of support for each Kubernetes version."
    found = _typed(extractor, support)
    assert ("Electron", "RELATED_TO", "Kubernetes") not in found, found


def test_a_test_framework_for_a_platform_serves_it(extractor: Extractor) -> None:
    """ "an end-to-end test framework for Angular applications" tests what is built on
    Angular: related, not built on it; a framework for it is built on it."""
    found = _typed(extractor, "Argo CD is an end-to-end test framework for Angular applications.")
    assert ("Argo CD", "RELATED_TO", "Angular") in found, found
    assert ("Argo CD", "BASED_ON", "Angular") not in found, found
    found = _typed(extractor, "Argo CD is a web framework for Angular applications.")
    assert ("Argo CD", "BASED_ON", "Angular") in found, found
    # a testing framework for a language is one of the language's
    found = _typed(extractor, "Argo CD is a testing framework for JavaScript.")
    assert ("Argo CD", "BASED_ON", "JavaScript") in found, found


def test_a_name_from_an_organisation_is_its_product(extractor: Extractor) -> None:
    """ "the KHTML and KJS libraries from KDE" are KDE's; a plain noun from an
    organisation is not its product's ("OpenJDK builds from Red Hat"), nor what moves
    from one ("migrated Ubuntu from Intel")."""
    text = (
        "WebKit's HTML and JavaScript engine started as a fork of the KHTML and KJS "
        "libraries from KDE, and has since been further developed by KDE contributors."
    )
    names = (("WebKit", "PRODUCT"), ("KHTML", "PRODUCT"), ("KJS", "PRODUCT"), ("KDE", "ORG"))
    result = extractor.extract(text, ExtractionContext(known_entities=names))
    found = {(r.source, r.type, r.target, r.method) for r in result.relations}
    made = {("KDE", "PRODUCES", lib, "pattern:made_from") for lib in ("KHTML", "KJS")}
    assert made <= found, found
    for text in ("Vue builds from Red Hat are available.", "Users migrated Vue from Intel."):
        found = _found(extractor, text)
        assert not [f for f in found if f[3] == "pattern:made_from"], (text, found)
