"""Signature and address blocks: a person's name on one short line, their role on the next, then
their organisation and its address ('Thandiwe Mokoena / Chief Technology Officer / Karoo Compute
(Pty) Ltd / 4th Floor, 22 Bree Street'). The layout says what a line's name is where its words
do not: a name alone on a line below the role line is the person's body, and a name on the role
line is part of the role ('Gerente de Compras'), not a second person."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from graphrag_mcp_server.providers.offline.entity_types import honorific_before
from graphrag_mcp_server.providers.offline.patterns import mention_of
from graphrag_mcp_server.providers.offline.text import (
    PARAGRAPH_BREAK,
    SHORT_LINE_WORDS,
    table_rows,
)

BLOCK_LINES = 8
"""The most lines a signature or address block holds (a name, a role, a body, an address of up to
three lines, a telephone and an e-mail address)."""
STRONG_PERSON = frozenset(["first name"])
"""Reasons that type a name as a person by its own words: such a name on the line after a
person's is a second person, not a role."""
LAYOUT_YIELDS = frozenset(["default", "context", "family name first"])
"""Reasons for 'person' that a block's layout overrides: words that do not say what the name
is, or words around it elsewhere in the text."""
_MARKUP = re.compile(r"[*_`>#]+")
_LEAD = re.compile(r"^(?:for|on behalf of|per|pp\.?)\s+", re.IGNORECASE)
"""Words before a body's name on its line ('for Lanka Legal Partners')."""
_PROSE_WORD = re.compile(r"\b[a-z]{3,}\b")
"""A lower-case word of three letters or more: prose, not a name's legal form or initials."""
Typed = Callable[[str], tuple[str, str]]
"""A name's type and the reason for it (entity_types.type_and_reason, without block cues)."""


def blocks(text: str) -> Iterator[tuple[str, list[str]]]:
    """Each paragraph of `text` that is a block (2 to BLOCK_LINES lines of at most
    SHORT_LINE_WORDS words, not a table): the paragraph as written, and its lines (markup and
    extra spaces removed)."""
    for paragraph in PARAGRAPH_BREAK.split(text):
        if (written := block_lines(paragraph)) is not None:
            yield paragraph, written


def block_lines(paragraph: str) -> list[str] | None:
    """A paragraph's lines (markup and extra spaces removed) when it is a block, else None."""
    written = [" ".join(_MARKUP.sub("", line).split()) for line in paragraph.split("\n")]
    written = [line for line in written if line]
    if not 2 <= len(written) <= BLOCK_LINES or table_rows(paragraph):
        return None
    if any(len(line.split()) > SHORT_LINE_WORDS for line in written):
        return None
    return written


def alone_on_line(line: str, name: str) -> bool:
    """Whether `line` holds `name` and nothing else of note: a title or lead before it ('Sr.',
    'for'), its legal form, a parenthesis or post-nominals after it (a number makes it an address
    line)."""
    at = line.find(name)
    if at < 0:
        return False
    before, after = _LEAD.sub("", line[:at]), line[at + len(name) :].split("(")[0]
    address = any(character.isdigit() for character in before + after)  # 'Avenida Belgrano 1870'
    titled = all(not _PROSE_WORD.fullmatch(word) for word in before.split())  # 'Dott.ssa', 'Mgr.'
    return len(before.split()) <= 2 and titled and not address and not _PROSE_WORD.search(after)


def on_lines(lines: list[str], names: list[str]) -> list[str]:
    """The names written on a block's lines: the only ones its layout can say anything of."""
    written = "\n".join(lines)
    return [name for name in names if name in written]


def role_lines(lines: list[str], names: list[str], typed: Typed) -> list[int]:
    """The lines that hold a role: each one after a line with a person alone on it (not itself a
    role line), unless a person by their own words is alone on it too (a list of people, one a
    line)."""
    people = [name for name in names if typed(name)[0] == "person"]
    roles: list[int] = []
    for at, line in enumerate(lines[:-1]):
        if at in roles:
            continue
        following = lines[at + 1]
        if any(alone_on_line(line, name) for name in people) and not any(
            alone_on_line(following, name) and typed(name)[1] in STRONG_PERSON for name in people
        ):
            roles.append(at + 1)
    return roles


def bodies_below_roles(text: str, names: list[str], typed: Typed) -> set[str]:
    """Names of `names` alone on a block line below a person's role line, or after the role on
    the role line ('Communications Manager, Sen Vàng Technology JSC'): the person's
    organisation by the block's layout."""
    found: set[str] = set()
    for _, lines in blocks(text):
        named = on_lines(lines, names)
        for role in role_lines(lines, named, typed):
            for name in named:
                below = any(alone_on_line(line, name) for line in lines[role + 1 :])
                if below or _after_comma(lines[role], name):
                    found.add(name)
    return found


def _after_comma(line: str, name: str) -> bool:
    """`name` ends a role line after a comma ('Head of Security, Sabaragamuwa Gem Exchange')."""
    at = line.find(f", {name}")
    return at > 0 and not _PROSE_WORD.search(line[at + 2 + len(name) :].split("(")[0])


def layout_cues(
    text: str, names: list[str], body_cells: set[str], typed: Typed
) -> dict[str, str | None]:
    """'organization' for the names a block places where a person's body stands
    (`bodies_below_roles`) or a table writes in a body's column (`body_cells`, upper case:
    table_cells.body_cells) that only weak evidence types as a person (LAYOUT_YIELDS), unless the
    text writes a courtesy title before them ('Consultant: Dr Helen Marchetti, Cardiology')."""
    placed = bodies_below_roles(text, names, typed)
    return {
        name: "organization"
        for name in [*placed, *(name for name in names if name.upper() in body_cells)]
        if typed(name)[0] == "person"
        and typed(name)[1] in LAYOUT_YIELDS
        and not _after_honorific(text, name)
    }


def _after_honorific(text: str, name: str) -> bool:
    """The text writes `name` after a title that only ever stands before a person ('Dr', 'Mrs'),
    as context_cue reads one (entity_types.honorific_before)."""
    mentions = mention_of(name).finditer(text)
    return any(honorific_before(text, mention.start()) for mention in mentions)
