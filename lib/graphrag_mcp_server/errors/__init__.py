"""User-facing errors: each message says what went wrong and what to do about it."""


class GraphRagMcpError(Exception):
    """An error caused by input or environment, reported as one clear line."""


class IndexNotFoundError(GraphRagMcpError):
    """The index root has no built index to read."""


class ConfigError(GraphRagMcpError):
    """settings.yaml is missing, invalid, or needs an unset environment variable."""


class MissingVariableError(ConfigError):
    """settings.yaml references an environment variable that is not set."""

    def __init__(self, message: str, variable: str) -> None:
        super().__init__(message)
        self.variable = variable


class InputDataError(GraphRagMcpError):
    """The data path is missing, empty, or holds no readable documents."""


class IndexBuildError(GraphRagMcpError):
    """A workflow of the indexing pipeline failed."""


class ModelCallsFailedError(GraphRagMcpError):
    """Every model call of an operation failed, though graphrag carried on without raising."""


class SamplingUnavailableError(GraphRagMcpError):
    """The sampling model was called where no client can answer it (outside a tool call, or
    synchronously)."""


class SearchTimeoutError(GraphRagMcpError):
    """A search ran past its deadline; the message carries the provider's last error."""


class IndexDamagedError(GraphRagMcpError):
    """A table or vector table of the index is missing or unreadable."""


class ProviderError(GraphRagMcpError):
    """The model provider refused or failed the calls an operation needs; the message has its
    reason."""


class ModelFormatError(GraphRagMcpError):
    """The model answered, but not in the form graphrag parses (its extraction format)."""


class IndexIncompleteError(IndexBuildError):
    """The pipeline ran, but the new version lacks reports, extractions or vectors: it was not
    published."""


class EmbeddingMismatchError(GraphRagMcpError):
    """The embedding model's vectors are of another width than the index's vector tables."""

    @classmethod
    def of_widths(cls, query: int | str, held: int | str) -> "EmbeddingMismatchError":
        """The error for query vectors of `query` numbers against tables holding `held`, naming
        the fix (the embedding model changed since the index was built)."""
        return cls(
            f"the embedding model returns query vectors of {query} numbers, but the index's "
            f"vector tables hold vectors of {held}: the model changed since the index was "
            "built. Embed everything again with: graphrag-mcp index DATA_PATH --full, or "
            "point settings.yaml back at the model the index was built with"
        )
