"""Typed results shared by the CLI's JSON output and the MCP tools' structured output."""

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field


class Source(BaseModel):
    """A text unit an answer drew on, with the document it came from."""

    document: str = Field(description="Title of the source document (its file name for text input)")
    text_unit_id: str = Field(description="Id of the text unit (chunk) in the index")


class SearchResult(BaseModel):
    """An answer with the sources and cost behind it."""

    type: str = Field(description="Search method: global, local, drift or basic")
    query: str
    answer: str
    sources: list[Source] = Field(description="Text units behind the answer, cited ones first")
    context_counts: dict[str, int] = Field(
        description="Records of each kind (entities, relationships, reports, sources...) that went into the context"
    )
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float


class TableCounts(BaseModel):
    """Rows of each of the index's tables."""

    documents: int
    text_units: int
    entities: int
    relationships: int
    communities: int
    community_reports: int


class IndexSummary(TableCounts):
    """What an indexing run produced and what it cost."""

    documents_added: int
    documents_updated: int = Field(description="Same title, new content")
    documents_deleted: int
    documents_renamed: int = Field(description="Same content, new title")
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    mode: str = Field(description="full or incremental")


class ModelNames(BaseModel):
    """The models the index was configured with, as provider/model."""

    completion: list[str]
    embedding: list[str]


class VectorStoreInfo(BaseModel):
    """The vector store and the tables it holds."""

    type: str
    tables: dict[str, int] = Field(description="Vector table name -> rows")


class IndexStatistics(TableCounts):
    """Size and makeup of an index."""

    community_levels: int
    covariates: int
    index_updated_at: datetime | None
    models: ModelNames
    vector_store: VectorStoreInfo


class JobState(StrEnum):
    """Where an index job stands."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class IndexJob(BaseModel):
    """An index build: its progress while it runs, its summary or error once it ends."""

    job_id: str
    state: JobState = JobState.RUNNING
    data_path: str
    mode: str = Field(description="Requested mode: full or incremental")
    started_at: datetime
    finished_at: datetime | None = None
    workflow: str | None = Field(default=None, description="graphrag workflow now running")
    workflows_done: int = 0
    workflows_total: int | None = None
    summary: IndexSummary | None = None
    error: str | None = None



class ServerStatistics(IndexStatistics):
    """Index statistics plus the serving process's view of it."""

    uptime_seconds: float
    index_version: str = Field(description="Digest of the loaded index files; changes with every rebuild")
    loaded_at: datetime
    last_job: IndexJob | None = Field(description="The last index job started by this server (see index_status)")
