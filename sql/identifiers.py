"""The keys behind every ``product_identifiers.key``: package URLs, CPEs and names.

The rebuild stores the keys of each product note's ``identifiers:`` (and of its
names) and ``kg`` computes the same keys from a bill of materials, so both must apply
the identical rule; like :mod:`sql.names`, it lives with the data model. Pure
functions.

* A package URL's key is its type, namespace and name, as the purl specification
  normalises them per type (``npm`` names lower-cased, ``pypi`` ``_`` as ``-``,
  percent-encoding decoded) and then case-folded; its version, qualifiers and subpath
  say which build, not which product, and are left out.
* A CPE's key is its vendor and product (CPE 2.3 formatted strings, ``\\``-escapes
  undone, and CPE 2.2 URIs, percent-decoded); part, version and the rest are left
  out.
* A product's name keys are the names a person types for it: its title, the title
  without its vendor's name before it, its permalink and other slugs
  (``atlassian-confluence``), each through :func:`sql.names.normalize_name`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple
from urllib.parse import unquote

from packageurl import PackageURL

from sql.names import normalize_name

#: Kinds of stored identifiers, in the order a bill of materials is matched by them.
KINDS = ("purl", "cpe", "name")
#: Longest identifier kept (a longer one is no package URL or CPE a note means).
MAX_IDENTIFIER = 1000

_CPE23_SPLIT = re.compile(r"(?<!\\):")
_CPE23_ESCAPE = re.compile(r"\\(.)")
_CPE_ANY = frozenset({"", "*", "-"})


class PurlParts(NamedTuple):
    type: str
    namespace: str | None
    name: str
    version: str | None


def purl_parts(text: str) -> PurlParts:
    """Type, namespace, name and version of a package URL, normalised by the
    specification's rules for its type; :class:`ValueError` says why ``text`` is not one.

    >>> tuple(purl_parts("pkg:npm/%40angular/core@10.1.0"))
    ('npm', '@angular', 'core', '10.1.0')
    >>> tuple(purl_parts("pkg:maven/org.eclipse.jetty/jetty-server@9.4.18.v20190429?type=jar"))
    ('maven', 'org.eclipse.jetty', 'jetty-server', '9.4.18.v20190429')
    >>> tuple(purl_parts("pkg:npm/express@4.17.1?foo=%zz&&bar#lib/x"))
    ('npm', None, 'express', '4.17.1')
    >>> purl_parts("npm/express")
    Traceback (most recent call last):
    ...
    ValueError: purl is missing the required "pkg" scheme component: 'npm/express'.
    """
    if not isinstance(text, str) or len(text) > MAX_IDENTIFIER:
        raise ValueError(f"a package URL is text of at most {MAX_IDENTIFIER} characters")
    # qualifiers and subpath say which build, not which package: cut before parsing, so
    # that odd ones (``?foo=%zz&&bar``) cannot make the package unreadable
    head = text.strip().split("#", 1)[0].split("?", 1)[0]
    try:
        purl = PackageURL.from_string(head)
    except ValueError:
        raise
    except Exception as exc:  # the parser's own slips on odd input (it is not ours)
        raise ValueError(f"not a package URL: {exc}") from None
    if not purl.type or not purl.name:
        raise ValueError(f"a package URL needs a type and a name: {text!r}")
    return PurlParts(purl.type, purl.namespace or None, purl.name, purl.version or None)


def purl_key(text: str) -> str:
    """The key of a package URL: type, namespace and name, case-folded.

    >>> purl_key("pkg:NPM/Express@4.17.1")
    'npm/express'
    >>> purl_key("pkg:composer/laravel/framework@v7.30.6")
    'composer/laravel/framework'
    >>> purl_key("pkg:rpm/aliyun/java-1.8.0?repository_url=http://example.com/x/")
    'rpm/aliyun/java-1.8.0'
    """
    parts = purl_parts(text)
    return "/".join(p for p in (parts.type, parts.namespace, parts.name) if p).casefold()


def cpe_parts(text: str) -> tuple[str, str, str]:
    """Part, vendor and product of a CPE (2.3 formatted string or 2.2 URI);
    :class:`ValueError` says why ``text`` is not one.

    >>> cpe_parts("cpe:2.3:a:redhat:keycloak:*:*:*:*:*:*:*:*")
    ('a', 'redhat', 'keycloak')
    >>> cpe_parts("cpe:/o:redhat:enterprise_linux:8")
    ('o', 'redhat', 'enterprise_linux')
    >>> cpe_parts(r"cpe:2.3:a:acme\\:labs:road\\!runner")
    ('a', 'acme:labs', 'road!runner')
    """
    if not isinstance(text, str) or len(text) > MAX_IDENTIFIER:
        raise ValueError(f"a CPE is text of at most {MAX_IDENTIFIER} characters")
    value = text.strip()
    low = value.lower()
    if low.startswith("cpe:2.3:"):
        fields = [_CPE23_ESCAPE.sub(r"\1", f) for f in _CPE23_SPLIT.split(value[8:])]
    elif low.startswith("cpe:/"):
        fields = [unquote(f) for f in value[5:].split(":")]
    else:
        raise ValueError(f"not a CPE (cpe:2.3:... or cpe:/...): {value[:80]!r}")
    if len(fields) < 3 or fields[1] in _CPE_ANY or fields[2] in _CPE_ANY:
        raise ValueError(f"a CPE needs a vendor and a product: {value[:80]!r}")
    return fields[0].lower(), fields[1], fields[2]


def cpe_key(text: str) -> str:
    """The key of a CPE: ``vendor:product``, case-folded.

    >>> cpe_key("cpe:2.3:a:Oracle:MySQL:8.0.35")
    'oracle:mysql'
    >>> cpe_key("cpe:/a:apache:camel")
    'apache:camel'
    """
    _, vendor, product = cpe_parts(text)
    return f"{vendor}:{product}".casefold()


def slug_key(slug: str) -> str:
    """A slug as a name key (``/atlassian-confluence`` -> ``atlassian confluence``)."""
    return normalize_name(slug.replace("-", " ").replace("_", " "))


def name_keys(
    product: str, vendor: str, permalink: str | None = None, aliases: Iterable[str] = ()
) -> list[str]:
    """The names a product answers to, its title's key first: the title, the title
    without its vendor's name, its permalink and other slugs.

    >>> name_keys("Atlassian Confluence", "Atlassian", "/confluence", ["atlassian-confluence"])
    ['atlassian confluence', 'confluence']
    >>> name_keys("OpenSearch", "Amazon", "/opensearch")
    ['opensearch']
    """
    title = normalize_name(product) or product.casefold()
    keys = [title]
    own = normalize_name(vendor)
    if own and title.startswith(own + " ") and len(title) > len(own) + 1:
        keys.append(title[len(own) + 1 :])
    for slug in (permalink, *aliases):
        if slug:
            keys.append(slug_key(slug))
    return [k for k in dict.fromkeys(keys) if k]
