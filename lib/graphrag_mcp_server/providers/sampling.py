"""A graphrag-llm completion model that asks the connected MCP client's own model, through sampling.

With `serve --llm sampling`, each search's completion calls (graphrag's prompts, unchanged) go to
the client that called the tool as `sampling/createMessage` requests, and the client's reply is
the model's answer. The session is the calling tool's (`sampling_client`), so concurrent clients
each answer their own searches. Indexing never uses it: it needs a model without a client.
"""

import json
import warnings
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from graphrag_llm import types as llm_types
from graphrag_llm.completion import register_completion
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp_types import SamplingMessage, TextContent

from graphrag_mcp_server.errors import SamplingUnavailableError
from graphrag_mcp_server.providers.offline.completion import (
    OfflineCompletion,
    async_items,
    completion_response,
    stream_chunks,
)
from graphrag_mcp_server.providers.offline.request import message_text

if TYPE_CHECKING:
    from graphrag_llm.tokenizer import Tokenizer
    from mcp.server.session import ServerSession

SAMPLING_TYPE = "mcp_sampling"  # also in providers/probe.py LOCAL_TYPES
DEFAULT_MAX_TOKENS = 2000
"""Reply length asked of the client when graphrag sets none."""


class SamplingClient:
    """The session of the tool call in progress, and the request the sampling calls relate to."""

    def __init__(self, session: "ServerSession", request_id: str | int | None) -> None:
        self.session, self.request_id = session, request_id


_client: ContextVar[SamplingClient | None] = ContextVar(
    "graphrag_mcp_sampling_client", default=None
)


@contextmanager
def sampling_client(session: "ServerSession", request_id: str | int | None) -> Iterator[None]:
    """Send the sampling model's calls made inside the block to this client session."""
    token = _client.set(SamplingClient(session, request_id))
    try:
        yield
    finally:
        _client.reset(token)


def _sampling_messages(messages: Any) -> tuple[str | None, list[SamplingMessage]]:
    """graphrag's chat messages as MCP sampling messages; system messages become the system
    prompt."""
    items = (
        [{"role": "user", "content": messages}]
        if isinstance(messages, str)
        else [
            message if isinstance(message, dict) else message.model_dump() for message in messages
        ]
    )
    system = "\n\n".join(
        message_text(item.get("content")) for item in items if item.get("role") == "system"
    )
    conversation = [
        SamplingMessage(
            role="assistant" if item.get("role") == "assistant" else "user",
            content=TextContent(type="text", text=message_text(item.get("content"))),
        )
        for item in items
        if item.get("role") != "system"
    ]
    return system or None, conversation


def _format_instruction(kwargs: dict[str, Any]) -> str:
    """What graphrag's structured requests need said in words: the client's model has no JSON mode
    here."""
    response_format = kwargs.get("response_format")
    if response_format is not None:
        schema = json.dumps(response_format.model_json_schema())
        return f"\n\nReply with one JSON object only, no prose, matching this JSON schema: {schema}"
    if kwargs.get("response_format_json_object"):
        return "\n\nReply with one JSON object only, no prose."
    return ""


def _sampling_functions(model: str, tokenizer: "Tokenizer") -> tuple[Any, Any]:
    def _sync(**_: Any) -> llm_types.LLMCompletionResponse[Any]:
        msg = "the sampling model answers only asynchronous calls (graphrag's searches)"
        raise SamplingUnavailableError(msg)

    async def _sample(
        **kwargs: Any,
    ) -> llm_types.LLMCompletionResponse[Any] | AsyncIterator[llm_types.LLMCompletionChunk]:
        client = _client.get()
        if client is None:
            msg = (
                "the sampling model was called outside a client's tool call (indexing needs "
                "a model in settings.yaml)"
            )
            raise SamplingUnavailableError(msg)
        system, conversation = _sampling_messages(kwargs["messages"])
        system = (system or "") + _format_instruction(kwargs) or None
        result = await client.session.create_message(
            messages=conversation,
            system_prompt=system,
            max_tokens=kwargs.get("max_completion_tokens")
            or kwargs.get("max_tokens")
            or DEFAULT_MAX_TOKENS,
            temperature=kwargs.get("temperature"),
            related_request_id=client.request_id,
        )
        text = result.content.text if isinstance(result.content, TextContent) else ""
        prompt_tokens, completion_tokens = (
            tokenizer.num_prompt_tokens(kwargs["messages"]),
            tokenizer.num_tokens(text),
        )
        usage = llm_types.LLMCompletionUsage(
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            total_tokens=prompt_tokens + completion_tokens,
        )
        if not kwargs.get("stream"):
            return completion_response(text, result.model or model, usage)
        return async_items(stream_chunks(text, result.model or model, usage))

    return _sync, _sample


class SamplingCompletion(OfflineCompletion):
    """graphrag-llm completion whose answers come from the calling MCP client's model."""

    def _base_functions(self, model: str, tokenizer: "Tokenizer") -> tuple[Any, Any]:
        return _sampling_functions(model, tokenizer)


def register_sampling_model() -> None:
    """Make `type: mcp_sampling` available to graphrag-llm's completion factory.

    The MCP revision of 2026-07-28 deprecates sampling (SEP-2577) and the SDK warns on every
    request; the warning says nothing a user of this server can act on, so it is silenced.
    """
    warnings.filterwarnings(
        "ignore", message="The sampling capability is deprecated", category=MCPDeprecationWarning
    )
    register_completion(SAMPLING_TYPE, SamplingCompletion, scope="singleton")


def sampling_config(config: Any) -> Any:
    """A copy of the index's config whose completion models are the client's, through sampling."""
    from graphrag_llm.config import ModelConfig

    register_sampling_model()
    models = {
        name: ModelConfig(
            type=SAMPLING_TYPE, model_provider="mcp", model="client-sampling", metrics=model.metrics
        )
        for name, model in config.completion_models.items()
    }
    return config.model_copy(update={"completion_models": models})
