"""Dynamic-Frontier local moving for an update's clustering (stable_communities.py): the previous
partition extended to new nodes, the nodes at changed relationships moved by Leiden's rule, and
communities left in pieces split.

A node that was placed before and sits at a changed relationship moves on its first visit only
if the change is what makes the move pay (`_paid_before`): graphrag's Leiden (refined, randomised)
is not a local optimum of the moving rule, and a hub with thousands of relationships, visited for
one new one, moved to the community its old relationships already favoured (issue 40: 10,000
archive documents, 4 reports rewritten for one sentence).
"""

from collections import defaultdict, deque
from collections.abc import Iterator

from graphrag_mcp_server.handlers.indexing.edge_graph import EdgeGraph

Graph = EdgeGraph
Edge = tuple[str, str]


def maintained(
    graph: Graph,
    seed: dict[str, int],
    frontier: set[str],
    ids: Iterator[int],
    changed: dict[Edge, float | None],
) -> dict[str, int]:
    """`seed` extended to every node of `graph`, with the frontier's nodes moved and broken
    communities split (`changed`: each changed relationship's previous weight, None if new)."""
    membership = dict(seed)
    pending = sorted(graph.keys() - membership.keys())
    while pending:
        unplaced = []
        for node in pending:
            votes: defaultdict[int, float] = defaultdict(float)
            for neighbour, weight in graph[node].items():
                if neighbour in membership:
                    votes[membership[neighbour]] += weight
            if votes:
                membership[node] = min(votes, key=lambda community: (-votes[community], community))
            else:
                unplaced.append(node)
        # new nodes linked only to each other: the first starts a community
        if len(unplaced) == len(pending):
            membership[unplaced.pop(0)] = next(ids)
        pending = unplaced
    settled = _previous_links(graph, frontier & seed.keys(), changed)
    _move_frontier(graph, membership, frontier | (graph.keys() - seed.keys()), ids, settled)
    split_disconnected(graph, membership, ids)
    return membership


def _previous_links(
    graph: Graph, nodes: set[str], changed: dict[Edge, float | None]
) -> dict[str, dict[str, float]]:
    """Each of `nodes`' links in `graph` as they were before the changed relationships."""
    links = {node: dict(graph[node]) for node in nodes}
    for (source, target), weight in changed.items():
        for node, other in ((source, target), (target, source)):
            if node not in links or other not in graph:
                continue
            if weight is None:
                links[node].pop(other, None)
            else:
                links[node][other] = weight
    return links


def _move_frontier(
    graph: Graph,
    membership: dict[str, int],
    frontier: set[str],
    ids: Iterator[int],
    settled: dict[str, dict[str, float]],
) -> None:
    """Leiden's local moving, started from the frontier: each visited node goes to the neighbouring
    community (or a community of its own) of the best modularity gain; a node that moves queues its
    neighbours. A `settled` node (one that was placed before, with its links before the change) is
    held where it is on its first visit unless the change is what makes its move pay."""
    degree = graph.degrees()
    twice_weight = sum(degree.values()) or 1.0
    totals: defaultdict[int, float] = defaultdict(float)
    for node, community in membership.items():
        totals[community] += degree[node]
    queue = deque(sorted(frontier))
    queued = set(queue)
    visits = 0
    while queue and visits < 20 * len(graph):
        node = queue.popleft()
        queued.discard(node)
        visits += 1
        current = membership[node]
        links: defaultdict[int, float] = defaultdict(float)
        for neighbour, weight in graph[node].items():
            if neighbour != node:
                links[membership[neighbour]] += weight
        totals[current] -= degree[node]
        best, best_gain = current, _gain(links, degree[node], totals, twice_weight, current)
        for community in sorted(links):
            candidate = _gain(links, degree[node], totals, twice_weight, community)
            if candidate > best_gain + 1e-12:
                best, best_gain = community, candidate
        before = settled.pop(node, None)
        alone = best_gain < -1e-12
        move = (current, None if alone else best)
        moving = best != current or alone
        if moving and before and _paid_before(node, before, membership, totals, twice_weight, move):
            best, best_gain = current, 0.0  # the move was due before the change: not its doing
        if best_gain < -1e-12:  # better alone than anywhere (a self-loop outweighs its links)
            best = next(ids)
        totals[best] += degree[node]
        if best != current:
            membership[node] = best
            for neighbour in graph[node]:
                if membership[neighbour] != best and neighbour not in queued:
                    queue.append(neighbour)
                    queued.add(neighbour)


def _paid_before(
    node: str,
    links: dict[str, float],
    membership: dict[str, int],
    totals: dict[int, float],
    twice_weight: float,
    move: tuple[int, int | None],
) -> bool:
    """Whether `node`'s `move` from one community to another (None: a community of its own)
    already gained modularity with its `links` as they were before the change (the communities'
    totals are today's, the node's own degree left out: the change moves them by a few
    relationships). A self-loop counts in its degree, not as a link to a community."""
    current, target = move
    degree = sum(links.values())
    into: defaultdict[int, float] = defaultdict(float)
    for neighbour, weight in links.items():
        if neighbour != node:
            into[membership[neighbour]] += weight
    moved = 0.0 if target is None else _gain(into, degree, totals, twice_weight, target)
    return moved > _gain(into, degree, totals, twice_weight, current) + 1e-12


def _gain(
    links: dict[int, float], degree: float, totals: dict[int, float], twice_weight: float, to: int
) -> float:
    """The modularity gain (times twice the graph's weight) of a node of `degree` with `links`
    (weight to each community) joining community `to`, whose total degree is `totals[to]`."""
    return links.get(to, 0.0) - degree * totals[to] / twice_weight


def split_disconnected(graph: Graph, membership: dict[str, int], ids: Iterator[int]) -> None:
    """Give each piece of a community but its largest a community of its own (Leiden's are
    connected). The communities in pieces are found on the graph's arrays; only theirs are
    walked."""
    broken = graph.broken(membership)
    pieces: dict[int, list[list[str]]] = {}
    seen: set[str] = set()
    for start in sorted(node for node in graph if membership[node] in broken):
        if start in seen:
            continue
        community, piece, stack = membership[start], [], [start]
        seen.add(start)
        while stack:
            node = stack.pop()
            piece.append(node)
            for neighbour in graph[node]:
                if neighbour not in seen and membership[neighbour] == community:
                    seen.add(neighbour)
                    stack.append(neighbour)
        pieces.setdefault(community, []).append(piece)
    for split in pieces.values():
        for piece in sorted(split, key=lambda nodes: (-len(nodes), min(nodes)))[1:]:
            fresh = next(ids)
            for node in piece:
                membership[node] = fresh
