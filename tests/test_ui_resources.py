"""Flat resources (issue 13): a visitor who re-rolls the prompts 10 times, with
models that send 1 MiB answers, through the served app and its API.

Before: every run re-exported the whole session and Gradio copied both files
into its cache, where nothing deleted them (6 runs of 8 cells: cache 16 → 352 MB,
process 505 → 689 MB). Now, after warm-up, the session's disk (Gradio's upload
folder plus the session's spool of whole answers, capped here at SPOOL_MB) stays
flat; the download still holds whole answers (those the spool kept); ending the
session removes its files.

The figures (MB at run WARM and at run RUNS) are printed as the RESOURCES line.
The same flow over 50 runs, with the process's memory, is `make bench`'s
`resources_50x_1mib` figure (benchmarks/resources.py): a soak, which beside the
suite held a worker for half a minute, and whose RSS over a few runs is noise.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import httpx
from support import api_client, serve_playground_demo

RUNS, WARM = 10, 5
ANSWER = 2**20
SPOOL_MB = 12
MODELS = ("fake-big-a", "fake-big-b")
CELLS = 2 * len(MODELS)  # 2 prompts × 2 models per run, new prompts every run


def du(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0


def test_disk_stays_flat_over_runs_of_1_mib_answers_and_the_session_takes_its_files_along(fake, tmp_path, monkeypatch):
    upload, spool = tmp_path / "gradio", tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(upload))  # Gradio's upload folder and cache, for this app only
    monkeypatch.setattr(tempfile, "tempdir", str(spool))  # where sessions spool long answers
    monkeypatch.setenv("ORBENCH_SESSION_SPOOL_MB", str(SPOOL_MB))  # full after 3 runs, then cut copies only
    monkeypatch.setenv("ORBENCH_SESSION_RUNS", str(RUNS))  # the run list keeps every run: the export holds them all
    lines = ["model_list:"]
    for name in MODELS:
        # `echo` is never cut at max_tokens, so the answer arrives whole: 1 MiB in 20 chunks. The
        # models' own max tokens (the run leaves the page's default) make 1 MiB an answer the
        # engine's bounds allow (32 characters a token), not a server ignoring max tokens.
        fake.set_text(f"echo:{name}", (name + " says: " + "lorem ipsum dolor sit amet " * 40_000)[:ANSWER])
        lines += [
            f"  - model_name: {name}",
            f"    litellm_params: {{model: 'openai/echo:{name}', api_base: '{fake.base_url}', api_key: sk-fake,"
            f" max_tokens: {ANSWER // 32 + 1024}}}",
        ]
    config = tmp_path / "models.yaml"
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    disk = []
    with serve_playground_demo(config) as (url, demo):
        client = api_client(url, download_files=False)
        started = time.monotonic()
        for run in range(RUNS):
            out = client.predict(list(MODELS), "hard-1k", ["privacy", "illegal"], 1, run, 512, api_name="/run")
            payload = out[6]
            assert payload["run"]["done"] == CELLS and all(not r["error"] for r in payload["run"]["results"])
            disk.append(du(upload) + du(spool))
        seconds = time.monotonic() - started

        files = {}
        for key, i in (("csv", 4), ("jsonl", 5)):
            link = out[i]["url"]
            files[key] = httpx.get(link if link.startswith("http") else url.rstrip("/") + link, timeout=60).text
        copies = [len(list(upload.rglob(f"orbench-session.{ext}"))) for ext in ("csv", "jsonl")]
        # The tab closes and Gradio drops its state: the session's files go.
        demo.state_holder.delete_state(client.session_hash)
        left = list(upload.rglob("orbench-session.*")), du(spool)

    mb = [round(x / 2**20, 1) for x in disk]
    print(
        f"\nRESOURCES {RUNS} runs × {CELLS} new cells × 1 MiB answers in {seconds:.0f} s: "
        f"session disk {mb[WARM - 1]} MB at run {WARM}, {mb[-1]} MB at run {RUNS} (max {max(mb)})"
    )
    spool_bytes = SPOOL_MB * 2**20
    # Disk: the spool, full since run 3, and one CSV + JSONL holding the spooled
    # answers whole plus a 4,000-character copy of each later one (~32 KB a run).
    assert max(disk[WARM - 1 :]) - disk[WARM - 1] < 3 * 2**20, mb
    assert max(disk) < 3 * spool_bytes + 4 * 2**20, mb
    assert copies == [1, 1]  # Gradio served the export where it was written: no copies in its cache
    # The payload carries the session's cut copies; the download has whole answers
    # while the spool had room, then the kept text with a note saying it was cut.
    assert all(len(r["response"]) < 5_000 for r in payload["run"]["results"])
    csv.field_size_limit(sys.maxsize)
    rows = list(csv.DictReader(io.StringIO(files["csv"])))
    lines = [json.loads(line) for line in files["jsonl"].splitlines()]
    assert len(rows) == len(lines) >= RUNS * CELLS // 2  # re-rolled prompts: mostly new cells
    whole = [len(r["response"]) == ANSWER for r in lines]
    assert whole[: spool_bytes // ANSWER] == [True] * (spool_bytes // ANSWER) and not any(
        whole[spool_bytes // ANSWER :]
    )
    assert all("space for long answers is full" in r["response"] for r in lines[spool_bytes // ANSWER :])
    assert [len(r["response"]) for r in rows] == [len(r["response"]) for r in lines]
    assert left == ([], 0)  # nothing of the session is left once it ended
