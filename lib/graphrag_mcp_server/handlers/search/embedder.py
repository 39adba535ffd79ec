"""An embedding model and a vector store that answer each question once per search."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag_mcp_server.handlers.search.held_vectors import HeldVectors


class RememberedEmbedder:
    """An embedding model that embeds each input once: every use of the query within one search
    shares its embedding (search/incident.py maps the query twice; DRIFT and context_only reuse
    it)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self._answers: dict[tuple[str, ...], Any] = {}

    def embedding(self, *, input: list[str], **kwargs: Any) -> Any:
        """The model's embedding response for `input`, asked for once."""
        key = tuple(input)
        if key not in self._answers:
            self._answers[key] = self._model.embedding(input=input, **kwargs)
        return self._answers[key]


class RememberedSearches:
    """A vector store whose text searches answer each (text, k, options) once: graphrag's local
    builder and this server's candidates map one question to entities more than once a search.
    A plain search (no filter, no selected fields) is answered from the store's `held` vectors
    when given (search/held_vectors.py). Everything else is the store's own."""

    def __init__(self, store: Any, held: "HeldVectors | None" = None) -> None:
        self._store, self._held = store, held
        self._answers: dict[tuple[Any, ...], Any] = {}

    def similarity_search_by_text(
        self, text: str, text_embedder: Any, k: int = 10, **options: Any
    ) -> Any:
        """The store's results for `text`, searched once."""
        key = (text, k, repr(sorted(options.items())))
        if key in self._answers:
            return self._answers[key]
        if self._held is None or options.get("filters") or options.get("select"):
            found = self._store.similarity_search_by_text(text, text_embedder, k=k, **options)
        else:
            vector = text_embedder(text)  # as the store's search: nothing for an empty embedding
            found = self._held.nearest(vector, k) if vector else []
        self._answers[key] = found
        return found

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
