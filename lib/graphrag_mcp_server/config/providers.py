"""Model providers `init` writes a ready settings.yaml section for (no graphrag import here)."""

from enum import StrEnum

from graphrag_mcp_server.providers import OFFLINE_DIMENSIONS, OFFLINE_TYPE


class Provider(StrEnum):
    """Model providers that `init` writes a ready configuration for."""

    OPENAI = "openai"
    AZURE = "azure"
    OLLAMA = "ollama"
    OFFLINE = "offline"


DEFAULT_MODELS: dict[Provider, tuple[str, str, int]] = {
    Provider.OPENAI: ("gpt-4.1-mini", "text-embedding-3-small", 1536),
    Provider.AZURE: ("gpt-4.1-mini", "text-embedding-3-small", 1536),
    Provider.OLLAMA: ("llama3.1", "nomic-embed-text", 768),
    Provider.OFFLINE: ("offline-extractive", "offline-hashing", OFFLINE_DIMENSIONS),
}
"""Completion model, embedding model and its vector size, per provider."""

KNOWN_VECTOR_SIZES = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
    "nomic-embed-text": 768,
    "mxbai-embed-large": 1024,
    "all-minilm": 384,
}


def model_block(provider: Provider, model: str, section: str, api_base: str | None = None) -> str:
    """YAML lines for one model entry; credentials only as ${ENV_VAR} references; `api_base` in
    place of the provider's default base URL (a local OpenAI-compatible server, a proxy)."""
    lines = {
        Provider.OPENAI: [
            "model_provider: openai",
            f"model: {model}",
            "api_key: ${GRAPHRAG_API_KEY}",
        ],
        Provider.AZURE: [
            "model_provider: azure",
            f"model: {model}",
            (
                f"azure_deployment_name: {model}  # the deployment's name in your Azure "
                "OpenAI resource"
            ),
            "api_base: ${GRAPHRAG_API_BASE}  # https://<resource>.openai.azure.com",
            'api_version: "2024-10-21"',
            (
                "api_key: ${GRAPHRAG_API_KEY}  # or auth_method: azure_managed_identity "
                "without api_key"
            ),
        ],
        Provider.OLLAMA: [
            "model_provider: ollama_chat" if section == "completion" else "model_provider: ollama",
            f"model: {model}",
            "api_base: http://localhost:11434",
            "api_key: ollama  # Ollama needs no key; graphrag requires a non-empty value",
        ],
        Provider.OFFLINE: [f"type: {OFFLINE_TYPE}", "model_provider: offline", f"model: {model}"],
    }[provider]
    if api_base is not None:
        # graphrag substitutes ${VARS} in the whole file
        base = f"api_base: {api_base.replace('$', '$$')}"
        lines = [base if line.startswith("api_base:") else line for line in lines]
        lines += [] if base in lines else [base]
    if provider is not Provider.OFFLINE:
        lines += failure_policy(provider)
    name = f"default_{section}_model"
    return f"{section}_models:\n  {name}:\n" + "".join(f"    {line}\n" for line in lines)


def failure_policy(provider: Provider) -> list[str]:
    """YAML lines bounding how long a failing provider is retried (see providers/retry.py)."""
    timeout = 180 if provider is Provider.OLLAMA else 60  # a local model on CPU answers slowly
    return [
        "call_args:",
        f"  timeout: {timeout}  # seconds one request may take",
        "  max_retries: 0  # the provider client's own retries off: retry below decides",
        "retry:",
        (
            "  type: bounded_backoff  # graphrag-mcp: retries 429, 5xx and dropped "
            "connections, honours Retry-After"
        ),
        "  max_retries: 3",
        "  base_delay: 2.0",
        "  max_delay: 30",
        "  total_seconds: 60  # gives up once the next wait would pass this",
    ]
