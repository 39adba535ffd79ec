"""A letter's or an e-mail's writer (relationships.py): found from its sign-off, its From: or
Author: line, a declarant's 'I, X,' or a closing signature, and linked to its addressee, to those it
speaks of in the first person and to the lines signed under it."""

from __future__ import annotations

import re
from collections.abc import Callable

from graphrag_mcp_server.providers.offline.record_links import FIRST_PERSON
from graphrag_mcp_server.providers.offline.text import SHORT_LINE_WORDS

_SIGN_OFF = re.compile(
    r"^(?:yours\s+(?:sincerely|faithfully|truly)|(?:with\s+)?(?:kind|best|warm|warmest|all\s+good)"
    r"\s+(?:regards|wishes)|regards|many thanks|with thanks|thanks|best|all the best)"
    r"(?:[,.!]|\s*$|\s+(?=(?-i:[A-Z])))",
    re.IGNORECASE,
)
"""A sign-off line ('Kind regards,', 'Thanks, Tom'): the words alone or before a name, not a
sentence that opens with them ('Thanks to Ashby Building Society for ...', 'Best known for')."""
_WRITER_HEADERS = (
    "from:", "author:", "by:", "by ", "prepared by", "written by", "signed:", "signed by",
    "signature:", "compiled by", "submitted by", "reported by", "recorded by",
)  # fmt: skip
_DECLARANT = re.compile(r"\W*I,\s+(?:the\s+undersigned,?\s+)?[A-Z]")
"""'I, Marcus Okonjo, of ...': an affidavit's, a declaration's or a will's maker, who writes it."""
_ADDRESSEE_HEADERS = ("to:", "dear ")


def letter_links(
    sentences: list[str],
    present: list[list[str]],
    order: dict[str, int],
    letter: Callable[[str, str, str], None],
    near: Callable[[str, str, str], None],
) -> bool:
    """A letter's or e-mail's writer (the name on or after its sign-off line, its From:/Author:
    line, or a closing signature) linked to its addressee (its To: line or salutation), to the
    names of its first-person sentences (`present`: each sentence's names in the order it names
    them; `order`: the extraction's order of names) and to those of the short lines signed under
    the sign-off (its role's body: 'Director of Research' / 'Fernhill Agricultural Trust').
    Whether the text has a writer."""
    writers, addressees, signature = [], [], []
    extracted = [sorted(names, key=order.__getitem__) for names in present]
    for position, (sentence, names) in enumerate(zip(sentences, extracted, strict=True)):
        if sentence.lower().startswith(_WRITER_HEADERS):
            writers += names
        elif sentence.lower().startswith(_ADDRESSEE_HEADERS):
            addressees += names
        elif _DECLARANT.match(sentence):  # 'I, Marcus Okonjo, of Tema, make oath ...'
            writers += names[:1]
        elif _SIGN_OFF.match(sentence):
            signed = names + [
                name for following in extracted[position + 1 : position + 2] for name in following
            ]
            writers += [name for name in signed if name not in writers][:1]
            signature = _signature(sentences[position + 1 :], extracted[position + 1 :])
    if (
        not writers and sentences and _signature_line(sentences[-1])
    ):  # a signature, no sign-off: not 'Enquiries to the grants officer, Priya Raman.'
        writers = [name for names in present[-2:] for name in names][:1]
    for writer in dict.fromkeys(writers):
        for addressee in dict.fromkeys(addressees):
            letter(writer, addressee, f"{writer} wrote to {addressee}.")
        for name in dict.fromkeys(signature):
            if name != writer:
                letter(writer, name, f"{writer} signed for {name}.")
        for sentence, names in zip(sentences, extracted, strict=True):
            if FIRST_PERSON.search(sentence) and not sentence.lower().startswith(
                _WRITER_HEADERS + _ADDRESSEE_HEADERS
            ):
                for name in names:
                    near(writer, name, f"{writer} wrote: {sentence}")
    return bool(writers)


SIGNATURE_LINES = 4
"""Lines under a sign-off that may hold its signature: the writer's name, role, body, place."""


def _signature(sentences: list[str], present: list[list[str]]) -> list[str]:
    """The names of the short lines (no stop at the end) that follow a sign-off, up to
    SIGNATURE_LINES of them: a signature block."""
    names: list[str] = []
    for sentence, named in list(zip(sentences, present, strict=True))[:SIGNATURE_LINES]:
        if not _signature_line(sentence):
            break
        names += named
    return names


def _signature_line(sentence: str) -> bool:
    """A short line without a stop at its end: a signature's name, role, body or place."""
    line = sentence.strip()
    return len(line.split()) <= SHORT_LINE_WORDS and not line.endswith((".", "!", "?"))
