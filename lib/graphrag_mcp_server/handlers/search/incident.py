"""graphrag's local context builder made to scale with the question, not with the index.

graphrag's local context reads only relationships with an end among the selected entities (in-
and out-network relationships, each entity's relationships for its passages), but finds them by
walking every relationship of the index, three times per selected entity and again for the
passages. It ranks a selected hub's out-network relationships by each outside entity's links,
counted by a walk over all of them per outside entity (quadratic in a hub's partners), and ranks
passages by the entity's relationships in each, gathering the entity's relationship ids again for
every passage. On an archive of 3,000 documents that is nearly all of a local or DRIFT context's
time: seconds for a question about a hub. This builder finds the incident relationships by the
version's RelationshipIndex (relationship_index.py: each entity's relationship positions, every
relationship's ends and rank as arrays, made once), chooses graphrag's relationships over those
arrays, ranks each entity's passages once per version and offers graphrag only the first ranked
passages; everything else is graphrag's own code, so the context is graphrag's: the same records
in the same order (tests/test_incident_context.py compares them with graphrag's builder over every
relationship).
graphrag writes each ranked relationship's links into its attributes; here they are kept per
search (`links`), so the version's relationships are shared by every search, never written into.
"""

import logging
from typing import TYPE_CHECKING, Any

import pandas as pd
from graphrag.query.context_builder.entity_extraction import map_query_to_entities
from graphrag.query.context_builder.local_context import (
    build_covariates_context,
    build_entity_context,
    get_candidate_context,
)
from graphrag.query.context_builder.source_context import build_text_unit_context
from graphrag.query.input.retrieval.text_units import get_candidate_text_units
from graphrag.query.structured_search.local_search.mixed_context import LocalSearchMixedContext

from graphrag_mcp_server.handlers.entity_names import naming_first
from graphrag_mcp_server.handlers.search.embedder import RememberedEmbedder, RememberedSearches

if TYPE_CHECKING:
    import numpy as np
    from graphrag.data_model.entity import Entity
    from graphrag.data_model.relationship import Relationship
    from graphrag.data_model.text_unit import TextUnit
    from graphrag.query.context_builder.builders import ContextBuilderResult
    from graphrag_llm.tokenizer import Tokenizer

    from graphrag_mcp_server.handlers.prepared import LocalLookups
    from graphrag_mcp_server.handlers.search.held_vectors import HeldVectors
    from graphrag_mcp_server.handlers.search.relationship_index import RelationshipIndex

logger = logging.getLogger(LocalSearchMixedContext.__module__)
"""graphrag's own logger for its builder's records, so they go where graphrag's go (logs/)."""


class IncidentRelationshipsContext(LocalSearchMixedContext):
    """graphrag's LocalSearchMixedContext (`builder`'s settings, taken over) over the version's
    `lookups` and relationship `index` (made once, not per search as graphrag's builder makes its
    dicts). The links graphrag writes into the out-network relationships it ranks are kept per
    search in `links` (by relationship position; -1 where none)."""

    def __init__(
        self,
        builder: LocalSearchMixedContext,
        lookups: "LocalLookups",
        index: "RelationshipIndex",
        entity_vectors: "HeldVectors | None",
    ) -> None:
        vars(self).update(vars(builder))
        self.entities, self.text_units = lookups.entities, lookups.text_units
        self.names = lookups.names
        self.rankings, self.index = lookups.rankings, index
        self.links = index.no_links()
        remembered: Any = RememberedEmbedder(builder.text_embedder)  # graphrag calls .embedding
        self.text_embedder = remembered
        searched: Any = RememberedSearches(builder.entity_text_embeddings, entity_vectors)
        self.entity_text_embeddings = searched

    def build_context(self, query: str, *args: Any, **kwargs: Any) -> "ContextBuilderResult":
        """graphrag's build_context, with no links written yet (as graphrag reads relationships
        anew for each search), the entities the query names first (handlers/entity_names.py)."""
        self.links = self.index.no_links()
        return super().build_context(query, *args, **naming_first(self.names, query, kwargs))

    def selected_entities(self, query: str, **kwargs: Any) -> list["Entity"]:
        """The entities graphrag's build_context maps `query` to, given the same keyword
        arguments (the conversation's user turns appended to the query, as graphrag does)."""
        kwargs = naming_first(self.names, query, kwargs)
        if history := kwargs.get("conversation_history"):
            turns = history.get_user_turns(kwargs.get("conversation_history_max_turns", 5))
            query = f"{query}\n" + "\n".join(turns)
        return map_query_to_entities(
            query=query,
            text_embedding_vectorstore=self.entity_text_embeddings,
            text_embedder=self.text_embedder,
            all_entities_dict=self.entities,
            embedding_vectorstore_key=self.embedding_vectorstore_key,
            include_entity_names=kwargs["include_entity_names"],
            exclude_entity_names=kwargs["exclude_entity_names"],
            k=kwargs.get("top_k_mapped_entities", 10),
            oversample_scaler=2,
        )

    def _build_local_context(
        self,
        selected_entities: list["Entity"],
        max_context_tokens: int = 8000,
        include_entity_rank: bool = False,
        rank_description: str = "relationship count",
        include_relationship_weight: bool = False,
        top_k_relationships: int = 10,
        relationship_ranking_attribute: str = "rank",
        return_candidate_context: bool = False,
        column_delimiter: str = "|",
    ) -> tuple[str, dict[str, "pd.DataFrame"]]:
        """graphrag 3.3's `_build_local_context`, line for line, its relationship tables made by
        relationship_context (graphrag's, over the relationship index). Relationships are ranked
        by `rank` (combined degree), the only ranking graphrag's searches ask for."""
        if relationship_ranking_attribute != "rank":
            raise ValueError(
                f"relationships are ranked by rank here, not {relationship_ranking_attribute!r}"
            )
        entity_context, entity_context_data = build_entity_context(
            selected_entities=selected_entities,
            tokenizer=self.tokenizer,
            max_context_tokens=max_context_tokens,
            column_delimiter=column_delimiter,
            include_entity_rank=include_entity_rank,
            rank_description=rank_description,
            context_name="Entities",
        )
        entity_tokens = len(self.tokenizer.encode(entity_context))
        added_entities: list[Entity] = []
        final_context: list[str] = []
        final_context_data: dict[str, pd.DataFrame] = {}
        for entity in selected_entities:
            current_context = []
            current_context_data = {}
            added_entities.append(entity)
            text, data = relationship_context(
                selected_entities=added_entities,
                index=self.index,
                links=self.links,
                tokenizer=self.tokenizer,
                max_context_tokens=max_context_tokens,
                column_delimiter=column_delimiter,
                top_k_relationships=top_k_relationships,
                include_relationship_weight=include_relationship_weight,
            )
            current_context.append(text)
            current_context_data["relationships"] = data
            total_tokens = entity_tokens + len(self.tokenizer.encode(text))
            for covariate in self.covariates:
                covariate_context, covariate_context_data = build_covariates_context(
                    selected_entities=added_entities,
                    covariates=self.covariates[covariate],
                    tokenizer=self.tokenizer,
                    max_context_tokens=max_context_tokens,
                    column_delimiter=column_delimiter,
                    context_name=covariate,
                )
                total_tokens += len(self.tokenizer.encode(covariate_context))
                current_context.append(covariate_context)
                current_context_data[covariate.lower()] = covariate_context_data
            if total_tokens > max_context_tokens:
                logger.warning("Reached token limit - reverting to previous context state")
                break
            final_context = current_context
            final_context_data = current_context_data
        final_context_text = entity_context + "\n\n" + "\n\n".join(final_context)
        final_context_data["entities"] = entity_context_data
        if return_candidate_context:
            candidates = get_candidate_context(
                selected_entities=selected_entities,
                entities=list(self.entities.values()),
                relationships=self.index.marked(
                    self.index.incident(entity.title for entity in selected_entities), self.links
                ),
                covariates=self.covariates,
                include_entity_rank=include_entity_rank,
                entity_rank_description=rank_description,
                include_relationship_weight=include_relationship_weight,
            )
            for key, candidate in candidates.items():
                _with_candidates(final_context_data, key, candidate)
        else:
            for key in final_context_data:
                final_context_data[key]["in_context"] = True
        return final_context_text, final_context_data

    def _build_text_unit_context(
        self,
        selected_entities: list["Entity"],
        max_context_tokens: int = 8000,
        return_candidate_context: bool = False,
        column_delimiter: str = "|",
        context_name: str = "Sources",
    ) -> tuple[str, dict[str, "pd.DataFrame"]]:
        """graphrag 3.3's `_build_text_unit_context`: each selected entity's passages not taken by
        an earlier one, by how many of the entity's relationships each holds, as many as fit.
        Each entity's passages are ranked once per version (passage_ranking), and graphrag's table
        is made from the ranked passages' first ones (those that fit: fitting_passages)."""
        if not selected_entities or not self.text_units:
            return "", {context_name.lower(): pd.DataFrame()}
        seen: set[str] = set()
        ranked: list[TextUnit] = []
        for entity in selected_entities:
            own = [text_id for text_id in self.passage_ranking(entity) if text_id not in seen]
            seen.update(own)
            ranked += [self.text_units[text_id] for text_id in own]
        context_text, context_data = fitting_passages(
            ranked,
            tokenizer=self.tokenizer,
            max_context_tokens=max_context_tokens,
            context_name=context_name,
            column_delimiter=column_delimiter,
        )
        if return_candidate_context:
            candidates = get_candidate_text_units(
                selected_entities=selected_entities, text_units=list(self.text_units.values())
            )
            _with_candidates(context_data, context_name.lower(), candidates)
        return str(context_text), context_data

    def passage_ranking(self, entity: "Entity") -> list[str]:
        """The ids of `entity`'s passages (first mentions, those the index holds) by how many of
        its relationships each holds, most first, ties in the entity's order (graphrag's stable
        sort): made on first use, kept in `rankings` for the version's later searches."""
        if (ranking := self.rankings.get(entity.id)) is not None:
            return ranking
        own = [self.index.relationships[p] for p in self.index.incident([entity.title])]
        own_ids = {rel.id for rel in own}
        units = [
            self.text_units[text_id]
            for text_id in dict.fromkeys(entity.text_unit_ids or [])
            if text_id in self.text_units
        ]
        ranking = [
            unit.id for unit in sorted(units, key=lambda unit: -_counted(own, own_ids, unit))
        ]
        self.rankings[entity.id] = ranking
        return ranking


def fitting_passages(
    units: list["TextUnit"], **settings: Any
) -> tuple[str, dict[str, "pd.DataFrame"]]:
    """graphrag's build_text_unit_context(units, shuffle_data=False), given the fewest first units
    that give the same table: graphrag stops at the first unit over the budget, so a prefix of
    which not every unit fitted gives what all would (a hub has thousands of passages, about ten
    fit)."""
    size = FIRST_PASSAGES
    while True:
        text, data = build_text_unit_context(
            text_units=units[:size], shuffle_data=False, **settings
        )
        fitted = len(next(iter(data.values()), ()))
        if size >= len(units) or fitted < size:
            return text, data
        size *= 4


FIRST_PASSAGES = 32
"""How many ranked passages fitting_passages offers graphrag first (four times more each retry)."""


def _with_candidates(
    context: dict[str, "pd.DataFrame"], key: str, candidate: "pd.DataFrame"
) -> None:
    """graphrag's candidate records of `key` put in `context`, each marked `in_context` as graphrag
    marks them (by id where both tables have one)."""
    if key not in context:
        candidate["in_context"] = False
        context[key] = candidate
    elif "id" in candidate.columns and "id" in context[key].columns:
        candidate["in_context"] = candidate["id"].isin(context[key]["id"])
        context[key] = candidate
    else:
        context[key]["in_context"] = True


def _counted(own: list["Relationship"], own_ids: set[str], unit: "TextUnit") -> int:
    """graphrag's count_relationships(own, unit), the set of `own`'s ids made by the caller."""
    if not unit.relationship_ids:
        return sum(1 for rel in own if rel.text_unit_ids and unit.id in rel.text_unit_ids)
    return sum(1 for rel_id in unit.relationship_ids if rel_id in own_ids)


def relationship_context(
    selected_entities: list["Entity"],
    index: "RelationshipIndex",
    tokenizer: "Tokenizer",
    links: "np.ndarray",
    include_relationship_weight: bool = False,
    max_context_tokens: int = 8000,
    top_k_relationships: int = 10,
    column_delimiter: str = "|",
) -> tuple[str, "pd.DataFrame"]:
    """graphrag 3.3's `build_relationship_context` (the "Relationships" table), its relationships
    chosen by chosen_relationships, each with the attributes graphrag would have written into it
    by then (`links`: this search's)."""
    chosen = chosen_relationships(selected_entities, index, top_k_relationships, links)
    if not selected_entities or not len(chosen):
        return "", pd.DataFrame()
    text = "-----Relationships-----\n"
    header = ["id", "source", "target", "description"]
    if include_relationship_weight:
        header.append("weight")
    attributes = [key for key in index.attributes(chosen[0], links) if key not in header]
    header.extend(attributes)
    text += column_delimiter.join(header) + "\n"
    tokens = tokenizer.num_tokens(text)
    records = [header]
    for position in chosen.tolist():
        rel = index.relationships[position]
        record = [rel.short_id or "", rel.source, rel.target, rel.description or ""]
        if include_relationship_weight:
            record.append(str(rel.weight or ""))
        marks = index.attributes(position, links)
        for name in attributes:
            value = marks.get(name)
            record.append(str(value) if value else "")
        line = column_delimiter.join(record) + "\n"
        line_tokens = tokenizer.num_tokens(line)
        if tokens + line_tokens > max_context_tokens:
            break
        text += line
        records.append(record)
        tokens += line_tokens
    frame = pd.DataFrame(records[1:], columns=records[0]) if len(records) > 1 else pd.DataFrame()
    return text, frame


def chosen_relationships(
    selected_entities: list["Entity"],
    index: "RelationshipIndex",
    top_k_relationships: int,
    links: "np.ndarray",
) -> "np.ndarray":
    """The positions of graphrag 3.3's `_filter_relationships` (ranked by rank): the in-network
    relationships by rank, then the out-network ones by links (how many selected entities an
    outside entity is linked to) and rank, at most `top_k_relationships` a selected entity; the
    out-network relationships' links written into `links`. graphrag walks every relationship three
    times and counts each outside entity's links by a walk over every out-network relationship
    (quadratic in a hub's partners); here the same choice is made over the index's arrays, each
    sort stable as graphrag's, and the links counted from each selected entity's partners (found
    once per version: a question about a hub asks it of every prefix of its selection)."""
    import numpy as np

    titles = list(dict.fromkeys(e.title for e in selected_entities if e.title in index.codes))
    selected = np.array([index.codes[title] for title in titles], dtype=np.int64)
    among = np.zeros(len(index.codes), dtype=bool)  # whether each entity code is selected
    among[selected] = True
    incident = index.incident(entity.title for entity in selected_entities)
    source_in, target_in = among[index.sources[incident]], among[index.targets[incident]]
    inside = index.by_rank(incident[source_in & target_in])
    outside = index.by_rank(
        np.concatenate([incident[source_in & ~target_in], incident[~source_in & target_in]])
    )
    if len(outside) <= 1:
        return np.concatenate([inside, outside])
    from_selected = among[index.sources[outside]]
    partner = np.where(from_selected, index.targets[outside], index.sources[outside])
    counted = np.bincount(  # an outside entity's links: the selected entities it is linked to
        np.concatenate([index.partners(title) for title in titles]),
        minlength=len(index.codes),
    )[partner]
    links[outside] = counted
    order = np.lexsort((np.arange(len(outside)), -index.ranks[outside], -counted))
    return np.concatenate([inside, outside[order[: top_k_relationships * len(selected_entities)]]])
