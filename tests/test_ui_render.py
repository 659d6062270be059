"""Rendering of cells, grid, progress, scoreboard and plot, without a browser."""

from __future__ import annotations

import html
from html.parser import HTMLParser

from fake_openai import HOSTILE_TEXT

from orbench_play.scoring import score_results
from orbench_play.types import CellEvent, CellResult, ModelSpec, Prompt, Verdict, cell_id
from orbench_play.ui import grid_view, plot_view, safe_html, scoreboard_view
from orbench_play.ui.query import MAX_PER_CATEGORY, Setup, parse_query, to_query
from orbench_play.ui.session import CellView, Session


class Tags(HTMLParser):
    """Collects every element and its attributes, as a browser's parser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def parse(html_text: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html_text)
    return parser.tags


def result(
    row: str, model: str, verdict: str, *, split="hard-1k", category="privacy", response="ok", error="", **kw
) -> CellResult:
    return CellResult(split=split, row_id=row, category=category, prompt="p " + row, model=model,
                      response=response, verdict=verdict, verdict_source="classifier", error=error, **kw)  # fmt: skip


def test_safe_text_makes_hostile_markup_inert():
    out = safe_html.safe_text(HOSTILE_TEXT)
    assert "<" not in out and ">" not in out
    assert "\u202e" not in out and "\u202c" not in out
    assert "⟨U+202E⟩" in out
    assert "${" not in out and "{{" not in out
    assert parse(f"<div>{out}</div>") == [("div", {})]


def test_control_characters_are_shown_not_obeyed():
    out = safe_html.safe_text("a\x00b\x1bc\u2066d\nline\ttab")
    assert "\x00" not in out and "\x1b" not in out and "\u2066" not in out
    assert "␀" in out and "␛" in out and "⟨U+2066⟩" in out
    assert "\n" in out and "\t" in out


def test_hostile_answer_in_a_cell_renders_no_elements_beyond_our_own():
    cell = CellView(cell_id("hard-1k:1", "m"), "hard-1k:1", "m", started=True)
    cell.result = result("hard-1k:1", "m", "direct_answer", response=HOSTILE_TEXT)
    html_text = grid_view.render_cell(cell)
    tags = {tag for tag, _ in parse(html_text)}
    assert tags <= {"td", "div", "details", "summary", "span", "button"}
    for _, attrs in parse(html_text):
        assert not any(name.startswith("on") for name in attrs)
        assert not any("javascript:" in (v or "") for v in attrs.values())


def test_hostile_model_name_and_prompt_are_escaped_in_the_grid():
    session = Session()
    name = '"><img src=x onerror=alert(1)>'
    prompt = Prompt("hard-1k:3", "hard-1k", "privacy", "<script>alert(1)</script>")
    session.begin_run([prompt], [ModelSpec(name=name, litellm_model="x", label=name)])
    tags = parse(grid_view.render_grid(session.run, {}))
    assert not any(tag in ("img", "script") for tag, _ in tags)
    verdicts = [a for t, a in tags if "verdict" in (a.get("class") or "")]
    assert verdicts[0]["data-model"] == name  # the attribute round-trips exactly


def test_badge_is_pending_until_final_then_shows_the_verdict():
    cell = CellView(cell_id("hard-1k:7", "gpt"), "hard-1k:7", "gpt")
    attrs = parse(grid_view.badge(cell))[0][1]
    assert attrs["data-verdict"] == "pending"
    assert attrs["data-model"] == "gpt" and attrs["data-row"] == "hard-1k:7"
    cell.started, cell.text = True, "I'm sorry"
    cell.provisional = Verdict("direct_refusal", "classifier", final=False)
    attrs = parse(grid_view.badge(cell))[0][1]
    assert attrs["data-verdict"] == "pending" and attrs["data-provisional"] == "direct_refusal"
    cell.result = result("hard-1k:7", "gpt", "direct_refusal")
    attrs = parse(grid_view.badge(cell))[0][1]
    assert attrs["data-verdict"] == "direct_refusal" and attrs["data-source"] == "classifier"


def test_override_shows_user_source_and_the_new_label():
    cell = CellView(cell_id("hard-1k:7", "gpt"), "hard-1k:7", "gpt", started=True)
    cell.result = result("hard-1k:7", "gpt", "direct_refusal")
    html_text = grid_view.render_cell(cell, override="direct_answer")
    badge = next(a for _, a in parse(html_text) if "verdict" in (a.get("class") or "").split())
    assert badge["data-verdict"] == "direct_answer" and badge["data-source"] == "user"
    assert "ovr" in badge["class"].split()  # a final badge opens the verdict menu when clicked (live_grid.js)
    assert ">set by you<" in html_text
    cell_td = parse(html_text)[0][1]
    assert cell_td["data-cell"] == cell.cell_id  # what the menu's choices send back


def test_error_stopped_and_retry_cells():
    failed = CellView("a", "hard-1k:1", "m", started=True)
    failed.result = result(
        "hard-1k:1", "m", "error", error="Authentication failed (401): check the API key.", response=""
    )
    html_text = grid_view.render_cell(failed)
    assert 'data-verdict="error"' in html_text and "Authentication failed (401)" in html_text
    assert "<details" not in html_text  # nothing to override
    stopped = CellView("b", "hard-1k:1", "m2", started=True, text="partial", stopped=True)
    html_text = grid_view.render_cell(stopped)
    assert 'data-verdict="error"' in html_text and "Stopped." in html_text and "partial" in html_text
    waiting = CellView(
        "c", "hard-1k:1", "m3", started=True, message="Rate limited by the provider (429). Retrying in 1.0 s"
    )
    html_text = grid_view.render_cell(waiting)
    assert 'data-verdict="pending"' in html_text and "Retrying in 1.0 s" in html_text


def test_cell_meta_shows_latency_ttft_tokens_cost_and_cached():
    cell = CellView("a", "hard-1k:1", "m", started=True)
    cell.result = result(
        "hard-1k:1",
        "m",
        "direct_answer",
        latency_s=1.5,
        ttft_s=0.25,
        completion_tokens=42,
        cost_usd=0.0012,
        cached=True,
    )
    html_text = html.unescape(grid_view.render_cell(cell))
    for piece in ("1.50 s", "250 ms", "42 tok", "$0.0012", "cached"):
        assert piece in html_text


def test_long_answers_are_cut_in_the_grid():
    cell = CellView("a", "hard-1k:1", "m", started=True)
    cell.result = result("hard-1k:1", "m", "direct_answer", response="x" * (safe_html.MAX_SHOWN_CHARS + 500))
    assert "+500 characters in the export" in grid_view.render_cell(cell)


def test_grid_has_a_row_per_prompt_and_a_column_per_model():
    session = Session()
    prompts = [Prompt(f"hard-1k:{i}", "hard-1k", "privacy", f"prompt {i}") for i in range(4)]
    models = [ModelSpec(name=f"m{j}", litellm_model="x", label=f"Model {j}") for j in range(3)]
    session.begin_run(prompts, models)
    tags = parse(grid_view.render_grid(session.run, {}))
    assert sum(1 for t, a in tags if t == "tr" and a.get("data-row")) == 4
    badges = [a for t, a in tags if "verdict" in (a.get("class") or "").split()]
    assert len(badges) == 12 and {b["data-verdict"] for b in badges} == {"pending"}
    assert [a["data-model"] for t, a in tags if t == "th" and a.get("data-model")] == ["m0", "m1", "m2"]


def test_progress_counts_done_over_total_and_shows_status():
    session = Session()
    p = Prompt("hard-1k:1", "hard-1k", "privacy", "x")
    session.begin_run([p], [ModelSpec(name="a", litellm_model="a"), ModelSpec(name="b", litellm_model="b")])
    session.apply(CellEvent("status", "", "", "a", message="Starting the embedded model…"))
    session.apply(
        CellEvent("done", cell_id(p.row_id, "a"), p.row_id, "a", result=result(p.row_id, "a", "direct_answer"))
    )
    out = grid_view.render_progress(session.run)
    assert 'data-done="1"' in out and 'data-total="2"' in out and "Starting the embedded model" in out


def test_scoreboard_shows_rates_intervals_counts_and_categories():
    results = [
        result(f"hard-1k:{i}", "m", "direct_refusal" if i < 3 else "direct_answer", category="privacy")
        for i in range(10)
    ]
    results += [result(f"toxic:{i}", "m", "direct_refusal", split="toxic", category="violence") for i in range(4)]
    html_text = scoreboard_view.render_scoreboard(score_results(results))
    assert "30.0%" in html_text and "3/10" in html_text  # over-refusal with counts
    assert "100.0%" in html_text and "4/4" in html_text  # toxic refusal
    assert "[" in html_text and "–" in html_text  # intervals
    assert "privacy" in html_text and "violence" in html_text and "Mini-score" in html_text


def test_plot_puts_paper_and_session_models_on_the_axes():
    results = [result(f"hard-1k:{i}", "both", "direct_refusal" if i < 2 else "direct_answer") for i in range(10)]
    results += [result(f"toxic:{i}", "both", "direct_refusal", split="toxic") for i in range(5)]
    results += [result(f"hard-1k:{i}", "benign-only", "direct_answer") for i in range(5)]
    paper = [("Model A", 10.0, 90.0), ("Model B", 50.0, 99.0)]
    tags = parse(plot_view.render_plot(score_results(results), paper))
    assert sum(1 for t, a in tags if t == "circle" and a.get("class") == "paper-pt") == 2
    groups = {a["data-model"]: i for i, (t, a) in enumerate(tags) if t == "g"}
    assert set(groups) == {"both", "benign-only"}
    assert sum(1 for t, a in tags if t == "line" and a.get("class") == "ebar") == 2  # x and y interval bars
    assert any(t == "line" and a.get("class") == "only" for t, a in tags)  # benign-only: dashed line


def test_query_round_trip_and_defaults():
    query = to_query(["fake-answer", "groq/llama-3.1-8b-instant"], "toxic", ["privacy", "illegal"], 2, 7)
    assert query == "?models=fake-answer,groq/llama-3.1-8b-instant&split=toxic&categories=privacy,illegal&n=2&seed=7"
    from urllib.parse import parse_qsl

    setup, warnings = parse_query(dict(parse_qsl(query[1:])))
    assert warnings == []
    assert setup == Setup(["fake-answer", "groq/llama-3.1-8b-instant"], "toxic", ["privacy", "illegal"], 2, 7)
    assert parse_query({})[0] == Setup()


def test_query_with_bad_values_never_raises():
    setup, warnings = parse_query(
        {"models": "a,b,c,d,e,f,g", "split": "nope", "categories": "privacy,bogus", "n": "500", "seed": "x"}
    )
    assert setup.models == ["a", "b", "c", "d", "e", "f"]
    assert setup.split == "hard-1k" and setup.categories == ["privacy"]
    assert setup.n == MAX_PER_CATEGORY and setup.seed == 0
    assert len(warnings) == 5
    assert parse_query({"categories": "all"})[0].categories == []
