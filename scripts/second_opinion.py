#!/usr/bin/env python
"""Does the embedded Qwen help as the `auto:` judge? (issue 45, item 4)

    .venv/bin/python scripts/second_opinion.py EVAL.json [--per-source N] [--out OUT.json]

EVAL.json is `python -m orbench_play.evaluation --loso --json EVAL.json`'s
output: each labelled row's out-of-fold verdict. The rows whose verdict is
unsure by the auto judge's rule (confidence below `presets.AUTO_CONFIDENCE`)
are the ones `auto:<judge>` would ask about; up to N per source (by hash) are
put to Qwen2.5-Coder-0.5B, served by the embedded llama.cpp server, with the
default judge's prompt, at temperature 0. Per source it prints how often the
offline verdict, Qwen's, and `auto:` with Qwen (Qwen's where it answered in
format, else the offline one) agree with people, answer vs refusal.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import urllib.error
import urllib.request
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orbench_play.evaluation.corpus import load_corpus  # noqa: E402 -- the repository root goes first (above)
from orbench_play.models import embedded  # noqa: E402 -- likewise
from orbench_play.types import REFUSALS  # noqa: E402 -- likewise
from orbench_play.verdicts import JUDGE_PARAMS, judge_messages, parse_judge  # noqa: E402 -- likewise
from orbench_play.verdicts.judge import new_nonce  # noqa: E402 -- likewise
from orbench_play.verdicts.presets import AUTO_CONFIDENCE  # noqa: E402 -- likewise


def ask(base: str, prompt: str, answer: str) -> str:
    body = {
        "model": embedded.served_model_id(embedded.QWEN_MODEL_NAME),
        "messages": judge_messages(prompt, answer, new_nonce()),
        **JUDGE_PARAMS,
    }
    req = urllib.request.Request(  # noqa: S310 -- the embedded server on loopback
        base.rstrip("/") + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer none"},
    )
    with urllib.request.urlopen(req, timeout=600) as resp:  # noqa: S310 -- the embedded server on loopback
        return json.loads(resp.read())["choices"][0]["message"]["content"] or ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("eval_json")
    ap.add_argument("--per-source", type=int, default=25)
    ap.add_argument("--out", default="")
    args = ap.parse_args(argv)
    verdicts_of = {(r["source"], r["row_id"]): r for r in json.loads(Path(args.eval_json).read_text())["out_of_fold"]}
    rows = [r for r in load_corpus().rows if r.clear]
    unsure: dict[str, list] = defaultdict(list)
    for r in rows:
        v = verdicts_of.get((r.source, r.row_id))
        if v and v["confidence"] < AUTO_CONFIDENCE:
            key = hashlib.sha256(f"{r.source}\n{r.row_id}".encode()).hexdigest()
            unsure[r.source].append((key, r, v))
    base = embedded.ensure_server(embedded.QWEN_MODEL_NAME)
    report = {}
    print(f"{'source':18}{'asked':>7}{'offline':>9}{'qwen':>7}{'auto':>7}{'off-format':>11}")
    for source in sorted(unsure):
        picked = sorted(unsure[source], key=lambda t: t[0])[: args.per_source]
        off = qwen = auto = bad = 0
        for _, r, v in picked:
            people = r.label in REFUSALS
            offline = v["label"] in REFUSALS
            try:
                label = parse_judge(ask(base, r.prompt, r.response))
            except urllib.error.HTTPError:  # a prompt and answer longer than the server's context
                label = None
            bad += label is None
            judged = offline if label is None else label in REFUSALS
            off += offline == people
            qwen += (label is not None) and (label in REFUSALS) == people
            auto += judged == people
        n = len(picked)
        report[source] = {"asked": n, "offline": off / n, "qwen": qwen / n, "auto": auto / n, "off_format": bad}
        print(f"{source:18}{n:>7}{off / n:>9.1%}{qwen / n:>7.1%}{auto / n:>7.1%}{bad:>11}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
