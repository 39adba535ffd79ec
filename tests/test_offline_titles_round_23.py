"""Issue 42, round 23: honorifics of other regions before a name are stripped, so one person is
one entity (written from general knowledge of honorifics; texts of the rules' author's own)."""

import pytest
from graphrag_llm.completion import LLMCompletion

from test_offline_model import _extracted, model  # noqa: F401 (the fixture)

pytestmark = pytest.mark.quick


@pytest.mark.parametrize(
    ("titled", "plain"),
    [
        ("Thao Khamsing Vongsavath", "Khamsing Vongsavath"),
        ("Ña Rosalía Benítez", "Rosalía Benítez"),
        ("Dasho Karma Wangdi", "Karma Wangdi"),
        ("Mwalimu Juma Kassim", "Juma Kassim"),
        ("El Hadj Mamadou Sow", "Mamadou Sow"),
        ("Tan Sri Osman Rahim", "Osman Rahim"),
    ],
)
async def test_a_title_before_a_name_is_no_part_of_it(
    model: LLMCompletion,  # noqa: F811
    titled: str,
    plain: str,
) -> None:
    types, _ = await _extracted(
        model,
        f"{titled} opened the new grain store in the market town on Monday. Later that week "
        f"{plain} thanked the farmers who had built it.\n",
    )
    assert types.get(plain.upper()) == "PERSON"
    assert titled.upper() not in types


async def test_a_title_that_is_also_a_first_name_stays_before_one_more_word(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """'Adi' is a Fijian title and a first name: 'Adi Mehta' keeps it, 'Adi Litia Cakobau' not."""
    types, _ = await _extracted(
        model,
        "Adi Mehta chaired the meeting. Adi Litia Cakobau spoke for the villages after him.\n",
    )
    assert types.get("ADI MEHTA") == "PERSON"
    assert types.get("LITIA CAKOBAU") == "PERSON"


async def test_a_title_word_before_an_ampersand_is_a_firms_name(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """'Mwalimu' is a Swahili title and a surname: before '&' it names a firm of partners."""
    types, _ = await _extracted(
        model,
        "Halima Mwalimu founded Mwalimu & Kessy Advocates in Dodoma. Mwalimu & Kessy Advocates "
        "later opened an office in Tanga.\n",
    )
    assert types.get("MWALIMU & KESSY ADVOCATES") == "ORGANIZATION"


async def test_a_title_that_is_a_first_name_before_one_word_and_of_stays(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """'Thiru' is a Tamil title and a first name: 'Thiru Raman of the Madurai Weavers' Guild' is
    Thiru Raman, of the guild, not a title before 'Raman of the ...'."""
    types, _ = await _extracted(
        model,
        "A letter came from Thiru Raman of the Madurai Weavers' Guild on Monday. Thiru Raman "
        "asked for the looms to be repaired.\n",
    )
    assert types.get("THIRU RAMAN") == "PERSON"
    assert not any(name.startswith("RAMAN OF") for name in types)
