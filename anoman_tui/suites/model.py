"""A suite as the engine runs it, and what a run produces.

`Suite`: the models, the cases (their prompts and assertion values already filled from
their vars), the repeats and the settings, as read from a TOML suite or a promptfoo
config (`anoman_tui.suites.loader`, `anoman_tui.suites.promptfoo`). It is stored whole
with its run (`to_json`), so `--resume` and `--retry-errors` keep the original suite
even when its file has changed since.

`CellResult`: one (case, model, repeat): how its stream ended, its figures and the
verdict of its assertions. `docs/suites.md` documents both as the JSON report shows them.

Plain data. May import: the standard library, `anoman_tui.streaming.cost` and the
judges' rating record (`anoman_tui.judges.pairs.JudgeRating`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from anoman_tui.judges.pairs import JudgeRating
from anoman_tui.streaming.cost import UNKNOWN, Cost

ASSERTION_TYPES: tuple[str, ...] = (
    "equals", "contains", "icontains", "contains-any", "icontains-any", "contains-all",
    "icontains-all", "starts-with", "regex", "is-json", "contains-json", "levenshtein",
    "latency", "ttft", "cost", "llm-rubric",
)
"""The assertion types, named as promptfoo names them; each may be prefixed `not-`."""

JUDGE_TYPES: tuple[str, ...] = ("llm-rubric",)
"""The assertion types a judge model decides (docs/judges.md), not `assertions.check`."""

RUBRIC_THRESHOLD = 0.5
"""An `llm-rubric`'s default threshold: the least score that passes (with `pass` true)."""

NOT_RUN = "not_run"
"""A cell's status when it never started (the cost limit was reached first)."""


@dataclass(frozen=True, slots=True)
class Assertion:
    """One check of an answer. `value` is already filled from the case's vars."""

    type: str
    """One of `ASSERTION_TYPES` (without `not-`: that is `negate`)."""
    value: str | tuple[str, ...] | float | None = None
    """Text for the text checks, a tuple for the `-any`/`-all` ones, None where unused
    (`is-json`; `contains-json` optionally takes none)."""
    threshold: float | None = None
    """`levenshtein`: the largest distance that passes; `latency`/`ttft`: milliseconds;
    `cost`: USD; `llm-rubric`: the least score that passes (default 0.5)."""
    weight: float = 1.0
    negate: bool = False

    @property
    def judged_by_model(self) -> bool:
        """Decided by the suite's judge model (`llm-rubric`)."""
        return self.type in JUDGE_TYPES

    @property
    def name(self) -> str:
        """As written in a suite: `icontains`, `not-regex`."""
        return f"not-{self.type}" if self.negate else self.type

    def to_json(self) -> dict[str, Any]:
        value: Any = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"type": self.name, "value": value, "threshold": self.threshold,
                "weight": self.weight}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Assertion:
        name = str(data["type"])
        negate = name.startswith("not-")
        value = data.get("value")
        if isinstance(value, list):
            value = tuple(str(v) for v in value)
        return cls(type=name.removeprefix("not-") if negate else name, value=value,
                   threshold=data.get("threshold"), weight=float(data.get("weight", 1.0)),
                   negate=negate)


@dataclass(frozen=True, slots=True)
class Case:
    """One prompt of a suite, with what its answers must satisfy."""

    id: str
    """Unique in its suite: as given, else the 1-based position (`"3"`); a prompt
    variant of a case adds `/N` (`refund/2`: the second of the suite's `prompts`)."""
    prompt: str
    """Filled from `vars`: what is sent."""
    vars: tuple[tuple[str, str], ...] = ()
    asserts: tuple[Assertion, ...] = ()
    threshold: float | None = None
    """The share of the assertions' weight that must pass; None: all of it."""

    @property
    def judged(self) -> bool:
        """A case with no assertion is recorded, not judged."""
        return bool(self.asserts)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "prompt": self.prompt, "vars": dict(self.vars),
                "assert": [a.to_json() for a in self.asserts], "threshold": self.threshold}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Case:
        return cls(id=str(data["id"]), prompt=str(data["prompt"]),
                   vars=tuple((str(k), str(v)) for k, v in dict(data.get("vars") or {}).items()),
                   asserts=tuple(Assertion.from_json(a) for a in data.get("assert") or ()),
                   threshold=data.get("threshold"))


@dataclass(frozen=True, slots=True)
class Suite:
    """Everything a run needs from its suite file."""

    name: str
    models: tuple[str, ...]
    """`[TARGET:]MODEL` as written, in the order reports list them."""
    cases: tuple[Case, ...]
    path: str = ""
    """The file it was read from, as given (for messages)."""
    repeat: int = 1
    concurrency: int = 4
    max_cost: Decimal | None = None
    """USD: no new stream starts once the spent cost reaches it."""
    system: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    endpoint: str | None = None
    """`openai`, `anthropic` or `playground`; None: the configured default."""
    simulate: tuple[tuple[str, str], ...] = ()
    """(model as written, the local gateway's `X-Anoman-Simulate` value)."""
    skipped: tuple[str, ...] = ()
    """What `--skip-unsupported` left out of a promptfoo config, one line each."""
    targets: tuple[tuple[str, str, str], ...] = ()
    """(name, base URL, key variable or "") of OpenAI-compatible servers the suite names
    itself (a promptfoo provider with `config.apiBaseUrl`); its models name them."""
    judge: str | None = None
    """`[TARGET:]MODEL` of the judge (docs/judges.md); `--judge` overrides it."""
    judge_concurrency: int = 4
    """Judge requests in flight at once, apart from the models' streams."""
    judge_prompt: str | None = None
    """The rubric prompt's template (the text of `judge_prompt = FILE`); None: the
    documented one (`anoman_tui.judges.prompts.RUBRIC_PROMPT`)."""
    pairwise: bool = False
    """Judge every pair of models on every case and repeat, in both orders."""
    pairwise_prompt: str | None = None
    """The pairwise prompt's template (`pairwise_prompt = FILE`); None: the documented one."""

    @property
    def rubrics(self) -> bool:
        """Some case has an `llm-rubric` assertion."""
        return any(a.judged_by_model for c in self.cases for a in c.asserts)

    def simulated_scenario(self, model: str) -> str | None:
        return dict(self.simulate).get(model)

    def in_order(self, results: Iterable[CellResult]) -> list[CellResult]:
        """`results` in suite order (case, repeat, model), whatever order they came in;
        a result of a case or model the suite does not have goes last."""
        cases = {c.id: i for i, c in enumerate(self.cases)}
        models = {m: i for i, m in enumerate(self.models)}
        return sorted(results, key=lambda r: (cases.get(r.case, len(cases)), r.repeat,
                                              models.get(r.model, len(models))))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "models": list(self.models),
            "cases": [c.to_json() for c in self.cases], "path": self.path,
            "repeat": self.repeat, "concurrency": self.concurrency,
            "max_cost": None if self.max_cost is None else str(self.max_cost),
            "system": self.system, "max_tokens": self.max_tokens,
            "temperature": self.temperature, "endpoint": self.endpoint,
            "simulate": dict(self.simulate), "skipped": list(self.skipped),
            "targets": [list(t) for t in self.targets],
            "judge": self.judge, "judge_concurrency": self.judge_concurrency,
            "judge_prompt": self.judge_prompt, "pairwise": self.pairwise,
            "pairwise_prompt": self.pairwise_prompt,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Suite:
        max_cost = data.get("max_cost")
        return cls(
            name=str(data["name"]), models=tuple(str(m) for m in data["models"]),
            cases=tuple(Case.from_json(c) for c in data["cases"]),
            path=str(data.get("path") or ""), repeat=int(data.get("repeat", 1)),
            concurrency=int(data.get("concurrency", 4)),
            max_cost=None if max_cost is None else Decimal(str(max_cost)),
            system=data.get("system"), max_tokens=data.get("max_tokens"),
            temperature=data.get("temperature"), endpoint=data.get("endpoint"),
            simulate=tuple((str(k), str(v)) for k, v in dict(data.get("simulate") or {}).items()),
            skipped=tuple(str(s) for s in data.get("skipped") or ()),
            targets=tuple((str(n), str(u), str(k)) for n, u, k in data.get("targets") or ()),
            judge=data.get("judge"), judge_concurrency=int(data.get("judge_concurrency", 4)),
            judge_prompt=data.get("judge_prompt"), pairwise=bool(data.get("pairwise")),
            pairwise_prompt=data.get("pairwise_prompt"),
        )


@dataclass(frozen=True, slots=True)
class AssertionResult:
    """The verdict of one assertion on one answer."""

    type: str
    """As written (`not-icontains`)."""
    passed: bool | None
    """None: undecided, a judge error (`judge_error` says why)."""
    reason: str
    """One sentence: why it passed or failed (e.g. `ttft 0.412 s > 0.300 s`)."""
    weight: float = 1.0
    judge_pass: bool | None = None
    """`llm-rubric`: the judge's `pass`, its `score` and its `reason` (None otherwise)."""
    judge_score: float | None = None
    judge_reason: str | None = None
    judge_error: str | None = None
    """`llm-rubric`: why the judge's reply could not be read (then `passed` is None)."""

    @property
    def rubric(self) -> bool:
        return self.type.removeprefix("not-") in JUDGE_TYPES

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type, "pass": self.passed,
                                "reason": self.reason, "weight": self.weight}
        if self.rubric:
            data.update(judge_pass=self.judge_pass, judge_score=self.judge_score,
                        judge_reason=self.judge_reason)
            if self.judge_error is not None:
                data["judge_error"] = self.judge_error
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AssertionResult:
        passed = data.get("pass")
        score = data.get("judge_score")
        judge_pass = data.get("judge_pass")
        return cls(type=str(data["type"]), passed=None if passed is None else bool(passed),
                   reason=str(data.get("reason", "")), weight=float(data.get("weight", 1.0)),
                   judge_pass=None if judge_pass is None else bool(judge_pass),
                   judge_score=None if score is None else float(score),
                   judge_reason=data.get("judge_reason"), judge_error=data.get("judge_error"))


@dataclass(frozen=True, slots=True)
class CellResult:
    """One (case, model, repeat) of a run."""

    case: str
    model: str
    """As the suite writes it (`litellm:gpt-4o-mini`)."""
    repeat: int
    """1-based."""
    status: str
    """`completed`, a failure kind (docs/wire-contract.md §8) or `not_run`."""
    passed: bool | None = None
    """None: not judged (no assertion, or never run)."""
    assertions: tuple[AssertionResult, ...] = ()
    ttft_s: float | None = None
    e2e_s: float | None = None
    output_tokens_per_s: float | None = None
    output_tokens: int | None = None
    cost: Cost = UNKNOWN
    cache_hit: bool = False
    """The gateway answered from its cache despite `no-cache`: left out of latency."""
    comparison_id: int | None = None
    """The history's comparison holding this (case, repeat)'s answers."""
    failure: str | None = None
    """The failure's one line (`describe_failure`), when the stream did not complete."""
    retries: int = 0
    """Transport errors and rate limits retried before this result."""
    simulated: bool = False
    """Its model is simulated (the local gateway's)."""
    answer: str = field(default="", compare=False)
    """The answer's text (kept in the history's comparison; here for reports)."""
    judge_calls: int = 0
    """Requests the judge answered for this result's `llm-rubric` assertions."""
    judge_errors: int = 0
    """Of those and of the judge's failed streams: verdicts that could not be had."""
    judge_cost_usd: Decimal | None = None
    """What the judge's requests for it cost (None: none made, or unknown)."""

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.case, self.model, self.repeat)

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def failed(self) -> bool:
        """A failed cell, as every report lists it: its stream did not complete, or its
        answer was judged and failed. Neither a cell never run (`not_run`) nor one its
        judge could not decide (`judge_errors`, `passed` None) has failed."""
        return self.passed is False or self.status not in ("completed", NOT_RUN)

    @property
    def timed(self) -> bool:
        """Counted in latency figures: completed and not a cache hit."""
        return self.completed and not self.cache_hit

    def to_json(self) -> dict[str, Any]:
        """As `eval --json` gives it (docs/suites.md)."""
        return {
            "case": self.case, "model": self.model, "repeat": self.repeat,
            "status": self.status, "pass": self.passed,
            "assertions": [a.to_json() for a in self.assertions],
            "metrics": {"ttft_s": self.ttft_s, "e2e_s": self.e2e_s,
                        "output_tokens_per_s": self.output_tokens_per_s,
                        "output_tokens": self.output_tokens},
            "cost_usd": None if self.cost.usd is None else float(self.cost.usd),
            "cost": self.cost.to_json(),
            "cache_hit": self.cache_hit, "comparison_id": self.comparison_id,
            "failure": self.failure, "retries": self.retries, "simulated": self.simulated,
            "judge_calls": self.judge_calls, "judge_errors": self.judge_errors,
            "judge_cost_usd": None if self.judge_cost_usd is None
            else float(self.judge_cost_usd),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CellResult:
        metrics = data.get("metrics") or {}
        cost = data.get("cost")
        return cls(
            case=str(data["case"]), model=str(data["model"]), repeat=int(data["repeat"]),
            status=str(data["status"]), passed=data.get("pass"),
            assertions=tuple(AssertionResult.from_json(a) for a in data.get("assertions") or ()),
            ttft_s=metrics.get("ttft_s"), e2e_s=metrics.get("e2e_s"),
            output_tokens_per_s=metrics.get("output_tokens_per_s"),
            output_tokens=metrics.get("output_tokens"),
            cost=Cost.from_json(cost) if isinstance(cost, dict) else UNKNOWN,
            cache_hit=bool(data.get("cache_hit")), comparison_id=data.get("comparison_id"),
            failure=data.get("failure"), retries=int(data.get("retries") or 0),
            simulated=bool(data.get("simulated")),
            judge_calls=int(data.get("judge_calls") or 0),
            judge_errors=int(data.get("judge_errors") or 0),
            judge_cost_usd=_decimal(data.get("judge_cost_usd")),
        )


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """One model's figures over a run (`anoman_tui.suites.summary.summarize`)."""

    model: str
    results: int
    """Cells of this model (case x repeat), not_run ones included."""
    judged: int
    """Results judged: run, with assertions (a failed stream is judged, and fails)."""
    passed: int
    pass_rate: float | None
    """passed / judged; None when nothing was judged."""
    pass_rate_ci: tuple[float, float] | None
    """95% Wilson interval of `pass_rate`."""
    ttft_p50_s: float | None
    ttft_p95_s: float | None
    tokens_per_s_p50: float | None
    e2e_p50_s: float | None
    e2e_p95_s: float | None
    cost_usd: Decimal | None
    """Sum of the known costs; None when none is known."""
    cost_estimated: bool
    """Part of `cost_usd` is an estimate (no gateway or provider figure)."""
    cost_per_pass_usd: Decimal | None
    failures: dict[str, int]
    """Failure kind -> count (cells whose stream did not complete)."""
    not_run: int
    cache_hits: int
    simulated: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model, "results": self.results, "judged": self.judged,
            "passed": self.passed, "pass_rate": self.pass_rate,
            "pass_rate_ci": None if self.pass_rate_ci is None else list(self.pass_rate_ci),
            "ttft_p50_s": self.ttft_p50_s, "ttft_p95_s": self.ttft_p95_s,
            "output_tokens_per_s_p50": self.tokens_per_s_p50,
            "e2e_p50_s": self.e2e_p50_s, "e2e_p95_s": self.e2e_p95_s,
            "cost_usd": None if self.cost_usd is None else float(self.cost_usd),
            "cost_estimated": self.cost_estimated,
            "cost_per_pass_usd": (None if self.cost_per_pass_usd is None
                                  else float(self.cost_per_pass_usd)),
            "failures": dict(self.failures), "not_run": self.not_run,
            "cache_hits": self.cache_hits, "simulated": self.simulated,
        }


@dataclass(frozen=True, slots=True)
class PairSummary:
    """Two models compared on the cells judged for both (`summarize`)."""

    a: str
    b: str
    paired: int
    """(case, repeat) judged for both."""
    a_only: int
    """Passed for a, failed for b."""
    b_only: int
    p_value: float | None
    """Exact two-sided McNemar test on (a_only, b_only); None when nothing is paired."""
    p_value_holm: float | None
    """`p_value` Holm-corrected across all pairs of the run."""
    ttft_pairs: int
    """(case, repeat) both completed (and neither a cache hit): the TTFT pairs."""
    ttft_diff_s: float | None
    """Median of TTFT(a) - TTFT(b) over those pairs."""
    ttft_diff_ci: tuple[float, float] | None
    """Paired bootstrap 95% interval of `ttft_diff_s`."""

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a, "b": self.b, "paired": self.paired, "a_only": self.a_only,
            "b_only": self.b_only, "p_value": self.p_value, "p_value_holm": self.p_value_holm,
            "ttft_pairs": self.ttft_pairs, "ttft_diff_s": self.ttft_diff_s,
            "ttft_diff_ci": None if self.ttft_diff_ci is None else list(self.ttft_diff_ci),
        }


ModelRating = JudgeRating
"""A model's Bradley–Terry rating from the judge's pairwise verdicts (docs/judges.md):
the judges' own record, its interval resampling whole cases."""


@dataclass(frozen=True, slots=True)
class JudgeSummary:
    """What the judge did over a run (`eval --json`'s `judge`, docs/judges.md)."""

    model: str
    calls: int
    """Requests it answered."""
    errors: int
    """Verdicts it could not give: a reply that could not be read, or a failed stream."""
    cost_usd: Decimal | None
    """What its requests cost, apart from the models'; None when unknown."""
    self_judge: bool
    """It is one of the models under test (allowed with `--allow-self-judge`)."""
    simulated: bool = False
    """It is the local gateway's simulated judge: its verdicts follow a documented rule."""
    position_consistency: float | None = None
    first_position_wins: float | None = None
    longer_wins: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "calls": self.calls, "errors": self.errors,
                "cost_usd": None if self.cost_usd is None else float(self.cost_usd),
                "self_judge": self.self_judge, "simulated": self.simulated,
                "position_consistency": self.position_consistency,
                "first_position_wins": self.first_position_wins,
                "longer_wins": self.longer_wins}


@dataclass(frozen=True, slots=True)
class RunSummary:
    models: tuple[ModelSummary, ...]
    pairs: tuple[PairSummary, ...]
    judge: JudgeSummary | None = None
    """None: the run had no judge."""
    ratings: tuple[ModelRating, ...] = ()
    """From the judge's pairwise verdicts, in the suite's model order; () without them."""
    pairwise: tuple[dict[str, Any], ...] = ()
    """Every pairwise verdict (`PairJudgement.to_json()`), in suite order."""

    def to_json(self) -> dict[str, Any]:
        """`summary` keyed by model, and `pairs`, as `eval --json` gives them."""
        return {"summary": {m.model: m.to_json() for m in self.models},
                "pairs": [p.to_json() for p in self.pairs]}


def _decimal(value: Any) -> Decimal | None:
    """A stored USD figure back as a Decimal (through its shortest text, as it was)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return Decimal(str(value))
    except ArithmeticError:
        return None
