"""The workflow `create_base_text_units_kept`, named in the pipeline in place of graphrag's
`create_base_text_units`.

graphrag's workflow tokenises and chunks every current document on every run (8% of a
one-document edit at 3,000 documents). This one writes the same rows, taking each document's
chunks and their token counts from the previous version when the chunker's input is unchanged:
the document's text, the chunking settings and the metadata values prepended to its chunks
(carry_over.py's memos, step `chunks`). An update takes the units of a document whose input is
unchanged from the previous version's text_units table, their memos kept undecoded (units.py).
Other documents are chunked by graphrag's own `chunk_document` and tokenizer. Without memos it is
graphrag's own workflow.

During an update a text unit keeps the id it had in the previous version: the id of the same
chunk (by position) of the document with the same title. graphrag's id is a hash of the unit's
text, so an edit gave the unit a new id; that id is in the `text_unit_ids` of every entity,
relationship and community the unit names, and a hub's list holds hundreds. A new unit gets
graphrag's hash (salted with its title and position in the rare case that an id kept for another
unit has it). A changed unit is still embedded again (vector_delta.py compares texts).
"""

import logging
from functools import cached_property
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import (
    CARRIED,
    CarriedOver,
    Memo,
    Step,
    input_hash,
    run_state,
    sample,
)
from graphrag_mcp_server.handlers.indexing.units import Chunks, UnitIds, unchanged_units

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag.index.typing.context import PipelineRunContext
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag_chunking.chunker import Chunker
    from graphrag_llm.tokenizer import Tokenizer

    from graphrag_mcp_server.handlers.indexing.previous import PreviousVersion

logger = logging.getLogger(__name__)

WORKFLOW, REPLACES = "create_base_text_units_kept", "create_base_text_units"
"""This module's workflow, and graphrag's that it replaces in the pipeline."""

STATE = "text_unit_ids"
"""The key of a run's UnitIds in the state graphrag hands its workflows."""


def unit_ids_kept(previous: "PreviousVersion | None") -> UnitIds | None:
    """The `previous` version's text unit ids for this run's units to keep (None: a full build,
    or a version whose tables cannot give them: graphrag's ids)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if previous is None:
        return None
    try:
        units = pq.read_table(previous.path / "text_units.parquet", columns=["id", "document_id"])
        documents = pq.read_table(previous.path / "documents.parquet", columns=["id", "title"])
    except (OSError, ValueError, KeyError, pa.ArrowException) as error:
        logger.info("no previous text unit ids to keep (%s): graphrag's ids", error)
        return None
    return UnitIds(units, documents, previous.path)


async def run_workflow(
    config: "GraphRagConfig", context: "PipelineRunContext"
) -> "WorkflowFunctionOutput":
    """graphrag's create_base_text_units, each unit with the id it had (`UnitIds`): the units of
    a document whose chunker input is unchanged carried from the previous version's table
    (units.py), the others' chunks carried from their memos (looked up at once) or chunked."""
    from graphrag.index.typing.workflow import WorkflowFunctionOutput
    from graphrag.index.workflows import create_base_text_units
    from graphrag.logger.progress import progress_ticker

    carried: CarriedOver | None = run_state(context, CARRIED)
    if carried is None:
        return await create_base_text_units.run_workflow(config, context)
    ids: UnitIds = run_state(context, STATE) or UnitIds()
    tables = context.output_table_provider
    documents = await tables.read_dataframe("documents")
    tick = progress_ticker(context.callbacks.progress, len(documents))
    chunking, memo = Chunking(config), carried[Step.CHUNKS]
    unchanged = unchanged_units(documents, ids, memo, config)
    others = documents if unchanged is None else documents.iloc[unchanged.others]
    tick(len(documents) - len(others))
    chunks = chunking.chunks(memo, others, tick)
    text_units = _text_units(others, chunks, ids)
    if unchanged is not None:
        unchanged.keep(memo, chunking.settings, documents["text"])
        text_units = unchanged.joined(text_units, [len(each) for each in chunks])
    await tables.write_dataframe("text_units", text_units)
    return WorkflowFunctionOutput(result=sample(text_units))


def _text_units(documents: "pd.DataFrame", chunks: list[Chunks], ids: UnitIds) -> "pd.DataFrame":
    """graphrag's text units of the documents' chunks, in order, each with its id (`UnitIds`)."""
    import pandas as pd

    titles = documents["title"].tolist() if "title" in documents else [""] * len(documents)
    titles = [str(title) for title in titles]
    owners = zip(documents["id"].tolist(), chunks, strict=True)
    return pd.DataFrame(
        {
            "id": ids.ids_of(titles, chunks),
            "document_id": [owner for owner, each in owners for _ in each],
            "text": [text for each in chunks for text, _ in each],
            "n_tokens": [n_tokens for each in chunks for _, n_tokens in each],
        }
    )


class Chunking:
    """graphrag's chunker and tokenizer as `config.chunking` sets them up (made when a document
    is first chunked: loading the encoding takes most of a second), and what their chunks of a
    document depend on besides its text."""

    def __init__(self, config: "GraphRagConfig") -> None:
        self.config = config.chunking
        self.settings = config.chunking.model_dump(mode="json")
        self.prepend_metadata: list[str] | None = config.chunking.prepend_metadata

    @cached_property
    def tokenizer(self) -> "Tokenizer":
        from graphrag.tokenizer.get_tokenizer import get_tokenizer

        return get_tokenizer(encoding_model=self.config.encoding_model)

    @cached_property
    def chunker(self) -> "Chunker":
        from graphrag_chunking.chunker_factory import create_chunker

        return create_chunker(self.config, self.tokenizer.encode, self.tokenizer.decode)

    def chunks(
        self, memo: Memo, documents: "pd.DataFrame", tick: "Callable[[int], None]"
    ) -> list[Chunks]:
        """Each document's chunks (each a list of [text, n_tokens]): the previous version's when
        chunked alike (looked up at once, and told to `tick` at once), else chunked now (and
        remembered). A document becomes a row of Python values only when it is chunked, or when
        metadata heads its chunks (the memo key holds it)."""
        records = documents.to_dict("records") if self.prepend_metadata else None
        metadata = [self._metadata(record) for record in records] if records else None
        keys = [
            input_hash(text, self.settings, metadata[row] if metadata else None)
            for row, text in enumerate(documents["text"].tolist())
        ]
        found: list[Any] = memo.take_many(keys)  # JSON: each chunk a list
        tick(sum(stored is not None for stored in found))
        chunks: list[Chunks] = []
        for row, (key, stored) in enumerate(zip(keys, found, strict=True)):
            if stored is None:
                if (stored := memo.used.get(key)) is None:
                    stored = self.chunked(records[row] if records else _record(documents, row))
                    memo.put(key, stored)
                tick(1)
            chunks.append(stored)
        return chunks

    def chunked(self, document: dict[str, Any]) -> Chunks:
        """graphrag's chunks of the document (`chunk_document`), each with its token count."""
        from graphrag.index.workflows.create_base_text_units import chunk_document

        texts = chunk_document(document, self.chunker, self.prepend_metadata)
        return [(text, len(self.tokenizer.encode(text))) for text in texts if text is not None]

    def _metadata(self, document: dict[str, Any]) -> dict[str, Any] | None:
        """The metadata values graphrag prepends to the document's chunks (None: none)."""
        from graphrag_input import TextDocument

        if not self.prepend_metadata:
            return None
        metadata: dict[str, Any] = TextDocument(
            id=document["id"],
            title=document.get("title", ""),
            text=document["text"],
            creation_date=document.get("creation_date", ""),
            raw_data=document.get("raw_data"),
        ).collect(self.prepend_metadata)
        return metadata


def _record(documents: "pd.DataFrame", row: int) -> dict[str, Any]:
    """One document as graphrag's pipeline hands it to chunking (`to_dict("records")`'s row)."""
    record: dict[str, Any] = documents.iloc[row : row + 1].to_dict("records")[0]
    return record
