"""Handlers of the set-up controls: page load (the share link pre-fills the
form), the share link itself, and adding models by string or endpoint."""

from __future__ import annotations

import dataclasses
from typing import Any

import gradio as gr

from ... import guards
from ...asking.prompts import SYSTEM_PROMPTS
from ...models import CatalogError, custom_endpoint
from ...types import DEFAULT_SPLITS
from ..state.query import MAX_MODELS, number_text, parse_query, to_query
from ..state.session import Session, usable_session
from .base import PlaygroundBase, settle_default
from .frames import toast

SHARE_INFO = (
    "Pre-fills models, splits, categories, size, seed and the generation settings (a custom system prompt "
    "too) for whoever opens it. Custom endpoints and API keys are never in links."
)


class SetupHandlers(PlaygroundBase):
    def on_load(self, sess: Session, request: gr.Request) -> tuple:
        params = dict(request.query_params) if request is not None else {}
        setup, warnings = parse_query(params, self.default_setup)
        extra = [m for m in setup.models if m not in self.catalog.entries]
        return (
            gr.update(choices=self.model_choices(sess, extra), value=setup.models),
            setup.split,
            setup.categories,
            setup.n,
            setup.seed,
            self.banner(setup.split, warnings),
            # The generation settings, in `build()`'s `load_outputs` order.
            setup.preset,
            "" if setup.temperature is None else number_text(setup.temperature),
            "" if setup.top_p is None else number_text(setup.top_p),
            setup.max_tokens,
            setup.repeats,
            setup.focus,
            setup.system,
            setup.reasoning_effort,
            setup.follow_up,
            settle_default(setup.models) if setup.settle is None else setup.settle,
            setup.settle is not None,  # a link that sets the switch: it no longer follows the models
        )

    def share_link(
        self, models, split, categories, n, seed, base, sess: Session,
        preset: str | None = None, custom_system: str | None = None, temperature: Any = None, top_p: Any = None,
        max_tokens: Any = None, repeats: Any = None, focus: bool | None = None, reasoning_effort: Any = None,
        follow_up: Any = None, settle: bool | None = None,
    ) -> str:  # fmt: skip
        """The page's set-up as a link. A custom system prompt goes in as text (its
        preset is then left out), capped as in the form; a custom endpoint never goes
        in (`left_out` names them); a temperature/top_p that is not a number is left out."""
        left = set(self.left_out(models, sess))
        names = [m for m in (models or []) if m not in left]

        def number(value: Any) -> float | None:
            try:
                return float(value) if value not in (None, "") and str(value).strip() else None
            except (TypeError, ValueError):
                return None

        system = (custom_system or "").strip()
        shared_preset = None if system else (preset or "none")
        settled = None if settle is None or bool(settle) == settle_default(names) else bool(settle)
        try:
            return (base or "/") + to_query(
                names, split or list(DEFAULT_SPLITS), categories or [], int(n or 1), int(seed or 0),
                preset=shared_preset if shared_preset in SYSTEM_PROMPTS else None,
                temperature=number(temperature), top_p=number(top_p),
                max_tokens=int(max_tokens) if max_tokens not in (None, "") else None,
                repeats=int(repeats) if repeats not in (None, "") else None, focus=bool(focus), system=system,
                reasoning_effort=str(reasoning_effort or "") or None, follow_up=str(follow_up or "") or None,
                settle=settled,
            )  # fmt: skip
        except (TypeError, ValueError, OverflowError):
            return base or "/"

    @staticmethod
    def settle_follows(models, touched: bool | None) -> Any:
        """The settle switch follows the chosen models (on for the embedded demo models
        only) until the visitor sets it, or a link did."""
        return gr.skip() if touched else settle_default(models or [])

    @staticmethod
    def left_out(models, sess: Session | None) -> list[str]:
        """The chosen models a link cannot carry: the visitor's custom endpoints."""
        extra = sess.extra_models if isinstance(sess, Session) else {}
        return [m for m in (models or []) if m in extra and extra[m].api_base]

    def share_box(self, models, split, categories, n, seed, base, sess: Session, *settings: Any) -> dict[str, Any]:
        """The page's share box: the link (`share_link`), and under it what the link
        carries and what it leaves out, and why."""
        link = self.share_link(models, split, categories, n, seed, base, sess, *settings)
        left = self.left_out(models, sess)
        if left:
            names = ", ".join(left)
            info = (
                f"Left out: {names} (custom endpoint{'s' if len(left) > 1 else ''}). API keys are never put in "
                "links, so whoever opens it must add the endpoint again under Add a model."
            )
        else:
            info = SHARE_INFO
        return gr.update(value=link, info=info)

    def add_model_string(self, text: str, models, sess: Session) -> tuple:
        name = (text or "").strip()
        current = list(models or [])
        if not name:
            gr.Warning("Type a LiteLLM model string, e.g. groq/llama-3.1-8b-instant.")
            return gr.update(), text
        if len(current) >= MAX_MODELS and name not in current:
            gr.Warning(f"At most {MAX_MODELS} models per run: remove one first.")
            return gr.update(), text
        try:
            spec = self.resolve(name, sess)
            guards.check_model(spec)
        except (guards.GuardError, CatalogError) as exc:
            toast(str(exc))  # escaped: the message quotes what the visitor typed
            return gr.update(), text
        unknown = self.unknown_model([spec], sess)
        if unknown:
            toast(unknown)
            return gr.update(), text
        if name not in current:
            current.append(name)
        return gr.update(
            choices=self.model_choices(sess, [m for m in current if m not in self.catalog.entries]), value=current
        ), ""

    def add_custom_endpoint(
        self, base_url: str, model_id: str, api_key: str, models, sess: Session, request: gr.Request | None = None
    ) -> tuple:
        sess = usable_session(sess)
        sess.touch()
        current = list(models or [])
        share = guards.visitors.request_address(request)  # the visitor's share of the DNS threads
        try:
            spec = dataclasses.replace(custom_endpoint(base_url, model_id, api_key or None), lookup_share=share)
            if guards.public_mode():  # each check is a DNS look-up: so many a minute, so many at once
                sess.limits().check_endpoint_check()
            # public mode: no loopback, private or metadata addresses
            guards.check_model(spec, visitor=sess.sid, share=share)
        except (CatalogError, guards.GuardError) as exc:
            toast(str(exc))  # escaped: the message quotes what the visitor typed
            return gr.update(), sess
        if len(current) >= MAX_MODELS and spec.name not in current:
            gr.Warning(f"At most {MAX_MODELS} models per run: remove one first.")
            return gr.update(), sess
        sess.extra_models[spec.name] = spec
        if spec.name not in current:
            current.append(spec.name)
        extra = [m for m in current if m not in self.catalog.entries and m not in sess.extra_models]
        return gr.update(choices=self.model_choices(sess, extra), value=current), sess
