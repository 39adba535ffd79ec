"""Issue 42, the round after held_out_19 was measured as it came: types that general knowledge
gives, each written from a text of the rules' author's own (a company's news, a judgment). Each
test fails on the code of 8cf6594 (the last two also on e1f76a4's)."""

import pytest
from graphrag_llm.completion import LLMCompletion

from test_offline_model import _extracted, _pairs, model  # noqa: F401 (the fixture)

pytestmark = pytest.mark.quick


async def test_a_surname_spelled_like_a_dotted_legal_form_is_a_persons(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """cleanco spells some legal forms only with stops inside ('v.o.s.', 'o.n.g.', 'sh.a.'):
    written 'Vos', 'Ong' or 'Sha' after a first name they are surnames; 'SRO' in capitals,
    's.r.o.' with its stops and 'SpA' in mixed case still end a company's name."""
    types, relationships = await _extracted(
        model,
        "Kevin Ong and Nadia Vos met Li Sha in Utrecht. Vos later joined Tatra SRO, and Ong "
        "moved to Novak s.r.o. in Brno. Sha chairs Marittima Velaris SpA.\n",
    )
    assert types["KEVIN ONG"] == types["NADIA VOS"] == types["LI SHA"] == "PERSON"
    assert types["TATRA SRO"] == types["NOVAK S.R.O."] == "ORGANIZATION"
    assert types["MARITTIMA VELARIS SPA"] == "ORGANIZATION"
    assert frozenset({"NADIA VOS", "TATRA SRO"}) in _pairs(relationships)  # 'Vos' alone


async def test_an_appositive_after_a_possessive_or_before_a_place_names_a_body(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """'Her firm, X' and 'his company, X' call X a body as 'its firm, X' does; so does ', a design
    firm in Graz' after X, whose noun is followed by where the body is."""
    types, _ = await _extracted(
        model,
        "Yusra Halabi sold her stake last spring. Her firm, Halabi Kestrel, now belongs to "
        "Tomasz Wrona.\nWrona also owns Brenner Atelier, a design firm in Graz.\n",
    )
    assert types["HALABI KESTREL"] == types["BRENNER ATELIER"] == "ORGANIZATION"
    assert types["YUSRA HALABI"] == types["TOMASZ WRONA"] == "PERSON"


async def test_its_opening_a_sentence_means_the_nearest_body_named_before(
    model: LLMCompletion,  # noqa: F811
) -> None:
    """'Its largest contract ...' links its names to the body of the nearest of the three
    sentences before that names one, past a sentence that names none; not to the person."""
    _, relationships = await _extracted(
        model,
        "Founded by Mark Hollins in 1971, Hollins Engineering builds bridges. He ran it for "
        "thirty years. Its largest contract was the Tarn Crossing for Cumbria County Council.\n",
    )
    pairs = _pairs(relationships)
    assert frozenset({"HOLLINS ENGINEERING", "TARN CROSSING"}) in pairs
    assert frozenset({"MARK HOLLINS", "TARN CROSSING"}) not in pairs


def test_a_dotted_form_ends_a_name_written_with_its_stops_in_capitals_or_in_mixed_case() -> None:
    """How the text writes a form cleanco spells only with stops decides: 'Vos' and 'Ong' as a
    word are surnames; 'v.o.s.', 'VOS' and 'SpA' (Italy's usual spelling) are the form."""
    from graphrag_mcp_server.providers.offline.legal_forms import ends_in_legal_form

    assert not ends_in_legal_form(["Nadia", "Vos"])
    assert not ends_in_legal_form(["Kevin", "Ong"])
    for written in (["Tatra", "v.o.s."], ["Tatra", "VOS"], ["Marittima", "Velaris", "SpA"]):
        assert ends_in_legal_form(written), written
