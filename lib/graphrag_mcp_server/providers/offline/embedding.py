"""The offline embedding model: hashed bag-of-words and character n-gram vectors, each feature
weighted by how rare its words are in general English (wordfreq)."""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
from graphrag_llm import types as llm_types
from graphrag_llm.embedding import LLMEmbedding
from graphrag_llm.middleware import with_middleware_pipeline

from graphrag_mcp_server.providers import OFFLINE_DIMENSIONS as DEFAULT_OFFLINE_DIMENSIONS
from graphrag_mcp_server.providers import OFFLINE_EMBEDDING_REVISION
from graphrag_mcp_server.providers.offline.text import STOPWORDS, WORD
from graphrag_mcp_server.providers.offline.word_frequency import zipf_frequency

if TYPE_CHECKING:
    from graphrag_cache import Cache, CacheKeyCreator
    from graphrag_llm.config import ModelConfig
    from graphrag_llm.metrics import MetricsProcessor, MetricsStore
    from graphrag_llm.rate_limit import RateLimiter
    from graphrag_llm.retry import Retry
    from graphrag_llm.tokenizer import Tokenizer

_FEATURE_WEIGHTS = {"w": 1.0, "b": 0.6, "c": 0.2}
COMMONEST_ZIPF = 8.0
"""About the Zipf frequency of the commonest English word ("the" is 7.7): log10 of a word's
frequency per billion words, as wordfreq gives it."""


def _char_ngrams(word: str) -> Iterator[str]:
    """Character 3- and 4-grams of ``word`` padded with '<' and '>'."""
    padded = f"<{word}>"
    for size in (3, 4):
        for start in range(len(padded) - size + 1):
            yield padded[start : start + size]


def warm_up() -> None:
    """Load the word frequencies the embedding weighs words by (wordfreq: about 0.6 s of the
    first embedding of a process, a server's first search included)."""
    zipf_frequency()


@lru_cache(maxsize=1 << 17)
def rarity(word: str) -> float:
    """How rare `word` is in general English, 0.01-1: the square of its distance below the
    commonest word's Zipf frequency, as a share of it (a name or word wordfreq does not know is 1;
    "harbour" 0.26; "board" 0.12). Squared: the weight of both the query's and the text's features,
    so that a rare name in one sentence of a long text still decides its nearest texts."""
    share = max(0.0, COMMONEST_ZIPF - zipf_frequency()(word, "en")) / COMMONEST_ZIPF
    return max(0.01, share**2)


def _features(text: str) -> dict[str, float]:
    """Weighted hashing features: unigrams, bigrams and character n-grams, each weighted by its
    kind and by the rarity of its words (a character n-gram: of the rarest word it is part of)."""
    words = [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]
    counts = Counter(f"w:{w}" for w in words)
    counts.update(f"b:{a} {b}" for a, b in pairwise(words))
    counts.update(f"c:{g}" for w in words for g in _char_ngrams(w))
    rare: dict[str, float] = {}
    for word in set(words):
        weight = rare[f"w:{word}"] = rarity(word)
        for gram in (f"c:{gram}" for gram in _char_ngrams(word)):
            rare[gram] = max(rare.get(gram, 0.0), weight)
    for first, second in set(pairwise(words)):
        rare[f"b:{first} {second}"] = (rarity(first) + rarity(second)) / 2
    return {f: _FEATURE_WEIGHTS[f[0]] * rare[f] * (1.0 + math.log(c)) for f, c in counts.items()}


@lru_cache(maxsize=1 << 16)
def _bucket(feature: str, dimensions: int) -> tuple[int, float]:
    """Stable index and sign of ``feature`` (blake2b, not Python's hash)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "big")
    return value % dimensions, 1.0 if value >> 63 else -1.0


def _hashed_vector(text: str, dimensions: int = DEFAULT_OFFLINE_DIMENSIONS) -> list[float]:
    """L2-normalised hashed bag-of-words vector; texts sharing words land close."""
    vector = np.zeros(dimensions)
    for feature, weight in _features(text).items():
        index, sign = _bucket(feature, dimensions)
        vector[index] += sign * weight
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:  # no content words: a fixed unit vector keeps cosine defined
        vector[0], norm = 1.0, 1.0
    unit: list[float] = (vector / norm).tolist()
    return unit


def _base_embeddings(
    model: str, tokenizer: Tokenizer, dimensions: int
) -> tuple[llm_types.LLMEmbeddingFunction, llm_types.AsyncLLMEmbeddingFunction]:
    """Base sync/async embedding functions, to be wrapped by the middleware."""

    def _embed(**kwargs: Any) -> llm_types.LLMEmbeddingResponse:
        texts = kwargs["input"]
        texts = [texts] if isinstance(texts, str) else list(texts)
        size = kwargs.get("dimensions") or dimensions
        tokens = sum(tokenizer.num_tokens(t) for t in texts)
        return llm_types.LLMEmbeddingResponse(
            object="list",
            model=model,
            data=[
                llm_types.LLMEmbedding(
                    object="embedding", embedding=_hashed_vector(t, size), index=i
                )
                for i, t in enumerate(texts)
            ],
            usage=llm_types.LLMEmbeddingUsage(prompt_tokens=tokens, total_tokens=tokens),
        )

    async def _embed_async(**kwargs: Any) -> llm_types.LLMEmbeddingResponse:
        return _embed(**kwargs)

    return _embed, _embed_async


class OfflineEmbedding(LLMEmbedding):
    """Deterministic hashed bag-of-words embeddings; no model, no network."""

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
        dimensions: int = DEFAULT_OFFLINE_DIMENSIONS,
        **kwargs: Any,
    ) -> None:
        """Build the base functions and wrap them in graphrag-llm's middleware.

        ``dimensions`` comes from the model's settings.yaml entry.
        """
        self._model_id = model_id
        self._tokenizer = tokenizer
        self._metrics_store = metrics_store
        self._track_metrics = metrics_processor is not None
        embed, embed_async = _base_embeddings(model_config.model, tokenizer, int(dimensions))
        self._embedding, self._embedding_async = with_middleware_pipeline(
            model_config=model_config,
            model_fn=embed,
            async_model_fn=embed_async,
            metrics_processor=metrics_processor,
            cache=cache,
            cache_key_creator=cache_key_creator,
            request_type="embedding",
            tokenizer=tokenizer,
            rate_limiter=rate_limiter,
            retrier=retrier,
        )

    def embedding(
        self, /, **kwargs: Unpack[llm_types.LLMEmbeddingArgs]
    ) -> llm_types.LLMEmbeddingResponse:
        """Sync embedding."""
        request, metrics = self._prepare(dict(kwargs))
        try:
            return self._embedding(**request)
        finally:
            self._record(metrics)

    async def embedding_async(
        self, /, **kwargs: Unpack[llm_types.LLMEmbeddingArgs]
    ) -> llm_types.LLMEmbeddingResponse:
        """Async embedding."""
        request, metrics = self._prepare(dict(kwargs))
        try:
            return await self._embedding_async(**request)
        finally:
            self._record(metrics)

    def _prepare(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], llm_types.Metrics | None]:
        """Add metrics and the model id (kept apart from other models' cache keys)."""
        metrics = kwargs.pop("metrics", None) or {}
        metrics = metrics if self._track_metrics else None
        model = f"{self._model_id}@{OFFLINE_EMBEDDING_REVISION}"  # older revisions' cache apart
        return {**kwargs, "metrics": metrics, "model": model}, metrics

    def _record(self, metrics: llm_types.Metrics | None) -> None:
        """Store one request's metrics."""
        if metrics:
            self._metrics_store.update_metrics(metrics=metrics)

    @property
    def metrics_store(self) -> MetricsStore:
        """The metrics store."""
        return self._metrics_store

    @property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer."""
        return self._tokenizer
