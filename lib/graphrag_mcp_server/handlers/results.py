"""Typed results shared by the CLI's JSON output and the MCP tools' structured output."""

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field


class Turn(BaseModel):
    """An earlier turn of the conversation."""

    role: Literal["user", "assistant"]
    content: str = Field(min_length=1, max_length=20_000)


class Source(BaseModel):
    """A text unit an answer drew on, with the document it came from."""

    document: str = Field(description="Title of the source document (its file name for text input)")
    text_unit_id: str = Field(description="Id of the text unit (chunk) in the index")


CONTEXT_DOCUMENTS = 20
"""Most document titles a context record lists: an entity named across a large corpus is in
thousands of documents (1,600 for a hub of a 10,000-document archive)."""
DOCUMENTS_LISTED = (
    f"Titles of the first {CONTEXT_DOCUMENTS} documents behind it, in the order of its text units"
)
DOCUMENT_COUNT = "How many documents are behind it in all"


class ContextEntity(BaseModel):
    """An entity in a search's context."""

    id: str = Field(description="The entity's short id, as graphrag's prompts cite it")
    name: str
    type: str
    description: str
    documents: list[str] = Field(description=DOCUMENTS_LISTED)
    document_count: int = Field(description=DOCUMENT_COUNT)


class ContextRelationship(BaseModel):
    """A relationship in a search's context."""

    id: str = Field(description="The relationship's short id, as graphrag's prompts cite it")
    source: str
    target: str
    description: str
    weight: float
    documents: list[str] = Field(description=DOCUMENTS_LISTED)
    document_count: int = Field(description=DOCUMENT_COUNT)


class ContextReport(BaseModel):
    """A community report in a search's context."""

    community: str = Field(
        description="The community's short id (get_community, graphrag://communities/{id})"
    )
    title: str
    rating: float | None = Field(description="graphrag's importance rating of the report (0-10)")
    similarity: float | None = Field(
        default=None, description="Similarity of the report to the query (-1 to 1)"
    )
    content: str
    documents: list[str] = Field(description=DOCUMENTS_LISTED)
    document_count: int = Field(description=DOCUMENT_COUNT)


class ContextTextUnit(BaseModel):
    """A passage of a source document in a search's context."""

    id: str = Field(description="Text unit id (get_text_unit, graphrag://text_units/{id})")
    document: str
    text: str


class SearchContext(BaseModel):
    """What graphrag would have sent the model, ranked, within a token budget."""

    entities: list[ContextEntity] = []
    relationships: list[ContextRelationship] = []
    reports: list[ContextReport] = []
    text_units: list[ContextTextUnit] = []
    max_tokens: int = Field(description="The token budget the context was built within")
    tokens: int = Field(
        description="Tokens the context takes, counted with the answer model's tokenizer"
    )
    omitted: dict[str, int] = Field(
        description=(
            "Relevant records of each kind left out to stay within the budget (raise "
            "max_context_tokens)"
        )
    )


class SearchResult(BaseModel):
    """An answer, or with context_only the context for one, with the sources and cost behind it."""

    type: str = Field(description="Search method: global, local, drift or basic")
    answer: str | None = Field(description="The model's answer; null with context_only")
    context: SearchContext | None = Field(
        default=None, description="With context_only: the records to answer from"
    )
    sources: list[Source] = Field(
        description="Text units behind the answer (cited ones first) or the context"
    )
    context_counts: dict[str, int] = Field(
        description=(
            "Records of each kind (entities, relationships, reports, sources...) that went "
            "into the context"
        )
    )
    llm_calls: int = Field(description="Completion calls sent to the model (cache hits excluded)")
    prompt_tokens: int
    completion_tokens: int
    embedding_calls: int = Field(
        default=0, description="Embedding calls (the query's, for vector search)"
    )
    seconds: float
    index_version: str | None = Field(
        default=None,
        description="The index version that answered (as get_statistics "
        "names it): one search reads one version, whatever switches meanwhile",
    )


class TableCounts(BaseModel):
    """Rows of each of the index's tables."""

    documents: int
    text_units: int
    entities: int
    relationships: int
    communities: int
    community_reports: int


class Clustering(BaseModel):
    """How an update clustered: the previous communities kept, or a fresh clustering, and the
    modularity check."""

    seeded: bool
    """The previous version's communities seeded the clustering (else graphrag's fresh clustering
    ran)."""
    communities: int = 0
    kept: int = 0
    """Communities with the same id and members as in the previous version."""
    modularity: float = 0.0
    """Of the top level (the whole graph)."""
    fresh_modularity: float = 0.0
    """Of a fresh Leiden run on the whole graph, the check's reference: this run's, or the last
    one's (fresh_reference.py) when the kept partition passed against it moved by `fresh_drift`."""
    fresh_drift: float = 0.0
    """The most the changes since that fresh run can have moved its partition's modularity (0.0:
    it ran on this graph)."""
    fresh_splits: int = 0
    """Partitions (the whole graph or a community's split) taken from a fresh run: the kept one
    scored too low, or there was nothing to keep."""


class IndexSummary(TableCounts):
    """What an indexing run produced and what it cost."""

    documents_added: int
    documents_updated: int = Field(description="Same title, new content")
    documents_deleted: int
    documents_renamed: int = Field(description="Same content, new title")
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    embedding_calls: int = 0
    seconds: float = Field(
        description="The run, from reading the documents to the switch to the new version "
        "(importing graphrag's pipeline and the model libraries, a few seconds, left out)"
    )
    mode: str = Field(description="full or incremental")
    skipped: dict[str, int] = Field(
        default={},
        description=(
            "Files and folders not read, by reason: hidden, index_root, link_outside (a link "
            "leaving the data folder), other_type (not matching the input pattern), "
            "unreadable"
        ),
    )
    unreadable: dict[str, str] = Field(
        default={},
        description="Documents left out because they could not be read: path -> reason (encrypted, "
        "damaged, no text)",
    )
    documents_read: int = Field(
        default=0,
        description="Files opened and read by this run; the others were unchanged since the "
        "served version read them (size, times and inode) and their documents were taken from it",
    )
    carried_over: dict[str, int] = Field(
        default={},
        description=(
            "Results taken from the previous version because their input is unchanged, by "
            "step: chunks (documents), extraction (text units), summary (descriptions), "
            "report_context (community contexts), report (community reports), embedding (vectors)"
        ),
    )
    computed: dict[str, int] = Field(
        default={},
        description="Results this run computed (model calls, or their cache), by the same steps",
    )
    vectors_written: dict[str, int] = Field(
        default={},
        description=(
            "Vector rows written or deleted, by LanceDB table: an incremental run writes "
            "only new and changed rows"
        ),
    )
    clustering: Clustering | None = Field(
        default=None,
        description=(
            "An incremental run's communities: how many the previous version's partition "
            "kept, and its modularity against a fresh clustering's"
        ),
    )
    workflows: list[str] = Field(
        default=[], description="The pipeline's workflows that ran, in order"
    )


class ModelNames(BaseModel):
    """The models the index was configured with, as provider/model."""

    completion: list[str]
    embedding: list[str]


class VectorStoreInfo(BaseModel):
    """The vector store and the tables it holds."""

    type: str
    tables: dict[str, int] = Field(description="Vector table name -> rows")


class IndexIssue(BaseModel):
    """Something wrong with an index: an `error` stops some searches, a `warning` weakens them."""

    severity: Literal["error", "warning"]
    message: str = Field(description="What is wrong, where, and the command that fixes it")


class IndexStatistics(TableCounts):
    """Size and makeup of an index."""

    community_levels: int
    covariates: int
    index_updated_at: datetime | None
    models: ModelNames
    vector_store: VectorStoreInfo
    issues: list[IndexIssue] = Field(
        default=[], description="Damage and gaps found when the index was loaded"
    )


class VersionStatistics(IndexStatistics):
    """Index statistics plus the workflows that built the served version (`graphrag-mcp stats`)."""

    workflows: dict[str, float] = Field(
        default={},
        description="The pipeline's workflows that built the served version, in order -> seconds "
        "(graphrag's stats.json)",
    )


class JobState(StrEnum):
    """Where an index job stands."""

    QUEUED = "queued"
    """Written documents wait for the settle window (or a running job) before their job starts."""
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TunedPrompts(BaseModel):
    """Prompts graphrag's prompt tuning wrote (or would write) for the corpus, and what tuning
    cost."""

    changed: list[str] = Field(
        description="Prompt files whose tuned text differs from the root's (relative paths)"
    )
    unchanged: list[str] = Field(description="Prompt files the tuning left as they were")
    written: bool = Field(default=False, description="The changed files were written")
    backup: str | None = Field(
        default=None, description="Folder holding the prompts from before (prompts.bak-<time>)"
    )
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    embedding_calls: int = 0
    seconds: float


class IndexJob(BaseModel):
    """An index build or a prompt tuning: its progress while it runs, its result or error once it
    ends."""

    job_id: str
    state: JobState = JobState.RUNNING
    data_path: str
    mode: str = Field(
        description="Requested mode: full or incremental (a build), tune (tune_prompts)"
    )
    started_at: datetime
    finished_at: datetime | None = None
    workflow: str | None = Field(
        default=None, description="graphrag workflow (or tuning stage) now running"
    )
    workflows_done: int = 0
    workflows_total: int | None = None
    summary: IndexSummary | None = None
    tuned: TunedPrompts | None = Field(default=None, description="A tune_prompts job's result")
    error: str | None = None


class OperationCost(BaseModel):
    """Model usage of all operations of one kind."""

    operations: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0

    def add(self, result: "SearchResult | IndexSummary | TunedPrompts") -> None:
        """Count one more operation and what it spent."""
        self.operations += 1
        self.llm_calls += result.llm_calls
        self.prompt_tokens += result.prompt_tokens
        self.completion_tokens += result.completion_tokens
        self.embedding_calls += result.embedding_calls


class ReplicaStatus(BaseModel):
    """A replica's follower: the blob location it follows, its last good poll and its last error."""

    location: str = Field(description="The blob location followed (az://CONTAINER/PREFIX)")
    version: str | None = Field(
        default=None, description="The version current.json named at the last good poll"
    )
    last_successful_poll: datetime | None = Field(
        default=None, description="When the follower last read the container without error"
    )
    last_error: str | None = Field(
        default=None,
        description="The follower's last error (the last good version keeps serving meanwhile)",
    )
    last_error_at: datetime | None = None
    consecutive_failures: int = Field(
        default=0,
        description=(
            "Polls failed since the last good one (0: healthy); each failure doubles the "
            "wait before the next poll, up to a bound"
        ),
    )


class ServerStatistics(IndexStatistics):
    """Index statistics plus the serving process's view of it."""

    uptime_seconds: float
    index_version: str = Field(
        description="Digest of the loaded index files; changes with every rebuild"
    )
    loaded_at: datetime
    last_job: IndexJob | None = Field(
        description="The last index job started by this server (see index_status)"
    )
    costs: dict[str, OperationCost] = Field(
        description=(
            "Model usage since the server started, per operation kind (tool; context_only "
            "searches apart)"
        )
    )
    replica: ReplicaStatus | None = Field(
        default=None, description="With blob storage: how this replica follows the container"
    )
