"""The page's dataset panels (built by `layout`, handled by `dataset_handlers`):
a prompt set with its column mapping and a five-row preview; the session as a
dataset, downloaded as a zip or published to the Hub with the visitor's own
token; other people's published sessions on the plot."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr

from .handlers import dataset_handlers

PAGE_ONLY: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}


@dataclass
class PromptSetControls:
    source: gr.Textbox
    prompt_col: gr.Textbox
    category_col: gr.Textbox
    label_col: gr.Textbox

    @property
    def run_inputs(self) -> list[gr.Textbox]:
        """What the page's Run sends after its other inputs (`Playground.run_setup`)."""
        return [self.source, self.prompt_col, self.category_col, self.label_col]


def prompt_set_panel() -> PromptSetControls:
    """ "Prompt set": any dataset `datasets` reads, asked beside (or instead of) the splits."""
    with gr.Accordion("Prompt set (your own prompts, through `datasets`)", open=False, elem_id="prompt_set_panel"):
        source = gr.Textbox(
            label="Prompt set",
            placeholder="owner/name[:config[:split]], or a .csv / .jsonl / .parquet file or dataset folder",
            info="Sampled like a split, N per category, with rates of its own (never pooled with OR-Bench's). "
            "Clear the splits to ask only this set.",
            elem_id="prompt_set",
        )
        with gr.Row():
            prompt_col = gr.Textbox(value="prompt", label="Prompt column", elem_id="prompt_col")
            category_col = gr.Textbox(label="Category column (optional)", elem_id="category_col")
            label_col = gr.Textbox(
                label="Expected behaviour column (optional)",
                info="benign / should-refuse (safe/unsafe, 0/1 too)",
                elem_id="label_col",
            )
        preview_btn = gr.Button("Preview five rows", elem_id="prompt_set_preview_btn", size="sm")
        preview = gr.HTML("", elem_id="prompt_set_preview", js_on_load=None)
    controls = PromptSetControls(source, prompt_col, category_col, label_col)
    preview_btn.click(dataset_handlers.preview_html, controls.run_inputs, preview, **PAGE_ONLY)
    return controls


def session_dataset_panel(state: gr.State, plot: gr.HTML, rerender_plot) -> None:
    """The session as a dataset (zip, Hub) and published sessions on the plot."""
    with gr.Accordion("This session as a dataset", open=False, elem_id="dataset_panel"):
        gr.Markdown("The run chosen in *Runs of this session* (beside the download buttons), or all runs.")
        with gr.Row():
            zip_btn = gr.Button("Download as a dataset folder", elem_id="dataset_zip_btn", size="sm")
            zip_file = gr.File(label="dataset folder (zip)", interactive=False, elem_id="dataset_zip")
        gr.Markdown(
            "**Publish to the Hub** with your own token (write access). It is used for this upload only: "
            "never stored, logged or cached, and the box is emptied at once."
        )
        with gr.Row():
            repo = gr.Textbox(label="Repository", placeholder="USER/NAME", elem_id="publish_repo")
            token = gr.Textbox(label="Your Hub token", type="password", elem_id="publish_token")
            private = gr.Checkbox(True, label="Private", elem_id="publish_private")
        publish_btn = gr.Button("Publish to the Hub", elem_id="publish_btn")
        publish_note = gr.Markdown("", elem_id="publish_note")
        gr.Markdown("**Published sessions on the plot** (Hub ids or dataset folders, one per line).")
        sources = gr.Textbox(lines=2, label="Published sessions", elem_id="published_sessions")
        show_btn = gr.Button("Show on the plot", elem_id="published_show", size="sm")
        show_note = gr.Markdown("", elem_id="published_note")
    zip_btn.click(dataset_handlers.dataset_zip, [state], zip_file, **PAGE_ONLY)
    publish_btn.click(dataset_handlers.publish, [repo, token, private, state], [publish_note, token], **PAGE_ONLY)
    show_btn.click(dataset_handlers.add_published, [sources, state], show_note, **PAGE_ONLY).then(
        rerender_plot, [state], plot, **PAGE_ONLY
    )
