"""The playground's event handlers: they turn controls into engine runs and
render the visitor's session; the page itself is built in `layout.py`.

Flow of a run: the Run handler resolves models and samples prompts, starts a
*pump* task that folds engine events into the visitor's `Session` as they
arrive, and itself only re-renders the session at most every
`RENDER_INTERVAL_S` seconds (one merged update for all cells). Stop cancels
the handler and the pump (which closes the engine generator, cancelling the
in-flight requests); whatever finished is already in the session.

Cold start: nothing here imports LiteLLM or reads the dataset at import or
build time. `warm_up()` imports the engine and LiteLLM in a background thread
after launch, and the first run awaits it off the event loop, saying so.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import math
import os
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import gradio as gr

from .. import data, guards
from ..models import Catalog, CatalogError, custom_endpoint, load_catalog
from ..prompts import (
    SYSTEM_PROMPTS,
    PromptError,
    resolve_system_prompt,
    variant_of,
)
from ..types import SPLITS, GenerationParams, ModelSpec, Prompt, RunConfig
from . import render
from .query import (
    DEFAULT_MAX_TOKENS,
    MAX_MODELS,
    MAX_PER_CATEGORY,
    MAX_REPEATS,
    Setup,
    number_text,
    parse_query,
    to_query,
)
from .session import Session

log = logging.getLogger(__name__)

RENDER_INTERVAL_S = 0.1
"""At most ~10 grid updates a second, however many cells stream."""
SLOW_RENDER_INTERVAL_S = 0.25
"""Used instead when the grid HTML is big (many long answers)."""
BIG_GRID_CHARS = 250_000
MAX_PROMPT_CHARS = 4000
REPEAT_HINT = (
    "⚠ Repeats at temperature 0 (or the provider's default) mostly give the same answer k times: "
    "set a temperature such as 0.7 to see how stable the verdicts are."
)


# --- cold start -------------------------------------------------------------------------

_warmed = threading.Event()
_warm_lock = threading.Lock()


def warm_up() -> None:
    """Import the engine and LiteLLM (the ~7 s part of a cold start). Idempotent, thread-safe."""
    if _warmed.is_set():
        return
    with _warm_lock:
        if _warmed.is_set():
            return
        try:
            from .. import llm, verdicts

            verdicts.LiveVerdict().finish("Sure, here you go.", "stop")  # loads the classifier
            llm.warm_up()
        except Exception:  # the run will report the real error per cell
            log.exception("warming up LiteLLM failed")
        _warmed.set()
        with contextlib.suppress(Exception):
            from ..cache import default_cache

            default_cache()
        with contextlib.suppress(Exception):  # the default split, if it is on disk
            if data.split_file("hard-1k") is not None:
                data.load_split("hard-1k")


def warm_up_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm_up, name="orbench-warm-up", daemon=True)
    thread.start()
    return thread


def data_notice(split: str) -> str:
    """Empty when the split can be read locally (or from the Hub); else how to provide data."""
    try:
        path = data.split_file(split)
    except data.DataError as exc:
        return f"{exc} Custom prompts still work without data."
    if path is None and data.hub_offline():
        return (
            f"No OR-Bench data: ORBENCH_DATA_DIR is not set and the Hub is off (HF_HUB_OFFLINE). "
            f"Set ORBENCH_DATA_DIR to a folder with {data.FILES[split]} (from the bench-llm/or-bench "
            "dataset), or allow Hub access. Custom prompts still work without data."
        )
    note = None
    with contextlib.suppress(Exception):
        if path is not None and split == "80k":
            note = data.split_note(split)
    return note or ""


def _paper_points() -> list[tuple[str, float, float]]:
    try:
        from ..scoring import load_paper_results

        frame = load_paper_results()
    except Exception as exc:  # the plot still shows the session's models
        log.warning("paper results unavailable: %s", exc)
        return []
    return [(str(m), float(x), float(y)) for m, x, y in frame.itertuples(index=False, name=None)]


def _custom_prompt(text: str) -> Prompt:
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    return Prompt(row_id=f"custom:{digest}", split="custom", category="custom", text=text)


def _optional_float(value: Any, name: str, lo: float, hi: float, *, low_open: bool = False) -> float | None:
    """A form number that may be empty (None = the provider's default)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number (got {value!r}).") from None
    if math.isnan(number) or not (lo < number <= hi if low_open else lo <= number <= hi):
        bounds = f"{'above' if low_open else 'from'} {lo:g} {'up to' if low_open else 'to'} {hi:g}"
        raise ValueError(f"{name} must be {bounds}, or empty for the provider's default (got {number:g}).")
    return number


def _repeats(value: Any) -> int:
    try:
        k = int(value if value not in (None, "") else 1)
    except (TypeError, ValueError):
        raise ValueError(f"Repeats must be a whole number from 1 to {MAX_REPEATS}.") from None
    if not 1 <= k <= MAX_REPEATS:
        raise ValueError(f"Repeats must be from 1 to {MAX_REPEATS} (got {k}).")
    return k


def repeat_hint(repeats: Any, temperature: Any) -> str:
    """The warning shown when repeats > 1 but the temperature is unset or 0."""
    try:
        k = int(repeats or 1)
    except (TypeError, ValueError):
        k = 1
    try:
        t = float(temperature) if temperature not in (None, "") else 0.0
    except (TypeError, ValueError):
        t = 0.0
    return REPEAT_HINT if k > 1 and t <= 0 else ""


class Playground:
    """The event handlers (`layout.build_blocks` wires them to the page). Holds
    only what is the same for every visitor (catalog, paper points); per-visitor
    data lives in the `Session` passed through `gr.State`."""

    def __init__(self, catalog: Catalog | None = None, *, catalog_error: str | None = None):
        self.catalog_error = catalog_error
        if catalog is None:
            try:
                catalog = load_catalog()
            except CatalogError as exc:
                self.catalog_error = str(exc)
                catalog = Catalog()  # keep the embedded model usable despite a broken config
                with contextlib.suppress(Exception):
                    from ..models import local_spec

                    spec = local_spec()
                    if spec is not None:
                        catalog.entries[spec.name] = spec
        self.catalog = catalog
        self.paper = _paper_points()
        self.judge = os.environ.get("ORBENCH_JUDGE") or "keyword"
        try:
            from ..local_model import LOCAL_MODEL_NAME
        except Exception:
            LOCAL_MODEL_NAME = "local/smollm2-135m"
        self.default_models = [LOCAL_MODEL_NAME] if LOCAL_MODEL_NAME in catalog.entries else []
        self.default_setup = Setup(models=list(self.default_models))

    # -- helpers --------------------------------------------------------------------

    def model_choices(self, sess: Session | None = None, extra: list[str] | None = None) -> list[tuple[str, str]]:
        choices = list(self.catalog.choices())
        known = {name for _, name in choices}
        if sess is not None:
            for name, spec in sess.extra_models.items():
                if name not in known:
                    choices.append((spec.display, name))
                    known.add(name)
        for name in extra or []:
            if name not in known:
                choices.append((f"{name} (LiteLLM model string)", name))
                known.add(name)
        return choices

    def judge_choices(self) -> list[tuple[str, str]]:
        """The page's judge menu: keyword, paper presets whose key is set, catalog
        models; the ORBENCH_JUDGE default is listed even when it cannot run yet
        (choosing it then says which variable to set)."""
        from ..judge_presets import judge_choices

        choices = judge_choices(self.catalog.names())
        if self.judge not in {value for _, value in choices}:
            choices.append((f"{self.judge} (ORBENCH_JUDGE)", self.judge))
        return choices

    def judge_choice(self, judge: str | None) -> str:
        """The run's judge (None: the ORBENCH_JUDGE default); a ValueError with
        one line saying what to set when it cannot work."""
        from ..judge_presets import check_judge

        return check_judge(judge or self.judge)

    def resolve(self, name: str, sess: Session | None = None) -> ModelSpec:
        if sess is not None and name in sess.extra_models:
            return sess.extra_models[name]
        return self.catalog.resolve(name)

    def banner(self, split: str, warnings: list[str] | None = None) -> str:
        lines = []
        if self.catalog_error:
            lines.append(f"⚠ Model config problem: {self.catalog_error}")
        lines += [f"⚠ {w}" for w in self.catalog.warnings]
        notice = data_notice(split)
        if notice:
            lines.append(f"ℹ {notice}")
        lines += [f"⚠ {w}" for w in warnings or []]
        if not self.catalog.entries:
            lines.append(
                "ℹ No models configured: type a LiteLLM model string into the model box, add a custom "
                "endpoint, or set ORBENCH_MODELS / a provider API key."
            )
        return "\n\n".join(render.safe_text(line) for line in lines)

    def _scores(self, sess: Session):
        from ..scoring import score_results

        return score_results(sess.effective_results(), key=variant_of)

    def _score_outputs(self, sess: Session) -> tuple[str, str]:
        order = {name: i for i, name in enumerate(sess.labels)}
        scores = sorted(self._scores(sess), key=lambda s: order.get(s.model, len(order)))
        models = sess.variant_models()
        return (
            render.render_scoreboard(scores, sess.labels, models=models),
            render.render_plot(scores, self.paper, sess.labels, models),
        )

    def _export_files(self, sess: Session) -> tuple[str | None, str | None]:
        from ..export import results_to_csv, results_to_jsonl

        results = sess.effective_results()
        if not results:
            return None, None
        folder = Path(sess.tmpdir())
        csv_path = folder / "orbench-session.csv"
        jsonl_path = folder / "orbench-session.jsonl"
        csv_path.write_text(results_to_csv(results), encoding="utf-8")
        jsonl_path.write_text(results_to_jsonl(results), encoding="utf-8")
        return str(csv_path), str(jsonl_path)

    def _results_json(self, sess: Session) -> dict[str, Any]:
        run = sess.run
        run_ids = set(run.cells) if run is not None else set()
        return {
            "run": None
            if run is None
            else {
                "number": run.number,
                "total": run.total(),
                "done": run.done_count(),
                "stopped": run.stopped,
                "notes": list(run.notes),
                "results": [
                    {**sess.effective(v.result).to_row(), "cell_id": v.result.cell_id}
                    for v in run.cells.values()
                    if v.result is not None
                ],
                "stopped_cells": [v.cell_id for v in run.cells.values() if v.stopped],
            },
            "session_results": len(sess.results),
            "in_run": len(run_ids),
        }

    def frame(self, sess: Session, *, final: bool, scores: bool = True, notes: list[str] | None = None) -> tuple:
        """All outputs of a run event, in `self.run_outputs` order."""
        progress = render.render_progress(sess.run, notes or [])
        grid = render.render_grid(sess.run, sess.overrides)
        board, plot = self._score_outputs(sess) if scores or final else (gr.skip(), gr.skip())
        if final:
            csv_path, jsonl_path = self._export_files(sess)
            extras = (
                csv_path,
                jsonl_path,
                self._results_json(sess),
                gr.update(choices=sess.overridable_cells()),
            )
        else:
            extras = (gr.skip(), gr.skip(), gr.skip(), gr.skip())
        return (progress, grid, board, plot, *extras, sess)

    def message_frame(self, sess: Session, message: str) -> tuple:
        progress = f'<div class="progress-box"><div class="prog-status">{render.safe_text(message)}</div></div>'
        return (progress, gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), gr.skip(), sess)

    # -- runs -----------------------------------------------------------------------

    def _specs(self, models: list[str] | str | None, sess: Session) -> list[ModelSpec]:
        names: list[str] = []
        for name in [models] if isinstance(models, str) else list(models or []):
            name = str(name).strip()
            if name and name not in names:
                names.append(name)
        if not names:
            raise ValueError("Choose at least one model.")
        if len(names) > MAX_MODELS:
            raise ValueError(f"Choose at most {MAX_MODELS} models (got {len(names)}).")
        try:
            return [self.resolve(n, sess) for n in names]
        except CatalogError as exc:
            raise ValueError(str(exc)) from None

    def params(
        self,
        max_tokens: Any,
        preset: str | None = "none",
        custom_system: str | None = "",
        temperature: Any = None,
        top_p: Any = None,
    ) -> GenerationParams:
        """The run's generation settings from the form. A non-empty custom system
        prompt wins over the preset; empty temperature/top_p mean the provider's
        default. Raises ValueError with a message for the page."""
        try:
            tokens = int(max_tokens)
        except (TypeError, ValueError):
            tokens = DEFAULT_MAX_TOKENS
        custom = (custom_system or "").strip()
        if len(custom) > MAX_PROMPT_CHARS:
            raise ValueError(
                f"The system prompt is too long ({len(custom):,} characters; at most {MAX_PROMPT_CHARS:,})."
            )
        if custom:
            try:
                text, pid = resolve_system_prompt(custom, allow_files=False)
            except PromptError as exc:
                raise ValueError(str(exc)) from None
        else:
            key = (preset or "none").strip() or "none"
            if key not in SYSTEM_PROMPTS:
                raise ValueError(f"Unknown system prompt preset {key!r}; choose one of {', '.join(SYSTEM_PROMPTS)}.")
            text, pid = resolve_system_prompt(key, allow_files=False)
        return GenerationParams(
            system_prompt=text,
            system_prompt_id=pid,
            temperature=_optional_float(temperature, "Temperature", 0.0, 2.0),
            top_p=_optional_float(top_p, "top_p", 0.0, 1.0, low_open=True),
            max_tokens=max(16, min(4096, tokens)),
        )

    async def run_setup(
        self, models, split, categories, n, seed, max_tokens, sess: Session,
        preset: str | None = None, custom_system: str | None = None, temperature: float | str | None = None,
        top_p: float | str | None = None, repeats: int | None = None, focus: bool | None = None,
        judge: str | None = None,
    ) -> AsyncIterator[tuple]:  # fmt: skip
        """Run a sampled set-up: the `run` API endpoint. Yields rendered frames.

        The generation settings (system prompt preset or custom text,
        temperature, top_p, max tokens, repeats) decide the run's variant; with
        `focus` the prompts the session's variants disagreed on are drawn first."""
        sess = sess if isinstance(sess, Session) else Session()
        try:
            specs = self._specs(models, sess)
            params = self.params(max_tokens, preset, custom_system, temperature, top_p)
            k = _repeats(repeats)
            if split not in SPLITS:
                raise ValueError(f"Unknown split {split!r}; choose one of {', '.join(SPLITS)}.")
            cats = data.parse_categories(list(categories or [])) or None
            per_category = int(n or 1)
            if not 1 <= per_category <= MAX_PER_CATEGORY:
                raise ValueError(f"Prompts per category must be between 1 and {MAX_PER_CATEGORY}.")
            seed_value = int(seed or 0)
            judge_name = self.judge_choice(judge)
        except (ValueError, TypeError, data.DataError) as exc:
            yield self.message_frame(sess, str(exc))
            return
        yield self.message_frame(sess, f"Loading the {split} split…")
        try:
            prompts = await asyncio.to_thread(data.load_split, split)
            if focus:
                from ..focus import focus_sample

                picked = focus_sample(
                    prompts, sess.effective_results(), per_category=per_category, seed=seed_value, categories=cats
                )
            else:
                picked = data.sample(prompts, categories=cats, per_category=per_category, seed=seed_value)
        except data.DataError as exc:
            yield self.message_frame(sess, f"{exc} Custom prompts still work without data.")
            return
        if not picked.prompts:
            yield self.message_frame(sess, "No prompts matched: " + " ".join(picked.notes))
            return
        async for frame in self._drive(sess, specs, list(picked.prompts), list(picked.notes), params, k, judge_name):
            yield frame

    async def run_prompt(
        self, prompt, models, max_tokens, sess: Session,
        preset: str | None = None, custom_system: str | None = None, temperature: float | str | None = None,
        top_p: float | str | None = None, repeats: int | None = None, judge: str | None = None,
    ) -> AsyncIterator[tuple]:  # fmt: skip
        """Run one prompt of the user's own against the chosen models (same settings as a run)."""
        sess = sess if isinstance(sess, Session) else Session()
        text = (prompt or "").strip()
        try:
            if not text:
                raise ValueError("Type a prompt first.")
            try:
                text = guards.check_custom_prompt(text)
            except guards.GuardError as exc:
                raise ValueError(str(exc)) from None
            specs = self._specs(models, sess)
            params = self.params(max_tokens, preset, custom_system, temperature, top_p)
            k = _repeats(repeats)
            judge_name = self.judge_choice(judge)
        except ValueError as exc:
            yield self.message_frame(sess, str(exc))
            return
        async for frame in self._drive(sess, specs, [_custom_prompt(text)], [], params, k, judge_name):
            yield frame

    async def _drive(
        self, sess: Session, specs: list[ModelSpec], prompts: list[Prompt], notes: list[str],
        params: GenerationParams | Any, repeats: int = 1, judge: str | None = None,
    ) -> AsyncIterator[tuple]:  # fmt: skip
        """Run `prompts` × `specs` × `repeats` with `params` (a GenerationParams, or
        a bare max-tokens value for the default settings)."""
        if not isinstance(params, GenerationParams):
            params = self.params(params)
        if guards.public_mode():
            try:  # DNS look-ups for custom endpoints: off the event loop
                await asyncio.to_thread(guards.check_models, specs)
                sess.limits().check_run(
                    len(prompts) * len(specs) * max(1, repeats), exempt=all(s.owner_configured for s in specs)
                )
            except guards.GuardError as exc:
                yield self.message_frame(sess, str(exc))
                return
        if sess.running:  # a second run in the same tab replaces the first
            sess.cancel_task()
            sess.finish_run(stopped=True)
        if not _warmed.is_set():
            yield self.message_frame(sess, "Loading LiteLLM (first run after start-up)…")
            await asyncio.to_thread(warm_up)
        from .. import engine
        from ..cache import default_cache

        config = RunConfig(
            models=tuple(specs),
            prompts=tuple(prompts),
            params=params,
            judge=judge or self.judge,
            concurrency=max(16, min(64, len(specs) * 8)),
            repeats=repeats,
        )
        run = sess.begin_run(prompts, specs, notes, config.params, repeats=config.repeats)
        changed = asyncio.Event()

        async def pump() -> None:
            cache = await asyncio.to_thread(default_cache)
            agen = engine.run(config, cache=cache, resolve_judge=self.catalog.resolve)
            try:
                async for event in agen:
                    if sess.run is not run:
                        break
                    sess.apply(event)
                    changed.set()
            finally:
                await agen.aclose()

        task = asyncio.create_task(pump())
        sess.task = task
        scored_version = -1
        last_html = 0
        try:
            yield self.frame(sess, final=False)
            while not task.done():
                interval = SLOW_RENDER_INTERVAL_S if last_html > BIG_GRID_CHARS else RENDER_INTERVAL_S
                started = time.monotonic()
                await asyncio.wait({task}, timeout=interval)
                if task.done():
                    break
                # Keep the cadence even if the wait returned early.
                await asyncio.sleep(max(0.0, interval - (time.monotonic() - started)))
                if not changed.is_set() and not run.status:
                    continue
                changed.clear()
                rescore = sess.version != scored_version
                scored_version = sess.version
                out = self.frame(sess, final=False, scores=rescore)
                last_html = len(out[1])
                yield out
            failure = None
            if not task.cancelled() and task.exception() is not None:
                failure = f"The run failed: {task.exception()!r}"
                log.error("run failed", exc_info=task.exception())
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            if sess.task is task:
                sess.task = None
            if sess.run is run:
                sess.finish_run()
        yield self.frame(sess, final=True, notes=[failure] if failure else None)

    def stop(self, sess: Session) -> tuple:
        """Stop the visitor's run: cancel in-flight cells, keep finished ones."""
        sess = sess if isinstance(sess, Session) else Session()
        sess.cancel_task()
        if sess.run is not None and not sess.run.finished:
            sess.finish_run(stopped=True)
        return self.frame(sess, final=True)

    # -- comparison -------------------------------------------------------------------

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
        from ..compare import CompareError, compare_variants

        sess = sess if isinstance(sess, Session) else Session()
        if not a or not b:
            message = "Pick two variants (A and B) from this session's runs first."
            return render.render_comparison(None, message), {"error": message}
        try:
            cmp = compare_variants(sess.effective_results(), str(a), str(b))
        except CompareError as exc:
            message = str(exc)
            message = message[:1].upper() + message[1:]
            return render.render_comparison(None, message), {"error": message}
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
                    "verdict_a": render.tally_text(r.a)[0],
                    "verdict_b": render.tally_text(r.b)[0],
                    "answer_a": r.answer_a,
                    "answer_b": r.answer_b,
                    "disagree": r.disagree,
                }
                for r in cmp.rows
            ],
            "only_a": cmp.only_a,
            "only_b": cmp.only_b,
        }
        return render.render_comparison(cmp, labels=sess.labels), payload

    # -- overrides ------------------------------------------------------------------

    def override(self, cid: str, label: str, sess: Session) -> tuple:
        """Set a verdict by hand (the `override` API endpoint and the fallback form)."""
        sess = sess if isinstance(sess, Session) else Session()
        error = sess.set_override(str(cid or ""), str(label or ""))
        if error:
            gr.Warning(error)
        return self.frame(sess, final=True)[1:]

    def override_click(self, sess: Session, evt: gr.EventData) -> tuple:
        payload = getattr(evt, "_data", None) or {}
        return self.override(payload.get("cell", ""), payload.get("label", ""), sess)

    # -- set-up controls ----------------------------------------------------------------

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
        )

    def share_link(
        self, models, split, categories, n, seed, base, sess: Session,
        preset: str | None = None, custom_system: str | None = None, temperature: Any = None, top_p: Any = None,
        max_tokens: Any = None, repeats: Any = None, focus: bool | None = None,
    ) -> str:  # fmt: skip
        """The page's set-up as a link. A custom system prompt is never shared (its
        preset is left out); a temperature/top_p that is not a number is left out."""
        names = [
            m
            for m in (models or [])
            if not (isinstance(sess, Session) and m in sess.extra_models and sess.extra_models[m].api_base)
        ]

        def number(value: Any) -> float | None:
            try:
                return float(value) if value not in (None, "") and str(value).strip() else None
            except (TypeError, ValueError):
                return None

        shared_preset = None if (custom_system or "").strip() else (preset or "none")
        try:
            return (base or "/") + to_query(
                names, split or "hard-1k", categories or [], int(n or 1), int(seed or 0),
                preset=shared_preset if shared_preset in SYSTEM_PROMPTS else None,
                temperature=number(temperature), top_p=number(top_p),
                max_tokens=int(max_tokens) if max_tokens not in (None, "") else None,
                repeats=int(repeats) if repeats not in (None, "") else None, focus=bool(focus),
            )  # fmt: skip
        except (TypeError, ValueError, OverflowError):
            return base or "/"

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
            guards.check_model(self.resolve(name, sess))
        except (guards.GuardError, CatalogError) as exc:
            gr.Warning(str(exc))
            return gr.update(), text
        if name not in current:
            current.append(name)
        return gr.update(
            choices=self.model_choices(sess, [m for m in current if m not in self.catalog.entries]), value=current
        ), ""

    def add_custom_endpoint(self, base_url: str, model_id: str, api_key: str, models, sess: Session) -> tuple:
        current = list(models or [])
        try:
            spec = custom_endpoint(base_url, model_id, api_key or None)
            guards.check_model(spec)  # public mode: no loopback, private or metadata addresses
        except (CatalogError, guards.GuardError) as exc:
            gr.Warning(str(exc))
            return gr.update(), sess
        if len(current) >= MAX_MODELS and spec.name not in current:
            gr.Warning(f"At most {MAX_MODELS} models per run: remove one first.")
            return gr.update(), sess
        sess.extra_models[spec.name] = spec
        if spec.name not in current:
            current.append(spec.name)
        extra = [m for m in current if m not in self.catalog.entries and m not in sess.extra_models]
        return gr.update(choices=self.model_choices(sess, extra), value=current), sess
