"""Handlers of the set-up controls: page load (the share link pre-fills the
form), the share link itself, and adding models by string or endpoint."""

from __future__ import annotations

import dataclasses
from typing import Any

import gradio as gr

from ... import data, guards
from ...asking.prompts import SYSTEM_PROMPTS
from ...models import CatalogError, custom_endpoint, listed_price
from ...types import CATEGORIES, DEFAULT_MAX_TOKENS, DEFAULT_SPLITS, GenerationParams
from ..state.query import DEFAULT_FOLLOW_UP, MAX_MODELS, number_text, parse_query, to_query
from ..state.resume import RESTORED, RESTORED_LINK, RESTORED_SETUP
from ..state.session import Session, usable_session
from .base import PlaygroundBase, public_cell_cap, settle_default
from .frames import toast


def hub_prompt_set(source: str) -> bool:
    """Whether a prompt set's source is a Hub id (which a link can carry), not a file or
    folder on this machine (the file system is asked only outside public mode)."""
    try:
        return data.parse_source(source, allow_local=not guards.public_mode()).kind == "hub"
    except data.DataError:
        return False


SHARE_INFO = (
    "Pre-fills models, splits, categories, size, seed, the generation settings (a custom system prompt too), "
    "Verdicts by and a Hub prompt set for whoever opens it. Custom endpoints, files on this machine and API "
    "keys are never in links."
)

SETTINGS = (
    "preset", "custom_system", "temperature", "top_p", "max_tokens", "repeats", "focus", "reasoning_effort",
    "follow_up", "settle", "judge", "prompt_set", "prompt_col", "category_col", "label_col", "settle_touched",
)  # fmt: skip
"""The set-up controls `share_box` gets after models, split, categories, n, seed, the page's
base and the session, in `layout`'s `share_inputs` order."""
CONTROLS = ("models", "split", "categories", "n", "seed", *SETTINGS)
"""Every set-up control by name, as a session keeps them (`Session.controls`) for a reload."""
SETUP_KEYS = frozenset(
    "models split categories n seed preset temperature top_p max_tokens repeats focus system reasoning_effort "
    "follow_up settle judge prompts prompt_col category_col label_col".split()
)
"""The URL query keys that describe a set-up (`query`): a link that names any of them is one."""


def link_setup(params: dict[str, str]) -> dict[str, str]:
    """The set-up keys of a page load's query (what decides whether a reload is of the same link)."""
    return {k: str(v) for k, v in params.items() if k in SETUP_KEYS}


class SetupHandlers(PlaygroundBase):
    def on_load(self, sess: Session, request: gr.Request | None = None, notice: str | None = None) -> tuple:
        """The set-up controls when a page loads: the link's set-up (or the defaults); after a
        reload that adopted the session, the set-up the session last showed, unless the page
        was opened at another link. The last value is the visitor's notice (`resume`), which
        then says whether the set-up came back."""
        params = dict(request.query_params) if request is not None else {}
        setup, warnings = parse_query(params, self.default_setup)
        query = link_setup(params)
        kept = sess.controls if isinstance(sess, Session) else None
        if notice == RESTORED and kept is not None:
            if not query or query == sess.load_query:
                return self._restored(sess, kept, warnings)
            notice = RESTORED_LINK
        if isinstance(sess, Session):
            sess.load_query = query
        judge = self._offered_judge(setup.judge, warnings)
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
            judge,
            setup.prompts,
            setup.prompt_col,
            setup.category_col,
            setup.label_col,
            notice or "",
        )

    def _restored(self, sess: Session, kept: dict[str, Any], warnings: list[str]) -> tuple:
        """`on_load`'s outputs from the controls the session last showed (a reload)."""
        models = [str(m) for m in kept.get("models") or []]
        extra = [m for m in models if m not in self.catalog.entries]
        judge = str(kept.get("judge") or "") or self.judge
        offered = {value for _, value in self.judge_choices()}

        def value(name: str, default: Any = None) -> Any:
            got = kept.get(name)
            return default if got is None else got

        return (
            gr.update(choices=self.model_choices(sess, extra), value=models),
            value("split", list(DEFAULT_SPLITS)),
            value("categories", []),
            value("n", 1),
            value("seed", 0),
            self.banner(value("split", list(DEFAULT_SPLITS)), warnings),
            value("preset", "none"),
            value("temperature", ""),
            value("top_p", ""),
            value("max_tokens", DEFAULT_MAX_TOKENS),
            value("repeats", 1),
            bool(value("focus", False)),
            value("custom_system", ""),
            value("reasoning_effort", ""),
            value("follow_up", DEFAULT_FOLLOW_UP),
            bool(value("settle", settle_default(models))),
            bool(value("settle_touched", False)),
            judge if judge in offered else self.judge,
            value("prompt_set", ""),
            value("prompt_col", "prompt"),
            value("category_col", ""),
            value("label_col", ""),
            RESTORED_SETUP,
        )

    def _offered_judge(self, name: str, warnings: list[str]) -> str:
        """A link's judge when the page offers it (else the default, with a warning)."""
        if not name:
            return self.judge
        if name in {value for _, value in self.judge_choices()}:
            return name
        warnings.append(
            f"Ignored judge={name!r} in the link: it is not offered here (set its API key, or pick another "
            "under Verdicts by)."
        )
        return self.judge

    def share_link(
        self, models, split, categories, n, seed, base, sess: Session,
        preset: str | None = None, custom_system: str | None = None, temperature: Any = None, top_p: Any = None,
        max_tokens: Any = None, repeats: Any = None, focus: bool | None = None, reasoning_effort: Any = None,
        follow_up: Any = None, settle: bool | None = None, judge: Any = None, prompt_set: Any = None,
        prompt_col: Any = None, category_col: Any = None, label_col: Any = None,
    ) -> str:  # fmt: skip
        """The page's set-up as a link. A custom system prompt goes in as text (its
        preset is then left out), capped as in the form; a custom endpoint never goes
        in, nor a prompt set on this machine (`left_out` names them); a temperature/top_p
        that is not a number is left out; the judge when it is not the default."""
        left = {name for name, _ in self.left_out(models, sess)}
        names = [m for m in (models or []) if m not in left]

        def number(value: Any) -> float | None:
            try:
                return float(value) if value not in (None, "") and str(value).strip() else None
            except (TypeError, ValueError):
                return None

        system = (custom_system or "").strip()
        shared_preset = None if system else (preset or "none")
        settled = None if settle is None or bool(settle) == settle_default(names) else bool(settle)
        chosen_judge = str(judge or "").strip()
        source = str(prompt_set or "").strip()
        try:
            return (base or "/") + to_query(
                names, split or list(DEFAULT_SPLITS), categories or [], int(n or 1), int(seed or 0),
                preset=shared_preset if shared_preset in SYSTEM_PROMPTS else None,
                temperature=number(temperature), top_p=number(top_p),
                max_tokens=int(max_tokens) if max_tokens not in (None, "") else None,
                repeats=int(repeats) if repeats not in (None, "") else None, focus=bool(focus), system=system,
                reasoning_effort=str(reasoning_effort or "") or None, follow_up=str(follow_up or "") or None,
                settle=settled, judge=chosen_judge if chosen_judge and chosen_judge != self.judge else None,
                prompts=source if source and hub_prompt_set(source) else None,
                prompt_col=str(prompt_col or "").strip() or None, category_col=str(category_col or "").strip() or None,
                label_col=str(label_col or "").strip() or None,
            )  # fmt: skip
        except (TypeError, ValueError, OverflowError):
            return base or "/"

    @staticmethod
    def settle_follows(models, touched: bool | None) -> Any:
        """The settle switch follows the chosen models (on for the embedded demo models
        only) until the visitor sets it, or a link did."""
        return gr.skip() if touched else settle_default(models or [])

    @staticmethod
    def left_out(models, sess: Session | None, prompt_set: Any = None) -> list[tuple[str, str]]:
        """What of the set-up a link cannot carry, each with why: the visitor's custom
        endpoints (their key stays in the session) and a prompt set on this machine."""
        extra = sess.extra_models if isinstance(sess, Session) else {}
        out = [(m, "custom endpoint") for m in (models or []) if m in extra and extra[m].api_base]
        source = str(prompt_set or "").strip()
        if source and not hub_prompt_set(source):
            out.append((source, "prompt set on this machine"))
        return out

    @staticmethod
    def remember(sess: Session, **controls: Any) -> None:
        """Keep the set-up controls as the page shows them (`Session.controls`, by `CONTROLS`
        name), over what was kept before: the share box's handler gives them all on every
        change, a run the ones it was run with (so a reload gets the run's own set-up back
        even where a change event never reached the server)."""
        if isinstance(sess, Session) and not sess.closed:
            sess.controls = {**(sess.controls or {}), **{k: v for k, v in controls.items() if k in CONTROLS}}

    def share_box(self, models, split, categories, n, seed, base, sess: Session, *settings: Any) -> tuple:
        """The page's share box (the link, and under it what the link carries and what it
        leaves out, and why) and the next run's size and cost (`run_size`). The session
        keeps the controls as they are now, so a reload shows them again."""
        named = dict(zip(SETTINGS, settings, strict=False))
        self.remember(
            sess, models=list(models or []), split=list(split or []), categories=list(categories or []), n=n,
            seed=seed, **named,
        )  # fmt: skip
        link = self.share_link(
            models,
            split,
            categories,
            n,
            seed,
            base,
            sess,
            *(named.get(k) for k in SETTINGS[: SETTINGS.index("settle_touched")]),
        )
        left = self.left_out(models, sess, named.get("prompt_set"))
        if left:
            names = ", ".join(f"{name} ({why})" for name, why in left)
            info = f"Left out: {names}."
            if any(why == "custom endpoint" for _, why in left):
                info += " API keys are never put in links, so whoever opens it must add the endpoint again under Add a model."
            if any(why != "custom endpoint" for _, why in left):
                info += " Only a prompt set on the Hub (owner/name) can travel in a link."
        else:
            info = SHARE_INFO
        return gr.update(value=link, info=info), self.run_size(models, split, categories, n, sess, named)

    def run_size(self, models, split, categories, n, sess: Session | None, named: dict[str, Any]) -> str:
        """The next run's size (cells) and, where the models have LiteLLM prices, its cost
        if every answer ran to its max tokens: shown beside Run, before it is pressed."""
        from ..views.run_size_view import ModelCost, render_run_size

        try:
            per = max(1, int(n or 1))
            repeats = max(1, int(named.get("repeats") or 1))
            max_tokens = int(named.get("max_tokens") or DEFAULT_MAX_TOKENS)
        except (TypeError, ValueError, OverflowError):
            return render_run_size(None)
        try:
            splits = data.parse_splits(split) if split else []
        except data.DataError:
            splits = []
        prompts = len(splits) * len(categories or CATEGORIES) * per
        costs = []
        params = GenerationParams(max_tokens=max_tokens).with_model_max_tokens_at_default()
        system_chars = len(str(named.get("custom_system") or "")) or len(
            SYSTEM_PROMPTS.get(str(named.get("preset") or "none"), "") or ""
        )
        for name in dict.fromkeys(str(m) for m in models or []):
            try:
                spec = self.resolve(name, sess)
            except CatalogError:
                costs.append(ModelCost(name, None, 0))
                continue
            costs.append(ModelCost(spec.display, listed_price(spec), params.max_tokens_for(spec), spec.is_local))
        own_set = str(named.get("prompt_set") or "").strip()
        return render_run_size(
            prompts, costs, repeats=repeats, per_category=per, prompt_set=own_set, system_chars=system_chars,
            limits=public_cell_cap(),
        )  # fmt: skip

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
