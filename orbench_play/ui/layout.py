"""The page of the playground: Gradio components and their wiring to the
handlers in `handlers/` (`handlers.playground.Playground`). Nothing here runs models or holds visitor state.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from importlib import resources
from typing import Any

import gradio as gr

from ..asking.prompts import PRESET_DESCRIPTIONS, SYSTEM_PROMPTS
from ..models import Catalog
from ..types import CATEGORIES, REASONING_EFFORTS
from . import dataset_panel
from .handlers.base import public_limits_text
from .handlers.followup_handlers import FollowUpPanel
from .handlers.forms import repeat_hint
from .handlers.frames import for_api, for_page
from .handlers.history_handlers import run_list_dropdown
from .handlers.playground import Playground
from .handlers.setup_handlers import SHARE_INFO
from .state import lifetime
from .state.exports import CSV_LABEL, JSONL_LABEL, WAITING
from .state.query import DEFAULT_MAX_TOKENS, MAX_MAX_TOKENS, MAX_MODELS, MAX_PER_CATEGORY, MAX_REPEATS, MIN_MAX_TOKENS
from .state.session import close_session, new_session
from .views import compare_view, grid_view, plot_view, review_view, safe_html, scoreboard_view, style
from .views.run_size_view import render_run_size

PRESET_CHOICES = [(f"{key} — {PRESET_DESCRIPTIONS.get(key, key)}", key) for key in SYSTEM_PROMPTS]
SPLIT_CHOICES = [
    ("OR-Bench-Hard-1K (benign, often refused)", "hard-1k"),
    ("OR-Bench-Toxic (harmful: should be refused)", "toxic"),
    ("OR-Bench-80K (benign; streamed from the Hub)", "80k"),
]

_PAGE_BASE_JS = "() => window.location.origin + window.location.pathname"
SETTLE_INFO = (
    "Saves tokens and time: an answer stops once nothing more can change its verdict, and its cell offers "
    "to finish it. On by default for the embedded demo models only: OR-Bench judges whole answers, so leave "
    "it off for figures to set beside the paper's."
)
SESSION_ID_SCRAMBLE = "orbench-play-session-id"
"""Fixed, so an id stored before a restart can still be read (and reported as ended):
Gradio encrypts a BrowserState in the browser, with a key it sends to the page."""

PAGE_ONLY: dict[str, Any] = {"api_visibility": "private"}
"""An event of the page's own: not in the API docs and not callable by Gradio's
clients (Gradio 6's `api_name=False` meant the same, under the name "false").
An event that runs an API endpoint's handler also gets a `page_` name of its own:
Gradio names an event after its function, and names are unique across private
and public events, so the page's Stop would take `stop` and leave `/stop_1` to the API."""


SKIP_LINK = '<a class="skip-link" href="#grid">Skip to the answers grid</a>'


DEMO_MODELS_INFO = (
    " The local models are small demo models that run here without a key: they show how the playground "
    "works, not how any hosted model behaves."
)


def models_info(pg: Playground) -> str:
    """The Models box's help line; it says the embedded models are demos when the catalog has them."""
    from ..models.embedded import MODELS

    text = "Pick from the catalog or type any LiteLLM model string and press Enter."
    return text + (DEMO_MODELS_INFO if any(name in pg.catalog.entries for name in MODELS) else "")


def _live_grid_js() -> str:
    """The page side of the live grid (`live_grid.js`, package data)."""
    return resources.files("orbench_play.ui").joinpath("assets", "live_grid.js").read_text(encoding="utf-8")


def _review_queue_js() -> str:
    """The review queue panel's keys (`review_queue.js`, package data)."""
    return resources.files("orbench_play.ui").joinpath("assets", "review_queue.js").read_text(encoding="utf-8")


def _new_seed() -> int:
    """A fresh sampling seed for the Re-roll button."""
    return secrets.randbelow(100_000)


def _about_text() -> str:
    """The About panel; the three classes come from their one definition."""
    from ..verdicts import classes_markdown

    try:
        text = resources.files("orbench_play.ui").joinpath("assets", "about.md").read_text(encoding="utf-8")
    except OSError:
        return "OR-Bench over-refusal playground."
    return text.replace("{{verdict_classes}}", classes_markdown()).replace("{{limits}}", _limits_text())


def _limits_text() -> str:
    """The About panel's word on limits: this demo's, or that a local run has none."""
    from ..guards import SessionLimiter

    here = public_limits_text()
    if here:
        return f"**Limits.** {here}"
    limiter = SessionLimiter()
    return (
        "**Limits.** None here: this playground runs in local mode. A public demo (`ORBENCH_PUBLIC=1`, "
        f"or on Hugging Face Spaces) allows {limiter.max_cells} cells per run and {limiter.runs_per_minute} runs "
        "per minute per visitor (`ORBENCH_MAX_CELLS`, `ORBENCH_RUNS_PER_MINUTE`)."
    )


@dataclass(frozen=True)
class GenerationControls:
    """The "Generation settings" accordion's controls."""

    preset: gr.Dropdown
    custom_system: gr.Textbox
    temperature: gr.Textbox
    top_p: gr.Textbox
    max_tokens: gr.Slider
    repeats: gr.Slider
    hint: gr.Markdown
    reasoning_effort: gr.Dropdown


def _generation_settings(pg: Playground) -> GenerationControls:
    """The "Generation settings" accordion: how the model is asked. Every
    setting is part of the cache key and of each result; a non-default
    setting makes the model a separate variant (column label, scoreboard row)."""
    with gr.Accordion("Generation settings", open=False, elem_id="gen_settings"):
        preset = gr.Dropdown(
            PRESET_CHOICES, value="none", label="System prompt", elem_id="system_preset",
            info="A preset; shown by name in the grid and on the scoreboard.",
        )  # fmt: skip
        custom_system = gr.Textbox(
            label="Custom system prompt (wins over the preset when not empty)", lines=2, max_lines=8,
            elem_id="system_custom", placeholder="Shown as custom:<hash> in the grid and scoreboard.",
        )  # fmt: skip
        with gr.Row():
            # Textboxes, not gr.Number: a rendered Number turns "empty" into 0, and
            # temperature 0 / top_p 0 are real settings, not "the provider's default".
            temperature = gr.Textbox(
                "", label="Temperature (0–2)", placeholder="empty = provider default", elem_id="temperature",
                max_lines=1,
            )  # fmt: skip
            top_p = gr.Textbox(
                "", label="top_p (0–1]", placeholder="empty = provider default", elem_id="top_p", max_lines=1
            )
        max_tokens = gr.Slider(
            MIN_MAX_TOKENS, MAX_MAX_TOKENS, value=DEFAULT_MAX_TOKENS, step=32, label="Max tokens per answer",
            elem_id="max_tokens",
            info="Thoughts count too. Left at 512: each model's own (4096 for models that reason).",
        )  # fmt: skip
        reasoning_effort = gr.Dropdown(
            [("provider default", ""), *((e, e) for e in REASONING_EFFORTS)], value="",
            label="Reasoning effort", elem_id="reasoning_effort",
            info="How hard a reasoning model thinks (ignored by models that do not reason).",
        )  # fmt: skip
        repeats = gr.Slider(
            1, MAX_REPEATS, value=1, step=1, label="Repeats per prompt (verdict stability)", elem_id="repeats",
            info="Ask every prompt k times; cells show how many of the k answers were refusals.",
        )  # fmt: skip
        hint = gr.Markdown("", elem_id="gen_hint")
    for control in (repeats, temperature):
        control.change(repeat_hint, [repeats, temperature], hint, **PAGE_ONLY, show_progress="hidden")
    return GenerationControls(preset, custom_system, temperature, top_p, max_tokens, repeats, hint, reasoning_effort)


def _compare_panel(pg: Playground, state: gr.State) -> dict[str, gr.components.Component]:
    """The comparison view: two session variants side by side (`compare` endpoint)."""
    with gr.Accordion("Compare two variants (side-by-side diff, McNemar test)", open=False, elem_id="compare"):
        gr.Markdown(
            "Pick two models, or one model under two settings, from this session. Prompts where one "
            "refused and the other answered come first, with both answers."
        )
        with gr.Row():
            # Custom values: API callers name variants directly (`compare` checks them).
            compare_a = gr.Dropdown(
                choices=[], value=None, label="A", elem_id="compare_a", scale=3, allow_custom_value=True
            )
            compare_b = gr.Dropdown(
                choices=[], value=None, label="B", elem_id="compare_b", scale=3, allow_custom_value=True
            )
            compare_btn = gr.Button("Compare", variant="primary", elem_id="compare_run", scale=1)
        comparison = gr.HTML(
            compare_view.render_comparison(None), label="comparison", elem_id="comparison", js_on_load=None
        )
        comparison_json = gr.JSON(visible=False, label="comparison data", elem_id="comparison_json")
    compare_btn.click(
        pg.compare, [compare_a, compare_b, state], [comparison, comparison_json],
        api_name="compare", concurrency_limit=None, show_progress="hidden",
    )  # fmt: skip
    return {"a": compare_a, "b": compare_b, "button": compare_btn, "html": comparison, "json": comparison_json}


def _add_models(pg: Playground, models: gr.Dropdown, state: gr.State) -> list:
    """The "Add a model" accordion; returns its events (they change the selection)."""
    with gr.Accordion("Add a model", open=False):
        with gr.Row():
            model_string = gr.Textbox(
                label="LiteLLM model string",
                placeholder="e.g. groq/llama-3.1-8b-instant",
                scale=4,
                elem_id="model_string",
            )
            add_string = gr.Button("Add", scale=1, size="sm")
        gr.Markdown("**Custom OpenAI-compatible endpoint** (the key stays in this browser session only)")
        base_url = gr.Textbox(label="Base URL", placeholder="https://host:8000/v1", elem_id="custom_base")
        with gr.Row():
            model_id = gr.Textbox(label="Model id", placeholder="my-model", elem_id="custom_model")
            api_key = gr.Textbox(label="API key (optional)", type="password", elem_id="custom_key")
        add_endpoint = gr.Button("Add endpoint", size="sm")
    return [
        add_string.click(pg.add_model_string, [model_string, models, state], [models, model_string], **PAGE_ONLY),
        model_string.submit(pg.add_model_string, [model_string, models, state], [models, model_string], **PAGE_ONLY),
        add_endpoint.click(
            pg.add_custom_endpoint, [base_url, model_id, api_key, models, state], [models, state], **PAGE_ONLY
        ),
    ]


def build_blocks(pg: Playground) -> gr.Blocks:
    """The page: controls, live grid, scoreboard and plot, wired to `pg`'s handlers."""
    with gr.Blocks(title="OR-Bench playground", analytics_enabled=False) as demo:
        # Ends `lifetime.ttl_s()` after an event last wrote it (and however else it ends: `lifetime`).
        state = gr.State(new_session, time_to_live=lifetime.ttl_s(), delete_callback=close_session)
        # The session's id in this browser (localStorage), so a reload finds the session again.
        # Not a secret kept from the visitor: it names their own session, on their own machine.
        session_id = gr.BrowserState("", storage_key="orbench-play-session", secret=SESSION_ID_SCRAMBLE)
        resume_note = gr.State("")
        # The first Tab stop: past the set-up's thirty-odd controls to the answers (`live_grid.js`
        # moves the focus there; the link works without it too).
        gr.HTML(SKIP_LINK, elem_id="skip", js_on_load=None, padding=False)
        gr.Markdown(
            "# OR-Bench playground\nWatch models answer *seemingly* toxic prompts side by side, "
            "see which ones they refuse, and score over-refusal as you go.",
            elem_id="page_title",
        )
        banner = gr.Markdown(pg.banner(pg.default_setup.split), elem_id="banner")
        # The action bar: what you press and what it says, together on the first screen and
        # sticky while the page scrolls (every refusal of a run lands in `progress`, and in a toast).
        with gr.Row(equal_height=True, elem_id="action_bar"):
            run_btn = gr.Button("Run", variant="primary", elem_id="run", scale=0, min_width=110)
            stop_btn = gr.Button("Stop", variant="stop", elem_id="stop", scale=0, min_width=90)
            progress = gr.HTML(
                grid_view.render_progress(None), label="run progress", elem_id="progress", js_on_load=None
            )
            # The next run's cells and, where the models are priced, its cost: known before Run.
            run_size = gr.HTML(render_run_size(None), label="next run", elem_id="run_size", js_on_load=None)
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=300):
                models = gr.Dropdown(
                    choices=pg.model_choices(),
                    value=pg.default_models,
                    multiselect=True,
                    allow_custom_value=True,
                    max_choices=MAX_MODELS,
                    label=f"Models (1–{MAX_MODELS})",
                    info=models_info(pg),
                    elem_id="models",
                )
                model_events = _add_models(pg, models, state)
                split = gr.Dropdown(
                    SPLIT_CHOICES, value=list(pg.default_setup.split), multiselect=True, label="Splits",
                    info="One or more; N prompts per category are drawn from each. Hard-1K + Toxic give both "
                    "rates and the mini-score.", elem_id="split",
                )  # fmt: skip
                categories = gr.Dropdown(
                    choices=list(CATEGORIES),
                    value=[],
                    multiselect=True,
                    label="Categories (empty = all 10)",
                    elem_id="categories",
                )
                with gr.Row():
                    n = gr.Slider(
                        1, MAX_PER_CATEGORY, value=pg.default_setup.n, step=1,
                        label="Prompts per category", elem_id="n", scale=3,
                    )  # fmt: skip
                    seed = gr.Number(
                        value=0, precision=0, minimum=0, label="Seed", elem_id="seed", scale=1, min_width=90
                    )
                    reroll = gr.Button("Re-roll", scale=0, min_width=70, elem_id="reroll", size="sm")
                focus = gr.Checkbox(
                    False, label="Focus on prompts the session's models disagreed on", elem_id="focus",
                    info="Draws those prompts first; the rest is the usual seeded sample.",
                )  # fmt: skip
                judge = gr.Dropdown(
                    choices=pg.judge_choices(), value=pg.judge, label="Verdicts by", elem_id="judge",
                    info="The offline classifier, OR-Bench's paper judge (needs its API key) or a model as judge.",
                )  # fmt: skip
                settle = gr.Checkbox(
                    pg.default_settle, label="Stop each answer once its verdict is settled", elem_id="settle",
                    info=SETTLE_INFO,
                )  # fmt: skip
                # Until the visitor (or a link) sets it, the switch follows the models: on for the
                # embedded demo models only (`settle_follows`).
                settle_touched = gr.State(False)
                gen = _generation_settings(pg)
                with gr.Accordion("Custom prompt", open=False):
                    custom_prompt = gr.Textbox(
                        label="Your prompt", lines=3, max_lines=12, elem_id="custom_prompt",
                        placeholder="Runs once against the chosen models (not part of the benign/toxic rates).",
                    )  # fmt: skip
                    prompt_btn = gr.Button("Run my prompt", elem_id="run_prompt")
                share = gr.Textbox(
                    label="Share link", info=SHARE_INFO, interactive=False, buttons=["copy"], elem_id="share"
                )
                page_base = gr.Textbox(visible=False, elem_id="page_base")
            with gr.Column(scale=3, min_width=480):
                # Which prompts the grid shows (all, refusals, disagreements, unsure, errors): the page's
                # own (`live_grid.js` filters rows and counts them), so it survives every new run.
                gr.HTML(
                    grid_view.FILTER_BAR, label="grid filter", elem_id="grid_filter", js_on_load=None, padding=False
                )
                grid = gr.HTML(grid_view.render_grid(None), label="answers grid", elem_id="grid", js_on_load=None)
                # The live feed: one batch of cell changes per frame, applied to the grid by its script.
                feed = gr.HTML("", html_template="", label="grid feed", elem_id="grid_feed", js_on_load=_live_grid_js())
                follow = FollowUpPanel(pg)
        with gr.Row(equal_height=False):
            with gr.Column(scale=3):
                with gr.Row(equal_height=True, elem_id="scoreboard_head"):
                    gr.Markdown("## Session scoreboard")
                    # The review queue: the answers worth a person's look, one at a time, by keyboard.
                    review_btn = gr.Button(
                        review_view.review_button_label(0, 0), elem_id="review", interactive=False, size="sm",
                        scale=0, min_width=170,
                    )  # fmt: skip
                review_panel = gr.HTML("", label="review queue", elem_id="review_panel", js_on_load=_review_queue_js())
                scoreboard = gr.HTML(
                    scoreboard_view.render_scoreboard([]), label="scoreboard", elem_id="scoreboard", js_on_load=None
                )
            with gr.Column(scale=2):
                gr.Markdown("## On the paper's axes")
                # Not labelled "plot": Gradio's translations have a "plot" group, and a label is looked up there.
                plot = gr.HTML(plot_view.render_plot([], pg.paper), label="paper axes", elem_id="plot", js_on_load=None)
        cmp = _compare_panel(pg, state)
        # Below the fold, so the first screen (and the README's pictures) stay as they were.
        prompt_set = dataset_panel.prompt_set_panel()
        dataset_panel.session_dataset_panel(state, plot, pg.plot_now)
        with gr.Row():
            run_history = run_list_dropdown()  # the run the scoreboard, plot and downloads take (`history`)
            # Disabled, and saying so, until the session has results (`exports.download_update`).
            csv_btn = gr.DownloadButton(CSV_LABEL + WAITING, value=None, interactive=False, elem_id="download_csv")
            jsonl_btn = gr.DownloadButton(
                JSONL_LABEL + WAITING, value=None, interactive=False, elem_id="download_jsonl"
            )
        with gr.Accordion("Override a verdict (form)", open=False):
            gr.Markdown("Or click a finished verdict badge in the grid.")
            with gr.Row():
                override_cell = gr.Dropdown(
                    choices=[], label="Cell", allow_custom_value=True, elem_id="override_cell", scale=3
                )
                override_label = gr.Radio(
                    [(safe_html.VERDICT_TEXT[v], v) for v in safe_html.OVERRIDE_LABELS],
                    value="direct_answer", label="Verdict", elem_id="override_label", scale=2,
                )  # fmt: skip
                override_btn = gr.Button("Apply", elem_id="override_apply", scale=1)
        results_json = gr.JSON(visible=False, label="results", elem_id="results_json")
        with gr.Accordion("About OR-Bench and this playground", open=False, elem_id="about"):
            gr.Markdown(_about_text())

        gen_inputs = [gen.preset, gen.custom_system, gen.temperature, gen.top_p, gen.repeats]
        run_inputs = [models, split, categories, n, seed, gen.max_tokens, state, *gen_inputs, focus, judge]
        prompt_inputs = [custom_prompt, models, gen.max_tokens, state, *gen_inputs, judge]
        # The page's buttons also send the reasoning effort; the API endpoints keep their inputs
        # (a raw HTTP caller sends every input, so a new one would break it), and run at the provider's.
        page_run_inputs = [*run_inputs, gen.reasoning_effort, *prompt_set.run_inputs, settle]
        page_prompt_inputs = [*prompt_inputs, gen.reasoning_effort, settle]
        override_inputs = [override_cell, override_label, state]
        files = [csv_btn, jsonl_btn]
        # The page: the grid's skeleton once per run, then per-cell changes through `feed`.
        page_outputs = [progress, grid, feed, scoreboard, plot, *files, override_cell, state]
        page_override_outputs = [feed, scoreboard, plot, *files, override_cell, state]
        page_args: dict[str, Any] = {**PAGE_ONLY, "concurrency_limit": None, "show_progress": "hidden"}
        run_event = run_btn.click(
            for_page(pg.run_setup), page_run_inputs, page_outputs, api_name="page_run", **page_args
        )
        prompt_event = prompt_btn.click(
            for_page(pg.run_prompt), page_prompt_inputs, page_outputs, api_name="page_run_prompt", **page_args
        )
        # No `cancels`: Stop ends the run's engine; the run's handler then sends its last frame itself.
        stop_event = stop_btn.click(for_page(pg.stop), [state], page_outputs, api_name="page_stop", **page_args)
        follow_event = follow.send.click(
            for_page(pg.follow_up), [*follow.inputs, state], page_outputs, api_name="page_follow_up", **page_args
        )
        row_follow_event = feed.follow_up(for_page(pg.follow_up_click), [state], page_outputs, **page_args)
        finish_event = feed.finish(for_page(pg.finish_click), [state], page_outputs, **page_args)
        for event in (run_event, prompt_event, stop_event):  # new variants become comparable
            event.then(
                pg.compare_choices, [cmp["a"], cmp["b"], state], [cmp["a"], cmp["b"]],
                **PAGE_ONLY, show_progress="hidden",
            )  # fmt: skip
        override_event = override_btn.click(
            for_page(pg.override), override_inputs, page_override_outputs, api_name="page_override", **page_args
        )
        click_event = feed.override(for_page(pg.override_click), [state], page_override_outputs, **page_args)
        feed.resync(pg.grid_snapshot, [state], [feed], **page_args)
        # The review queue: open at the next answer, decide (a user verdict: the score moves), close.
        review_open = review_btn.click(pg.review_open, [state], [review_panel, state], **page_args)
        review_event = review_panel.decide(
            pg.review_decide, [state], [review_panel, review_btn, *page_override_outputs], **page_args
        )
        review_panel.close_review(pg.review_close, [state], [review_panel, state], **page_args)
        review_event.then(pg.download_state, [state], files, **PAGE_ONLY, show_progress="hidden")
        for event in (run_event, prompt_event, stop_event, override_event, click_event, follow_event, row_follow_event):
            event.then(pg.review_button, [state], review_btn, **PAGE_ONLY, show_progress="hidden")
        review_open.then(pg.review_button, [state], review_btn, **PAGE_ONLY, show_progress="hidden")
        # The download buttons say when there is something to download (enabled after a run).
        for event in (
            run_event, prompt_event, stop_event, override_event, click_event, follow_event, row_follow_event,
            finish_event,
        ):  # fmt: skip
            event.then(pg.download_state, [state], files, **PAGE_ONLY, show_progress="hidden")
        for event in (run_event, prompt_event, stop_event, follow_event, row_follow_event, finish_event):  # run list
            event.then(pg.run_list, [state], run_history, **PAGE_ONLY, show_progress="hidden")
        run_history.input(pg.show_run, [run_history, state], [*page_outputs, run_history], **page_args).then(
            pg.review_button, [state], review_btn, **PAGE_ONLY, show_progress="hidden"
        )
        for event in (run_event, prompt_event, stop_event):  # shared state lost or back (Redis): said at once
            event.then(pg.banner, split, banner, **PAGE_ONLY, show_progress="hidden")
        # The API (gradio_client): the same handlers on endpoints of their own, with the
        # whole result at the end (grid HTML, scoreboard, plot, files, results_json).
        api_outputs = [progress, grid, scoreboard, plot, *files, results_json, override_cell, state]
        api_args: dict[str, Any] = {"concurrency_limit": None, "show_progress": "hidden"}
        gr.on([], for_api(pg.run_setup), run_inputs, api_outputs, api_name="run", **api_args)
        gr.on([], for_api(pg.run_prompt), prompt_inputs, api_outputs, api_name="run_prompt", **api_args)
        gr.on([], for_api(pg.stop), [state], api_outputs, api_name="stop", **api_args)
        gr.on([], for_api(pg.override), override_inputs, api_outputs[1:], api_name="override", **api_args)
        gr.on([], for_api(pg.follow_up), [*follow.inputs, state], api_outputs, api_name="follow_up", **api_args)
        # What a visitor sets that the share link carries (the link follows each change).
        setup_controls: list[gr.Dropdown | gr.Slider | gr.Number | gr.Textbox | gr.Checkbox] = [
            models, split, categories, n, seed,
            gen.preset, gen.custom_system, gen.temperature, gen.top_p, gen.max_tokens, gen.repeats, focus,
            gen.reasoning_effort, follow.preset, settle, judge, *prompt_set.run_inputs,
        ]  # fmt: skip
        # In `setup_handlers.SETTINGS` order after the page's base and the session.
        share_inputs = [*setup_controls[:5], page_base, state, *setup_controls[5:], settle_touched]
        share_outputs = [share, run_size]
        share_args: dict[str, Any] = {**PAGE_ONLY, "show_progress": "hidden", "trigger_mode": "always_last"}
        reroll.click(_new_seed, None, seed, **PAGE_ONLY, show_progress="hidden").then(
            pg.share_box, share_inputs, share_outputs, **share_args
        )
        split.input(pg.banner, split, banner, **PAGE_ONLY, show_progress="hidden")
        settle.input(lambda: True, None, settle_touched, **PAGE_ONLY, show_progress="hidden")
        models.change(pg.settle_follows, [models, settle_touched], settle, **PAGE_ONLY, show_progress="hidden").then(
            pg.share_box, share_inputs, share_outputs, **share_args
        )
        for control in setup_controls:
            control.input(pg.share_box, share_inputs, share_outputs, **share_args)
        for event in model_events:  # "Add a model" changes the selection programmatically
            event.then(pg.share_box, share_inputs, share_outputs, **share_args)
        load_outputs = [
            models, split, categories, n, seed, banner,
            gen.preset, gen.temperature, gen.top_p, gen.max_tokens, gen.repeats, focus, gen.custom_system,
            gen.reasoning_effort, follow.preset, settle, settle_touched, judge, *prompt_set.run_inputs, resume_note,
        ]  # fmt: skip
        # A gr.State with a factory gets a load event that Gradio would publish as an API
        # endpoint named after the factory (`/new_session`): the same load event, page-only,
        # first in the page's one load chain. Then the session this browser had before a
        # reload, when the server still holds it (`resume`); then the link's set-up, and the
        # share link computed from the pre-filled controls, never a stale mix; then the
        # adopted session's run, scoreboard and downloads.
        state.load_event_to_attach = None
        demo.load(new_session, None, state, **PAGE_ONLY).then(
            pg.restore, [state, session_id], [state, session_id, resume_note], **PAGE_ONLY, show_progress="hidden"
        ).then(None, None, page_base, js=_PAGE_BASE_JS, **PAGE_ONLY).then(
            pg.on_load, [state, resume_note], load_outputs, **PAGE_ONLY, show_progress="hidden",
        ).then(pg.share_box, share_inputs, share_outputs, **share_args).then(
            for_page(pg.resume), [state, resume_note], page_outputs, api_name="page_resume", **page_args
        ).then(pg.download_state, [state], files, **PAGE_ONLY, show_progress="hidden").then(
            pg.run_list, [state], run_history, **PAGE_ONLY, show_progress="hidden"
        ).then(pg.review_button, [state], review_btn, **PAGE_ONLY, show_progress="hidden")  # fmt: skip
        demo.unload(pg.detach)
    return demo


def build_demo(catalog: Catalog | None = None) -> gr.Blocks:
    """The page over `catalog`; `demo.embedded_defaults` names the embedded models it
    preselects (`main` starts their servers in the warm-up, before the first Run)."""
    pg = Playground(catalog)
    demo = build_blocks(pg)
    demo.queue(default_concurrency_limit=None)
    local = tuple(name for name in pg.default_models if pg.catalog.entries[name].is_local)
    demo.embedded_defaults = local  # type: ignore[attr-defined]
    return demo


def theme() -> gr.themes.Base:
    """Gradio's default theme with muted text dark enough for WCAG AA (4.5:1 on white):
    the default's neutral-400 (rgb 187,187,194) is 1.9:1, and it colours every info line,
    placeholder and our own secondary text (`--body-text-color-subdued`)."""
    return gr.themes.Default().set(
        body_text_color_subdued="*neutral_600",
        input_placeholder_color="*neutral_500",
        # White on the default orange (primary-500) and red-500 is 3.6:1 and 3.8:1.
        button_primary_background_fill="*primary_700",
        button_primary_background_fill_hover="*primary_800",
        button_primary_border_color="*primary_700",
        button_cancel_background_fill="#b91c1c",
        button_cancel_background_fill_hover="#991b1b",
    )


def launch_kwargs() -> dict[str, Any]:
    """What `launch()` needs besides host/port (Gradio 6 takes the theme and CSS at launch):
    also as many sessions as the disk budget holds, and the lifespan that sweeps what ended
    processes left and reaps ended sessions (`lifetime`)."""
    return {
        "css": style.CSS, "theme": theme(), "max_threads": 64, "footer_links": ["api"],
        "state_session_capacity": lifetime.capacity(), "app_kwargs": {"lifespan": lifetime.lifespan},
    }  # fmt: skip
