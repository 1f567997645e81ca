"""Pre-call guardrails: injection, PII, moderation and policy.

``run_guardrails`` inspects a request's messages before the first token and
returns one ``GuardrailOutcome`` per check (status pass | flag | block and a
score in [0, 1]). The checks are heuristic on purpose (this is a local
simulation of the hosted gateway) but behave the way the real ones are
documented: prompt-injection phrases score high, payment card numbers are
recognised with a Luhn check, Indonesian NIK numbers by their structure.
What each result leads to is configured in ``GuardrailSettings``.

Imports only the standard library and the gateway's config module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from anoman_tui.gateway.config import GuardrailAction, GuardrailSettings, KeyPolicy

_SEVERITY = {"pass": 0, "flag": 1, "block": 2}


@dataclass(frozen=True, slots=True)
class GuardrailOutcome:
    """The outcome of one check as the gateway decides it, with the rules that fired.

    Not the client's `wire.GuardrailVerdict` (what a client reads back from the Anoman
    block): `as_block()` is the bridge between the two.
    """

    check: str
    status: GuardrailAction
    score: float
    # Which rule fired (e.g. "card", "role_override"); kept for the ledger.
    findings: tuple[str, ...] = ()
    # What the score is about, for checks that have categories (moderation: "violence").
    category: str | None = None

    def as_block(self) -> dict[str, object]:
        """The form the Anoman block carries."""
        out: dict[str, object] = {"status": self.status, "score": round(self.score, 2)}
        if self.category is not None:
            out["category"] = self.category
        if self.findings:
            out["findings"] = list(self.findings)
        return out


# Injection: weighted phrase patterns, combined as independent evidence.
_INJECTION_PATTERNS: list[tuple[str, re.Pattern[str], float]] = [
    (
        "ignore_instructions",
        re.compile(
            r"\b(ignore|disregard|forget|abaikan)\b.{0,30}\b(previous|prior|above|earlier|all|"
            r"sebelumnya|semua)\b.{0,30}\b(instructions?|rules?|prompts?|directions?|instruksi|"
            r"perintah|aturan)\b",
            re.I | re.S,
        ),
        0.75,
    ),
    (
        "reveal_system_prompt",
        re.compile(
            r"\b(print|reveal|show|repeat|output|display|leak|tampilkan|tunjukkan)\b.{0,40}"
            r"\b(system|hidden|initial|secret)\b.{0,15}\b(prompt|instructions?|message)\b",
            re.I | re.S,
        ),
        0.6,
    ),
    (
        "role_override",
        re.compile(
            # "DAN" (the jailbreak persona) only in capitals: "dan" is Indonesian for "and".
            r"\b(you are now|from now on you|act as|pretend to be|developer mode|(?-i:DAN)\b"
            r"|jailbreak)",
            re.I,
        ),
        0.45,
    ),
    ("fake_system_turn", re.compile(r"(^|\n)\s*(system|assistant)\s*:", re.I), 0.35),
    (
        "bypass_safety",
        re.compile(r"\b(bypass|disable|turn off|override)\b.{0,25}\b(safety|filters?|guardrails?"
                   r"|restrictions?|moderation)\b", re.I | re.S),
        0.5,
    ),
]

_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_PHONE = re.compile(r"(?<![\w+])(?:\+62|62|0)8\d{1,2}[\s.-]?\d{3,4}[\s.-]?\d{3,5}\b"
                    r"|(?<![\w+])\+\d{1,3}[\s.-]?\(?\d{2,4}\)?[\s.-]?\d{3,4}[\s.-]?\d{3,4}\b")
_DIGIT_RUN = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")

# Moderation works on whole words with their inflections spelled out: a stem followed by
# `\w*` also matched "stable", "gunicorn" and "bombastic". Words that are violent only when
# aimed at someone ("kill", "shoot", "stab", "bunuh") need a person nearby, so "kill the
# process", "a killer feature", "take a stab at it" and "bunuh proses" pass.
_PERSON = (
    r"(?:him|her|them|me|you|us|people|person|persons|someone|somebody|everyone|anybody|"
    r"anyone|man|woman|men|women|kids?|child|children|family|wife|husband|boss|teacher|"
    r"neighbou?rs?|coworkers?|colleagues?|classmates?|police|"
    r"orang|seseorang|dia|mereka|kamu|anak|istri|istriku|suami|suamiku|bos|guru|tetangga|"
    r"polisi|keluarga)"
)
_HARM_VERB = (
    r"(?:kill|kills|killed|killing|shoot|shoots|shot|shooting|stab|stabs|stabbed|stabbing|"
    r"strangle|strangled|poison|poisoned|hurt|beat up|attack|attacked|"
    r"bunuh|membunuh|dibunuh|tembak|menembak|ditembak|tikam|menikam|ditikam|racun|meracuni|"
    r"serang|menyerang|pukul|memukul)"
)
_MODERATION: dict[str, tuple[re.Pattern[str], float]] = {
    "violence": (re.compile(
        r"\b(?:murder|murders|murdered|murdering|massacre|massacres|massacred|behead|beheaded|"
        r"pembunuhan|pembantaian|membantai)\b"
        rf"|\b{_HARM_VERB}\b(?:\s+\w+){{0,3}}?\s+(?:the\s+|my\s+|a\s+|all\s+|that\s+)?"
        rf"{_PERSON}\b"
        # "shoot me an email", "shoot them a message"
        r"(?!\s+(?:an?\s+)?(?:e-?mail|message|note|line|text|dm|ping|invite|link|reply)\b)"
        r"|\b(?:bomb|bombing|mengebom|meledakkan)\b.{0,30}\b(?:school|church|mosque|masjid|"
        r"gereja|sekolah|office|kantor|crowd|building|gedung)\b",
        re.I | re.S), 0.6),
    "weapons": (re.compile(r"\b(build|make|assemble|rakit|merakit|membuat|bikin)\b.{0,30}"
                           r"\b(guns?|bombs?|explosives?|weapons?|pipe bombs?|senjata|senpi|"
                           r"bom|bahan peledak)\b", re.I | re.S), 0.95),
    "self_harm": (re.compile(r"\b(suicide|self[- ]harm|kill myself|end my life|"
                             r"bunuh diri|mengakhiri hidup)\b", re.I), 0.9),
    "hate": (re.compile(r"\b(exterminate|subhuman|inferior race)\b", re.I), 0.9),
    "drugs": (re.compile(r"\b(synthesi[sz]e|cook|make|membuat|bikin)\b.{0,20}\b(meth|heroin|"
                         r"fentanyl|sabu|sabu-sabu)\b", re.I | re.S), 0.95),
}


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum payment card numbers carry."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


_CARD_IIN = re.compile(
    r"4\d{12}(?:\d{3}){0,2}"  # Visa: 13, 16 or 19 digits
    r"|5[1-5]\d{14}|2(?:22[1-9]|2[3-9]\d|[3-6]\d\d|7[01]\d|720)\d{12}"  # Mastercard
    r"|3[47]\d{13}"  # Amex
    r"|6(?:011|5\d\d|4[4-9]\d)\d{12,15}"  # Discover
    r"|35(?:2[89]|[3-8]\d)\d{12,15}"  # JCB
    r"|3(?:0[0-5]|[68]\d)\d{11,16}"  # Diners
)


def looks_like_card(digits: str) -> bool:
    """A known network's number prefix and length, and a valid Luhn checksum."""
    return bool(_CARD_IIN.fullmatch(digits)) and luhn_valid(digits)


# Province codes in use (Aceh 11 ... Papua 91-96).
_NIK_PROVINCES = frozenset(
    [*range(11, 20), 21, *range(31, 37), 51, 52, 53, *range(61, 66), *range(71, 77), 81, 82,
     *range(91, 97)]
)


def looks_like_nik(digits: str) -> bool:
    """Indonesian NIK: province(2) regency(2) district(2) DDMMYY (DD+40 for women) serial(4)."""
    if len(digits) != 16:
        return False
    province = int(digits[:2])
    day, month = int(digits[6:8]), int(digits[8:10])
    if day > 40:
        day -= 40
    serial_ok = digits[12:] != "0000"
    return province in _NIK_PROVINCES and 1 <= day <= 31 and 1 <= month <= 12 and serial_ok


def score_injection(text: str) -> tuple[float, tuple[str, ...]]:
    miss = 1.0
    found: list[str] = []
    for name, pattern, weight in _INJECTION_PATTERNS:
        if pattern.search(text):
            miss *= 1.0 - weight
            found.append(name)
    # A baseline so a clean prompt reports a small non-zero score, like a classifier.
    score = 1.0 - miss if found else min(0.02 + len(text) / 200_000, 0.1)
    return score, tuple(found)


def find_pii(text: str) -> tuple[str, ...]:
    kinds: list[str] = []
    if _EMAIL.search(text):
        kinds.append("email")
    cards = False
    nik = False
    for match in _DIGIT_RUN.finditer(text):
        raw = match.group(0)
        digits = re.sub(r"\D", "", raw)
        # 16 plain digits shaped like a NIK are a NIK even if Luhn happens to pass;
        # cards are usually written in groups.
        if raw == digits and looks_like_nik(digits):
            nik = True
        elif looks_like_card(digits):
            cards = True
    if cards:
        kinds.append("card")
    if nik:
        kinds.append("nik")
    if _PHONE.search(text):
        kinds.append("phone")
    return tuple(kinds)


def score_moderation(text: str) -> tuple[float, tuple[str, ...]]:
    """The highest category weight and the categories that matched, highest first."""
    found = [(weight, category) for category, (pattern, weight) in _MODERATION.items()
             if pattern.search(text)]
    found.sort(key=lambda item: -item[0])  # stable: ties keep the table's order
    score = found[0][0] if found else 0.0
    return score, tuple(category for _, category in found)


def run_guardrails(
    text: str,
    settings: GuardrailSettings,
    *,
    model: str,
    max_tokens: int | None,
    policy: KeyPolicy | None,
) -> dict[str, GuardrailOutcome]:
    """All four checks on ``text``: injection, pii, moderation, policy, in that order.

    ``text`` is what the caller wrote (``ChatRequest.caller_text``): the model's own earlier
    answers are not scored, so a follow-up is not flagged for words the model used.
    """
    verdicts: dict[str, GuardrailOutcome] = {}

    inj_score, inj_found = score_injection(text)
    verdicts["injection"] = GuardrailOutcome(
        "injection", settings.injection.action_for(inj_score), inj_score, inj_found
    )

    kinds = find_pii(text)
    pii_status: GuardrailAction = "pass"
    for kind in kinds:
        action: GuardrailAction = getattr(settings.pii, kind)
        if _SEVERITY[action] > _SEVERITY[pii_status]:
            pii_status = action
    verdicts["pii"] = GuardrailOutcome("pii", pii_status, 0.99 if kinds else 0.0, kinds)

    mod_score, mod_found = score_moderation(text)
    verdicts["moderation"] = GuardrailOutcome(
        "moderation", settings.moderation.action_for(mod_score), mod_score, mod_found,
        category=mod_found[0] if mod_found else None,
    )

    violations: list[str] = []
    if policy is not None:
        if policy.allowed_models is not None and model not in policy.allowed_models:
            violations.append("model_not_allowed")
        if policy.max_tokens is not None and max_tokens is not None and (
            max_tokens > policy.max_tokens
        ):
            violations.append("max_tokens_exceeded")
    verdicts["policy"] = GuardrailOutcome(
        "policy",
        settings.policy.action if violations else "pass",
        1.0 if violations else 0.0,
        tuple(violations),
    )
    return verdicts


def first_block(verdicts: dict[str, GuardrailOutcome]) -> GuardrailOutcome | None:
    return next((v for v in verdicts.values() if v.status == "block"), None)
