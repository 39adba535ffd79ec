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
