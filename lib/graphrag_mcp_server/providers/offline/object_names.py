"""Names of things that none of graphrag's default entity types covers, known by their last word
or the words around every mention: a ship written after a word for a vessel ('the tug Brenda
Mae', 'the lifeboat RNLB Grace Darling'), a work written after a word for one ('the novel Long
Shadow'), a control of a program's screen written after a verb
of using one or before a word for one ('click New Shipment', 'the Sync Status badge'), and a
method or a concept of science named by its last word or written before a word for one
('Bayesian Hierarchical Model', 'Monte Carlo simulation', 'Nile Red staining'), and a device by
its last word ('Aurora Router'). The words are
English vocabulary, not any corpus's; no_kind.py drops a ship written with its prefix ('MV
Northern Star')."""

import re

from graphrag_mcp_server.providers.offline.no_kind import VESSEL_PREFIXES
from graphrag_mcp_server.providers.offline.patterns import compiled

# fmt: off
VESSEL_NOUNS = frozenset(
    [
        "ship", "vessel", "boat", "tug", "tugboat", "trawler", "ferry", "yacht", "lifeboat",
        "barge", "tanker", "freighter", "schooner", "liner", "steamer", "steamship", "frigate",
        "destroyer", "submarine", "cutter", "dredger", "carrier", "sloop", "ketch", "dinghy",
        "cruiser", "corvette", "icebreaker", "whaler", "coaster", "drifter", "smack", "brig",
        "galleon", "clipper", "catamaran", "hovercraft", "warship", "gunboat", "minesweeper",
    ]
)
CONTROL_VERBS = frozenset(
    [
        "click", "clicks", "clicked", "clicking", "double-click", "right-click", "tap", "taps",
        "tapping", "tick", "untick", "uncheck", "press",
    ]
)
CONTROL_NOUNS = frozenset(
    [
        "button", "buttons", "tab", "tabs", "menu", "checkbox", "icon", "dialog", "toolbar",
        "sidebar", "dropdown", "drop-down", "toggle", "badge", "pane", "widget", "slider",
    ]
)
METHOD_NOUNS = frozenset(
    [
        "model", "models", "method", "methods", "algorithm", "theorem", "equation", "equations",
        "transform", "estimator", "regression", "simulation", "simulations", "spectroscopy",
        "spectrometry", "microscopy", "chromatography", "staining", "stain", "assay", "syndrome",
        "disease", "hypothesis", "conjecture", "paradox", "lemma", "inference", "sampling",
        "sequencing", "imaging", "scale", "effect",
    ]
)
WORK_NOUNS = frozenset(
    [
        "route", "trail", "horse", "racehorse", "song", "album", "film", "movie", "novel",
        "book", "play", "opera", "musical", "painting", "poem", "locomotive", "aircraft",
    ]
)
"""Words for a work or a named thing that are written before its name ('the novel Long Shadow',
'the racehorse Red Rum', 'named the route Salt Line'): a title, no person, body or place."""
DEVICE_NOUNS = frozenset(
    [
        "router", "modem", "laptop", "smartphone", "phone", "tablet", "printer", "camera",
        "thermostat", "headset", "headphones", "earbuds", "smartwatch", "charger", "console",
        "dashcam", "doorbell",
    ]
)
"""Words for a device that end a product's name ('Aurora Router', 'Kestrel Smartwatch'): a thing,
no person, body or place."""
INSTRUMENT_NOUNS = frozenset(
    [
        "test", "tests", "microscope", "spectrometer", "sequencer", "centrifuge", "scanner",
        "analyser", "analyzer", "telescope",
    ]
)
# fmt: on
"""Words for a method, a measure or a concept of science: a name they end ('Bayesian Hierarchical
Model'), or written before them each time ('Monte Carlo simulation'), names one; so does a name
written before a word for a test or an instrument each time ('the Mann Whitney test', 'a Zeiss
Axio microscope')."""
_THING_BEFORE = VESSEL_PREFIXES | VESSEL_NOUNS | CONTROL_VERBS | WORK_NOUNS
"""The word before each mention that makes a name a ship's, a screen control's or a work's (every
word of these lists but the prefixes is in lower case, as the text must write it)."""
_THING_AFTER = CONTROL_NOUNS | METHOD_NOUNS | INSTRUMENT_NOUNS
_BEFORE = re.compile(r"([\w-]+)\s+(?:(?:the|on)\s+)?$")
_AFTER = re.compile(r"^\s+([\w-]+)")


def names_a_thing(text: str, name: str) -> bool:
    """`name` ends in a word for a method or a device, or every mention of it in `text` is a ship's
    (after a vessel word or prefix), a work's (after a word for one), a screen control's (after a
    verb of using one, or before a word for one) or a method's or an instrument's (before a word
    for one)."""
    words = name.split()
    if len(words) > 1 and words[-1].lower() in METHOD_NOUNS | DEVICE_NOUNS:
        return True
    mentions = list(compiled(rf"(?<![\w-]){re.escape(name)}(?![\w-])").finditer(text))
    return bool(mentions) and all(_a_things_mention(text, mention) for mention in mentions)


def _a_things_mention(text: str, mention: re.Match[str]) -> bool:
    """The word before `mention` (over 'the' or 'on') is in _THING_BEFORE, or the word right
    after it in _THING_AFTER."""
    before = _BEFORE.search(text[max(0, mention.start() - 40) : mention.start()])
    after = _AFTER.search(text[mention.end() : mention.end() + 30])
    return (before is not None and before[1] in _THING_BEFORE) or (
        after is not None and after[1] in _THING_AFTER
    )
