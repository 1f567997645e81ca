"""Deterministic answers for the simulated models.

``compose_answer(model, prompt, seed)`` reads the prompt for three things: its language
(Indonesian or English, from common function words), its kind (an explanation, steps, a
comparison, code, a poem, a greeting, thanks, a yes/no question) and its topic, in the
user's own words (``topic.read_topic``: a heading, the noun phrase the sentences restate,
and its context). It then writes an
answer of that kind, in that language, in the model's style: terse, balanced (headings,
lists, a table, code), verbose, plain prose, code-first, or thinking (reasoning first, in
the prompt's language too). The same (model, prompt, seed) always gives the same text.
The sentences are generic but sensible for the topic; nothing is lorem ipsum, and there is
no network and no model.

The models differ in how much of the question they restate, which the simulated judge
(``judge.py``) sees: a model of coverage "full" ends with a line naming the question's
content words its answer has not used yet, one of coverage "gist" keeps one word of the
prompt's context. ``anoman-judge`` gets its reply from ``judge.judge_reply``.

Imports only the standard library and the catalogue / judge / tokenizer / topic modules.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

from anoman_tui.gateway.catalogue import SimulatedModel, Style
from anoman_tui.gateway.code import (
    LANGUAGE_WORDS,
    Task,
    code_block,
    code_language,
    names_language,
    read_task,
)
from anoman_tui.gateway.instructions import Instructions, read_instructions, without_instructions
from anoman_tui.gateway.judge import content_words, judge_reply
from anoman_tui.gateway.judge import words as judge_words
from anoman_tui.gateway.tokenizer import tokenize
from anoman_tui.gateway.topic import read_topic

Lang = Literal["en", "id"]
Kind = Literal["explain", "steps", "compare", "code", "poem", "greeting", "thanks", "yesno"]

_STOPWORDS = frozenset(
    """
    a about above after again all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself no nor not now of off on once only or other our
    ours out over own same she should so some such than that the their theirs them then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself please tell give write explain
    make show want need like know let get use using used one two three short long brief
    describe list some many much thing things way ways really actually maybe something
    build create implement help compare summarize draft difference differences versus
    perbedaan antara apakah cara bagaimanakah contoh
    yang dan di ke dari ini itu untuk dengan pada adalah akan atau juga tidak bisa saya kamu
    anda kami kita mereka apa bagaimana mengapa kenapa tolong jelaskan buat buatkan tentang
    """.split()  # noqa: SIM905 - a word list reads better as text
)
# Words that frame a request rather than name its topic ("keep my cluster stable": the
# topic is the cluster), used for the topic phrase but not by `keywords`.
_FRAMING = _STOPWORDS | frozenset(
    """
    keep set run tune improve handle learn understand works design designing explained
    mean means meaning work
    working step steps tip tips best good better idea ideas poem haiku haikus poetry sonnet
    limerick verse puisi pantun sajak function script snippet code program example examples
    vs hello hi hey halo hai thanks thank terima kasih makasih pros cons option options
    tell write simple quick quickly way okay ok yes sure
    dong sih ya nya lah kah mau ingin perlu harus agar supaya sebuah suatu seperti
    menjaga membuat menulis tuliskan sebutkan bandingkan jelaskanlah berikan beri
    langkah langkah-langkah tentang soal mengenai lebih baik mana manakah sebaiknya
    tulis tulislah buatlah carikan python javascript typescript bash shell
    stable fast faster quick secure safe reliable efficient cheap cheaper clean readable
    scalable stabil cepat aman efisien murah andal tetap cocok good
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)

# Common function words of each language; the one with more hits wins, English on a tie.
_ID_WORDS = frozenset(
    """
    apa apakah bagaimana mengapa kenapa siapa kapan dimana di mana yang dan atau untuk dengan
    dari ke pada ini itu adalah akan bisa tidak tak bukan saya aku kamu anda kita kami mereka
    tolong jelaskan buatkan buat tuliskan sebutkan bandingkan tentang cara agar supaya juga
    sudah belum ada dalam saat ketika karena jadi lebih mana sebaiknya perlu harus boleh
    terima kasih makasih halo hai selamat pagi siang sore malam gimana dong sih nya
    """.split()  # noqa: SIM905 - a word list reads better as text
)
_EN_WORDS = frozenset(
    """
    what how why who when where which is are was were the a an and or for with from to of
    in on this that it i you we they my your please explain write tell give can could should
    would do does did compare about between thanks thank hello hi hey good morning
    """.split()  # noqa: SIM905 - a word list reads better as text
)


@dataclass(frozen=True, slots=True)
class ComposedAnswer:
    """A planned completion: optional reasoning, then the answer text."""

    reasoning: str
    text: str


def keywords(prompt: str, limit: int = 4) -> list[str]:
    """The prompt's content words, in order of appearance, without duplicates."""
    seen: dict[str, None] = {}
    for match in _WORD.finditer(prompt):
        word = match.group(0).strip("'-")
        low = word.lower()
        if len(low) < 3 or low in _STOPWORDS or low in seen:
            continue
        seen[low] = None
        if len(seen) >= limit:
            break
    return list(seen)


def detect_language(prompt: str) -> Lang:
    """Indonesian when its function words outnumber English ones, else English."""
    words = [w.lower() for w in _WORD.findall(prompt)]
    indonesian = sum(w in _ID_WORDS for w in words)
    english = sum(w in _EN_WORDS for w in words)
    return "id" if indonesian > english else "en"


_KIND_PATTERNS: list[tuple[Kind, re.Pattern[str]]] = [
    ("poem", re.compile(r"\b(haiku|haikus|poem|poems|poetry|sonnet|limerick|verse|puisi|pantun|"
                        r"sajak|syair)\b", re.I)),
    ("thanks", re.compile(r"^\W*(thanks?|thank you|thx|ty|terima ?kasih|makasih|trims)\b", re.I)),
    ("greeting", re.compile(r"^\W*(hi|hello|hey|halo|hai|hallo|good (morning|afternoon|evening)|"
                            r"selamat (pagi|siang|sore|malam)|apa kabar)\b", re.I)),
    ("code", re.compile(r"\b(function|script|snippet|code|regex|class|implement|program|"
                        r"python|javascript|typescript|bash|sql query|kode|fungsi|skrip|"
                        r"program|koding)\b", re.I)),
    ("compare", re.compile(r"\b(compare|comparison|vs\.?|versus|difference|differences|"
                           r"better than|bandingkan|perbandingan|perbedaan|bedanya|"
                           r"lebih baik mana)\b", re.I)),
    ("steps", re.compile(r"\b(how do i|how can i|how to|how should i|steps?|tips|ways to|"
                         r"checklist|list|bagaimana cara|gimana cara|cara|langkah|"
                         r"langkah-langkah|tips|daftar|sebutkan)\b", re.I)),
    ("yesno", re.compile(r"^\W*(is|are|can|should|does|do|will|would|could|apakah|bisakah|"
                         r"haruskah|perlukah|bolehkah)\b", re.I)),
]


_REQUEST = re.compile(r"^\W*(?:can|could|would|will) (?:you|u)\s+(?:please\s+)?"
                      r"(?!be\b|have\b|say\b)(?=[a-z])", re.I)


def classify(prompt: str) -> Kind:
    """What kind of answer the prompt asks for; an explanation when nothing else fits."""
    text = prompt.strip()
    words = _WORD.findall(text)
    for kind, pattern in _KIND_PATTERNS:
        if not pattern.search(text):
            continue
        if kind == "yesno" and _REQUEST.search(text):
            continue  # "Can you make it recursive?" asks for something, not for a yes
        if kind in ("greeting", "thanks") and len(words) > 6:
            continue  # "Hi, can you explain ...": the greeting is not the request
        if kind == "yesno" and len(words) > 14:
            continue
        return kind
    return "explain"


def _rng(model: str, prompt: str, seed: int, salt: str = "") -> random.Random:
    digest = hashlib.sha256(f"{model}\x00{prompt}\x00{seed}\x00{salt}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _content(words: list[str]) -> list[str]:
    out: list[str] = []
    for word in words:
        low = word.lower()
        if len(low) < 2 or low in _FRAMING or any(o.lower() == low for o in out):
            continue
        out.append(word)
    return out


def _options(prompt: str) -> tuple[str, str] | None:
    """The two things a comparison is about, if the prompt names them."""
    patterns = [
        r"\b(?:between|antara)\s+(.+?)\s+(?:and|dan)\s+(.+?)(?:[?.!,]|\s+(?:for|in|untuk|di)\b|$)",
        r"([\w.+#-]+(?:\s+[\w.+#-]+)?)\s+(?:vs\.?|versus|or|atau)\s+([\w.+#-]+(?:\s+[\w.+#-]+)?)",
        r"\b(?:compare|bandingkan)\s+(.+?)\s+(?:and|with|to|dan|dengan)\s+(.+?)"
        r"(?:[?.!,]|\s+(?:for|in|untuk|di)\b|$)",
    ]
    for pattern in patterns:
        match = re.search(pattern, prompt, re.I)
        if match:
            a = _name(match.group(1), last=True)
            b = _name(match.group(2), last=False)
            if a and b and a.lower() != b.lower():
                return a, b
    return None


def _name(text: str, *, last: bool) -> str:
    """The name an option's text ends (``last``) or starts with, as the user wrote it: the
    run of up to three words next to the "vs" / "and" ("the Go programming language" -> "Go
    programming language"), never words picked from either side of a "with" or "the"."""
    run: list[str] = []
    words = _WORD.findall(text)
    for word in reversed(words) if last else words:
        if word.lower() in _STOPWORDS:
            if run:
                break
            continue
        run.append(word)
        if len(run) == 3:
            break
    return " ".join(reversed(run) if last else run)


@dataclass(frozen=True, slots=True)
class _Reading:
    """What the composer understood of a prompt."""

    lang: Lang
    kind: Kind
    title: str  # the request restated for a heading ("How to keep your cluster stable")
    main: str  # the topic phrase, in the prompt's own casing ("connection pooling strategies")
    context: str  # what the topic is about or for ("postgres, bursty load"), may be empty
    words: tuple[str, ...]  # every content word, for filling lists
    a: str  # the two options of a comparison
    b: str
    code_lang: str
    ident: str  # a Python-style name for code ("connection_pooling")
    haiku: bool
    task: Task | None = None  # what a coding request's code is to do
    # A follow-up: what the latest turn adds to the earlier topic ("recursive instead of
    # iterative"), quoted as the user wrote it; None when the prompt is not a follow-up.
    follow: str | None = None

    @property
    def Main(self) -> str:  # the capitalised form templates use as {Main}
        return self.main[:1].upper() + self.main[1:]


def read_prompt(prompt: str) -> _Reading:
    lang = detect_language(prompt)
    kind = classify(prompt)
    topic = read_topic(prompt)
    every = _content(_WORD.findall(prompt))
    main = topic.main or ("topik ini" if lang == "id" else "this topic")
    options = _options(prompt)
    if kind == "compare" and options is not None:
        main = f"{options[0]} {'dan' if lang == 'id' else 'and'} {options[1]}"
    a, b = options or (main, "pendekatan lain" if lang == "id" else "the alternatives")
    low = prompt.lower()
    code_lang = "python"
    if re.search(r"\b(javascript|typescript|node|js|ts|react)\b", low):
        code_lang = "typescript"
    elif re.search(r"\b(bash|shell|sh|command line|terminal|cli)\b", low):
        code_lang = "bash"
    elif re.search(r"\b(sql|postgres|postgresql|mysql|sqlite|query)\b", low) and kind == "code":
        code_lang = "sql"
    ident_words = [w.lower() for w in every[:2]] or ["item"]
    ident = re.sub(r"\W+", "_", "_".join(ident_words)).strip("_") or "item"
    if not ident.isidentifier():
        ident = f"item_{ident}"
    task = None
    if kind == "code":
        code_lang = code_language(prompt)
        task = read_task(prompt)
        unnamed = re.sub(r"\s{2,}", " ", LANGUAGE_WORDS.sub(" ", prompt)).strip()
        if unnamed != prompt.strip():  # "a function in Rust that ...": the function's task
            topic = read_topic(unnamed)
            main = topic.main or main
    return _Reading(lang, kind, topic.title or _cap(main), main, topic.context, tuple(every),
                    a, b, code_lang, ident, haiku="haiku" in low, task=task)


def _fill(template: str, r: _Reading) -> str:
    no_context = "kebutuhan Anda" if r.lang == "id" else "your setup"
    w = [*r.words, r.main, r.main]
    return template.format(
        main=r.main, Main=r.Main, context=r.context or no_context, a=r.a, b=r.b,
        ident=r.ident, cls="".join(p.capitalize() for p in r.ident.split("_")),
        w1=w[0], w2=w[1] if len(r.words) > 1 else r.main,
    )


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


# -- text banks, per language ------------------------------------------------------------

_INTROS: dict[Lang, dict[str, list[str]]] = {
    "en": {
        "explain": [
            "{Main} is easiest to understand through the problem it solves and what it gives "
            "up to solve it.",
            "At its core, {main} is about a trade-off: doing less work now in exchange for "
            "more predictable behaviour later.",
            "{Main} sounds more complicated than it is; once the moving parts are named, the "
            "behaviour follows from them.",
            "The short answer: {main} decides how work is shared out and what happens when "
            "there is more of it than expected.",
        ],
        "steps": [
            "Here is how I would approach {main}, in the order that usually saves the most "
            "time.",
            "{Main} goes best in small, checked steps rather than one big change.",
            "A dependable way to handle {main}, with {context} in mind:",
        ],
        "compare": [
            "{a} and {b} solve overlapping problems, but they make different trade-offs.",
            "Neither {a} nor {b} wins everywhere; the right choice depends on {context}.",
            "The difference between {a} and {b} matters most under load and when something "
            "fails.",
        ],
        "code": [
            "Here is a small, self-contained take on {main}; you can run it as is.",
            "A minimal implementation of {main}, with the edge cases handled:",
        ],
    },
    "id": {
        "explain": [
            "{Main} paling mudah dipahami lewat masalah yang diselesaikannya dan apa yang "
            "dikorbankan untuk itu.",
            "Pada dasarnya, {main} adalah soal kompromi: sedikit kerja tambahan sekarang agar "
            "perilakunya lebih bisa ditebak nanti.",
            "{Main} terdengar lebih rumit daripada kenyataannya; setelah bagian-bagiannya "
            "dikenali, cara kerjanya jadi jelas.",
            "Jawaban singkatnya: {main} menentukan bagaimana pekerjaan dibagi dan apa yang "
            "terjadi ketika bebannya lebih besar dari perkiraan.",
        ],
        "steps": [
            "Berikut cara saya menangani {main}, dengan urutan yang biasanya paling menghemat "
            "waktu.",
            "{Main} paling aman dikerjakan dalam langkah kecil yang diperiksa satu per satu.",
            "Cara yang bisa diandalkan untuk {main}, dengan memperhatikan {context}:",
        ],
        "compare": [
            "{a} dan {b} menyelesaikan masalah yang mirip, tetapi dengan kompromi yang berbeda.",
            "Tidak ada yang selalu unggul antara {a} dan {b}; pilihannya tergantung pada "
            "{context}.",
            "Perbedaan {a} dan {b} paling terasa saat beban tinggi dan ketika ada yang gagal.",
        ],
        "code": [
            "Berikut versi kecil dan mandiri untuk {main}; bisa langsung dijalankan.",
            "Implementasi minimal untuk {main}, termasuk penanganan kasus tepi:",
        ],
    },
}

# (label, sentence) pairs: each label titles its own point.
_POINTS: dict[Lang, list[tuple[str, str]]] = {
    "en": [
        ("Start small", "get one concrete use of {main} working end to end before "
                        "generalising."),
        ("Measure first", "record how {main} behaves today so you can tell whether a change "
                          "helped."),
        ("Make it observable", "log the inputs and outputs around {main}; most surprises "
                               "show up there first."),
        ("Plan for failure", "decide in advance what happens when {context} is slow, missing "
                             "or wrong."),
        ("Write it down", "a short note on why you chose this approach to {main} saves hours "
                          "later."),
        ("Automate the routine", "script the repetitive steps so they run the same way every "
                                 "time."),
        ("Watch the edges", "empty input, very large input and unusual characters break "
                            "{main} more often than the happy path does."),
        ("Budget the cost", "{Main} has a price in time, money or attention; estimate it "
                            "before you commit."),
        ("Keep a baseline", "compare every new idea against a simple version that already "
                            "works."),
        ("Review regularly", "revisit the assumptions about {main} once real usage data is "
                             "in."),
    ],
    "id": [
        ("Mulai dari kecil", "buat satu penggunaan nyata {main} berjalan dari awal sampai "
                             "akhir sebelum memperluasnya."),
        ("Ukur dulu", "catat perilaku {main} saat ini agar Anda tahu apakah sebuah perubahan "
                      "membantu."),
        ("Buat terpantau", "catat masukan dan keluaran di sekitar {main}; kejutan biasanya "
                           "muncul di sana lebih dulu."),
        ("Siapkan rencana gagal", "tentukan sejak awal apa yang terjadi jika {context} lambat, "
                                  "hilang, atau salah."),
        ("Tulis alasannya", "catatan singkat tentang alasan memilih pendekatan ini untuk "
                            "{main} menghemat banyak waktu nanti."),
        ("Otomatiskan rutinitas", "jadikan langkah yang berulang sebagai skrip agar selalu "
                                  "berjalan dengan cara yang sama."),
        ("Perhatikan kasus tepi", "masukan kosong, masukan sangat besar, dan karakter tak "
                                  "biasa lebih sering merusak {main} daripada jalur normal."),
        ("Hitung biayanya", "{Main} punya harga dalam waktu, uang, atau perhatian; "
                            "perkirakan sebelum berkomitmen."),
        ("Simpan patokan", "bandingkan setiap ide baru dengan versi sederhana yang sudah "
                           "berjalan."),
        ("Tinjau berkala", "periksa lagi asumsi tentang {main} setelah data pemakaian nyata "
                           "tersedia."),
    ],
}

_STEPS: dict[Lang, list[tuple[str, str]]] = {
    "en": [
        ("Check the current state", "look at how {main} is set up today and note what "
                                    "already works."),
        ("Define the goal", "write down what \"done\" means for {main}, as a number if you "
                            "can."),
        ("Change one thing", "adjust a single setting or component and leave the rest alone."),
        ("Test under realistic load", "try it with {context} as it really is, not only the "
                                      "happy path."),
        ("Compare with the baseline", "keep the change only if the numbers improved."),
        ("Roll out gradually", "apply it to a small part first, then widen it."),
        ("Document and monitor", "record what you changed and set an alert for the metric "
                                 "that matters."),
    ],
    "id": [
        ("Periksa kondisi sekarang", "lihat bagaimana {main} diatur saat ini dan catat apa "
                                     "yang sudah berjalan."),
        ("Tentukan tujuan", "tuliskan arti \"selesai\" untuk {main}, sebaiknya dalam angka."),
        ("Ubah satu hal", "sesuaikan satu pengaturan atau komponen saja, biarkan yang lain."),
        ("Uji dengan beban nyata", "coba dengan {context} seperti kenyataannya, bukan hanya "
                                   "jalur normal."),
        ("Bandingkan dengan patokan", "pertahankan perubahan hanya jika angkanya membaik."),
        ("Terapkan bertahap", "terapkan pada bagian kecil dulu, lalu perluas."),
        ("Dokumentasikan dan pantau", "catat apa yang diubah dan pasang peringatan untuk "
                                      "metrik yang penting."),
    ],
}

_ASPECTS: dict[Lang, list[tuple[str, str, str]]] = {
    "en": [
        ("Setup effort", "low: works with defaults", "higher: needs tuning up front"),
        ("Performance", "good for steady load", "better under spikes"),
        ("Scaling", "vertical, up to a point", "horizontal, with more moving parts"),
        ("Operations", "little to run", "one more component to monitor"),
        ("Failure mode", "degrades slowly", "fails fast and recovers quickly"),
        ("Best for", "small teams and simple setups", "large or bursty workloads"),
    ],
    "id": [
        ("Usaha penyiapan", "rendah: jalan dengan bawaan", "lebih tinggi: perlu diatur di awal"),
        ("Kinerja", "baik untuk beban stabil", "lebih baik saat lonjakan"),
        ("Skala", "vertikal, sampai batas tertentu", "horizontal, dengan lebih banyak bagian"),
        ("Operasional", "sedikit yang perlu dijalankan", "satu komponen lagi untuk dipantau"),
        ("Saat gagal", "menurun perlahan", "gagal cepat dan pulih cepat"),
        ("Cocok untuk", "tim kecil dan penyiapan sederhana", "beban besar atau tidak menentu"),
    ],
}

_TABLE_HEAD: dict[Lang, tuple[str, str, str]] = {
    "en": ("Aspect", "What to look at", "Why it matters"),
    "id": ("Aspek", "Yang diperhatikan", "Mengapa penting"),
}
_LOOK_AT: dict[Lang, list[tuple[str, str, str]]] = {
    "en": [
        ("Scope", "what {main} must do on day one", "keeps the first version small"),
        ("Inputs", "where the data for {main} comes from", "bad input is the usual failure"),
        ("Cost", "time and money per use", "decides whether it scales"),
        ("Risk", "what breaks if {main} fails", "sets how much testing it needs"),
        ("Ownership", "who maintains it", "unowned parts decay quickly"),
        ("Feedback", "how you learn that it works", "without it you are guessing"),
    ],
    "id": [
        ("Cakupan", "apa yang harus dilakukan {main} di hari pertama", "versi awal tetap kecil"),
        ("Masukan", "dari mana data untuk {main} berasal", "masukan buruk penyebab umum gagal"),
        ("Biaya", "waktu dan uang per penggunaan", "menentukan apakah bisa diskalakan"),
        ("Risiko", "apa yang rusak jika {main} gagal", "menentukan seberapa banyak pengujian"),
        ("Kepemilikan", "siapa yang merawatnya", "bagian tanpa pemilik cepat rusak"),
        ("Umpan balik", "bagaimana tahu bahwa ia berjalan", "tanpa itu Anda hanya menebak"),
    ],
}

_CLOSINGS: dict[Lang, list[str]] = {
    "en": [
        "If you share more about {context}, I can make this more specific.",
        "Start with the first point, measure, and adjust; {main} rewards small, checked steps.",
        "None of this is exotic: consistent habits do most of the work.",
        "If a row of the table has no answer yet, that is where to look next.",
    ],
    "id": [
        "Kalau Anda ceritakan lebih banyak tentang {context}, saya bisa membuatnya lebih "
        "spesifik.",
        "Mulai dari poin pertama, ukur, lalu sesuaikan; {main} paling baik ditangani dengan "
        "langkah kecil yang diperiksa.",
        "Tidak ada yang istimewa di sini: kebiasaan yang konsisten sudah melakukan sebagian "
        "besar pekerjaan.",
        "Jika satu baris tabel belum terjawab, di situlah tempat untuk melihat berikutnya.",
    ],
}

_NOTES: dict[Lang, list[str]] = {
    "en": [
        "> **Note:** numbers beat opinions. Keep a small benchmark for {main} and rerun it "
        "after every change.",
        "> **Tip:** when two options look equal, pick the one that is easier to undo.",
        "> **Caveat:** what works for ten users may not work for ten thousand; check {main} "
        "at the scale you expect.",
    ],
    "id": [
        "> **Catatan:** angka lebih kuat daripada pendapat. Simpan tolok ukur kecil untuk "
        "{main} dan jalankan lagi setiap ada perubahan.",
        "> **Tips:** jika dua pilihan tampak sama, pilih yang lebih mudah dibatalkan.",
        "> **Perhatian:** yang berhasil untuk sepuluh pengguna belum tentu berhasil untuk "
        "sepuluh ribu; periksa {main} pada skala yang Anda harapkan.",
    ],
}

_VERDICT: dict[Lang, list[str]] = {
    "en": [
        "Pick {a} if you want the simpler setup and your load is steady; pick {b} when "
        "spikes or scale matter more than simplicity.",
        "For most projects {a} is the sensible default; move to {b} when you can name the "
        "limit you hit.",
    ],
    "id": [
        "Pilih {a} jika Anda ingin penyiapan yang lebih sederhana dan bebannya stabil; pilih "
        "{b} jika lonjakan atau skala lebih penting daripada kesederhanaan.",
        "Untuk kebanyakan proyek, {a} adalah pilihan awal yang masuk akal; beralih ke {b} "
        "ketika Anda bisa menyebut batas yang sudah tercapai.",
    ],
}

_HEADINGS: dict[Lang, dict[str, str]] = {
    "en": {"key": "Key points", "glance": "At a glance", "example": "Example",
           "steps": "Step by step", "background": "Background", "compare": "Comparison",
           "watch": "Things to watch", "summary": "Summary", "notes": "Notes",
           "guide": "a detailed guide", "verdict": "Which to choose", "how": "How it works"},
    "id": {"key": "Poin penting", "glance": "Sekilas", "example": "Contoh",
           "steps": "Langkah demi langkah", "background": "Latar belakang",
           "compare": "Perbandingan", "watch": "Yang perlu diwaspadai", "summary": "Ringkasan",
           "notes": "Catatan", "guide": "panduan lengkap", "verdict": "Mana yang dipilih",
           "how": "Cara kerjanya"},
}

_SHORT: dict[Lang, dict[str, list[str]]] = {
    "en": {
        "greeting": ["Hi! What would you like to look at today?",
                     "Hello! How can I help?",
                     "Hey! What are you working on?"],
        "greeting_more": ["I can explain a concept, compare a few options side by side, or "
                          "write a small piece of code. Tell me what you have in mind."],
        "thanks": ["You're welcome!", "Glad it helped!", "Any time!"],
        "thanks_more": ["If anything else comes up, just ask."],
        "yes": ["Yes, in most cases.", "Generally, yes.", "Usually, yes."],
        "no": ["Usually not.", "Not on its own.", "In most cases, no."],
        "yes_why": ["{Main} works well as long as {context} stays within what you planned "
                    "for; check it once the load grows.",
                    "The exception is when {context} changes often: then test it first."],
        "no_why": ["{Main} alone rarely settles it; what decides is {context}.",
                   "It can work, but only if {context} is set up for it, which is not the "
                   "default."],
    },
    "id": {
        "greeting": ["Halo! Ada yang bisa saya bantu hari ini?",
                     "Hai! Apa yang sedang Anda kerjakan?",
                     "Halo! Mau membahas apa?"],
        "greeting_more": ["Saya bisa menjelaskan sebuah konsep, membandingkan beberapa "
                          "pilihan, atau menulis sedikit kode. Ceritakan saja yang Anda "
                          "perlukan."],
        "thanks": ["Sama-sama!", "Senang bisa membantu!", "Sama-sama, semoga berguna!"],
        "thanks_more": ["Kalau ada pertanyaan lain, tanyakan saja."],
        "yes": ["Ya, dalam kebanyakan kasus.", "Umumnya, ya.", "Biasanya ya."],
        "no": ["Biasanya tidak.", "Tidak dengan sendirinya.", "Dalam kebanyakan kasus, tidak."],
        "yes_why": ["{Main} bekerja baik selama {context} masih dalam batas yang "
                    "direncanakan; periksa lagi ketika bebannya bertambah.",
                    "Pengecualiannya adalah jika {context} sering berubah: uji dulu."],
        "no_why": ["{Main} saja jarang menjadi penentu; yang menentukan adalah {context}.",
                   "Bisa saja, tetapi hanya jika {context} memang disiapkan untuk itu, dan "
                   "itu bukan bawaannya."],
    },
}

# Haiku: three lines; the first names the topic.
_HAIKU: dict[Lang, tuple[list[str], list[str], list[str]]] = {
    "en": (
        ["{main} at dawn", "soft {main} again", "{main}, then a pause", "first {main} of day"],
        ["the world leans in and listens close", "a quiet hour folds into the next",
         "small sounds gather where the light is thin", "nothing moves except the waiting air"],
        ["and the day begins", "nothing else is asked", "still, and then it's gone",
         "the kettle is warm"],
    ),
    "id": (
        ["{main} di pagi", "{main} perlahan", "sunyi {main}", "{main} pertama"],
        ["dunia diam dan mendengarkan", "cahaya tipis jatuh di jendela",
         "waktu berjalan tanpa suara", "angin membawa kabar yang jauh"],
        ["lalu hari mulai", "tak ada yang tersisa", "tenang, lalu hilang", "teh masih hangat"],
    ),
}
_POEM: dict[Lang, list[list[str]]] = {
    "en": [
        ["There is a kind of patience in {main},", "a way of waiting that is not the same",
         "as standing still: it listens, and it learns,", "and answers only when it knows "
         "its name."],
        ["So let the hurried voices pass it by;", "the work gets done in small and steady "
         "turns,", "and what was tangled slowly comes undone,", "the way a candle, not a "
         "wildfire, burns."],
        ["Some mornings {main} is all I need:", "a little light, a little room to think,",
         "the noise outside a river far away,", "the day still balanced right there on the "
         "brink."],
    ],
    "id": [
        ["Ada kesabaran dalam {main},", "menunggu tanpa harus berdiam diri,",
         "ia mendengar, lalu ia belajar,", "menjawab saat tahu arti dirinya sendiri."],
        ["Biarlah suara yang tergesa lewat,", "pekerjaan selesai sedikit demi sedikit,",
         "yang kusut perlahan terurai,", "seperti lilin, bukan api yang membakar bukit."],
        ["Ada pagi ketika {main} sudah cukup:", "sedikit cahaya, sedikit ruang berpikir,",
         "riuh di luar seperti sungai yang jauh,", "hari masih menunggu di tepi takdir."],
    ],
}
_POEM_NOTE: dict[Lang, list[str]] = {
    "en": ["*A haiku keeps to three short lines and one image; this one stays with {main}.*",
           "*Kept short on purpose: one image, one turn.*"],
    "id": ["*Haiku cukup tiga baris pendek dan satu gambaran; yang ini tentang {main}.*",
           "*Sengaja dibuat pendek: satu gambaran, satu pergantian.*"],
}

_REASONING: dict[Lang, list[str]] = {
    "en": [
        "The user is asking about {main}. Let me work out what they actually need.",
        "This is {kind} request, so the answer should have that shape.",
        "They mention {context}, so the answer should connect to it.",
        "Wait, I should check whether scale changes the picture. It might.",
        "A good structure: a short overview, the key points, then something concrete.",
        "I should keep any example small and runnable rather than exhaustive.",
        "Let me also flag the main risk, so the answer is not only optimistic.",
        "Okay, that covers it. I will write the answer now.",
    ],
    "id": [
        "Pengguna bertanya tentang {main}. Saya perlu memahami apa yang sebenarnya dibutuhkan.",
        "Ini permintaan {kind}, jadi jawabannya harus berbentuk seperti itu.",
        "Mereka menyebut {context}, jadi jawabannya perlu dikaitkan ke sana.",
        "Tunggu, saya perlu cek apakah skala mengubah jawabannya. Mungkin saja.",
        "Struktur yang baik: gambaran singkat, poin penting, lalu sesuatu yang konkret.",
        "Contohnya sebaiknya kecil dan bisa dijalankan, tidak perlu lengkap.",
        "Saya juga perlu menyebut risiko utamanya agar jawabannya tidak terlalu optimis.",
        "Baik, itu sudah cukup. Saya tulis jawabannya sekarang.",
    ],
}
_KIND_NAMES: dict[Lang, dict[Kind, str]] = {
    # (with their article: "This is {kind} request")
    "en": {"explain": "an explanation", "steps": "a how-to", "compare": "a comparison",
           "code": "a code", "poem": "a poem", "greeting": "a greeting",
           "thanks": "a thank-you", "yesno": "a yes/no"},
    "id": {"explain": "penjelasan", "steps": "langkah-langkah", "compare": "perbandingan",
           "code": "kode", "poem": "puisi", "greeting": "sapaan", "thanks": "ucapan terima kasih",
           "yesno": "ya/tidak"},
}

_CODE: dict[str, list[str]] = {
    "python": [
        '''```python
from collections import Counter


def summarize_{ident}(records: list[dict[str, str]], key: str) -> dict[str, int]:
    """{doc_count}"""
    counts = Counter(r.get(key, "unknown") for r in records)
    return dict(counts.most_common())


if __name__ == "__main__":
    sample = [{{"kind": "a"}}, {{"kind": "b"}}, {{"kind": "a"}}]
    print(summarize_{ident}(sample, "kind"))  # {{'a': 2, 'b': 1}}
```''',
        '''```python
from dataclasses import dataclass, field


@dataclass
class {cls}Monitor:
    """{doc_monitor}"""

    threshold: float = 0.8
    seen: list[float] = field(default_factory=list)

    def record(self, value: float) -> bool:
        self.seen.append(value)
        return value >= self.threshold

    @property
    def average(self) -> float:
        return sum(self.seen) / len(self.seen) if self.seen else 0.0
```''',
        '''```python
import time
from collections.abc import Callable


def with_retries(call: Callable[[], str], attempts: int = 3, delay: float = 0.5) -> str:
    """{doc_retry}"""
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except OSError:
            if attempt == attempts:
                raise
            time.sleep(delay * 2 ** (attempt - 1))
    raise RuntimeError("unreachable")
```''',
    ],
    "typescript": [
        '''```typescript
type {cls}Result = {{ ok: boolean; detail: string }};

export function check{cls}(input: string): {cls}Result {{
  const trimmed = input.trim();
  if (trimmed.length === 0) return {{ ok: false, detail: "empty input" }};
  return {{ ok: true, detail: `checked ${{trimmed.length}} characters` }};
}}
```''',
    ],
    "bash": [
        '''```bash
# {doc_bash}
set -euo pipefail
mkdir -p results
for run in 1 2 3; do
  ./measure --label "{ident}" >> results/baseline.txt
done
sort -n results/baseline.txt | head -n 1
```''',
    ],
    "sql": [
        '''```sql
-- {doc_sql}
SELECT date_trunc('hour', created_at) AS hour,
       count(*) AS requests,
       percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95_ms
FROM events
WHERE created_at > now() - interval '1 day'
GROUP BY 1
ORDER BY 1;
```''',
    ],
}
_CODE_DOCS: dict[Lang, dict[str, str]] = {
    "en": {"doc_count": "Count how often each value of `key` appears in the records.",
           "doc_monitor": "Record measurements and say whether each one crosses the threshold.",
           "doc_retry": "Call `call`, retrying with exponential back-off on network errors.",
           "doc_bash": "Measure a baseline three times and keep the best run",
           "doc_sql": "Requests per hour and their 95th percentile latency over the last day"},
    "id": {"doc_count": "Hitung berapa kali setiap nilai `key` muncul dalam data.",
           "doc_monitor": "Catat pengukuran dan beri tahu apakah tiap nilai melewati ambang.",
           "doc_retry": "Panggil `call`, ulangi dengan jeda bertambah jika ada galat jaringan.",
           "doc_bash": "Ukur patokan tiga kali dan simpan hasil terbaik",
           "doc_sql": "Jumlah permintaan per jam dan latensi persentil ke-95 sehari terakhir"},
}


# -- building blocks ---------------------------------------------------------------------


def _sentences(rng: random.Random, r: _Reading, pairs: list[tuple[str, str]], n: int
               ) -> list[tuple[str, str]]:
    picks = sorted(rng.sample(range(len(pairs)), min(n, len(pairs))))
    return [(label, _fill(text, r)) for label, text in (pairs[i] for i in picks)]


def _bullets(rng: random.Random, r: _Reading, n: int, numbered: bool = False) -> str:
    source = _STEPS[r.lang] if numbered or r.kind == "steps" else _POINTS[r.lang]
    lines = []
    for i, (label, text) in enumerate(_sentences(rng, r, source, n), start=1):
        marker = f"{i}." if numbered else "-"
        lines.append(f"{marker} **{label}**: {text}")
    return "\n".join(lines)


def _table(rng: random.Random, r: _Reading, rows: int) -> str:
    if r.kind == "compare":
        aspect = "Aspek" if r.lang == "id" else "Aspect"
        header = f"| {aspect} | {r.a} | {r.b} |\n|---|---|---|"
        picks = sorted(rng.sample(range(len(_ASPECTS[r.lang])), min(rows, 6)))
        body = []
        for i in picks:
            name, left, right = _ASPECTS[r.lang][i]
            if rng.random() < 0.5:
                left, right = right, left
            body.append(f"| {name} | {left} | {right} |")
        return header + "\n" + "\n".join(body)
    h1, h2, h3 = _TABLE_HEAD[r.lang]
    header = f"| {h1} | {h2} | {h3} |\n|---|---|---|"
    body = [f"| {a} | {_fill(b, r)} | {c} |"
            for a, b, c in rng.sample(_LOOK_AT[r.lang], min(rows, 6))]
    return header + "\n" + "\n".join(body)


def _code(rng: random.Random, r: _Reading) -> str:
    if r.task is not None:
        recursive = r.follow is not None and bool(re.search(r"\brecurs", r.follow, re.I))
        return code_block(r.task, r.code_lang, recursive=recursive)
    docs = _CODE_DOCS[r.lang]
    template = rng.choice(_CODE[r.code_lang])
    ident = r.ident
    return template.format(ident=ident, cls="".join(p.capitalize() for p in ident.split("_")),
                           **docs)


def _intro(rng: random.Random, r: _Reading, *, opening: bool = True) -> str:
    """The answer's first sentence (for a follow-up, one naming the earlier topic), or
    (``opening`` False) another sentence on the topic, for a later section."""
    if r.follow is not None and opening:
        return _follow_intro(rng, r)
    bank = _INTROS[r.lang]
    kind = r.kind if r.kind in bank else "explain"
    return _fill(rng.choice(bank[kind]), r)


def _short_reply(rng: random.Random, r: _Reading, style: Style) -> str:
    bank = _SHORT[r.lang]
    if r.kind in ("greeting", "thanks"):
        first = rng.choice(bank[r.kind])
        if style in ("terse", "code"):
            return first
        return f"{first} {bank[r.kind + '_more'][0]}"
    answer = "yes" if rng.random() < 0.6 else "no"
    first = rng.choice(bank[answer])
    why = [_fill(s, r) for s in bank[answer + "_why"]]
    if style == "terse":
        return f"{first} {why[0]}"
    if style in ("verbose", "balanced", "thinking"):
        return f"**{first}** {why[0]}\n\n{_bullets(rng, r, 3)}\n\n{why[1]}"
    return f"{first} {why[0]} {why[1]}"


def _poem(rng: random.Random, r: _Reading, style: Style) -> str:
    if r.haiku:
        first, second, third = _HAIKU[r.lang]
        lines = [_fill(rng.choice(first), r), rng.choice(second), rng.choice(third)]
        lines[0] = _cap(lines[0])
        # Two trailing spaces: a Markdown hard break keeps the three lines apart.
        poem = "  \n".join(lines)
    else:
        stanzas = rng.sample(_POEM[r.lang], 2)
        poem = "\n\n".join("  \n".join(_fill(line, r) for line in stanza) for stanza in stanzas)
    if style == "verbose":
        return f"### {r.Main}\n\n{poem}\n\n{_fill(rng.choice(_POEM_NOTE[r.lang]), r)}"
    if style == "balanced":
        return f"**{r.Main}**\n\n{poem}"
    return poem


def _section(rng: random.Random, r: _Reading, style: Style) -> str:
    """One answer of the reading's kind, in the given style."""
    if r.kind in ("greeting", "thanks", "yesno"):
        return _short_reply(rng, r, style)
    if r.kind == "poem":
        return _poem(rng, r, style)
    h = _HEADINGS[r.lang]
    intro = _intro(rng, r)
    closing = _fill(rng.choice(_CLOSINGS[r.lang]), r)
    code = _code(rng, r)
    numbered = r.kind == "steps"
    verdict = _fill(rng.choice(_VERDICT[r.lang]), r)
    if style == "terse":
        if r.kind == "code":
            return f"{intro}\n\n{code}"
        if r.kind == "compare":
            return f"{intro} {verdict}"
        return f"{intro}\n\n{_bullets(rng, r, 3, numbered=numbered)}"
    if style == "plain":
        sentences = [_cap(text) for _, text in _sentences(rng, r, _POINTS[r.lang], 6)]
        para1 = " ".join(sentences[:3])
        para2 = " ".join(sentences[3:])
        if r.kind == "code":
            return f"{intro}\n\n{code}\n\n{para1}\n\n{closing}"
        if r.kind == "compare":
            return f"{intro}\n\n{para1}\n\n{verdict}\n\n{closing}"
        return f"{intro}\n\n{para1}\n\n{para2}\n\n{closing}"
    if style == "code":
        lead = _fill(_INTROS[r.lang]["code"][0], r) if r.kind == "code" and r.follow is None \
            else intro
        return f"{lead}\n\n{code}\n\n### {h['notes']}\n\n{_bullets(rng, r, 3)}\n\n{closing}"
    if style == "verbose":
        note = _fill(rng.choice(_NOTES[r.lang]), r)
        second = _intro(rng, r, opening=False)
        parts = [f"# {r.title}: {h['guide']}\n\n{intro}",
                 f"## {h['background']}\n\n{second}",
                 f"## {h['steps']}\n\n{_bullets(rng, r, 5, numbered=True)}",
                 f"## {h['compare']}\n\n{_table(rng, r, 4)}\n\n{note}"]
        if r.kind == "compare":
            parts.append(f"## {h['verdict']}\n\n{verdict}")
        parts += [f"## {h['example']}\n\n{code}",
                  f"## {h['watch']}\n\n{_bullets(rng, r, 3)}",
                  f"## {h['summary']}\n\n{closing}"]
        return "\n\n".join(parts)
    # balanced and thinking share the answer shape
    key = h["steps"] if numbered else h["key"]
    parts = [f"## {r.title}\n\n{intro}", f"### {key}\n\n{_bullets(rng, r, 4, numbered=numbered)}"]
    parts.append(f"### {h['glance']}\n\n{_table(rng, r, 3)}")
    if r.kind == "compare":
        parts.append(verdict)
    if r.kind == "code" or rng.random() < 0.7 or style == "thinking":
        parts.append(f"### {h['example']}\n\n{code}")
    parts.append(closing)
    return "\n\n".join(parts)


def _reasoning(rng: random.Random, r: _Reading) -> str:
    steps = _REASONING[r.lang]
    # The step about the prompt's context only when it has one.
    middle = [i for i in range(2, 7) if i != 2 or r.context]
    chosen = steps[:2] + [steps[i] for i in sorted(rng.sample(middle, 3))] + steps[7:]
    kind = _KIND_NAMES[r.lang][r.kind]
    return " ".join(_fill(s.replace("{kind}", kind), r) for s in chosen)


def _reading_for(model: SimulatedModel, prompt: str,
                 conversation: Sequence[tuple[str, str]] = ()) -> _Reading:
    """What ``model`` takes from the prompt (in its conversation): everything, or
    (coverage "gist") the topic and only the gist of its context: one word, the last
    content word of the context's first part ("postgres, bursty load" -> "postgres",
    "a broken kettle" -> "kettle")."""
    reading = _read_in_conversation(prompt, conversation)
    if model.coverage == "gist" and reading.context and reading.follow is None:
        first = reading.context.split(", ")[0]
        kept = [w for w in _WORD.findall(first) if w.lower() not in _STOPWORDS]
        return replace(reading, context=kept[-1] if kept else first)
    return reading


# -- conversations: follow-ups and instructions ------------------------------------------

# Words that point back at something said before ("make it recursive", "why is that?").
_ANAPHORA = frozenset("""
    it its this these those them they ini itu tersebut begitu
""".split())  # noqa: SIM905 - a word list reads better as text
# "that" points back only where it is not a relative pronoun ("is that", "that's", "do that").
_POINTING_THAT = re.compile(r"\b(?:is|was|about|do|does|with|for|like|of) that\b|\bthat'?s\b|"
                            r"\bthat\W*$", re.I)
_FOLLOW_OPENER = re.compile(
    r"^\W*(and|also|but|so|then|now|instead|what about|how about|why|why not|ok|okay|"
    r"tell me more|more|go on|continue|lalu|terus|dan|bagaimana dengan|gimana dengan|kalau|"
    r"kenapa|mengapa)\b", re.I)
_FOLLOW_WORDS = 14  # a longer message is a question of its own


def _anaphoric(prompt: str, reading: _Reading) -> bool:
    """Whether ``prompt`` leans on an earlier turn for its topic."""
    words = [w.lower() for w in _WORD.findall(prompt)]
    if not words or len(words) > _FOLLOW_WORDS:
        return False
    first = reading.main.split()[0].lower() if reading.main.split() else ""
    return (first in _ANAPHORA or reading.main in ("this topic", "topik ini")
            or any(w in _ANAPHORA for w in words) or bool(_POINTING_THAT.search(prompt))
            or bool(_FOLLOW_OPENER.match(prompt)))


def _what_follows(reading: _Reading) -> str:
    """What a follow-up adds, in the user's words, without the pointing-back words
    ("it recursive instead of iterative" -> "recursive instead of iterative")."""
    if reading.main in ("this topic", "topik ini"):
        return ""
    words = reading.main.split()
    while words and (words[0].lower() in _ANAPHORA or words[0].lower() in _STOPWORDS):
        words = words[1:]
    return " ".join(words).strip(" ,;:")


def _read_in_conversation(prompt: str, conversation: Sequence[tuple[str, str]]) -> _Reading:
    """The prompt's reading; for a follow-up, the earlier topic with what the follow-up
    adds (``follow``); instructions are taken out before the topic is read."""
    asked = without_instructions(prompt) or prompt
    reading = read_prompt(asked)
    earlier = _earlier_user_turns(conversation, prompt)
    if not earlier or not _anaphoric(asked, reading):
        return reading
    base = None
    for turn in reversed(earlier):
        text = without_instructions(turn) or turn
        candidate = read_prompt(text)
        first = candidate.main.split()[0].lower() if candidate.main.split() else ""
        if candidate.main not in ("this topic", "topik ini") and first not in _ANAPHORA:
            base = candidate
            break
    if base is None:
        return reading
    kind = reading.kind
    if kind in ("explain", "yesno") or (base.kind == "code" and kind != "compare"):
        kind = base.kind if base.kind not in ("greeting", "thanks") else kind
    follow = _what_follows(reading)
    code_lang, task = base.code_lang, base.task
    if kind == "code":
        if names_language(asked):
            code_lang = code_language(asked)
        if task is None:
            task = read_task(text if base.kind == "code" else asked)
        if reading.task is not None and reading.task.key:
            task = reading.task
    # The follow-up's words are quoted in the opening only: they need not be a noun phrase
    # ("recursive instead of iterative"), so sentences keep the earlier topic and context.
    return replace(base, kind=kind, follow=follow,
                   lang=reading.lang, code_lang=code_lang, task=task,
                   words=tuple(dict.fromkeys((*base.words, *reading.words))))


def _earlier_user_turns(conversation: Sequence[tuple[str, str]], prompt: str) -> list[str]:
    """The user turns before the prompt (the last user turn)."""
    users = [text for role, text in conversation if role == "user"]
    if users and users[-1] == prompt:
        users = users[:-1]
    return users


_FOLLOW_INTROS: dict[Lang, list[str]] = {
    "en": [
        "Staying with {main}, here is how \u201c{follow}\u201d changes the answer.",
        "Back to {main}: with \u201c{follow}\u201d in mind, a few things change.",
        "For {main}, \u201c{follow}\u201d shifts the picture in a few places, and the rest of "
        "the earlier answer still holds.",
    ],
    "id": [
        "Masih tentang {main}, begini \u201c{follow}\u201d mengubah jawabannya.",
        "Kembali ke {main}: dengan \u201c{follow}\u201d, beberapa hal berubah.",
    ],
}
_MORE_INTROS: dict[Lang, list[str]] = {
    "en": ["Here is more on {main}, one step further than before.",
           "Going deeper into {main}, here is the next layer."],
    "id": ["Berikut lebih jauh tentang {main}, selangkah lebih dalam dari sebelumnya.",
           "Masuk lebih dalam ke {main}, inilah lapisan berikutnya."],
}


def _follow_intro(rng: random.Random, r: _Reading) -> str:
    bank = _FOLLOW_INTROS if r.follow else _MORE_INTROS
    template = rng.choice(bank[r.lang])
    return template.format(main=r.main, follow=r.follow or "")


def _sentence(text: str) -> str:
    """``text`` as one sentence: capitalised, ending in a full stop."""
    text = _cap(text.strip().rstrip(":;,").strip())
    return text if text.endswith((".", "!", "?")) else f"{text}."


def _lead(rng: random.Random, r: _Reading) -> list[str]:
    """The sentences that open a prescribed-form answer: the answer's gist."""
    if r.kind == "yesno":
        bank = _SHORT[r.lang]
        answer = "yes" if rng.random() < 0.6 else "no"
        lead = [rng.choice(bank[answer]), _fill(bank[answer + "_why"][0], r)]
        return [_intro(rng, r), *lead] if r.follow is not None else lead
    lead = [_intro(rng, r)]
    if r.kind == "compare":
        lead.append(_fill(rng.choice(_VERDICT[r.lang]), r))
    return lead


def _missing_words(text: str, prompt: str) -> list[str]:
    have = judge_words(text)
    missing = [w for w in content_words(prompt, keep_case=True) if w.lower() not in have]
    return missing[:_MAX_RESTATED]


_WITH_IN_MIND: dict[Lang, str] = {"en": ", with {words} in mind.",
                                  "id": ", dengan memperhatikan {words}."}


def _joined(words: list[str], lang: Lang) -> str:
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} {'dan' if lang == 'id' else 'and'} {words[-1]}"


def _prescribed(rng: random.Random, r: _Reading, form: Instructions, style: Style,
                prompt: str, full: bool) -> str:
    """An answer in the form the instructions ask for: JSON, a list, or N sentences."""
    points = [_sentence(text) for _, text in _sentences(
        rng, r, _STEPS[r.lang] if r.kind == "steps" else _POINTS[r.lang], 7)]
    rng.shuffle(points)
    lead = [_sentence(s) for s in _lead(rng, r)]
    if form.json:
        body: dict[str, object] = {"topic": r.main}
        if r.context:
            body["context"] = r.context
        count = 2 if style == "terse" else 3 if style in ("plain", "code") else 4
        body["answer"] = " ".join(lead)
        body["points"] = points[:count]
        if full:
            missing = _missing_words(json.dumps(body, ensure_ascii=False), prompt)
            if missing:
                body["keywords"] = missing
        return json.dumps(body, ensure_ascii=False, indent=2)
    if form.bullets or form.numbered:
        count = form.sentences or (3 if style == "terse" else 6 if style == "verbose" else 4)
        items = (lead + points)[:count]
        if full:
            missing = _missing_words(" ".join(items), prompt)
            if missing:
                keywords = _RESTATE[r.lang].format(words=", ".join(missing))
                if form.sentences:  # the count asked for is kept: the last item says them
                    items[-1] = items[-1][:-1] + _WITH_IN_MIND[r.lang].format(
                        words=_joined(missing, r.lang))
                else:
                    items.append(keywords)
        marks = [f"{i}." if form.numbered else "-" for i in range(1, len(items) + 1)]
        return "\n".join(f"{mark} {item}" for mark, item in zip(marks, items, strict=True))
    count = form.sentences or 3
    chosen = (lead + points)[:count]
    if full:
        missing = _missing_words(" ".join(chosen), prompt)
        if missing:
            chosen[-1] = chosen[-1][:-1] + _WITH_IN_MIND[r.lang].format(
                words=_joined(missing, r.lang))
    return " ".join(chosen)


def _instructions(prompt: str, conversation: Sequence[tuple[str, str]]) -> Instructions:
    """The form asked for: by the system prompt, then (on top) by the prompt itself."""
    system = "\n".join(text for role, text in conversation if role in ("system", "developer"))
    return read_instructions(system).merged(read_instructions(prompt))


# A closing line restating the question's content words an answer has not used yet
# (coverage "full"); a poem's is an italic note, so the poem keeps its lines.
_RESTATE: dict[Lang, str] = {
    "en": "Keywords from your question: {words}.",
    "id": "Kata kunci dari pertanyaan Anda: {words}.",
}
_RESTATE_POEM: dict[Lang, str] = {"en": "*Keywords: {words}.*", "id": "*Kata kunci: {words}.*"}
_MAX_RESTATED = 30


def _restate_missing(text: str, prompt: str, r: _Reading) -> str:
    """``text`` with a closing line naming, as the user wrote them, the prompt's content
    words (as the simulated judge reads them) that it does not contain yet; a greeting or
    thanks is left as it is."""
    if r.kind in ("greeting", "thanks"):
        return text
    have = judge_words(text)
    missing = [w for w in content_words(prompt, keep_case=True) if w.lower() not in have]
    if not missing:
        return text
    missing = missing[:_MAX_RESTATED]  # a long document is not echoed back word by word
    bank = _RESTATE_POEM if r.kind == "poem" else _RESTATE
    return f"{text}\n\n{bank[r.lang].format(words=', '.join(missing))}"


def compose_answer(model: SimulatedModel, prompt: str, seed: int = 0, *,
                   conversation: Sequence[tuple[str, str]] = ()) -> ComposedAnswer:
    """The deterministic answer of ``model`` to ``prompt`` for ``seed``; ``conversation``
    is the whole request ((role, text), system first, ``prompt`` its last user turn), read
    for the earlier topic of a follow-up and for the system prompt's instructions."""
    if model.role == "judge":
        return ComposedAnswer(reasoning="", text=judge_reply(prompt))
    reading, form, style = _plan(model, prompt, conversation)
    rng = _rng(model.name, prompt, seed)
    if form.any_form and reading.kind not in ("greeting", "thanks", "poem"):
        # What is restated is what was asked about, not the words asking for the form.
        asked = without_instructions(prompt) or prompt
        text = _prescribed(rng, reading, form, style, asked, model.coverage == "full")
        reasoning = _reasoning(rng, reading) if model.thinking else ""
        return ComposedAnswer(reasoning=reasoning, text=text)
    text = _section(rng, reading, style)
    if reading.follow is not None and reading.kind == "yesno":
        text = f"{_follow_intro(rng, reading)} {text}"
    reasoning = _reasoning(rng, reading) if model.thinking else ""
    if model.coverage == "full":
        text = _restate_missing(text, prompt, reading)
    return ComposedAnswer(reasoning=reasoning, text=text)


def _plan(model: SimulatedModel, prompt: str, conversation: Sequence[tuple[str, str]]
          ) -> tuple[_Reading, Instructions, Style]:
    form = _instructions(prompt, conversation)
    reading = _reading_for(model, prompt, conversation)
    if form.lang is not None and form.lang != reading.lang:
        reading = replace(reading, lang=form.lang)
    style: Style = "terse" if form.concise else model.style
    return reading, form, style


def answer_tokens(
    model: SimulatedModel, prompt: str, seed: int, text: str, exact_tokens: int | None,
    *, conversation: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """``text`` (the composed answer) as tokens, cut or extended to ``exact_tokens``."""
    tokens = tokenize(text)
    if exact_tokens is None:
        return tokens
    extra = 1
    if model.role == "judge":
        # A judge has one reply: more of it is the same reply again.
        while tokens and len(tokens) < exact_tokens:
            tokens.extend(tokenize("\n\n" + text))
        return tokens[:exact_tokens]
    reading, _form, style = _plan(model, prompt, conversation)
    while len(tokens) < exact_tokens:
        # More of the same voice: another section, composed with a shifted seed.
        section = _section(_rng(model.name, prompt, seed, f"more{extra}"), reading, style)
        tokens.extend(tokenize("\n\n" + section))
        extra += 1
    return tokens[:exact_tokens]
