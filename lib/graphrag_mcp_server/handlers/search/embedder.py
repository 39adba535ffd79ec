"""An embedding model that embeds each input once per search."""

from typing import Any


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
