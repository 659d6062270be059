"""The review queue without a browser: the session's queue (order, decisions as
user verdicts, skips, inclusion probabilities for scoring), the unsure badge's
fields, the panel and the control's words, and the decide handler's outputs."""

from __future__ import annotations

import pytest

from orbench_play.scoring import review_policy, score_results
from orbench_play.types import CellEvent, CellResult, ModelSpec, Prompt, cell_id
from orbench_play.ui.state.session import Session
from orbench_play.ui.views import grid_view, review_view

P = {0: 0.55, 1: 0.45, 2: 0.03, 3: 0.97, 4: 0.5, 5: 0.02}
"""p(refusal) per prompt: 0, 1 and 4 unsure."""


def session() -> Session:
    s = Session()
    ps = [Prompt(f"toxic:{i}", "toxic", "privacy", f"prompt {i}") for i in P]
    s.begin_run(ps, [ModelSpec(name="m", litellm_model="x")])
    s.feed.start(s.run, s.overrides)
    for p in ps:
        i = int(p.row_id.split(":")[1])
        r = CellResult(
            "toxic", p.row_id, "privacy", p.text, "m", response=f"answer {i}",
            verdict="direct_refusal" if P[i] > 0.5 else "direct_answer", verdict_source="classifier",
            p_refusal=P[i], sure=not 0.2 < P[i] < 0.8,
        )  # fmt: skip
        s.apply(CellEvent("done", r.cell_id, p.row_id, "m", result=r))
    return s


def cid(i: int) -> str:
    return cell_id(f"toxic:{i}", "m")


def test_the_queue_walks_the_seeded_priority_order_and_counts_the_unsure():
    s = session()
    frame = s.queue.frame(s.results, s.overrides)
    assert set(frame) == {cid(i) for i in P}
    order = review_policy.queue_order(frame, s.queue.seed)
    assert s.queue.waiting(s.results, s.overrides) == order
    assert s.next_review() == order[0]
    assert s.queue.unsure_left(s.results, s.overrides) == 3
    assert review_view.review_button_label(3, 6) == "Review 3 unsure"
    assert review_view.review_button_label(0, 0) == "Review: nothing to review"


def test_a_decision_is_a_user_verdict_that_moves_the_score_and_a_skip_is_not():
    s = session()
    (before,) = score_results(s.effective_results(), reviews=s.reviews())
    first = s.next_review()
    assert s.review(first, "direct_refusal") is None
    assert s.overrides[first] == "direct_refusal" and first in s.queue.reviewed
    row = next(r for r in s.effective_results() if r.cell_id == first)
    assert (row.verdict_source, row.p_refusal, row.sure) == ("user", 1.0, True)
    reviews = s.reviews()
    assert set(reviews) == {first}
    frame = s.queue.frame(s.results, s.overrides)
    order = review_policy.queue_order(frame, s.queue.seed)
    tau = review_policy.priority(review_policy.uniform(s.queue.seed, order[1]), frame[order[1]])
    assert reviews[first].pi == pytest.approx(min(1.0, frame[first] * tau))
    assert reviews[first].p == pytest.approx(s.results[first].p_refusal)
    (after,) = score_results(s.effective_results(), reviews=reviews)
    assert after.corrected["toxic"].rate != before.corrected["toxic"].rate
    assert after.corrected["toxic"].reviewed == 1
    second = s.next_review()
    assert second != first
    assert s.review(second, "skip") is None
    assert second in s.queue.skipped and second not in s.overrides and s.next_review() not in (first, second)
    # the menu setting a reviewed cell to the classifier's own label keeps a person's verdict
    assert s.set_override(first, s.results[first].verdict) is None and first in s.overrides
    assert s.review("nope", "direct_answer") is not None and s.review(s.next_review(), "maybe") is not None


def test_a_cell_overridden_from_its_menu_leaves_the_queue():
    s = session()
    s.set_override(cid(0), "indirect_refusal")
    assert cid(0) not in s.queue.frame(s.results, s.overrides)
    assert s.review(cid(0), "direct_answer") is not None


def test_the_unsure_badge_says_so_in_words_and_attributes():
    s = session()
    unsure = grid_view.badge(s.run.cells[cid(1)])
    assert 'data-sure="false"' in unsure and "unsure" in unsure and "· unsure</button>" in unsure
    assert "unsure: 55% that it is an answer" in unsure
    sure = grid_view.badge(s.run.cells[cid(2)])
    assert 'data-sure="true"' in sure and "· unsure" not in sure and "sure: 97% that it is an answer" in sure
    overridden = grid_view.badge(s.run.cells[cid(1)], "direct_refusal")
    assert 'data-sure="true"' in overridden and "a person set it" in overridden


def test_the_panel_shows_prompt_answer_and_keys_escaped():
    r = CellResult(
        "toxic", "toxic:9", "privacy", "<b>prompt</b>", "m", response="x" * 800 + "<script>",
        verdict="direct_answer", verdict_source="classifier",
    )  # fmt: skip
    html_text = review_view.render_review(r, label="direct_answer", p_refusal=0.4, sure=False, left=3, done=1)
    assert "&lt;b&gt;prompt&lt;/b&gt;" in html_text and "<script>" not in html_text
    assert "x" * review_view.OPENING_CHARS + "…" in html_text
    for key in ("A", "R", "I", "S", "Esc"):
        assert f"<kbd>{key}</kbd>" in html_text
    assert 'data-cell="toxic:9|m|0"' in html_text and "3 left · 1 reviewed" in html_text
    assert "Nothing left to review" in review_view.render_review(None, done=2)
