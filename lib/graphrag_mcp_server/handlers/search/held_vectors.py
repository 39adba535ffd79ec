"""A LanceDB vector table held in memory once per loaded version, searched exactly without asking
the store: a query's similarity to every row is one pass over a matrix (a 10,000-document
archive: 12,025 entity vectors and 2,777 report vectors of 256 numbers, 15 MB), where a LanceDB
search costs a round trip through its background loop and builds a result row by row."""

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.errors import EmbeddingMismatchError

if TYPE_CHECKING:
    import numpy as np
    from graphrag_vectors import VectorStore, VectorStoreSearchResult

    from graphrag_mcp_server.handlers.prepared import Prepared


def held_vectors(objects: "Prepared", store: "VectorStore") -> "HeldVectors | None":
    """The version's vectors of `store`'s table, read on first use and kept with the version's
    prepared objects; None for a store other than LanceDB (searched as it is)."""
    from graphrag_vectors.lancedb import LanceDBVectorStore

    if not isinstance(store, LanceDBVectorStore):
        return None
    held: HeldVectors = objects.once(
        ("held_vectors", store.index_name), lambda: HeldVectors.read(store)
    )
    return held


@dataclass(frozen=True)
class HeldVectors:
    """Every row's id and vector of one LanceDB table."""

    ids: list[str]
    matrix: "np.ndarray"

    @classmethod
    def read(cls, store: Any) -> "HeldVectors":
        """The ids and vectors of graphrag's LanceDB vector store `store` (a LanceDBVectorStore)."""
        import numpy as np

        table = store.document_collection.to_arrow()
        ids = [str(value) for value in table.column(store.id_field).to_pylist()]
        vectors = table.column(store.vector_field)
        width = getattr(vectors.type, "list_size", 0)  # graphrag's: a fixed-size list
        flat = np.asarray(vectors.combine_chunks().flatten(), dtype=np.float32)
        return cls(ids, flat.reshape(len(ids), width if not ids else -1))

    def scores(self, query: list[float]) -> "np.ndarray":
        """Each row's score for `query` as graphrag's LanceDB store gives it: 1 - the squared L2
        distance (LanceDB's default metric). A query of another width than the table's is refused
        as LanceDB refuses it (the embedding model changed since the index was built)."""
        import numpy as np

        if len(query) != self.matrix.shape[1]:
            raise EmbeddingMismatchError.of_widths(len(query), self.matrix.shape[1])

        distances = np.square(self.matrix - np.asarray(query, dtype=np.float32)).sum(axis=1)
        scores: np.ndarray = 1.0 - np.abs(distances)
        return scores

    def similarity(self, query: list[float]) -> dict[str, float]:
        """Row id -> its score for `query`, for every row."""
        return dict(zip(self.ids, self.scores(query).tolist(), strict=True))

    def nearest(self, query: list[float], k: int) -> list["VectorStoreSearchResult"]:
        """The `k` rows nearest `query`, nearest first, as the store's search returns them (id,
        vector, score; no other fields)."""
        import numpy as np
        from graphrag_vectors import VectorStoreDocument, VectorStoreSearchResult

        scores = self.scores(query)
        first = np.argsort(-scores, kind="stable")[:k]
        return [
            VectorStoreSearchResult(
                document=VectorStoreDocument(id=self.ids[row], vector=self.matrix[row].tolist()),
                score=float(scores[row]),
            )
            for row in first.tolist()
        ]
