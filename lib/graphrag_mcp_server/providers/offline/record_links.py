"""Links that a text's layout states rather than a sentence: a form's field lines as one record,
a form's heading to its fields, a transcript's speaker to what their turn names, a paper's authors
to their affiliations; and a prose sentence's names to those of the sentence it follows on from."""

from __future__ import annotations

import re
from collections.abc import Callable

from graphrag_mcp_server.providers.offline.entities import Mentions, typed
from graphrag_mcp_server.providers.offline.labels import FIELD_LABEL
from graphrag_mcp_server.providers.offline.patterns import mention_of
from graphrag_mcp_server.providers.offline.text import LIST_ITEM

FIRST_PERSON = re.compile(r"\b(?:I|[Mm]e|[Mm]y|[Ww]e|[Uu]s|[Oo]ur)\b")
"""A first-person word: a letter's writer or a transcript's speaker speaks of themselves."""


RECORD_NAMES = 8
"""Names a run of field lines may hold for `record_links` to link them (more: a list, such as
a meeting's attendance, whose names are not one record's)."""


def record_links(
    sentences: list[str], present: list[list[str]], link: Callable[[str, str, str], None]
) -> None:
    """The names of consecutive field lines of a paragraph ('Applicant: ...', 'Agent: ...', 'Site:
    ...') linked to each other: a form's fields describe one record, as a table's row does."""
    run: list[int] = []
    for position in [*range(len(sentences)), len(sentences)]:
        if position < len(sentences) and FIELD_LABEL.match(sentences[position]):
            run.append(position)
            continue
        names = list(dict.fromkeys(name for line in run for name in present[line]))
        if 1 < len(names) <= RECORD_NAMES and len(run) > 1:
            evidence = " ".join(sentences[line] for line in run)
            for first, name in enumerate(names):
                for other in names[first + 1 :]:
                    link(name, other, evidence)
        run = []


def affiliation_links(text: str, names: list[str], link: Callable[[str, str, str], None]) -> None:
    """Names marked with numbers ('Priya Ramaswamy(1)', 'Tomasz Wieczorek (1,2)') linked to the
    names of the lines those numbers open ('(1) School of Geography, University of Birmingham'):
    a paper's authors and their affiliations, which no sentence states."""

    def written(line: str) -> list[str]:
        return [name for name in names if mention_of(name).search(line)]

    lines = [" ".join(line.split()) for line in text.splitlines()]
    numbered = {
        number[1]: (line, written(line)) for line in lines if (number := _NUMBERED_LINE.match(line))
    }
    for line in lines if numbered else ():
        for name in written(line) if "(" in line else ():
            marked = re.search(rf"{re.escape(name)} ?\((\d{{1,2}}(?:, ?\d{{1,2}})*)\)", line)
            for number in re.findall(r"\d+", marked[1]) if marked else ():
                affiliation, affiliated = numbered.get(number, ("", []))
                for other in affiliated:
                    link(name, other, f"{line} {affiliation}")


_NUMBERED_LINE = re.compile(r"\((\d{1,2})\) ")
"""A line opened by its number in brackets: a paper's affiliation ('(2) Institute of ...')."""


FIELD_NAMES = 3
"""Names a field line may hold for `form_links` to link them to the form's body: a line of more
is a list (a meeting's attendance, a letter's distribution), not the body's officers."""


def form_links(
    found: Mentions,
    sentences: list[str],
    present: list[list[str]],
    link: Callable[[str, str, str], None],
) -> None:
    """A form or register about one body (its heading, the text's first sentence that names
    anything, names one organisation and ends without a stop: 'Annual return 2023 - Fenwick &
    Daughters Limited') linked to the names its field lines give ('Directors: ...'), a line of
    at most FIELD_NAMES names."""
    if (heading := _heading_body(found, sentences, present)) is None:
        return
    first, body = heading
    for sentence, names in zip(sentences[first + 1 :], present[first + 1 :], strict=True):
        if FIELD_LABEL.match(sentence) and len(names) <= FIELD_NAMES:
            for name in names:
                link(body, name, f"{sentences[first]}: {sentence}")


def _heading_body(
    found: Mentions, sentences: list[str], present: list[list[str]]
) -> tuple[int, str] | None:
    """Where the text's first sentence that names anything is and the one organisation it names,
    where that sentence is a heading (no stop at its end) naming one organisation; else None."""
    first = next((position for position, names in enumerate(present) if names), None)
    if first is None or sentences[first].rstrip().endswith((".", "!", "?")):
        return None
    bodies = [name for name in present[first] if typed(name, found)[0] == "organization"]
    return (first, bodies[0]) if len(bodies) == 1 else None


def subject_links(
    found: Mentions,
    sentences: list[str],
    present: list[list[str]],
    link: Callable[[str, str, str], None],
) -> None:
    """A form or a CV about one person (its first line labelled with a name and naming one
    person: 'Name: Dorota Wiśniewska', 'Full name: ...'; or its first line the person's name
    alone: a CV's or a profile's heading) linked to the names of its later lines that name no
    person, at most FIELD_NAMES each: a CV's employers and places, a certificate's issuer."""
    labelled = (
        position
        for position, sentence in enumerate(sentences)
        if ((label := _LABEL.match(sentence)) and _NAME_LABEL.search(label[1]))
        or (position == 0 and _name_alone(sentence, present[0]))
    )
    position = next(labelled, None)
    if position is None or len(present[position]) != 1:
        return
    subject = present[position][0]
    if typed(subject, found)[0] != "person":
        return
    for sentence, names in zip(sentences[position + 1 :], present[position + 1 :], strict=True):
        if 0 < len(names) <= FIELD_NAMES and all(typed(n, found)[0] != "person" for n in names):
            for name in names:
                link(subject, name, f"{subject}: {sentence}")


def _name_alone(sentence: str, names: list[str]) -> bool:
    """`sentence` writes one name and no other word ('PRIYA NAIR', 'Helen Marsh (1931-2019)')."""
    return len(names) == 1 and not re.sub(re.escape(names[0]), "", sentence, flags=re.I).strip(
        " ()0123456789-–,."
    )


_NAME_LABEL = re.compile(r"\bname\b", re.IGNORECASE)
"""A label that a form's subject fills: 'Name', 'Full name', 'Name of applicant'."""
_LABEL = re.compile(r"^\W*([^:\n]{2,40}?)\W*:\s")
"""A line's label: 'Morwenna Pascoe: ...', 'Q: ...', 'Interviewer: ...'."""
_YOU = re.compile(r"\b(?:you|your)\b", re.IGNORECASE)
_BRACKETED = re.compile(r"\(([^()]+)\)?\s*$")
"""A name in brackets closing a label: 'HOST (Imogen Reyes)'."""


def _people(found: Mentions) -> dict[str, str]:
    """The persons found, by their lower-case names."""
    return {name.lower(): name for name in found.names if typed(name, found)[0] == "person"}


def _speaker(label: str, people: dict[str, str]) -> str | None:
    """The person a line's label names: 'Kofi Asante', or one in brackets after a role ('HOST
    (Imogen Reyes)'); None for another label ('Interviewer', 'Q')."""
    named = people.get(label.strip().lower())
    if named is None and (inner := _BRACKETED.search(label)):
        named = people.get(inner[1].strip().lower())
    return named


def speaker_turns(found: Mentions, sentences: list[str]) -> list[str | None]:
    """Each sentence's speaker: the person named by the last line label before it or on its
    line; None outside a person's turn."""
    people, speaker, turns = _people(found), None, []
    for sentence in sentences:
        if label := _LABEL.match(sentence):
            speaker = _speaker(label[1], people)
        turns.append(speaker)
    return turns


def speaker_links(
    sentences: list[str],
    present: list[list[str]],
    turns: list[str | None],
    link: Callable[[str, str, str], None],
) -> None:
    """A transcript's speaker (a person whose name labels a line; `turns`, speaker_turns) linked
    to the names of the first-person sentences of their turn, and to the names of a question put
    to them ('How did you come to buy Lower Treve Mill?') in the turn before, labelled otherwise
    ('Interviewer:')."""
    asked: list[str] = []
    for sentence, names, speaker in zip(sentences, present, turns, strict=True):
        if _LABEL.match(sentence):
            if speaker is None:
                asked = names if _YOU.search(sentence) else []
                continue
            for name in asked:
                link(speaker, name, f"Asked of {speaker}: {sentence}")
            asked = []
        if speaker is not None and FIRST_PERSON.search(sentence):
            for name in names:
                if name != speaker:
                    link(speaker, name, f"{speaker} said: {sentence}")


_QUOTED = re.compile(r"[\"“”]")


def body_voice_links(
    found: Mentions,
    sentences: list[str],
    present: list[list[str]],
    turns: list[str | None],
    link: Callable[[str, str, str], None],
) -> None:
    """A text without a writer whose first line is a heading naming one body (`_heading_body`: a
    press release, an annual review, a job advert: 'Annual Review 2025: Riverside Food Bank')
    speaks as that body in the first person, so the body is linked to the names of its
    first-person sentences ('Our volunteers, led by Bethany Osei, ...'); a quotation speaks for
    its speaker, not the body, and so does a transcript's speaker's turn (`turns`: 'KOFI ASANTE:
    My colleague ...'). A heading under an unnamed first line is a form's, not a voice (measured:
    taking it too moved six topics' global ranking)."""
    if (heading := _heading_body(found, sentences, present)) is None or heading[0] != 0:
        return
    first, body = heading
    for sentence, names, speaker in zip(
        sentences[first + 1 :], present[first + 1 :], turns[first + 1 :], strict=True
    ):
        if FIRST_PERSON.search(sentence) and not _QUOTED.search(sentence) and speaker is None:
            for name in names:
                link(body, name, f"{body}: {sentence}")


FOLLOW_ON_NAMES = 2
"""Names each of two prose sentences may hold for the second to follow on from the first (more:
a list or a crowd, whose names are not one account's)."""
_PROSE_END = re.compile(r"[.!?][\"'”’)]*$")
"""A sentence's end in prose: a line without one is a heading, an entry or a signature."""


def follows_on(previous: str, sentence: str, names: list[str], before: list[str]) -> bool:
    """Whether a prose sentence carries on the account of the one before, so that their names are
    linked: each names one or two, neither is a field, a list item or an entry (each a record of
    its own), and none of the second's names opens it ('The survey went to Lowmere Farm.' after
    'Otto Brandt joined the board.'; a name in the first three words starts news of its own)."""
    opening = {word.strip(".,:;'’\"()").casefold() for word in sentence.split()[:3]}
    return (
        0 < len(names) <= FOLLOW_ON_NAMES
        and 0 < len(before) <= FOLLOW_ON_NAMES
        and all(_in_prose(text) for text in (previous, sentence))
        and not any(opening & {word.casefold() for word in name.split()} for name in names)
    )


def _in_prose(sentence: str) -> bool:
    """Whether a sentence is running prose: it ends as one, and opens no field or list item."""
    return bool(
        _PROSE_END.search(sentence.strip())
        and not FIELD_LABEL.match(sentence)
        and not LIST_ITEM.match(sentence)
    )
