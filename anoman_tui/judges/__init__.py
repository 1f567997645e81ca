"""The LLM judge's core: prompts, reading its replies, and what its verdicts add up to.

A judge is a model asked to grade answers, for evaluation suites (`llm-rubric`: one
answer against a rubric) and for the blind arena (pairwise: which of two answers is
better). This package holds everything about judging that needs no network, so that the
suite engine and the arena share one implementation and the tests can check it exactly:

- `prompts`: the rubric and pairwise prompts, with untrusted text inserted as delimited,
  defanged data, and the check of a user's own template;
- `parse`: the judge's reply to a `RubricVerdict` or a pairwise `Verdict`, or a
  `JudgeError` (a judge error is never a pass or a fail of the model judged);
- `pairs`: MT-bench's position swap, the judge's bias figures, and Bradley–Terry ratings
  from its verdicts with a bootstrap over cases;
- `agreement`: how often the judge picks the best a person picked, and Cohen's kappa.

The user-facing reference is docs/judges.md. Pure: may import the standard library,
numpy and `anoman_tui.arena.rating`; no I/O, no network, no Textual.
"""

from anoman_tui.judges.agreement import TIE, Agreement, agreement, best_after_swap
from anoman_tui.judges.pairs import (
    BiasFigures,
    JudgeRating,
    PairJudgement,
    Winner,
    bias_figures,
    judge_ratings,
)
from anoman_tui.judges.parse import (
    JudgeError,
    RubricVerdict,
    Verdict,
    parse_pairwise,
    parse_rubric,
)
from anoman_tui.judges.prompts import (
    PAIRWISE_PROMPT,
    RUBRIC_PROMPT,
    check_template,
    new_nonce,
    pairwise_prompt,
    rubric_prompt,
)

__all__ = [
    "PAIRWISE_PROMPT",
    "RUBRIC_PROMPT",
    "TIE",
    "Agreement",
    "BiasFigures",
    "JudgeError",
    "JudgeRating",
    "PairJudgement",
    "RubricVerdict",
    "Verdict",
    "Winner",
    "agreement",
    "best_after_swap",
    "bias_figures",
    "check_template",
    "judge_ratings",
    "new_nonce",
    "pairwise_prompt",
    "parse_pairwise",
    "parse_rubric",
    "rubric_prompt",
]
