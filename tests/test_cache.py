"""Cache keys: what changes the key and what must not; failure tolerance."""

from __future__ import annotations

from orbench_play.cache import CachedAnswer, ResultCache, cell_key, judge_key
from orbench_play.types import GenerationParams, ModelSpec

MODEL = ModelSpec(name="m", litellm_model="openai/m", api_base="http://h:1/v1", api_key="sk-one")
MSGS = [{"role": "user", "content": "hi"}]
PARAMS = GenerationParams()


def test_key_is_stable_and_never_holds_the_api_key():
    same_model_same_key = ModelSpec(name="m", litellm_model="openai/m", api_base="http://h:1/v1", api_key="sk-one")
    assert cell_key(MODEL, MSGS, PARAMS) == cell_key(same_model_same_key, MSGS, PARAMS)
    assert "sk-one" not in cell_key(MODEL, MSGS, PARAMS)
    # The owner's entries ignore the key (shared by design); see test_cache_isolation.py for visitors'.
    owner_one = ModelSpec(name="m", litellm_model="openai/m", api_key="sk-one", owner_configured=True)
    owner_two = ModelSpec(name="m", litellm_model="openai/m", api_key="sk-two", owner_configured=True)
    assert cell_key(owner_one, MSGS, PARAMS) == cell_key(owner_two, MSGS, PARAMS)


def test_display_name_does_not_change_the_key():
    relabelled = ModelSpec(
        name="other-name", litellm_model="openai/m", api_base="http://h:1/v1", label="Nice", api_key="sk-one"
    )
    assert cell_key(MODEL, MSGS, PARAMS) == cell_key(relabelled, MSGS, PARAMS)


def test_everything_that_changes_the_answer_changes_the_key():
    base = cell_key(MODEL, MSGS, PARAMS)
    variants = [
        cell_key(ModelSpec(name="m", litellm_model="openai/other", api_base="http://h:1/v1"), MSGS, PARAMS),
        cell_key(ModelSpec(name="m", litellm_model="openai/m", api_base="http://h:2/v1"), MSGS, PARAMS),
        cell_key(
            ModelSpec(name="m", litellm_model="openai/m", api_base="http://h:1/v1", extra=(("seed", 1),)), MSGS, PARAMS
        ),
        cell_key(MODEL, [{"role": "user", "content": "hi!"}], PARAMS),
        cell_key(MODEL, [{"role": "system", "content": "be safe"}, *MSGS], PARAMS),
        cell_key(MODEL, MSGS, GenerationParams(temperature=0.5)),
        cell_key(MODEL, MSGS, GenerationParams(top_p=0.5)),
        cell_key(MODEL, MSGS, GenerationParams(max_tokens=100)),
        cell_key(MODEL, MSGS, PARAMS, repeat=1),
    ]
    assert len(set(variants)) == len(variants)
    assert base not in variants


def test_local_model_key_does_not_depend_on_its_port():
    a = ModelSpec(name="local", litellm_model="openai/smol", api_base="http://127.0.0.1:1111/v1", is_local=True)
    b = ModelSpec(name="local", litellm_model="openai/smol", api_base="http://127.0.0.1:2222/v1", is_local=True)
    assert cell_key(a, MSGS, PARAMS) == cell_key(b, MSGS, PARAMS)


def test_judge_key_depends_on_judge_and_messages():
    j = ModelSpec(name="j", litellm_model="openai/j")
    assert judge_key(j, MSGS) != judge_key(ModelSpec(name="j", litellm_model="openai/k"), MSGS)
    assert judge_key(j, MSGS) != judge_key(j, [{"role": "user", "content": "other"}])
    assert judge_key(j, MSGS) != cell_key(j, MSGS, PARAMS)


def test_round_trip_and_persistence(tmp_path):
    answer = CachedAnswer("text", "stop", 3, 0.001, 0.5, 0.1)
    cache = ResultCache(tmp_path)
    cache.put_answer("k", answer)
    cache.close()
    reopened = ResultCache(tmp_path)
    assert reopened.get_answer("k") == answer
    assert reopened.get_answer("missing") is None


def test_corrupt_cache_is_reported_and_the_run_goes_on(tmp_path):
    (tmp_path / "cache.db").write_bytes(b"this is not a sqlite database" * 100)
    cache = ResultCache(tmp_path)
    assert not cache.enabled
    assert cache.warning and "Cache disabled" in cache.warning and str(tmp_path) in cache.warning
    cache.put_answer("k", CachedAnswer("t", "stop", 1, 0.0, 0.1, 0.1))  # no exception
    assert cache.get_answer("k") is None


def test_unwritable_location_is_reported(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    cache = ResultCache(blocker / "sub")
    assert not cache.enabled and cache.warning


def test_size_limit_evicts_oldest_first(tmp_path):
    cache = ResultCache(tmp_path, size_limit_mb=1)
    body = "x" * 20_000
    for i in range(150):  # ~3 MB written into a 1 MB cache
        cache.put_answer(f"k{i}", CachedAnswer(body + str(i), "stop", 1, 0.0, 0.1, 0.1))
    assert cache._cache.volume() <= 1.5 * 1024 * 1024
    assert cache.get_answer("k149") is not None
    assert cache.get_answer("k0") is None
    assert len(cache) < 150


def test_chat_messages_encode_exactly_as_the_canonical_json():
    """A run's keys assemble the messages' JSON by hand: it must be the same text
    json.dumps writes, or every cached answer would stop matching."""
    from orbench_play.cache.store import _canonical, _canonical_messages

    for messages in (
        [],
        [{"role": "user", "content": "x"}],
        [
            {"role": "system", "content": "Be safe ü \u202e"},
            {"content": 'Wie "geht\'s"?\n\t\x00 \ud800 \\ / 😀', "role": "user"},
        ],
        [{"role": "user", "content": "a", "name": "n"}],  # another key: the general encoder
        [{"role": "user", "content": ["a", 1]}],  # content parts, not a string
    ):
        assert _canonical_messages(messages) == _canonical(messages)


def test_run_keys_equal_the_reference_key():
    from orbench_play.cache import CellKeys

    for params in (
        PARAMS,
        GenerationParams(system_prompt="Be safe ü", system_prompt_id="x", temperature=0.7, top_p=0.9, max_tokens=9),
    ):
        keys = CellKeys(params)
        for model in (
            MODEL,
            ModelSpec(
                name="local",
                litellm_model="openai/s",
                api_base="http://127.0.0.1:1/v1",
                is_local=True,
                extra=(("seed", 3),),
            ),
        ):
            for repeat in (0, 4):
                msgs = params.messages("Wie geht's? \u202e <b>")
                assert keys.key(model, msgs, repeat) == cell_key(model, msgs, params, repeat)
