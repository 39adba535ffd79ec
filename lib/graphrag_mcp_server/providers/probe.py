"""One cheap call per configured model before an index build: a wrong key, base URL or model name
stops the run in seconds with the provider's own message, not minutes later as "No entities detected"."""

import asyncio
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.errors import ProviderError
from graphrag_mcp_server.providers import OFFLINE_TYPE
from graphrag_mcp_server.providers.retry import describe

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.config import ModelConfig

LOCAL_TYPES = {OFFLINE_TYPE, "mcp_sampling"}
"""Model types that call no provider."""


async def probe_models(config: "GraphRagConfig", timeout: float) -> dict[str, int]:
    """Ask every configured completion and embedding model for one token / one vector (no cache); the length
    of each probed embedding model's vector, by model name.

    Raises ProviderError naming the model and the provider's reason when one fails or takes more
    than `timeout` seconds.
    """
    from graphrag_llm.completion import create_completion
    from graphrag_llm.embedding import create_embedding

    calls: list[tuple[str, ModelConfig, Any]] = []
    for name, model in config.completion_models.items():
        if model.type not in LOCAL_TYPES:
            calls.append((name, model, lambda m=model: create_completion(_unmetered(m)).completion_async(
                messages="Reply with OK.", max_tokens=1)))
    for name, model in config.embedding_models.items():
        if model.type not in LOCAL_TYPES:
            calls.append((name, model, lambda m=model: create_embedding(_unmetered(m)).embedding_async(input=["ok"])))
    dimensions: dict[str, int] = {}
    for name, model, call in calls:
        try:
            answer = await asyncio.wait_for(call(), timeout)
        except TimeoutError:
            raise ProviderError(_failed(name, model, f"no answer within {timeout:g} s")) from None
        except Exception as error:  # noqa: BLE001 - any failure of the call is the provider's answer
            raise ProviderError(_failed(name, model, describe(error))) from error
        if name in config.embedding_models and getattr(answer, "embeddings", None):
            dimensions[name] = len(answer.embeddings[0])
    return dimensions


def _unmetered(model: "ModelConfig") -> "ModelConfig":
    """The model without this project's usage stores: the probe is not part of any operation's cost."""
    return model.model_copy(update={"metrics": None})


def _failed(name: str, model: "ModelConfig", reason: str) -> str:
    where = f" at {model.api_base}" if model.api_base else ""
    return (f"the model provider failed before indexing started: model {name} ({model.model_provider}/{model.model}"
            f"{where}): {reason}. Check the key, base URL and model name in settings.yaml and the environment")
