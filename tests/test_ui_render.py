"""Rendering of cells, grid, progress, scoreboard and plot, without a browser."""

from __future__ import annotations

import html
import math
import re
from html.parser import HTMLParser

from fake_openai import HOSTILE_TEXT

from orbench_play.scoring import score_results
from orbench_play.types import CellEvent, CellResult, ModelSpec, Prompt, Verdict, cell_id
from orbench_play.ui.state.query import MAX_PER_CATEGORY, Setup, parse_query, to_query
from orbench_play.ui.state.session import CellView, Session
from orbench_play.ui.views import grid_view, plot_labels, plot_view, safe_html, scoreboard_view


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
    # Certain verdicts unless said (p_refusal 0 or 1): their corrected rate is the count's, so the
    # plot's geometry is the counts'; tests of the corrected figure give their own p_refusal.
    kw.setdefault("p_refusal", None if error or verdict == "error" else float(verdict != "direct_answer"))
    kw.setdefault("sure", None if kw["p_refusal"] is None else True)
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
    assert " ovr" not in html_text  # nothing to override (its only <details> is the hidden, empty thoughts)
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
    assert "verdicts say 30%" in html_text and "3/10" in html_text  # over-refusal with counts
    assert "verdicts say 100%" in html_text and "4/4" in html_text  # toxic refusal
    assert "corrected" in html_text
    assert "[" in html_text and "–" in html_text  # intervals
    assert "privacy" in html_text and "violence" in html_text and "Mini-score" in html_text


def _row(html_text: str, model: str) -> dict[str, str]:
    """The scoreboard row of `model`: td class → its text (tags stripped)."""
    row = re.search(rf'<tr data-model="{re.escape(model)}"[^>]*>(.*?)</tr>', html_text).group(1)
    cells = re.findall(r'<td class="([^"]*)"[^>]*>(.*?)</td>', row)
    return {
        " ".join(c for c in cls.split() if c != "na"): html.unescape(re.sub(r"<[^>]+>", "", text))
        for cls, text in cells
    }


def test_default_run_scoreboard_shows_all_three_with_intervals():
    """hard-1k + toxic (the default run): over-refusal, toxic refusal and the mini-score, each with an interval."""
    results = [result(f"hard-1k:{i}", "m", "direct_refusal" if i < 2 else "direct_answer") for i in range(10)]
    results += [result(f"toxic:{i}", "m", "direct_refusal" if i < 8 else "direct_answer", split="toxic")
                for i in range(10)]  # fmt: skip
    row = _row(scoreboard_view.render_scoreboard(score_results(results)), "m")
    # certain verdicts (p 0 or 1): the corrected rate and interval are the count's Wilson interval
    assert row["or-hard"] == "verdicts say 20% (2/10) · corrected 20% [6–51]"
    assert row["tox"] == "verdicts say 80% (8/10) · corrected 80% [49–94]"
    assert row["mini"].startswith("verdicts say 80% · corrected 80% [") and "on 80k" not in row["mini"]
    assert row["scored"] == "20" and "or-80k" not in row and "unscored" not in row


def test_80k_gets_its_own_column_and_a_mini_score_on_80k_says_so():
    results = [result(f"hard-1k:{i}", "both", "direct_refusal" if i < 3 else "direct_answer") for i in range(10)]
    results += [result(f"80k:{i}", "both", "direct_answer", split="80k") for i in range(4)]
    results += [result(f"80k:{i}", "broad", "direct_refusal" if i < 1 else "direct_answer", split="80k")
                for i in range(4)]  # fmt: skip
    results += [
        result(f"toxic:{i}", name, "direct_refusal", split="toxic") for i in range(2) for name in ("both", "broad")
    ]
    board = scoreboard_view.render_scoreboard(score_results(results))
    both, broad = _row(board, "both"), _row(board, "broad")
    assert "(3/10)" in both["or-hard"] and "(0/4)" in both["or-80k"]  # never pooled into 3/14
    assert both["mini"].startswith("verdicts say 85%") and "on 80k" not in both["mini"]
    assert broad["or-hard"] == "–" and "(1/4)" in broad["or-80k"]
    assert broad["mini"].startswith("verdicts say 88%") and "on 80k" in broad["mini"]
    assert "Over-refusal <small>80k</small>" in board
    heat_splits = [html.unescape(k) for k in re.findall(r'<td class="kind"[^>]*>([^<]*)</td>', board)]
    assert heat_splits == ["hard-1k", "80k", "toxic", "80k", "toxic"]


def test_custom_prompts_are_shown_as_not_scored():
    """A custom prompt made "Scored 2" sit next to "0/1": it is now counted apart."""
    results = [result("hard-1k:1", "m", "direct_answer"),
               result("custom:ab", "m", "direct_answer", split="custom", category="custom")]  # fmt: skip
    board = scoreboard_view.render_scoreboard(score_results(results))
    row = _row(board, "m")
    assert "(0/1)" in row["or-hard"] and row["scored"] == "1" and row["unscored"] == "1"
    assert "Not scored" in board and "not scored" in board
    assert ">custom<" not in board  # no heat-map row for prompts outside the splits


def test_plot_puts_paper_and_session_models_on_the_axes():
    results = [result(f"hard-1k:{i}", "both", "direct_refusal" if i < 2 else "direct_answer") for i in range(10)]
    results += [result(f"toxic:{i}", "both", "direct_refusal", split="toxic") for i in range(5)]
    results += [result(f"hard-1k:{i}", "benign-only", "direct_answer") for i in range(5)]
    paper = [("Model A", 10.0, 90.0), ("Model B", 50.0, 99.0)]
    tags = parse(plot_view.render_plot(score_results(results), paper))
    assert sum(1 for t, a in tags if t == "circle" and a.get("class") == "paper-pt") == 2
    groups = {a["data-model"]: i for i, (t, a) in enumerate(tags) if t == "g" and a.get("class") == "session-pt"}
    assert set(groups) == {"both", "benign-only"}
    assert sum(1 for t, a in tags if t == "line" and a.get("class") == "ebar") == 2  # x and y interval bars
    assert any(t == "line" and a.get("class") == "only" for t, a in tags)  # benign-only: dashed line


def _rates(model: str, hard: tuple[int, int] | None = None, toxic: tuple[int, int] | None = None,
           broad: tuple[int, int] | None = None) -> list[CellResult]:  # fmt: skip
    """`model`'s answers with (refusals, total) on hard-1k, toxic and 80k."""
    out = []
    for split, kr in (("hard-1k", hard), ("toxic", toxic), ("80k", broad)):
        if kr is not None:
            k, n = kr
            out += [result(f"{split}:{i}", model, "direct_refusal" if i < k else "direct_answer", split=split)
                    for i in range(n)]  # fmt: skip
    return out


def label_boxes(svg: str) -> list[tuple[str, plot_labels.Box]]:
    """Every model label's text and estimated box, from the SVG's own attributes."""
    tags = parse(svg)
    texts = re.findall(r'<text class="pt-label"[^>]*>([^<]*)</text>', svg)
    labels = [a for t, a in tags if t == "text" and a.get("class") == "pt-label"]
    return [
        (
            html.unescape(text),
            plot_labels.box_for(html.unescape(text), float(a["x"]), float(a["y"]), a.get("text-anchor") or "start"),
        )
        for a, text in zip(labels, texts, strict=True)
    ]


def test_plot_labels_stay_inside_the_plot_and_clear_of_each_other():
    """Labels at x=100 ran past the right edge, labels at y=100 over the top, and
    long names across the plot; neighbours were drawn on top of each other."""
    long = "openrouter/some-provider/an-extremely-long-model-name-v2-instruct"
    results = _rates("edge-top-right", (10, 10), (10, 10)) + _rates("edge-bottom-right", (10, 10), (0, 10))
    results += _rates("edge-top-left", (0, 10), (10, 10)) + _rates("edge-bottom-left", (0, 10), (0, 10))
    results += _rates(long, (10, 10), (10, 10)) + _rates("twin-of-top-right", (10, 10), (10, 10))
    results += _rates("benign-only-at-100", hard=(10, 10)) + _rates("toxic-only-at-100", toxic=(10, 10))
    svg = plot_view.render_plot(score_results(results), [("Paper A", 100.0, 100.0)])
    boxes = label_boxes(svg)
    assert len(boxes) == 8
    for text, box in boxes:
        assert box.inside(plot_view.AREA), (text, box)
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1 :]:
            assert not box_a.overlaps(box_b, pad=0), (a, b)
    shown = {text for text, _ in boxes}
    assert long not in shown and plot_labels.short_name(long) in shown and plot_labels.short_name(long).endswith("…")
    assert f"<title>{long}: over-refusal (hard-1k) 100.0%" in svg  # the full name in the tooltip
    assert long in svg.split("</svg>")[1]  # and in the legend


def test_only_hard_1k_goes_on_the_x_axis():
    results = _rates("both", hard=(1, 10), toxic=(9, 10), broad=(9, 10)) + _rates("broad", toxic=(5, 10), broad=(0, 10))
    results += _rates("broad-only", broad=(2, 10))
    tags = parse(plot_view.render_plot(score_results(results)))
    groups = [a["data-model"] for t, a in tags if t == "g" and a.get("class") == "session-pt"]
    assert groups == ["both", "broad"]  # 80k only: listed, not drawn
    point = next(a for t, a in tags if t == "circle" and a.get("r") == "6")
    assert float(point["cx"]) == plot_view._x(10.0)  # hard-1k's 10%, not a pool with 80k's 90%
    svg = plot_view.render_plot(score_results(results))
    legend = html.unescape(svg.split("</svg>")[1])
    assert "broad (toxic only; its 80k over-refusal is not on these axes)" in legend
    assert "broad-only (80k only: not on these axes" in legend
    assert "over-refusal on 80k 90.0%" in html.unescape(svg)  # the tooltip still gives the 80k rate


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
    assert setup.split == ["hard-1k", "toxic"] and setup.categories == ["privacy"]
    assert setup.n == MAX_PER_CATEGORY and setup.seed == 0
    assert len(warnings) == 5
    assert parse_query({"categories": "all"})[0].categories == []


def test_plot_shows_every_model_at_a_shared_spot_names_paper_models_on_focus_and_draws_bands_underneath():
    """Two models that refuse everything sat on one dot; paper names were hover-only;
    one-axis bands were drawn over the paper's points."""
    results = _rates("all-refuse-a", (10, 10), (10, 10)) + _rates("all-refuse-b", (10, 10), (10, 10))
    results += _rates("all-refuse-c", (10, 10), (10, 10)) + _rates("alone", (2, 10), (8, 10))
    results += _rates("benign-1", hard=(5, 10)) + _rates("benign-2", hard=(5, 10))
    svg = plot_view.render_plot(score_results(results), [("Paper A", 50.0, 50.0), ("Paper B", 90.0, 95.0)])
    tags = parse(svg)
    centres = [(a["cx"], a["cy"]) for t, a in tags if t == "circle" and a.get("r") == "6"]
    assert len(centres) == 4 and len(set(centres)) == 4  # three at (100, 100), each drawn apart
    spread = [(float(x), float(y)) for x, y in centres[:3]]
    for x, y in spread:  # …and all close to the true spot
        assert math.dist((x, y), (plot_view._x(100), plot_view._y(100))) <= plot_view.NUDGE + 0.1
    lines = [a["x1"] for t, a in tags if t == "line" and a.get("class") == "only"]
    assert len(lines) == 2 and lines[0] != lines[1]  # two benign-only lines at 50%: side by side
    kinds = [a.get("class") for t, a in tags if a.get("class") in ("band", "paper", "session-pt")]
    assert kinds.index("paper") > max(i for i, k in enumerate(kinds) if k == "band")  # bands first
    assert kinds.index("session-pt") > max(i for i, k in enumerate(kinds) if k == "paper")
    papers = [a for t, a in tags if t == "g" and a.get("class") == "paper"]
    assert len(papers) == 2 and all(a["tabindex"] == "0" and "(paper)" in a["aria-label"] for a in papers)
    assert '<text class="paper-name"' in svg and ">Paper A</text>" in svg
