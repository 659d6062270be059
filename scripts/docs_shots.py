"""`make docs-shots`: the README's screenshots, made again by a scripted browser run.

    .venv/bin/python scripts/docs_shots.py [OUT_DIR]     # default: docs/

Starts the fake OpenAI server (tests/fake_openai.py) and the playground over its
fake models, drives headless Debian Chromium through two flows, and writes:

- `playground.png`: a finished run of three models (hard-1k and toxic), with the
  live grid, the session scoreboard and the paper's axes;
- `spotcheck.png`: the Compare view, `bot` against `bot · safety`;
- `screenshots.json`: each image's *layout signature*: the page elements it
  shows, in the order they are laid out, and whether each is in the picture.

The browser tests make the same signatures from the running app and compare them
with the committed `screenshots.json` (tests/test_docs.py), so a change to the
page that makes a screenshot stale fails a test until this is run again: layout,
not pixels, which differ from machine to machine.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"

MODELS = {"bot": "refuse-if-system", "fake-answer": "answer", "fake-refuse": "refuse"}
SAFETY = "bot · safety"
PLAYGROUND = "?models=bot,fake-answer,fake-refuse&split=hard-1k,toxic&categories=privacy,illegal&n=1&seed=0"
SPOTCHECK = "?models=bot&split=hard-1k&categories=all&n=1&seed=0"
VIEWPORTS = {"playground.png": (1400, 1900), "spotcheck.png": (1216, 1000)}

MARKS: dict[str, list[tuple[str, str, bool]]] = {
    # (name, selector, keep its text): what a reader of each picture is promised.
    "playground.png": [
        ("title", "h1", True),
        ("run", "#run", True),
        ("stop", "#stop", True),
        ("progress", "#progress .prog-text", False),
        ("models", "#models", False),
        ("splits", "#split", False),
        ("split choice", "#split .token", True),
        ("categories", "#categories", False),
        ("prompts per category", "#n", False),
        ("seed", "#seed", False),
        ("verdicts by", "#judge", False),
        ("grid", "#grid table.grid", False),
        ("model column", "#grid th.model-col", True),
        ("verdict badge", "#grid .verdict", False),
        ("scoreboard", "#scoreboard table.sb", False),
        ("scoreboard row", "#scoreboard table.sb tbody tr", False),
        ("heat map", "#scoreboard table.heat", False),
        ("plot", "#plot svg", False),
        ("session point", "#plot g.session-pt", False),
        ("paper point", "#plot circle.paper-pt", False),
    ],
    "spotcheck.png": [
        ("compare", "#compare", False),
        ("variant A", "#compare_a", False),
        ("variant B", "#compare_b", False),
        ("compare button", "#compare_run", True),
        ("summary", "#comparison .cmp-summary", False),
        ("rates table", "#comparison table:not(.cmp-diff)", False),
        ("split row", "#comparison table:not(.cmp-diff) tbody th", True),
        ("diff table", "#comparison table.cmp-diff", False),
        ("disagreeing prompt", "#comparison tr[data-status='disagree']", False),
    ],
}

SIGNATURE_JS = """([marks, clip]) => {
  const out = [];
  for (const [name, sel, keepText] of marks) {
    const els = [...document.querySelectorAll(sel)];
    const el = els[0];
    if (!el) { out.push({name, count: 0, shown: false, top: 1e9, left: 0}); continue; }
    const r = el.getBoundingClientRect();
    const x = r.left + scrollX, y = r.top + scrollY;
    const shown = r.width > 0 && r.height > 0 && x < clip.x + clip.width && x + r.width > clip.x
      && y < clip.y + clip.height && y + r.height > clip.y;
    const item = {name, count: els.length, shown, top: Math.round(y), left: Math.round(x)};
    if (keepText) item.text = els.map(e => e.innerText.trim().replace(/\\s+/g, ' ')).slice(0, 12);
    out.push(item);
  }
  return out;
}"""


def signature(page: Any, shot: str, clip: dict[str, float]) -> list[dict[str, Any]]:
    """What the picture shows, as layout: the marks in reading order (rows of ~24 px, then
    left to right), each with how many there are, whether it is in the picture, and the
    text of the ones whose words matter. Positions only order the marks; they are not kept."""
    items = page.evaluate(SIGNATURE_JS, [MARKS[shot], clip])
    items.sort(key=lambda i: (i["top"] // 24, i["left"], i["name"]))
    for item in items:
        del item["top"], item["left"]
    return items


def _no_script_errors(page: Any) -> None:
    if page.orbench_errors:
        raise RuntimeError(f"the page had script errors: {page.orbench_errors}")


def _page(browser: Any, url: str, shot: str, query: str) -> tuple[Any, Any]:
    from support import open_share_link, watch_errors

    width, height = VIEWPORTS[shot]
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    watch_errors(page)
    open_share_link(page, url, query, timeout_ms=30_000)
    return context, page


def playground_shot(browser: Any, url: str, out: Path | None) -> list[dict[str, Any]]:
    """A finished run of three models in a tall window: the set-up and the action bar, the
    grid, and under them the scoreboard and the paper's axes."""
    from support import VARIANT_FINAL

    context, page = _page(browser, url, "playground.png", PLAYGROUND)
    try:
        page.click("#run")
        for name in MODELS:
            page.wait_for_function(VARIANT_FINAL, arg=name, timeout=60_000)
        # The run's last frame carries the scoreboard and the plot; a busy machine may take a while.
        page.wait_for_selector("#scoreboard tr[data-variant='fake-refuse']", timeout=60_000)
        page.wait_for_selector("#plot g.session-pt", timeout=60_000)
        page.wait_for_function(
            "() => { const b = document.querySelector('button#download_csv'); return b && !b.disabled; }"
        )
        page.evaluate("() => { document.activeElement?.blur(); window.scrollTo(0, 0); }")
        page.wait_for_function("() => window.scrollY === 0")
        top = 0
        width, height = VIEWPORTS["playground.png"]
        if out is not None:
            page.screenshot(path=str(out / "playground.png"))
        _no_script_errors(page)
        return signature(page, "playground.png", {"x": 0, "y": top, "width": width, "height": height})
    finally:
        context.close()


def spotcheck_shot(browser: Any, url: str, out: Path | None) -> list[dict[str, Any]]:
    """`bot` run without and with the safety preset (set in the page), then compared."""
    from support import run_then_run_with_safety

    context, page = _page(browser, url, "spotcheck.png", SPOTCHECK)
    try:
        run_then_run_with_safety(page, "bot")
        page.click("#compare button.label-wrap, #compare > button")
        page.wait_for_function(f"() => document.querySelector('#compare_b input')?.value === '{SAFETY}'")
        page.click("#compare_run")
        page.wait_for_selector("#comparison .cmp", timeout=20_000)
        compare = page.locator("#compare")
        compare.scroll_into_view_if_needed()
        page.evaluate("() => document.activeElement?.blur()")
        if out is not None:
            compare.screenshot(path=str(out / "spotcheck.png"))
        box = page.evaluate(
            "() => { const r = document.querySelector('#compare').getBoundingClientRect();"
            " return {x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height}; }"
        )
        _no_script_errors(page)
        return signature(page, "spotcheck.png", box)
    finally:
        context.close()


def take(url: str, out: Path | None = None) -> dict[str, list[dict[str, Any]]]:
    """Both flows against the app at `url`: their signatures, and the pictures in `out`."""
    from support import chromium

    with chromium() as browser:
        return {
            "playground.png": playground_shot(browser, url, out),
            "spotcheck.png": spotcheck_shot(browser, url, out),
        }


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else REPO / "docs"
    sys.path.insert(0, str(TESTS))
    import conftest  # noqa: F401 -- the tests' offline, hermetic environment (data, cache, keys)
    from fake_openai import FakeOpenAIServer
    from support import fake_models_yaml, serve_playground

    with FakeOpenAIServer() as server, tempfile.TemporaryDirectory() as tmp:
        models = fake_models_yaml(Path(tmp) / "models.yaml", server.base_url, MODELS)
        with serve_playground(models) as url:
            signatures = take(url, out)
    (out / "screenshots.json").write_text(json.dumps(signatures, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for name in signatures:
        print(f"wrote {out / name} ({(out / name).stat().st_size // 1024} kB)")
    print(f"wrote {out / 'screenshots.json'} (the layout signatures the browser tests check)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
