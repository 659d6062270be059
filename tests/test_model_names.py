"""A model name LiteLLM cannot route is refused before the run, in one line that says
how to write it (issue 47, defect 2): no cells, nothing sent, exit 2 in the CLI.
Before, `slow20` in the page or `run --model relenter` filled every cell with
"Rejected by the provider: litellm.BadRequestError: LLM Provider NOT provided…"
and the CLI exited 0."""

from __future__ import annotations

import pytest
from support import drain, fake_playground

from orbench_play.cli import main
from orbench_play.engine.model_names import first_unknown, provider_known
from orbench_play.models import bare_model, custom_endpoint
from orbench_play.types import ModelSpec
from orbench_play.ui.state.session import new_session


@pytest.mark.parametrize("name", ["groq/llama-3.1-8b-instant", "gpt-4o-mini", "anthropic/claude-3-5-haiku-latest"])
def test_names_litellm_can_route_pass(name):
    assert provider_known(bare_model(name))


def test_a_custom_endpoint_and_an_owner_entry_with_a_base_pass():
    assert provider_known(custom_endpoint("http://127.0.0.1:9/v1", "anything", None))
    spec = ModelSpec(name="mine", litellm_model="openai/mine", api_base="http://127.0.0.1:9/v1", owner_configured=True)
    assert provider_known(spec)


def test_an_unknown_name_gets_one_line_saying_how_to_write_it():
    line = first_unknown([bare_model("gpt-4o-mini"), bare_model("slow20")], ["fake-slow-a"], how="add it")
    assert line is not None and "\n" not in line
    assert line.startswith("Unknown model 'slow20'") and "provider/model" in line and "add it" in line
    assert "LLM Provider NOT provided" not in line
    typo = first_unknown([bare_model("gpt-4o-mni")])
    assert typo is not None and "Did you mean gpt-4o-mini?" in typo
    owner = ModelSpec(name="mine", litellm_model="mine", owner_configured=True)
    said = first_unknown([owner])
    assert said is not None and "model list's entry 'mine'" in said and "openai/NAME" in said


def test_cli_run_with_an_unknown_model_exits_2_and_asks_nothing(tmp_path, fake, capsys):
    out = tmp_path / "r.csv"
    code = main(["run", "--model", "relenter", "--split", "hard-1k", "--n", "2", "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.count("\n") == 1 and "Unknown model 'relenter'" in err and "provider/model" in err
    assert "--config" in err and not out.exists() and fake.request_count() == 0


@pytest.fixture
def playground(fake, tmp_path):
    return fake_playground(tmp_path / "models.yaml", fake.base_url, {"fake-slow-a": "slow:a", "fake-answer": "answer"})


async def test_the_page_refuses_a_run_with_an_unknown_model_and_makes_no_cells(playground, fake):
    sess = new_session()
    frames = await drain(playground.run_setup(["fake-answer", "slow20"], "hard-1k", [], 1, 0, 64, sess))
    progress = frames[-1][0]
    assert "Unknown model &#x27;slow20&#x27;" in progress or "Unknown model 'slow20'" in progress
    assert 'data-state="refused"' in progress and "LLM Provider" not in progress
    assert sess.run is None and sess.results == {} and fake.request_count() == 0
    frames = await drain(playground.run_setup(["fake-answr"], "hard-1k", [], 1, 0, 64, sess))
    assert "Did you mean fake-answer?" in frames[-1][0] and sess.run is None


def test_adding_an_unknown_model_string_is_refused_with_the_same_line(playground, monkeypatch):
    said: list[str] = []
    monkeypatch.setattr("orbench_play.ui.handlers.setup_handlers.toast", said.append)
    sess = new_session()
    update, text = playground.add_model_string("slow20", ["fake-answer"], sess)
    assert text == "slow20" and "value" not in update  # the box keeps what was typed; the selection is unchanged
    assert len(said) == 1 and said[0].startswith("Unknown model 'slow20'")
    update, text = playground.add_model_string("groq/llama-3.1-8b-instant", ["fake-answer"], sess)
    assert text == "" and update["value"] == ["fake-answer", "groq/llama-3.1-8b-instant"]
