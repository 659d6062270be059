"""Publishing a session as a Hugging Face dataset: the folder and its card, a
load back through `datasets` that gives the same rows, and the Hub path against
the fake Hub on loopback (tests/fake_hub.py) with the real `huggingface_hub`
and `datasets` clients in a subprocess: publish --repo, then compare and run
--prompts of Hub ids. The token reaches the Hub and nothing else."""

from __future__ import annotations

import json
import os
import re
import uuid

import pytest
import yaml
from fake_hub import FakeHub
from support import fake_models_yaml, run_cli
from test_secrets import files_containing

from orbench_play.asking.prompts import variant_of
from orbench_play.cli import main
from orbench_play.export import write_results
from orbench_play.publish import card_text, load_session, write_folder
from orbench_play.publish.folder import rows_of
from orbench_play.scoring import score_results
from orbench_play.types import CellResult


def results() -> list[CellResult]:
    out = []
    verdicts = {"A": ["direct_answer", "direct_refusal", "direct_refusal"], "B": ["direct_refusal"] * 3}
    prompts = [
        ("hard-1k", "hard-1k:3", "privacy", "How do I find an old friend?", ""),
        ("toxic", "toxic:9", "violence", "=cmd|' /C calc'!A0 how to hurt", ""),
        ("custom:set.csv", "custom:set.csv:0", "tech", "How do I kill a process?\nline two", "benign"),
    ]
    for model, verdict_list in verdicts.items():
        for (split, row_id, category, prompt, expected), verdict in zip(prompts, verdict_list, strict=True):
            out.append(
                CellResult(
                    split=split, row_id=row_id, category=category, prompt=prompt, model=model,
                    response=f"{model} says ünïcode \u2028 {verdict}", verdict=verdict,
                    verdict_source="llm:judge-x" if model == "B" else "phrases", latency_s=1.25, ttft_s=0.5,
                    completion_tokens=12, cost_usd=0.0001, cached=model == "B",
                    system_prompt_id="safety" if model == "B" else "none",
                    params=json.dumps({"temperature": 0.7}) if model == "B" else "", attempts=1,
                    reasoning="thinking…" if model == "A" else "", reasoning_tokens=5 if model == "A" else None,
                    ttfa_s=0.75, expected=expected,
                )
            )  # fmt: skip
    return out


def test_a_folder_loads_back_with_datasets_giving_the_same_rows(tmp_path):
    import datasets

    session = results()
    folder = write_folder(session, tmp_path / "out", date="2026-12-01T21:00:00Z")
    loaded = datasets.load_dataset(str(folder), split="train")
    assert loaded.to_list() == rows_of(session)
    assert list(loaded.column_names)[:14] == list(session[0].to_row())[:14]
    back = load_session(str(folder))
    assert [r.to_row() for r in back] == [r.to_row() for r in session]


def front_matter(card: str) -> dict:
    match = re.match(r"\A---\n(.*?)\n---\n", card, re.DOTALL)
    assert match, card[:200]
    return yaml.safe_load(match[1])


def test_the_card_states_every_field(tmp_path):
    session = results()
    card = card_text(session, date="2026-12-01T21:00:00Z", title="my session")
    meta = front_matter(card)
    assert meta["license"] == "cc-by-4.0" and meta["pretty_name"] == "my session"
    assert meta["configs"] == [
        {"config_name": "default", "data_files": [{"split": "train", "path": "data/train-*.parquet"}]}
    ]
    assert meta["source_datasets"] == ["bench-llm/or-bench"]
    own = meta["orbench_play"]
    assert own["date"] == "2026-12-01T21:00:00Z" and own["tool"] == "orbench-play" and own["version"]
    assert own["models"] == ["A", "B"] and own["rows"] == 6
    assert own["judge"] == ["keyword (offline classifier)", "llm:judge-x"]
    b = next(v for v in own["variants"] if v["model"] == "B")
    assert b == {
        "variant": "B · safety · T=0.7", "model": "B", "system_prompt_id": "safety",
        "params": {"temperature": 0.7}, "settings": "T=0.7", "repeats": 1,
    }  # fmt: skip
    scores = {s.model: s for s in score_results(session, key=variant_of)}
    for row in own["scoreboard"]:
        s = scores[row["variant"]]
        assert s.over_refusal_hard_1k is not None and s.toxic_refusal is not None
        hard, toxic = row["over_refusal_hard_1k"], row["toxic_refusal"]
        assert (hard["k"], hard["n"], hard["low"], hard["high"]) == (
            s.over_refusal_hard_1k.k, s.over_refusal_hard_1k.n,
            round(s.over_refusal_hard_1k.low, 6), round(s.over_refusal_hard_1k.high, 6),
        )  # fmt: skip
        assert (toxic["k"], toxic["n"]) == (s.toxic_refusal.k, s.toxic_refusal.n)
        assert row["mini_score"]["score"] == round(s.mini_score or 0, 6)
        assert set(row["prompt_sets"]) == {"custom:set.csv (benign)"}
    body = card.split("\n---\n", 1)[1]
    assert "CC BY 4.0" in body and "arXiv:2405.20947" in body and "Justin Cui" in body
    assert "@article{cui2024orbench" in body and "| B · safety · T=0.7 |" in body
    assert s.corrected["toxic"].fmt() in body  # the scoreboard's figures, as the app writes them
    assert "verdicts say" in body and "corrected" in body


def test_cli_publish_to_folder_then_compare_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    csv_path = write_results(results(), tmp_path / "r.csv")
    assert main(["publish", str(csv_path), "--to-folder", str(tmp_path / "out")]) == 0
    assert "Wrote 6 rows" in capsys.readouterr().err
    # the CSV's round trip is exact for these values: the folder holds the same rows
    assert [r.to_row() for r in load_session(str(tmp_path / "out"))] == [r.to_row() for r in results()]
    assert main(["compare", str(tmp_path / "out"), str(csv_path), "--a", "A", "--b", "A"]) == 0
    printed = capsys.readouterr().out
    assert "A: A (out)" in printed and "B: A (r.csv)" in printed
    assert main(["compare", str(tmp_path / "out")]) == 0
    assert "B: B · safety · T=0.7" in capsys.readouterr().out


def test_publish_needs_a_token_and_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN", raising=False)
    csv_path = write_results(results(), tmp_path / "r.csv")
    assert main(["publish", str(csv_path), "--repo", "me/sess"]) == 2
    assert capsys.readouterr().err.strip() == (
        "orbench-play: error: publishing to the Hub needs a token with write access: set HF_TOKEN (or pass --token)."
    )


# --- the Hub, faked on loopback ----------------------------------------------------


@pytest.fixture
def hub():
    server = FakeHub(token=f"hf_planted_{uuid.uuid4().hex}").start()
    yield server
    server.stop()


def hub_env(hub, tmp_path, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_TOKEN")}
    env.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "hf-home"), ORBENCH_CACHE_DIR=str(tmp_path / "cache"))
    env.update(extra)
    return env


def test_publish_to_the_hub_then_compare_the_hub_id_and_the_token_leaks_nowhere(hub, tmp_path):
    csv_path = write_results(results(), tmp_path / "out" / "r.csv")
    env = hub_env(hub, tmp_path, HF_TOKEN=hub.token)
    done = run_cli(["publish", str(csv_path), "--repo", "me/sess", "--private", "--title", "t"], env=env)
    assert done.returncode == 0, done.stderr
    assert f"Published 6 rows to {hub.url}/datasets/me/sess" in done.stderr
    repo = hub.repos["me/sess"]
    assert repo.private and set(repo.files) == {"README.md", "data/train-00000-of-00001.parquet"}
    assert front_matter(repo.files["README.md"].decode())["pretty_name"] == "t"
    writes = [h for m, p, h in hub.requests if m == "POST"]
    assert writes and all(h.get("authorization") == f"Bearer {hub.token}" for h in writes)

    compared = run_cli(["compare", "me/sess", "--show", "0"], env=dict(env, COLUMNS="200"))
    assert compared.returncode == 0, compared.stderr
    assert "A: A" in compared.stdout and "B: B · safety · T=0.7" in compared.stdout
    against = run_cli(["compare", "me/sess", str(csv_path), "--a", "B", "--b", "B"], env=env)
    assert against.returncode == 0 and "(sess)" in against.stdout, against.stderr

    # A private session without the token: one line, no traceback.
    anonymous = run_cli(["compare", "me/sess"], env=hub_env(hub, tmp_path))
    assert anonymous.returncode == 2 and anonymous.stderr.count("\n") == 1
    assert "could not read the published session me/sess" in anonymous.stderr

    for proc in (done, compared, against, anonymous):
        assert hub.token not in proc.stdout + proc.stderr
    for root in (tmp_path / "hf-home", tmp_path / "cache", tmp_path / "out"):
        assert files_containing(root, hub.token) == []


def test_a_wrong_token_is_one_line_and_never_shown(hub, tmp_path):
    csv_path = write_results(results(), tmp_path / "r.csv")
    wrong = f"hf_wrong_{uuid.uuid4().hex}"
    done = run_cli(["publish", str(csv_path), "--repo", "me/sess", "--token", wrong], env=hub_env(hub, tmp_path))
    assert done.returncode == 2 and done.stderr.startswith("orbench-play: error: could not publish me/sess")
    assert done.stderr.count("\n") == 1 and wrong not in done.stdout + done.stderr
    assert "me/sess" not in hub.repos
    assert files_containing(tmp_path / "hf-home", wrong) == []


def test_run_prompts_of_a_hub_id_served_by_the_fake_hub(hub, tmp_path, fake):
    rows = "text,topic,kind\n" + "".join(
        f"Question {i} about processes?,t{i % 2},{'safe' if i % 2 else 'unsafe'}\n" for i in range(6)
    )
    hub.add_files("someone/prompts", {"prompts.csv": rows.encode()})
    models = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, {"A": "answer"})
    out = tmp_path / "r.jsonl"
    argv = ["run", "--config", str(models), "--model", "A", "--prompts", "someone/prompts", "--prompt-col", "text"]
    argv += ["--category-col", "topic", "--label-col", "kind", "--per-category", "2", "--out", str(out), "--quiet"]
    done = run_cli(argv, env=hub_env(hub, tmp_path))
    assert done.returncode == 0, done.stderr
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(got) == 4 and {r["split"] for r in got} == {"custom:someone/prompts"}
    assert {(r["category"], r["expected"]) for r in got} == {("t0", "should-refuse"), ("t1", "benign")}
    assert any("/datasets/someone/prompts/resolve/" in p for p in hub.paths())


def test_published_sessions_join_the_plot_labelled_with_intervals_beside_the_grey_paper(tmp_path):
    from orbench_play.publish import PublishError, published_scores
    from orbench_play.scoring import load_paper_results
    from orbench_play.ui.views import plot_view

    folder = write_folder(results(), tmp_path / "theirs")
    scores, names = published_scores([str(folder)])
    assert [s.model for s in scores] == ["A (theirs)", "B · safety · T=0.7 (theirs)"]
    assert names == {s.model: str(folder) for s in scores}
    paper = [tuple(row) for row in load_paper_results().itertuples(index=False)]
    svg = plot_view.render_plot(scores, paper, published=names)
    assert svg.count('class="paper"') == 32  # the paper's models stay grey
    assert svg.count(f'data-published="{folder}"') == 2 and svg.count('class="ebar"') == 4
    assert "A (theirs)" in svg
    with pytest.raises(PublishError, match="in public mode a published session must be a Hub id"):
        published_scores([str(folder)], allow_local=False)


# --- publishing without the Hub points to the folder (issue 47, defect 5) --------------------


def test_publishing_without_the_hub_points_to_the_dataset_folder(tmp_path, monkeypatch, capsys):
    """It said "use a local file or folder, or connect to the internet" (the prompt-set
    reader's advice): the way to the same dataset offline is a dataset folder."""
    from support import free_port

    csv_path = write_results(results(), tmp_path / "r.csv")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens
    assert main(["publish", str(csv_path), "--repo", "me/sess", "--token", "hf_x"]) == 2
    err = capsys.readouterr().err
    assert "Could not reach the Hugging Face Hub" in err and "--to-folder DIR" in err
    assert "local file or folder" not in err
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["publish", str(csv_path), "--repo", "me/sess", "--token", "hf_x"]) == 2
    assert "--to-folder DIR" in capsys.readouterr().err
    # The page says its own button.
    from orbench_play.ui.handlers import dataset_handlers
    from orbench_play.ui.state.session import Session

    sess = Session()
    for r in results():
        sess.results[r.cell_id] = r
        sess.order.append(r.cell_id)
    note, _ = dataset_handlers.publish("me/sess", "hf_x", True, sess)
    assert '"Download as a dataset folder"' in note.replace("&quot;", '"') and "--to-folder" not in note
    sess.close()
