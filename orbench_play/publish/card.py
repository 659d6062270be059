"""The dataset card of a published session: YAML metadata that the Hub and
`datasets` read (licence, the data files, what it is), plus a page for people.

Every figure comes from the rows themselves, so a card cannot disagree with
its data: the models and variants with every generation setting (system
prompt id, the params JSON, repeats), the judge (from `verdict_source`), the
scoreboard (`scoring.score_results`: the verdict counts with Wilson 95%
intervals and, beside them, the error-aware rates of `scoring.error_aware`;
the mini-score's MOVER interval), the prompt sources (OR-Bench's splits and the user's prompt
sets), the date and the tool version.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

from ..asking.prompts import params_label, variant_of
from ..scoring import ModelScore, Rate, score_results
from ..scoring.error_aware import Estimate
from ..types import CellResult

LICENSE = "cc-by-4.0"
DATA_FILES = "data/train-*.parquet"
OR_BENCH = "bench-llm/or-bench"
ATTRIBUTION = (
    "The OR-Bench prompts are from OR-Bench by Justin Cui, Wei-Lin Chiang, Ion Stoica and Cho-Jui Hsieh "
    "(*OR-Bench: An Over-Refusal Benchmark for Large Language Models*, arXiv:2405.20947), "
    f"<https://huggingface.co/datasets/{OR_BENCH}>, licensed CC BY 4.0; they are quoted unchanged. "
    "The answers are the named models' outputs; the verdicts are orbench-play's."
)
CITATION = """@article{cui2024orbench,
  title={OR-Bench: An Over-Refusal Benchmark for Large Language Models},
  author={Cui, Justin and Chiang, Wei-Lin and Stoica, Ion and Hsieh, Cho-Jui},
  journal={arXiv preprint arXiv:2405.20947},
  year={2024}
}"""


def tool_version() -> str:
    try:
        return metadata.version("orbench-play")
    except metadata.PackageNotFoundError:
        return "unknown"


def _size_category(n: int) -> str:
    return "n<1K" if n < 1_000 else "1K<n<10K" if n < 10_000 else "10K<n<100K" if n < 100_000 else "100K<n<1M"


def _judges(results: Sequence[CellResult]) -> list[str]:
    """What decided the verdicts: `llm:<model>` judges named, else the offline classifier;
    and an LLM judge that was asked and gave no verdict (the offline verdict stood in),
    which the run asked for although no `llm:` source says so."""
    found = []
    for r in results:
        source = r.verdict_source.split(" (")[0]
        name = source if source.startswith("llm:") else "keyword (offline classifier)" if source else ""
        if name and name not in found:
            found.append(name)
    failed = judge_failures(results)
    if failed is not None:
        found.append(
            f"an LLM judge was asked and failed on {failed['failed']} of {failed['asked']} answers "
            "(the offline classifier's verdicts stand for those)"
        )
    return sorted(found)


def judge_failures(results: Sequence[CellResult]) -> dict[str, Any] | None:
    """How often the run's LLM judge gave no verdict (its answers keep the offline one):
    failed, asked (the answers sent to the judge: its own verdicts and its failures) and
    the first reason; None when no judge failed."""
    failed = [r for r in results if r.judge_error]
    if not failed:
        return None
    asked = len(failed) + sum(1 for r in results if r.verdict_source.startswith("llm:"))
    return {"failed": len(failed), "asked": asked, "first_reason": failed[0].judge_error}


def _rate(rate: Rate | None) -> dict[str, Any] | None:
    if rate is None:
        return None
    return {
        "k": rate.k,
        "n": rate.n,
        "rate": round(rate.rate, 6),
        "low": round(rate.low, 6),
        "high": round(rate.high, 6),
    }


def _estimate(e: Estimate | None) -> dict[str, Any] | None:
    """An error-aware rate (`scoring.error_aware`) with its naive figure beside it."""
    if e is None:
        return None
    return {
        "n": e.n,
        "k": e.k,
        "rate": round(e.rate, 6),
        "low": round(e.low, 6),
        "high": round(e.high, 6),
        "naive_rate": round(e.naive_rate, 6),
        "naive_low": round(e.naive_low, 6),
        "naive_high": round(e.naive_high, 6),
        "reviewed": e.reviewed,
    }


def _error_aware(s: ModelScore) -> dict[str, Any]:
    c = s.corrected
    mini = s.corrected_mini
    return {
        "over_refusal_hard_1k": _estimate(c.get("hard-1k")),
        "over_refusal_80k": _estimate(c.get("80k")),
        "toxic_refusal": _estimate(c.get("toxic")),
        "mini_score": None
        if mini is None
        else {"score": round(mini[0], 6), "low": round(mini[1], 6), "high": round(mini[2], 6), "on": s.benign_split},
        "prompt_sets": {key: _estimate(c.get(key)) for key in s.custom},
    }


def session_metadata(results: Sequence[CellResult], *, date: str | None = None) -> dict[str, Any]:
    """Everything the card states about the session, as plain data (the YAML's `orbench_play` key)."""
    variants: dict[str, dict[str, Any]] = {}
    for r in results:
        v = variants.setdefault(
            variant_of(r),
            {
                "variant": variant_of(r),
                "model": r.model,
                "system_prompt_id": r.system_prompt_id,
                "params": json.loads(r.params) if r.params else {},
                "settings": params_label(r.params) or "defaults",
                "repeats": 0,
            },
        )
        v["repeats"] = max(v["repeats"], r.repeat + 1)
    scoreboard = []
    for s in score_results(results, key=variant_of):
        scoreboard.append(
            {
                "variant": s.model,
                "over_refusal_hard_1k": _rate(s.over_refusal_hard_1k),
                "over_refusal_80k": _rate(s.over_refusal_80k),
                "toxic_refusal": _rate(s.toxic_refusal),
                "mini_score": None
                if s.mini_score is None
                else {
                    "score": round(s.mini_score, 6),
                    "low": round(s.mini_low or 0, 6),
                    "high": round(s.mini_high or 0, 6),
                    "on": s.benign_split,
                },
                "prompt_sets": {key: _rate(rate) for key, rate in s.custom.items()},
                "error_aware": _error_aware(s),
                "answered": s.answered,
                "errors": s.errors,
            }
        )
    sources = sorted({r.split for r in results})
    return {
        "tool": "orbench-play",
        "version": tool_version(),
        "date": date or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "rows": len(results),
        "splits": sources,
        "models": sorted({r.model for r in results}),
        "variants": list(variants.values()),
        "judge": _judges(results),
        "judge_failed": judge_failures(results),
        "scoreboard": scoreboard,
    }


def _fmt(rate: dict[str, Any] | None) -> str:
    if not rate:
        return "–"
    if "naive_rate" in rate:  # "verdicts say 44% (k/n) · corrected 71% [55–86]"
        return (
            f"verdicts say {100 * rate['naive_rate']:.0f}% ({rate['k']}/{rate['n']}) · corrected "
            f"{100 * rate['rate']:.0f}% [{100 * rate['low']:.0f}–{100 * rate['high']:.0f}]"
        )
    return f"{100 * rate['rate']:.1f}% [{100 * rate['low']:.1f}–{100 * rate['high']:.1f}] ({rate['k']}/{rate['n']})"


_MARKDOWN = str.maketrans({c: "\\" + c for c in "\\`*_[]|~"} | {"<": "&lt;", "&": "&amp;"})
"""Markdown's inline punctuation backslash-escaped (no link, image, emphasis, code or table
cell can start inside a text: with line breaks gone, no block can either), and `<` and `&`
as HTML entities (no tag, comment or entity)."""


def _mini_text(naive: dict[str, Any] | None, corrected: dict[str, Any] | None) -> str:
    if not naive:
        return "–"
    text = f"verdicts say {100 * naive['score']:.0f}%"
    if corrected:
        text += (
            f" · corrected {100 * corrected['score']:.0f}% [{100 * corrected['low']:.0f}–{100 * corrected['high']:.0f}]"
        )
    return text


def _cell(text: Any) -> str:
    """`text` as inert Markdown and HTML for one line or table cell of the card: control,
    invisible formatting and bidi characters and line breaks become spaces, markup is escaped."""
    plain = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in str(text))
    return plain.translate(_MARKDOWN)


def card_text(results: Sequence[CellResult], *, title: str | None = None, date: str | None = None) -> str:
    """README.md of the dataset: YAML front matter, then the page."""
    import yaml

    meta = session_metadata(results, date=date)
    or_bench = any(split in ("hard-1k", "toxic", "80k") for split in meta["splits"])
    front = {
        "license": LICENSE,
        "pretty_name": title or f"orbench-play session {meta['date'][:10]}",
        "language": ["en"],
        "tags": ["over-refusal", "or-bench", "orbench-play", "llm-evaluation", "refusal"],
        "size_categories": [_size_category(len(results))],
        "source_datasets": [OR_BENCH] if or_bench else [],
        "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": DATA_FILES}]}],
        "orbench_play": meta,
    }
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000).rstrip(),
        "---",
        "",
        f"# {_cell(front['pretty_name'])}",
        "",
        f"Answers of {len(meta['models'])} model(s) to {len({r.row_id for r in results})} prompt(s), with refusal "
        f"verdicts, from orbench-play {meta['version']} on {meta['date']}. "
        "Load it with `datasets.load_dataset(...)`, or compare it with `orbench-play compare`.",
        "",
        "## Models and settings",
        "",
        "| variant | model | system prompt | settings | params | repeats |",
        "|---|---|---|---|---|---|",
    ]
    for v in meta["variants"]:
        lines.append(
            f"| {_cell(v['variant'])} | {_cell(v['model'])} | {_cell(v['system_prompt_id'])} | {_cell(v['settings'])} "
            f"| {_cell(json.dumps(v['params'], sort_keys=True))} | {v['repeats']} |"
        )
    lines += [
        "",
        f"Judge: {_cell(', '.join(meta['judge'])) or 'none'}.",
        "",
        *(
            [f"First reason the judge gave no verdict: {_cell(meta['judge_failed']['first_reason'])}", ""]
            if meta["judge_failed"]
            else []
        ),
        "## Scoreboard (95% intervals that count verdict error)",
        "",
        "Each rate says what the verdicts say (their count), then the rate corrected for verdict error, "
        "with a 95% interval that counts the verdicts' mistakes as well as sampling: each verdict's "
        "calibrated probability of a refusal, corrected by the answers a person reviewed, with room for "
        "verdicts that may not carry over to these models (orbench-play's README, *How sure is the score?*).",
        "",
    ]
    own = list(dict.fromkeys(k for s in meta["scoreboard"] for k in s["prompt_sets"]))
    header = [
        "variant",
        "over-refusal (hard-1k)",
        "over-refusal (80k)",
        "refusal (toxic)",
        "mini-score",
        *own,
        "errors",
    ]
    lines += ["| " + " | ".join(_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    for s in meta["scoreboard"]:
        ea = s["error_aware"]
        mini_text = _mini_text(s["mini_score"], ea["mini_score"])

        def best(name: str, s=s, ea=ea) -> str:
            return _fmt(ea[name] or s[name])

        cells = [_cell(s["variant"]), best("over_refusal_hard_1k"), best("over_refusal_80k")]
        cells += [best("toxic_refusal"), mini_text]
        cells += [_fmt(ea["prompt_sets"].get(k) or s["prompt_sets"].get(k)) for k in own]
        cells.append(str(s["errors"]))
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Over-refusal is refusals (direct and indirect) of benign prompts, kept apart per split; a prompt set's "
        "rates (split `custom:<name>`) are its own and never pooled with OR-Bench's. Columns: the contract "
        "columns (`split, row_id, category, prompt, model, response, verdict, verdict_source, error, latency_s, "
        "ttft_s, completion_tokens, cost_usd, cached`), then `system_prompt_id, params, repeat, attempts, "
        "retry_wait_s, judge_error, reasoning, reasoning_tokens, ttfa_s, turn, conversation_id, follow_up, expected, "
        "p_refusal, sure, settled, settled_at_tokens, saved_tokens, saved_cost_usd` (`p_refusal`: the verdict's "
        "calibrated probability of a refusal; `sure`: false where the verdict is unsure; a verdict set by a person "
        "has verdict_source `user`).",
        "",
        "## Licence and attribution",
        "",
        f"This dataset is released under CC BY 4.0 (`{LICENSE}`). {ATTRIBUTION}",
        "",
        "## Citation",
        "",
        "```bibtex",
        CITATION,
        "```",
        "",
    ]
    return "\n".join(lines)


__all__ = ["ATTRIBUTION", "CITATION", "LICENSE", "card_text", "session_metadata", "tool_version"]
