"""`orbench-play run`: sample prompts, ask the models through the engine, show
progress and the scoreboard, write the results."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from ..engine.timeouts import add_time_limit_arguments, check_env
from ..types import (
    DEFAULT_SPLITS,
    MAX_RETRIES_CEILING,
    MAX_TOKENS_CEILING,
    REASONING_EFFORTS,
    SPLITS,
    CellResult,
)
from . import args as cli_args
from .args import UsageError
from .judge import judge_failure_line

DEFAULT_PER_CATEGORY = 1
"""Without --per-category or --n: one prompt per category of each split, the
playground's default run (20 prompts for the default pair)."""


def _local_max_tokens() -> str:
    from ..models.embedded import MODELS

    return ", ".join(f"{m.short} {m.max_tokens}" for m in MODELS.values())


def _preset_names() -> list[str]:
    from ..asking.prompts import SYSTEM_PROMPTS

    return list(SYSTEM_PROMPTS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", action="append", required=True, help="catalog name or any LiteLLM model string (repeatable)"
    )
    parser.add_argument("--config", help="LiteLLM model_list YAML (default: $ORBENCH_MODELS)")
    default_splits = ",".join(DEFAULT_SPLITS)
    parser.add_argument(
        "--split",
        type=cli_args.split_list,
        default=None,
        metavar="SPLIT[,SPLIT]",
        help=f"one or more of {', '.join(SPLITS)}, comma-separated (default: {default_splits}, "
        "OR-Bench's benign and toxic pair, unless --prompts is given); each split is sampled on its own",
    )
    prompt_set = parser.add_argument_group("your own prompts (any dataset `datasets` reads)")
    prompt_set.add_argument(
        "--prompts",
        metavar="SOURCE",
        help="a Hub dataset id owner/name[:config[:split]] (split default train), a local .csv/.jsonl/.parquet "
        "file, or a save_to_disk folder (FOLDER::split for a DatasetDict); sampled like a split, "
        "with rates of its own (split custom:<name>); with --split too, both are asked",
    )
    prompt_set.add_argument("--prompt-col", default="prompt", metavar="COL", help="the prompt column (default: prompt)")
    prompt_set.add_argument("--category-col", metavar="COL", help="a category column (default: none)")
    prompt_set.add_argument(
        "--label-col",
        metavar="COL",
        help="the expected behaviour column: benign (benign/safe/0/false) or should-refuse "
        "(should-refuse/unsafe/harmful/toxic/1/true); decides which rate a row counts toward",
    )
    parser.add_argument("--categories", help="comma-separated categories (default: all)")
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--per-category",
        type=cli_args.positive_int,
        metavar="N",
        help=f"prompts per category of each split (default: {DEFAULT_PER_CATEGORY} unless --n is given)",
    )
    size.add_argument(
        "--n", type=cli_args.positive_int, metavar="N", help="prompts per split, spread evenly over its categories"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--judge", default=None, help=cli_args.JUDGE_HELP)
    parser.add_argument(
        "--concurrency", type=cli_args.positive_int, default=16, help="requests in flight across all models"
    )
    parser.add_argument(
        "--retries",
        type=cli_args.whole_number(0, MAX_RETRIES_CEILING),
        default=3,
        help=f"retries on 429/5xx/connection errors (0 to {MAX_RETRIES_CEILING})",
    )
    # Time limits and max tokens: None means the model's own (model_list), else the environment, else the default.
    parser.add_argument(
        "--timeout",
        type=cli_args.seconds,
        default=None,
        help="seconds to wait for an answer to start; the limit for a whole answer is this plus "
        "--token-timeout per max token (default: the model_list's litellm_params.timeout, else "
        "$ORBENCH_TIMEOUT_S, else 60)",
    )
    add_time_limit_arguments(parser)
    parser.add_argument(
        "--max-tokens",
        type=cli_args.whole_number(1, MAX_TOKENS_CEILING),
        default=None,
        help=f"max tokens per answer, thoughts included, at most {MAX_TOKENS_CEILING:,} (default: each model's "
        f"own: 512, 4096 for a model that reasons, the embedded models {_local_max_tokens()}, or "
        "litellm_params.max_tokens in the model_list)",
    )
    parser.add_argument(
        "--reasoning-effort",
        choices=REASONING_EFFORTS,
        default=None,
        help="how hard a reasoning model thinks (LiteLLM's reasoning_effort; ignored by models without it; "
        "default: the provider's)",
    )
    parser.add_argument("--temperature", type=cli_args.temperature, default=None, help="0 to 2")
    parser.add_argument("--top-p", type=cli_args.top_p, default=None, help="above 0, up to 1")
    parser.add_argument(
        "--system-prompt",
        type=cli_args.system_prompt(_preset_names),
        default=None,
        help="TEXT, @FILE (UTF-8, up to 64 KiB), or a preset: " + ", ".join(_preset_names()) + "; "
        "one word close to a preset name is refused as a likely typo: pass such a word as @FILE",
    )
    parser.add_argument("--repeats", type=cli_args.positive_int, default=1, help="ask each prompt K times (1-5)")
    parser.add_argument(
        "--shard",
        type=cli_args.shard,
        default=None,
        metavar="K/N",
        help="run only part K of N of the sampled cells (a stable hash of the row id), e.g. one machine each "
        "for 1/4 … 4/4; with a shared cache (ORBENCH_REDIS_URL) the parts resume and never pay twice",
    )
    parser.add_argument(
        "--no-cache", action="store_true", help="neither read nor write the cache (disk, or Redis when configured)"
    )
    parser.add_argument(
        "--settle",
        action="store_true",
        help="stop each answer once its verdict can no longer change, and say how many output tokens that saved: "
        "for spot-checks and cost, not for paper-faithful figures (OR-Bench judges whole answers); settled "
        "answers are cached apart from whole ones",
    )
    parser.add_argument(
        "--out",
        type=cli_args.output_file(*cli_args.OUTPUT_KINDS),
        help="write results to FILE.csv or FILE.jsonl (the folder must exist)",
    )
    parser.add_argument(
        "--follow-up",
        default=None,
        metavar="PRESET|TEXT",
        help="after the run, send this follow-up to every refused cell, in the same conversation (same system "
        "prompt and settings): a preset ("
        + ", ".join(f"{k} = {v!r}" for k, v in _follow_up_presets().items())
        + ") or your own text; the scoreboard then shows each model's relent rate",
    )
    parser.add_argument(
        "--follow-up-all", action="store_true", help="send --follow-up to every answered cell, not only refused ones"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def _follow_up_presets() -> dict[str, str]:
    from ..asking.followups import PRESETS

    return PRESETS


def build_run_config(args: argparse.Namespace):
    """(RunConfig, catalog, data notes) from `run`'s parsed arguments, or a
    `UsageError` naming what the run could not use, before any request."""
    from .. import data
    from ..models import CatalogError, load_catalog
    from ..types import GenerationParams, RunConfig

    per_category = args.per_category
    if per_category is None and args.n is None:
        per_category = DEFAULT_PER_CATEGORY
    if args.repeats > 5:
        raise UsageError("--repeats must be between 1 and 5")
    check_follow_up(args)
    try:
        check_env()
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        catalog = load_catalog(args.config)
    except CatalogError as exc:
        raise UsageError(str(exc)) from None
    try:
        models = tuple(catalog.resolve(name) for name in args.model)
    except CatalogError as exc:
        raise UsageError(str(exc)) from None
    if len({m.name for m in models}) != len(models):
        raise UsageError("the same --model is given twice")
    if args.split is None:
        args.split = [] if getattr(args, "prompts", None) else list(DEFAULT_SPLITS)
    try:
        picked = _sample(args, per_category)
    except data.DataError as exc:
        raise UsageError(str(exc)) from None
    prompts = tuple(picked.prompts)
    notes = list(picked.notes)
    if args.shard is not None:
        k, n = args.shard
        prompts = tuple(p for p in prompts if data.in_shard(p.row_id, k, n))
        notes.append(f"Shard {k}/{n}: {len(prompts):,} of {len(picked.prompts):,} sampled prompts.")
        if not prompts:
            raise UsageError(f"shard {k}/{n} holds none of the {len(picked.prompts)} sampled prompts")
    system_prompt, system_prompt_id = _system_prompt(args.system_prompt)
    params = GenerationParams(
        system_prompt=system_prompt,
        system_prompt_id=system_prompt_id,
        temperature=args.temperature,
        top_p=args.top_p,
        max_tokens=args.max_tokens,
        reasoning_effort=args.reasoning_effort,
    )
    judge = cli_args.judge_choice(args.judge)
    config = RunConfig(
        models=models,
        prompts=prompts,
        params=params,
        judge=judge,
        concurrency=args.concurrency,
        timeout_s=args.timeout,
        idle_timeout_s=args.idle_timeout,
        token_timeout_s=args.token_timeout,
        max_retries=args.retries,
        use_cache=not args.no_cache,
        repeats=args.repeats,
        settle=bool(getattr(args, "settle", False)),
    )
    # Last, as it imports LiteLLM (which the run needs next anyway): a model LiteLLM cannot
    # route would otherwise fill every cell with its "LLM Provider NOT provided" text.
    from ..engine.model_names import first_unknown

    unknown = first_unknown(models, catalog.names(), how=CLI_ADD_A_MODEL)
    if unknown:
        raise UsageError(unknown)
    return config, catalog, notes


CLI_ADD_A_MODEL = "list it in a model list (--config / ORBENCH_MODELS) as openai/NAME with its api_base"


def check_follow_up(args: argparse.Namespace) -> None:
    """--follow-up's text is checked before any request (empty, too long); --follow-up-all needs it."""
    follow_up = getattr(args, "follow_up", None)
    if getattr(args, "follow_up_all", False) and follow_up is None:
        raise UsageError("--follow-up-all needs --follow-up PRESET|TEXT")
    if follow_up is None:
        return
    from ..asking.followups import FollowUpError, resolve

    try:
        resolve(follow_up)
    except FollowUpError as exc:
        raise UsageError(f"--follow-up: {exc}") from None


def _sample(args: argparse.Namespace, per_category: int | None):
    """OR-Bench's splits, then the prompt set of --prompts (its categories are its own)."""
    from .. import data
    from ..guards.mode import public_mode

    prompts: list = []
    notes: list[str] = []
    if args.split:
        categories = data.parse_categories(args.categories)
        for split in args.split:
            if data.split_file(split) is None:
                print(f"Streaming OR-Bench split {split} from the Hugging Face Hub…", file=sys.stderr)
        picked = data.sample_splits(
            args.split, categories=categories, per_category=per_category, n=args.n, seed=args.seed
        )
        prompts += picked.prompts
        notes += picked.notes
    if getattr(args, "prompts", None):
        source = data.parse_source(args.prompts, allow_local=not public_mode())
        columns = data.ColumnMap(prompt=args.prompt_col, category=args.category_col, label=args.label_col)
        if source.kind == "hub":
            print(f"Streaming prompt set {source.text} from the Hugging Face Hub…", file=sys.stderr)
        own = data.sample_prompt_set(
            source,
            columns,
            categories=None if args.split else args.categories,
            per_category=per_category,
            n=args.n,
            seed=args.seed,
        )
        prompts += own.prompts
        notes += own.notes
    return data.Sample(prompts=tuple(prompts), notes=tuple(notes))


def _system_prompt(value: str | None) -> tuple[str | None, str]:
    """TEXT, @file, or a preset name → (text, id shown in results)."""
    from ..asking.prompts import PromptError, resolve_system_prompt

    try:
        return resolve_system_prompt(value, allow_files=True)
    except PromptError as exc:
        raise UsageError(str(exc)) from None


async def _drive(config, catalog, quiet: bool, unreachable: str | None = None) -> list[CellResult]:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .. import engine
    from ..cache import default_cache

    console = Console(stderr=True)
    if unreachable:  # ORBENCH_REDIS_URL set but not answering: run, say what that costs
        console.print(
            f"{unreachable} Running without the shared cache; paid models are paused until it answers.",
            markup=False,
        )
    cache = default_cache() if config.use_cache else None
    if cache is not None and cache.warning and not unreachable:
        console.print(cache.warning, markup=False)
    total = len(engine.cell_ids(config))
    results: dict[str, CellResult] = {}
    errors = hits = 0
    with Progress(
        TextColumn("[bold]cells"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    ) as progress:
        task = progress.add_task("run", total=total, stats="")
        async for event in engine.run(config, cache=cache, resolve_judge=catalog.resolve):
            if event.kind == "status":
                progress.console.print(event.message, markup=False)
            elif event.kind in ("done", "error") and event.result is not None:
                results[event.cell_id] = event.result
                errors += event.kind == "error"
                hits += bool(event.result.cached)
                progress.update(task, completed=len(results), stats=f"errors {errors} · cached {hits}")
    if cache is not None and cache.warning:
        console.print(cache.warning, markup=False)
    order = {cid: i for i, cid in enumerate(engine.cell_ids(config))}
    return sorted(results.values(), key=lambda r: order.get(r.cell_id, 0))


def _follow_up(config, catalog, results: list[CellResult], args: argparse.Namespace, unreachable) -> list[CellResult]:
    """The follow-up round: the refused cells (every answered cell with
    --follow-up-all) asked once more, in the same conversation."""
    from dataclasses import replace

    from ..asking.followups import plan

    follow_ups = plan(results, args.follow_up, all_cells=args.follow_up_all)
    which = "answered" if args.follow_up_all else "refused"
    if not follow_ups:
        print(f"No {which} cell to follow up on.", file=sys.stderr)
        return []
    print(f"Following up on {len(follow_ups)} {which} cell{'s' if len(follow_ups) != 1 else ''}…", file=sys.stderr)
    return asyncio.run(_drive(replace(config, follow_ups=tuple(follow_ups)), catalog, args.quiet, unreachable))


def print_scoreboard(results: Sequence[CellResult], stream=None) -> None:
    """One row per variant (model × system prompt × settings), so "X" and
    "X · safety" are compared side by side; flip rate only when repeated.
    Over-refusal on hard-1k and on 80k are separate columns (80k only when
    asked); a mini-score on 80k says so, as hard-1k is the paper's."""
    from rich.console import Console
    from rich.table import Table

    from ..asking.prompts import variant_of
    from ..scoring import custom_rate_label, score_results

    scores = score_results(results, key=variant_of)
    repeated = any(s.max_repeats > 1 for s in scores)
    followed = any(s.relent_benign is not None or s.relent_toxic is not None for s in scores)
    broad = any(s.over_refusal_80k is not None for s in scores)
    console = Console(file=stream or sys.stdout, highlight=False)
    table = Table(title="Session scoreboard: what the verdicts say, and corrected for verdict error (95% intervals)")
    columns = ["model", "over-refusal (hard-1k)", *(["over-refusal (80k)"] if broad else []), "refusal (toxic)"]
    columns += ["mini-score", *(["flip rate"] if repeated else [])]
    columns += [*(["relent (benign)", "relent (toxic)"] if followed else []), "errors"]
    own = list(dict.fromkeys(key for s in scores for key in s.custom))  # prompt sets: rates of their own
    columns[-1:-1] = [custom_rate_label(key) for key in own]
    for column in columns:
        table.add_column(column, overflow="fold")

    def fmt(rate) -> str:
        return "—" if rate is None else rate.fmt()

    for s in scores:
        c = s.corrected

        def honest(key: str, rate, c=c) -> str:  # "verdicts say 44% (…) · corrected 71% [55–86]"
            return fmt(c.get(key) if key in c else rate)

        mini = "—"
        if s.mini_score is not None:
            mini = f"verdicts say {s.mini_score:.0%}"
            if s.corrected_mini is not None:
                m, low, high = s.corrected_mini
                mini += f" · corrected {m:.0%} [{100 * low:.0f}–{100 * high:.0f}]"
        if s.mini_score is not None and s.benign_split == "80k":
            mini += " on 80k"
        row = [_plain(s.model), honest("hard-1k", s.over_refusal_hard_1k)]
        row += [*([honest("80k", s.over_refusal_80k)] if broad else [])]
        row += [honest("toxic", s.toxic_refusal), mini, *([fmt(s.flip_rate)] if repeated else [])]
        row += [*([fmt(s.relent_benign), fmt(s.relent_toxic)] if followed else [])]
        row += [honest(key, s.custom.get(key)) for key in own] + [str(s.errors)]
        table.add_row(*row)
    console.print(table)
    print(
        "corrected: the rate counting verdict error as well as sampling (each verdict's calibrated "
        "probability, room for verdicts that may not transfer to this model); see README, How sure is the score?",
        file=stream or sys.stdout,
    )


def print_settle_summary(results: Sequence[CellResult], stream=None) -> None:
    """After a run with `--settle`: per model, how many answers were stopped once their
    verdict settled, the output tokens that arrived and at most how many were not
    generated (max tokens minus what arrived), and what those would have cost at the
    model's output price where it has one. Answers replayed from the cache saved nothing now."""
    from rich.console import Console
    from rich.table import Table

    from ..scoring import settle_savings

    savings = settle_savings(results)
    if not savings:
        return
    table = Table(title="Settled early (answers stopped once their verdict could no longer change)")
    for column in ("model", "answers stopped", "tokens that arrived", "tokens saved (at most)", "would have cost"):
        table.add_column(column, overflow="fold")
    for model, s in savings.items():
        cost = f"${s.saved_cost_usd:,.4f}" if s.priced else "— (no price)"
        table.add_row(
            _plain(model), f"{s.settled} of {s.answers}", f"{s.arrived_tokens:,}", f"{s.saved_tokens:,}", cost
        )
    Console(file=stream or sys.stdout, highlight=False).print(table)


def print_error_reasons(results: Sequence[CellResult], stream=None, *, limit: int = 8) -> None:
    """After a run with failed cells: why they failed, most frequent first, with counts
    (the same sentence a cell shows), so "errors 3" is never all the CLI says."""
    from collections import Counter

    from rich.console import Console
    from rich.table import Table

    reasons = Counter(r.error for r in results if r.error)
    if not reasons:
        return
    table = Table(title=f"Errors ({sum(reasons.values())} cells; the reason of each is in the results too)")
    table.add_column("cells", justify="right")
    table.add_column("reason", overflow="fold")
    for reason, count in reasons.most_common(limit):
        table.add_row(str(count), _plain(reason))
    rest = len(reasons) - limit
    if rest > 0:
        table.add_row("…", _plain(f"{rest} other reason{'s' if rest != 1 else ''}"))
    Console(file=stream or sys.stdout, highlight=False).print(table)


def _plain(text: str):
    from rich.text import Text

    return Text(text)  # never interpret model names or output as markup


def _split_notes(splits: Sequence[str]) -> list[str]:
    """What the user must know about the data behind the rates (e.g. a partial 80k)."""
    from .. import data

    notes = []
    for split in splits:
        try:
            note = data.split_note(split)
        except data.DataError:
            note = None  # the split loaded a moment ago; a note is not worth failing for
        if note:
            notes.append(note)
    return notes


def cmd_run(args: argparse.Namespace) -> int:
    config, catalog, notes = build_run_config(args)
    data_notes = _split_notes(args.split)
    for note in [*data_notes, *notes]:
        print(note, file=sys.stderr)
    from ..runtime import redis_link

    unreachable = redis_link.startup_check()  # the budget needs it too, even with --no-cache
    results = asyncio.run(_drive(config, catalog, args.quiet, unreachable))
    if args.follow_up is not None:
        results += _follow_up(config, catalog, results, args, unreachable)
    print_scoreboard(results)
    if config.settle:
        print_settle_summary(results)
        print(
            "Settling stops answers early: good for spot-checks and cost, but OR-Bench judges whole answers, "
            "so these are not paper-faithful figures.",
            file=sys.stderr,
        )
    print_error_reasons(results)
    judge_warning = judge_failure_line([r.judge_error for r in results])
    if judge_warning:
        print(judge_warning, file=sys.stderr)
    for note in data_notes:  # again under the rates it qualifies, so it is not scrolled away
        print(note, file=sys.stderr)
    if args.out:
        from ..export import write_results

        try:
            path = write_results(results, args.out)
        except OSError as exc:  # checked before the run, but the disk may have changed since
            again = (
                "the answers are cached, so the same command with another --out writes them without asking again"
                if config.use_cache
                else "run again with another --out"
            )
            print(f"orbench-play: error: could not write {args.out}: {exc.strerror or exc}; {again}.", file=sys.stderr)
            return 1
        print(f"Wrote {len(results)} rows to {path}", file=sys.stderr)
    return 0
