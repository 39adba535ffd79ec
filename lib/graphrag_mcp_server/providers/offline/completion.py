"""The offline completion model: recognises GraphRAG's prompt, answers it through graphrag-llm."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from types import UnionType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, Union, Unpack, get_args, get_origin

from graphrag.index.operations.extract_graph.graph_extractor import COMPLETION_DELIMITER
from graphrag_llm import types as llm_types
from graphrag_llm.completion import LLMCompletion
from graphrag_llm.middleware import with_middleware_pipeline
from graphrag_llm.utils import create_completion_response, structure_completion_response
from pydantic import BaseModel, ValidationError

from graphrag_mcp_server.providers.offline.answering import (
    drift_local,
    drift_primer,
    drift_reduce,
    fallback,
    global_map,
    global_reduce,
    hypothetical_answer,
    rate_relevancy,
    table_answer,
)
from graphrag_mcp_server.providers.offline.extraction import extract_claims, extract_graph
from graphrag_mcp_server.providers.offline.reports import community_report, summarize
from graphrag_mcp_server.providers.offline.request import Request, to_request
from graphrag_mcp_server.providers.offline.tuning import TUNING_HANDLERS

if TYPE_CHECKING:
    from graphrag_cache import Cache, CacheKeyCreator
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.metrics import MetricsProcessor, MetricsStore
    from graphrag_llm.rate_limit import RateLimiter
    from graphrag_llm.retry import Retry
    from graphrag_llm.tokenizer import Tokenizer

logger = logging.getLogger(__name__)
R = TypeVar("R")

_HANDLERS: tuple[tuple[tuple[str, ...], Callable[[Request], str]], ...] = (
    (("Answer Y if there are still",), lambda _: "N"),
    (("were missed in the last extraction",), lambda _: COMPLETION_DELIMITER),
    (("Create a hypothetical answer to the following query:",), hypothetical_answer),
    (("ntity_types:", "-Real Data-"), extract_graph),
    (("Entity specification:", "Claim description:"), extract_claims),
    (("Description List:",), summarize),
    (('"rating_explanation"',), community_report),
    (("intermediate_answer", "follow_up_queries"), drift_primer),
    (("follow_up_queries", "---Data tables---"), drift_local),
    (('"points"', "---Data tables---"), global_map),
    (("---Analyst Reports---",), global_reduce),
    (("---Data Reports---",), drift_reduce),
    (("---Information---", "---Question---"), rate_relevancy),
    (("---Data tables---",), table_answer),
)


def _placeholder(annotation: Any, text: str) -> Any:
    """A value of ``annotation``'s type for an unrecognised structured request."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return _placeholder(get_args(annotation)[0], text)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {n: _placeholder(f.annotation, text) for n, f in annotation.model_fields.items()}
    if origin is list or annotation is list:
        return []
    if origin is dict or annotation is dict:
        return {}
    return {str: text, int: 0, float: 0.0, bool: False}.get(annotation, text)


def _answer(messages: Iterable[Any], response_format: type[BaseModel] | None) -> str:
    """Recognise the GraphRAG prompt in ``messages`` and answer it."""
    request = to_request(messages)
    handler = next(
        (h for markers, h in TUNING_HANDLERS if all(m in request.query for m in markers)),
        None,
    ) or next(
        (h for markers, h in _HANDLERS if all(m in request.instructions for m in markers)),
        fallback,
    )
    try:
        text = handler(request)
    except Exception:  # an offline answer must never fail a pipeline
        logger.exception("Offline model could not answer with %s", handler.__name__)
        text = fallback(request)
    if response_format is None:
        return text
    try:
        response_format.model_validate_json(text)
    except ValidationError:
        return json.dumps(_placeholder(response_format, text))
    return text


def completion_response(
    text: str, model: str, usage: llm_types.LLMCompletionUsage
) -> llm_types.LLMCompletionResponse[Any]:
    """A chat completion carrying ``text`` and its token usage."""
    response = create_completion_response(text)
    response.model = model
    response.usage = usage
    return response


def stream_chunks(
    text: str, model: str, usage: llm_types.LLMCompletionUsage | None
) -> list[llm_types.LLMCompletionChunk]:
    """``text`` as word-sized stream chunks, ending with a 'stop' chunk."""

    def chunk(
        delta: llm_types.LLMChoiceDelta, finish: Literal["stop"] | None
    ) -> llm_types.LLMCompletionChunk:
        choice = llm_types.LLMChoiceChunk(index=0, delta=delta, finish_reason=finish)
        return llm_types.LLMCompletionChunk(
            id="offline-chunk",
            object="chat.completion.chunk",
            created=0,
            model=model,
            choices=[choice],
        )

    pieces = [
        chunk(llm_types.LLMChoiceDelta(role="assistant", content=piece), None)
        for piece in re.findall(r"\s*\S+\s*", text)
    ]
    last = chunk(llm_types.LLMChoiceDelta(), "stop")
    last.usage = usage
    return [*pieces, last]


async def async_items(
    items: list[llm_types.LLMCompletionChunk],
) -> AsyncIterator[llm_types.LLMCompletionChunk]:
    """Yield ``items`` asynchronously."""
    for item in items:
        yield item


def _base_completions(
    model: str, tokenizer: Tokenizer
) -> tuple[llm_types.LLMCompletionFunction, llm_types.AsyncLLMCompletionFunction]:
    """Base sync/async completion functions, to be wrapped by the middleware."""

    def _complete(
        **kwargs: Any,
    ) -> llm_types.LLMCompletionResponse[Any] | Iterator[llm_types.LLMCompletionChunk]:
        messages = kwargs["messages"]
        text = _answer(messages, kwargs.get("response_format"))
        prompt_tokens = tokenizer.num_prompt_tokens(messages)
        completion_tokens = tokenizer.num_tokens(text)
        usage = llm_types.LLMCompletionUsage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        if not kwargs.get("stream"):
            return completion_response(text, model, usage)
        include_usage = (kwargs.get("stream_options") or {}).get("include_usage", False)
        return iter(stream_chunks(text, model, usage if include_usage else None))

    async def _complete_async(
        **kwargs: Any,
    ) -> llm_types.LLMCompletionResponse[Any] | AsyncIterator[llm_types.LLMCompletionChunk]:
        result = _complete(**kwargs)
        return (
            result
            if isinstance(result, llm_types.LLMCompletionResponse)
            else async_items(list(result))
        )

    return _complete, _complete_async


class OfflineCompletion(LLMCompletion):
    """Deterministic extractive answers to GraphRAG's prompts; not a language model."""

    def __init__(
        self,
        *,
        model_id: str,
        model_config: ModelConfig,
        tokenizer: Tokenizer,
        metrics_store: MetricsStore,
        metrics_processor: MetricsProcessor | None = None,
        rate_limiter: RateLimiter | None = None,
        retrier: Retry | None = None,
        cache: Cache | None = None,
        cache_key_creator: CacheKeyCreator,
        **kwargs: Any,
    ) -> None:
        """Build the base functions and wrap them in graphrag-llm's middleware."""
        self._model_id = model_id
        self._tokenizer = tokenizer
        self._metrics_store = metrics_store
        self._track_metrics = metrics_processor is not None
        complete, complete_async = self._base_functions(model_config.model, tokenizer)
        self._completion, self._completion_async = with_middleware_pipeline(
            model_config=model_config,
            model_fn=complete,
            async_model_fn=complete_async,
            metrics_processor=metrics_processor,
            cache=cache,
            cache_key_creator=cache_key_creator,
            request_type="chat",
            tokenizer=tokenizer,
            rate_limiter=rate_limiter,
            retrier=retrier,
        )

    def _base_functions(
        self, model: str, tokenizer: Tokenizer
    ) -> tuple[llm_types.LLMCompletionFunction, llm_types.AsyncLLMCompletionFunction]:
        """The sync and async functions that answer a request, before the middleware."""
        return _base_completions(model, tokenizer)

    def completion(
        self, /, **kwargs: Unpack[llm_types.LLMCompletionArgs[llm_types.ResponseFormat]]
    ) -> (
        llm_types.LLMCompletionResponse[llm_types.ResponseFormat]
        | Iterator[llm_types.LLMCompletionChunk]
    ):
        """Sync completion."""
        request, response_format, metrics = self._prepare(dict(kwargs))
        try:
            return _structure(self._completion(**request), response_format)
        finally:
            self._record(metrics)

    async def completion_async(
        self, /, **kwargs: Unpack[llm_types.LLMCompletionArgs[llm_types.ResponseFormat]]
    ) -> (
        llm_types.LLMCompletionResponse[llm_types.ResponseFormat]
        | AsyncIterator[llm_types.LLMCompletionChunk]
    ):
        """Async completion."""
        request, response_format, metrics = self._prepare(dict(kwargs))
        try:
            return _structure(await self._completion_async(**request), response_format)
        finally:
            self._record(metrics)

    def _prepare(
        self, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], type[BaseModel] | None, llm_types.Metrics | None]:
        """Normalise a request as LiteLLMCompletion does.

        The model id joins the request so GraphRAG's cache keys, built from the
        request arguments alone, never mix offline answers with a real model's.
        """
        messages = kwargs.pop("messages")
        response_format = kwargs.pop("response_format", None)
        if response_format is not None and kwargs.get("stream"):
            msg = "response_format is not supported for streaming completions."
            raise ValueError(msg)
        metrics = kwargs.pop("metrics", None) or {}
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        request = {
            **kwargs,
            "messages": messages,
            "response_format": response_format,
            "metrics": metrics if self._track_metrics else None,
            "model": self._model_id,
        }
        return request, response_format, request["metrics"]

    def _record(self, metrics: llm_types.Metrics | None) -> None:
        """Store one request's metrics."""
        if metrics is not None:
            self._metrics_store.update_metrics(metrics=metrics)

    @property
    def metrics_store(self) -> MetricsStore:
        """The metrics store."""
        return self._metrics_store

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer."""
        return self._tokenizer


def _structure(response: R, response_format: type[BaseModel] | None) -> R:
    """Attach the parsed structured output, as LiteLLMCompletion does."""
    if response_format is not None:
        if not isinstance(response, llm_types.LLMCompletionResponse):
            msg = "a completion with a response_format cannot be streamed"
            raise TypeError(msg)
        response.formatted_response = structure_completion_response(
            response.content, response_format
        )
    return response
