"""`graphrag-mcp export` and the graphrag://graph resource: the entity graph for Gephi, Cytoscape
and a browser."""

import colorsys
import html
import itertools
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import networkx as nx
import pandas as pd
import pytest
from PIL import Image

from conftest import REPO, run_cli
from mcp_client import IN_PROCESS, mcp_session

NODE_FIELDS = {"type", "description", "degree", "community", "documents"}


def _entities(root: Path) -> pd.DataFrame:
    return pd.read_parquet(root / "output" / "entities.parquet")


def _check_graph(graph: nx.Graph, root: Path, corpus_titles: set[str]) -> None:
    entities = _entities(root)
    assert set(graph.nodes) == set(entities["title"])
    for name, data in graph.nodes(data=True):
        assert set(data) >= NODE_FIELDS, (name, data)
        assert {title for title in str(data["documents"]).split("; ")} <= corpus_titles, data[
            "documents"
        ]
    relationships = pd.read_parquet(root / "output" / "relationships.parquet")
    assert graph.number_of_edges() == len(
        relationships
    )  # a pair related both ways keeps both relationships
    assert len(
        {
            frozenset(pair)
            for pair in zip(relationships["source"], relationships["target"], strict=True)
        }
    ) < len(relationships)
    assert all({"weight", "description"} <= set(data) for *_, data in graph.edges(data=True))
    degrees = dict(zip(entities["title"], entities["degree"], strict=True))
    assert all(int(data["degree"]) == degrees[name] for name, data in graph.nodes(data=True))
    assert len({data["community"] for _, data in graph.nodes(data=True)}) > 1, (
        "communities are told apart"
    )


@pytest.mark.parametrize("graph_format", ["graphml", "gexf", "json"])
def test_export_writes_a_file_networkx_reads_back(
    built_index: tuple[Path, dict], corpus_titles: set[str], tmp_path: Path, graph_format: str
) -> None:
    root, summary = built_index
    target = tmp_path / f"graph.{graph_format}"
    result = run_cli("export", "--index-path", root, "--format", graph_format, "--output", target)
    assert result.code == 0, result.stderr
    assert f"Wrote {summary['entities']} entities" in result.stdout
    if graph_format == "json":
        graph = nx.node_link_graph(json.loads(target.read_text()), edges="edges")
    else:
        graph = (nx.read_graphml if graph_format == "graphml" else nx.read_gexf)(target)
    _check_graph(graph, root, corpus_titles)


def test_a_relative_output_is_written_where_the_command_runs(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """`--output` (and the default file) resolve against the caller's folder, and the message names
    the absolute path (graphrag's config loader changes the working directory to the index root)."""
    root, summary = built_index
    for args, written in (
        ([], tmp_path / "entity-graph.graphml"),
        (["--output", "out/g.json", "--format", "json"], tmp_path / "out" / "g.json"),
    ):
        written.parent.mkdir(exist_ok=True)
        result = run_cli("export", "--index-path", root, *args, cwd=tmp_path)
        assert result.code == 0, result.stderr
        assert written.is_file()
        assert result.stdout.strip().endswith(f" to {written}."), result.stdout
    assert not list(root.glob("entity-graph.*")) and not (root / "out").exists()


def test_export_to_a_missing_folder_is_one_error_line(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    root, _ = built_index
    result = run_cli(
        "export", "--index-path", root, "--output", tmp_path / "no" / "such" / "graph.graphml"
    )
    assert result.code == 1
    assert result.stderr.startswith("error: cannot write") and "--output" in result.stderr
    assert "Traceback" not in result.stderr


async def test_graph_resource_is_graphml_of_every_entity(
    built_index: tuple[Path, dict], corpus_titles: set[str], tmp_path: Path
) -> None:
    root, _ = built_index
    async with mcp_session(root, IN_PROCESS) as session:
        contents = (await session.read_resource("graphrag://graph")).contents
    assert contents[0].mime_type == "application/graphml+xml"
    (tmp_path / "graph.graphml").write_text(contents[0].text)
    _check_graph(nx.read_graphml(tmp_path / "graph.graphml"), root, corpus_titles)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if found := shutil.which(name):
            return found
    if os.environ.get("CI"):
        pytest.fail("CI needs Chromium for the graph page test (.ci/run installs it with apt-get)")
    pytest.skip("no Chromium here (apt-get install chromium)")


WINDOW = (1400, 900)


def _headless(page: str, *args: str) -> str:
    """The page in headless Chromium at 1400x900 (sigma.js draws on WebGL: software WebGL)."""
    process = subprocess.run(
        [
            _chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--enable-unsafe-swiftshader",
            "--disable-dev-shm-usage",
            "--hide-scrollbars",
            "--virtual-time-budget=5000",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            *args,
            page,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return process.stdout


def _exported_page(root: Path, tmp_path: Path, name: str = "graph.html", seed: str = "0") -> Path:
    """The page `export --format html` writes (in a process of string hash seed `seed`)."""
    page = tmp_path / name
    result = run_cli(
        "export", "--index-path", root, "--format", "html", "--output", page,
        env={"PYTHONHASHSEED": seed},
    )  # fmt: skip
    assert result.code == 0, result.stderr
    return page


def _page_state(page: Path, query: str = "") -> tuple[str, dict]:
    """The page's DOM and what it drew, in window pixels (its `?state` hook writes
    window.graphPage.state() into #state: circles, labels, camera, the selected entity)."""
    dom = _headless(f"{page.as_uri()}?state{'&' + query if query else ''}", "--dump-dom")
    found = re.search(r'<pre id="state">(.*?)</pre>', dom, re.S)
    assert found and found.group(1), "the page reports what it drew"
    return dom, json.loads(html.unescape(found.group(1)))


def _worst_overlap(nodes: list[dict]) -> float:
    """The deepest overlap of two drawn circles, as a share of the smaller circle's diameter."""
    return max(
        (
            (a["radius"] + b["radius"] - math.dist((a["x"], a["y"]), (b["x"], b["y"])))
            / (2 * min(a["radius"], b["radius"]))
            for a, b in itertools.combinations(nodes, 2)
        ),
        default=0.0,
    )


def _check_readable(state: dict, entities: pd.DataFrame) -> None:
    """At the default zoom: every entity drawn inside the window, no two circles overlapping by
    more than a third, labels inside the window and apart, the most connected entity labelled."""
    width, height, nodes, labels = state["width"], state["height"], state["nodes"], state["labels"]
    assert len(nodes) == len(entities) and width > 0 and height > 0
    outside = [n["name"] for n in nodes if not (0 <= n["x"] <= width and 0 <= n["y"] <= height)]
    assert not outside, f"fitted to the window: {outside[:5]} outside"
    assert _worst_overlap(nodes) <= 1 / 3, "no two circles overlap by more than a third"
    assert all(
        label["left"] >= 0
        and label["right"] <= width
        and label["top"] >= 0
        and label["bottom"] <= height
        for label in labels
    ), "every label inside the window"
    assert not [
        (a["name"], b["name"])
        for a, b in itertools.combinations(labels, 2)
        if a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    ], "no two labels overlap"
    assert len(labels) >= min(len(entities), 6), "the most connected entities are labelled"
    top = str(entities.sort_values("degree", ascending=False)["title"].iloc[0])
    assert top in {label["name"] for label in labels}, "the most connected entity is labelled"


@pytest.mark.e2e  # headless Chromium
def test_html_page_draws_every_entity_offline_in_headless_chromium(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """The page carries its libraries (sigma.js, graphology: nothing fetched, their licences
    kept) and draws one circle per entity, each broadest community in its own colour."""
    root, summary = built_index
    page = _exported_page(root, tmp_path)
    text = page.read_text()
    licences = text[text.index("/*!") : text.index("*/", text.index("/*!"))]
    assert "Permission is hereby granted" in licences and "sigma " in licences, "licences kept"
    assert "graphology " in licences
    assert not re.search(r"https?://", text.replace(licences, "")), "works offline"

    dom, state = _page_state(page)
    assert len(state["nodes"]) == summary["entities"], "one circle per entity"
    assert f"{summary['entities']} entities, " in dom

    shot = tmp_path / "graph.png"
    _headless(page.as_uri(), f"--screenshot={shot}")
    with Image.open(shot) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1_000_000) or []
    communities = pd.read_parquet(root / "output" / "communities.parquet")
    broadest = {
        entity: int(row.community)
        for row in communities.sort_values("level", ascending=False).itertuples()
        for entity in row.entity_ids
    }
    expected = {community: _page_colour(community) for community in set(broadest.values())}
    drawn = {
        community
        for community, rgb in expected.items()
        if sum(
            count
            for count, colour in colours
            if max(abs(a - b) for a, b in zip(colour, rgb, strict=True)) <= 2
        )
        >= 200
    }
    assert len(expected) >= 2 and drawn == set(expected), (
        "every broadest community drawn in its own colour"
    )


def _page_colour(community: int) -> tuple[int, int, int]:
    """The page's `hsl(community * 137.508 mod 360, 65%, 48%)` as RGB."""
    red, green, blue = colorsys.hls_to_rgb((community * 137.508) % 360 / 360, 0.48, 0.65)
    return round(255 * red), round(255 * green), round(255 * blue)


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#" + "".join(f"{part:02x}" for part in rgb)


@pytest.mark.e2e  # headless Chromium
@pytest.mark.parametrize("corpus", ["fixtures", "dulce"])
def test_html_page_is_readable_with_a_legend_of_fills_and_outlines(
    built_index: tuple[Path, dict], tmp_path: Path, corpus: str
) -> None:
    """At the default zoom the graph fits the window, circles do not pile up, labels stay inside
    the window and apart; the legend names the communities (fill) by report title and the entity
    types (outline), and the outlines tell the types apart."""
    root = built_index[0]
    if corpus == "dulce":
        dulce = REPO.parent / "shared" / "corpora" / "dulce"
        if not dulce.is_dir():
            if os.environ.get("CI"):
                pytest.fail(f"CI runs with ../shared beside the repository: {dulce} is missing")
            pytest.skip(f"no {dulce}")
        data = tmp_path / "dulce"
        shutil.copytree(dulce, data, ignore=shutil.ignore_patterns("*.md"))
        root = tmp_path / "index"
        assert run_cli("index", data, "--index-path", root, "--offline").code == 0
    dom, state = _page_state(_exported_page(root, tmp_path))

    entities = _entities(root)
    _check_readable(state, entities)
    legend = dom[dom.index('id="legend"') :]
    assert "Communities (fill)" in legend and "Entity types (outline)" in legend
    types = legend[legend.index("Entity types (outline)") : legend.index("Communities (fill)")]
    assert all(f"{kind} (" in types for kind in set(entities["type"]))
    outlines = re.findall(r"border: 3px solid (rgb\([^)]*\))", types)
    assert len(set(outlines)) == len(set(entities["type"])), "each type its own outline"
    reports = pd.read_parquet(root / "output" / "community_reports.parquet")
    broadest = reports[reports["level"] == reports["level"].min()]
    assert all(html.escape(str(title), quote=False) in legend for title in broadest["title"]), (
        "communities by title"
    )


@pytest.mark.slow
@pytest.mark.e2e  # headless Chromium, a 300-document index of its own
def test_html_page_of_300_documents_is_readable(tmp_path: Path) -> None:
    """A 300-document index (hundreds of entities, dozens of communities): no pile of circles,
    labels inside the window and apart; the same page from another process (string hashing
    differs from process to process: the layout must not follow it)."""
    sys.path.insert(0, str(REPO / "tests" / "benchmarks"))  # the benchmarks' corpus generator
    from corpora import recurring_corpus

    data, root = tmp_path / "data", tmp_path / "index"
    recurring_corpus(data, 300)
    assert run_cli("index", data, "--index-path", root, "--offline").code == 0
    page = _exported_page(root, tmp_path)
    again = _exported_page(root, tmp_path, "again.html", seed="1")
    assert page.read_bytes() == again.read_bytes(), "the same layout in every process"
    _, state = _page_state(page)
    entities = _entities(root)
    assert len(entities) > 200
    _check_readable(state, entities)


def _unique_entity(root: Path) -> str:
    """A well-connected entity whose name is in no other entity's name."""
    entities = _entities(root).sort_values("degree", ascending=False)
    titles = [str(title) for title in entities["title"]]
    return next(
        title
        for title in titles[1:]
        if sum(title.lower() in other.lower() for other in titles) == 1 and "&" not in title
    )


@pytest.mark.e2e  # headless Chromium
@pytest.mark.parametrize("zoom", [None, 4])
def test_html_page_opens_centred_on_the_searched_entity(
    built_index: tuple[Path, dict], tmp_path: Path, zoom: int | None
) -> None:
    """`?q=NAME` (and `?q=NAME&zoom=4`): the entity labelled first, in the middle of the window,
    zoomed in, its panel open; its neighbours keep their colours and labels, the rest is dimmed."""
    root, summary = built_index
    page = _exported_page(root, tmp_path)
    name = _unique_entity(root)
    query = f"q={quote(name)}" + (f"&zoom={zoom}" if zoom else "")
    dom, state = _page_state(page, query)

    assert f"1 of {summary['entities']} entities match" in dom
    assert f"<h2>{html.escape(name, quote=False)}</h2>" in dom, "the entity's panel opens"
    assert state["selected"] == name
    drawn = {node["name"]: node for node in state["nodes"]}
    assert (
        math.dist((drawn[name]["x"], drawn[name]["y"]), (state["width"] / 2, state["height"] / 2))
        < 2
    )
    assert [label["name"] for label in state["labels"]][:1] == [name], "labelled first"
    labels = {label["name"] for label in state["labels"]}
    relationships = pd.read_parquet(root / "output" / "relationships.parquet")
    linked = set(relationships.loc[relationships["source"] == name, "target"]) | set(
        relationships.loc[relationships["target"] == name, "source"]
    )
    dimmed = {other for other, node in drawn.items() if node["colour"] == "#dddddd"}
    assert dimmed == set(drawn) - linked - {name}, "all but the entity and its neighbours dimmed"
    if zoom:
        assert state["ratio"] == 1 / zoom
    else:  # zoomed in at least twice, further where its neighbours sit close
        assert state["ratio"] <= 0.5
    assert labels & linked, "neighbours labelled"


@pytest.mark.e2e  # headless Chromium
def test_html_page_zoomed_in_without_a_search_centres_the_most_connected_entity(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """`?zoom=4` alone opens on the most connected entity (not on empty canvas), with its label."""
    root = built_index[0]
    _, state = _page_state(_exported_page(root, tmp_path), "zoom=4")
    top = str(_entities(root).sort_values("degree", ascending=False)["title"].iloc[0])
    drawn = {node["name"]: node for node in state["nodes"]}
    assert (
        math.dist((drawn[top]["x"], drawn[top]["y"]), (state["width"] / 2, state["height"] / 2)) < 2
    )
    assert state["ratio"] == 0.25 and top in {label["name"] for label in state["labels"]}


@pytest.mark.e2e  # headless Chromium
def test_html_page_zoomed_in_colours_sub_communities(
    built_index: tuple[Path, dict], tmp_path: Path
) -> None:
    """Zoomed in (`?zoom=4`), an entity whose finest community is not its broadest takes a shade of
    its broadest community's hue; at the default zoom every entity has its broadest community's
    colour."""
    root = built_index[0]
    page = _exported_page(root, tmp_path)
    communities = pd.read_parquet(root / "output" / "communities.parquet")
    levels = communities.sort_values("level")
    finest = {
        entity: int(row.community) for row in levels.itertuples() for entity in row.entity_ids
    }
    broadest = {
        entity: int(row.community) for row in levels[::-1].itertuples() for entity in row.entity_ids
    }
    titles = dict(zip(_entities(root)["id"], _entities(root)["title"], strict=True))
    split = {titles[entity] for entity in finest if finest[entity] != broadest[entity]}
    assert split, "the fixtures index has communities below the broadest"

    def fills(query: str) -> dict[str, str]:
        return {node["name"]: node["colour"] for node in _page_state(page, query)[1]["nodes"]}

    default, zoomed = fills(""), fills("zoom=4")
    expected = {
        titles[entity]: _hex(_page_colour(community)) for entity, community in broadest.items()
    }
    assert all(
        max(abs(int(default[name][i : i + 2], 16) - int(colour[i : i + 2], 16)) for i in (1, 3, 5))
        <= 1
        for name, colour in expected.items()
    )
    assert {name for name, fill in zoomed.items() if fill != default[name]} == split


BUNDLE = REPO / "lib" / "graphrag_mcp_server" / "handlers" / "explore" / "vendor" / "graph_libs.js"


def test_vendored_graph_libraries_are_the_locked_npm_packages(tmp_path: Path) -> None:
    """The graph page's committed bundle names (with their licences) exactly the versions that
    package-lock.json pins, and `npm run graph-page-bundle` rebuilds it byte for byte where
    `npm ci` has run."""
    text = BUNDLE.read_text()
    header = text[: text.index("*/")]
    bundled = dict(re.findall(r"^(@?[a-z][\w./-]*) (\d+\.\d+\.\d+)$", header, re.M))
    locked = json.loads((REPO / "package-lock.json").read_text())["packages"]
    assert {"sigma", "graphology", "@sigma/node-border"} <= set(bundled)
    assert bundled == {name: locked[f"node_modules/{name}"]["version"] for name in bundled}
    assert header.count("Permission is hereby granted") == len(bundled), "every licence kept"
    if not (REPO / "node_modules" / "esbuild").is_dir() or not shutil.which("node"):
        if os.environ.get("CI"):
            pytest.fail("CI runs the README's `npm ci`: node_modules/esbuild is missing")
        pytest.skip("no node_modules (npm ci) to rebuild the bundle from")
    rebuilt = tmp_path / "graph_libs.js"
    command = ["node", "scripts/graph_page_bundle.mjs", str(rebuilt)]
    subprocess.run(command, cwd=REPO, check=True, capture_output=True)
    assert rebuilt.read_bytes() == BUNDLE.read_bytes(), "rebuilt the same: commit the new bundle"


def test_layout_spreads_communities_without_overlap_and_is_the_same_each_time() -> None:
    """graph_layout on 12 communities of 15 (each a clique, one link between neighbours): no two
    circles closer than the sum of their radii, each community's members nearer their own centre
    than another's, and the same positions on a second run."""
    from graphrag_mcp_server.handlers.explore.graph_layout import graph_layout

    graph = nx.MultiDiGraph()
    for group in range(12):
        members = [f"E{group}-{index}" for index in range(15)]
        graph.add_nodes_from(members, community=group)
        graph.add_edges_from(itertools.combinations(members, 2), weight=1.0)
        graph.add_edge(members[0], f"E{(group + 1) % 12}-0", weight=1.0)
    placed = graph_layout(graph)
    assert placed == graph_layout(graph)
    assert all(
        math.dist(a[:2], b[:2]) >= a[2] + b[2]
        for a, b in itertools.combinations(placed.values(), 2)
    )
    centres = {
        group: tuple(
            sum(placed[f"E{group}-{index}"][axis] for index in range(15)) / 15 for axis in (0, 1)
        )
        for group in range(12)
    }
    for name, (x, y, _) in placed.items():
        own = int(name[1:].split("-")[0])
        assert min(centres, key=lambda group: math.dist((x, y), centres[group])) == own, name
