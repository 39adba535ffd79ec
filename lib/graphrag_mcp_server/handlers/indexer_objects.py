"""graphrag's `read_indexer_entities` and `read_indexer_text_units` made from the tables' columns.

graphrag groups the entities' communities by a Python set a group and reads every table through a
dict a row (`DataFrame.to_dict("records")`), checked value by value: 0.8 s of each version's load
at 10,000 documents. Here the same objects, in the same order, are made from whole columns, each
value converted as graphrag's `graphrag.query.input.loaders.utils` converts it
(tests/test_prepared_searches.py compares them with graphrag's).
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from graphrag.data_model.entity import Entity
    from graphrag.data_model.text_unit import TextUnit


def indexer_entities(
    entities: "pd.DataFrame", communities: "pd.DataFrame", level: int
) -> list["Entity"]:
    """graphrag's `read_indexer_entities(entities, communities, level)`: each entity in a community
    at `level` or under, ordered by id (the first row of an id), with those communities' ids."""
    from graphrag.data_model.entity import Entity

    member_of = _communities_of(communities, level)
    first: dict[Any, int] = {}
    for at, entity_id in enumerate(entities["id"].tolist()):
        if entity_id in member_of:
            first.setdefault(entity_id, at)
    rows = entities.iloc[[first[entity_id] for entity_id in sorted(first)]]
    columns = _columns(rows, required=("id", "human_readable_id", "title", "type", "description"))
    return [
        Entity(
            id=str(entity_id),
            short_id=_optional_str(short_id),
            title=str(title),
            type=_optional_str(kind),
            description=_optional_str(description),
            name_embedding=None,
            description_embedding=optional_list(embedding, float),
            community_ids=[str(int(community)) for community in set(member_of[entity_id])],
            text_unit_ids=optional_list(unit_ids),
            rank=optional_int(degree),
            attributes=None,
        )
        for entity_id, short_id, title, kind, description, embedding, unit_ids, degree in zip(
            *(
                columns(name)
                for name in (
                    "id",
                    "human_readable_id",
                    "title",
                    "type",
                    "description",
                    "description_embedding",
                    "text_unit_ids",
                    "degree",
                )
            ),
            strict=True,
        )
    ]


def _communities_of(communities: "pd.DataFrame", level: int) -> dict[Any, list[Any]]:
    """Entity id -> the communities at `level` or under that list it, in the table's order
    (graphrag's explode and left merge)."""
    import numpy as np

    kept = communities.loc[communities["level"] <= level]
    member_of: dict[Any, list[Any]] = {}
    for community, entity_ids in zip(
        kept["community"].tolist(), kept["entity_ids"].tolist(), strict=True
    ):
        if isinstance(entity_ids, np.ndarray | list):
            for entity_id in entity_ids:
                member_of.setdefault(entity_id, []).append(community)
    return member_of


def indexer_text_units(frame: "pd.DataFrame") -> list["TextUnit"]:
    """graphrag's `read_indexer_text_units(frame)`: a text unit a row, in the table's order, its
    short id the row's index label."""
    from graphrag.data_model.text_unit import TextUnit

    columns = _columns(frame, required=("id", "text", "document_id"))
    return [
        TextUnit(
            id=str(unit_id),
            short_id=str(label),
            text=str(text),
            entity_ids=optional_list(entity_ids, str),
            relationship_ids=optional_list(relationship_ids, str),
            covariate_ids=None,
            n_tokens=optional_int(tokens),
            document_id=_optional_str(document_id),
            attributes=None,
        )
        for label, unit_id, text, entity_ids, relationship_ids, tokens, document_id in zip(
            frame.index.tolist(),
            *(
                columns(name)
                for name in (
                    "id",
                    "text",
                    "entity_ids",
                    "relationship_ids",
                    "n_tokens",
                    "document_id",
                )
            ),
            strict=True,
        )
    ]


def _columns(frame: "pd.DataFrame", required: tuple[str, ...]) -> Any:
    """A reader of `frame`'s columns as lists: None a row for an optional column it lacks; a
    required one missing raises graphrag's ValueError."""
    if missing := [name for name in required if name not in frame.columns]:
        msg = f"Column [{missing[0]}] not found in data"  # graphrag's words
        raise ValueError(msg)

    def column(name: str) -> list[Any]:
        return frame[name].tolist() if name in frame.columns else [None] * len(frame)

    return column


def _optional_str(value: Any) -> str | None:
    """graphrag's `to_optional_str` of one value."""
    return None if value is None else str(value)


def optional_list(value: Any, item_type: type | None = None) -> list[Any] | None:
    """graphrag's `to_optional_list` of one value, its items checked to be `item_type` if given."""
    import numpy as np

    if value is None:
        return None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        msg = f"value is not a list: {value} ({type(value)})"
        raise TypeError(msg)
    if item_type is not None and not all(isinstance(item, item_type) for item in value):
        msg = f"list item is not [{item_type}]: {value} ({type(value)})"
        raise TypeError(msg)
    return value


def optional_int(value: Any) -> int | None:
    """graphrag's `to_optional_int` of one value."""
    if value is None:
        return None
    if isinstance(value, float):
        value = int(value)
    if not isinstance(value, int):
        msg = f"value is not an int: {value} ({type(value)})"
        raise TypeError(msg)
    return int(value)
