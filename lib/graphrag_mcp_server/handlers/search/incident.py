"""graphrag's local context builder, each query's relationships narrowed to those that touch the
entities the query maps to.

graphrag's local context reads only relationships with an end among the selected entities (in-
and out-network relationships, each entity's relationships for its passages), but finds them by
walking every relationship of the index, once per selected entity and again for the passages: on
an archive of 3,000 documents, most of a local or DRIFT context's time. Handing the builder only
the incident relationships, in the index's order, gives graphrag's own context (the same records,
in the same order) without those walks. The query is mapped to entities once more for this (the
question's embedding is remembered; the vector search runs again).
"""

from typing import TYPE_CHECKING, Any

from graphrag.query.context_builder.entity_extraction import map_query_to_entities
from graphrag.query.structured_search.local_search.mixed_context import LocalSearchMixedContext

if TYPE_CHECKING:
    from graphrag.data_model.relationship import Relationship
    from graphrag.query.context_builder.builders import ContextBuilderResult


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

    def build_context(self, query: str, *args: Any, **kwargs: Any) -> "ContextBuilderResult":
        """graphrag's build_context, its relationships those incident to the entities it will
        select (mapped here as graphrag maps them, from the same keyword arguments)."""
        if args:  # graphrag passes its parameters by keyword; positional ones: left as they are
            return super().build_context(query, *args, **kwargs)
        mapped = query
        if history := kwargs.get("conversation_history"):
            turns = history.get_user_turns(kwargs.get("conversation_history_max_turns", 5))
            mapped = f"{query}\n" + "\n".join(turns)
        selected = map_query_to_entities(
            query=mapped,
            text_embedding_vectorstore=self.entity_text_embeddings,
            text_embedder=self.text_embedder,
            all_entities_dict=self.entities,
            embedding_vectorstore_key=self.embedding_vectorstore_key,
            include_entity_names=kwargs.get("include_entity_names") or [],
            exclude_entity_names=kwargs.get("exclude_entity_names") or [],
            k=kwargs.get("top_k_mapped_entities", 10),
            oversample_scaler=2,
        )
        self.relationships = self.incident(entity.title for entity in selected)
        try:
            return super().build_context(query, **kwargs)
        finally:
            self.relationships = self.by_id

    def incident(self, titles: Any) -> dict[str, "Relationship"]:
        """The relationships with an end among `titles`, by id, in the index's order."""
        wanted = sorted({p for title in titles for p in self.positions.get(title, ())})
        return {self.every_relationship[p].id: self.every_relationship[p] for p in wanted}
