"""graphrag's `sort_context` cut to a token budget, found by bisection instead of edge by edge.

graphrag 3.3's `sort_context` adds a community's edges one at a time (by degree, then number), each
with its entities and claims, and writes and tokenises the whole context after each edge until it
exceeds the budget: quadratic in the community's size, and most of an update's time on a large
archive (a community of 2,000 edges wrote and tokenised 2,000 growing contexts). Adding an edge only
adds rows, so a context's tokens grow with the number of edges it holds; the last prefix within the
budget is then found by galloping and bisection, writing and tokenising about 2 log2(n) contexts of
at most twice the answer's length (n: the edges the answer holds). The text is
graphrag's: the same rows in the same order, written as its `to_csv` writes them
(tests/test_report_context.py compares the two at several budgets).

Before that search, the cut is guessed from each row's tokens (the tokenizer splits a context at
its line ends, so a context's tokens are its rows' plus those of its titles and headers; a row's
count is kept for the run, as the same rows come back in the communities of every level) and
checked by writing and tokenising the guess and the guess plus one edge: two contexts instead of
about 2 log2(n). A guess that the check refutes falls back to the search.

A stored cut context whose records changed only in numbers and degrees (a hub's degree is in the
rows of every community beside it) is carried when the same edges still come first
(`carried_cut`): its rows are rewritten as context_rows.py rewrites a whole context's, and the cut
checked by writing and tokenising one context, the next edge's, instead of writing and tokenising
the whole community's.
"""

from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from graphrag_mcp_server.handlers.indexing.context_rows import (
    Numbered,
    Tables,
    csv_rows,
    csv_text,
    render_tables,
    rewritten_rows,
    sorted_details,
)

if TYPE_CHECKING:
    from graphrag_llm.tokenizer import Tokenizer

Row = dict[str, Any]


def cut_context(records: list[Row], tokenizer: "Tokenizer", max_context_tokens: int) -> str:
    """What graphrag's `sort_context(records, tokenizer, max_context_tokens=...)` returns: the
    context of the longest prefix of edges within the budget (of the first edge alone when none
    fits)."""
    nodes, claims, edges, sizes = _prefixes(records)
    if not sizes:
        return ""

    def context(prefix: int) -> str:
        held_nodes, held_claims, held_edges = sizes[prefix - 1]
        return render_tables(
            {
                "Entities": nodes[:held_nodes],
                "Claims": claims[:held_claims],
                "Relationships": edges[:held_edges],
            }
        )

    def fits(prefix: int) -> bool:
        return tokenizer.num_tokens(context(prefix)) <= max_context_tokens

    guess = _guessed_cut(nodes, claims, edges, sizes, tokenizer, max_context_tokens)
    if (
        guess is not None
        and 0 <= guess <= len(sizes)
        and (guess == 0 or fits(guess))
        and (guess == len(sizes) or not fits(guess + 1))
    ):
        return context(max(guess, 1))
    # Galloping from the first edge (1, 2, 4, ...), then bisection: about 2 log2(answer) contexts,
    # none much longer than the answer's (a small budget on a large community writes small ones).
    low, step = 0, 1
    while low + step <= len(sizes) and fits(low + step):
        low, step = low + step, step * 2
    high = min(low + step - 1, len(sizes))  # the longest fitting prefix lies in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return context(max(low, 1))


def carried_cut(
    stored: Tables | None,
    tokens: int,
    was: Numbered,
    now: Numbered,
    records: list[Row],
    tokenizer: "Tokenizer",
    max_context_tokens: int,
) -> tuple[str, int] | None:
    """A stored cut context (its `stored` tables, of `tokens`, numbered `was`; context_rows.
    context_tables) for `records` numbered `now`:
    its rows rewritten when the edges it holds are still the first in graphrag's order, it still
    fits and the next edge still does not; None otherwise (it is then written anew)."""
    nodes, claims, edges, sizes = _prefixes(records)
    if claims or stored is None or "Relationships" not in stored:
        return None
    held = len(stored["Relationships"][1])
    fitting = next((size for size in sizes if size[2] == held), None)
    following = next((size for size in sizes if size[2] == held + 1), None)
    if fitting is None or following is None:  # fewer edges now, or the whole context
        return None
    order = {"Entities": nodes[: fitting[0]], "Claims": [], "Relationships": edges[:held]}
    context = rewritten_rows(stored, tokens, was, now, order, tokenizer)
    if context is None or context[1] > max_context_tokens:
        return None
    one_more = {"Entities": nodes[: following[0]], "Relationships": edges[: held + 1]}
    if tokenizer.num_tokens(render_tables(one_more)) <= max_context_tokens:
        return None
    return context


_ROW_TOKENS: "WeakKeyDictionary[Tokenizer, dict[str, int]]" = WeakKeyDictionary()
"""Each tokenizer's count of a row's tokens (its text and line end), for as long as the
tokenizer lives (a run's)."""


def _guessed_cut(
    nodes: list[Row],
    claims: list[Row],
    edges: list[Row],
    sizes: list[tuple[int, int, int]],
    tokenizer: "Tokenizer",
    max_context_tokens: int,
) -> int | None:
    """The longest prefix of edges whose context's tokens, counted as its rows' plus those of the
    first prefix's titles and headers, fit the budget (0: not even the first); None when the
    rows cannot be counted apart (claims: a claim's row can end in punctuation, which the
    tokenizer joins to the line end)."""
    if claims:
        return None
    counted = _ROW_TOKENS.setdefault(tokenizer, {})

    def counts(rows: list[Row]) -> list[int] | None:
        texts = csv_rows(csv_text(rows))
        if texts is None or len(texts) != len(rows) + 1:  # the header, then a text per row
            return None
        found = []
        for text in texts[1:]:
            if (count := counted.get(text)) is None:
                count = counted[text] = tokenizer.num_tokens(f"{text}\n")
            found.append(count)
        return found

    node_tokens, edge_tokens = counts(nodes), counts(edges)
    if node_tokens is None or edge_tokens is None:
        return None
    first_nodes, _, first_edges = sizes[0]
    frame = tokenizer.num_tokens(
        render_tables({"Entities": nodes[:first_nodes], "Relationships": edges[:first_edges]})
    ) - (sum(node_tokens[:first_nodes]) + sum(edge_tokens[:first_edges]))
    total, held_nodes, held_edges, prefix = frame, 0, 0, 0
    for held in sizes:
        total += sum(node_tokens[held_nodes : held[0]]) + sum(edge_tokens[held_edges : held[2]])
        held_nodes, held_edges = held[0], held[2]
        if total > max_context_tokens:
            break
        prefix += 1
    return prefix


def _prefixes(
    records: list[Row],
) -> tuple[list[Row], list[Row], list[Row], list[tuple[int, int, int]]]:
    """The entities, claims and edges in the order graphrag's loop adds them, and after each edge
    how many of each the context holds."""
    import graphrag.data_model.schemas as schemas

    short_id = schemas.SHORT_ID
    edges, details, claims_of = sorted_details(records)
    nodes: list[Row] = []
    claims: list[Row] = []
    kept_edges: list[Row] = []
    seen: dict[str, set[int]] = {"nodes": set(), "claims": set(), "edges": set()}
    sizes = []
    for edge in edges:
        ends = (edge[schemas.EDGE_SOURCE], edge[schemas.EDGE_TARGET])
        for node in (details.get(end) for end in ends):
            if node and node[short_id] not in seen["nodes"]:
                seen["nodes"].add(node[short_id])
                nodes.append(node)
        for claim in (claim for end in ends for claim in claims_of.get(end) or []):
            if claim[short_id] not in seen["claims"]:
                seen["claims"].add(claim[short_id])
                claims.append(claim)
        if edge[short_id] not in seen["edges"]:
            seen["edges"].add(edge[short_id])
            kept_edges.append(edge)
        sizes.append((len(nodes), len(claims), len(kept_edges)))
    return nodes, claims, kept_edges, sizes
