"""Words that are never a name, or a part of one: months and days, the words of role titles, and
greetings, sign-offs and document-structure words (general English vocabulary, not any corpus's)."""

# fmt: off
# Word lists packed several to a line (the formatter would put one word on each line).
CALENDAR = frozenset(
    [
        "january", "february", "march", "april", "may", "june", "july", "august", "september",
        "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
        "saturday", "sunday",
    ]
)
COMPASS = frozenset(
    ["north", "south", "east", "west", "northeast", "northwest", "southeast", "southwest"]
)
KIN = frozenset(
    [
        "mother", "father", "sister", "brother", "son", "daughter", "wife", "husband", "aunt",
        "uncle", "cousin", "niece", "nephew", "grandmother", "grandfather", "grandson",
        "granddaughter", "widow", "widower",
    ]
)
"""Nouns of kin: 'his sister Anna' is a person; a sentence with one says how people of one family
name are related."""
ROLE_WORDS = frozenset(
    [
        "chair", "chairman", "chairwoman", "chairperson", "vice", "deputy", "secretary",
        "treasurer", "clerk", "registrar", "convener", "convenor", "director", "directors",
        "master",
        "manager", "managers", "coordinator", "co-ordinator", "officer", "officers", "engineer",
        "lecturer", "nurse", "trustee", "trustees", "member", "members", "governor", "governors",
        "volunteer", "volunteers", "resident", "residents", "principal", "curator", "editor",
        "warden", "steward", "assistant", "administrator", "accountant", "archivist", "librarian",
        "surveyor", "headteacher", "head", "senior", "junior", "area", "operations", "grants",
        "finance", "services", "speaker",
    ]
)
"""Words of role titles ("Chair of Trustees", "Volunteer Services Manager").

A name is not made of them."""
NOT_NAMES = frozenset(
    [
        "dear", "hello", "hi", "dearest", "greetings", "yours", "regards", "kind", "best", "warm",
        "warmest", "many", "thanks", "sincerely", "faithfully", "cheers", "minutes", "notice",
        "agenda", "apologies", "present", "subject", "re", "item", "action", "actions", "date",
        "update", "summary", "report", "letter", "memo", "email", "e-mail", "cc", "attendance",
        "conclusion", "introduction", "background", "recommendation", "recommendations", "public",
        "annual", "general", "meeting", "accounts", "object", "any", "other", "business", "funding",
        "budget", "correspondence", "membership", "welcome", "note", "notes", "attached",
        "enclosure", "proposal", "proposals", "findings", "results", "discussion", "overview",
        "appendix", "contents", "references", "method", "methods", "conclusions", "recommendations",
        "summary", "abstract", "key", "outcome", "outcomes", "next", "steps", "timeline", "dates",
        "cost", "costs", "risks", "issues", "decisions", "decision", "purpose", "scope", "aims",
        "objectives", "progress", "status", "history", "context", "contacts", "contact", "location",
        "venue", "schedule", "events", "news", "attn", "fao", "encl",
    ]
)
"""Greetings, sign-offs and document-structure words.

They are left off the start of a name ("Dear Ms Qureshi", "Minutes of the Board").
They are never a name of their own."""
DEGREES = frozenset(
    ["msc", "bsc", "phd", "mba", "llb", "llm", "meng", "beng", "mphil", "dphil", "bcom"]
)
"""Degrees written before their subject ('MSc Mathematics', 'MEng Civil Engineering'): a CV's
line, not a name; left off a name's start as NOT_NAMES are."""
POST_NOMINALS = frozenset(
    [
        "QC", "KC", "SC", "SAN", "OBE", "MBE", "CBE", "KBE", "DBE", "CH", "FRS", "FRSE", "FRCS",
        "FRCP", "FBA", "PhD", "DPhil", "MD", "Esq", "MP", "MEP", "MSP", "MS", "TD", "JP", "KCB",
        "RN", "Jr", "Sr",
        # degrees and professional bodies' letters (architects, surveyors, accountants, engineers,
        # doctors, nurses, fellowships) as a CV, a letterhead or a signature writes them
        "BA", "BSc", "MA", "MSc", "MBA", "LLB", "LLM", "MPhil", "DSc", "MBChB", "BDS", "RIBA",
        "FRIBA", "RIAI", "ARB", "MRICS", "FRICS", "ACA", "FCA", "ACCA", "FCCA", "CEng", "MICE",
        "FICE", "MIET", "FREng", "MRCP", "MRCS", "MRCGP", "FRCGP", "FRCOG", "FRCPath", "FRSA",
        "FRSC", "FRGS", "RGN", "RMN", "FHEA", "CBiol", "CChem", "CPsychol", "MCIPD", "FCIPD",
    ]
)
"""Letters written after a person's name (honours, silk, degrees, offices: 'Obi SAN', 'Marsh
QC', 'Lee PhD'): not part of the name."""
SENTENCE_ADVERBS = frozenset(
    [
        "later", "earlier", "afterwards", "afterward", "thereafter", "instead", "overall",
        "again", "elsewhere", "nevertheless", "nonetheless", "moreover", "furthermore", "hence",
        "therefore", "meanwhile", "still", "then", "now", "soon", "today", "yesterday",
        # conjunctions that open a clause of a contract or a recital ('Whereas X Ltd ...')
        "whereas", "whilst", "unless", "hereby", "whereby", "notwithstanding", "otherwise",
    ]
)
"""Adverbs that start a sentence before a name without being part of it ('Later Penedela
Vinhos shipped')."""
IRREGULAR_PAST = frozenset(
    [
        "left", "went", "came", "met", "saw", "took", "made", "sent", "got", "found", "brought",
        "held", "kept", "gave", "ran", "began", "wrote", "spoke", "told", "heard", "felt", "built",
        "bought", "caught", "taught", "thought", "won", "lost", "paid", "sold", "sat", "stood",
        "led", "fled", "rode", "drove", "flew", "swam", "slept", "spent", "lent", "knew", "became",
    ]
)
"""Past tenses of common English verbs that do not end in -ed ('Left Lerwick at six')."""
BODY_NOUNS = frozenset(
    [
        "subsidiary", "supplier", "contractor", "subcontractor", "operator", "insurer", "lender",
        "publisher", "distributor", "manufacturer", "retailer", "wholesaler", "carrier",
        "developer", "charity", "employer",
    ]
)
"""Nouns that speak of a body by what it does for another ('its supplier', 'the operator')."""
# fmt: on
