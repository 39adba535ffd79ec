"""Benchmark: does retrieval find the right entity, document and topic? (context_only, offline
model)

Run: python tests/benchmarks/bench_retrieval.py
Indexes fixtures/corpus and a generated corpus of unrelated topics (no entity shared between topics)
with the offline model, asks a fixed question set, and reports per search type in context_only mode:
- entity hit: the asked-about entity is among the first 3 entities of the context (local, drift);
- source hit: a document that mentions it is among the context's sources (local, drift, basic);
- topic hit: for theme questions, a report of the topic is in global search's context;
- topics without a report (every topic of the generated corpus must have one).
Each corpus is indexed twice: in one full build, and as a growing folder is (half of its documents,
then one `index` run for each further document: incremental updates, whose communities are kept from
version to version, issue 24); both must score alike. Prints the table and writes the "Retrieval"
section of docs/benchmarks.md. Targets (issue 11): entity and source hits >= 90%, no topic without a
report. Deterministic: no model, no network, no timing.
"""

import argparse
import asyncio
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import graph_quality
from benchmarks_doc import write_sections

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures" / "corpus"
SECTION = "## Retrieval"
SEARCHES = ["local", "drift", "basic", "global"]
ASKED_TYPES = {"PERSON": "Who is {}?", "ORGANIZATION": "What is {}?", "GEO": "What is {}?"}

# Unrelated topics: each its own people, organisation, place and subject; no name is shared.
TOPICS = [
    {
        "theme": "lighthouse restoration",
        "people": ["Jordan Hayes", "Sam Rivera", "Alex Mercer"],
        "org": "Corran Lighthouse Society",
        "place": "Dunmore Head",
        "kind": "chapter",
        "lines": [
            "{p0} climbed the iron stair of the lighthouse at {place} for the first time "
            "since the storm.",
            "{p1} of the {org} had promised that the lighthouse restoration would finish "
            "before winter.",
            "{p2} carried the new brass lamp up from the harbour and argued with {p0} "
            "about the cost.",
            "At night {p0} and {p1} read the old keeper's log, which described every ship "
            "that passed {place}.",
        ],
    },
    {
        "theme": "beekeeping survey",
        "people": ["Marta Lindgren", "Oskar Vale", "Ines Okafor"],
        "org": "Hollow Brook Apiary Trust",
        "place": "Hollow Brook",
        "kind": "field note",
        "lines": [
            "Field note: {p0} counted forty hives along the hedges of {place} for the "
            "beekeeping survey.",
            "{p1} of the {org} weighed the honey frames and recorded a poor spring flow.",
            "{p2} found mites in three colonies and asked {p0} to repeat the count next week.",
            "The {org} will publish the beekeeping survey once {p1} has checked every hive "
            "at {place}.",
        ],
    },
    {
        "theme": "glacier measurements",
        "people": ["Tariq Benali", "Freya Solheim", "Lukas Brenner"],
        "org": "Nordalp Glacier Station",
        "place": "Skarfjell Glacier",
        "kind": "field note",
        "lines": [
            "Field note: {p0} drilled stakes into the ice of {place} for the glacier measurements.",
            "{p1} of the {org} compared this year's melt with the records of the last decade.",
            "{p2} photographed the crevasses and sent the images to {p1} at the station.",
            "The {org} reported that {place} lost eleven metres of ice, according to {p0}.",
        ],
    },
    {
        "theme": "railway timetable",
        "people": ["Priya Raman", "Henrik Dahl", "Colette Marchand"],
        "org": "Eastvale Branch Railway",
        "place": "Millbridge Junction",
        "kind": "memo",
        "lines": [
            "Memo: {p0} proposed a new railway timetable for trains stopping at {place}.",
            "{p1} of the {org} objected that the early train would run almost empty.",
            "{p2} counted passengers at {place} for a month and shared the figures with {p0}.",
            "The {org} adopted the railway timetable after {p1} agreed to a trial in spring.",
        ],
    },
]
DOCUMENTS_PER_TOPIC = 5


@dataclass
class Question:
    """One question and what a good context holds for it."""

    search: str
    text: str
    entity: str | None = None  # upper-case entity name expected in the top 3
    documents: set[str] = field(default_factory=set)  # any of these among the sources
    topic_words: list[str] = field(default_factory=list)  # a report mentioning these (global)


def generate_topics(folder: Path) -> list[Question]:
    """Write the multi-topic corpus and return its questions with their ground truth."""
    folder.mkdir(parents=True)
    questions: list[Question] = []
    for number, topic in enumerate(TOPICS):
        names = {f"p{i}": person for i, person in enumerate(topic["people"])}
        documents = []
        for part in range(DOCUMENTS_PER_TOPIC):
            lines = topic["lines"][part % 4 :] + topic["lines"][: part % 4]
            body = " ".join(
                line.format(**names, org=topic["org"], place=topic["place"]) for line in lines
            )
            title = f"{topic['kind'].replace(' ', '_')}_{number}_{part}.md"
            (folder / title).write_text(
                f"# {topic['kind'].title()} {part + 1}\n\n{body}\n", encoding="utf-8"
            )
            documents.append(title)
        for name in [*topic["people"], topic["org"], topic["place"]]:
            asked = "Who is {}?" if name in topic["people"] else "What is {}?"
            for search in ("local", "drift", "basic"):
                questions.append(Question(search, asked.format(name), name.upper(), set(documents)))
        questions.append(
            Question(
                "global",
                f"What do the documents say about the {topic['theme']}?",
                topic_words=[topic["people"][0].upper(), topic["org"].upper()],
            )
        )
    return questions


def fixture_questions(tables: object, corpus: Path) -> list[Question]:
    """Who/what-is questions for every person, organisation and place the index holds that a
    document names."""
    texts = {
        path.name: path.read_text(encoding="utf-8").casefold()
        for path in corpus.iterdir()
        if path.is_file()
    }
    questions = []
    for name, kind in zip(tables.entities["title"], tables.entities["type"], strict=True):
        if kind not in ASKED_TYPES:
            continue
        documents = {title for title, text in texts.items() if name.casefold() in text}
        if not documents:
            continue
        for search in ("local", "drift", "basic"):
            questions.append(
                Question(search, ASKED_TYPES[kind].format(name.title()), name, documents)
            )
    return questions


def build(data: Path, root: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "graphrag_mcp_server",
            "index",
            str(data),
            "--index-path",
            str(root),
            "--offline",
            "--format",
            "json",
        ],
        check=True,
        capture_output=True,
    )


def build_by_updates(data: Path, root: Path, folder: Path) -> int:
    """Index `data` as a growing folder is: half of its documents, then one incremental `index` run
    for each further document (in `folder`, under the same names); the number of updates."""
    files = sorted(data.iterdir())
    first = len(files) // 2
    folder.mkdir()
    for path in files[:first]:
        shutil.copy(path, folder / path.name)
    build(folder, root)
    for path in files[first:]:
        shutil.copy(path, folder / path.name)
        build(folder, root)
    return len(files) - first


def load(root: Path) -> tuple:
    from graphrag_mcp_server.config.index_root import load_index_config
    from graphrag_mcp_server.handlers.tables import load_tables

    config = load_index_config(root)
    return config, asyncio.run(load_tables(config, root))


def score(
    config: object, tables: object, questions: list[Question]
) -> dict[str, dict[str, list[bool]]]:
    """search type -> metric -> hits, one per question that measures it."""
    from graphrag_mcp_server.handlers.search.context import search_context
    from graphrag_mcp_server.handlers.search.run import SearchType

    hits: dict[str, dict[str, list[bool]]] = {}
    for question in questions:
        result = search_context(config, tables, SearchType(question.search), question.text)
        context = result.context
        metrics = hits.setdefault(question.search, {})
        if question.entity and question.search != "basic":
            top = [entity.name for entity in context.entities[:3]]
            metrics.setdefault("entity in top 3", []).append(question.entity in top)
        if question.documents:
            found = {source.document for source in result.sources}
            metrics.setdefault("source document", []).append(bool(found & question.documents))
        if question.topic_words:
            reports = " ".join(
                f"{report.title} {report.content}" for report in context.reports
            ).upper()
            metrics.setdefault("topic in reports", []).append(
                all(word in reports for word in question.topic_words)
            )
    return hits


def topics_without_report(tables: object) -> list[str]:
    """Themes of the generated corpus that no community report mentions (by their first person)."""
    reports = " ".join(tables.community_reports["full_content"]).upper()
    return [topic["theme"] for topic in TOPICS if topic["people"][0].upper() not in reports]


def unclustered(tables: object) -> int:
    in_communities = {entity for ids in tables.communities["entity_ids"] for entity in ids}
    return int((~tables.entities["id"].isin(in_communities)).sum())


def rows(corpus: str, hits: dict[str, dict[str, list[bool]]]) -> list[str]:
    lines = []
    for search in SEARCHES:
        for metric, values in hits.get(search, {}).items():
            share = 100 * sum(values) / len(values)
            lines.append(
                f"| {corpus} | {search} | {metric} | {sum(values)} / {len(values)} | {share:.0f}% |"
            )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quality-only",
        metavar="LABEL",
        help="measure only graph_quality's corpora (full builds) and the cold build of 300 "
        "generated documents, into a section headed with the commit and LABEL",
    )
    parser.add_argument(
        "--corpora",
        metavar="NAMES",
        help="with --quality-only: only these corpora (comma-separated, as the table names them)",
    )
    arguments = parser.parse_args()
    if arguments.quality_only:
        chosen = arguments.corpora.split(",") if arguments.corpora else None
        quality_only(arguments.quality_only, chosen)
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        generate = generate_topics(work / "topics")
        corpora = {"fixtures/corpus": FIXTURES, "unrelated topics": work / "topics"}
        table = [
            "| corpus | built | search | measure | hits | share |",
            "|---|---|---|---|---|---|",
        ]
        facts, scores = [], {}
        quality_table, quality_facts = _six_topics(work)
        for name, data in corpora.items():
            slug = work / name.replace("/", "_").replace(" ", "_")
            build(data, slug / "full")
            updates = build_by_updates(data, slug / "updated", slug / "growing")
            for built, root in (("full", slug / "full"), (f"{updates} updates", slug / "updated")):
                config, tables = load(root)
                questions = fixture_questions(tables, FIXTURES) if data == FIXTURES else generate
                scores[name, built != "full"] = hits = score(config, tables, questions)
                table += rows(f"{name} | {built}", hits)
                missing = topics_without_report(tables) if data != FIXTURES else []
                facts.append(
                    f"{name}, {built}: {unclustered(tables)} of {len(tables.entities)} "
                    "entities without a "
                    f"community"
                    + (
                        f"; topics without a report: {len(missing)} of {len(TOPICS)}"
                        f"{' (' + ', '.join(missing) + ')' if missing else ''}"
                        if data != FIXTURES
                        else ""
                    )
                    + "."
                )
            same = scores[name, False] == scores[name, True]
            facts.append(
                f"{name}: built by updates, the same hits as the full build, question by question: "
                f"{'yes' if same else 'NO'}."
            )
    section = "\n".join(
        [
            SECTION,
            "",
            "Measured by `python tests/benchmarks/bench_retrieval.py`: the offline model, "
            "`context_only` searches "
            "(the handler the MCP tools call), on fixtures/corpus (a who/what-is question "
            "for every person, "
            "organisation and place in the index that a document names) and on a generated "
            "corpus of "
            f"{len(TOPICS)} unrelated topics ({len(TOPICS) * DOCUMENTS_PER_TOPIC} "
            "documents; chapters, field notes and "
            "memos that share no entity). Entity hit: the entity asked about is among the "
            "context's first 3 "
            "entities. Source hit: a document naming it is among the sources. Topic hit: "
            "global search's reports "
            "name the topic's people and organisation. Targets: >= 90% entity and source "
            "hits, no topic without a "
            "report. Each corpus is indexed in one full build and as a growing folder is "
            "(half of it, then one "
            "incremental `index` run per further document); both must score alike. "
            "Deterministic (no model, no "
            "timing).",
            "",
            *table,
            "",
            *facts,
            "",
            "### Written corpora (the no-key graph, issues 27 and 42)",
            "",
            "Four corpora: tests/benchmarks/corpora/six_topics, six_topics_2, new_styles and "
            "held_out (see each ABOUT.md; new_styles was written before the issue 42 rules, then "
            "used while developing them; held_out by a helper that had read neither the rules "
            "nor the code). "
            "Most of "
            "six_topics_2's who/what questions ask for an entity they do not name (\"Who "
            "is the treasurer of the Ormond "
            'Players?"): its entity-in-top-3 counts whether the answer is among the first '
            "3 entities beside the one "
            "named.",
            "",
            f"{graph_quality.__doc__.strip()}",
            "",
            "Measures: entity in top 3 and source in context / among the first 3 sources "
            "for each who/what question "
            '(local, drift; basic with `top_k=3`); for each "What connects A to B?" '
            "question, both entities and the "
            "relationship between them in the local / drift context; for each topic "
            "question, the rank of the first "
            "report in global search's context whose documents are mostly that topic's; "
            "reports without findings or "
            'titled "Unnamed community", reports with the same content, entities that are '
            "greetings, sign-offs, "
            "bare titles, field labels, headings, defined terms or table cells, the same person "
            "twice (a title kept before the name), the type of each named person, organisation "
            "and place (and of the names no rule typed: 'typed by default'), whether the linking "
            "relationship exists in the index at all, and the context's composition. "
            "Targets (issue 42, meant for a corpus the rules were not written from): 0 empty or "
            "duplicate reports; linking relationship extracted >= 80%, in the local context >= "
            "75%, in the drift context >= 50%; entity among the first 3 >= 95%; source among the "
            "first 3 >= 90%; type accuracy >= 90%, organisations >= 85%; junk entities <= 3%; "
            "no person twice.",
            "",
            "| corpus | built | measure | hits | share |",
            "|---|---|---|---|---|",
            *quality_table,
            "",
            *quality_facts,
            "",
        ]
    )
    print(section)
    write_sections(section)


QUALITY_CORPORA = [
    ("six topics", graph_quality.SIX_TOPICS, "yes: the rules of issue 27 were written from it"),
    (
        "six topics 2",
        graph_quality.SECOND,
        "partly: measured after the first rules, then two rules were added from it",
    ),
    (
        "new styles",
        graph_quality.NEW_STYLES,
        "partly: written before issue 42 changed the rules (its first figures are those of the "
        "rules before), but the new rules were then developed while measuring it, by the helper "
        "that wrote it; no name of it is in a word list, yet some general words and rules were "
        "chosen after seeing its failures, so its later figures are not those of a held-out "
        "corpus",
    ),
    (
        "held out",
        graph_quality.HELD_OUT,
        "no: written on 2026-11-26 by a helper that had read neither the rules nor the code, "
        "measured as it came, and no rule changed after seeing its figures",
    ),
    (
        "held out 2",
        graph_quality.HELD_OUT_2,
        "no: written on 2026-11-26 by a helper that had read neither the rules nor the code; "
        "its brief asked for what failed on the first held-out corpus (titles and honorifics, "
        "dotted legal forms), and one such general fault (dotted legal forms) was fixed while "
        "it was being written, without reading it",
    ),
    (
        "held out 3",
        graph_quality.HELD_OUT_3,
        "no: written on 2026-11-27 by a helper that had read neither the rules nor the code, "
        "while the rules of the commit after it were being written from held out 2's failures; "
        "measured before and after them, and no rule changed after seeing its figures",
    ),
    (
        "held out 4",
        graph_quality.HELD_OUT_4,
        "no: written on 2026-11-27 by a helper that had read neither the rules nor the code, "
        "while the legal-form rules of the commit after it were being written from held out 2's "
        "and 3's failures; measured before and after them",
    ),
    (
        "held out 5",
        graph_quality.HELD_OUT_5,
        "no: written on 2026-11-27 by a helper that had read neither the rules nor the code, "
        "while the accent rule for first names of the commit after it was being written from "
        "held out 3's and 4's failures; measured before and after it",
    ),
    (
        "held out 6",
        graph_quality.HELD_OUT_6,
        "no: written on 2026-11-27 by a helper that had read neither the rules nor the code; its "
        "brief asked for what failed on held out 4 and 5 (organisations named in their own "
        "languages, honorifics of many languages), and it was measured before and after the "
        "other languages' organisation nouns of the commit after it",
    ),
    (
        "held out 7",
        graph_quality.HELD_OUT_7,
        "no: written on 2026-11-27 by a helper that had read neither the rules nor the code; its "
        "brief asked for honorifics of many languages, links stated by possessives, appositives "
        "and defined terms, and organisations of many shapes; measured before and after the "
        "honorific and name-joining rules of the commit after it",
    ),
    (
        "held out 8",
        graph_quality.HELD_OUT_8,
        "no: written on 2026-11-27 by a helper that had read neither the rules nor the code; its "
        "brief asked for links stated by possessives, appositives, roles, defined terms, pronouns "
        "and signature blocks; measured before and after the capitalised-particle rule",
    ),
    (
        "held out 9",
        graph_quality.HELD_OUT_9,
        "partly: written on 2026-11-28 by a helper that had read neither the rules nor the code; "
        "its "
        "brief asked for bodies named in their own languages, titles of many languages and links "
        "across lines and sentences; measured as it came, then read to write the rules of 1c76ecd "
        "and of ee55722 to 9a6ae83",
    ),
    (
        "held out 10",
        graph_quality.HELD_OUT_10,
        "partly: written on 2026-11-28 by a helper that had read neither the rules nor the code; "
        "its "
        "brief asked for links stated in many ways (signature, address and cc blocks, CSV rows, "
        "links across two sentences) and short forms of bodies; measured as it came, then read to "
        "write the rules of 3ba5fff and of ee55722 to 9a6ae83",
    ),
    (
        "held out 11",
        graph_quality.HELD_OUT_11,
        "partly: written on 2026-11-28 by a helper that had read neither the rules nor the code; "
        "its "
        "brief asked for names written in other orders, acronyms, first names that are English "
        "words and links stated in many ways; measured as it came, then read to write the rules "
        "of ca7117d and of ee55722 to 9a6ae83",
    ),
    (
        "held out 12",
        graph_quality.HELD_OUT_12,
        "no: written on 2026-11-28 by a helper that had read neither the rules nor the code; its "
        "brief asked for places no gazetteer holds, people named by first name only, first names "
        "that are English words, bodies named in other languages and links stated in many ways; "
        "measured as it came",
    ),
    (
        "held out 13",
        graph_quality.HELD_OUT_13,
        "no: written on 2026-11-28 by a helper that had read neither the rules nor the code; its "
        "brief asked for styles the project's corpora rarely use (match reports, changelogs, "
        "support chats, a 1930s wire dispatch), signature blocks, possessives, appositives, "
        "defined terms, titles before names, companies named after their trade or with foreign "
        "legal forms, clubs, stadiums and expeditions; measured as it came and after the rules "
        "of ee55722 to 9a6ae83, whose author had not read it",
    ),
    (
        "held out 14",
        graph_quality.HELD_OUT_14,
        "no: written on 2026-11-28 by a helper that had read neither the rules nor the code; its "
        "brief asked for styles of real archives (letterheads, signature blocks, email threads, "
        "minutes, registers, invoices), companies written with and without their legal forms, "
        "titles before names, places no gazetteer holds and links stated in many ways; measured "
        "as it came and after the rules of 2726024, whose author had not read it (five names of "
        "its lists of other and mistyped entities were seen)",
    ),
    (
        "held out 15",
        graph_quality.HELD_OUT_15,
        "no: written on 2026-11-28 by a helper that had read neither the rules nor the code; its "
        "brief asked for styles the project has not used (recall notices, ships' logs, tender "
        "notices, wiki talk pages, patent abstracts, police appeals), titles and names of many "
        "languages and orders, companies named by their trade or with legal forms of many "
        "countries, and links stated in many ways; measured as it came (d3d5646's rules) and "
        "after the rules of the commit named, whose author had not read it",
    ),
    (
        "held out 16",
        graph_quality.HELD_OUT_16,
        "no: written on 2026-11-28 by a helper that had read neither the rules nor the code; its "
        "brief asked for real-world forms (claim forms, manifests, planning letters, discharge "
        "letters, auction catalogues, webcasts), names of many languages, bodies and places "
        "named in other languages, pronoun-only links and bodies named by their noun; measured "
        "as it came, before and after the rules of b021492, whose author had not read it",
    ),
    (
        "held out 17",
        graph_quality.HELD_OUT_17,
        "no: written on 2026-11-29 by a helper that had read neither the rules nor the code; its "
        "brief asked for archive styles the project has not used (minutes, changelogs, grant "
        "letters, written answers, notices, programmes, show notes), titles, field labels, "
        "signature blocks, defined terms and legal forms of many countries; measured as it came "
        "(the code of 22b846a) and after the rules of 2e43248, written from texts of their "
        "author's own (its figures, not its documents, were read between rounds); its lists "
        "as it came were read by mistake after 2e43248 was measured",
    ),
    (
        "held out 18",
        graph_quality.HELD_OUT_18,
        "no: written on 2026-11-29 by a helper that had read neither the rules nor the code; its "
        "brief asked for styles the project has not used and for links stated across sentences "
        "as much as within one (each relation says which); measured as it came (the code of "
        "75b0400) and after the rules of 8fd475f, written from texts of their author's own "
        "(its figures, and counts of where its unlinked ends stand, were read between rounds; "
        "not its documents or lists)",
    ),
    (
        "held out 19",
        graph_quality.HELD_OUT_19,
        "no: written on 2026-11-30 by a helper that had read neither the rules nor the code; its "
        "brief asked for styles and topics the project has not used and for links stated across "
        "sentences as much as within one (each relation says which); measured as it came (the "
        "code of 6b5b97f); its mistyped and junk lists were read by mistake after that",
    ),
    (
        "held out 20",
        graph_quality.HELD_OUT_20,
        "partly: written on 2026-12-02 by a helper that had read neither the rules nor the code, "
        "to the brief of held out 19, and measured as it came (the code of 09fe412); the round of "
        "2026-12-03 read its output and a few lines of its documents to find why links and asked "
        "entities failed, and its rules are general (libpostal's words, marks inside names, "
        "letterheads), none from its names",
    ),
    (
        "held out 21",
        graph_quality.HELD_OUT_21,
        "partly: written on 2026-12-03 by a helper that had read neither the rules nor the code, "
        "to the brief of held out 20, while that day's rules were written without reading it; "
        "its duplicate persons (titles libpostal lacks), read after round 22, led round 23 to "
        "add honorifics of other regions from general knowledge",
    ),
    (
        "held out 22",
        graph_quality.HELD_OUT_22,
        "no rule from it: written on 2026-12-03 by a helper that had read neither the rules nor "
        "the code, to the brief of held out 20, before round 23; its lists were printed when "
        "its baseline was taken, and two of round 23's titles ('Aum', 'Lopen') are among those "
        "it keeps before names",
    ),
    (
        "held out 23",
        graph_quality.HELD_OUT_23,
        "no rule from it: written on 2026-12-03 by a helper that had read neither the rules nor "
        "the code, to the brief of held out 20, before round 24; its mistyped list, printed by "
        "its baseline's run, was read once round 24's rules were written",
    ),
]


def quality_only(label: str, chosen: list[str] | None = None) -> None:
    """graph_quality's measures on each corpus (one full build each; only those `chosen` if given)
    and the cold build time of 300 generated documents, as a section named after the commit and
    `label`."""
    from corpora import chain_corpus

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=REPO
    ).stdout.strip()
    table = ["| corpus | built | measure | hits | share |", "|---|---|---|---|---|"]
    facts = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name, corpus, in_view in QUALITY_CORPORA:
            if chosen is not None and name not in chosen:
                continue
            seconds = _timed_build(corpus / "docs", work / corpus.name)
            config, tables = load(work / corpus.name)
            rows, notes = graph_quality.section_lines(
                graph_quality.measure(config, tables, corpus), "full", name
            )
            table += rows
            facts += [f"{name}: rules written with it in view: {in_view}.", *notes]
            facts.append(f"{name}: cold build {seconds[0]:.1f} s ({seconds[1]:.1f} s of CPU).")
        chain_corpus(work / "generated", 300)
        seconds = _timed_build(work / "generated", work / "generated_index")
        facts.append(
            f"300 generated documents (corpora.chain_corpus): cold build {seconds[0]:.1f} s "
            f"({seconds[1]:.1f} s of CPU)."
        )
    section = "\n".join(
        [
            f"## No-key graph quality: commit {commit}, {label}",
            "",
            "Measured by `python tests/benchmarks/bench_retrieval.py --quality-only LABEL"
            f"{' --corpora ' + ','.join(chosen) if chosen else ''}` "
            "(graph_quality's measures, see Retrieval; one full build per corpus). "
            "Timings are of this machine, shared with other work: compare them only within a "
            "section, and prefer the CPU seconds.",
            "",
            *table,
            "",
            *facts,
            "",
        ]
    )
    print(section)
    write_sections(section)


def _timed_build(data: Path, root: Path) -> tuple[float, float]:
    """Build an index of `data` in `root`; the wall-clock seconds and the CPU seconds of the build
    process (on a shared machine the CPU time is the steadier of the two)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    build(data, root)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return time.perf_counter() - started, cpu


def _six_topics(work: Path) -> tuple[list[str], list[str]]:
    """graph_quality's measures on its corpora (six topics also built by updates), each with
    whether the rules were written with it in view."""
    table, facts = [], []
    for name, corpus, in_view in QUALITY_CORPORA:
        folder = work / corpus.name
        build(corpus / "docs", folder / "full")
        builds = [("full", folder / "full")]
        if corpus == graph_quality.SIX_TOPICS:
            updates = build_by_updates(corpus / "docs", folder / "updated", folder / "growing")
            builds.append((f"{updates} updates", folder / "updated"))
        facts.append(f"{name}: rules written with it in view: {in_view}.")
        for built, root in builds:
            config, tables = load(root)
            rows, notes = graph_quality.section_lines(
                graph_quality.measure(config, tables, corpus), built, name
            )
            table += rows
            facts += notes
    return table, facts


if __name__ == "__main__":
    main()
