"""The HTML report: one self-contained page where model and user text is only ever text."""

from __future__ import annotations

from html.parser import HTMLParser

from anoman_tui.history import ComparisonRecord
from anoman_tui.report import export, to_html
from anoman_tui.report.html import render_markdown, sparkline
from tests.report.page import Page
from tests.report.records import cut, follow_up, hostile, pane, sample


def _assert_safe(page: str) -> Page:
    parsed = Page(page)
    names = {t for t, _ in parsed.tags}
    assert not names & {"script", "iframe", "object", "embed", "img", "link", "base", "form",
                        "image", "use", "foreignobject"}, names
    for tag, attrs in parsed.tags:
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            assert not (value or "").strip().lower().startswith(("javascript:", "vbscript:",
                                                                  "data:")), (tag, value)
            if name in ("src", "srcset", "poster", "background", "xlink:href"):
                raise AssertionError(f"a fetch: <{tag} {name}={value!r}>")
            if name == "href" and tag != "a":
                raise AssertionError(f"a non-link href: <{tag} href={value!r}>")
    style = "".join(page.split("<style>", 1)[1].split("</style>", 1)[0])
    assert "url(" not in style and "@import" not in style and "http" not in style
    return parsed


def test_structure() -> None:
    page = to_html(sample())
    parsed = _assert_safe(page)
    assert page.startswith("<!DOCTYPE html>")
    assert len(parsed.named("section")) == 3  # one per pane, in a grid
    assert "display: grid" in page and "auto-fit" in page
    # The metrics table, and the first answer's own Markdown table rendered.
    assert [t.get("class") for t in parsed.named("table")] == ["metrics", None]
    assert "<th>tokens in→out</th>" in page and "<td>latency / eu-west</td>" in page
    assert "<style>" in page and page.count("<svg") == 3 and "<rect" in page
    csp = [m for m in parsed.named("meta") if m.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in (csp[0]["content"] or "")


def test_answer_markdown_is_rendered_and_code_highlighted() -> None:
    page = to_html(sample())
    assert "<h1>Plan</h1>" in page and "<li>one</li>" in page
    assert '<pre class="code"><code class="language-python">' in page
    assert '<span class="hl-k">def</span>' in page  # Pygments' token classes
    assert ".code .hl-k" in page  # and their colours, inline


def test_badges_and_notes() -> None:
    text = " ".join(Page(to_html(sample())).text)
    assert "FAILED: STREAM INTERRUPTED after 7 tokens: partial answer not committed" in text
    assert "CANCELLED after 3 tokens" in text and "CACHE HIT" in text
    assert text.count("partial text, not committed") == 2
    assert "Reasoning" in text and "Think about scopes." in text
    cut_text = " ".join(Page(to_html(cut())).text)
    assert "CUT at max tokens" in cut_text and "max tokens limit" in cut_text


def test_hostile_text_everywhere_is_text() -> None:
    page = to_html(hostile())
    parsed = _assert_safe(page)
    text = "".join(parsed.text)
    # Shown as written: prompt, system prompt, turns, name, answer, reasoning, failure.
    assert text.count("<script>alert(1)</script>") >= 7
    assert text.count("<img src=x onerror=alert(1)>") >= 7
    links = parsed.named("a")
    assert all((a.get("href") or "").startswith("https://") for a in links)
    assert all(a.get("rel") == "noopener noreferrer nofollow" for a in links)
    assert "[x](javascript:alert(1))" in text  # not a link: markdown-it refused the URL


def test_markdown_escapes_raw_html_and_refuses_unsafe_links() -> None:
    out = render_markdown('<b onmouseover="x">hi</b> [a](javascript:alert(1)) '
                          "[b](JaVaScRiPt:x) [c](data:text/html,x) <javascript:alert(1)>")
    assert "<b" not in out and "&lt;b onmouseover" in out
    assert "href" not in out


def test_images_are_links_never_fetches() -> None:
    out = render_markdown("![pixel](https://tracker.example/p.png)")
    assert "<img" not in out and "src=" not in out
    assert 'href="https://tracker.example/p.png"' in out


def test_sparkline_draws_the_series() -> None:
    svg = sparkline(pane(1, "m", rate_series=(0.0, 10.0, 20.0, float("nan"))))
    assert svg.count("<rect") == 2 and "peak 20 tok/s" in svg
    assert "no token-rate series" in sparkline(pane(1, "m", rate_series=()))


def test_big_code_block_is_plain_but_escaped() -> None:
    code = "x = '<script>'\n" * 3000
    record = ComparisonRecord(prompt="p", panes=(pane(1, "m", text=f"```python\n{code}```"),))
    page = to_html(record)
    _assert_safe(page)
    assert "x = &#x27;&lt;script&gt;&#x27;" in page or "x = '&lt;script&gt;'" in page


def test_no_key_in_any_html() -> None:
    for record in (sample(), hostile(), cut()):
        assert "anm-sk-" not in export(record, "html")


def test_simulated_answers_say_so_in_the_heading_table_and_a_note() -> None:
    from dataclasses import replace

    record = sample()
    record = replace(record, panes=tuple(replace(p, simulated=True) for p in record.panes))
    page = to_html(record)

    class Text(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.parts: list[str] = []

        def handle_data(self, data: str) -> None:
            self.parts.append(data)

    reader = Text()
    reader.feed(page)
    text = " ".join(reader.parts)
    assert "Simulated: every answer came from the local gateway's simulated models" in text
    assert text.count(f"{record.panes[0].model} (simulated)") >= 1  # the table's row
    assert page.count('<span class="simulated">simulated</span>') == len(record.panes)
    assert "simulated" not in to_html(sample()).split("<body>")[1].lower()


def test_each_pane_shows_its_own_earlier_answers_as_markdown() -> None:
    page = to_html(follow_up())
    _assert_safe(page)
    sections = page.split('<section class="pane ')[1:]
    assert len(sections) == 3
    words = {1: "Alpha", 2: "Beta", 3: "Gamma"}
    for n, section in enumerate(sections, 1):
        text = " ".join(Page(section).text)
        assert "First question?" in text and f"Answer {n} now." in text
        assert words[n] in text
        assert all(words[m] not in text for m in words if m != n), (n, text)
    # Earlier answers are rendered Markdown, their raw HTML shown as text.
    assert "<strong>Alpha</strong> one" in sections[0]
    assert "<em>Beta</em> one" in sections[1]
    assert "Gamma one &lt;script&gt;alert(1)&lt;/script&gt;" in sections[2]
    assert "Second question?" not in " ".join(Page(sections[2]).text)  # it failed there
    assert "**Alpha**" not in page
