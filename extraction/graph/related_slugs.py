"""Which ``related`` slugs of a note name a product that no note of the corpus is.

A topic note's ``related`` list mixes named things (``graphiql``, ``fido2``,
``bluesky-api``) with topics (``devops``, ``authentication``, ``event-loop``).
The gazetteer names the slugs a note of the corpus is (``react`` is React), and a
slug that spells a name the corpus declares without its spaces is that name
("atprotocol" is the AT Protocol, whose note's slug is ``atproto``); for the rest,
:func:`slug_name` decides from the slug and the note:

1. **The note writes it.** The note's text holds the slug as one word with a
   capital, in the middle of a sentence and not inside a longer capitalised name
   ("GraphiQL", "HonoX", "JSON-LD"): that form is the name. A common English word
   written with capitals ("Tweets", "REST") must be written so twice. Several words
   written as one capitalised phrase are a name where one of them is an acronym or a
   name the corpus declares ("Shadow DOM", "ES Modules", "GitHub Apps"); otherwise
   they are left to rule 2 ("Internet of Things", "URL Shortener" and "Cloud Native"
   are capitalised topics).
2. **The slug is shaped like a name.** One word that is not English, by its
   frequency in wordfreq's English lists (below
   :data:`~extraction.notes.words.COMMON_ZIPF` on the Zipf
   scale: "jxon" 0, "sparql" 1.4, while "authentication" is 3.4), that is not
   generic vocabulary ("cli", "pwa"), and that does not read as a derived common
   noun ("containerization", "linting", "coroutines", "raytracer"). Or several words
   whose first is a name (a product or an organisation the corpus declares, or a
   word that is not English) and whose others are names too, or ``api``
   ("bluesky-api" is the Bluesky API; "css-layout", "twitter-bot" and
   "nginx-server" stay topics); or a name of several words the corpus declares, then
   ``api`` ("apple-music-api" is the Apple Music API); or a name the corpus declares
   in capitals, then a short acronym ("json-ld" is JSON-LD, "php-fpm" PHP-FPM); or a
   standard or a model by its number: a rare word no note declares, or an
   organisation the corpus declares, then a number ("ecma-262" is ECMA-262, "rfc-7230"
   RFC-7230, "nintendo-3ds" the Nintendo 3DS; "vue-3", a product's, is its version).
3. **The notes write it as a name.** One English word that could be a name
   ("safari", "opera", "gecko": not everyday, not vocabulary, not a derived noun or a
   plural) that some note of the corpus writes with a capital mid-sentence, outside a
   longer name ("its Safari web browser"), and no note writes in lower case
   (:meth:`~extraction.graph.gazetteer.Gazetteer.written_name`). "chat", "mobile" and
   "protocol" are written in lower case somewhere, so they stay topics. Or such a
   word, not shaped like an acronym, that no note writes at all: "siren", "hydra",
   "mercurial" are named things only a ``related`` list mentions, where the words of
   the field are written somewhere ("blockchain", "config"); short acronyms ("hpc",
   "gdc") are as often topics as names.

A name found by rule 2 alone is displayed from the slug (words without a vowel, or
short ones with one, in capitals: "u2f" → "U2F", "dhtml" → "DHTML"; others
capitalised, "elmish" → "Elmish"; a word the corpus names keeps its form,
"bluesky-api" → "Bluesky API"). Measured and tuned on the tuned splits' ``related``
slugs that no note is (evals/data/vendor_graph): 119 uses, 46 of them labelled as
required relations; see docs/building-the-graph.md.
"""

from __future__ import annotations

import re
from functools import lru_cache

from extraction.graph.gazetteer import rare_word, squashed_name
from extraction.graph.naming import Namer
from extraction.lexicon import is_vocabulary
from extraction.notes.words import (
    DERIVED,
    acronym_shaped,
    capitalised_words,
    is_common_word,
    plural_noun,
)

#: Words after a name that make a slug a kind of thing, not a name ("twitter-bot").
_KIND_WORDS = frozenset(
    """
    bot bots client clients app apps application applications theme themes command commands
    tutorial tutorials example examples community template templates plugin plugins addon
    addons mod mods server servers tool tools
    """.split()  # noqa: SIM905
)


def _declared(name: str, namer: Namer) -> tuple[str, str] | None:
    """A product or organisation the corpus declares by that name, and its type."""
    entry = namer.gazetteer.lookup(name) if namer.gazetteer is not None else None
    if entry is not None and entry.type in ("PRODUCT", "ORG"):
        return entry.name, entry.type
    return None


def _known(word: str, namer: Namer) -> tuple[str, str] | None:
    """A one-word, capitalised product or organisation the corpus declares."""
    found = _declared(word, namer)
    if found is not None and len(found[0].split()) == 1 and found[0] != found[0].lower():
        return found
    return None


def _name_word(word: str, namer: Namer) -> str | None:
    """How a slug word that is a name is written, or None when it is a word."""
    if known := _known(word, namer):
        return known[0]
    if is_vocabulary(word) or is_common_word(word) or not re.search("[a-z]", word):
        return None
    if DERIVED.search(word) or plural_noun(word):
        return None
    return word.upper() if acronym_shaped(word) else word.capitalize()


def _numbered(word: str, number: str, namer: Namer) -> tuple[str, str] | None:
    """A standard or a model named by its number: "ecma-262" is ECMA-262 and "rfc-7230"
    RFC-7230 (a rare word, by wordfreq, that no note declares), "motorola-6805" the
    Motorola 6805 and "nintendo-3ds" the Nintendo 3DS (an organisation the corpus
    declares, and its model); a product's number is its version ("vue-3"), and an
    English word's a topic ("top-10"), so neither is a name.

    >>> _numbered("ecma", "262", Namer(None)), _numbered("top", "10", Namer(None))
    (('ECMA-262', 'PRODUCT'), None)
    """
    if not re.fullmatch(r"\d+[a-z]{0,3}", number) or is_vocabulary(word):
        return None
    found = _declared(word, namer)
    if found is not None:
        name, type_ = found
        if type_ == "ORG" and len(name.split()) == 1:
            return f"{name} {number.upper()}", "PRODUCT"
        return None
    if not re.fullmatch("[a-z]+", word) or not rare_word(word):
        return None
    return f"{word.upper()}-{number.upper()}", "PRODUCT"


def slug_shaped_name(slug: str, namer: Namer) -> tuple[str, str] | None:
    """Rule 2: the name a slug is by its shape alone and its type (an organisation
    the corpus declares, else a product), or None for a topic."""
    words = [w for w in slug.lower().split("-") if w]
    if not words or is_vocabulary(" ".join(words)) or is_vocabulary(words[0]):
        return None
    if len(words) == 1:
        word = words[0]
        if known := _known(word, namer):
            return known
        name = _name_word(word, namer) if len(word) >= 2 else None
        return (name, "PRODUCT") if name else None
    if len(words) == 2 and (numbered := _numbered(words[0], words[1], namer)) is not None:
        return numbered
    if words[-1] in _KIND_WORDS or re.fullmatch(r"v?\d+", words[-1]):
        return None
    if words[-1] == "api" and len(words) > 2 and (owner := _declared(" ".join(words[:-1]), namer)):
        return f"{owner[0]} API", "PRODUCT"  # "apple-music-api": the API of Apple Music
    if (
        len(words) == 2
        and (known := _known(words[0], namer)) is not None
        and known[0].isupper()
        and len(words[1]) <= 3
        and acronym_shaped(words[1])
        and not is_vocabulary(words[1])
    ):
        return f"{known[0]}-{words[1].upper()}", "PRODUCT"  # "json-ld" is JSON-LD
    shown = [_name_word(words[0], namer)]
    for word in words[1:]:
        shown.append("API" if word == "api" else _name_word(word, namer))
    if any(s is None for s in shown):
        return None
    return " ".join(s for s in shown if s), "PRODUCT"


def written_form(slug: str, text: str) -> str | None:
    """Rule 1: how the note's text writes the slug as a name, if it does."""
    key = squashed_name(slug)
    found = _capitalised_words(text).get(key) if key else None
    if not found:
        return None
    surface = max(found, key=lambda s: (found[s], s))
    if is_common_word(surface.lower()):
        # "Tweets", "REST": a common word written with capitals is a name only when
        # written so twice
        return surface if found[surface] >= 2 else None
    return None if is_vocabulary(surface) else surface


@lru_cache(maxsize=4)
def _capitalised_words(text: str) -> dict[str, dict[str, int]]:
    """:func:`~extraction.notes.words.capitalised_words` by squashed form ("graphiql"),
    with how often each spelling is written."""
    out: dict[str, dict[str, int]] = {}
    for surface, count in capitalised_words(text).items():
        out.setdefault(squashed_name(surface), {})[surface] = count
    return out


def subject_api(slug: str, names: tuple[str, ...]) -> str | None:
    """The API of the note's own subject that a ``related`` slug "<name>-api" names
    ("twitter-api" in the note on "X (Twitter)" is the Twitter API), whatever the
    name's words read like: ``names`` are the subject's names (its title, the name in
    its title's brackets, the names its description gives).

    >>> subject_api("twitter-api", ("X (Twitter)", "Twitter"))
    'Twitter API'
    >>> subject_api("rest-api", ("Binance",)) is None
    True
    """
    words = [w for w in slug.lower().split("-") if w]
    if len(words) < 2 or words[-1] != "api":
        return None
    key = squashed_name(" ".join(words[:-1]))
    for name in names:
        if key and squashed_name(name) == key:
            return f"{name} API"
    return None


def subject_names(subject: str, described: tuple[str, ...] = ()) -> tuple[str, ...]:
    """A subject's names: its title, each side of brackets in it ("X (Twitter)"), and
    the names its description gives."""
    parts = [p.strip() for p in re.split(r"[()]", subject) if p.strip()]
    return tuple(dict.fromkeys([subject, *parts, *described]))


def written_phrase(slug: str, text: str, namer: Namer) -> str | None:
    """Rule 1 for a slug of several words: the note's text writes them as one phrase,
    each word with a capital (a plural "s" allowed), and one of them is an acronym or
    a name the corpus declares, not vocabulary ("shadow-dom": "Shadow DOM", "es-modules":
    "ES Modules", "github-apps": "GitHub Apps"); "URL Shortener" and "Cloud Native",
    capitalised topics, have none.

    >>> written_phrase("shadow-dom", "used with the Shadow DOM and more", Namer(None))
    'Shadow DOM'
    >>> written_phrase("url-shortener", "a URL Shortener", Namer(None)) is None
    True
    """
    words = [w for w in slug.lower().split("-") if w]
    if len(words) < 2:
        return None
    pattern = r"[\s-]+".join(re.escape(w) + "s?" for w in words)
    for m in re.finditer(r"(?<![\w-])" + pattern + r"(?![\w-])", text, re.IGNORECASE):
        written = re.split(r"[\s-]+", m.group(0))
        if not all(w[:1].isupper() for w in written) or is_vocabulary(m.group(0)):
            continue
        if any(
            not is_vocabulary(w) and ((w.isupper() and len(w) >= 2) or _declared(w, namer))
            for w in written
        ):
            return " ".join(m.group(0).split())
    return None


def slug_name(slug: str, text: str, namer: Namer) -> tuple[str, str] | None:
    """The name a ``related`` slug no note is stands for, and its type: as the
    note's ``text`` writes it (rule 1), else by its shape (rule 2), else as the
    corpus writes it (rule 3); None for a topic."""
    if "-" in slug.strip("-") and (declared := _declared(slug.replace("-", " "), namer)):
        return declared  # a name the corpus declares, spelled as a slug
    if namer.gazetteer is not None and (spelled := namer.gazetteer.spelled(slug)) is not None:
        return spelled.name, spelled.type  # "atprotocol": the AT Protocol, without spaces
    written = written_form(slug, text) or written_phrase(slug, text, namer)
    if written is not None:
        known = _known(slug, namer)
        return written, known[1] if known else "PRODUCT"
    shaped = slug_shaped_name(slug, namer)
    if shaped is None and namer.gazetteer is not None:
        name = namer.gazetteer.written_name(slug)
        return (name, "PRODUCT") if name else None
    return shaped
