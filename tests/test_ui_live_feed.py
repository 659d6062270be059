"""The live grid's protocol without a browser: what a frame sends the page
(`live_feed`, `frames`), and the issue-11 grid items (retries, a stopped run,
the status line, the verdict source in words)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from fake_openai import HOSTILE_TEXT, long_answer_text

from orbench_play.models import Catalog
from orbench_play.types import CellEvent, CellResult, ModelSpec, Prompt, Verdict, cell_id
from orbench_play.ui.handlers.frames import Frame
from orbench_play.ui.state.live_feed import utf16_len
from orbench_play.ui.state.session import Session
from orbench_play.ui.views import grid_view, safe_html


def prompts(n: int) -> list[Prompt]:
    return [
        Prompt(f"hard-1k:{i}", "hard-1k", "privacy", f"How can I see what data site {i} keeps on me?") for i in range(n)
    ]


def specs(n: int) -> list[ModelSpec]:
    return [ModelSpec(name=f"m{j}", litellm_model="x") for j in range(n)]


def delta(p: Prompt, model: str, text: str) -> CellEvent:
    return CellEvent("delta", cell_id(p.row_id, model), p.row_id, model, text=text)


def done(p: Prompt, model: str, response: str, **kw) -> CellEvent:
    r = CellResult("hard-1k", p.row_id, "privacy", p.text, model, response=response, verdict="direct_answer",
                   verdict_source="classifier", latency_s=1.5, ttft_s=0.1, completion_tokens=40, **kw)  # fmt: skip
    return CellEvent("error" if r.error else "done", r.cell_id, p.row_id, model, result=r)


def started(sess: Session, n_prompts: int = 2, n_models: int = 2) -> tuple[list[Prompt], list[ModelSpec]]:
    ps, ms = prompts(n_prompts), specs(n_models)
    sess.begin_run(ps, ms)
    sess.feed.start(sess.run, sess.overrides)
    return ps, ms


def batch(sess: Session) -> dict | None:
    raw = sess.feed.batch(sess.run, sess.overrides)
    return None if raw is None else json.loads(raw)


def test_a_batch_carries_only_the_cells_that_changed_with_running_offsets():
    s = Session()
    ps, _ = started(s, 3, 3)
    s.apply(delta(ps[1], "m2", "Hello"))
    first = batch(s)
    i = s.run.cells[cell_id(ps[1].row_id, "m2")].index
    assert [c[0] for c in first["c"]] == [i] and first["c"][0][1:] == [0, "Hello"]
    assert [u[0] for u in first["u"]] == [i] and first["u"][0][1]["b"] == "streaming"
    assert batch(s) is None  # nothing changed: nothing sent
    s.apply(delta(ps[1], "m2", " world"))
    second = batch(s)
    assert second["q"] == first["q"] + 1 and second["c"] == [[i, 5, " world"]] and "u" not in second


def test_text_is_neutralised_markup_escaped_and_offsets_count_utf16_units():
    s = Session()
    ps, _ = started(s, 1, 1)
    s.apply(delta(ps[0], "m0", "😀 ok "))
    s.apply(delta(ps[0], "m0", HOSTILE_TEXT))
    raw = s.feed.batch(s.run, s.overrides)
    assert "<" not in raw  # nothing in the payload even looks like markup
    (entry,) = json.loads(raw)["c"]
    assert entry[2] == safe_html.neutralise("😀 ok " + HOSTILE_TEXT) and "\u202e" not in entry[2]
    s.apply(delta(ps[0], "m0", "!"))
    (entry,) = batch(s)["c"]
    assert entry[1] == utf16_len(safe_html.neutralise("😀 ok " + HOSTILE_TEXT))
    assert utf16_len("😀") == 2  # the browser's string length


def test_long_answers_stop_at_the_cap_and_say_how_much_more_the_export_has():
    s = Session()
    ps, _ = started(s, 1, 1)
    s.apply(delta(ps[0], "m0", "x" * (safe_html.MAX_SHOWN_CHARS - 10)))
    batch(s)
    s.apply(delta(ps[0], "m0", "y" * 30))
    b = batch(s)
    assert b["c"][0][2] == "y" * 10 and b["u"][0][1]["x"] == 20
    s.apply(delta(ps[0], "m0", "z" * 5))
    b = batch(s)
    assert "c" not in b and b["u"][0][1] == {"x": 25}
    snap = json.loads(s.feed.snapshot(s.run, s.overrides))  # the skeleton has no text: the note comes with it
    assert len(snap["c"][0][2]) == safe_html.MAX_SHOWN_CHARS and snap["u"][0][1] == {"x": 25}


def test_a_final_answer_that_is_not_the_stream_extended_resends_only_where_they_differ():
    s = Session()
    ps, _ = started(s, 1, 1)
    s.apply(delta(ps[0], "m0", "Hel\ufffdlo there"))
    batch(s)
    s.apply(done(ps[0], "m0", "Hello there, repaired."))
    (entry,) = batch(s)["c"]
    assert entry == [0, 3, "lo there, repaired.", 1]  # cut at 3, then the rest


def test_a_quiet_run_still_says_it_is_alive_and_the_last_batch_says_it_ended():
    s = Session()
    ps, _ = started(s, 1, 1)
    assert batch(s) is None
    beat = json.loads(s.feed.batch(s.run, s.overrides, heartbeat=True))
    assert set(beat) == {"r", "q"}
    s.apply(done(ps[0], "m0", "Sure."))
    s.finish_run()
    last = batch(s)
    assert last["end"] == 1 and last["q"] == beat["q"] + 1
    assert batch(s) is None  # said once


def test_a_snapshot_is_the_skeleton_without_text_plus_every_text_and_continues_the_sequence():
    s = Session()
    ps, _ = started(s, 2, 2)
    s.apply(delta(ps[0], "m0", "<b>bold</b> text-one"))
    s.apply(done(ps[1], "m1", "text-two"))
    last = s.feed.seq
    snap = json.loads(s.feed.snapshot(s.run, s.overrides))
    assert snap["snap"] == 1 and snap["q"] == last + 1 and snap["r"] == s.run.number
    assert "text-" not in snap["html"] and snap["html"].count('class="verdict') == 4
    assert sorted(c[2] for c in snap["c"]) == ["<b>bold</b> text-one", "text-two"]
    assert batch(s) is None  # the snapshot was everything


def test_a_whole_run_sends_its_answers_about_once_and_never_the_grid_again():
    """6 models x 20 prompts x 300 words, 40 deltas per answer, a frame every 2 deltas."""
    s = Session()
    ps, ms = prompts(20), specs(6)
    s.begin_run(ps, ms)
    skeleton, _ = s.feed.start(s.run, s.overrides)
    answers = {p.row_id: long_answer_text(p.text) for p in ps}
    sent = []
    for step in range(40):
        for p in ps:
            words = answers[p.row_id].split(" ")
            piece = " ".join(words[step * 8 : (step + 1) * 8])
            if not piece:
                continue
            for m in ms:
                s.apply(delta(p, m.name, (" " if step else "") + piece))
                if step % 10 == 0:
                    v = Verdict("direct_answer", "classifier", final=False)
                    s.apply(CellEvent("verdict", cell_id(p.row_id, m.name), p.row_id, m.name, verdict=v))
        if step % 2:
            sent.append(s.feed.batch(s.run, s.overrides))
    for p in ps:
        for m in ms:
            s.apply(done(p, m.name, answers[p.row_id]))
    sent.append(s.feed.batch(s.run, s.overrides))
    sent = [b for b in sent if b is not None]
    text_bytes = sum(len(a.encode()) for a in answers.values()) * len(ms)
    feed_bytes = sum(len(b.encode()) for b in sent)
    assert feed_bytes < 1.3 * text_bytes, (feed_bytes, text_bytes)
    assert len(skeleton.encode()) < 0.3 * text_bytes and not any("<table" in b or "data-i" in b for b in sent)
    shown: dict[int, str] = {}
    for b in map(json.loads, sent):
        for i, offset, text, *_ in b.get("c", []):
            assert offset == len(shown.get(i, ""))
            shown[i] = shown.get(i, "") + text
    assert [shown[s.run.cells[cid].index] for cid in s.run.order] == [
        answers[s.run.cells[cid].row_id] for cid in s.run.order
    ]


# --- frames: what leaves for the page and for API callers -----------------------------


@pytest.fixture
def pg():
    from orbench_play.ui.handlers.playground import Playground

    return Playground(Catalog())


def test_the_page_gets_the_skeleton_once_then_batches_and_the_api_gets_the_grid_only_at_the_end(pg):
    s = Session()
    ps, ms = prompts(2), specs(2)
    s.begin_run(ps, ms)
    first = Frame(pg, s, start=True).page()
    assert (
        first[1].startswith('<div class="grid-wrap"')
        and '<table class="grid"' in first[1]
        and json.loads(first[2])["reset"] == 1
    )
    s.apply(delta(ps[0], "m0", "Hi"))
    page = Frame(pg, s).page()
    assert page[1] == {"__type__": "update"} and json.loads(page[2])["c"] == [[0, 0, "Hi"]]
    api = Frame(pg, s).api()
    assert len(api) == 9 and all(x == {"__type__": "update"} for x in api[1:8])  # progress only while running
    for p in ps:
        for m in ms:
            s.apply(done(p, m.name, "An answer."))
    s.finish_run()
    final = Frame(pg, s, final=True)
    assert final[1].count('class="verdict') == 4 and "An answer." in final[1]
    assert final[6]["run"]["done"] == 4 and final[4].endswith(".csv")


def test_an_api_stream_gets_the_progress_line_only_when_it_changed_and_at_most_twice_a_second(pg, monkeypatch):
    """24 API callers at once each parsed ten progress messages a second; now
    a caller hears while streaming only what changed, paced like the page."""
    from orbench_play.ui.handlers import frames
    from orbench_play.ui.state import live_feed

    clock = [100.0]
    monkeypatch.setattr(frames.time, "monotonic", lambda: clock[0])
    s = Session()
    ps, ms = prompts(2), specs(2)
    s.begin_run(ps, ms)
    assert Frame(pg, s, start=True).api_update() is not None
    first = Frame(pg, s).api_update()
    assert first is not None and first[0].startswith('<div class="progress-box"')
    assert Frame(pg, s).api_update() is None  # nothing new
    s.apply(done(ps[0], "m0", "An answer."))
    clock[0] += live_feed.PROGRESS_EVERY_S / 2
    assert Frame(pg, s).api_update() is None  # changed, but too soon
    clock[0] += live_feed.PROGRESS_EVERY_S
    assert Frame(pg, s).api_update() is not None
    s.finish_run()
    final = Frame(pg, s, final=True).api_update()
    assert final is not None and len(final[6]["run"]["results"]) == 1  # the end is never held back


def test_a_run_lets_every_model_use_its_own_limit_at_once():
    from orbench_play.ui.handlers.playground import MAX_RUN_CONCURRENCY, run_concurrency

    six = [ModelSpec(name=f"m{j}", litellm_model="x", max_concurrency=20) for j in range(6)]
    assert run_concurrency(six) == 120  # was 48: 6 x 20 prompts streamed in three waves
    assert run_concurrency(specs(1)) == 16
    assert run_concurrency(six * 10) == MAX_RUN_CONCURRENCY


# --- issue 11: the grid's rough edges ---------------------------------------------------


def test_cells_name_the_verdict_source_in_words_not_as_a_raw_label():
    s = Session()
    ps, _ = started(s, 1, 1)
    s.apply(done(ps[0], "m0", "Sure, here is how."))
    cell = s.run.cells[cell_id(ps[0].row_id, "m0")]
    html_text = grid_view.render_cell(cell)
    assert "verdict_source=" not in html_text
    assert 'data-source="classifier"' in html_text and ">classifier<" in html_text
    assert ">set by you<" in grid_view.render_cell(cell, override="direct_refusal")
    assert safe_html.source_text("llm:gpt-4o") == "judge: gpt-4o"


def test_an_empty_answer_and_a_filtered_one_look_different():
    """Both are provider refusals; the cell said "provider signal" for both."""
    s = Session()
    ps, _ = started(s, 2, 1)
    for p, text, finish in ((ps[0], "", "stop"), (ps[1], "Here is the", "content_filter")):
        r = CellResult("hard-1k", p.row_id, "privacy", p.text, "m0", response=text, verdict="direct_refusal",
                       verdict_source="provider", finish_reason=finish)  # fmt: skip
        s.apply(CellEvent("done", r.cell_id, p.row_id, "m0", result=r))
    empty, filtered = (grid_view.render_cell(s.run.cells[cell_id(p.row_id, "m0")]) for p in ps)
    assert ">empty answer<" in empty and ">content filter<" in filtered
    assert 'data-source="provider"' in empty and 'data-source="provider"' in filtered


def test_a_retried_cell_says_how_often_and_how_long_it_waited():
    s = Session()
    ps, _ = started(s, 1, 1)
    cid = cell_id(ps[0].row_id, "m0")
    message = "Rate limited by the provider (429). Retrying in 1.5 s (attempt 2 of 4)."
    s.apply(CellEvent("retry", cid, ps[0].row_id, "m0", message=message))
    assert "Retrying in 1.5 s" in grid_view.render_cell(s.run.cells[cid])
    s.apply(delta(ps[0], "m0", "Sure."))
    s.apply(done(ps[0], "m0", "Sure."))
    html_text = grid_view.render_cell(s.run.cells[cid])
    assert "retried 1× (waited 1.50 s)" in html_text and "latency 1.50 s" in html_text

    @dataclass
    class Counted(CellResult):  # what the engine adds: its own count and wait
        attempts: int = 3
        retry_wait_s: float = 4.0

    cell = s.run.cells[cid]
    cell.result = Counted("hard-1k", ps[0].row_id, "privacy", "p", "m0", response="Sure.", verdict="direct_answer")
    assert "retried 2× (waited 4.00 s)" in grid_view.render_cell(cell)


def test_a_stopped_run_says_how_many_finished_and_how_many_were_stopped():
    s = Session()
    ps, _ = started(s, 1, 3)
    s.apply(done(ps[0], "m0", "Sure."))
    s.apply(delta(ps[0], "m1", "Partial"))
    s.finish_run(stopped=True)
    out = grid_view.render_progress(s.run)
    assert "stopped: 1 of 3 cells finished · 2 stopped" in out
    assert '<progress max="3" value="1">' in out and 'data-state="stopped"' in out
    assert "3/3" not in out


def test_the_status_line_shows_the_latest_status_until_its_model_answers():
    s = Session()
    ps, _ = started(s, 1, 2)
    s.apply(CellEvent("status", "", "", "m0", message="Starting the embedded model…"))
    assert "Starting the embedded model" in grid_view.render_progress(s.run)
    s.apply(CellEvent("status", "", "", "m0", message="The embedded model is up (3.1 s)."))
    out = grid_view.render_progress(s.run)
    assert "is up (3.1 s)" in out and "Starting" not in out
    s.apply(delta(ps[0], "m1", "other model"))
    assert "is up (3.1 s)" in grid_view.render_progress(s.run)
    s.apply(delta(ps[0], "m0", "It answers"))
    assert "prog-status" not in grid_view.render_progress(s.run)
