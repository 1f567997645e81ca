"""The Markdown report: its sections, its table, and answers that cannot break it."""

from __future__ import annotations

from markdown_it import MarkdownIt

from anoman_tui.history import ComparisonRecord
from anoman_tui.report import export, to_markdown
from anoman_tui.report.markdown import cell, contained_markdown
from tests.report.records import EARLIER, HOSTILE, cut, follow_up, hostile, pane, sample


def _headings(markdown: str) -> list[tuple[str, str]]:
    """(tag, text) of every heading a CommonMark parser sees in the document."""
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return [(t.tag, tokens[i + 1].content) for i, t in enumerate(tokens)
            if t.type == "heading_open"]


def test_sections_in_order() -> None:
    md = to_markdown(sample())
    assert _headings(md) == [
        ("h1", "Comparison #42"), ("h2", "Metrics"), ("h2", "1 · gpt-4o-mini"),
        ("h3", "Plan"),  # the answer's own `# Plan`, demoted below its pane
        ("h2", "2 · claude-3-5-haiku"), ("h2", "3 · llama-3.1-8b"),
    ]
    assert "**System prompt**\n\n> You are terse." in md
    assert "**Prompt**\n\n> Explain *closures* in Python.\n> Briefly." in md
    assert "2025-12-01T02:05:26Z" in md


def test_metrics_table_rows() -> None:
    md = to_markdown(sample())
    header = ("| # | model | status | TTFT | tokens/s | tokens in→out | cost | weighted tokens"
              " | routing | cache | guardrails |")
    assert header in md
    assert ("| 1 | gpt-4o-mini | completed | 0.42 s | 57.3 | 12→34 | $0.000412 | 1,234 | "
            "latency / eu-west | miss | pii pass 0.02, toxicity flag 0.61 (violence) |") in md
    assert "| 2 | claude-3-5-haiku | failed | 0.42 s | 57.3 | 12→34 | — | — | — | — | — |" in md
    assert "| 3 | llama-3.1-8b | cancelled |" in md and "| hit |" in md


def test_table_cells_escape_pipes_and_newlines() -> None:
    assert cell("a|b\nc") == "a\\|b c"
    md = to_markdown(hostile())
    table = md[md.index("## Metrics"):md.index("## 1 ·")].strip().split("\n")[2:]
    tokens = MarkdownIt("commonmark").enable("table").parse("\n".join(table))
    rows = [t for t in tokens if t.type == "tr_open"]
    assert len(table) == 4 and len(rows) == 3  # header + two panes, none split
    for row in table[2:]:
        assert row.count("|") - row.count("\\|") == 12  # 11 columns, not one more


def test_failed_and_cancelled_panes_say_so() -> None:
    md = to_markdown(sample())
    failed = md[md.index("## 2 ·"):md.index("## 3 ·")]
    assert "**FAILED: STREAM INTERRUPTED after 7 tokens: partial answer not committed**" in failed
    assert "partial and **not committed**" in failed
    cancelled = md[md.index("## 3 ·"):]
    assert "**CANCELLED after 3 tokens: partial answer not committed**" in cancelled
    assert "partial and **not committed**" in cancelled
    completed = md[md.index("## 1 ·"):md.index("## 2 ·")]
    assert "not committed" not in completed


def test_reasoning_is_quoted_before_the_answer() -> None:
    md = to_markdown(sample())
    assert "> **Reasoning**\n>\n> Think about scopes.\n\n**Answer**" in md


def test_cut_at_max_tokens_says_so() -> None:
    md = to_markdown(cut())
    assert "**CUT at max tokens**" in md and "(length)" in md
    assert "status | " in md and "completed (cut: max tokens)" in md


def test_unclosed_fence_does_not_swallow_the_next_pane() -> None:
    md = to_markdown(sample())
    # The failed pane's text ends inside ```python: the next pane is still a heading.
    assert ("h2", "3 · llama-3.1-8b") in _headings(md)
    for opener in ("```", "~~~~", "   ```js", "<pre>", "<!-- note", "<script>"):
        record = ComparisonRecord(prompt="p", panes=(
            pane(1, "a", text=f"intro\n\n{opener}\n# inside\ncode"), pane(2, "b", text="ok")))
        assert ("h2", "2 · b") in _headings(to_markdown(record)), opener


def test_contained_markdown_repairs() -> None:
    assert contained_markdown("```py\nx") == "```py\nx\n```"
    assert contained_markdown("````\nx\n```") == "````\nx\n```\n````"  # a shorter run is code
    assert contained_markdown("~~~\n```\n") == "~~~\n```\n\n~~~"
    assert contained_markdown("```\nx\n```\n# H") == "```\nx\n```\n### H"
    assert contained_markdown("```\n# not a heading\n```") == "```\n# not a heading\n```"
    assert contained_markdown("###### six") == "###### six"
    assert contained_markdown("#hashtag") == "#hashtag"
    assert contained_markdown("<pre>\nx") == "<pre>\nx\n</pre>"
    assert contained_markdown("<pre>x</pre>\n# H") == "<pre>x</pre>\n### H"


def test_prompt_and_model_cannot_break_structure() -> None:
    md = to_markdown(hostile())
    heads = _headings(md)
    assert [tag for tag, _ in heads].count("h2") == 3  # Metrics and two panes
    # The name is the heading's text, markup and all, never markup of its own.
    rendered = MarkdownIt("commonmark").render(md)
    assert "<h2>1 · &lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror" in rendered
    assert ("[x](javascript:alert(1)) ![pixel](https://tracker.example/p.png) | pipe new line"
            "</h2>") in rendered


def test_golden_excerpt() -> None:
    record = ComparisonRecord(prompt="Say hi", created_at=0.0, panes=(pane(1, "m", text="Hi!"),))
    assert export(record, "md") == (
        "# Comparison\n\n*1970-01-01T00:00:00Z · m*\n\n**Prompt**\n\n> Say hi\n\n## Metrics\n\n"
        "| # | model | status | TTFT | tokens/s | tokens in→out | cost | weighted tokens | routing"
        " | cache | guardrails |\n|---:|---|---|---:|---:|---|---|---|---|---|---|\n"
        "| 1 | m | completed | 0.42 s | 57.3 | 12→34 | $0.000412 | 1,234 | latency / eu-west"
        " | miss | pii pass 0.02, toxicity flag 0.61 (violence) |\n\n## 1 · m\n\nHi!\n"
    )


def test_no_key_in_any_markdown() -> None:
    for record in (sample(), hostile(), cut()):
        assert "anm-sk-" not in to_markdown(record)
    assert HOSTILE.split("\n")[0] in to_markdown(hostile())  # answer text kept as written


def test_conversation_turns_stay_apart() -> None:
    record = ComparisonRecord(prompt="p", conversation=(("user", "```\nopen"), ("assistant", "B")),
                              panes=(pane(1, "m"),))
    rendered = MarkdownIt("commonmark").render(to_markdown(record))
    assert "<p><strong>assistant</strong>:</p>\n<p>B</p>" in rendered
    assert "<pre><code>open\n</code></pre>" in rendered


def test_simulated_answers_say_so_in_the_heading_table_and_a_note() -> None:
    from dataclasses import replace

    record = sample()
    record = replace(record, panes=(replace(record.panes[0], simulated=True),
                                    *record.panes[1:]))
    markdown = to_markdown(record)
    first = record.panes[0].model
    assert ("h2", f"1 · {first} (simulated)") in _headings(markdown)
    assert f"| 1 | {first} (simulated) |" in markdown
    assert f"Simulated: the answers of {first} came from the local gateway's simulated" \
        in markdown.replace("\\-", "-")
    assert "simulated" not in to_markdown(sample()).lower()


def test_each_pane_shows_its_own_earlier_answers() -> None:
    markdown = to_markdown(follow_up())
    sections = markdown.split("\n## ")[2:]  # after the title's part and the metrics
    assert [s.split("\n", 1)[0] for s in sections] == ["1 · model-1", "2 · model-2",
                                                       "3 · model-3"]
    words = {1: "Alpha", 2: "Beta", 3: "Gamma"}
    for n, section in enumerate(sections, 1):
        assert "**Conversation so far**" in section
        for answer in EARLIER[n]:
            assert answer in section  # Markdown as the model wrote it, inside the quote
        assert all(words[m] not in section for m in words if m != n), section
    # Rendered, an earlier answer's Markdown is Markdown.
    rendered = MarkdownIt("commonmark").render(markdown)
    assert "<strong>Alpha</strong> one" in rendered and "<em>Beta</em> one" in rendered
