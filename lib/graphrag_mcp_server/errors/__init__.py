"""User-facing errors: each message says what went wrong and what to do about it."""


class GraphRagMcpError(Exception):
    """An error caused by input or environment, reported as one clear line."""


class IndexNotFoundError(GraphRagMcpError):
    """The index root has no built index to read."""


class ConfigError(GraphRagMcpError):
    """settings.yaml is missing, invalid, or needs an unset environment variable."""


class InputDataError(GraphRagMcpError):
    """The data path is missing, empty, or holds no readable documents."""


class IndexBuildError(GraphRagMcpError):
    """A workflow of the indexing pipeline failed."""


class ModelCallsFailedError(GraphRagMcpError):
    """Every model call of an operation failed, though graphrag carried on without raising."""


class SamplingUnavailableError(GraphRagMcpError):
    """The sampling model was called where no client can answer it (outside a tool call, or synchronously)."""
