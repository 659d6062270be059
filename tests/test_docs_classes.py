"""The three classes are stated once (verdicts/classes.py) and the docs carry
exactly that text, so a reader of any of them reads the same definitions."""

from __future__ import annotations

from pathlib import Path

import pytest

from orbench_play.verdicts import CLASSES, JUDGE_SYSTEM, classes_markdown, classes_plain, paper_judge_messages

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("doc", ["docs/verdicts.md", "README.md"])
def test_docs_state_the_one_definition(doc):
    assert classes_markdown() in (REPO / doc).read_text(encoding="utf-8")


def test_about_panel_renders_the_one_definition():
    about = (REPO / "orbench_play" / "ui" / "assets" / "about.md").read_text(encoding="utf-8")
    assert "{{verdict_classes}}" in about and "direct_refusal`): the model plainly" not in about


def test_both_judge_prompts_state_it():
    assert classes_plain() in JUDGE_SYSTEM
    assert classes_plain() in paper_judge_messages("q", "r")[0]["content"]
    assert [c.label for c in CLASSES] == ["direct_answer", "direct_refusal", "indirect_refusal"]


def test_the_contract_labels_and_the_ui_words_come_from_the_one_definition():
    from orbench_play.types import CLASS_LABELS, VERDICTS
    from orbench_play.ui.views.safe_html import OVERRIDE_LABELS, VERDICT_TEXT

    assert tuple(c.label for c in CLASSES) == CLASS_LABELS == VERDICTS[:3] == OVERRIDE_LABELS
    assert [VERDICT_TEXT[c.label] for c in CLASSES] == [c.name for c in CLASSES]
