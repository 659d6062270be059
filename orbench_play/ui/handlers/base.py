"""What every handler shares: the catalog, the paper's points, the judge and
the default set-up, which are the same for every visitor. Per-visitor data
lives in the `Session` passed through `gr.State`."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Sequence

from ... import data
from ...models import Catalog, CatalogError, load_catalog
from ...types import ModelSpec
from ..state.query import Setup
from ..state.resume import SessionRegistry
from ..state.session import Session
from ..views import safe_html

log = logging.getLogger(__name__)


def data_notice(split: str) -> str:
    """Empty when the split can be read (shipped, from ORBENCH_DATA_DIR, or from the
    Hub); else how to provide data. A partial 80k file gets its warning."""
    try:
        path = data.split_file(split)
    except data.DataError as exc:
        return f"{exc} Custom prompts still work without data."
    if path is None and data.hub_offline():
        return (
            f"Split {split} streams from the Hugging Face Hub, which is off (HF_HUB_OFFLINE): "
            f"set ORBENCH_DATA_DIR to a folder with {data.FILES[split]} (from the bench-llm/or-bench "
            "dataset), or allow Hub access. Custom prompts still work without data."
        )
    note = None
    with contextlib.suppress(Exception):
        if path is not None and split == "80k":
            note = data.split_note(split)
    return note or ""


def data_notices(splits: str | Sequence[str] | None) -> list[str]:
    """One notice per chosen split that needs one (see `data_notice`), in split order."""
    try:
        names = data.parse_splits(splits)
    except data.DataError as exc:
        return [str(exc)]
    return [notice for notice in map(data_notice, names) if notice]


def public_limits_text(*, public: bool | None = None) -> str:
    """The public demo's limits in one sentence, so they are known before they are hit
    (empty when not in public mode)."""
    from ... import guards
    from ...guards.mode import env_int

    if not (guards.public_mode() if public is None else public):
        return ""
    limiter = guards.SessionLimiter()
    return (
        f"Public demo: at most {limiter.max_cells} cells per run (prompts × models × repeats), "
        f"{limiter.runs_per_minute} runs per minute per visitor (replays of cached answers are free), prompts of "
        f"up to {env_int(None, 'ORBENCH_MAX_PROMPT_CHARS', guards.DEFAULT_MAX_PROMPT_CHARS):,} characters from "
        f"any source, and follow-ups up to {guards.FollowUpCaps.from_env().text()}. Run it locally for more."
    )


def public_cell_cap() -> int | None:
    """The public demo's cells per run (None outside public mode)."""
    from ... import guards

    return guards.SessionLimiter().max_cells if guards.public_mode() else None


def _paper_points() -> list[tuple[str, float, float]]:
    try:
        from ...scoring import load_paper_results

        frame = load_paper_results()
    except Exception as exc:  # the plot still shows the session's models
        log.warning("paper results unavailable: %s", exc)
        return []
    return [(str(m), float(x), float(y)) for m, x, y in frame.itertuples(index=False, name=None)]


PAIR_OUTSIDE_SPACES = True
"""Whether `make run` preselects both embedded models, as a Space does: yes since their
answers stop once their verdict is settled (the page's settle switch, on by default for
them), which brought the default run with both (20 prompts × 2) near the 90 s a first
run may take on a 2-core machine (docs/performance.md, *The embedded models and the first run*; `make bench`'s
first_run_browser)."""


def default_models(catalog: Catalog, *, space: bool | None = None) -> list[str]:
    """What a new page preselects: the embedded models that are installed. A Space
    (SPACE_ID set) preselects both, SmolLM2 (answers everything) beside Qwen2.5-Coder-0.5B
    (refuses some requests), so a Space without secrets shows two different points;
    so does `make run` (PAIR_OUTSIDE_SPACES)."""
    try:
        from ...models.embedded import MODELS
    except Exception:
        return []
    installed = [name for name in MODELS if name in catalog.entries and catalog.entries[name].error is None]
    in_space = bool(os.environ.get("SPACE_ID")) if space is None else space
    return installed if in_space or PAIR_OUTSIDE_SPACES else installed[:1]


def settle_default(models: Sequence[str] | None) -> bool:
    """Whether a run of `models` settles unless told otherwise (the page's `settle`
    switch, the API's runs): on when every model is an embedded demo model, whose
    answers run to their cap on a 2-core machine; off as soon as one is not (an API
    model's figures should be OR-Bench's, which judges whole answers)."""
    names = [str(m) for m in models or []]
    try:
        from ...models.embedded import MODELS
    except Exception:
        return False
    return bool(names) and all(name in MODELS for name in names)


class PlaygroundBase:
    """State shared by all visitors, and the lookups every handler needs."""

    def __init__(self, catalog: Catalog | None = None, *, catalog_error: str | None = None):
        self.catalog_error = catalog_error
        if catalog is None:
            try:
                catalog = load_catalog()
            except CatalogError as exc:
                self.catalog_error = str(exc)
                catalog = Catalog()  # keep the embedded model usable despite a broken config
                with contextlib.suppress(Exception):
                    from ...models import local_specs

                    for spec in local_specs():
                        catalog.entries[spec.name] = spec
        self.catalog = catalog
        self.sessions = SessionRegistry()
        """Live page sessions by the id each page keeps in its browser (a reload finds its own)."""
        self.paper = _paper_points()
        self.judge = os.environ.get("ORBENCH_JUDGE") or "keyword"
        self.default_models = default_models(catalog)
        self.default_setup = Setup(models=list(self.default_models))
        self.default_settle = settle_default(self.default_models)

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
        from ...verdicts.presets import judge_choices

        choices = judge_choices(self.catalog.names())
        if self.judge not in {value for _, value in choices}:
            choices.append((f"{self.judge} (ORBENCH_JUDGE)", self.judge))
        return choices

    def judge_choice(self, judge: str | None) -> str:
        """The run's judge (None: the ORBENCH_JUDGE default); a ValueError with
        one line saying what to set when it cannot work."""
        from ...verdicts.presets import check_judge

        return check_judge(judge or self.judge)

    def resolve(self, name: str, sess: Session | None = None) -> ModelSpec:
        if sess is not None and name in sess.extra_models:
            return sess.extra_models[name]
        return self.catalog.resolve(name)

    ADD_A_MODEL = "add an OpenAI-compatible server under Add a model (Custom endpoint: openai/NAME at its base URL)"

    def unknown_model(self, specs: Sequence[ModelSpec], sess: Session | None = None) -> str | None:
        """One line for the first of `specs` whose provider LiteLLM cannot tell (checked
        before a run makes any cell), or None. Imports LiteLLM: call it off the event
        loop's first-run path only after the warm-up (or in a worker thread)."""
        from ...engine.model_names import first_unknown

        known = [*self.catalog.names(), *(sess.extra_models if sess is not None else {})]
        return first_unknown(specs, known, how=self.ADD_A_MODEL)

    def banner(self, split: str | Sequence[str] | None, warnings: list[str] | None = None) -> str:
        """Shared-state problems, a public demo's limits, problems with the models and the
        chosen splits' data, then the link's warnings."""
        from ..state import shared_state

        lines = [f"⚠ {problem}" for problem in shared_state.problems()]
        limits = public_limits_text()
        if limits:
            lines.append(f"ℹ {limits}")
        if self.catalog_error:
            lines.append(f"⚠ Model config problem: {self.catalog_error}")
        lines += [f"⚠ {w}" for w in self.catalog.warnings]
        lines += [f"ℹ {notice}" for notice in data_notices(split)]
        lines += [f"⚠ {w}" for w in warnings or []]
        if not self.catalog.entries:
            lines.append(
                "ℹ No models configured: type a LiteLLM model string into the model box, add a custom "
                "endpoint, or set ORBENCH_MODELS / a provider API key."
            )
        return "\n\n".join(safe_html.safe_text(line) for line in lines)
