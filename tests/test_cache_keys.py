"""config.cache_keys writes exactly the YAML graphrag hashes for its LLM cache keys, whatever the
text."""

import random

import pytest
import yaml
from graphrag_common.hasher.hasher import hash_data

from conftest import CORPUS
from graphrag_mcp_server.config.cache_keys import FastDumper, hash_like_graphrag

TRICKY = list("abc XYZ  :#-?,[]{}'\"\\\n\t\r\x85\u2028\u2029\ufeff\xa0é—\0!&*|>%@`.") + [
    "\U0001f600"
]
LENGTHS = [0, 1, 2, 3, 5, 10, 40, 79, 80, 81, 120, 300, 1000]


def _text(rng: random.Random) -> str:
    weights = [rng.random() for _ in TRICKY]  # each text leans on a few characters
    return "".join(rng.choices(TRICKY, weights=weights, k=rng.choice(LENGTHS)))


def _value(rng: random.Random, depth: int = 0) -> object:
    pick = rng.random()
    if depth > 3 or pick < 0.5:
        return _text(rng)
    if pick < 0.75:
        return {_text(rng)[:20]: _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


@pytest.mark.slow  # 4,000 random values through PyYAML twice: 8 s on 2 cores
def test_yaml_is_pyyamls_own_for_random_texts_at_every_indentation() -> None:
    rng = random.Random(7)
    for _ in range(4000):
        value = _value(rng)
        assert yaml.dump(value, sort_keys=True, Dumper=FastDumper) == yaml.dump(
            value, sort_keys=True
        ), repr(value)


def test_keys_of_real_requests_equal_graphrags() -> None:
    from graphrag.prompts.index.community_report import COMMUNITY_REPORT_PROMPT
    from graphrag.prompts.index.extract_graph import GRAPH_EXTRACTION_PROMPT

    texts = [path.read_text(encoding="utf-8") for path in sorted(CORPUS.iterdir())]
    requests = [
        {
            "model": "gpt-4.1-mini",
            "temperature": 0,
            "max_tokens": None,
            "messages": [{"role": "user", "content": prompt.replace("{input_text}", text)}],
        }
        for text in texts
        for prompt in (GRAPH_EXTRACTION_PROMPT, COMMUNITY_REPORT_PROMPT)
    ]
    requests.append({"model": "text-embedding-3-small", "input": texts})
    for request in requests:
        assert hash_like_graphrag(request) == hash_data(request)
