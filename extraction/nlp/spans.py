"""Entity span repair and proper-noun candidates for relation extraction.

The small model's entity boundaries are often a token off in ways that
matter for relations: a legal form left outside ("Fairmount Food Group" +
"LLC"), a job title or a possessive inside ("C.E.O. of Harlequin Enterprises
Ltd.", "MedStar Health’s"), a preposition trailing ("the Gray Herbarium of"),
two names run together ("Stanford University's Hoover Institution"). The
functions here fix such boundaries from the tokens alone, and offer
proper-noun runs the model did not tag at all ("TCG is a subsidiary of ...")
as *guessed* candidates that only the relation classifier sees.

Nothing here reads gold data; every rule is a statement about English names.
Spans in, spans out: the caller keeps ``label_`` (our entity type) and
``kb_id_`` (where the span came from).
"""

from __future__ import annotations

from collections.abc import Sequence

from spacy.tokens import Doc, Span, Token

from extraction.names import LEGAL_SUFFIXES, normalize_name

#: Trailing tokens that are never the end of a name ("the Gray Herbarium of").
_TRAILING_JUNK = frozenset(
    ["of", "on", "under", "at", "for", "in", "and", "&", "with", "from", "by", "to", "'s", "’s"]
)
#: Punctuation that never ends a name ("Samuel D. Waksal,", "Qatar Petroleum (").
_TRAILING_PUNCT = frozenset([",", ";", ":", "(", "[", "-", "–", "—", "/", '"', "“", "”"])
#: Words that make a name before a hyphen a modifier ("Java EE-based",
#: "Kubernetes-native"): the span's name ends before the hyphen.
_MODIFIER_TAILS = frozenset(
    """
    based powered compatible native driven centric specific like style inspired enabled
    friendly certified ready only focused oriented
    """.split()  # noqa: SIM905
)
#: Titles and roles the model pulls into an organisation ("C.E.O. of Harlequin").
ROLE_WORDS = frozenset(
    """
    ceo c.e.o. cto cfo coo cio cmo president vice-president chairman chairwoman chair
    chairperson director executive officer chief founder co-founder cofounder founders
    co-founders manager head member partner professor lecturer fellow dean editor
    secretary treasurer trustee principal owner publisher producer coach captain
    chef dr dr. mr mr. mrs mrs. ms ms. prof prof. sir parent ex former
    minister prime senator governor king queen prince princess pope general colonel
    lieutenant major sergeant admiral commander lord lady saint st st. judge justice mayor
    bishop archbishop cardinal rev rev. reverend father emperor sultan sheikh congressman
    congresswoman representative ambassador commissioner chancellor deputy assistant
    vp svp evp md gm coach superintendent provost rector
    """.split()  # noqa: SIM905
)
#: A role is cut off up to and including one of these ("Chair *for* X").
_ROLE_LINKS = frozenset(["of", "at", "for", "with", "-"])
#: Person-name tails a comma does not end ("Hugh McColl, Jr.").
_NAME_TAILS = frozenset(["jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "phd", "md", "esq", "esq."])
#: Tokens that never start or make up a guessed name on their own.
_NOT_NAMES = frozenset(
    """
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday i mr mrs ms dr prof
    """.split()  # noqa: SIM905
)
#: Words that make a guessed run an organisation rather than a person.
_ORG_HINTS = frozenset(
    """
    inc ltd llc corp co company corporation group bank university college institute school
    foundation association society network networks media systems technologies technology
    solutions services partners holdings capital ventures international industries
    entertainment studios records press publishing council committee agency department
    ministry museum centre center hospital church fellowship league club team airlines
    motors labs laboratories consulting communications pharmaceuticals energy fund trust
    """.split()  # noqa: SIM905
)
MAX_GUESSED_TOKENS = 6


#: First words of the legal forms, for a cheap rejection of most tokens.
_SUFFIX_HEADS = frozenset(suffix.split()[0] for suffix in LEGAL_SUFFIXES)


def _is_legal_suffix(tokens: Sequence[Token] | Span) -> bool:
    if not all(any(ch.isalpha() for ch in t.text) for t in tokens):
        return False  # "LLC (" normalises to "llc" too
    text = " ".join(t.text for t in tokens)
    return normalize_name(text, strip_legal=False) in LEGAL_SUFFIXES


def _suffix_end(doc: Doc, end: int, limit: int) -> int:
    """End of a legal form right after token ``end`` ("X, Inc.", "X Co., Ltd"), else ``end``.

    ``limit`` is where the sentence stops; a comma may precede each part.
    """
    best = end
    i = end
    for _ in range(2):  # "Co., Ltd", "Pty Ltd": at most two parts
        j = i + 1 if i < limit and doc[i].text == "," else i
        if j >= limit or doc[j].lower_.split(".")[0] not in _SUFFIX_HEADS:
            break
        found = 0
        for width in (3, 2, 1):  # "L. L. C." down to "LLC"
            if j + width <= limit and _is_legal_suffix(doc[j : j + width]):
                found = width
                break
        if not found or not doc[j].text[:1].isupper():
            break
        i = best = j + found
    return best


def _strip_role(span: Span) -> int:
    """Start after a leading title or role ("Co-Founder of Ensure Medical"), or the same start."""
    start, end = span.start, span.end
    doc = span.doc
    k = start
    while k < end and doc[k].lower_ in ("the", "a", "an"):
        k += 1
    if k + 2 < end and doc[k].lower_ in ("co", "vice") and doc[k + 1].text == "-":
        k += 2  # "Co-Founder", "Vice-Chair": the tokenizer splits the hyphen off
    if k >= end or doc[k].lower_ not in ROLE_WORDS:
        return start
    k += 1
    # "Chief Executive Officer of", "Parent DPI", "ex-Ritual": roles, then a link word
    while k < end and (doc[k].lower_ in ROLE_WORDS or doc[k].lower_ in ("&", "and")):
        k += 1
    if k < end and doc[k].lower_ in _ROLE_LINKS:
        k += 1
    elif k < end and doc[k - 1].lower_ in ("parent", "ex", "former", "chef", "sir"):
        pass  # "Parent DPI Specialty Foods", "Chef Elvin": no link word
    elif k < end and doc[k - 1].text.endswith(".") and doc[k - 1].lower_.startswith(("dr", "pr")):
        pass  # "Dr. Jane Doe"
    else:
        return start
    while k < end and doc[k].lower_ == "the":
        k += 1
    return k if k < end and doc[k].text[:1].isupper() else start


def repair_span(span: Span) -> list[tuple[int, int, str]]:
    """Token ranges and labels of the names inside one entity span.

    Parameters
    ----------
    span
        A merged entity span; ``label_`` is our entity type.

    Returns
    -------
    list of (start, end, label)
        Usually one range. Empty when nothing name-like is left; two when a
        possessive joins two names ("Stanford University's Hoover Institution").
    """
    doc = span.doc
    label = span.label_
    start, end = span.start, span.end
    if any(t.is_space and t.text.count("\n") >= 2 for t in span):
        return []  # "## Stability\n\nInitial releases": a heading and a paragraph are no name
    if label in ("ORG", "PERSON"):
        start = _strip_role(doc[start:end])
    parts: list[tuple[int, int]] = []
    cut = start
    for k in range(start, end):
        tok = doc[k]
        if tok.text == "(" or (label == "PERSON" and tok.text == ","):
            # "Qatar Petroleum (QP": the bracket's content is an alias, found
            # later; "Jim VandeHei, Harris": two people
            if label == "PERSON" and k + 1 < end and doc[k + 1].lower_ in _NAME_TAILS:
                continue
            parts.append((cut, k))
            cut = k + 1
            if tok.text == "(":
                cut = end
                break
        elif tok.tag_ == "POS" and label == "ORG" and k + 1 < end and k - cut >= 2:
            # "Stanford University's Hoover Institution"; "Louie's Finer Meats" is one name
            parts.append((cut, k))
            cut = k + 1
    parts.append((cut, end))
    out: list[tuple[int, int, str]] = []
    for s, e in parts:
        while e > s and (
            doc[e - 1].lower_ in _TRAILING_JUNK
            or doc[e - 1].text in _TRAILING_PUNCT
            or doc[e - 1].tag_ == "POS"
        ):
            e -= 1
        if e - s > 2 and doc[e - 1].lower_ in _MODIFIER_TAILS and doc[e - 2].text == "-":
            e -= 2  # "a Java EE-based server": the name is Java EE
        while s < e and (doc[s].text in _TRAILING_PUNCT or doc[s].text in (")", "]")):
            s += 1
        if e > s and any(ch.isalnum() for ch in doc[s:e].text):
            out.append((s, e, label))
    return out


def repair_spans(doc: Doc, spans: Sequence[Span]) -> list[Span]:
    """Entity spans with repaired boundaries, sorted and non-overlapping.

    Each span is trimmed and split by :func:`repair_span`; an organisation
    (or a name the model mistook for a person or place) followed by a legal
    form takes it in ("Sling Broadband, LLC", "Oliver LLP") and becomes an
    ORG, swallowing a separate mention of the bare form ("LLC").

    Examples
    --------
    >>> from extraction.nlp.extractor import shared_nlp
    >>> from spacy.tokens import Span
    >>> doc = shared_nlp().make_doc("He joined Sling Broadband , LLC in May.")
    >>> [s.text for s in repair_spans(doc, [Span(doc, 2, 4, label="ORG")])]
    ['Sling Broadband , LLC']
    """
    pieces: list[Span] = []
    for span in spans:
        for s, e, label in repair_span(span):
            pieces.append(Span(doc, s, e, label=label, kb_id=span.kb_id_))
    pieces.sort(key=lambda s: s.start)
    ends = sentence_ends(doc)
    pieces = _extend_names(doc, pieces, ends)
    out: list[Span] = []
    skip_until = -1
    for span in pieces:
        if span.start < skip_until:
            continue
        end = span.end
        if span.label_ in ("ORG", "PERSON", "LOCATION") and not _is_legal_suffix(span):
            end = _suffix_end(doc, span.end, ends[span.start])
            if end == span.end and len(span) > 1 and _is_legal_suffix(span[-1:]):
                # grown over its legal form already ("Rollings Oliver" + "LLP")
                span = Span(doc, span.start, end, label="ORG", kb_id=span.kb_id_)
        if end != span.end:
            span = Span(doc, span.start, end, label="ORG", kb_id=span.kb_id_)
            skip_until = end
        if out and span.start < out[-1].end:
            continue
        out.append(span)
    return out


def sentence_ends(doc: Doc) -> list[int]:
    """End token of the sentence of every token (the text's end if unparsed)."""
    if not doc.has_annotation("SENT_START"):
        return [len(doc)] * len(doc)
    ends: list[int] = []
    for sent in doc.sents:
        ends.extend([sent.end] * (sent.end - sent.start))
    return ends


def _extend_names(doc: Doc, spans: list[Span], ends: Sequence[int]) -> list[Span]:
    """Organisations and people grown over adjacent proper nouns NER left out.

    "Agha" + "Hasan Abedi", "DPI" + "Specialty Foods", "TIAA-CREF": a
    capitalised proper noun right next to a name, in the same sentence and
    no title ("CEO"), belongs to it. A hyphen between two proper nouns with
    no space joins them.
    """
    if not doc.has_annotation("TAG") or not spans:
        return spans
    used = bytearray(len(doc))
    for span in spans:
        used[span.start : span.end] = b"\x01" * (span.end - span.start)
    out: list[Span] = []
    for span in spans:
        if span.label_ not in ("ORG", "PERSON") or span.kb_id_ == "ruler":
            # a name the notes declare is whole as written; the capitalised words
            # after it make a product of it, if anything (names_after_seeds: "Apple TV")
            out.append(span)
            continue
        start, end = span.start, span.end
        while start > 0 and not doc[start].is_sent_start:
            if _name_token(doc[start - 1], used):
                start -= 1
            elif start > 1 and _hyphen_join(doc, start - 1) and _name_token(doc[start - 2], used):
                start -= 2
            else:
                break
        limit = ends[span.start]
        while end < limit:
            if _name_token(doc[end], used):
                end += 1
            elif end + 1 < limit and _hyphen_join(doc, end) and _name_token(doc[end + 1], used):
                end += 2
            else:
                break
        if (start, end) != (span.start, span.end):
            used[start:end] = b"\x01" * (end - start)
            span = Span(doc, start, end, label=span.label_, kb_id=span.kb_id_)
        out.append(span)
    return out


def _hyphen_join(doc: Doc, k: int) -> bool:
    """Is token ``k`` a hyphen written without spaces between two words?"""
    tok = doc[k]
    return tok.text == "-" and not tok.whitespace_ and not doc[k - 1].whitespace_


def name_chars(span: Span) -> tuple[int, int]:
    """Character range of the name a span holds, without the sentence's full stop.

    spaCy keeps "Inc." whole at the end of a sentence, where its dot is also
    the full stop; the name is "Stephens Inc" followed by the stop, as a
    reader (and KnowledgeNet's annotators) split it. A dot inside a sentence
    stays ("Stephens Inc. said").
    """
    start, end = span.start_char, span.end_char
    last = span[-1]
    if len(last) > 1 and last.text.endswith(".") and last.text.count(".") == 1:
        doc = span.doc
        k = last.i + 1
        while k < len(doc) and (doc[k].is_space or doc[k].text in ('"', "”", "’", ")", "]")):
            k += 1
        if k == len(doc) or doc[k].is_sent_start:
            end -= 1
    return start, end


def _name_token(tok: Token, used: bytearray) -> bool:
    """A capitalised proper noun outside every entity that is no title ("CEO")."""
    return (
        not used[tok.i]
        and tok.pos_ == "PROPN"
        and tok.text[:1].isupper()
        and not tok.is_punct
        and tok.lower_ not in ROLE_WORDS
        and tok.lower_ not in _NOT_NAMES
    )


def proper_noun_runs(doc: Doc, taken: Sequence[Span]) -> list[Span]:
    """Runs of proper nouns outside every entity span, as guessed names.

    "TCG is a subsidiary of ...", "ZUMA is headquartered in ...": the small
    model tags no entity, the tagger still sees a proper noun. A run is
    labelled ORG when it looks like one (an organisation word, an acronym, a
    legal form) and PERSON otherwise; the relation classifier knows these
    labels are guesses and may read either as the other.
    """
    if not doc.has_annotation("TAG"):
        return []
    used = bytearray(len(doc))
    for s in taken:
        used[s.start : s.end] = b"\x01" * (s.end - s.start)
    out: list[Span] = []
    k = 0
    n = len(doc)
    while k < n:
        tok = doc[k]
        if not _name_token(tok, used):
            k += 1
            continue
        e = k + 1
        while e < n and _name_token(doc[e], used) and not doc[e].is_sent_start:
            e += 1
        e = max(e, _suffix_end(doc, e, n))
        words = [t for t in doc[k:e] if t.is_alpha]
        if e - k <= MAX_GUESSED_TOKENS and words and not any(used[k:e]):
            org = any(t.lower_ in _ORG_HINTS for t in words) or _is_legal_suffix(doc[e - 1 : e])
            org = org or (len(words) == 1 and words[0].is_upper and len(words[0]) >= 2)
            out.append(Span(doc, k, e, label="ORG" if org else "PERSON", kb_id="guess"))
        k = e
    return out
