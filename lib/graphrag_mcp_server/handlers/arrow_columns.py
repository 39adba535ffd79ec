"""Table columns as Arrow arrays, for the work done by whole columns in indexing and searches."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa


def large_strings(values: Any) -> "pa.Array":
    """A column of strings (a pandas Series or array, an Arrow array, a list) as one Arrow
    large_string array: the type graphrag's tables give titles, in one chunk, so that its values
    can be encoded and looked up together. pyarrow's errors for values that are no strings."""
    import pyarrow as pa

    strings = pa.array(values, type=pa.large_string())
    return strings.combine_chunks() if isinstance(strings, pa.ChunkedArray) else strings
