"""Issue 42, round 24: a place's name in other languages by its first word, a shop or an office by
its last, a family name of land after two names, and a legal form only where it ends the name it
types (general knowledge of place names and legal forms; texts of the rules' author's own)."""

import pytest
from graphrag_llm.completion import LLMCompletion

from test_offline_model import _extracted, model  # noqa: F401 (the fixture)

pytestmark = pytest.mark.quick


@pytest.mark.parametrize(
    "place",
    ["Puerto Lindavista", "Cabo Serenal", "Sveti Nikolaj", "Pulau Serinai", "Rio Tamborim Velho"],
)
async def test_a_place_is_named_by_its_first_word_in_its_own_language(
    model: LLMCompletion,  # noqa: F811
    place: str,
) -> None:
    types, _ = await _extracted(
        model,
        f"The ferry reached {place} an hour late. Its crew unloaded cement and fuel drums.\n",
    )
    assert types.get(place.upper()) == "GEO"


async def test_a_first_name_that_starts_place_names_still_starts_a_persons_name(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """'Rio' and 'Isla' start places of three words; before one more word they are first names."""
    types, _ = await _extracted(
        model,
        "Rio Ferdinand and Isla Fisher gave the prizes. Both of them praised the young sailors.\n",
    )
    assert types.get("RIO FERDINAND") == types.get("ISLA FISHER") == "PERSON"


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("Kamaradu Hardware", "ORGANIZATION"),
        ("Tevita Strength Gym", "ORGANIZATION"),
        ("Harbour District Administration", "ORGANIZATION"),
        ("Lomavita Market", "GEO"),
    ],
)
async def test_a_shop_an_office_and_a_market_are_typed_by_their_last_word(
    model: LLMCompletion,  # noqa: F811
    name: str,
    kind: str,
) -> None:
    types, _ = await _extracted(
        model, f"The notice was pinned up by {name}. It listed the new opening hours.\n"
    )
    assert types.get(name.upper()) == kind


async def test_a_family_name_of_land_after_two_names_is_a_persons(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """'Lucia Ortega Wood' is a person; a town the gazetteer knows stays a place."""
    types, _ = await _extracted(
        model,
        "The skipper, Lucia Ortega Wood, signed the manifest. She sailed at dawn for Beau "
        "Bassin-Rose Hill.\n",
    )
    assert types.get("LUCIA ORTEGA WOOD") == "PERSON"
    assert types.get("BEAU BASSIN-ROSE HILL") == "GEO"


async def test_a_place_that_starts_a_companys_name_stays_a_place(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """A legal form types a name as a company's where the text writes that name with it ('Brannock
    Salvage' by 'Brannock Salvage Ltd'), not where a longer company name starts with it."""
    types, _ = await _extracted(
        model,
        "The loan came from Ghana Rural Credit Bank Limited. Farmers across Ghana repaid it "
        "early. Brannock Salvage Ltd bought the old boats, and Brannock Salvage sold the "
        "engines.\n",
    )
    assert types.get("GHANA") == "GEO"
    assert types.get("BRANNOCK SALVAGE") == "ORGANIZATION"


async def test_a_legal_form_written_with_its_stop_is_no_family_name_without_it(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """Ireland's 'Teo.' (Teoranta) is written with its stop; 'Teo' without it is a family name."""
    types, _ = await _extracted(
        model,
        "Marcus Teo met the buyers from Ceardlann Chonamara Teo. in Galway. He showed them the "
        "new looms.\n",
    )
    assert types.get("MARCUS TEO") == "PERSON"
