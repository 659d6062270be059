"""The "Compare two variants" handlers (the `compare` API endpoint)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from ..state.session import Session
from ..views import compare_view
from .base import PlaygroundBase


class CompareHandlers(PlaygroundBase):
    def compare_choices(self, a: str | None, b: str | None, sess: Session) -> tuple:
        """Refresh the two variant pickers after a run; keep valid picks, else
        A = the session's first variant and B = its newest other one."""
        names = sess.variants() if isinstance(sess, Session) else []
        labels = sess.labels if isinstance(sess, Session) else {}
        choices = [(labels.get(v, v), v) for v in names]
        a = a if a in names else (names[0] if names else None)
        b = b if b in names and b != a else next((v for v in reversed(names) if v != a), None)
        return gr.update(choices=choices, value=a), gr.update(choices=choices, value=b)

    def compare(self, a: str | None, b: str | None, sess: Session) -> tuple[str, dict[str, Any]]:
        """Two variants of the session side by side: the `compare` API endpoint.
        Returns (HTML of the comparison view, the same as JSON)."""
        from ...compare import CompareError, compare_variants

        sess = sess if isinstance(sess, Session) and not sess.closed else Session()
        if not a or not b:
            message = "Pick two variants (A and B) from this session's runs first."
            return compare_view.render_comparison(None, message), {"error": message}
        try:
            cmp = compare_variants(sess.effective_results(), str(a), str(b))
        except CompareError as exc:
            message = str(exc)
            message = message[:1].upper() + message[1:]
            return compare_view.render_comparison(None, message), {"error": message}
        payload = {
            "a": cmp.name_a,
            "b": cmp.name_b,
            "summary": cmp.summary,
            "kinds": [
                {
                    "kind": k.kind,
                    "n": k.n,
                    "rate_a": k.rate_a.rate,
                    "rate_b": k.rate_b.rate,
                    "refusals_a": k.rate_a.k,
                    "answers_a": k.rate_a.n,
                    "refusals_b": k.rate_b.k,
                    "answers_b": k.rate_b.n,
                    "change_points": round(100 * k.change, 2),
                    "only_a_refused": k.b,
                    "only_b_refused": k.c,
                    "ties": k.ties,
                    "p_value": k.p_value,
                    "method": k.method,
                    "significant": k.significant,
                    "sentence": k.sentence,
                }
                for k in cmp.kinds.values()
            ],
            "rows": [
                {
                    "row_id": r.row_id,
                    "kind": r.kind,
                    "category": r.category,
                    "prompt": r.prompt,
                    "verdict_a": compare_view.tally_text(r.a)[0],
                    "verdict_b": compare_view.tally_text(r.b)[0],
                    "answer_a": r.answer_a,
                    "answer_b": r.answer_b,
                    "disagree": r.disagree,
                }
                for r in cmp.rows
            ],
            "only_a": cmp.only_a,
            "only_b": cmp.only_b,
        }
        return compare_view.render_comparison(cmp, labels=sess.labels), payload
