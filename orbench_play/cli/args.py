"""Argument types for `orbench-play`: every value is checked before any work starts.

Each function is an argparse `type=`: it returns the parsed value or raises
`argparse.ArgumentTypeError` with a short reason, which the CLI prints as one
line (`orbench-play: error: argument --timeout: ...`) and exits 2. A value
the run cannot use (a NaN timeout, an output file in a folder that does not
exist, a system-prompt "file" that is a device) is refused here, not
discovered after the run. Checks that need more than one value or the
environment (`judge_choice`) raise `UsageError`, printed and exiting the same way.
"""

from __future__ import annotations

import argparse
import difflib
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from ..types import SPLITS

OUTPUT_KINDS = (".csv", ".jsonl")
"""What `run --out` writes; the extension chooses the format."""
MAX_TIMEOUT_S = 24 * 3600.0


class UsageError(Exception):
    """Bad arguments: printed as one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as a `UsageError` (one line, not usage + line)."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def whole_number(low: int, high: int) -> Callable[[str], int]:
    """A whole number from `low` to `high` (a documented ceiling: `types.MAX_TOKENS_CEILING`...)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:40]!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be between {low} and {high:,}, got {value:,}")
        return value

    return parse


def shard(text: str) -> tuple[int, int]:
    """`--shard K/N`: this machine's part K of N (1 <= K <= N)."""
    k_text, slash, n_text = text.partition("/")
    try:
        k, n = int(k_text), int(n_text)
    except ValueError:
        k = n = 0
    if not slash or n < 1 or not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N (e.g. 2/4), got {text!r}")
    return k, n


def _finite(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def seconds(text: str) -> float:
    """A time limit: finite, above 0, at most a day."""
    value = _finite(text)
    if not 0 < value <= MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_TIMEOUT_S:g} seconds, got {value:g}")
    return value


def temperature(text: str) -> float:
    value = _finite(text)
    if not 0 <= value <= 2:
        raise argparse.ArgumentTypeError(f"must be between 0 and 2, got {value:g}")
    return value


def top_p(text: str) -> float:
    value = _finite(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most 1, got {value:g}")
    return value


def output_file(*kinds: str) -> Callable[[str], Path]:
    """A file the command can write when it ends: a known extension, in a
    folder that exists and accepts a new file (tried now, by creating and
    removing an empty temporary file there), and not a folder itself."""
    allowed = " or ".join(kinds)

    def check(text: str) -> Path:
        path = Path(text).expanduser()
        if path.suffix.lower() not in kinds:
            raise argparse.ArgumentTypeError(f"{text} must end in {allowed} (the extension picks the format)")
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{text} is a folder; give a file name ending in {allowed}")
        if path.exists() and not path.is_file():
            raise argparse.ArgumentTypeError(f"{text} exists and is not a regular file")
        folder = path.parent
        if not folder.is_dir():
            raise argparse.ArgumentTypeError(f"the folder {folder} does not exist; create it first")
        try:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".orbench-play-probe-"):
                pass
        except OSError as exc:
            raise argparse.ArgumentTypeError(f"cannot write to {folder}: {exc.strerror or exc}") from None
        return path

    return check


def existing_file(text: str) -> Path:
    """An input file: it exists and is a regular file (not a folder, device or pipe)."""
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"input file {text} does not exist")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"input file {text} is not a regular file")
    return path


def system_prompt(presets: Callable[[], list[str]]) -> Callable[[str], str]:
    """TEXT, @FILE or a preset name. A single short word close to a preset
    name (`sefety`, `Safety`) is taken for a typo rather than sent as the
    system prompt; to send such a word as the prompt, put it in a file and
    pass @FILE."""

    def check(text: str) -> str:
        names = presets()
        word = text.strip()
        if text in names or text.startswith("@") or not word or len(word) > 24 or any(c.isspace() for c in word):
            return text
        close = difflib.get_close_matches(word.lower(), names, n=1, cutoff=0.75)
        if close:
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a preset; did you mean {close[0]}? "
                "(to send one word as the system prompt, put it in a file and pass @FILE)"
            )
        return text

    return check


def split_list(text: str) -> list[str]:
    """`--split hard-1k,toxic` → ["hard-1k", "toxic"] (canonical order, no repeats)."""
    from ..data import DataError, parse_splits

    if not any(name.strip() for name in text.split(",")):
        raise argparse.ArgumentTypeError(f"give one or more of {', '.join(SPLITS)}, comma-separated")
    try:
        return parse_splits(text)
    except DataError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


JUDGE_HELP = (
    "keyword (default: the offline classifier), paper (OR-Bench's own judge set-up: gpt-4-turbo-2024-04-09, "
    "needs OPENAI_API_KEY), paper:together (Llama-3-70b-chat via Together, needs TOGETHERAI_API_KEY), "
    "or any model name used as LLM judge; auto:<judge> (e.g. auto:paper) asks that judge only about the "
    "answers the offline classifier is unsure of (confidence below $ORBENCH_AUTO_CONFIDENCE, default 0.6); "
    "default $ORBENCH_JUDGE"
)


def judge_choice(value: str | None) -> str:
    """--judge (else ORBENCH_JUDGE, else keyword), checked: a paper preset
    without its API key is a one-line usage error naming the variable."""
    from ..verdicts.presets import JudgeChoiceError, check_judge

    try:
        return check_judge(value or os.environ.get("ORBENCH_JUDGE"))
    except JudgeChoiceError as exc:
        raise UsageError(str(exc)) from None
