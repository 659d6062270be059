"""Issue 11 item 3: time limits that fit streaming and max tokens per model, set
by CLI flag, environment variable or model_list entry."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from orbench_play import engine
from orbench_play.cache import cell_key
from orbench_play.cli import build_parser
from orbench_play.engine.timeouts import Limits, StreamTimeout, Watchdog, limits_for
from orbench_play.models import CatalogError, embedded, load_model_list, local_spec
from orbench_play.types import DEFAULT_MAX_TOKENS, GenerationParams, ModelSpec, Prompt, RunConfig

PROMPT = Prompt("hard-1k:3", "hard-1k", "privacy", "How long do websites keep my data?")


def _limits(env=None, **kw) -> Limits:
    args = {
        "run_timeout_s": None,
        "run_idle_s": None,
        "run_token_s": None,
        "model_timeout_s": None,
        "model_idle_s": None,
        "model_token_s": None,
        "max_tokens": 512,
    }
    args.update(kw)
    return limits_for(env=env or {}, **args)


def test_defaults_never_cut_an_answer_that_is_still_arriving():
    limits = _limits()
    assert (limits.first_s, limits.idle_s) == (60.0, 30.0)
    assert limits.total_s == 60.0 + 512 * 1.0  # at least one token a second always finishes


def test_precedence_run_then_model_then_environment_then_default():
    env = {"ORBENCH_TIMEOUT_S": "40", "ORBENCH_IDLE_TIMEOUT_S": "20", "ORBENCH_TOKEN_TIMEOUT_S": "0.5"}
    assert _limits(env) == Limits(40.0, 20.0, 40.0 + 256.0)
    assert _limits(env, model_timeout_s=50.0, model_idle_s=10.0, model_token_s=0.0) == Limits(50.0, 10.0, 50.0)
    assert _limits(env, model_timeout_s=50.0, run_timeout_s=5.0, run_idle_s=2.0, run_token_s=0.1) == Limits(
        5.0, 2.0, 5.0 + 51.2
    )


def test_the_idle_limit_never_exceeds_the_first_chunk_limit():
    assert _limits(run_timeout_s=2.0).idle_s == 2.0


def test_nonsense_in_the_environment_falls_back_to_the_default():
    assert _limits({"ORBENCH_TIMEOUT_S": "soon"}).first_s == 60.0


async def test_the_watchdog_lets_an_outside_cancel_through():
    inside = asyncio.Event()

    async def guarded():
        async with Watchdog(Limits(5.0, 5.0, 5.0)):
            inside.set()
            await asyncio.sleep(10)

    task = asyncio.create_task(guarded())
    await inside.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_the_watchdog_says_which_limit_fired():
    async def guarded(limits, feed_every=None):
        async with Watchdog(limits) as dog:
            loop = asyncio.get_running_loop()
            for _ in range(100):
                if feed_every:
                    dog.last = loop.time()
                await asyncio.sleep(feed_every or 1)

    with pytest.raises(StreamTimeout, match="waiting for the answer to start"):
        await guarded(Limits(0.1, 0.1, 5.0))
    with pytest.raises(StreamTimeout, match="the limit for this answer's length"):
        await guarded(Limits(0.2, 0.2, 0.3), feed_every=0.05)


# -- model_list and the embedded model ---------------------------------------------------


def _yaml(tmp_path, params: str, info: str = "") -> str:
    path = tmp_path / "models.yaml"
    path.write_text(
        "model_list:\n  - model_name: m\n    litellm_params:\n      model: openai/x\n"
        + "".join(f"      {line}\n" for line in params.splitlines())
        + (("    model_info:\n" + "".join(f"      {line}\n" for line in info.splitlines())) if info else "")
    )
    return str(path)


def test_the_model_list_sets_a_models_limits_and_max_tokens(tmp_path):
    path = _yaml(
        tmp_path, "max_tokens: 300\ntimeout: 90\nstream_timeout: 15\ntemperature: 0.2", "timeout_per_token: 0.5"
    )
    (spec,), _ = load_model_list(path, env={})
    assert (spec.max_tokens, spec.timeout_s, spec.idle_timeout_s, spec.token_timeout_s) == (300, 90.0, 15.0, 0.5)
    assert dict(spec.extra) == {"temperature": 0.2}  # the engine sends its own max_tokens and timeout


@pytest.mark.parametrize(
    "params, info, field",
    [
        ("max_tokens: lots", "", "litellm_params.max_tokens"),
        ("max_tokens: 2.5", "", "litellm_params.max_tokens"),
        ("timeout: -1", "", "litellm_params.timeout"),
        ("stream_timeout: .nan", "", "litellm_params.stream_timeout"),
        ("timeout: 1e400", "", "litellm_params.timeout"),
        ("", "timeout_per_token: -0.1", "model_info.timeout_per_token"),
    ],
)
def test_a_bad_limit_in_the_model_list_is_a_one_line_error(tmp_path, params, info, field):
    with pytest.raises(CatalogError, match=field.replace(".", r"\.")):
        load_model_list(_yaml(tmp_path, params or "api_key: x", info), env={})


def test_each_model_has_its_own_default_max_tokens(fake):
    local = local_spec()
    assert local is not None and local.max_tokens == embedded.DEFAULT_MAX_TOKENS
    remote = ModelSpec("r", "openai/r")
    own = GenerationParams(max_tokens=None)
    assert own.max_tokens_for(local) == embedded.DEFAULT_MAX_TOKENS
    assert own.max_tokens_for(remote) == DEFAULT_MAX_TOKENS
    assert GenerationParams(max_tokens=77).max_tokens_for(local) == 77
    # "the model's own" shares cache entries with runs that asked for that number
    messages = own.messages(PROMPT.text)
    assert cell_key(remote, messages, own) == cell_key(remote, messages, GenerationParams())
    assert cell_key(local, messages, own) != cell_key(local, messages, GenerationParams())


async def test_a_models_own_max_tokens_reach_the_provider(fake):
    spec = ModelSpec("echo", "openai/echo", api_base=fake.base_url, api_key="sk", max_tokens=123)
    config = RunConfig(models=(spec,), prompts=(PROMPT,), params=GenerationParams(max_tokens=None), use_cache=False)
    (result,) = await engine.collect(config)
    assert result.ok and fake.requests[0].params["max_tokens"] == 123


async def test_a_models_own_idle_limit_applies(fake):
    spec = ModelSpec("hm", "openai/hang-mid", api_base=fake.base_url, api_key="sk", idle_timeout_s=0.3)
    (result,) = await engine.collect(RunConfig(models=(spec,), prompts=(PROMPT,), use_cache=False))
    assert result.error.startswith("Timed out: no new text for 0.3 s")


# -- the CLI --------------------------------------------------------------------------------


def test_cli_flags_reach_the_run():
    args = build_parser().parse_args(
        [
            "run",
            "--model",
            "x",
            "--split",
            "hard-1k",
            "--n",
            "1",
            "--timeout",
            "9",
            "--idle-timeout",
            "3",
            "--token-timeout",
            "0",
        ]
    )
    assert (args.timeout, args.idle_timeout, args.token_timeout, args.max_tokens) == (9.0, 3.0, 0.0, None)


@pytest.mark.parametrize(
    "extra, env, reason",
    [
        (["--idle-timeout", "nan"], {}, "--idle-timeout"),
        (["--idle-timeout", "0"], {}, "--idle-timeout"),
        (["--token-timeout", "-1"], {}, "--token-timeout"),
        ([], {"ORBENCH_IDLE_TIMEOUT_S": "inf"}, "ORBENCH_IDLE_TIMEOUT_S"),
        ([], {"ORBENCH_TIMEOUT_S": "soon"}, "ORBENCH_TIMEOUT_S"),
    ],
)
def test_cli_refuses_limits_it_cannot_use(tmp_path, extra, env, reason):
    import os

    proc = subprocess.run(
        [sys.executable, "-m", "orbench_play", "run", "--model", "x", "--split", "hard-1k", "--n", "1", *extra],
        capture_output=True,
        text=True,
        env={**os.environ, **env, "ORBENCH_CACHE_DIR": str(tmp_path)},
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr[-500:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and reason in lines[0], proc.stderr
