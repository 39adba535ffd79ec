"""graphrag's search engines made as graphrag.api makes them (graphrag.query.factory, the same
prompts), over the prepared objects of the loaded version instead of tables read again
(handlers/prepared.py); their local context builder reads only the relationships incident to the
query's entities (search/incident.py: graphrag's context, without walking every relationship).

Each is a context manager: the relationships and reports graphrag writes into are lent to the
engine until the block ends. Blocking the first time a version's objects are made.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from graphrag_mcp_server.handlers.prepared import prepared
from graphrag_mcp_server.handlers.tables import IndexTables

if TYPE_CHECKING:
    from graphrag.callbacks.query_callbacks import QueryCallbacks
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.query.structured_search.basic_search.search import BasicSearch
    from graphrag.query.structured_search.drift_search.search import DRIFTSearch
    from graphrag.query.structured_search.global_search.search import GlobalSearch
    from graphrag.query.structured_search.local_search.search import LocalSearch


@contextmanager
def local_engine(
    config: "GraphRagConfig",
    tables: IndexTables,
    level: int,
    entity_types: list[str] | None = None,
    response_type: str = "",
    callbacks: "list[QueryCallbacks] | None" = None,
) -> Iterator["LocalSearch"]:
    """graphrag's local search engine as graphrag.api.local_search makes it, over the version's
    prepared objects (`entity_types`: only entities of these types). Blocking on first use of a
    level."""
    from graphrag.config.embeddings import entity_description_embedding
    from graphrag.query.factory import get_local_search_engine
    from graphrag.utils.api import get_embedding_store, load_search_prompt

    from graphrag_mcp_server.handlers.search.held_vectors import held_vectors
    from graphrag_mcp_server.handlers.search.incident import IncidentRelationshipsContext
    from graphrag_mcp_server.handlers.search.relationship_index import relationship_index

    objects = prepared(tables)
    lookups = objects.local_lookups(level, entity_types)
    with objects.reports(level) as reports:
        engine = get_local_search_engine(  # records are looked up in `lookups`, not made again
            config=config,
            reports=reports,
            text_units=[],
            entities=[],
            relationships=[],
            covariates={"claims": objects.covariates()},
            description_embedding_store=get_embedding_store(
                config=config.vector_store, embedding_name=entity_description_embedding
            ),
            response_type=response_type,
            system_prompt=load_search_prompt(config.local_search.prompt),
            callbacks=callbacks,
        )
        engine.context_builder = IncidentRelationshipsContext(
            engine.context_builder,
            lookups,
            relationship_index(objects),
            held_vectors(objects, engine.context_builder.entity_text_embeddings),
        )
        yield engine


@contextmanager
def basic_engine(
    config: "GraphRagConfig",
    tables: IndexTables,
    response_type: str = "",
    callbacks: "list[QueryCallbacks] | None" = None,
) -> Iterator["BasicSearch"]:
    """graphrag's basic search engine as graphrag.api.basic_search makes it, over the prepared text
    units."""
    from graphrag.config.embeddings import text_unit_text_embedding
    from graphrag.query.factory import get_basic_search_engine
    from graphrag.utils.api import get_embedding_store, load_search_prompt

    yield get_basic_search_engine(
        config=config,
        text_units=prepared(tables).text_units(),
        text_unit_embeddings=get_embedding_store(
            config=config.vector_store, embedding_name=text_unit_text_embedding
        ),
        response_type=response_type,
        system_prompt=load_search_prompt(config.basic_search.prompt),
        callbacks=callbacks,
    )


@contextmanager
def global_engine(
    config: "GraphRagConfig",
    tables: IndexTables,
    level: int,
    dynamic: bool,
    response_type: str,
    callbacks: "list[QueryCallbacks]",
) -> Iterator["GlobalSearch"]:
    """graphrag's global search engine as graphrag.api.global_search makes it, over the prepared
    objects."""
    from graphrag.query.factory import get_global_search_engine
    from graphrag.utils.api import load_search_prompt

    objects, section = prepared(tables), config.global_search
    with objects.reports(level, dynamic=dynamic) as reports:
        yield get_global_search_engine(
            config,
            reports=reports,
            entities=objects.entities(level),
            communities=objects.communities(),
            response_type=response_type,
            dynamic_community_selection=dynamic,
            map_system_prompt=load_search_prompt(section.map_prompt),
            reduce_system_prompt=load_search_prompt(section.reduce_prompt),
            general_knowledge_inclusion_prompt=load_search_prompt(section.knowledge_prompt),
            callbacks=callbacks,
        )


@contextmanager
def drift_engine(
    config: "GraphRagConfig",
    tables: IndexTables,
    level: int,
    response_type: str,
    callbacks: "list[QueryCallbacks]",
) -> Iterator["DRIFTSearch"]:
    """graphrag's DRIFT search engine as graphrag.api.drift_search makes it, over the prepared
    objects."""
    from graphrag.config.embeddings import (
        community_full_content_embedding,
        entity_description_embedding,
    )
    from graphrag.query.factory import get_drift_search_engine
    from graphrag.utils.api import get_embedding_store, load_search_prompt

    from graphrag_mcp_server.handlers.search.held_vectors import held_vectors
    from graphrag_mcp_server.handlers.search.incident import IncidentRelationshipsContext
    from graphrag_mcp_server.handlers.search.relationship_index import relationship_index

    objects, stores = prepared(tables), config.vector_store
    report_embeddings = get_embedding_store(
        config=stores, embedding_name=community_full_content_embedding
    )
    lookups = objects.local_lookups(level)
    with objects.reports(level, embeddings=report_embeddings) as reports:
        engine = get_drift_search_engine(  # records are looked up in `lookups`, not made again
            config=config,
            reports=reports,
            text_units=[],
            entities=[],
            relationships=[],
            description_embedding_store=get_embedding_store(
                config=stores, embedding_name=entity_description_embedding
            ),
            local_system_prompt=load_search_prompt(config.drift_search.prompt),
            reduce_system_prompt=load_search_prompt(config.drift_search.reduce_prompt),
            response_type=response_type,
            callbacks=callbacks,
        )
        local = engine.context_builder.local_mixed_context
        engine.context_builder.local_mixed_context = IncidentRelationshipsContext(
            local,
            lookups,
            relationship_index(objects),
            held_vectors(objects, local.entity_text_embeddings),
        )
        # DRIFT's local steps run a LocalSearch made with the engine, over the builder it had then
        engine.local_search.context_builder = engine.context_builder.local_mixed_context
        yield engine
