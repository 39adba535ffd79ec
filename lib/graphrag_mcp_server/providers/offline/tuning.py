"""Answers to graphrag's prompt-tuning prompts (graphrag.api.generate_indexing_prompts): the
corpus's domain from its frequent terms, its language from its function words, entity types from the
offline extractor, examples as the extractor's records, and a persona, rating description and
reporter role written around the domain."""

import json
import re
from collections import Counter

from graphrag_mcp_server.providers.offline.entities import find_entities, typed
from graphrag_mcp_server.providers.offline.extraction import graph_records
from graphrag_mcp_server.providers.offline.request import Request
from graphrag_mcp_server.providers.offline.text import STOPWORDS, WORD, text_between

# fmt: off
# Word lists packed several to a line (the formatter would put one word on each line).
FUNCTION_WORDS = {
    "English": [
        "the", "and", "of", "to", "in", "is", "was", "that", "for", "with", "on", "as", "by", "at",
        "from",
    ],
    "Spanish": [
        "el", "la", "los", "las", "de", "que", "y", "en", "un", "una", "por", "con", "para", "es",
        "del",
    ],
    "French": [
        "le", "la", "les", "des", "de", "et", "en", "un", "une", "est", "que", "pour", "dans", "du",
        "au",
    ],
    "German": [
        "der", "die", "das", "und", "ist", "nicht", "ein", "eine", "mit", "von", "zu", "den", "im",
        "auf",
    ],
    "Portuguese": [
        "o", "a", "os", "as", "de", "que", "e", "em", "um", "uma", "para", "com", "do", "da", "não",
    ],
    "Italian": [
        "il", "lo", "la", "gli", "le", "di", "che", "e", "un", "una", "per", "con", "del", "della",
        "non",
    ],
}
# fmt: on
TYPE_NAMES = {"person": "person", "organization": "organization", "geo": "place", "event": "event"}
_DOMAIN_IN_TASK = re.compile(r"within the (.+?) domain", re.S)
_PERSONA_TOPIC = re.compile(r"expert analyst of (.+?)\. ")


def _sample(request: Request, *ends: str) -> str:
    """The documents a tuning prompt quotes (after its last `Text:`)."""
    query = request.query
    return text_between(query[query.rfind("Text:") :], "Text:", *ends)


def _terms(text: str, count: int) -> list[str]:
    """The most frequent common words of `text` (written in lower case: not names), most frequent
    first."""
    words = [
        word for word in WORD.findall(text) if word.isalpha() and word.islower() and len(word) > 3
    ]
    return [word for word, _ in Counter(w for w in words if w not in STOPWORDS).most_common(count)]


def domain(request: Request) -> str:
    """A domain named by the sample's three most frequent terms."""
    terms = _terms(_sample(request, "\nDomain:"), 3) or ["general", "documents", "records"]
    return (
        f"{terms[0].capitalize()}, "
        f"{', '.join(terms[1:-1]) + ' and ' if len(terms) > 2 else ''}{terms[-1]}"
    )


def language(request: Request) -> str:
    """The language whose function words the sample uses most."""
    words = Counter(word.lower() for word in WORD.findall(_sample(request, "\nLanguage:")))
    scores = {name: sum(words[word] for word in common) for name, common in FUNCTION_WORDS.items()}
    return max(scores, key=lambda name: (scores[name], name == "English"))


def _task_domain(text: str) -> str:
    found = _DOMAIN_IN_TASK.search(text)
    return " ".join(found.group(1).split()) if found else "the documents'"


def persona(request: Request) -> str:
    """An expert of the task's domain, in the form the prompt asks for."""
    topic = _task_domain(request.query)
    return (
        f"You are an expert analyst of {topic}. You are skilled at reading records of {topic} "
        "and mapping the people, organisations, places and events in them, and how they "
        "connect. You are adept at helping people identify the relations and structure of "
        f"the community of interest within {topic}."
    )


def report_rating(request: Request) -> str:
    """How a report's importance is rated, for the domain the persona names."""
    found = _PERSONA_TOPIC.search(request.query)
    topic = found.group(1) if found else "the documents"
    return (
        f"A float score between 0-10 that represents how relevant the text is to {topic}, "
        f"with 1 being trivial or unrelated to {topic} and 10 being central to understanding "
        "it."
    )


def entity_types(request: Request) -> str:
    """{"entity_types": [...]}: the offline extractor's types of the sample's names, most frequent
    first."""
    text = _sample(request, "\nJSON response format:")
    found = find_entities(text)
    kinds = Counter(TYPE_NAMES[typed(name, found)[0]] for name in found.names)
    return json.dumps(
        {"entity_types": [kind for kind, _ in kinds.most_common()] or ["person", "organization"]}
    )


def examples(request: Request) -> str:
    """Example extraction records for the sample: the extractor's own, in graphrag's record
    format."""
    return graph_records(request.query)


def reporter_role(request: Request) -> str:
    """A community reporter's role for the domain, in the example's pattern."""
    topic = text_between(request.query, "Domain:", "\n")
    names = find_entities(_sample(request, "\nRole:")).names[:3]
    about = f"records naming {', '.join(names)}" if names else "its records"
    return (
        f"analyst of {topic} who is reviewing {about}, given a list of entities that belong "
        "to the community as well as their relationships and optional associated claims. The "
        "report will be used to inform decision-makers about significant developments "
        "associated with the community and their potential impact."
    )


TUNING_HANDLERS = (
    (("assigning a descriptive domain",), domain),
    (("primary language of the provided texts",), language),
    (("description of an expert who could help solve the problem",), persona),
    (("rating the importance of a given text",), report_rating),
    (("identify the entity types present in the following text",), entity_types),
    (("-Real Data-", "entity_types:", "Format each"), examples),
    (("role definition that will be tasked with community analysis",), reporter_role),
)
"""Markers in the request's last user message (the tuning prompts put their text there, a persona in
the system message) and the handler that answers it."""
