"""Per-operation accounting of model calls and tokens, fed by graphrag-llm's own metrics.

Every model graphrag creates reports each request to a metrics store. `enable_usage_tracking`
points the configured models at the stores registered here, which add each request to the
`Usage` of the operation in progress (a context variable, so concurrent queries stay apart).

graphrag-llm counts no tokens for streamed completions (the answers of all four searches): the
processor registered here adds their prompt tokens, and `count_streamed_answer` their output.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.tokenizer import Tokenizer

COMPLETION_STORE = "graphrag_mcp_completion_usage"
EMBEDDING_STORE = "graphrag_mcp_embedding_usage"
STREAM_PROCESSOR = "graphrag_mcp_streamed_prompt_tokens"


class Usage(BaseModel):
    """Model requests and tokens spent by one operation (cache hits are not calls)."""

    llm_calls: int = 0
    """Chat requests sent (each retry one more): what the provider was asked, and paid, for."""
    answered_calls: int = 0
    """Completion calls that got an answer in the end (after their retries)."""
    failed_calls: int = 0
    """Completion calls that failed for good (after their retries)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedding_tokens: int = 0
    cached_responses: int = 0
    last_error: str | None = None
    """The provider's reason for the last failed call, if any failed."""


_current_usage: ContextVar[Usage | None] = ContextVar("graphrag_mcp_usage", default=None)


@contextmanager
def track_usage() -> Iterator[Usage]:
    """Collect the model usage of everything run inside the block (tasks spawned inside
    included)."""
    usage = Usage()
    token = _current_usage.set(usage)
    try:
        yield usage
    finally:
        _current_usage.reset(token)


def current_usage() -> Usage | None:
    """The Usage of the operation in progress, if one is being tracked."""
    return _current_usage.get()


def _record(metrics: dict[str, Any], *, embedding: bool) -> None:
    usage = _current_usage.get()
    if usage is None:
        return
    cached = int(metrics.get("cached_responses", 0))
    usage.cached_responses += cached
    if cached:  # graphrag-llm replays the original call's metrics on a cache hit: nothing was spent
        return
    calls = int(metrics.get("attempted_request_count", 0)) + int(
        metrics.get("retries", 0)
    )  # retries are requests
    if embedding:
        usage.embedding_calls += calls
        usage.embedding_tokens += int(metrics.get("prompt_tokens", 0))
    else:
        usage.llm_calls += calls
        usage.answered_calls += int(metrics.get("successful_response_count", 0))
        usage.failed_calls += int(metrics.get("failed_response_count", 0))
        usage.prompt_tokens += int(metrics.get("prompt_tokens", 0))
        usage.completion_tokens += int(metrics.get("completion_tokens", 0))


def _store_class(embedding: bool) -> type:
    from graphrag_llm.metrics.memory_metrics_store import MemoryMetricsStore

    class UsageMetricsStore(MemoryMetricsStore):
        """graphrag-llm's memory store that also feeds the current operation's Usage."""

        def update_metrics(self, *, metrics: Any) -> None:
            super().update_metrics(metrics=metrics)
            _record(metrics, embedding=embedding)

    return UsageMetricsStore


@cache
def model_tokenizer(model_id: str) -> "Tokenizer":
    """The tokenizer graphrag-llm uses for `model_id` (provider/model)."""
    from graphrag_llm.config.tokenizer_config import TokenizerConfig
    from graphrag_llm.tokenizer.tokenizer_factory import create_tokenizer

    return create_tokenizer(TokenizerConfig(model_id=model_id))


def _processor_class() -> type:
    from graphrag_llm.metrics.default_metrics_processor import DefaultMetricsProcessor

    class StreamedPromptTokensProcessor(DefaultMetricsProcessor):
        """graphrag-llm's metrics processor, plus the prompt tokens of streamed completions."""

        def process_metrics(
            self, *, model_config: Any, metrics: Any, input_args: dict[str, Any], response: Any
        ) -> None:
            super().process_metrics(
                model_config=model_config, metrics=metrics, input_args=input_args, response=response
            )
            if input_args.get("stream") and "prompt_tokens" not in metrics:
                tokenizer = model_tokenizer(f"{model_config.model_provider}/{model_config.model}")
                metrics["prompt_tokens"] = tokenizer.num_prompt_tokens(input_args["messages"])

    return StreamedPromptTokensProcessor


def count_streamed_answer(usage: Usage, answer: str, model_id: str) -> None:
    """Add the tokens of an answer that graphrag streamed (and graphrag-llm did not meter)."""
    usage.completion_tokens += model_tokenizer(model_id).num_tokens(answer)


def register_usage_stores() -> None:
    """Register the usage-feeding metrics stores and processor with graphrag-llm (idempotent)."""
    from graphrag_llm.metrics.metrics_processor_factory import (
        metrics_processor_factory,
        register_metrics_processor,
    )
    from graphrag_llm.metrics.metrics_store_factory import (
        metrics_store_factory,
        register_metrics_store,
    )

    for name, embedding in ((COMPLETION_STORE, False), (EMBEDDING_STORE, True)):
        if name not in metrics_store_factory:
            register_metrics_store(name, _store_class(embedding), scope="singleton")
    if STREAM_PROCESSOR not in metrics_processor_factory:
        register_metrics_processor(STREAM_PROCESSOR, _processor_class())


def enable_usage_tracking(config: "GraphRagConfig") -> None:
    """Point every configured model's metrics at the usage stores; quiet the exit-time metrics
    log."""
    from graphrag_llm.config import MetricsConfig

    register_usage_stores()
    for model in config.completion_models.values():
        metrics = model.metrics or MetricsConfig()
        model.metrics = metrics.model_copy(
            update={"store": COMPLETION_STORE, "type": STREAM_PROCESSOR, "writer": None}
        )
    for model in config.embedding_models.values():
        metrics = model.metrics or MetricsConfig()
        model.metrics = metrics.model_copy(update={"store": EMBEDDING_STORE, "writer": None})
