"""The topic of a prompt, in the user's own words, for the simulated answers to restate.

``read_topic(prompt)`` gives three spans of the prompt:

- ``title``: the request restated for a heading ("Write a function that checks whether a
  string is a palindrome" -> "A function that checks whether a string is a palindrome").
  Only the request around it goes (leading "please", "can you", "write", "explain",
  "tolong", "jelaskan", "apa itu", ...; the closing punctuation); "How do I ..." becomes
  "How to ...", "Bagaimana cara ..." becomes "Cara ...";
- ``main``: the noun phrase the sentences talk about ("connection pooling strategies" of
  "compare connection pooling strategies for postgres under bursty load"; "a Postgres
  connection pool" of "How should I size a Postgres connection pool?");
- ``context``: what follows the main phrase's preposition ("postgres, bursty load").

Each is one contiguous run of the prompt's words: nothing is dropped from its middle, so
articles, auxiliaries and prepositions stay where the user put them. The only rewrites are
first person to second ("my cluster" -> "your cluster", "klaster saya" -> "klaster Anda":
the answer speaks to the user) and the "How to" / "Cara" of a how-to heading. A span longer
than ``LIMIT`` characters is cut at a word boundary and never ends on a function word.

Imports only the standard library.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LIMIT = 64

# A word of the prompt: letters or digits with the punctuation that stays inside names
# ("B-tree", "Node.js", "HTTP/2", "C++", "C#", "what's", "3.12").
_TOKEN = re.compile(r"[^\W_][\w'’+#/.-]*", re.UNICODE)
_TOKEN_TAIL = ".'’/-"  # trailing characters that end a sentence or a quote, not a name
# A sentence ends at . ! ? ; : before a space (so "Node.js" is one word) or at a line break.
_SENTENCE_END = re.compile(r"[.!?;:](?=\s|$)|\n")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _phrases(text: str) -> tuple[tuple[str, ...], ...]:
    """One phrase a line, longest first so "can you" wins over "can"."""
    rows = [tuple(line.split()) for line in text.strip().splitlines() if line.strip()]
    return tuple(sorted(rows, key=len, reverse=True))


# What asks for the answer rather than names its topic, stripped from the front only, in
# this order: politeness and follow-up openers ("Hi, can you please", "And"), one request
# verb ("explain"), what may follow the verb ("to me", "briefly"), a question's opening
# ("what is", "apa itu").
_POLITE = _phrases("""
    and
    and also
    also
    so
    ok
    okay
    now
    then
    but
    dan
    lalu
    terus
    jadi
    oke
    hi
    hello
    hey
    halo
    hai
    please
    pls
    kindly
    can you
    could you
    would you
    will you
    can u
    i want you to
    i'd like you to
    i need you to
    i want to know
    i'd like to know
    tolong
    mohon
    coba
    bisakah anda
    bisakah kamu
    bisa tolong
    bisa
    saya ingin
    saya mau
    saya perlu
    aku ingin
    aku mau
    saya ingin tahu
    saya mau tahu
    aku ingin tahu
    aku mau tahu
""")
_VERB = _phrases("""
    help me understand
    help me
    tell me about
    tell me
    give me
    show me
    teach me
    write me
    make me
    write
    explain
    describe
    summarise
    summarize
    create
    make
    build
    implement
    generate
    draft
    define
    outline
    compose
    suggest
    recommend
    compare
    contrast
    give
    show
    tell
    list
    jelaskan
    jelaskanlah
    terangkan
    buatkan
    buat
    buatlah
    tuliskan
    tulis
    tulislah
    sebutkan
    berikan
    beri
    bandingkan
    ringkas
    ringkaskan
    rangkum
    rangkumkan
    ceritakan
    carikan
    tunjukkan
    ajari
    beritahu
    beri tahu
""")
_AFTER_VERB = _phrases("""
    to me
    for me
    briefly
    quickly
    simply
    in detail
    in simple terms
    kepada saya
    ke saya
    secara singkat
    dengan singkat
""")
_QUESTION = _phrases("""
    what is
    what are
    what's
    whats
    what was
    what were
    who is
    who are
    what about
    how about
    apa itu
    bagaimana dengan
    gimana dengan
    apakah itu
    apa yang dimaksud dengan
    apa yang dimaksud
""")
# Questions of how (or when) to do something: the heading says "How to ..." and the main
# phrase is what the verb acts on.
_HOW_FRAMES: tuple[tuple[tuple[str, ...], str], ...] = tuple(sorted(
    [(tuple(k.split()), v) for k, v in (
        *((f"how {m} {s}", "How to") for m in ("do", "can", "should", "would", "could", "must")
          for s in ("i", "we", "you", "one")),
        ("how to", "How to"), ("the best way to", "How to"), ("best way to", "How to"),
        ("a good way to", "How to"), ("the right way to", "How to"),
        *((f"{w} {m} {s}", f"{w.capitalize()} to") for w in ("when", "where")
          for m in ("do", "should", "can", "would", "must") for s in ("i", "we")),
        ("when to", "When to"), ("where to", "Where to"),
        ("bagaimana cara", "Cara"), ("bagaimana caranya", "Cara"), ("gimana cara", "Cara"),
        ("gimana caranya", "Cara"), ("cara", "Cara"),
        *((f"bagaimana {s}", "Cara") for s in ("saya", "aku", "kita", "kami")),
        *((f"bagaimana {s} {m}", "Cara") for s in ("saya", "aku", "kita", "kami")
          for m in ("bisa", "dapat", "harus", "sebaiknya")),
    )],
    key=lambda frame: len(frame[0]), reverse=True))
# A yes/no question's opening (or a wh-question's, "Why is my build slow?"): the main phrase
# is its subject ("Is Redis good for ..." -> "Redis"); with a pronoun subject, the verb
# after it goes too ("Should I use Redis").
_AUX = _words("""
    is are was were do does did can could should would will must may
    apakah bisakah haruskah perlukah bolehkah dapatkah
""")
_WH = _words("why how what when where who which")
_PRONOUN = _words("i we you it saya aku kita kami anda kamu")
_MODAL = _words("really still perlu harus bisa dapat sebaiknya boleh")
_PARTICLE = _words("up out down off back away")

# Words that lead into a topic without being it ("keep my cluster", "a haiku about rain",
# "some tips for"); stripped from the front of the main phrase only.
_LEAD = _words("""
    keep set run tune improve handle learn understand design designing use using get make
    build create implement write explain describe choose pick fix start started getting
    tip tips idea ideas step steps way ways example examples option options pros cons there
    overview summary introduction intro guide thing things something
    poem poems haiku haikus poetry sonnet limerick verse rhyme
    short long brief quick simple good best better detailed
    vs versus really actually basically giving stating listing showing describing
    menjaga membuat menulis memilih menggunakan memakai
    puisi pantun sajak syair contoh langkah langkah-langkah ide tips singkat pendek
""")
# Determiners stay with the noun they introduce ("a string", "the size", "my cluster"),
# and go with a lead-in word they introduce ("a haiku", "some tips").
_DETERMINERS = _words("""
    a an the this these those my our your their his her its some any each every several few
    many much sebuah suatu seorang beberapa para setiap semua
""")
# Words a phrase cannot end on: it would dangle ("... and returns the sum of").
_DANGLING = _words("""
    a an the this that these those my our your their his her its some any each every
    of to for in on at by with from about into onto over under between through during
    without within across via as than and or but nor so if whether which who whom whose
    what when where why how is are was were be been being am do does did can could should
    would will shall may might must has have had not please pls thanks thx there
    yang di ke dari untuk dengan pada dalam oleh tentang mengenai soal bagi antara dan atau
    serta tetapi namun adalah ialah merupakan sebuah suatu seorang para si apakah bahwa
    akan sudah telah bisa dapat harus perlu tolong dong ya sih nya lah kah deh yah
""")
# What a how-to's or a question's object is to become or be ("keep my cluster stable", "is
# Redis good for ..."): not the topic itself, so not the end of the main phrase.
_COMPLEMENT = _words("""
    stable fast faster quick quicker secure safe reliable efficient cheap cheaper clean
    readable scalable good better best small smaller running alive healthy consistent
    up-to-date maintainable slow slower work works
    stabil cepat aman efisien murah andal tetap cocok bagus baik kecil sehat rapi
""")
# Where a main phrase ends and its context begins: "pooling strategies | for postgres |
# under load", "Kubernetes | dan bagaimana ...".
_SPLITTERS = _words("""
    for in on with under over during without within across via at to from by when while
    about untuk di pada dengan dalam saat ketika tanpa melalui lewat dari ke agar supaya
    tentang mengenai soal and how why dan serta bagaimana mengapa kenapa
""")
# A clause inside the main phrase ("a function that checks whether a string is in a
# list"): its prepositions belong to it, so the phrase is not split after one of these.
_CLAUSE = _words("""
    that which who whom whose whether if what why how when where
    yang apakah bahwa mengapa kenapa bagaimana kapan siapa
""")
# First person to second: the answer speaks to the user about their things.
_PERSPECTIVE = {"my": "your", "our": "your", "saya": "Anda", "aku": "Anda", "kami": "Anda"}
_PERSON = re.compile(r"(?<![\w/'’-])(my|our|saya|aku|kami)(?![\w/'’-])", re.I)


@dataclass(frozen=True, slots=True)
class Topic:
    """What a simulated answer restates; empty strings when the prompt names nothing."""

    title: str  # for a heading, first letter capitalised
    main: str  # the noun phrase sentences use, in the prompt's own casing
    context: str  # the main phrase's context phrases joined by ", ", may be empty


@dataclass(frozen=True, slots=True)
class _Word:
    text: str
    start: int
    end: int

    @property
    def low(self) -> str:
        return self.text.lower()


def _tokens(sentence: str, offset: int) -> list[_Word]:
    out: list[_Word] = []
    for match in _TOKEN.finditer(sentence):
        text = match.group(0).rstrip(_TOKEN_TAIL)
        if text:
            start = offset + match.start()
            out.append(_Word(text, start, start + len(text)))
    return out


def _sentences(prompt: str) -> list[list[_Word]]:
    out: list[list[_Word]] = []
    start = 0
    for end in [m.start() for m in _SENTENCE_END.finditer(prompt)] + [len(prompt)]:
        words = _tokens(prompt[start:end], start)
        if words:
            out.append(words)
        start = end + 1
    return out


def _starts_with(words: list[_Word], phrase: tuple[str, ...]) -> bool:
    return len(words) >= len(phrase) and all(
        w.low == p for w, p in zip(words, phrase, strict=False))


def _strip_phrase(words: list[_Word], phrases: tuple[tuple[str, ...], ...]) -> list[_Word]:
    for phrase in phrases:
        if _starts_with(words, phrase):
            return words[len(phrase):]
    return words


def _strip_request(words: list[_Word]) -> list[_Word]:
    """``words`` without the request in front of the topic; a topic word that looks like a
    request ("explain list comprehensions") stays, as only one verb is stripped."""
    for group, repeat in ((_POLITE, True), (_VERB, False), (_AFTER_VERB, True),
                          (_QUESTION, False)):
        while True:
            shorter = _strip_phrase(words, group)
            if shorter is words:
                break
            words = shorter
            if not repeat:
                break
    return words


def _how_frame(words: list[_Word]) -> tuple[str, list[_Word]] | None:
    for phrase, prefix in _HOW_FRAMES:
        if _starts_with(words, phrase) and len(words) > len(phrase):
            return prefix, words[len(phrase):]
    return None


def _trim_end(words: list[_Word]) -> list[_Word]:
    """``words`` without a dangling end ("What is a B-tree for?" -> "a B-tree")."""
    last = len(words)
    while last > 0 and words[last - 1].low in _DANGLING:
        last -= 1
    return words[:last]


def _trim(words: list[_Word], *, complement: bool) -> list[_Word]:
    """``words`` without their lead-in and their dangling end, the middle untouched."""
    first = 0
    while first < len(words) and (words[first].low in _LEAD or words[first].low in _DETERMINERS):
        first += 1
    while first > 0 and words[first - 1].low in _DETERMINERS:
        first -= 1  # "a string", "my cluster": the determiner belongs to its noun
    last = len(words)
    while last > first and (words[last - 1].low in _DANGLING
                            or (complement and words[last - 1].low in _COMPLEMENT)):
        last -= 1
    return words[first:last]


def _chunks(words: list[_Word]) -> list[list[_Word]]:
    """The main phrase's candidates and its context, split at prepositions outside a clause."""
    chunks: list[list[_Word]] = [[]]
    in_clause = False
    for word in words:
        if chunks[-1] and not in_clause and word.low in _SPLITTERS:
            chunks.append([])
            continue
        if word.low in _CLAUSE:
            in_clause = True
        chunks[-1].append(word)
    return chunks


def _comma_parts(prompt: str, words: list[_Word]) -> list[list[_Word]]:
    """``words`` split where the prompt has a comma between two of them."""
    parts: list[list[_Word]] = [[]]
    for word in words:
        if parts[-1] and "," in prompt[parts[-1][-1].end:word.start]:
            parts.append([])
        parts[-1].append(word)
    return parts


def _span(prompt: str, words: list[_Word]) -> str:
    return prompt[words[0].start:words[-1].end] if words else ""


def _second_person(text: str) -> str:
    def swap(match: re.Match[str]) -> str:
        word = match.group(1)
        new = _PERSPECTIVE[word.lower()]
        return new[:1].upper() + new[1:] if word[:1].isupper() else new

    return _PERSON.sub(swap, text)


def shorten(text: str, limit: int = LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters at a word boundary, never ending on a
    function word ("a", "of", "yang", "di", ...); unchanged when it fits."""
    if len(text) <= limit:
        return text
    words = _tokens(text, 0)
    kept = [w for w in words if w.end <= limit]
    while len(kept) > 1 and kept[-1].low in _DANGLING:
        kept.pop()
    if not kept:  # one word longer than the limit: keep it whole rather than cut it
        return words[0].text if words else text[:limit]
    return text[:kept[-1].end]


def _lower_first(text: str, words: list[_Word], sentence: list[_Word]) -> str:
    """Lowercase a phrase's first letter when it is capitalised only because it opens the
    sentence ("Rekursi dalam ..." -> "rekursi"; not "TCP", not "Postgres" mid-sentence)."""
    first = words[0]
    if first.start == sentence[0].start and first.text[1:].islower():
        return text[:1].lower() + text[1:]
    return text


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _read_sentence(prompt: str, sentence: list[_Word]) -> Topic | None:
    body = _strip_request(sentence)
    if not body:
        return None
    frame = _how_frame(body)
    if frame is not None and not _trim_end(frame[1]):
        frame = None  # nothing but function words after it ("cara please is"): no how-to
    complement = False
    if frame is not None:
        prefix, rest = frame
        title = shorten(f"{prefix} {_second_person(_span(prompt, _trim_end(rest) or rest))}")
        # The verb goes (with its particle: "back up"); what it acts on is the main phrase.
        object_words = rest[1:]
        if len(object_words) > 1 and object_words[0].low in _PARTICLE:
            object_words = object_words[1:]
        complement = True
    else:
        title = _capitalise(shorten(_second_person(_span(prompt, _trim_end(body) or body))))
        object_words = body
        if len(body) > 2 and body[0].low in _WH and body[1].low in _AUX:
            object_words = body[1:]  # "Why is my build slow?", "How does TCP work?"
        if object_words[0].low in _AUX:
            object_words = object_words[1:]
            complement = True
            if object_words and object_words[0].low in _PRONOUN:
                object_words = object_words[1:]
                while object_words and object_words[0].low in _MODAL:
                    object_words = object_words[1:]
                object_words = object_words[1:]  # the verb: "Should I use Redis" -> Redis
    chunks = [c for c in _chunks(object_words) if c]
    phrases = [_trim(c, complement=complement) for c in chunks]
    found = next((i for i, p in enumerate(phrases) if p), None)
    if found is None:
        return Topic(title, "", "")
    main_words = phrases[found]
    main = _lower_first(_span(prompt, main_words), main_words, sentence)
    # Context phrases are joined by ", ": one the prompt itself splits at a comma becomes
    # two ("please is, explain" would else end a phrase on "is" once split).
    parts = [part for c in chunks[found + 1:] for part in _comma_parts(prompt, c)]
    context = [_span(prompt, p) for p in (_trim(c, complement=False) for c in parts) if p][:2]
    return Topic(title, shorten(_second_person(main)),
                 ", ".join(shorten(_second_person(c)) for c in context))


def read_topic(prompt: str) -> Topic:
    """The prompt's topic: from its first sentence that names one ("Hi! Can you explain
    TCP slow start?" reads the second)."""
    fallback: Topic | None = None
    for sentence in _sentences(prompt):
        topic = _read_sentence(prompt, sentence)
        if topic is None:
            continue
        if topic.main:
            return topic
        fallback = fallback or topic
    return fallback or Topic("", "", "")
