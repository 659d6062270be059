"""Issue 13, item 4: visitors must not read each other's private-endpoint answers.

Visitor A asks a key-protected endpoint and gets an answer; visitor B asks
the same endpoint with no key or a wrong one. B must be sent to the endpoint
(which refuses B), not served A's answer from the cache; A replays it. The
credential scopes the entry through an HMAC under a per-installation secret
kept in the cache folder (mode 0600); the key itself is never stored. The
owner's models and presets stay shared across visitors, by design.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat

from test_secrets import files_containing, planted_key

from orbench_play import engine
from orbench_play.cache import ResultCache, cell_key, default_cache_dir, judge_key
from orbench_play.cache import scope as cache_scope
from orbench_play.models import bare_model, custom_endpoint
from orbench_play.types import GenerationParams, ModelSpec, Prompt, RunConfig

PROMPT = Prompt("hard-1k:7", "hard-1k", "privacy", "Where can I read about data brokers?")
MESSAGES = [{"role": "user", "content": "hi"}]


async def _ask(spec: ModelSpec, cache: ResultCache):
    config = RunConfig(models=(spec,), prompts=(PROMPT,), timeout_s=5, max_retries=0)
    (result,) = await engine.collect(config, cache=cache)
    return result


async def test_a_private_endpoints_answer_is_served_only_to_its_key_holder(fake, tmp_path, no_egress):
    key_a = planted_key()
    fake.required_key = key_a
    fake.set_text("answer", "A's private answer: the secret recipe is 42.")
    cache = ResultCache(tmp_path / "cache")

    a = await _ask(custom_endpoint(fake.base_url, "answer", key_a), cache)
    assert a.ok and "secret recipe" in a.response and not a.cached
    assert fake.request_count() == 1

    for other in (None, "", "sk-wrong", key_a + "x"):
        b = await _ask(custom_endpoint(fake.base_url, "answer", other), cache)
        assert not b.cached and "secret recipe" not in b.response, other
        assert b.verdict == "error" and "uthentication" in b.error, b.error  # the endpoint refused B
    assert fake.request_count() == 5

    again = await _ask(custom_endpoint(fake.base_url, "answer", key_a), cache)
    assert again.cached and again.response == a.response
    assert fake.request_count() == 5  # A's replay asked nobody
    cache.close()

    secret = cache_scope.installation_secret()
    scope = hmac.new(secret, key_a.encode(), hashlib.sha256).hexdigest()
    for folder in (tmp_path / "cache", default_cache_dir()):
        assert files_containing(folder, key_a) == [], folder
        assert files_containing(folder, scope) == [], folder  # not even the keyed hash is stored


def test_the_secret_lives_beside_the_cache_with_mode_0600_and_survives_restarts(tmp_path, monkeypatch):
    monkeypatch.setattr(cache_scope, "_secrets", {})
    secret = cache_scope.installation_secret(tmp_path)
    path = tmp_path / cache_scope.CREDENTIAL_KEY_FILE
    assert path.read_bytes() == secret and len(secret) == 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left behind
    monkeypatch.setattr(cache_scope, "_secrets", {})  # a new process reads the same secret
    assert cache_scope.installation_secret(tmp_path) == secret
    os.chmod(path, 0o644)
    monkeypatch.setattr(cache_scope, "_secrets", {})
    assert cache_scope.installation_secret(tmp_path) == secret
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # closed again


def test_an_unusable_secret_location_falls_back_to_a_process_secret(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(cache_scope, "_secrets", {})
    blocker = tmp_path / "file"
    blocker.write_text("x")
    secret = cache_scope.installation_secret(blocker / "cache")
    assert len(secret) == 32 and "for this process only" in caplog.text
    assert cache_scope.installation_secret(blocker / "cache") == secret


def test_visitor_endpoint_keys_depend_on_the_credential_and_nothing_else_does():
    params = GenerationParams()
    a = custom_endpoint("https://api.example/v1", "m", "sk-a")
    assert cell_key(a, MESSAGES, params) == cell_key(
        custom_endpoint("https://api.example/v1", "m", "sk-a"), MESSAGES, params
    )
    for other in (None, "sk-b", "SK-A"):
        assert cell_key(a, MESSAGES, params) != cell_key(
            custom_endpoint("https://api.example/v1", "m", other), MESSAGES, params
        )
    judge_a = custom_endpoint("https://judge.example/v1", "j", "sk-a")
    judge_b = custom_endpoint("https://judge.example/v1", "j", "sk-b")
    assert judge_key(judge_a, MESSAGES) != judge_key(judge_b, MESSAGES)
    # Shared on purpose: the owner's entries, presets and bare strings run on the owner's keys.
    owner = [
        ModelSpec("o", "openai/m", api_base="https://api.example/v1", api_key=k, owner_configured=True)
        for k in ("sk-1", "sk-2")
    ]
    assert cell_key(owner[0], MESSAGES, params) == cell_key(owner[1], MESSAGES, params)
    assert judge_key(owner[0], MESSAGES) == judge_key(owner[1], MESSAGES)
    assert cache_scope.credential_scope(bare_model("openai/gpt-4o-mini")) is None
    local = ModelSpec("local", "openai/s", api_base="http://127.0.0.1:1/v1", api_key="none", is_local=True)
    assert cache_scope.credential_scope(local) is None
