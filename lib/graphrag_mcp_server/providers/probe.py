"""Checks of the configured models before an index build spends calls: one cheap call per model, so
a wrong key, base URL or model name stops the run in seconds with the provider's own message, not
minutes later as "No entities detected"; and one small extraction through graphrag's extraction
prompt and parser, so a model that answers but cannot write graphrag's extraction format (a very
small local model) is named at once."""

import asyncio
import hashlib
import json
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Iterable
from contextvars import ContextVar
from functools import cache
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.errors import ModelFormatError, ProviderError
from graphrag_mcp_server.providers import OFFLINE_TYPE
from graphrag_mcp_server.providers.faults import FaultKind, Operation, advice, describe, fault_kind
from graphrag_mcp_server.providers.operation import answer_by

if TYPE_CHECKING:
    from graphrag.config.models.graph_rag_config import GraphRagConfig
    from graphrag_llm.config import ModelConfig

logger = logging.getLogger(__name__)

LOCAL_TYPES = {OFFLINE_TYPE, "mcp_sampling"}
"""Model types that call no provider."""
SAMPLE_WORDS = 120
"""Length of the passage of the corpus the extraction check sends."""
EXTRACTION_TOKENS = 600
"""The most the extraction check lets the model write: enough for several records, not for a model
that rambles."""
EXTRACTION_TIMES = 4
"""The extraction check may take this many times the one-token check's time (its prompt is about
2,000 tokens)."""
SHOWN_CHARACTERS = 200
"""How much of an unparsable answer the error quotes."""
PREPARE_SECONDS = 60.0
"""How long a check may take to send its request (importing the model libraries on a busy
machine); the provider's `timeout` starts when the request leaves."""
WATCH_SECONDS = 0.05
"""How often a check looks whether its request has left."""


async def probe_models(
    config: "GraphRagConfig", timeout: float, extraction_sample: str | None = None
) -> dict[str, int]:
    """Ask every configured completion and embedding model for one token / one vector (no cache;
    counted in the Usage of the operation around, if one is tracked: the provider is paid for them);
    the length of each probed embedding model's vector, by model name. With `extraction_sample`,
    then ask graphrag's extraction model to extract the graph of that text (`check_extraction`),
    allowing it EXTRACTION_TIMES as long.

    Raises ProviderError naming the model and the provider's reason when one fails or takes more
    than `timeout` seconds, and ModelFormatError when the extraction yields no entity.
    """
    from graphrag_llm.completion import create_completion
    from graphrag_llm.embedding import create_embedding

    def completion_call(model: "ModelConfig") -> Callable[[], Awaitable[Any]]:
        return lambda: create_completion(model).completion_async(
            messages="Reply with OK.", max_tokens=1
        )

    def embedding_call(model: "ModelConfig") -> Callable[[], Awaitable[Any]]:
        return lambda: create_embedding(model).embedding_async(input=["ok"])

    calls: list[tuple[str, ModelConfig, Callable[[], Awaitable[Any]]]] = []
    for name, model in config.completion_models.items():
        if model.type not in LOCAL_TYPES:
            calls.append((name, model, completion_call(model)))
    for name, model in config.embedding_models.items():
        if model.type not in LOCAL_TYPES:
            calls.append((name, model, embedding_call(model)))
    dimensions: dict[str, int] = {}
    for name, model, call in calls:
        answer = await _checked(name, model, call, timeout)
        if name in config.embedding_models and getattr(answer, "embeddings", None):
            dimensions[name] = len(answer.embeddings[0])
    name = config.extract_graph.completion_model_id
    model = config.get_completion_model_config(name)
    if extraction_sample and model.type not in LOCAL_TYPES:
        try:
            await _checked(
                name,
                model,
                lambda: check_extraction(config, name, model, extraction_sample),
                timeout * EXTRACTION_TIMES,
            )
        except ProviderError as error:
            if not isinstance(error.__cause__, TimeoutError):
                raise
            logger.warning(
                (
                    "model %s gave no extraction of a %d-word passage within %g s (a slow "
                    "model): indexing goes on without checking its format"
                ),
                name,
                SAMPLE_WORDS,
                timeout * EXTRACTION_TIMES,
            )
    return dimensions


async def _checked(
    name: str, model: "ModelConfig", call: Callable[[], Awaitable[Any]], timeout: float
) -> Any:
    """The answer of one check; ProviderError (its cause the TimeoutError) when it fails or takes
    over `timeout` s from the moment its request left the process (LiteLLM's pre-call hook).
    Getting the request out (model libraries imported, clients made: slow on a busy machine) has
    PREPARE_SECONDS of its own, and running out of them blames this machine, not the provider. No
    retry waits past `timeout` (a 429's Retry-After longer than that fails the check at once)."""
    sent = _request_watch()
    with answer_by(timeout):
        task = asyncio.ensure_future(call())
        try:
            answered = await _within(task, sent, timeout)
        finally:
            task.cancel()
    if answered:
        try:
            return task.result()
        except ModelFormatError:
            raise
        except Exception as error:
            raise ProviderError(_failed(name, model, describe(error), fault_kind(error))) from error
    if not sent.is_set():
        msg = (
            f"indexing did not start: the check of model {name} could not send its request "
            f"within {PREPARE_SECONDS:g} s (this machine is too busy, or the model library is "
            "stuck before calling the provider); run it again when the machine is less loaded"
        )
        raise ProviderError(msg)
    raise ProviderError(
        _failed(name, model, f"no answer within {timeout:g} s", FaultKind.TIMEOUT)
    ) from TimeoutError()


async def _within(task: "asyncio.Future[Any]", sent: threading.Event, timeout: float) -> bool:
    """Whether `task` ends within PREPARE_SECONDS of starting, or `timeout` s of `sent`."""
    loop = asyncio.get_running_loop()
    prepared_by, answered_by = loop.time() + PREPARE_SECONDS, None
    while not task.done():
        now = loop.time()
        if answered_by is None and sent.is_set():
            answered_by = now + timeout
        limit = prepared_by if answered_by is None else answered_by
        if now >= limit:
            return False
        await asyncio.wait({task}, timeout=min(limit - now, WATCH_SECONDS))
    return True


_SENT: ContextVar[threading.Event | None] = ContextVar("probe_request_sent", default=None)
"""Set by LiteLLM's pre-call hook when the current check's request leaves the process."""


def _request_watch() -> threading.Event:
    """A new event for the current check, set when its request is sent (the hook registered with
    LiteLLM once)."""
    _register_hook()
    event = threading.Event()
    _SENT.set(event)
    return event


@cache
def _register_hook() -> None:
    import litellm
    from litellm.integrations.custom_logger import CustomLogger

    class RequestSent(CustomLogger):
        """Marks the check whose request LiteLLM is about to send."""

        def log_pre_api_call(self, model: Any, messages: Any, kwargs: Any) -> None:
            if (event := _SENT.get()) is not None:
                event.set()

    litellm.input_callback.append(RequestSent())


async def check_extraction(
    config: "GraphRagConfig", name: str, model_config: "ModelConfig", text: str
) -> None:
    """Extract the graph of `text` with graphrag's extraction model (`name`), prompt and parser
    (GraphExtractor, no gleanings, no cache, at most EXTRACTION_TOKENS written); raise
    ModelFormatError quoting the answer when no entity comes out of it. An empty answer cut at the
    token limit (a reasoning model thinking) proves nothing."""
    from graphrag.index.operations.extract_graph.graph_extractor import GraphExtractor
    from graphrag_llm.completion import create_completion

    model = _Recorded(create_completion(model_config))
    extractor = GraphExtractor(
        model,  # type: ignore[arg-type]  # wraps an LLMCompletion: what GraphExtractor calls
        config.extract_graph.resolved_prompts().extraction_prompt,
        max_gleanings=0,
    )
    entities, _ = await extractor(text, config.extract_graph.entity_types, source_id="probe")
    if model.error is not None:
        raise model.error
    if entities.empty and (model.answer.strip() or model.finish_reason != "length"):
        raise ModelFormatError(_unparsable(name, model_config, model.answer))


def extraction_probe_key(config: "GraphRagConfig") -> str:
    """What an extraction check depends on: the extraction model, its prompt and entity types (a
    check that passed for the same key need not be sent again)."""
    model = config.get_completion_model_config(config.extract_graph.completion_model_id)
    parts = [
        model.model_provider,
        model.model,
        model.api_base or "",
        model.azure_deployment_name or "",
        config.extract_graph.resolved_prompts().extraction_prompt,
        *config.extract_graph.entity_types,
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


def sample_passage(texts: Iterable[str], words: int = SAMPLE_WORDS, documents: int = 20) -> str:
    """The `words`-word passage of the first `documents` texts that names the most (capitalised
    words that do not start a sentence): text a model following graphrag's prompt extracts entities
    from."""
    best, best_names = "", -1
    for number, text in enumerate(texts):
        if number >= documents:
            break
        tokens = text.split()
        for start in range(0, max(1, len(tokens) - words + 1), max(1, words // 4)):
            window = tokens[start : start + words]
            names = sum(
                1
                for before, word in zip(window, window[1:], strict=False)
                if word[:1].isupper() and not re.search(r"[.!?:\"']$", before)
            )
            if names > best_names:
                best, best_names = " ".join(window), names
    return best


class _Recorded:
    """A completion model that writes at most EXTRACTION_TOKENS and keeps the text of its answer
    (what an unparsable extraction quotes), or its error (answering nothing instead: graphrag's
    extractor would log it with a traceback)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.answer = ""
        self.finish_reason: str | None = None
        self.error: Exception | None = None

    async def completion_async(self, **kwargs: Any) -> Any:
        try:
            response = await self._model.completion_async(**kwargs, max_tokens=EXTRACTION_TOKENS)
        except Exception as error:  # noqa: BLE001 - raised again by check_extraction
            self.error = error
            return SimpleNamespace(content="")
        self.answer, self.finish_reason = response.content, response.choices[0].finish_reason
        return response


def _failed(name: str, model: "ModelConfig", reason: str, kind: FaultKind) -> str:
    where = f" at {model.api_base}" if model.api_base else ""
    return (
        f"the model provider failed before indexing started: model {name} "
        f"({model.model_provider}/{model.model}{where}): {reason}. "
        f"{advice(kind, Operation.BUILD, reason=reason)}"
    )


def _unparsable(name: str, model: "ModelConfig", answer: str) -> str:
    shown = " ".join(answer.split())[:SHOWN_CHARACTERS]
    return (
        f"indexing did not start: model {name} ({model.model_provider}/{model.model}) answered "
        "graphrag's extraction prompt, but no entity could be parsed from its answer: it does "
        "not write graphrag's extraction format "
        '(("entity"<|>NAME<|>TYPE<|>DESCRIPTION) records), so indexing would find no entities. '
        "Use a larger model for extract_graph in settings.yaml, or adapt the prompts to this "
        "model and corpus with `graphrag-mcp tune`. "
        f"It answered: {json.dumps(shown) if shown else '(nothing)'}"
    )
