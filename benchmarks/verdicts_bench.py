"""Figure 7: verdict throughput of the offline classifier.

`verdicts.classify(text, prompt=prompt)` (what the engine calls on every
finished cell, with the cell's prompt, which decides whether the answer's shape
is read) over real model answers (XSTest completions of three models when
available next to the repo, else synthetic answers). The floor is the cheapest
verdict there is: XSTest's start-of-answer string match
(`verdicts.baseline_start_match`) on the same texts, timed back to back. ratio = classifier rate / floor rate (the
fraction of the floor's speed). The detail also gives the cost of the live
path per cell (`LiveVerdict` fed 20 chunks, then `finish`).
"""

from __future__ import annotations

import csv
import time
from pathlib import Path

from . import common
from .report import Figure, ratio

XSTEST = common.REPO / ".." / "shared" / "data" / "xstest" / "completions"


def _texts(limit: int) -> tuple[list[tuple[str, str]], str]:
    """(prompt, answer) pairs."""
    pairs: list[tuple[str, str]] = []
    folder = XSTEST.resolve()
    if folder.is_dir():
        csv.field_size_limit(10**7)
        for path in sorted(Path(folder).glob("*.csv")):
            with path.open(newline="", encoding="utf-8") as fh:
                pairs.extend((r.get("prompt") or "", r.get("completion") or "") for r in csv.DictReader(fh))
        pairs = [p for p in pairs if p[1].strip()]
    if pairs:
        pairs = pairs[:limit]
        return pairs, f"XSTest v2 completions ({len(pairs)} answers of gpt4, llama2, mistral, with their prompts)"
    base = [
        "I'm sorry, but I can't help with that request.",
        "Sure. Here is some information about the topic. First, consider the context. Second, look at sources.",
        "That's a sensitive topic. Instead of answering directly, let me suggest talking to a professional.",
        "There are several ways to kill a Python process: use kill, pkill, or the task manager.",
    ]
    pairs = [("Tell me about the topic.", base[i % len(base)] + f" ({i})") for i in range(limit)]
    return pairs, f"{len(pairs)} synthetic answers"


def _rate(fn, pairs: list[tuple[str, str]]) -> tuple[float, float]:
    t0 = time.perf_counter()
    for prompt, text in pairs:
        fn(text, prompt)
    dt = time.perf_counter() - t0
    return len(pairs) / dt, dt


def figures(quick: bool, command: str) -> list[Figure]:
    from orbench_play import verdicts

    pairs, source = _texts(200 if quick else 1500)
    rounds = 1 if quick else 5
    verdicts.classify(pairs[0][1])  # load the model file outside the timing

    def floor_fn(text: str, prompt: str) -> object:
        return verdicts.baseline_start_match(text)

    def classify_fn(text: str, prompt: str) -> object:
        return verdicts.classify(text, prompt=prompt)

    c_rates, f_rates, c_times, f_times = [], [], [], []
    for _ in range(rounds):
        r, dt = _rate(floor_fn, pairs)
        f_rates.append(r)
        f_times.append(dt)
        r, dt = _rate(classify_fn, pairs)
        c_rates.append(r)
        c_times.append(dt)
    value, floor = common.median(c_rates), common.median(f_rates)

    # The live path of one streamed cell: 20 deltas, provisional verdicts, then the final one.
    sample = pairs[: min(len(pairs), 300)]
    t0 = time.perf_counter()
    for prompt, t in sample:
        live = verdicts.LiveVerdict(prompt)
        step = max(1, len(t) // 20)
        for i in range(0, len(t), step):
            live.feed(t[i : i + step])
        live.finish(t, "stop")
    live_ms = 1000 * (time.perf_counter() - t0) / len(sample)
    return [
        Figure(
            "verdicts_per_s",
            value,
            "verdicts/s",
            floor,
            ratio(value, floor),
            {
                "floor_name": "XSTest start-of-answer match, same texts",
                "ratio_means": "classifier rate / floor rate (higher is better)",
                "classifier_s": common.rnd(common.median(c_times), 4),
                "floor_s": common.rnd(common.median(f_times), 5),
                "texts": source,
                "classifier_us_per_verdict": round(1e6 / value, 1),
                "live_path_ms_per_cell": round(live_ms, 3),
                "setup": f"{len(pairs)} texts, {rounds} alternating rounds, medians",
                "target": "report",
                "command": command,
            },
        )
    ]
