"""The share link with generation settings: `to_query`/`parse_query` round trips,
the unchanged contract form for defaults, warnings (never exceptions) for bad
values, and the `on_load` / `share_link` handlers called directly."""

from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace
from urllib.parse import parse_qsl

import pytest

from orbench_play.asking.prompts import SYSTEM_PROMPTS
from orbench_play.models import Catalog
from orbench_play.types import GenerationParams
from orbench_play.ui.state import query
from orbench_play.ui.state.query import Setup, parse_query, to_query

CONTRACT = "?models=a,b&split=hard-1k,toxic&categories=all&n=1&seed=0"
PAIR = ["hard-1k", "toxic"]
EVERYTHING = Setup(
    models=["fake-answer", "groq/llama-3.1-8b-instant"], split="toxic", categories=["privacy", "illegal"],
    n=2, seed=7, preset="safety", temperature=0.7, top_p=0.9, max_tokens=256, repeats=3, focus=True,
    reasoning_effort="high",
)  # fmt: skip
GEN_KEYS = ["preset", "temperature", "top_p", "max_tokens", "repeats", "focus", "reasoning_effort"]


def round_trip(link: str) -> tuple[Setup, list[str]]:
    assert link.startswith("?")
    return parse_query(dict(parse_qsl(link[1:], keep_blank_values=True)))


@pytest.fixture(scope="module")
def playground():
    from orbench_play.ui.handlers.playground import Playground

    return Playground(Catalog())


def stub_request(**params: str) -> SimpleNamespace:
    return SimpleNamespace(query_params=params)


# -- to_query / parse_query -------------------------------------------------------------


def test_defaults_give_exactly_the_contract_form():
    assert to_query(["a", "b"], PAIR, [], 1, 0) == CONTRACT
    assert to_query(**asdict(Setup(models=["a", "b"]))) == CONTRACT
    # Explicit defaults are left out too.
    assert to_query(["a", "b"], PAIR, None, 1, 0, preset="none", temperature=None, top_p=None,
                    max_tokens=GenerationParams().max_tokens, repeats=1, focus=False) == CONTRACT  # fmt: skip


def test_split_lists_round_trip_and_old_single_split_links_still_open():
    assert parse_query({})[0].split == PAIR
    assert round_trip("?split=hard-1k") == (Setup(split=["hard-1k"]), [])  # a link made before lists
    assert to_query(["a"], ["hard-1k"], [], 1, 0) == "?models=a&split=hard-1k&categories=all&n=1&seed=0"
    setup, warnings = round_trip("?split=80k,toxic,hard-1k,toxic")
    assert (setup.split, warnings) == (["hard-1k", "toxic", "80k"], [])  # canonical order, no repeats
    assert to_query(**asdict(setup)).startswith("?models=&split=hard-1k,toxic,80k&")
    assert to_query([], "toxic,hard-1k", [], 1, 0) == to_query([], PAIR, [], 1, 0)


@pytest.mark.parametrize(
    ("value", "expected", "warning"),
    [
        ("toxic,hard-2k", ["toxic"], "Ignored unknown split 'hard-2k' in the link."),
        ("nope", PAIR, "Ignored unknown split 'nope' in the link; using hard-1k,toxic."),
        (",", PAIR, "Ignored unknown split (none given) in the link; using hard-1k,toxic."),
    ],
)
def test_unknown_splits_in_a_link_warn_and_keep_the_known_ones(value, expected, warning):
    setup, warnings = parse_query({"split": value})
    assert (setup.split, warnings) == (expected, [warning])


def test_round_trip_of_every_key_with_contract_keys_first():
    link = to_query(**asdict(EVERYTHING))
    assert link == (
        "?models=fake-answer,groq/llama-3.1-8b-instant&split=toxic&categories=privacy,illegal&n=2&seed=7"
        "&preset=safety&temperature=0.7&top_p=0.9&max_tokens=256&repeats=3&focus=1&reasoning_effort=high"
    )
    keys = [part.split("=")[0] for part in link[1:].split("&")]
    assert keys == ["models", "split", "categories", "n", "seed", *GEN_KEYS]
    assert round_trip(link) == (EVERYTHING, [])


@pytest.mark.parametrize(
    "change",
    [
        {"preset": "llama2"}, {"preset": "helpful"}, {"temperature": 0.0}, {"temperature": 2.0},
        {"temperature": 0.123456789}, {"top_p": 1.0}, {"top_p": 0.05}, {"max_tokens": 32},
        {"max_tokens": 2048}, {"repeats": 5}, {"focus": True},
    ],
)  # fmt: skip
def test_each_setting_alone_round_trips_and_is_the_only_extra_key(change):
    setup = Setup(models=["a", "b"], **change)
    link = to_query(**asdict(setup))
    assert link.startswith(CONTRACT + "&") and link.count("&") == CONTRACT.count("&") + 1
    assert round_trip(link) == (setup, [])


def test_temperature_zero_is_a_setting_not_the_default():
    link = to_query(["a"], "hard-1k", [], 1, 0, temperature=0.0)
    assert link.endswith("&temperature=0")
    assert round_trip(link)[0].temperature == 0.0
    assert parse_query({})[0].temperature is None
    assert parse_query({"temperature": ""}) == (Setup(), [])  # empty = the provider's default


@pytest.mark.parametrize(
    ("params", "field", "expected"),
    [
        ({"preset": "bogus"}, "preset", "none"),
        ({"temperature": "9"}, "temperature", 2.0),
        ({"temperature": "-1"}, "temperature", 0.0),
        ({"temperature": "hot"}, "temperature", None),
        ({"temperature": "nan"}, "temperature", None),
        ({"temperature": "inf"}, "temperature", 2.0),
        ({"top_p": "0"}, "top_p", query.MIN_TOP_P),
        ({"top_p": "1.5"}, "top_p", 1.0),
        ({"top_p": "x"}, "top_p", None),
        ({"max_tokens": "99999"}, "max_tokens", query.MAX_MAX_TOKENS),
        ({"max_tokens": "1"}, "max_tokens", query.MIN_MAX_TOKENS),
        ({"max_tokens": "12.5"}, "max_tokens", GenerationParams().max_tokens),
        ({"repeats": "50"}, "repeats", query.MAX_REPEATS),
        ({"repeats": "0"}, "repeats", 1),
        ({"repeats": "three"}, "repeats", 1),
        ({"focus": "maybe"}, "focus", False),
    ],
)
def test_bad_values_warn_once_and_fall_back_or_clamp(params, field, expected):
    setup, warnings = parse_query(params)
    assert getattr(setup, field) == expected
    assert len(warnings) == 1, warnings
    assert asdict(setup) == {**asdict(Setup()), field: expected}  # nothing else changed


def test_many_bad_values_at_once_never_raise():
    params = {
        "models": "a", "split": "nope", "preset": "x" * 5000, "temperature": "1e999", "top_p": "-0",
        "max_tokens": "", "repeats": "3.0", "focus": "\x00", "n": "nan", "seed": "-5",
    }  # fmt: skip
    setup, warnings = parse_query(params)
    assert setup.preset == "none" and setup.temperature == 2.0 and setup.top_p == query.MIN_TOP_P
    assert len(warnings) == len(params) - 1  # everything but models


def test_reasoning_effort_in_the_link():
    assert parse_query({"reasoning_effort": "LOW"}) == (Setup(reasoning_effort="low"), [])
    setup, warnings = parse_query({"reasoning_effort": "max"})
    assert setup.reasoning_effort == "" and "reasoning_effort" in warnings[0]
    assert to_query(["a"], "hard-1k", [], 1, 0).find("reasoning_effort") < 0  # the default stays out of links


@pytest.mark.parametrize("flag", ["1", "true", "on", "YES"])
def test_focus_flags(flag):
    assert parse_query({"focus": flag}) == (Setup(focus=True), [])
    assert parse_query({"focus": "0"}) == (Setup(focus=False), [])


def test_link_presets_match_the_page():
    from orbench_play.ui import layout

    assert set(SYSTEM_PROMPTS) == {key for _, key in layout.PRESET_CHOICES}


# -- handlers -------------------------------------------------------------------------

LOAD_FIELDS = [
    "models", "split", "categories", "n", "seed", "banner", *GEN_KEYS[:6], "system", "reasoning_effort", "follow_up",
    "settle", "settle_touched", "judge", "prompts", "prompt_col", "category_col", "label_col", "notice",
]  # fmt: skip


def loaded(playground, **params: str) -> dict:
    out = playground.on_load(None, stub_request(**params))
    assert len(out) == len(LOAD_FIELDS)
    return dict(zip(LOAD_FIELDS, out, strict=True))


def test_on_load_prefills_generation_settings(playground):
    out = loaded(playground, models="a", preset="safety", temperature="0.7", repeats="3")
    assert (out["preset"], out["temperature"], out["repeats"]) == ("safety", "0.7", 3)
    assert (out["top_p"], out["max_tokens"], out["focus"]) == ("", GenerationParams().max_tokens, False)
    assert "⚠" not in out["banner"]
    out = loaded(playground, top_p="0.9", max_tokens="256", focus="1", temperature="0")
    assert (out["top_p"], out["max_tokens"], out["focus"], out["temperature"]) == ("0.9", 256, True, "0")


def test_on_load_without_settings_gives_defaults_and_warns_about_bad_ones(playground):
    out = loaded(playground)
    assert [out[k] for k in GEN_KEYS] == ["none", "", "", GenerationParams().max_tokens, 1, False, ""]
    out = loaded(playground, preset="bogus", temperature="9")
    assert out["preset"] == "none" and out["temperature"] == "2"
    assert "bogus" in out["banner"] and "temperature" in out["banner"]


def test_share_link_reads_the_settings(playground):
    base = "http://h/"
    plain = playground.share_link(["a", "b"], PAIR, [], 1, 0, base, None)
    assert plain == base + CONTRACT
    # The page's own defaults (as the controls hold them) give the same link.
    page_defaults = ("none", "", "", 512, 1, False)
    assert (
        playground.share_link(["a", "b"], PAIR, [], 1, 0, base, None, page_defaults[0], "", *page_defaults[1:]) == plain
    )
    link = playground.share_link(
        ["a"], "toxic", ["privacy"], 2, 7, base, None, "safety", "", "0.7", "0.9", 256.0, 3, True
    )
    assert (
        link
        == base
        + "?models=a&split=toxic&categories=privacy&n=2&seed=7&preset=safety&temperature=0.7&top_p=0.9&max_tokens=256&repeats=3&focus=1"
    )


def test_on_load_fills_the_split_list_and_the_banner_covers_each_split(playground, monkeypatch):
    out = loaded(playground)
    assert out["split"] == PAIR and "Split" not in out["banner"]  # the shipped pair needs no notice
    out = loaded(playground, split="hard-1k,80k")
    assert out["split"] == ["hard-1k", "80k"]
    assert "Split 80k is a partial sample" in out["banner"]  # ORBENCH_DATA_DIR holds the partial file
    monkeypatch.delenv("ORBENCH_DATA_DIR")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    out = loaded(playground, split="toxic,80k")
    assert out["banner"].count("Split ") == 1 and "Split 80k streams from the Hugging Face Hub" in out["banner"]
    assert playground.share_link(["a"], out["split"], [], 1, 0, "/", None).startswith("/?models=a&split=toxic,80k&")
    assert playground.share_link(["a"], [], [], 1, 0, "/", None).startswith("/?models=a&split=hard-1k,toxic&")


def test_share_link_carries_a_custom_system_prompt_capped_as_in_the_form(playground):
    link = playground.share_link(
        ["a"], "hard-1k", [], 1, 0, "/", None, "safety", "  Be terse & safe?  ", "0.7", "", 512, 1, False
    )
    assert (
        link == "/?models=a&split=hard-1k&categories=all&n=1&seed=0&temperature=0.7&system=Be%20terse%20%26%20safe%3F"
    )
    assert "preset" not in link  # the custom prompt wins over the preset, so the preset is not shared
    out = loaded(playground, **dict(parse_qsl(link[2:])))
    assert out["system"] == "Be terse & safe?" and out["preset"] == "none" and "⚠" not in out["banner"]
    # Longer than the form takes: cut in a link made here, refused with a warning in a link made by hand.
    long = "x" * (query.MAX_SYSTEM_CHARS + 10)
    made = playground.share_link(["a"], "hard-1k", [], 1, 0, "/", None, "none", long, "", "", 512, 1, False)
    assert made.endswith("&system=" + "x" * query.MAX_SYSTEM_CHARS)
    out = loaded(playground, models="a", system=long)
    assert out["system"] == "" and "Ignored the link&#x27;s system prompt" in out["banner"]
    # Unparseable numbers are left out rather than breaking the link.
    assert playground.share_link(["a"], "hard-1k", [], 1, 0, "/", None, "nope", "", "hot", "nan", 512, 1, None) == (
        "/?models=a&split=hard-1k&categories=all&n=1&seed=0"
    )


def test_share_box_says_which_custom_endpoints_were_left_out_and_why(playground):
    from orbench_play.models import custom_endpoint
    from orbench_play.ui.state.session import Session

    sess = Session()
    spec = custom_endpoint("https://models.example.com/v1", "mine", "sk-secret-key")
    sess.extra_models[spec.name] = spec
    box, size = playground.share_box(["a", spec.name], "hard-1k", [], 1, 0, "/", sess)
    assert 'data-cells="' in size  # the next run's size goes with it
    assert box["value"] == "/?models=a&split=hard-1k&categories=all&n=1&seed=0"
    assert spec.name in box["info"] and "API keys are never put in links" in box["info"]
    assert "sk-secret-key" not in str(box) and "models.example.com/v1" not in box["value"]
    plain, _ = playground.share_box(["a"], "hard-1k", [], 1, 0, "/", sess)
    assert "Left out" not in plain["info"] and "custom system prompt" in plain["info"]


def test_on_load_then_share_link_reproduces_the_link(playground):
    link = to_query(**asdict(EVERYTHING))
    out = loaded(playground, **dict(parse_qsl(link[1:])))
    models = out["models"]["value"] if isinstance(out["models"], dict) else out["models"]
    again = playground.share_link(
        models, out["split"], out["categories"], out["n"], out["seed"], "/", None,
        out["preset"], "", out["temperature"], out["top_p"], out["max_tokens"], out["repeats"], out["focus"],
        out["reasoning_effort"],
    )  # fmt: skip
    assert again == "/" + link and "reasoning_effort=high" in link


def test_settings_are_wired_to_the_share_link_and_the_load_handler(playground):
    from orbench_play.ui.layout import build_blocks

    demo = build_blocks(playground)
    gen_ids = [
        "system_preset", "system_custom", "temperature", "top_p", "max_tokens", "repeats", "focus", "reasoning_effort",
        "follow_up_preset", "settle",
    ]  # fmt: skip

    def ids(components):
        return [getattr(c, "elem_id", None) for c in components]

    share_fns = [f for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "share_box"]
    # Then Verdicts by, the prompt set and its columns, and the switch's "set by the visitor" state.
    after = ["judge", "prompt_set", "prompt_col", "category_col", "label_col", None]
    assert share_fns and all(ids(f.inputs)[7:] == [*gen_ids, *after] for f in share_fns)
    refreshed = {demo.blocks[block].elem_id for f in share_fns for block, event in f.targets if event == "input"}
    assert set(gen_ids) <= refreshed
    (load,) = [f for f in demo.fns.values() if getattr(f.fn, "__name__", "") == "on_load"]
    assert ids(load.outputs)[6:] == [
        "system_preset", "temperature", "top_p", "max_tokens", "repeats", "focus", "system_custom",
        "reasoning_effort", "follow_up_preset", "settle", None,  # None: the switch's "set by the visitor or a link" state
        "judge", "prompt_set", "prompt_col", "category_col", "label_col", None,  # None: the notice after a reload
    ]  # fmt: skip


# -- the judge and the prompt set travel; what cannot is named (issue 47, defect 3) ---------------


@pytest.fixture
def judged_playground():
    from orbench_play.models import bare_model
    from orbench_play.ui.handlers.playground import Playground

    return Playground(Catalog(entries={"judge-model": bare_model("openai/judge-model"), "a": bare_model("openai/a")}))


def share(pg, sess, *, models=("a",), judge="", prompt_set="", prompt_col="prompt", category_col="", label_col=""):
    """`share_box` as the page calls it: the defaults of the page's controls, then these."""
    settings = ["none", "", "", "", 512, 1, False, "", "clarify", False]
    return pg.share_box(
        list(models), PAIR, [], 1, 0, "/", sess, *settings, judge, prompt_set, prompt_col, category_col, label_col,
        False,
    )  # fmt: skip


def test_the_link_carries_the_judge_and_a_hub_prompt_set_and_they_open_again(judged_playground):
    """The link dropped both, and its note named only custom endpoints."""
    from orbench_play.ui.state.session import Session

    box, _ = share(
        judged_playground, Session(), judge="judge-model", prompt_set="owner/name:main:test", label_col="lbl"
    )
    link = box["value"]
    assert link.startswith("/" + CONTRACT.replace("models=a,b", "models=a"))
    assert "&judge=judge-model&prompts=owner/name:main:test&label_col=lbl" in link
    assert "Left out" not in box["info"] and "Verdicts by" in box["info"]
    out = loaded(judged_playground, **dict(parse_qsl(link.split("?", 1)[1])))
    assert (out["judge"], out["prompts"], out["prompt_col"], out["label_col"]) == (
        "judge-model",
        "owner/name:main:test",
        "prompt",
        "lbl",
    )
    # The default judge is not written; a judge this page does not offer opens as the default, said so.
    box, _ = share(judged_playground, Session(), judge="keyword")
    assert "judge=" not in box["value"]
    out = loaded(judged_playground, models="a", judge="gpt-5-judge")
    assert out["judge"] == "keyword" and "Ignored judge=" in out["banner"]


def test_the_note_names_everything_a_link_leaves_out(judged_playground, tmp_path):
    from orbench_play.models import custom_endpoint
    from orbench_play.ui.state.session import Session

    sess = Session()
    spec = custom_endpoint("https://models.example.com/v1", "mine", "sk-secret-key")
    sess.extra_models[spec.name] = spec
    local = tmp_path / "mine.csv"
    local.write_text("prompt\nhello\n", encoding="utf-8")
    box, _ = share(judged_playground, sess, models=("a", spec.name), judge="judge-model", prompt_set=str(local))
    assert "prompts=" not in box["value"] and str(tmp_path) not in box["value"]
    assert "judge=judge-model" in box["value"]
    info = box["info"]
    assert f"{spec.name} (custom endpoint)" in info and f"{local} (prompt set on this machine)" in info
    assert "API keys are never put in links" in info and "Only a prompt set on the Hub" in info


# -- a reload gives the set-up back (issue 47, defect 1) -------------------------------------------


def reloaded(pg, sess, request, notice: str) -> dict:
    return dict(zip(LOAD_FIELDS, pg.on_load(sess, request, notice), strict=True))


def test_a_reload_gives_back_the_controls_the_session_showed_and_says_so(judged_playground, tmp_path):
    """A reload brought the results back but reset the set-up (SmolLM2 alone, the offline
    classifier, no prompt set) while saying "Restored"; Run then ran a different set-up."""
    from orbench_play.models import custom_endpoint
    from orbench_play.ui.state import resume
    from orbench_play.ui.state.session import Session

    sess = Session()
    spec = custom_endpoint("https://models.example.com/v1", "mine", "sk-secret-key")
    sess.extra_models[spec.name] = spec
    share(judged_playground, sess, models=(spec.name,), judge="judge-model", prompt_set="owner/name", label_col="x")
    sess.controls["temperature"], sess.controls["n"] = "0.3", 4
    out = reloaded(judged_playground, sess, stub_request(), resume.RESTORED)
    assert out["models"]["value"] == [spec.name] and (spec.display, spec.name) in out["models"]["choices"]
    assert (out["judge"], out["prompts"], out["label_col"], out["temperature"], out["n"]) == (
        "judge-model",
        "owner/name",
        "x",
        "0.3",
        4,
    )
    assert out["notice"] == resume.RESTORED_SETUP and "Not kept" in out["notice"]
    # Opened at another link: the link's set-up, and the notice says whose it is.
    out = reloaded(judged_playground, sess, stub_request(models="a", n="2"), resume.RESTORED)
    assert out["models"]["value"] == ["a"] and out["n"] == 2 and out["notice"] == resume.RESTORED_LINK
    # A fresh page (nothing restored) keeps the defaults and says nothing.
    out = reloaded(judged_playground, Session(), stub_request(), "")
    assert out["judge"] == "keyword" and out["prompts"] == "" and out["notice"] == ""


# -- the next run's size and cost, before Run (issue 47, defect 8) ---------------------------------


def test_the_next_runs_cells_and_cost_are_known_before_run(judged_playground, monkeypatch):
    from orbench_play.models import bare_model
    from orbench_play.ui.state.session import Session

    judged_playground.catalog.entries["gpt-4o-mini"] = bare_model("gpt-4o-mini")
    _, size = share(judged_playground, Session(), models=("gpt-4o-mini", "a"))
    # 2 splits × 10 categories × 1 prompt, 2 models; gpt-4o-mini at LiteLLM's listed price, 512 tokens each.
    assert 'data-cells="40"' in size and "40 cells (20 prompts × 2 models)" in size
    bound = 20 * (120 * 0.15e-6 + 512 * 0.6e-6)
    assert f"up to ${bound:.2f}" in size.replace("&#36;", "$") or "under $0.01" in size.replace("&#36;", "$")
    assert "no listed price for openai/a" in size  # its display name
    monkeypatch.setenv("ORBENCH_PUBLIC", "1")
    monkeypatch.setenv("ORBENCH_MAX_CELLS", "30")
    _, size = share(judged_playground, Session(), models=("gpt-4o-mini", "a"))
    assert 'data-over="1"' in size and "more than this demo" in size
