"""A LanceDB vector table held in memory once per loaded version, searched exactly without asking
the store: a query's similarity to every row is one pass over a matrix (a 10,000-document
archive: 12,025 entity vectors and 2,777 report vectors of 256 numbers, 15 MB), where a LanceDB
search costs a round trip through its background loop and builds a result row by row."""

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.errors import EmbeddingMismatchError
from graphrag_mcp_server.handlers.search.report_index import Scored

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
    """Every row's id and vector of one LanceDB table, and each vector's squared length."""

    ids: list[str]
    matrix: "np.ndarray"
    squared: "np.ndarray"

    @classmethod
    def read(cls, store: Any) -> "HeldVectors":
        """The ids and vectors of graphrag's LanceDB vector store `store` (a LanceDBVectorStore)."""
        import numpy as np

        table = store.document_collection.to_arrow()
        ids = [str(value) for value in table.column(store.id_field).to_pylist()]
        vectors = table.column(store.vector_field)
        width = getattr(vectors.type, "list_size", 0)  # graphrag's: a fixed-size list
        flat = np.asarray(vectors.combine_chunks().flatten(), dtype=np.float32)
        matrix = flat.reshape(len(ids), width if not ids else -1)
        return cls(ids, matrix, np.einsum("ij,ij->i", matrix, matrix))

    def scores(self, query: list[float]) -> "np.ndarray":
        """Each row's score for `query` as graphrag's LanceDB store gives it: 1 - the squared L2
        distance (LanceDB's default metric). A query of another width than the table's is refused
        as LanceDB refuses it (the embedding model changed since the index was built)."""
        import numpy as np

        if len(query) != self.matrix.shape[1]:
            raise EmbeddingMismatchError.of_widths(len(query), self.matrix.shape[1])

        vector = np.asarray(query, dtype=np.float32)
        # |row - query|^2 as |row|^2 - 2 row.query + |query|^2: one product of the matrix by the
        # query, where the difference's square made and summed a matrix-sized array each query
        distances = self.squared - 2 * (self.matrix @ vector) + vector @ vector
        scores: np.ndarray = 1.0 - np.abs(distances)
        return scores

    @cached_property
    def places(self) -> dict[str, int]:
        """Each row's place by its id."""
        return {key: place for place, key in enumerate(self.ids)}

    def similarity(self, query: list[float]) -> Scored:
        """Every row's score for `query`."""
        return Scored(self.ids, self.scores(query), self.places)

    def nearest(self, query: list[float], k: int) -> list["VectorStoreSearchResult"]:
        """The `k` rows nearest `query`, nearest first, as the store's search returns them (id,
        vector, score; no other fields)."""
        import numpy as np
        from graphrag_vectors import VectorStoreDocument, VectorStoreSearchResult

        scores = self.scores(query)
        near = np.arange(len(scores))
        if 0 < k < len(scores):  # those scoring at least the k-th best: a full sort of a few
            near = np.flatnonzero(scores >= np.partition(scores, len(scores) - k)[len(scores) - k])
        first = near[np.argsort(-scores[near], kind="stable")[:k]]
        return [
            VectorStoreSearchResult(
                document=VectorStoreDocument(id=self.ids[row], vector=self.matrix[row].tolist()),
                score=float(scores[row]),
            )
            for row in first.tolist()
        ]
