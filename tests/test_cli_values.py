"""Issue 13 item 9 and issue 11's CLI rough edges: values the run cannot use
are refused before it starts, with exit 2 and one line.

- numbers: NaN and infinities, and values out of range, for --timeout,
  --temperature and --top-p;
- --out: only .csv or .jsonl, a file (not a folder) in a folder that exists
  and can be written (tried before the run), and no folder is ever created;
- --system-prompt @FILE: only a regular file, at most 64 KiB, UTF-8 text (a
  device or a pipe used to hang); a single word close to a preset is a typo.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from orbench_play import cli
from orbench_play.asking.prompts import SYSTEM_PROMPTS, PromptError, read_prompt_file, resolve_system_prompt
from orbench_play.cli import args as cli_args


@pytest.fixture
def config(tmp_path, fake):
    path = tmp_path / "models.yaml"
    path.write_text(
        f"model_list:\n  - model_name: bot\n    litellm_params: {{model: openai/answer, api_base: '{fake.base_url}', api_key: sk-fake}}\n"
    )
    return path


def run_cli(config: Path, *extra: str) -> list[str]:
    return ["run", "--config", str(config), "--model", "bot", "--split", "hard-1k", "--n", "1", "--quiet", *extra]


def refused(capsys, argv, fragment):
    code = cli.main(argv)
    err = capsys.readouterr().err.strip()
    assert code == 2, (code, err[-500:])
    assert "\n" not in err and err.startswith("orbench-play: error:") and fragment in err, err


BAD_NUMBERS = [
    ("--timeout", "nan"),
    ("--timeout", "inf"),
    ("--timeout", "-inf"),
    ("--timeout", "1e999"),
    ("--timeout", "0"),
    ("--timeout", "-5"),
    ("--timeout", "1e9"),
    ("--temperature", "nan"),
    ("--temperature", "inf"),
    ("--temperature", "-0.1"),
    ("--temperature", "2.5"),
    ("--top-p", "nan"),
    ("--top-p", "inf"),
    ("--top-p", "0"),
    ("--top-p", "1.5"),
    ("--top-p", "NaN"),
    # Issue 25 item 9: documented ceilings (types.MAX_TOKENS_CEILING, MAX_RETRIES_CEILING).
    ("--max-tokens", "99999999999"),
    ("--max-tokens", "131073"),
    ("--max-tokens", "0"),
    ("--max-tokens", "1e9"),
    ("--retries", "99999"),
    ("--retries", "11"),
    ("--retries", "-1"),
]


@pytest.mark.parametrize(("flag", "value"), BAD_NUMBERS)
def test_numbers_the_run_cannot_use_are_refused(capsys, config, fake, flag, value):
    refused(capsys, run_cli(config, flag, value), flag)
    assert fake.request_count() == 0


@pytest.mark.parametrize(
    ("out", "fragment"),
    [
        (".", "must end in .csv or .jsonl"),
        ("/proc/x.csv", "cannot write to /proc"),
        ("x.xlsx", "must end in .csv or .jsonl"),
        ("results.CSV.txt", "must end in .csv or .jsonl"),
        ("/nonexistent/x.csv", "the folder /nonexistent does not exist"),
        ("{tmp}/new-folder/x.jsonl", "does not exist"),
        ("{tmp}/a-folder.csv", "is a folder"),
    ],
)
def test_out_must_be_a_writable_csv_or_jsonl_file_in_an_existing_folder(capsys, config, fake, tmp_path, out, fragment):
    (tmp_path / "a-folder.csv").mkdir()
    out = out.format(tmp=tmp_path)
    refused(capsys, run_cli(config, "--out", out), fragment)
    assert fake.request_count() == 0  # refused before the run, not after it
    assert not (tmp_path / "new-folder").exists() and not Path("/nonexistent").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".orbench-play-probe")] == []


def test_judge_and_compare_outputs_are_checked_too(capsys, tmp_path):
    source = tmp_path / "in.csv"
    source.write_text("p,r\nq,a\n")
    judge = ["judge", str(source), "--prompt-col", "p", "--response-col", "r", "--out"]
    refused(capsys, [*judge, str(tmp_path / "missing" / "o.csv")], "does not exist")
    refused(capsys, [*judge, str(tmp_path / "o.jsonl")], "must end in .csv")
    refused(
        capsys,
        ["judge", str(tmp_path), "--prompt-col", "p", "--response-col", "r", "--out", "o.csv"],
        "not a regular file",
    )
    refused(capsys, ["compare", str(source), "--out", str(tmp_path / "c.xlsx")], "must end in .csv")


def test_a_write_that_fails_after_the_run_is_one_line_and_exit_1(capsys, config, fake, tmp_path, monkeypatch):
    from orbench_play import export

    def full_disk(results, path):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export, "write_results", full_disk)
    code = cli.main(run_cli(config, "--out", str(tmp_path / "r.csv"), "--no-cache"))
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and fake.request_count() == 1
    (line,) = [line for line in err.splitlines() if "error" in line]
    assert "No space left on device" in line and "another --out" in line


# -- the system prompt -------------------------------------------------------------------


def test_prompt_files_must_be_small_regular_utf8_text(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (64 * 1024 + 1))
    latin = tmp_path / "latin1.txt"
    latin.write_bytes("caf\xe9".encode("latin-1"))
    binary = tmp_path / "bin.txt"
    binary.write_bytes(b"abc\x00def")
    for path, fragment in (
        (Path("/dev/urandom"), "not a regular file"),
        (Path("/dev/zero"), "not a regular file"),
        (fifo, "not a regular file"),
        (tmp_path, "not a regular file"),
        (big, "larger than 64 KiB"),
        (latin, "not UTF-8 text"),
        (binary, "binary"),
        (tmp_path / "missing.txt", "No such file"),
    ):
        with pytest.raises(PromptError, match=fragment):
            read_prompt_file(path)
    ok = tmp_path / "ok.txt"
    ok.write_text("Be brief. ✓\n", encoding="utf-8")
    assert resolve_system_prompt(f"@{ok}") == ("Be brief. ✓", "file:ok.txt")


@pytest.mark.parametrize("device", ["/dev/urandom", "{fifo}"])
def test_system_prompt_from_a_device_or_pipe_is_refused_not_a_hang(tmp_path, config, device):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    proc = subprocess.run(
        [sys.executable, "-m", "orbench_play", *run_cli(config, "--system-prompt", "@" + device.format(fifo=fifo))],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_limit_memory,
    )
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr[-500:]
    assert len(proc.stderr.strip().splitlines()) == 1


def _limit_memory():
    """Old code read /dev/urandom until memory ran out: cap it at 1.5 GB so a regression fails, not the machine."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, 1536 * 2**20))


@pytest.mark.parametrize(
    ("typo", "preset"),
    [("sefety", "safety"), ("Safety", "safety"), ("helpfull", "helpful"), ("lama2", "llama2"), ("non", "none")],
)
def test_a_word_close_to_a_preset_is_a_typo(capsys, config, fake, typo, preset):
    refused(capsys, run_cli(config, "--system-prompt", typo), f"did you mean {preset}?")
    assert fake.request_count() == 0


def test_real_text_and_files_still_pass_as_system_prompts(tmp_path):
    check = cli_args.system_prompt(lambda: list(SYSTEM_PROMPTS))
    for text in ("Be safe.", "You are a pirate", "safety", "Answer tersely", "@somewhere/sefety.txt", "pirate"):
        assert check(text) == text
    word = tmp_path / "word.txt"
    word.write_text("sefety")
    assert resolve_system_prompt(f"@{word}") == ("sefety", "file:word.txt")  # the documented way to send one word


def test_max_tokens_and_retries_have_documented_ceilings_and_the_ceilings_pass(config, fake):
    """Issue 25 item 9: `--max-tokens 99999999999` made the overall limit about 1e11 s, and
    `--retries 99999` was accepted; the ceilings themselves are fine, everywhere the values enter."""
    from orbench_play.cli.run import add_arguments, build_run_config
    from orbench_play.models.schema import RANGED_FIELDS
    from orbench_play.types import MAX_RETRIES_CEILING, MAX_TOKENS_CEILING
    from orbench_play.ui.handlers.forms import generation_params
    from orbench_play.ui.state.query import MAX_MAX_TOKENS

    assert (MAX_TOKENS_CEILING, MAX_RETRIES_CEILING) == (131_072, 10)
    parser = cli_args.Parser(prog="orbench-play run")
    add_arguments(parser)
    argv = run_cli(config, "--max-tokens", str(MAX_TOKENS_CEILING), "--retries", str(MAX_RETRIES_CEILING))[1:]
    run_config = build_run_config(parser.parse_args(argv))[0]
    assert run_config.params.max_tokens == MAX_TOKENS_CEILING and run_config.max_retries == MAX_RETRIES_CEILING
    # The owner's model list and the page (form and API) stop at or below the same ceiling.
    assert RANGED_FIELDS["max_tokens"][2] == MAX_TOKENS_CEILING
    assert MAX_MAX_TOKENS <= MAX_TOKENS_CEILING
    for value in (99999999999, float("inf"), 1e308):
        assert generation_params(value).max_tokens <= MAX_MAX_TOKENS
