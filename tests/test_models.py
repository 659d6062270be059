"""The model catalog: YAML model_list, env-key presets, bare strings, custom endpoints."""

from __future__ import annotations

import pytest

from orbench_play.models import PRESETS, CatalogError, custom_endpoint, load_catalog, load_model_list


def write(tmp_path, text: str):
    path = tmp_path / "models.yaml"
    path.write_text(text)
    return path


def test_model_list_entries_with_env_keys(tmp_path):
    path = write(
        tmp_path,
        """
model_list:
  - model_name: fast
    litellm_params:
      model: openai/gpt-4o-mini
      api_key: os.environ/MY_KEY
      temperature: 0.2
      rpm: 100
  - model_name: local-vllm
    litellm_params:
      model: openai/qwen
      api_base: http://127.0.0.1:8000/v1
      max_parallel_requests: 3
""",
    )
    specs, warnings = load_model_list(path, env={"MY_KEY": "sk-abc"})
    fast, local = specs
    assert fast.name == "fast" and fast.litellm_model == "openai/gpt-4o-mini" and fast.api_key == "sk-abc"
    assert fast.extra == (("temperature", 0.2),) and fast.owner_configured and fast.error is None
    assert local.api_base == "http://127.0.0.1:8000/v1" and local.max_concurrency == 3
    assert warnings == []
    assert "sk-abc" not in repr(fast)


def test_missing_env_key_is_a_per_model_error_not_a_crash(tmp_path):
    path = write(
        tmp_path,
        "model_list:\n  - model_name: a\n    litellm_params: {model: openai/x, api_key: os.environ/NOPE_KEY}\n",
    )
    (spec,), warnings = load_model_list(path, env={})
    assert spec.error and "NOPE_KEY" in spec.error
    assert warnings == [spec.error]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("model_list: [", "not valid YAML"),
        ("models: []", "model_list"),
        ("model_list:\n  - model_name: a\n", "litellm_params"),
        ("model_list:\n  - litellm_params: {model: x}\n", "model_name"),
    ],
)
def test_bad_config_names_file_and_problem(tmp_path, text, fragment):
    path = write(tmp_path, text)
    with pytest.raises(CatalogError) as info:
        load_model_list(path)
    assert str(path) in str(info.value) and fragment in str(info.value)


def test_missing_config_file(tmp_path):
    with pytest.raises(CatalogError, match="does not exist"):
        load_catalog(tmp_path / "nope.yaml", env={}, include_local=False)


def test_presets_appear_only_with_their_key():
    assert load_catalog(env={}, include_local=False).names() == []
    names = load_catalog(env={"GROQ_API_KEY": "x", "HF_TOKEN": "y"}, include_local=False).names()
    assert names == [p.name for p in PRESETS if p.env_var in ("GROQ_API_KEY", "HF_TOKEN")]
    providers = {p.env_var for p in PRESETS}
    for env_var in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "GROQ_API_KEY",
        "MISTRAL_API_KEY",
        "OPENROUTER_API_KEY",
        "HF_TOKEN",
    ):
        assert env_var in providers
    assert {"TOGETHER_API_KEY", "TOGETHERAI_API_KEY"} & providers


def test_config_entries_override_presets_and_env_var_default(tmp_path, monkeypatch):
    path = write(
        tmp_path,
        "model_list:\n  - model_name: gpt-4o-mini\n    litellm_params: {model: openai/gpt-4o-mini, api_base: http://proxy/v1}\n",
    )
    monkeypatch.setenv("ORBENCH_MODELS", str(path))
    catalog = load_catalog(env={"ORBENCH_MODELS": str(path), "OPENAI_API_KEY": "k"}, include_local=False)
    assert catalog.resolve("gpt-4o-mini").api_base == "http://proxy/v1"
    assert catalog.names().count("gpt-4o-mini") == 1


def test_bare_strings_resolve_as_litellm_models():
    spec = load_catalog(env={}, include_local=False).resolve("groq/llama-3.1-8b-instant")
    assert spec.litellm_model == "groq/llama-3.1-8b-instant" and not spec.owner_configured
    with pytest.raises(CatalogError):
        load_catalog(env={}, include_local=False).resolve("  ")


def test_custom_endpoint():
    spec = custom_endpoint("http://10.0.0.5:8000/v1/", "my-finetune", None)
    assert spec.name == "custom/my-finetune@10.0.0.5:8000"
    assert spec.litellm_model == "openai/my-finetune" and spec.api_base == "http://10.0.0.5:8000/v1"
    assert spec.api_key == "none"
    for url in ("ftp://x/v1", "not a url", ""):
        with pytest.raises(CatalogError):
            custom_endpoint(url, "m")
    with pytest.raises(CatalogError):
        custom_endpoint("http://h/v1", " ")


def test_local_model_is_listed_first_with_an_honest_label():
    catalog = load_catalog(env={}, include_local=True)
    first = catalog.entries[catalog.names()[0]]
    assert first.name == "local/smollm2-135m" and first.is_local
    assert "not safety-tuned" in first.label
