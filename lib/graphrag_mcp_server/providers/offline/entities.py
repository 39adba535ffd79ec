"""Finding named entities in text, the sentences mentioning them, and their canonical types."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graphrag_mcp_server.providers.offline import object_names, quoted_terms, table_cells
from graphrag_mcp_server.providers.offline.blocks import layout_cues
from graphrag_mcp_server.providers.offline.entity_types import (
    COMPETITOR,
    EVENT_HEADS,
    TITLED,
    context_cue,
    head,
    premises,
    publisher,
    type_and_reason,
)
from graphrag_mcp_server.providers.offline.labels import (
    bound_roles,
    defined_terms,
    parties_in_capitals,
    speakers,
)
from graphrag_mcp_server.providers.offline.legal_forms import bracketed, without_legal_form
from graphrag_mcp_server.providers.offline.lexicon import (
    HONORIFICS,
    ORGANISATION_HEADS,
    ORGANISATION_ROLES,
    PLACE_HEADS,
    TITLE_ABBREVIATIONS,
    TITLES,
    is_known_place,
    is_lower_case_body_noun,
)
from graphrag_mcp_server.providers.offline.name_forms import (
    acronyms,
    alone,
    first_bearers,
    headings_in_capitals,
    names_written_apart,
    nicknames,
    surface_forms,
    tail_names,
    title_before_surname,
    words_of_longer_names,
)
from graphrag_mcp_server.providers.offline.name_marks import comma_before_a_form, elided_name_word
from graphrag_mcp_server.providers.offline.name_runs import (
    core_count,
    only_letters,
    split_run,
    starts_with_particle,
    without_post_nominals,
)
from graphrag_mcp_server.providers.offline.name_words import (
    address_towns,
    and_in_a_body,
    and_in_a_law,
    before_a_form,
    closes_a_listed_body,
    continues_body,
    continues_name,
    cued_single_name,
    in_place,
    is_form_word,
    is_name_word,
    is_single_name,
    listed_in_a_body,
    opens_sentence,
    past_tense_before_name,
    possessive_in_name,
    strip_possessive,
    tokens_of,
    words_before,
)
from graphrag_mcp_server.providers.offline.no_kind import (
    has_no_kind,
    heading_only,
    is_common_word,
    office_word,
    peoples_word,
    plain_word,
    vocabulary_phrase,
)
from graphrag_mcp_server.providers.offline.patterns import mention_of, written_in
from graphrag_mcp_server.providers.offline.run_shapes import (
    all_common,
    dateline,
    is_common_head,
    is_name_start,
    names_a_field,
    numbered_label,
    person_after_title,
    plural_title,
    qualifies_title,
    role_as_surname,
    two_word_title,
)
from graphrag_mcp_server.providers.offline.street_names import lower_case_type
from graphrag_mcp_server.providers.offline.structure_words import (
    COMPASS,
    DEGREES,
    ROLE_WORDS,
)
from graphrag_mcp_server.providers.offline.text import (
    JOINERS,
    SHORT_LINE_WORDS,
    WORD,
    split_sentences,
)

# fmt: off
_PLACE_PREPOSITIONS = frozenset(
    {
        "in", "at", "near", "from", "to", "around", "outside", "across", "beyond", "towards",
        "toward", "via", "off", "along",
    }
)
# fmt: on
_OPENING_PREPOSITIONS = _PLACE_PREPOSITIONS - {"to", "off"}
"""Place prepositions that open a sentence before a single place ('From Skardu we travelled')."""
_TYPE_CUES = {"organization": ORGANISATION_HEADS, "geo": PLACE_HEADS, "event": EVENT_HEADS}
"""Head nouns of organisations, places and events (general lists: see lexicon.py)."""

ROLE_HEADS = ORGANISATION_ROLES | ROLE_WORDS
"""Words of a role in a body ('Chief Executive of ...', 'Head of ...', 'CEO ... said')."""
_WEAK = frozenset(
    ["default", "context", "head noun first", "plural noun", "'the X'", "quoted", "trade in -ing"]
)
"""Reasons that type a name by words that a work's title also has ("A Winter Crossing")."""
_ADDRESSES = re.compile(r"\S+@\S+|https?://\S+|www\.\S+")
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")


def _run_names(words: list[str], at_start: bool, previous: str) -> list[tuple[str, bool, bool]]:
    """Names in one run of capitalised words, each with whether it is a single word after a place
    preposition and whether it is a single word after a title ('Mr Harlan'; `_sentence_names`
    keeps other single words only where they start a heading)."""
    while words and at_start and (opens_sentence(words) or past_tense_before_name(words)):
        if (
            len(words) == 2
            and words[0].lower() in _OPENING_PREPOSITIONS
            and not plain_word(words[1])
        ):
            previous = words[0].lower()  # 'From Skardu we travelled', 'In Kettering, the ...'
        words = words[1:]
    if len(words) > 2 and words[0].lower() in COMPASS and words[1] == "of":
        words, previous = words[2:], "in"  # 'North of Tullyvin the road narrows'
    if len(words) > 3 and words[1] == "of" and is_common_head(words[0]):
        words = words[2:]  # 'Users of Lumen Cloud', 'Complaint of Halden Athletic'
    if len(words) > 2 and words[1] == "of" and plural_title(words[0]):
        words = words[2:]  # 'Mayors of Kettering', 'Bishops of Durham': a heading's office
    if words and words[0].lower() in DEGREES and all_common(words[1:]):
        return []  # 'MEng Civil Engineering': a degree and its subject
    titled, title = False, ""  # title: the last word left off
    if two_word_title(words):  # 'El Hadj Oumar Sy', 'Tan Sri Lim Kok Wing'
        titled, title, words = True, words[1].lower(), words[2:]
    while words and (
        not is_name_start(words)
        or (words[0].lower() in JOINERS and not starts_with_particle(words))
        or qualifies_title(words)
    ):
        titled = titled or words[0].lower() in TITLES
        title, words = words[0].lower(), words[1:]
    if titled and len(words) > 2 and words[1] == "of" and head(words[0]) in ROLE_HEADS:
        words = words[2:]  # 'Chief Executive of Greystone Renewables': a role, then its body
    if titled and title in ("of", "for") and names_a_field(words):
        return []  # 'Director of Enforcement and Market Oversight': the title's field, no body
    if (named := person_after_title(words)) is not words:
        titled, words = True, named
        while words and not is_name_start(words):  # 'Her Honour Judge Celia Marchbank'
            words = words[1:]
    words = without_post_nominals(words)  # 'Chukwuemeka Obi SAN', 'Harriet Doyle RIAI'
    if only_letters(words):
        return []  # 'Structural Engineer, CEng MIStructE'
    role = False
    while (
        words
        and not role_as_surname(words)
        and (
            words[-1].lower() in ROLE_WORDS - _TYPE_CUES["geo"] - _TYPE_CUES["organization"]
            or words[-1].lower() in JOINERS
        )
    ):
        role = role or words[-1].lower() in ROLE_WORDS
        words = words[:-1]
    if role and words and peoples_word(words[0]) and all(map(office_word, words)):
        return []  # 'French Foreign Secretary': an office's title, no name
    if core_count(words) == 1:
        word = words[-1]  # after its particle, if any ('La Paz')
        honorific = title in HONORIFICS | TITLE_ABBREVIATIONS | {"dear"}  # 'Dear Jedediah,'
        if honorific and not role and len(words) == 1 and is_single_name(word):
            if title in ("hon", "dear") and plain_word(word):
                return []  # 'my hon. Friend', 'Dear Friend': a way of address, no name
            return [(word, False, True)]  # 'Mr Harlan': a person the text may not name in full
        if not is_single_name(word) or titled or (role and not is_known_place(word)):
            return []  # 'Programme' of 'Programme Director'; not 'Leeds' of 'Leeds Director'
        if previous == "the" or any(word.lower() in cues for cues in _TYPE_CUES.values()):
            return []  # 'the Council', 'the Cabinet': a body named by its kind
        return [(" ".join(words), previous in _PLACE_PREPOSITIONS, False)]
    return [
        (" ".join(part), core_count(part) == 1, False)
        for part in split_run(words)
        if core_count(part) >= 2 or (len(part) == 1 and is_known_place(part[0]))
    ]  # 'Ewa Lindgren of Vantaa': a person and a place


def _sentence_names(sentence: str) -> list[tuple[str, bool, bool]]:
    """Capitalised names in a sentence, each with whether it is a single word found where a place is
    (after in/at/near...) and whether it is weak (a heading's first word before a lower-case one,
    which find_entities keeps only if the text writes it again); a single word elsewhere is kept
    where it starts a heading (a short line of two words or more without a full stop, not a
    numbered item) or mid-sentence where the gazetteer knows it (also after a past tense that opens
    the sentence: 'Left Aberdeen at six')."""
    tokens = tokens_of(sentence)
    names: list[tuple[str, bool, bool]] = []
    run: list[str] = []
    start = 0
    words = [token for token in tokens if token[0].isalnum()]
    heading = (
        bool(words)
        and len(words) <= SHORT_LINE_WORDS
        and not tokens[0][0].isdigit()
        and not sentence.rstrip().endswith((".", "!", "?"))
    )

    last_place = -2  # where the last single place's run ended

    def flush() -> None:
        nonlocal last_place
        if run:
            at_start = not any(t[0].isalpha() for t in tokens[:start])
            previous = tokens[start - 1].lower() if start else ""
            after = tokens[start + len(run)] if start + len(run) < len(tokens) else ""
            starts_heading = heading and at_start and len(words) > 1
            weak = starts_heading and after.islower()  # 'Catalogue entry', 'Kestlewick flood ...'
            if after == "." and run[-1].lower() in TITLE_ABBREVIATIONS:
                run.pop()  # 'Sig.', 'Hospital Director Dr.': an abbreviated title before its name
                if not run or run[-1].lower() in TITLES:  # 'Civil Surgeon Dr.': all a title
                    run.clear()
                    return
            opens = at_start or previous in (":", "|")  # 'Contract: Resurfacing', a table's cell
            title = tokens[start - 2 : start - 1] if previous == "." and start > 1 else []
            if title and title[0].lower() not in TITLE_ABBREVIATIONS:
                title = []  # else 'Mr. Harlan': the title the full stop cut off
            if in_place(tokens, start, len(run)) or (
                previous in ("and", "or") and start - 1 == last_place
            ):  # "Carrowmore's harbour", 'north of X', 'from Ballykeel and Ardnagh'
                previous = "in"
            for name, where_a_place_is, titled in _run_names(title + run, opens, previous):
                single = " " not in name
                cued = single and (titled or cued_single_name(name, sentence))  # 'Okafor, who ...'
                if (
                    not single
                    or cued
                    or where_a_place_is
                    # a heading's first word: not 'Episode 42 notes', nor 'Lot 1 - Pipes'
                    or (starts_heading and not plain_word(name) and not numbered_label(name, after))
                    or ((not at_start or past_tense_before_name(run)) and is_known_place(name))
                    or (at_start and dateline(name, after))
                ):
                    names.append((name, single and not cued, weak and single))
                    if where_a_place_is:
                        last_place = start + len(run)
            run.clear()

    for index, token in enumerate(tokens):
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if run and (
            continues_name(run[-1], token, following)
            or listed_in_a_body(run, tokens[index:])
            or comma_before_a_form(run, tokens[:start][-2:], tokens[index : index + 5])
        ):
            run[-1] += token  # "Weavers'", "St.", 'Department for Culture, Media and Sport'
            continue
        word, possessive = strip_possessive(token)
        if possessive and possessive_in_name(run, token, tokens[index + 1 : index + 4]):
            word, possessive = token, False  # "St Oswald's Church", "King's Lynn"
        joins = (
            bool(run)
            and (
                word.lower() in JOINERS
                or (_YEAR.match(word) is not None and run[-1].lower() in JOINERS)
                or continues_body(run, word, following, is_name_word(following))
                or is_form_word(word)
                or bracketed(word)  # '(Mauritius)' before 'Ltd'
                or elided_name_word(word)  # "de l'Île Maurice"
                or lower_case_type(word)  # 'Kossuth utca'
                or before_a_form(tokens[index : index + 4])
                or and_in_a_body(run, tokens[index : index + 3])
                or and_in_a_law(tokens[index : index + 4])
                or closes_a_listed_body(run, tokens[index : index + 2])
                or is_known_place(" ".join([run[-1], *tokens[index : index + 2]]))  # 'X upon Tyne'
            )
        )
        if is_name_word(word) or joins:
            if not run:
                start = index
            run.append(word)
            if possessive:
                flush()
        else:
            flush()
    flush()
    return names


@dataclass
class Mentions:
    """Named entities of a text and the sentences mentioning each."""

    names: list[str]
    quoted: set[str]
    places: set[str]
    sentences: dict[str, list[str]]
    institutions: set[str] = field(default_factory=set)
    """Names written after "the" ('the Ormond Players'): a body or a place, not a person."""
    cues: dict[str, str | None] = field(default_factory=dict)
    """What the words around each name say its type is (entity_types.context_cue)."""
    roles: dict[str, list[str]] = field(default_factory=dict)
    """Defined terms bound to the party they name ('Fennick Cabling Ltd': ['Supplier'])."""


def find_entities(text: str) -> Mentions:
    """Find names in ``text`` and the sentences that mention them."""
    sentences = split_sentences(text)
    found: dict[str, str] = {}
    places: set[str] = set()
    nicknamed = nicknames(text)
    for sentence in sentences:
        for full, nickname in nicknamed:  # in the order the text names them
            if nickname in sentence and full.split()[-1] in sentence:
                found.setdefault(full.upper(), full)
        for name, is_place, weak in _sentence_names(sentence):
            if weak and len(mention_of(name).findall(text)) < 2:
                continue  # a heading's first word before lower case, once: 'Catalogue entry'
            if found.setdefault(name.upper(), name).isupper() and not name.isupper():
                found[name.upper()] = name  # the form in running text, not a capitals heading's
            if is_place:
                places.add(found[name.upper()])
    nicks = {nickname for _, nickname in nicknamed}
    for full, nick in nicknamed:  # 'Margaret "Peggy" Doyle': one person, 'Peggy Doyle' too
        for form in (nick, f"{nick} {full.split()[-1]}"):
            found.pop(form.upper(), None)
    apart = names_written_apart(text)  # 'ARCHER, Judith Mary': 'Judith Mary Archer', one name
    for full, written in apart:
        found.setdefault(full.upper(), full)
        for part in written.upper().split(", "):
            places.discard(found.pop(part, ""))
    tables = table_cells.columns(text)
    for cell in table_cells.place_cells(tables):  # a 'Village' column's places, known or not
        places.add(found.setdefault(cell.upper(), cell))
    labels = table_cells.header_cells(tables)  # a field line's label is its column's header
    speaking = speakers(  # 'LUCIA VEGA:' of a transcript: a name, not a label
        found,
        text,
        lambda name: type_and_reason(name, quoted=False, place=False)[1] == "first name",
    )
    labels -= speaking
    terms = defined_terms(text)
    not_names = labels | {term.upper() for term, _ in terms}
    parties = parties_in_capitals(text, terms)
    for name in filter(None, map(publisher, list(found.values()))):
        found.setdefault(name.upper(), name)  # 'St Brigid's Parish' of its 'Parish Bulletin'
    not_names |= {  # 'Supply Agreement', 'the tug Brenda Mae'
        key
        for key, name in found.items()
        if has_no_kind(name) or object_names.names_a_thing(text, name)
    }
    not_names |= headings_in_capitals(found, parties | speaking, text)  # 'CONTRACT FOR THE ...'
    for key in not_names & found.keys():
        places.discard(found.pop(key))
    prose = _ADDRESSES.sub(" ", text)  # 'press@norvik.se' writes no word of the text in lower case
    lowercase = {word for word in WORD.findall(prose) if word.islower()}
    name_words = words_of_longer_names(text, list(found.values()), lowercase, places)
    for key, name in list(found.items()):
        if " " not in name and (
            key in name_words
            or name.lower() in lowercase
            or name.lower().removesuffix("s") in lowercase
        ):
            places.discard(
                found.pop(key)
            )  # 'Dear Eleanor' or 'Ms Qureshi' of a person; 'Funding' of prose
        elif " " in name and _generic(name, lowercase):
            # 'Community Orchard Planting Day', 'Public Meeting': words of the text, capitalised
            del found[key]
    before = {name: words_before(text, name) for name in found.values() if " " in name}
    places |= {
        name for name, words in before.items() if words & _PLACE_PREPOSITIONS - {"to", "from"}
    }  # 'in Nether Ashcombe'
    places |= address_towns(text, list(found.values()), list(before))
    institutions = {name for name, words in before.items() if "the" in words}
    quoted_works = quoted_terms.work_titles(text)
    quoted = {
        found.setdefault(q.upper(), q)
        for q in quoted_terms.quoted_names(text, quoted_works)
        if q.upper() not in not_names and q not in nicks
    }
    tails = tail_names(list(found.values()), places, text)
    names = [n for n in found.values() if not any(n in t for t in tails.values())]
    names = [n for n in names if not title_before_surname(n, found, text)]  # 'PCSO Tregarthen'
    roles = bound_roles(text, terms, names)
    forms = surface_forms(names, tails, quoted | places, lowercase)
    for full, nickname in nicknamed + apart:
        forms[full].append(nickname)
    for name, acronym in acronyms(text, names):  # 'Sindicato ... do Sul (STAFS)'
        forms[name].append(acronym)
    for party, bound in roles.items():  # 'the Supplier', 'the respondent'; "Halvard" alone
        forms[party] += [
            f"{article} {written}"
            for term in bound
            for written in dict.fromkeys([term, term.lower()])
            for article in ("the", "The")
        ]
        forms[party] += [term for term in bound if not is_common_word(term)]
    shared = first_bearers(names, quoted | places)
    mentions = {
        name: [
            s
            for s in sentences
            if any(written_in(s, f) for f in forms[name])
            or (name in shared and alone(s, name, shared[name]))
        ]
        for name in names
    }
    cues = {name: context_cue(text, name) for name in names}
    cues = {  # a single place word is a person's only after a title, a body's only as premises
        name: cue
        for name, cue in cues.items()
        if " " in name
        or name not in places
        or cue in (TITLED, COMPETITOR)
        or (cue and premises(text, name))
    }
    cues |= layout_cues(
        text,
        names,
        table_cells.body_cells(tables),
        lambda name: type_and_reason(
            name,
            quoted=name in quoted,
            place=name in places,
            institution=name in institutions,
            cue=cues.get(name),
        ),
    )
    mentioned = Mentions(names, quoted, places, mentions, institutions, cues, roles)
    values = table_cells.value_cells(tables)  # a 'Variety' or 'Status' column's cells
    outside = quoted_terms.outside_works(text, quoted_works)
    works = {work.upper() for work in quoted_works}
    mentioned.names = [
        n
        for n in names
        if not vocabulary_phrase(
            n,
            reason := typed(n, mentioned)[1],
            n in institutions,
            not n.isupper() and heading_only(n, text),  # capitals: the heading rule above
            n in quoted,
        )
        and not (reason in ("default", "context") and n.upper() in values)
        # not only in a work's title ('"Salt Roads"', a play's: no place)
        and ((reason not in _WEAK and n.upper() not in works) or written_in(outside, n))
    ]
    return mentioned


def _generic(name: str, lowercase: set[str]) -> bool:
    """A capitalised phrase of words the text also writes in lower case, with no organisation or
    place word at its end (those name a body or a place: 'Parish Council', 'Green Lane')."""
    words = [word.lower() for word in name.split() if word.lower() not in JOINERS]
    ends_in_cue = (
        words[-1] in _TYPE_CUES["organization"]
        or words[-1] in _TYPE_CUES["geo"]
        or is_lower_case_body_noun(name.split()[-1])
    )
    return not ends_in_cue and all(word in lowercase for word in words)


def typed(name: str, found: Mentions) -> tuple[str, str]:
    """The canonical type of one of `found`'s names and the evidence that gave it ('Brannock
    Salvage' is an organisation where the text also writes 'Brannock Salvage Ltd')."""
    if any(  # not 'Bhutan' by 'Bhutan Rural Enterprise Bank Limited'
        other.startswith(f"{name} ") and without_legal_form(other.split()) == name.split()
        for other in found.names
    ):
        return "organization", "legal form"
    return type_and_reason(
        name,
        quoted=name in found.quoted,
        place=name in found.places,
        institution=name in found.institutions,
        cue=found.cues.get(name),
    )
