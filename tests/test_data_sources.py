"""Where a split's prompts come from: the copies shipped in the package, the
ORBENCH_DATA_DIR override, and the Hub, streamed (against a local HTTP server
standing in for it via HF_ENDPOINT)."""

from __future__ import annotations

import hashlib
import http.server
import importlib.resources
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from orbench_play.data import DataError, load_split, split_file
from orbench_play.data import sources as data_sources
from orbench_play.data.sources import FILES, SHIPPED_SHA256, shipped_file

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "orbench"
SHIPPED = ("hard-1k", "toxic")


@pytest.fixture
def no_data_dir(monkeypatch):
    """As on a fresh install: no ORBENCH_DATA_DIR, no ORBENCH_DATA_SOURCE, the Hub off."""
    monkeypatch.delenv("ORBENCH_DATA_DIR", raising=False)
    monkeypatch.delenv("ORBENCH_DATA_SOURCE", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


# --- the shipped copies ------------------------------------------------------------


@pytest.mark.parametrize("split", SHIPPED)
def test_shipped_files_are_byte_identical_to_the_reference_copies_and_their_hashes(split):
    shipped = importlib.resources.files("orbench_play").joinpath("assets", "data", FILES[split]).read_bytes()
    assert shipped == (SHARED / FILES[split]).read_bytes()
    assert hashlib.sha256(shipped).hexdigest() == SHIPPED_SHA256[split]
    assert b"\r\n" in shipped  # CRLF, as on the Hub: git must not normalise them (see .gitattributes)


def test_recorded_hashes_are_the_ones_the_docs_state():
    for doc in ("README.md", "docs/architecture.md", "orbench_play/assets/data/README.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        for split, digest in SHIPPED_SHA256.items():
            assert digest in text, f"{doc} does not record the sha256 of {split}"


def test_git_keeps_the_shipped_bytes():
    rules = (REPO / ".gitattributes").read_text(encoding="utf-8")
    assert "orbench_play/assets/data/*.csv -text" in rules


def test_package_data_includes_the_shipped_files():
    import tomllib

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = REPO / "orbench_play"
    matched = {p for pattern in patterns["orbench_play"] for p in package.glob(pattern)}
    assert {package / "assets" / "data" / FILES[s] for s in SHIPPED} <= matched
    assert package / "assets" / "data" / "README.md" in matched


def test_attribution_in_readme_and_about_panel():
    for doc in ("README.md", "orbench_play/ui/assets/about.md", "orbench_play/assets/data/README.md"):
        text = (REPO / doc).read_text(encoding="utf-8")
        for needed in ("CC BY 4.0", "Cui", "Chiang", "Stoica", "Hsieh", "arXiv:2405.20947"):
            assert needed in text, f"{doc} lacks {needed!r}"
        assert "huggingface.co/datasets/bench-llm/or-bench" in text, doc


# --- resolution order --------------------------------------------------------------------


@pytest.mark.parametrize("split", SHIPPED)
def test_without_a_data_folder_the_shipped_copies_load_offline_at_once(split, no_data_dir, no_egress):
    started = time.process_time()
    prompts = load_split(split)
    assert time.process_time() - started < 2.0
    assert split_file(split) == shipped_file(split)
    assert len(prompts) == {"hard-1k": 1319, "toxic": 655}[split]
    assert prompts == load_split(split, SHARED)  # the same rows and row ids as the reference copies
    assert not no_egress.lookups


def test_data_dir_overrides_the_shipped_copies(tmp_path, no_data_dir, monkeypatch):
    (tmp_path / FILES["toxic"]).write_text("prompt,category\r\nmine,hate\r\n", encoding="utf-8")
    monkeypatch.setenv("ORBENCH_DATA_DIR", str(tmp_path))
    assert [p.text for p in load_split("toxic")] == ["mine"]
    with pytest.raises(DataError, match=r"or-bench-hard-1k\.csv"):  # no silent fall-back to the shipped copy
        load_split("hard-1k")


def test_80k_is_never_shipped_and_fails_fast_offline(no_data_dir):
    assert split_file("80k") is None
    started = time.monotonic()
    with pytest.raises(DataError) as exc:
        load_split("80k")
    assert time.monotonic() - started < 1.0
    message = str(exc.value)
    assert "HF_HUB_OFFLINE" in message and "ORBENCH_DATA_DIR" in message and "\n" not in message


def test_data_source_hub_refreshes_the_shipped_splits_from_the_hub(no_data_dir, monkeypatch):
    monkeypatch.setenv("ORBENCH_DATA_SOURCE", "hub")
    assert split_file("hard-1k") is None
    with pytest.raises(DataError, match="unset ORBENCH_DATA_SOURCE to use the copy shipped"):
        load_split("hard-1k")
    monkeypatch.setenv("ORBENCH_DATA_SOURCE", "github")
    with pytest.raises(DataError, match=r"ORBENCH_DATA_SOURCE='github' is not one of: shipped .*hub"):
        load_split("toxic")


# --- the Hub, streamed -----------------------------------------------------------------


class FakeHub:
    """Serves one CSV at the Hub's resolve URL. `gate`, when set, holds the second
    half of the body back until the test releases it; `cut` drops it instead."""

    def __init__(self, body: bytes):
        self.body = body
        self.paths: list[str] = []
        self.gate: threading.Event | None = None
        self.cut = False
        hub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                hub.paths.append(self.path)
                if not self.path.endswith("/" + FILES["80k"]):
                    self.send_error(404)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/csv; charset=utf-8")
                self.send_header("Content-Length", str(len(hub.body)))
                self.end_headers()
                half = len(hub.body) // 2
                self.wfile.write(hub.body[:half])
                self.wfile.flush()
                if hub.cut:
                    self.close_connection = True
                    return
                if hub.gate is not None:
                    hub.gate.wait(20)
                self.wfile.write(hub.body[half:])

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hub(monkeypatch) -> Iterator[FakeHub]:
    # 80k-sized rows would slow the test; the partial sample has the same format (CRLF, quoting).
    fake = FakeHub((SHARED / "or-bench-80k-partial-1000.csv").read_bytes())
    monkeypatch.delenv("ORBENCH_DATA_DIR", raising=False)
    monkeypatch.delenv("ORBENCH_DATA_SOURCE", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    monkeypatch.setattr(data_sources, "_hub_cache", {})
    try:
        yield fake
    finally:
        fake.close()


def test_80k_streams_from_the_hub_url_and_is_parsed_as_it_arrives(hub):
    hub.gate = threading.Event()
    seen: list[int | None] = []
    result: list = []
    loader = threading.Thread(target=lambda: result.append(load_split("80k")))
    loader.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (data_sources.streaming_progress("80k") or 0) > 0:
        time.sleep(0.01)
    seen.append(data_sources.streaming_progress("80k"))
    hub.gate.set()
    loader.join(20)
    assert hub.paths == ["/datasets/bench-llm/or-bench/resolve/main/or-bench-80k.csv"]
    # Rows were parsed while half the file was still held back by the server.
    assert seen[0] is not None and 0 < seen[0] < 1000
    prompts = result[0]
    assert prompts == load_split("80k", SHARED)  # same text, categories and row ids as reading the file
    assert data_sources.streaming_progress("80k") is None
    assert load_split("80k") == prompts and len(hub.paths) == 1  # kept for the process: one download


def test_a_stream_that_breaks_off_says_so_in_one_sentence(hub):
    hub.cut = True
    with pytest.raises(DataError) as exc:
        load_split("80k")
    message = str(exc.value)
    assert message.startswith("The stream of OR-Bench split 80k from the Hugging Face Hub broke off after ")
    assert "ORBENCH_DATA_DIR" in message and "\n" not in message
    assert "80k" not in data_sources._hub_cache  # a broken stream is never kept


def test_hub_errors_and_bad_files_are_one_sentence(hub, monkeypatch):
    monkeypatch.setenv("ORBENCH_DATA_SOURCE", "hub")
    with pytest.raises(DataError, match=r"answered 404 for .*or-bench-hard-1k.csv"):
        load_split("hard-1k")
    hub.body = b"text,label\r\nhello,hate\r\n"
    with pytest.raises(DataError, match=r"or-bench-80k.csv\) lacks column\(s\) prompt, category"):
        load_split("80k")
    hub.body = b"prompt,category\r\nhello,weapons\r\n"
    with pytest.raises(DataError, match="row 1 has unknown category 'weapons'"):
        load_split("80k")


def test_lines_split_only_at_newlines():
    chunks = ['prompt,category\r\n"a\u2028b', ', c",hate\r\nlast,hate']
    lines = list(data_sources._lines(chunks))
    assert lines == ["prompt,category\r\n", '"a\u2028b, c",hate\r\n', "last,hate"]


def test_shipped_rows_equal_the_published_category_counts(no_data_dir):
    counts = Counter(p.category for p in load_split("toxic"))
    assert counts["self-harm"] == 92 and sum(counts.values()) == 655
