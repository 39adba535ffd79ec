"""One company under one name: entity titles that differ only by a company legal form ('FJORDLAKS
HAVBRUK AS', 'FJORDLAKS HAVBRUK') are renamed to one title before graphrag merges the graph, and
so is a person named by surname alone ('OKAFOR') to the one person of the graph whose full name
ends in it ('AMAKA OKAFOR'), and one named without a middle name ('WALTER PRUITT') to the one
person of the graph written with first name, middle names and surname ('WALTER JAMES PRUITT').

graphrag merges extracted entities by their exact title, and a model (the offline one or an LLM)
writes a company's name as each text writes it: with its legal form in a letterhead or a contract,
without it in running text. The two titles were two entities, often of two types, and the links
that the text states were split between them. Here a title whose words end in legal forms
(cleanco's list of every country's) and the titles that are its words without them are made one
entity under the title written with the legal form, when nothing says they are two: the plain
title is not a place (a company named after its town) nor a person's name (a firm named after its
founder), and the titles with a legal form do not name two kinds of company ('ACME INC',
'ACME LTD'). The rows stored for each text unit keep the titles as extracted; the renaming is
made again on every run, from the whole graph's titles. Titles of one kind that differ only by
accents or hyphens ('JOSÉ IBÁÑEZ', 'JOSE IBANEZ') are one entity too.
"""

import json
import unicodedata
from collections import Counter, defaultdict
from functools import cache, lru_cache
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.indexing.extracted_rows import ENTITY, keyed_rows
from graphrag_mcp_server.providers.offline.legal_forms import (
    legal_forms,
    without_legal_form,
)
from graphrag_mcp_server.providers.offline.lexicon import (
    is_first_name,
)

if TYPE_CHECKING:
    import pyarrow as pa

Renames = dict[str, tuple[str, str]]
"""An entity title renamed: its new title and type."""

PLACE_TYPES = frozenset({"GEO", "LOCATION", "PLACE", "GPE", "COUNTRY", "CITY"})
"""Entity types of places (graphrag's default `geo`, and the words models use for it)."""
PERSON_TYPES = frozenset({"PERSON", "PEOPLE"})


def renames(rows: "pa.Table") -> Renames:
    """The titles of the entity rows of `rows` (extracted_rows.py's table) to rename, each to the
    title written with a legal form that stands for the same company, and that title's type."""
    types: dict[str, Counter[str]] = defaultdict(Counter)
    for (title, entity_type), count in _entity_rows(rows, ENTITY).items():
        types[title][entity_type.upper()] += count
    by_plain: dict[str, list[str]] = defaultdict(list)
    for title in types:
        by_plain[_plain(title).casefold()].append(title)
    renamed: Renames = {}
    for titles in by_plain.values():
        if len(titles) > 1:
            renamed.update(_one_company(titles, types))
    kinds = {title: _kind(counts) for title, counts in types.items()}
    middle = _middle_names(kinds)
    renamed.update(middle)
    renamed.update(_surnames({title: kind for title, kind in kinds.items() if title not in middle}))
    for title, (target, kind) in _spellings(types, kinds).items():
        if title not in renamed and target not in renamed:
            renamed[title] = (target, kind)
    return {title: _last_of(title, renamed) for title in renamed}


def _last_of(title: str, renamed: Renames) -> tuple[str, str]:
    """Where `title`'s renames end ('WALTER PRUITT' -> 'WALTER JAMES PRUITT' -> a spelling of it
    with accents): a title renamed to one that is renamed too takes the last one's title."""
    seen = {title}
    target = renamed[title]
    while target[0] in renamed and target[0] not in seen:
        seen.add(target[0])
        target = renamed[target[0]]
    return target


def _middle_names(kinds: dict[str, str]) -> Renames:
    """A person titled by first name and surname ('WALTER PRUITT'), renamed to the one person of
    the whole graph written with the same first name and surname and middle names between them
    ('WALTER JAMES PRUITT'); not where two such people are named ('WALTER JAMES PRUITT',
    'WALTER HENRY PRUITT': which of them the short name means is unknown); `kinds`: each
    title's type (`_kind`)."""
    people = [title for title, kind in kinds.items() if kind in PERSON_TYPES]
    longer: dict[tuple[str, str], list[str]] = defaultdict(list)
    for title in people:
        words = title.split()
        if len(words) > 2:
            longer[(words[0], words[-1])].append(title)
    renamed: Renames = {}
    for title in people:
        words = title.split()
        if len(words) == 2 and len(named := longer.get((words[0], words[1]), [])) == 1:
            renamed[title] = (named[0], kinds[named[0]])
    return renamed


def _spellings(types: dict[str, Counter[str]], kinds: dict[str, str]) -> Renames:
    """Titles of one kind written with and without accents or hyphens ('JOSÉ IBÁÑEZ' and 'JOSE
    IBANEZ', 'ANNE-MARIE DUVAL' and 'ANNE MARIE DUVAL'), renamed to the spelling written most
    often (on a tie, the one with more accents and hyphens): one entity, not two. `kinds`: each
    title's type (`_kind` of its `types`)."""
    by_folded: dict[tuple[str, str], list[str]] = defaultdict(list)
    for title, kind in kinds.items():
        by_folded[(_folded(title), kind)].append(title)
    renamed: Renames = {}
    for (_, kind), titles in by_folded.items():
        if len(titles) > 1:
            target = max(titles, key=lambda t: (sum(types[t].values()), _marks(t), t))
            renamed.update({title: (target, kind) for title in titles if title != target})
    return renamed


@lru_cache(maxsize=1 << 16)
def _folded(title: str) -> str:
    """`title` without accents, its hyphens read as spaces, in upper case (an ASCII title has no
    accent to take off: most of a graph's titles, not decomposed one character at a time)."""
    if title.isascii():
        return " ".join(title.replace("-", " ").upper().split())
    letters = unicodedata.normalize("NFKD", title.replace("-", " "))
    return " ".join("".join(c for c in letters if not unicodedata.combining(c)).upper().split())


def _marks(title: str) -> int:
    """How many letters of `title` carry an accent, and how many hyphens it has."""
    return sum(not character.isascii() for character in title) + title.count("-")


def _surnames(kinds: dict[str, str]) -> Renames:
    """A person titled by one word that is no first name ('OKAFOR', of a text that writes only
    'Dr Okafor'), renamed to the one person of the whole graph whose name ends in that word
    ('AMAKA OKAFOR'); not where two people's names end in it. `kinds`: each title's type."""
    people = [title for title, kind in kinds.items() if kind in PERSON_TYPES]
    full: dict[str, list[str]] = defaultdict(list)
    for title in people:
        if " " in title:
            full[title.split()[-1]].append(title)
    return {
        title: (named[0], kinds[named[0]])
        for title in people
        if " " not in title and not is_first_name(title) and len(named := full[title]) == 1
    }


def _kind(types: Counter[str]) -> str:
    """The type a title was given most often (the first given on a tie, as `most_common`)."""
    return max(types, key=types.__getitem__)


def _entity_rows(rows: "pa.Table", kind: int) -> Counter[tuple[str, str]]:
    """How many rows of `rows` of `kind` each (title, type) has (rows ordered by kind, as
    extracted_rows.in_order leaves them)."""
    import numpy as np

    _, titles, types, pairs = keyed_rows(rows, kind)
    _, first_rows, counts = np.unique(pairs, return_index=True, return_counts=True)
    title_names, type_names = titles.dictionary.to_pylist(), types.dictionary.to_pylist()
    title_at = titles.indices.to_numpy(zero_copy_only=False)[first_rows]
    type_at = types.indices.to_numpy(zero_copy_only=False)[first_rows]
    return Counter(
        {
            (title_names[title], type_names[entity_type]): int(count)
            for title, entity_type, count in zip(title_at, type_at, counts, strict=True)
        }
    )


@lru_cache(maxsize=1 << 16)
def _plain(title: str) -> str:
    """`title` without the legal forms that end it ('BURULLUS GINNING COMPANY S.A.E.' ->
    'BURULLUS GINNING'; 'ACME (UK) LTD' -> 'ACME'); itself when it ends in none."""
    words = title.split()
    if len(words) < 2 or words[-1].strip("().,").replace(".", "").lower() not in _last_words():
        return title
    while len(plain := without_legal_form(words)) < len(words):
        words = plain
    return " ".join(words)


@cache
def _last_words() -> frozenset[str]:
    """The last word of every legal form of cleanco's list: a title ending in none has none."""
    return frozenset(form[-1] for form in legal_forms())


def _one_company(titles: list[str], types: dict[str, Counter[str]]) -> Renames:
    """The renames among titles with the same plain name: each to the one written with a legal
    form most often, when every such title names the same kind of company."""
    formal = [title for title in titles if _plain(title) != title]
    if not formal or not _one_kind(formal):
        return {}
    target = max(formal, key=lambda title: (sum(types[title].values()), len(title), title))
    kind = types[target].most_common(1)[0][0]
    return {
        title: (target, kind)
        for title in titles
        if title != target and (title in formal or _may_be_the_company(title, types[title]))
    }


def _may_be_the_company(title: str, types: Counter[str]) -> bool:
    """A title without a legal form may be the company's: not typed a place, and not a person's
    name (a single word or one starting with a first name) typed a person."""
    kind = types.most_common(1)[0][0]
    if kind in PLACE_TYPES:
        return False
    words = title.split()
    return kind not in PERSON_TYPES or (len(words) > 1 and not is_first_name(words[0]))


def _one_kind(formal: list[str]) -> bool:
    """The legal forms ending `formal`'s titles name one kind of company: by cleanco's types
    ('LTD' and 'LIMITED': Limited), or each title's forms begin with another's ('COMPANY',
    'COMPANY S.A.E.')."""
    forms = sorted((_form(title) for title in formal), key=len)
    kinds = {_kinds().get(" ".join(form), " ".join(form)) for form in forms}
    return len(kinds) == 1 or all(
        longer[: len(shorter)] == shorter for shorter, longer in zip(forms, forms[1:], strict=False)
    )


def _form(title: str) -> list[str]:
    """The legal forms ending `title`, in lower case without dots ('S.R.L.' -> ['srl'])."""
    return title[len(_plain(title)) :].replace(".", "").replace(",", "").casefold().split()


@cache
def _kinds() -> dict[str, str]:
    """cleanco's legal forms, written without dots, and the kind of company each names (the first
    kind cleanco lists for a form that names two)."""
    from cleanco.classify import typesources

    kinds: dict[str, str] = {}
    for kind, form in typesources():
        kinds.setdefault(form.replace(".", "").replace(",", "").casefold(), kind)
    return kinds


def recorded(names: Renames) -> bytes:
    """`names` as a version records them (the extraction rows' schema metadata)."""
    return json.dumps(names, sort_keys=True).encode()


def read_recorded(value: bytes | None) -> Renames:
    """The renames a version recorded (`recorded`); none for a version stored before them."""
    if value is None:
        return {}
    return {title: (target, kind) for title, (target, kind) in json.loads(value).items()}


def renamed(rows: "pa.Table", names: Renames) -> "pa.Table":
    """`rows` with entity titles and relationship ends renamed by `names` (entity rows also given
    the new title's type); a relationship between two titles that became one is left out."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not names or rows.num_rows == 0:
        return rows
    keys = pa.array(list(names), pa.string())
    titles = pa.array([title for title, _ in names.values()], pa.string())
    kinds = pa.array([kind for _, kind in names.values()], pa.string())
    entity = pc.equal(rows["kind"], ENTITY)
    first_at = pc.index_in(rows["first"], value_set=keys)
    second_at = pc.index_in(rows["second"], value_set=keys)
    first = pc.if_else(pc.is_valid(first_at), pc.take(titles, first_at), rows["first"])
    new_kind = pc.if_else(pc.is_valid(first_at), pc.take(kinds, first_at), rows["second"])
    other_end = pc.if_else(pc.is_valid(second_at), pc.take(titles, second_at), rows["second"])
    second = pc.if_else(entity, new_kind, other_end)
    was_loop = pc.equal(rows["first"], rows["second"])
    looped = pc.and_(pc.and_(pc.invert(entity), pc.equal(first, second)), pc.invert(was_loop))
    result = rows.set_column(rows.schema.get_field_index("first"), "first", first)
    result = result.set_column(result.schema.get_field_index("second"), "second", second)
    return result.filter(pc.invert(pc.fill_null(looped, False)))
