"""Word lists of the relation rules (:mod:`extraction.nlp.relation_rules`), of pronoun
resolution (:mod:`extraction.nlp.coref`) and of the relation classifier's features
(:mod:`extraction.nlp.relclf`).

Lower-cased surface forms: the lemmatizer is off, so inflections are listed.
"""

from __future__ import annotations

# -- trigger lexicons ----------------------------------------------------------

WORK_NOUNS = frozenset(
    """
    ceo ceos president vice-president chairman chairwoman chairperson chair director
    directors executive executives officer officers chief employee employees member members
    manager managers head vp svp evp cto cfo coo cio cmo cso md gm partner partners
    professor lecturer fellow researcher scientist engineer editor analyst consultant
    adviser advisor secretary treasurer trustee dean associate staff principal architect
    developer designer producer correspondent reporter columnist anchor coach captain leader
    spokesman spokeswoman spokesperson counsel attorney economist strategist administrator
    superintendent commissioner chancellor provost rector publisher owner presenter host
    employee board faculty
    """.split()  # noqa: SIM905
)
WORK_VERBS = frozenset(
    """
    joined join joins joining rejoined worked work works working served serve serves serving
    hired employed appointed named led leads lead leading headed heads heading ran runs run
    running manages managed managing taught teaches teach teaching resigned retired left
    promoted chaired chairs presided presides oversaw oversees
    """.split()  # noqa: SIM905
)
FOUND_WORDS = frozenset(
    """
    founded founding founder founders co-founder co-founders cofounder cofounders co-founded
    cofounded establish established establishing co-established started creator
    """.split()  # noqa: SIM905
)
HQ_WORDS = frozenset(
    """
    headquartered headquarters headquarter hq hqs based located situated head-quartered
    """.split()  # noqa: SIM905
)
SUB_NOUNS = frozenset(
    """
    subsidiary subsidiaries division divisions unit arm affiliate part branch imprint brand
    daughter
    """.split()  # noqa: SIM905
)
OWN_VERBS = frozenset(["owned", "owns", "own"])
PARENT_NOUNS = frozenset(["parent", "owner"])
ACQ_VERBS = frozenset(
    ["acquired", "acquires", "acquire", "bought", "buys", "buy", "purchased", "purchases"]
)
ACQ_NOUNS = frozenset(["acquisition", "takeover", "purchase"])
PARTNER_WORDS = frozenset(
    """
    partnered partnership partnerships partner partners alliance collaboration collaborated
    collaborates teamed
    """.split()  # noqa: SIM905
)
COMPETE_WORDS = frozenset(
    ["competitor", "competitors", "compete", "competes", "competing", "rival", "rivals"]
)
PRODUCE_WORDS = frozenset(
    """
    developed develops develop developer created creates create made makes make maker
    released releases release launched launches produced produces producer manufacturer
    manufactures manufactured designed designs built builds published publishes publisher
    offers offered ships shipped sells sold vendor introduced introduces
    """.split()  # noqa: SIM905
)

#: Organisation "names" the model finds that are parts of an organisation.
NOT_ORGS = frozenset(
    ("board", "board of directors", "the board", "senate", "state", "ipo", "parliament")
)

PERSON_PRONOUNS = frozenset(
    ["he", "she", "him", "his", "her", "hers", "who", "whom", "whose", "i", "my", "me"]
)
ORG_PRONOUNS = frozenset(["it", "its", "which", "they", "their", "we", "our"])
RELATIVE = frozenset(["who", "whom", "whose", "which", "where", "that"])
#: Relative words that are mentions only on a clause about an organisation.
CLAUSAL = frozenset(["where", "that"])


# -- making and deriving -------------------------------------------------------

#: Nouns a product is called by ("a software tool by X", "a service from X").
PRODUCT_NOUNS = frozenset(
    """
    tool tools software service services framework frameworks library libraries language
    languages system systems platform platforms product products application applications
    app apps engine engines database databases editor editors ide runtime runtimes suite
    package packages distribution distributions implementation compiler compilers browser
    browsers toolkit protocol protocols format formats standard standards environment project
    projects server servers client clients solution solutions offering offerings os
    """.split()  # noqa: SIM905
)
#: Verbs of making with their maker in a "by" phrase or as their subject.
MAKE_VERBS = frozenset(
    """
    developed develops develop created creates create made makes make designed designs design
    built builds build written writes wrote write authored maintained maintains maintain
    invented invents invent founded started published publishes released releases launched
    launches produced produces
    """.split()  # noqa: SIM905
)
#: Words that make one product the base of another ("a Linux distribution",
#: "a build of OpenJDK", "based on WildFly", "built on Nix", "a fork of X").
BASE_WORDS = frozenset(
    """
    based build builds built fork forks forked distribution distributions distro derivative
    derived port ported variant flavor flavour rebuild respin spin clone downstream successor
    """.split()  # noqa: SIM905
)
