"""Generated corpora for the benchmarks and tests: a chain of small casts, with or without a
recurring board.

`chain_corpus`: every 5 documents share 4 new people, an organisation and a place, and mention one
person of the group before, so entities, relationships and communities grow with the corpus
(bench_scale.py). `recurring_corpus`: the same chain, and in every document one sentence about a
member of a board of 12 people in 3 bodies who recur across the whole corpus (the same board, the
same firm, the same town of any real archive): hubs whose descriptions and relationships grow with
every document (bench_incremental.py, issue 24).
"""

from pathlib import Path

FIRST = [
    "Alma",
    "Bruno",
    "Clara",
    "Dmitri",
    "Elena",
    "Farid",
    "Greta",
    "Hugo",
    "Ilse",
    "Jonas",
    "Katya",
    "Lucas",
    "Mira",
    "Nils",
    "Olga",
    "Pavel",
    "Quinn",
    "Rosa",
    "Stefan",
    "Tilde",
    "Ugo",
    "Vera",
    "Wim",
    "Xenia",
    "Yusuf",
]
LAST = [
    "Adler",
    "Brandt",
    "Castell",
    "Dorn",
    "Eckert",
    "Falk",
    "Gruber",
    "Hartmann",
    "Imhof",
    "Jansen",
    "Keller",
    "Lorenz",
    "Moser",
    "Nagel",
    "Ostrow",
    "Pohl",
    "Quast",
    "Richter",
    "Stein",
    "Thalberg",
]
TOPICS = [
    "the new rail link",
    "the flood defences",
    "the grain harvest",
    "the winter storms",
    "the harbour dredging",
    "the mine inspection",
    "the school reforms",
    "the shipping strike",
]
DOCUMENTS_PER_CLUSTER = 5
SURNAMES = LAST + [
    start + end
    for start in [
        "Ash",
        "Brook",
        "Clay",
        "Dun",
        "Elm",
        "Fen",
        "Glen",
        "Holt",
        "Ives",
        "Kirk",
        "Lund",
        "Marsh",
    ]
    for end in ["by", "ford", "ley", "ton", "wood", "well", "combe", "stead"]
]
ORG_KINDS = ["Shipping Company", "Water Board", "Mining Company", "Engineering Works"]
PLACE_STARTS = ["Port", "Kell", "Moor", "Grey", "Salt", "Raven", "Copper", "East"]
PLACE_ENDS = ["wick", "field", "stone", "mere", "hill", "ford", "march", "haven"]
PLACE_KINDS = ["", " Bay", " Junction", " Harbour", " Valley"]
BOARD = [
    "Aurelia Whitcombe",
    "Bartholomew Penhallow",
    "Cressida Vantongeren",
    "Desmond Okonkwo",
    "Euphemia Radcliffe",
    "Fitzgerald Amberley",
    "Gwendolyn Trevanion",
    "Horatio Blackwood",
    "Isadora Fenwick",
    "Jerome Castellane",
    "Leopoldine Ashcombe",
    "Maximilian Stroud",
]
BODIES = ["Harbour Commission", "County Council", "River Trust"]


def person(index: int) -> str:
    """The index-th person of the generated cast: distinct for 25 x 116 people (enough for 3600
    documents), and people next to each other have different surnames."""
    first = index % len(FIRST)
    return f"{FIRST[first]} {SURNAMES[(index // len(FIRST) + 7 * first) % len(SURNAMES)]}"


def cast_of(cluster: int) -> list[str]:
    return [person(cluster * 4 + k) for k in range(4)]


def chain_corpus(folder: Path, documents: int, board: bool = False) -> None:
    """Write `documents` files: every 5 share 4 new people, an organisation and a place, and mention
    one person of the group before, so entities, relationships and communities grow with the
    corpus."""
    folder.mkdir(parents=True)
    for number in range(documents):
        cluster = number // DOCUMENTS_PER_CLUSTER
        cast = cast_of(cluster)
        neighbour = person(max(cluster - 1, 0) * 4 + number % 4)
        org = (
            f"{SURNAMES[cluster % len(SURNAMES)]} "
            f"{ORG_KINDS[cluster // len(SURNAMES) % len(ORG_KINDS)]}"
        )
        places = len(PLACE_STARTS) * len(PLACE_ENDS)
        place = (
            PLACE_STARTS[cluster % len(PLACE_STARTS)]
            + PLACE_ENDS[cluster // len(PLACE_STARTS) % len(PLACE_ENDS)]
            + PLACE_KINDS[cluster // places % len(PLACE_KINDS)]
        )
        topic = TOPICS[number % len(TOPICS)]
        sentences = [
            f"In {1900 + number % 120} {cast[0]} of the {org} travelled to {place} to "
            f"discuss {topic}.",
            f"{cast[0]} met {cast[1]}, who had worked for the {org} for many years.",
            f"{cast[2]} kept the minutes and wrote that {cast[0]} and {cast[1]} agreed on little.",
            f"{cast[3]} reported on {topic} to {neighbour}, who had led the talks the year before.",
        ]
        body = " ".join(sentences * 3)
        if board:
            member = BOARD[number % len(BOARD)]
            body += (
                f" {member} of the {BODIES[number % len(BODIES)]} reviewed the file with "
                f"{cast[number % 4]}."
            )
        (folder / f"doc_{number:04d}.txt").write_text(
            f"Record {number}\n\n{body}\n", encoding="utf-8"
        )


def recurring_corpus(folder: Path, documents: int) -> None:
    """The chain corpus with the recurring board (see the module's docstring)."""
    chain_corpus(folder, documents, board=True)


def rename(data: Path, number: int, slot: int, new: str) -> None:
    """Rename the `slot`-th person of document `number`'s cluster to `new` in that document only."""
    path = sorted(data.iterdir())[number]
    old = cast_of(number // DOCUMENTS_PER_CLUSTER)[slot]
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
