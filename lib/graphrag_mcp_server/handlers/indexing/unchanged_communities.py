"""Communities whose report records did not change, carried over without building their records.

A community's report is written from its records (kept_reports.py `level_records`): each member's
details (number, title, description, degree) and the relationship it is listed with (number, ends,
description, combined degree). Building every community's records, then hashing them to find the
few an update changed, walks every entity and relationship of the corpus (a third of an update's
time at 10,000 documents). Here each member's details are hashed as columns (pandas
`hash_pandas_object`, no record built), and a community's signature is the digest of its members'
hashes: a signature the previous version stored gives the community's report as it was written,
and the keys of its stored context and report, which are kept for the next version. Only the
communities whose signature is new have their records built.

Degrees are hashed as what they do to the context, not as values: a hub gaining one relationship
raises the degree of every relationship it is on, in every community one of them is listed in
(hundreds at 10,000 documents), and those contexts would be built again to find that their reports
are carried (a report is matched without degrees, carried_reports.py). A degree decides the
context's order (relationships by combined degree, then number) and, through its digits, its
tokens and so where the budget cuts it: each listed relationship's rank in its community's order
and each degree's number of digits are hashed in place of the values. A community whose order and
digits did not change keeps its report and its stored context (with the degrees it was built
with); its rows, and so its report, are the same as a new context's.
"""

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from graphrag_mcp_server.handlers.indexing.memos import CarriedOver, Step, input_hash, text_digest

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

SIGNATURE_FORM = "members-details-first-edge/degrees-as-order-and-digits"
"""Part of a signature's key: signatures made another way are not matched."""


def signature_keys(
    members: "pd.DataFrame",
    first_edge: "np.ndarray",
    edges: "pd.DataFrame",
    node_columns: tuple[str, ...],
    edge_columns: tuple[str, ...],
    settings: tuple[Any, ...],
) -> dict[Any, str]:
    """Each community's memo key: a digest of its members' details and first edges (`first_edge`:
    each member row's position in `edges`, -1 for none), degrees as order and digits, with
    `settings` (what else its context and report are made from)."""
    import numpy as np
    import pandas as pd

    hashed = pd.util.hash_pandas_object
    communities = members["community"].to_numpy()
    nodes = hashed(_degrees_as_digits(members, node_columns), index=False).to_numpy()
    listed = first_edge >= 0
    edge_hashes = np.zeros(len(members), dtype=np.uint64)
    if listed.any():
        listed_edges = edges.iloc[first_edge[listed]]
        rows = _degrees_as_digits(listed_edges, edge_columns)
        rows["rank"] = _edge_ranks(listed_edges, communities[listed])
        edge_hashes[listed] = hashed(rows, index=False).to_numpy()
    member_hashes = hashed(
        pd.DataFrame({"node": nodes, "edge": edge_hashes, "listed": listed}), index=False
    ).to_numpy()
    order = np.lexsort((member_hashes, communities))
    ordered, grouped = member_hashes[order], communities[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    ends = np.r_[starts[1:], len(grouped)]
    return {
        grouped[start].item(): input_hash(
            SIGNATURE_FORM, hashlib.sha256(ordered[start:end].tobytes()).hexdigest(), *settings
        )
        for start, end in zip(starts, ends, strict=True)
    }


def _degrees_as_digits(frame: "pd.DataFrame", columns: tuple[str, ...]) -> "pd.DataFrame":
    """`frame`'s `columns`, each degree replaced by its number of digits (its tokens in a
    context)."""
    import graphrag.data_model.schemas as schemas

    picked = frame.loc[:, list(columns)].reset_index(drop=True)
    for degree in {schemas.NODE_DEGREE, schemas.EDGE_DEGREE} & set(columns):
        picked[degree] = picked[degree].astype("int64").astype(str).str.len()
    return picked


def _edge_ranks(listed: "pd.DataFrame", communities: "np.ndarray") -> "np.ndarray":
    """Each listed relationship's place in its community's context order (graphrag's
    sort_context: combined degree descending, then record number)."""
    import graphrag.data_model.schemas as schemas
    import numpy as np

    degree = listed[schemas.EDGE_DEGREE].to_numpy().astype(np.int64)
    number = listed[schemas.SHORT_ID].to_numpy().astype(np.int64)
    order = np.lexsort((number, -degree, communities))
    grouped = communities[order]
    starts = np.r_[True, grouped[1:] != grouped[:-1]]
    first = np.maximum.accumulate(np.where(starts, np.arange(len(order)), 0))
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(len(order)) - first
    return ranks


def report_settings(
    context_form: str, max_tokens: int, prompt: str, max_length: int
) -> tuple[Any, ...]:
    """What a community's context and report are made from besides its records."""
    return (context_form, max_tokens, text_digest(prompt), max_length)


def unchanged_reports(
    carried: CarriedOver, keys: list[str], previous_rows: Mapping[str, int]
) -> dict[str, dict[str, Any] | int]:
    """The report written for the records whose signature is each of `keys` (its fields but
    community and level), or the row of the previous version's reports table that holds it
    (`previous_rows`, report_rows.py: such a report is not decoded); its stored context and
    report kept for the next version. Keys whose previous version stored none are left out. The
    stored entries are decoded at once (Memo.peek_many): one at a time, they were a tenth of this
    step at 10,000 documents."""
    entries = carried[Step.COMMUNITY].peek_many(keys)
    found = {
        key: entry
        for key, entry in zip(keys, entries, strict=True)
        if entry is not None and carried[Step.REPORT_CONTEXT].keep(entry["context"])
    }
    wanted = [
        entry["report"]
        for key, entry in found.items()
        if entry["written"] is None and key not in previous_rows
    ]
    stored = dict(zip(wanted, carried[Step.REPORT].peek_many(wanted), strict=True))
    reports: dict[str, dict[str, Any] | int] = {}
    for key, entry in found.items():
        written = entry["written"]
        if written is None:  # the report as its memo entry holds it, or as the table wrote it
            written = previous_rows.get(key, (stored.get(entry["report"]) or {}).get("report"))
        if written is None or (
            entry["report"] is not None and not carried[Step.REPORT].keep(entry["report"])
        ):
            continue
        carried[Step.COMMUNITY].keep(key)  # decoded once, by peek_many
        reports[key] = written
    return reports


def remember(
    carried: CarriedOver,
    key: str,
    context_key: str,
    report_key: str | None,
    written: dict[str, Any] | None,
) -> None:
    """Store the report written for the records whose signature is `key`, with the keys of its
    context and report (None: a lone entity's, written from its row). `written` is None when it
    is the report as its memo entry holds it (not stored twice)."""
    carried[Step.COMMUNITY].put(
        key, {"context": context_key, "report": report_key, "written": written}
    )
