"""Issue 17 in the browser: a reasoning model's thoughts stream live into a
collapsed block above its answer, its badge says "thinking…" (no verdict is
drawn from thoughts), then the answer streams and gets the answer's verdict.

Two models of the fake server: `think-inline` (R1-style `<think>` tags, the
thoughts spread over a few seconds, thoughts that weigh refusing, then a
plain answer) and `think-close-only/refuses` (the stream starts inside the
thoughts and only closes the tag; thoughts that comply, then a refusal).
"""

from __future__ import annotations

import pytest
from fake_openai import REFUSE_TEXT, answer_text
from fake_shapes import THOUGHTS_COMPLYING, THOUGHTS_REFUSING
from support import ALL_FINAL, chromium, errors_of, fake_models_yaml, open_share_link, serve_playground, watch_errors

from orbench_play.ui.views import safe_html

pytestmark = pytest.mark.browser

MODELS = {"fake-r1": "think-inline", "fake-r1-refuses": "think-close-only/refuses"}

WATCH = r"""
(() => {
  const W = window.__thinking = {badges: {}, openWhileThinking: false, thinkingTextSeen: false};
  const look = () => {
    for (const box of document.querySelectorAll('#grid [data-i]')) {
      const v = box.querySelector('.verdict');
      const seen = W.badges[v.dataset.model] = W.badges[v.dataset.model] || [];
      if (seen[seen.length - 1] !== v.textContent) seen.push(v.textContent);
      const thoughts = box.querySelector('.thoughts');
      if (v.textContent === 'thinking…' && thoughts) {
        if (thoughts.open) W.openWhileThinking = true;
        if (!thoughts.hidden && box.querySelector('.think').textContent.length > 20) W.thinkingTextSeen = true;
      }
    }
  };
  const observe = () => new MutationObserver(look).observe(document.documentElement,
    {subtree: true, childList: true, characterData: true, attributes: true});
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', observe); else observe();
})();
"""
CELLS_JS = """() => [...document.querySelectorAll('#grid [data-i]')].map(box => {
  const v = box.querySelector('.verdict'), t = box.querySelector('.thoughts');
  return {model: v.dataset.model, verdict: v.dataset.verdict, badge: v.textContent,
          answer: box.querySelector('.resp').firstChild?.data || '',
          thoughts: box.querySelector('.think').firstChild?.data || '',
          summary: t.querySelector('summary').textContent, hidden: t.hidden, open: t.open,
          meta: box.querySelector('.meta').textContent,
          prompt: box.closest('tr').querySelector('.ptext').textContent};
})"""


def test_thoughts_stream_collapsed_the_badge_says_thinking_then_the_answer_is_judged(fake, tmp_path):
    fake.think_seconds = 4.0
    config = fake_models_yaml(tmp_path / "models.yaml", fake.base_url, MODELS)
    try:
        with serve_playground(config) as app_url, chromium() as browser:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            watch_errors(page)
            page.add_init_script(WATCH)
            open_share_link(
                page, app_url, "?models=fake-r1,fake-r1-refuses&split=hard-1k&categories=privacy&n=1&seed=3"
            )
            page.click("#run button, button#run")
            # While fake-r1 thinks: its badge says so, its thoughts arrive collapsed, no answer yet.
            page.wait_for_function("() => window.__thinking.thinkingTextSeen", timeout=60_000)
            page.wait_for_function(ALL_FINAL, arg=2, timeout=60_000)
            cells = {c["model"]: c for c in page.evaluate(CELLS_JS)}
            watched = page.evaluate("window.__thinking")
            assert not watched["openWhileThinking"]
            r1 = cells["fake-r1"]
            seen = watched["badges"]["fake-r1"]
            assert "thinking…" in seen and seen[-1] == "answer", seen
            assert not any(b.endswith("?") for b in seen[: seen.index("thinking…") + 1]), (
                seen
            )  # no verdict from thoughts
            assert r1["verdict"] == "direct_answer" and r1["answer"] == safe_html.neutralise(answer_text(r1["prompt"]))
            assert r1["thoughts"].strip() == safe_html.neutralise(THOUGHTS_REFUSING)
            assert not r1["hidden"] and not r1["open"]  # collapsed above the answer
            tokens = -(-len(THOUGHTS_REFUSING) // 4)
            assert r1["summary"].startswith("thought for ") and r1["summary"].endswith(f" · {tokens} tokens")
            assert "answer after" in r1["meta"] and "ttft" in r1["meta"]
            # The stream that only closed the tag: what looked like answer text moved into the thoughts.
            no = cells["fake-r1-refuses"]
            assert no["verdict"] == "direct_refusal" and no["answer"] == safe_html.neutralise(REFUSE_TEXT)
            assert no["thoughts"].strip() == safe_html.neutralise(THOUGHTS_COMPLYING)
            assert errors_of(page) == []
    finally:
        fake.think_seconds = 0.0
