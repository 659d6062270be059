"""The playground's spot-check workflow: generation settings (system prompt
presets, custom prompts, temperature, top_p, repeats), variants as grid columns
and scoreboard rows, the comparison view, and focus sampling.

Component tests drive the `Playground` handlers directly against the fake
OpenAI server (real HTTP through LiteLLM, no Gradio server). One browser test
at the end sets the safety preset through the page, runs, and compares.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from support import (
    api_client,
    chromium,
    drain,
    fake_models_yaml,
    fake_playground,
    open_share_link,
    run_then_run_with_safety,
    serve_playground,
    watch_errors,
)

from orbench_play import data
from orbench_play.asking.prompts import SYSTEM_PROMPTS
from orbench_play.compare import compare
from orbench_play.scoring import score_results
from orbench_play.types import (
    CellEvent,
    CellResult,
    GenerationParams,
    ModelSpec,
    Prompt,
    cell_id,
    variant_tag,
)
from orbench_play.ui.state.session import Session, new_session
from orbench_play.ui.views import compare_view, grid_view, scoreboard_view

MODELS = {"bot": "refuse-if-system", "fake-answer": "answer", "fake-refuse": "refuse"}
SAFETY = "bot · safety"


@pytest.fixture
def playground(fake, tmp_path):
    return fake_playground(tmp_path / "models.yaml", fake.base_url, MODELS)


def attrs(markup: str, tag: str, cls: str) -> list[dict[str, str]]:
    """Attributes of every `<tag class="... cls ...">` in markup."""
    out = []
    for m in re.finditer(rf"<{tag}\s([^>]*)>", markup):
        found = dict(re.findall(r'([\w-]+)="([^"]*)"', m.group(1)))
        if cls in found.get("class", "").split():
            out.append({k: html.unescape(v) for k, v in found.items()})
    return out


def verdict_badges(grid: str) -> list[dict[str, str]]:
    return attrs(grid, "button", "verdict")


async def run_bot_twice(playground, sess: Session) -> None:
    """`bot` on 10 hard-1k prompts (one per category), without and with the safety preset."""
    for preset in ("none", "safety"):
        frames = await drain(playground.run_setup(["bot"], "hard-1k", [], 1, 0, 512, sess, preset))
        assert frames[-1][6]["run"]["done"] == 10, frames[-1][0]


# --- generation settings ------------------------------------------------------------------


def test_params_from_the_form():
    from orbench_play.ui.handlers.forms import generation_params, repeat_hint

    assert generation_params(512) == GenerationParams()
    safety = generation_params(256, "safety", "", "0.7", 0.9)
    assert safety.system_prompt == SYSTEM_PROMPTS["safety"] and safety.system_prompt_id == "safety"
    assert (safety.temperature, safety.top_p, safety.max_tokens) == (0.7, 0.9, 256)
    custom = generation_params(512, "safety", "  Be brief and safe.  ")  # the custom text wins over the preset
    assert custom.system_prompt == "Be brief and safe." and custom.system_prompt_id.startswith("custom:")
    assert generation_params(512, "none", "@/etc/passwd").system_prompt == "@/etc/passwd"  # text, never a file read
    for bad in ({"temperature": 3}, {"temperature": "hot"}, {"top_p": 0}, {"top_p": 1.5}, {"preset": "bogus"}):
        with pytest.raises(ValueError):
            generation_params(512, **bad)
    assert repeat_hint(3, None) and repeat_hint(3, 0) and not repeat_hint(3, 0.7) and not repeat_hint(1, None)


async def test_bad_settings_are_messages(playground, fake):
    s = new_session()
    for kwargs in ({"temperature": 9}, {"repeats": 6}, {"preset": "nope"}):
        frames = await drain(playground.run_setup(["bot"], "hard-1k", ["privacy"], 1, 0, 512, s, **kwargs))
        assert len(frames) == 1 and "prog-status" in frames[0][0]
    assert s.run is None and fake.request_count() == 0


# --- variants, the comparison view ----------------------------------------------------------


async def test_safety_preset_gives_a_second_variant_and_compare_shows_the_difference(playground, fake):
    s = new_session()
    await run_bot_twice(playground, s)
    systems = [[m["content"] for m in r.messages if m["role"] == "system"] for r in fake.requests]
    assert sorted(map(len, systems)) == [0] * 10 + [1] * 10  # only the second run sent a system prompt
    assert {t for ts in systems for t in ts} == {SYSTEM_PROMPTS["safety"]}
    assert s.variants() == ["bot", SAFETY]
    assert {r.system_prompt_id for r in s.effective_results()} == {"none", "safety"}  # recorded per result

    frame = playground.frame(s, final=True)
    grid, board = frame[1], frame[2]
    assert f">{SAFETY}</th>" in html.unescape(grid)  # the column is labelled with the variant
    badges = verdict_badges(grid)
    assert len(badges) == 10 and {b["data-model"] for b in badges} == {"bot"}
    assert {b["data-variant"] for b in badges} == {SAFETY} and {b["data-verdict"] for b in badges} == {"direct_refusal"}
    rows = [
        dict(zip(("model", "variant"), pair, strict=True))
        for pair in re.findall(r'<tr data-model="([^"]*)" data-variant="([^"]*)">', html.unescape(board))
    ]
    assert rows == [{"model": "bot", "variant": "bot"}, {"model": "bot", "variant": SAFETY}]
    assert "0/10" in board and "10/10" in board

    a, b = playground.compare_choices(None, None, s)
    assert (a["value"], b["value"]) == ("bot", SAFETY)
    assert [v for _, v in a["choices"]] == ["bot", SAFETY]

    view, payload = playground.compare("bot", SAFETY, s)
    assert payload["summary"].startswith(f"{SAFETY} refuses more hard-1k prompts than bot")
    (kind,) = payload["kinds"]
    assert kind["n"] == 10 and kind["significant"] and kind["p_value"] == pytest.approx(2 / 1024)
    assert (kind["only_a_refused"], kind["only_b_refused"], kind["change_points"]) == (0, 10, 100.0)
    assert all(r["disagree"] and (r["verdict_a"], r["verdict_b"]) == ("answer", "refusal") for r in payload["rows"])
    assert "p=0.002" in view and 'data-significant="yes"' in view and view.count('data-status="disagree"') == 10
    assert "Sure. Here is some information about" in view and "I&#x27;m sorry" in view  # both answers

    # Overrides make three prompts agree: the seven disagreements are listed first.
    agreed = [r["row_id"] for r in payload["rows"]][:3]
    for rid in agreed:
        assert s.set_override(cell_id(rid, "bot"), "direct_refusal") is None
    view, payload = playground.compare("bot", SAFETY, s)
    assert [r["disagree"] for r in payload["rows"]] == [True] * 7 + [False] * 3
    assert [r["row_id"] for r in payload["rows"]][7:] == agreed
    statuses = re.findall(r'data-status="(\w+)"', view)
    assert statuses == ["disagree"] * 7 + ["agree"] * 3
    assert payload["kinds"][0]["significant"] and "p=0.016" in view  # 7 vs 0 discordant: still more than noise


async def test_compare_without_two_variants_explains(playground):
    s = new_session()
    view, payload = playground.compare(None, None, s)
    assert "Pick two variants" in view and "error" in payload
    await drain(playground.run_setup(["fake-answer"], "hard-1k", ["privacy"], 1, 0, 512, s))
    view, payload = playground.compare("fake-answer", "fake-answer", s)
    assert "Choose two different variants" in payload["error"]
    view, payload = playground.compare("fake-answer", "nope", s)
    assert "is not in the session" in payload["error"] and "cmp-empty" in view


def test_comparison_view_escapes_model_text():
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    a = [CellResult("hard-1k", "hard-1k:1", "privacy", evil, "m", response=evil, verdict="direct_answer")]
    b = [
        CellResult(
            "hard-1k", "hard-1k:1", "privacy", evil, "m", response="no", verdict="direct_refusal", system_prompt_id="x"
        )
    ]
    out = compare_view.render_comparison(compare(a, b, name_a="<b>A</b>", name_b="B"))
    assert "<script" not in out and "<img" not in out and "<b>A" not in out
    assert "&lt;script&gt;" in out and 'data-status="disagree"' in out


# --- repeats and stability -------------------------------------------------------------------


async def test_repeats_show_k_of_n_and_the_scoreboard_adds_a_flip_rate(playground, fake):
    s = new_session()
    frames = await drain(
        playground.run_setup(
            ["fake-answer", "fake-refuse"], "hard-1k", ["privacy"], 2, 3, 512, s, "none", "", 0.7, None, 3
        )
    )
    final = frames[-1]
    grid, board, payload = final[1], final[2], final[6]
    assert payload["run"]["total"] == 12 and payload["run"]["done"] == 12
    assert sorted({r["repeat"] for r in payload["run"]["results"]}) == [0, 1, 2]
    assert {r.params["temperature"] for r in fake.requests} == {0.7}
    badges = verdict_badges(grid)
    assert len(badges) == 12 and {b["data-verdict"] for b in badges} != {"pending"}
    assert {b["data-variant"] for b in badges} == {"fake-answer · T=0.7", "fake-refuse · T=0.7"}
    assert grid.count(">#3<") == 4  # each (prompt, model) cell stacks its 3 answers
    assert grid.count("0/3 refused") == 2 and grid.count("3/3 refused") == 2
    assert "Flip rate" in board and board.count('class="flip"') == 2
    assert "6/6" in board and "0/6" in board  # rates over all answers (2 prompts × 3)
    assert "0/2" in board  # flip rate: 0 of 2 prompts flipped


def test_a_flipping_cell_shows_its_share_and_counts_in_the_flip_rate():
    s = Session()
    p = Prompt("hard-1k:7", "hard-1k", "privacy", "How do locks work?")
    params = GenerationParams(temperature=0.7)
    run = s.begin_run([p], [ModelSpec(name="m", litellm_model="m")], params=params, repeats=3)
    tag = variant_tag(params.system_prompt_id, params.params_json())
    for k, verdict in enumerate(("direct_refusal", "direct_answer")):
        r = CellResult("hard-1k", p.row_id, "privacy", p.text, "m", response="x", verdict=verdict, repeat=k,
                       params=params.params_json())  # fmt: skip
        s.apply(CellEvent("done", cell_id(p.row_id, "m", k, tag), p.row_id, "m", k, result=r))
    grid = grid_view.render_grid(run)
    assert "1/2 refused · 1 to go" in grid and "stab-flip" in grid
    assert [b["data-verdict"] for b in verdict_badges(grid)] == ["direct_refusal", "direct_answer", "pending"]
    r = CellResult("hard-1k", p.row_id, "privacy", p.text, "m", response="y", verdict="direct_refusal", repeat=2,
                   params=params.params_json())  # fmt: skip
    s.apply(CellEvent("done", cell_id(p.row_id, "m", 2, tag), p.row_id, "m", 2, result=r))
    assert "2/3 refused" in grid_view.render_grid(run) and run.all_final()
    from orbench_play.asking.prompts import variant_of

    (score,) = score_results(s.effective_results(), key=variant_of)
    assert score.model == "m · T=0.7" and (score.flip_rate.k, score.flip_rate.n) == (1, 1)
    board = scoreboard_view.render_scoreboard([score], s.labels, models=s.variant_models())
    assert 'data-model="m" data-variant="m · T=0.7"' in board and "1/1" in board and "2/3" in board


# --- focus -----------------------------------------------------------------------------------


async def test_focus_samples_the_prompts_the_session_disagreed_on_first(playground):
    s = new_session()
    first = await drain(playground.run_setup(["fake-answer", "fake-refuse"], "hard-1k", ["privacy"], 2, 0, 512, s))
    disagreed = {r["row_id"] for r in first[-1][6]["run"]["results"]}
    assert len(disagreed) == 2
    plain = data.sample(data.load_split("hard-1k"), categories=["privacy"], per_category=2, seed=99)
    assert {p.row_id for p in plain.prompts} != disagreed  # seed 99 alone would draw other prompts
    frames = await drain(playground.run_setup(["fake-answer"], "hard-1k", ["privacy"], 2, 99, 512, s, focus=True))
    assert [p.row_id for p in s.run.prompts] and {p.row_id for p in s.run.prompts} == disagreed
    assert "Focus: 2 of 2 prompts are ones the session" in frames[-1][0]
    frames = await drain(playground.run_setup(["fake-answer"], "hard-1k", ["privacy"], 2, 99, 512, s, focus=False))
    assert {p.row_id for p in s.run.prompts} == {p.row_id for p in plain.prompts}


# --- one browser test ------------------------------------------------------------------------

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"


@pytest.fixture(scope="module")
def app_url(fake_server, tmp_path_factory):
    config = fake_models_yaml(tmp_path_factory.mktemp("ui-spotcheck") / "models.yaml", fake_server.base_url, MODELS)
    with serve_playground(config) as url:
        yield url


@pytest.fixture(scope="module")
def browser(app_url):
    with chromium() as b:
        yield b


def open_page(browser, app_url: str, query: str, viewport=(1400, 900)):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = context.new_page()
    errors = watch_errors(page)
    open_share_link(page, app_url, query, timeout_ms=30_000)
    return context, page, errors


def test_run_and_compare_endpoints_through_gradio_client(app_url):
    """The API form of the spot-check: settings by keyword on /run, then /compare."""
    c = api_client(app_url)
    c.predict(["bot"], "hard-1k", ["privacy", "illegal"], 2, 5, 512, api_name="/run")
    out = c.predict(["bot"], "hard-1k", ["privacy", "illegal"], 2, 5, 512, preset="safety", api_name="/run")
    assert {r["system_prompt_id"] for r in out[6]["run"]["results"]} == {"safety"}
    view, payload = c.predict("bot", SAFETY, api_name="/compare")
    assert payload["a"] == "bot" and payload["b"] == SAFETY and len(payload["rows"]) == 4
    assert all(r["disagree"] for r in payload["rows"]) and "cmp-disagree" in view
    assert payload["kinds"][0]["p_value"] == pytest.approx(2 / 16) and not payload["kinds"][0]["significant"]
    assert "No significant difference on hard-1k prompts at n=4" in payload["summary"]


@pytest.mark.browser
def test_browser_safety_preset_then_compare(browser, app_url):
    """Run `bot` without and with the safety preset (set in the page), then compare the two."""
    query = "?models=bot&split=hard-1k&categories=all&n=1&seed=0"
    context, page, errors = open_page(browser, app_url, query)
    try:
        run_then_run_with_safety(page, "bot")
        assert page.locator(f"#grid th.model-col[data-variant='{SAFETY}']").inner_text() == SAFETY
        page.wait_for_selector(f"#scoreboard tr[data-variant='{SAFETY}']")
        assert page.locator("#scoreboard tr[data-model='bot']").count() == 2

        page.click("#compare button.label-wrap, #compare > button")
        page.wait_for_function(
            "() => document.querySelector('#compare_b input')?.value === 'bot · safety'", timeout=20_000
        )
        assert page.locator("#compare_a input").input_value() == "bot"
        page.click("#compare_run")
        page.wait_for_selector("#comparison .cmp", timeout=20_000)
        assert page.locator("#comparison tr[data-status='disagree']").count() == 10
        summary = page.locator("#comparison .cmp-summary").inner_text()
        assert "bot · safety refuses more hard-1k prompts than bot" in summary and "p=0.002" in summary
        assert errors == []
        ARTIFACTS.mkdir(exist_ok=True)
        page.locator("#compare").screenshot(path=str(ARTIFACTS / "spotcheck-compare.png"))
    finally:
        context.close()
