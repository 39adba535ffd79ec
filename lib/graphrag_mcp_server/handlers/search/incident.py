"""graphrag's local context builder made to scale with the question, not with the index.

graphrag's local context reads only relationships with an end among the selected entities (in-
and out-network relationships, each entity's relationships for its passages), but finds them by
walking every relationship of the index, once per selected entity and again for the passages. It
ranks a selected hub's out-network relationships by each outside entity's links, counted by a walk
over all of them per outside entity (quadratic in a hub's partners), and ranks passages by the
entity's relationships in each, gathering the entity's relationship ids again for every passage.
On an archive of 3,000 documents that is nearly all of a local or DRIFT context's time: seconds
for a question about a hub. This builder hands graphrag only the incident relationships, in the
index's order, counts the links in one pass and gathers each entity's relationship ids once;
everything else is graphrag's own code, so the context is graphrag's: the same records in the
same order (tests/test_incident_context.py compares them with graphrag's builder over every
relationship). The question is mapped to entities once more for this, from the same embedding
(RememberedEmbedder) and the same search of the entities' vectors (RememberedSearches).
"""

import logging
from copy import deepcopy
from typing import TYPE_CHECKING, Any

import pandas as pd
from graphrag.query.context_builder.entity_extraction import map_query_to_entities
from graphrag.query.context_builder.local_context import (
    build_covariates_context,
    build_entity_context,
    get_candidate_context,
)
from graphrag.query.context_builder.source_context import build_text_unit_context
from graphrag.query.input.retrieval.relationships import (
    get_in_network_relationships,
    get_out_network_relationships,
)
from graphrag.query.input.retrieval.text_units import get_candidate_text_units
from graphrag.query.structured_search.local_search.mixed_context import LocalSearchMixedContext

from graphrag_mcp_server.handlers.search.embedder import RememberedEmbedder, RememberedSearches

if TYPE_CHECKING:
    from graphrag.data_model.entity import Entity
    from graphrag.data_model.relationship import Relationship
    from graphrag.data_model.text_unit import TextUnit
    from graphrag.query.context_builder.builders import ContextBuilderResult
    from graphrag_llm.tokenizer import Tokenizer

logger = logging.getLogger(LocalSearchMixedContext.__module__)
"""graphrag's own logger for its builder's records, so they go where graphrag's go (logs/)."""


class IncidentRelationshipsContext(LocalSearchMixedContext):
    """graphrag's LocalSearchMixedContext (`builder`'s state, taken over) whose build_context sees
    only the relationships incident to the query's entities. `relationships`: the builder's, in
    its order; `positions`: each entity title -> the positions of its relationships there
    (Prepared.incident_positions)."""

    def __init__(
        self,
        builder: LocalSearchMixedContext,
        relationships: list["Relationship"],
        positions: dict[str, list[int]],
    ) -> None:
        vars(self).update(vars(builder))
        self.every_relationship, self.positions = relationships, positions
        self.by_id = builder.relationships
        remembered: Any = RememberedEmbedder(builder.text_embedder)  # graphrag calls .embedding
        self.text_embedder = remembered
        searched: Any = RememberedSearches(builder.entity_text_embeddings)
        self.entity_text_embeddings = searched

    def build_context(self, query: str, *args: Any, **kwargs: Any) -> "ContextBuilderResult":
        """graphrag's build_context, its relationships those incident to the entities it will
        select (mapped here as graphrag maps them, from the same keyword arguments)."""
        if args:  # graphrag passes its parameters by keyword; positional ones: left as they are
            return super().build_context(query, *args, **kwargs)
        selected = self.selected_entities(query, **kwargs)
        self.relationships = self.incident(entity.title for entity in selected)
        try:
            return super().build_context(query, **kwargs)
        finally:
            self.relationships = self.by_id

    def selected_entities(self, query: str, **kwargs: Any) -> list["Entity"]:
        """The entities graphrag's build_context maps `query` to, given the same keyword
        arguments (the conversation's user turns appended to the query, as graphrag does)."""
        if history := kwargs.get("conversation_history"):
            turns = history.get_user_turns(kwargs.get("conversation_history_max_turns", 5))
            query = f"{query}\n" + "\n".join(turns)
        return map_query_to_entities(
            query=query,
            text_embedding_vectorstore=self.entity_text_embeddings,
            text_embedder=self.text_embedder,
            all_entities_dict=self.entities,
            embedding_vectorstore_key=self.embedding_vectorstore_key,
            include_entity_names=kwargs.get("include_entity_names") or [],
            exclude_entity_names=kwargs.get("exclude_entity_names") or [],
            k=kwargs.get("top_k_mapped_entities", 10),
            oversample_scaler=2,
        )

    def incident(self, titles: Any) -> dict[str, "Relationship"]:
        """The relationships with an end among `titles`, by id, in the index's order."""
        wanted = sorted({p for title in titles for p in self.positions.get(title, ())})
        return {self.every_relationship[p].id: self.every_relationship[p] for p in wanted}

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
        relationship_context (graphrag's, with each out-network entity's links counted in one
        pass)."""
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
                relationships=list(self.relationships.values()),
                tokenizer=self.tokenizer,
                max_context_tokens=max_context_tokens,
                column_delimiter=column_delimiter,
                top_k_relationships=top_k_relationships,
                include_relationship_weight=include_relationship_weight,
                relationship_ranking_attribute=relationship_ranking_attribute,
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
                relationships=list(self.relationships.values()),
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
        """graphrag 3.3's `_build_text_unit_context`, line for line, each entity's relationships
        taken from the index (graphrag walks them all: the same ones, in the same order) and their
        ids gathered once (graphrag's count_relationships makes that set again for every one of
        the entity's text units: a hub's thousands of relationships, hundreds of times)."""
        if not selected_entities or not self.text_units:
            return "", {context_name.lower(): pd.DataFrame()}
        seen: set[str] = set()
        ranked = []
        for index, entity in enumerate(selected_entities):
            own = [self.every_relationship[p] for p in self.positions.get(entity.title, ())]
            own_ids = {rel.id for rel in own}
            for text_id in entity.text_unit_ids or []:
                if text_id not in seen and text_id in self.text_units:
                    unit = deepcopy(self.text_units[text_id])
                    seen.add(text_id)
                    ranked.append((unit, index, _counted(own, own_ids, unit)))
        ranked.sort(key=lambda item: (item[1], -item[2]))
        context_text, context_data = build_text_unit_context(
            text_units=[unit for unit, _, _ in ranked],
            tokenizer=self.tokenizer,
            max_context_tokens=max_context_tokens,
            shuffle_data=False,
            context_name=context_name,
            column_delimiter=column_delimiter,
        )
        if return_candidate_context:
            candidates = get_candidate_text_units(
                selected_entities=selected_entities, text_units=list(self.text_units.values())
            )
            _with_candidates(context_data, context_name.lower(), candidates)
        return str(context_text), context_data


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
    relationships: list["Relationship"],
    tokenizer: "Tokenizer",
    include_relationship_weight: bool = False,
    max_context_tokens: int = 8000,
    top_k_relationships: int = 10,
    relationship_ranking_attribute: str = "rank",
    column_delimiter: str = "|",
) -> tuple[str, "pd.DataFrame"]:
    """graphrag 3.3's `build_relationship_context` (the "Relationships" table), its relationships
    chosen by filtered_relationships."""
    chosen = filtered_relationships(
        selected_entities, relationships, top_k_relationships, relationship_ranking_attribute
    )
    if not selected_entities or not chosen:
        return "", pd.DataFrame()
    text = "-----Relationships-----\n"
    header = ["id", "source", "target", "description"]
    if include_relationship_weight:
        header.append("weight")
    attributes = [key for key in (chosen[0].attributes or {}) if key not in header]
    header.extend(attributes)
    text += column_delimiter.join(header) + "\n"
    tokens = tokenizer.num_tokens(text)
    records = [header]
    for rel in chosen:
        record = [rel.short_id or "", rel.source, rel.target, rel.description or ""]
        if include_relationship_weight:
            record.append(str(rel.weight or ""))
        for field in attributes:
            value = rel.attributes.get(field) if rel.attributes else None
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


def filtered_relationships(
    selected_entities: list["Entity"],
    relationships: list["Relationship"],
    top_k_relationships: int,
    ranking_attribute: str,
) -> list["Relationship"]:
    """graphrag 3.3's `_filter_relationships`: the in-network relationships, then the out-network
    ones by links (how many selected entities an outside entity is linked to) and rank, at most
    `top_k_relationships` a selected entity. graphrag counts each outside entity's links by walking
    every out-network relationship once per outside entity (a hub's thousands of partners times
    its thousands of relationships); here in one pass, to the same counts, the same order and the
    same `links` attributes."""
    inside = get_in_network_relationships(selected_entities, relationships, ranking_attribute)
    outside = get_out_network_relationships(selected_entities, relationships, ranking_attribute)
    if len(outside) <= 1:
        return inside + outside
    selected = {entity.title for entity in selected_entities}
    partners: dict[str, set[str]] = {}
    for rel in outside:
        if rel.source not in selected:
            partners.setdefault(rel.source, set()).add(rel.target)
        if rel.target not in selected:
            partners.setdefault(rel.target, set()).add(rel.source)
    links = {name: len(linked) for name, linked in partners.items()}

    def linked(rel: "Relationship") -> int:
        return links[rel.source] if rel.source in links else links[rel.target]

    for rel in outside:
        if rel.attributes is None:
            rel.attributes = {}
        rel.attributes["links"] = linked(rel)
    if ranking_attribute == "rank":
        outside.sort(key=lambda rel: (linked(rel), rel.rank), reverse=True)
    elif ranking_attribute == "weight":
        outside.sort(key=lambda rel: (linked(rel), rel.weight), reverse=True)
    else:
        outside.sort(
            key=lambda rel: (linked(rel), (rel.attributes or {})[ranking_attribute]), reverse=True
        )
    return inside + outside[: top_k_relationships * len(selected_entities)]
