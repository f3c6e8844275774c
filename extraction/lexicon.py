"""Words that are never entities in vendor notes, whatever the NER model says.

Vendor notes are release pages: their most frequent capitalised phrases name
support phases ("Maintenance Support", "LTS"), release kinds ("GA", "RTM"),
editions ("Community", "Enterprise"), generic technology ("API", "SDK") and
practices ("Agile", "TDD").
The statistical model reads them as organisations and people; none is a named
thing a graph should hold. :func:`is_vocabulary` is checked on the normalised
name of every candidate span, and :func:`is_version_like` drops spans that are
only a version ("3.9.12", "v5.2", "N−2").
"""

from __future__ import annotations

import re

from sql.names import normalize_name

# Entries are separated by "|" or line ends; each is a word or a whole phrase.
# Support phases and lifecycle words (endoflife.date column labels among them).
_PHASES = """
lts|lts release|long term support|long-term support|extended support|extended maintenance
standard support|standard maintenance|maintenance support|maintenance|maintenance phase
maintenance support 1|maintenance support 2|mainstream support|premier support|active support
security support|security fixes|bug and security fixes|bug fixes|full support|full support phase
limited support|extended life phase|extended life cycle support|extended life-cycle support
extended lifecycle support|els|eol|eos|end of life|end-of-life|end of support|end of service
end of sale|end of extended support|end of standard support|end of maintenance|release support
technical guidance|sustaining support|self-service support|critical fixes|priority support
best effort|discontinued|deprecated|retired|legacy|stable|current|latest|preview|beta|alpha
release candidate|rc|nightly|canary|insider|dev channel|stable channel|beta channel
support phase|support policy|release policy|lifecycle policy|life cycle|lifecycle
extended security updates|esu|esr|extended support release|general availability
generally available|ga|rtm|release to manufacturing|service pack|service packs
technology level|technology levels|fix pack|fix packs|cumulative update|cumulative updates
feature update|feature updates|quality updates|security updates|patch|patches|hotfix|hotfixes
update|updates|upgrade|upgrades|support|errata|bug fix errata|security errata|enhancement errata
eus|aus|tus|e4s|extended update support|advanced update support|non-lts|active lts
maintenance lts|current release|data center|extended maintenance support
"""

# Editions and release kinds, as bare words.
_EDITIONS = """
community|enterprise|standard|professional|pro|premium|ultimate|business|home|education
datacenter|essentials|express|developer|edition|community edition|enterprise edition
free edition|open source edition|version|versions|versioning|release|releases|release notes
packages|package|changelog|roadmap
"""

# Generic technology terms written in capitals or title case.
_GENERIC = """
api|apis|rest api|sdk|sdks|cli|gui|ui|ux|ci|cd|ci/cd|devops|saas|paas|iaas|faas|ai|ml|llm|llms
iot|vm|vms|os|cpu|gpu|ram|ssd|url|urls|uri|cloud|open source|oss|foss|database|databases
server|servers|client|clients|web|internet|app|apps|application|applications|framework
library|libraries|platform|platforms|runtime|toolkit|plugin|plugins|extension|extensions
module|modules|repository|repo|repos|faq|docs|documentation|readme|license|licence
getting started|overview|introduction|installation|usage|features|examples|tutorial
tutorials|guide|guides|mvc|mvvm|orm|crud|spa|cms|crm|erp|ide|ides|mit|gpl|bsd|n-1|n-2|n-3
x86|x64|arm64|amd64|aarch64|32-bit|64-bit|software|hardware|tools|services
rpc|pwa|ssr|ssg|csr|p2p|nosql|voip|hmr|mvcc|hmvc|vcs|dvcs|hateoas|pubsub|pub/sub
cicd|webapp|web app|hotkey|hotkeys|datetime|microblog|pseudocode|e-ink|eink|2fa|mfa|cdn|rpa
chatbot|chatbots|addon|addons|add-on|add-ons|gamedev
"""

# Practices and methods: named in capitals, but fields of work, not things.
_PRACTICES = """
agile|scrum|kanban|lean|waterfall|waterfall model|extreme programming|xp|tdd|bdd|atdd|ddd
test-driven development|behavior-driven development|behaviour-driven development
domain-driven design|unit testing|pair programming|code review|refactoring|design patterns
continuous integration|continuous delivery|continuous deployment|gitops|devsecops|mlops
infrastructure as code|iac|microservices|serverless|code|programming|software development
"""

# A word that says something is an organisation, alone: a reference ("The Company's
# segments", "the University"), or a legal form split off a name ("vesoft, Inc."); not
# "Foundation" (Apple's framework of that name).
_ORG_ALONE = """
company|corporation|university|institute|organization|organisation|association|consortium
society|inc|ltd|llc|gmbh|corp
"""

_VOCABULARY: frozenset[str] = frozenset(
    normalize_name(entry)
    for block in (_PHASES, _EDITIONS, _GENERIC, _PRACTICES, _ORG_ALONE)
    for entry in re.split(r"[|\n]", block)
    if entry.strip()
)

_VERSION = re.compile(
    r"""(?ix)^(
        v?\d+([._-]\d+)*[a-z]?(\s*(lts|sp\d+|r\d+|update\s*\d+))?   # 3.9.12, v5.2, 8u202, 11 SP3
      | v?\d+(\.\d+)*\.x                                          # 7.x, 1.2.x (a series)
      | n\s*[-−–]\s*\d+                                            # N-2
      | \d+(\.\d+)*\s*[-–]\s*\d+(\.\d+)*                           # 5.3-5.7
      | [a-z]?\d+[a-z]\d+([a-z]\d+)*                               # V6R1M1, 8u202
      | \d{4}\.\d+(\.\d+)*                                         # 2023.3.26285
      | r\d                                                        # R2 (2008 R2), alone
    )$""",
)


def is_vocabulary(name: str) -> bool:
    """Support-phase, edition or generic vocabulary, not a name.

    >>> [is_vocabulary(n) for n in ("LTS", "Maintenance Support", "API", "Red Hat")]
    [True, True, True, False]
    >>> is_vocabulary("the Extended Support"), is_vocabulary("Bug and Security Fixes")
    (True, True)
    >>> is_vocabulary("The Company"), is_vocabulary("Inc"), is_vocabulary("Foundation")
    (True, True, False)
    """
    key = normalize_name(name)
    return key in _VOCABULARY or (key.startswith("the ") and key[4:] in _VOCABULARY)


#: A licence's name: "MIT License", "Artistic Licence", "(Apache Licensed)", "Public
#: License v3.0", "GPLv2", "LGPL 3.0", "AGPL-3.0-or-later", "MPL 2.0", "Apache 2.0".
_LICENCE = re.compile(
    r"""(?ix)^(?:
        .*\blicen[cs](?:e|ed)(?:\s+v?\d+(?:\.\d+)*)?
      | [al]?gpl(?:[\s-]*v?\d+(?:\.\d+)*)?(?:\+|-or-later|-only)?
      | mpl(?:[\s-]*v?\d+(?:\.\d+)*)?
      | apache[\s-]+2\.0
    )$"""
)


def is_licence(name: str) -> bool:
    """A licence, which the graph does not hold as an entity (a product is not its
    licence; "Creative Commons", the organisation, is not one).

    >>> [is_licence(n) for n in ("MIT License", "Apache Licensed", "GPLv2", "Apache 2.0")]
    [True, True, True, True]
    >>> [is_licence(n) for n in ("Creative Commons", "License Manager", "Apache Kafka")]
    [False, False, False]
    """
    return bool(_LICENCE.match(" ".join(name.split()).strip(" ()")))


def is_version_like(text: str) -> bool:
    """A version, build or release number on its own, not a name.

    >>> [is_version_like(t) for t in ("3.9.12", "v5.2", "N−2", "V6R1M1", "7.x", "Java 17", "C++")]
    [True, True, True, True, True, False, False]
    >>> is_version_like("R2"), is_version_like("R")
    (True, False)
    """
    cleaned = re.sub(r"[\s&;•·]+(bull|middot)?$", "", text.strip(" ()[]&;,"))
    return bool(cleaned) and bool(_VERSION.match(cleaned))
