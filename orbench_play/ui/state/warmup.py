"""Cold start: import the engine and LiteLLM (the ~7 s part of it) in a
background thread after launch, join Qwen's GGUF from its pieces if this is
the first start, and start the servers of the embedded models the page
preselects, so the first visitor's run does not wait for any of it and does
not stall everyone else's."""

from __future__ import annotations

import contextlib
import gc
import logging
import threading

from ... import data

log = logging.getLogger(__name__)

_warmed = threading.Event()
_warm_lock = threading.Lock()


def warm_up(servers: tuple[str, ...] = ()) -> None:
    """Import the engine and LiteLLM (the ~7 s part of a cold start), then start the
    embedded models' `servers` (the page's defaults: their first run would otherwise
    wait seconds for them, more on a busy machine). Idempotent, thread-safe."""
    if _warmed.is_set():
        return
    with _warm_lock:
        if _warmed.is_set():
            return
        try:
            from ... import verdicts
            from ...engine import llm

            verdicts.LiveVerdict().finish("Sure, here you go.", "stop")  # loads the classifier
            llm.warm_up()
        except Exception:  # the run will report the real error per cell
            log.exception("warming up LiteLLM failed")
        _warmed.set()
        with contextlib.suppress(Exception):
            from ...cache import default_cache

            default_cache()
        with contextlib.suppress(Exception):  # the default split, if it is on disk
            if data.split_file("hard-1k") is not None:
                data.load_split("hard-1k")
        with contextlib.suppress(Exception):  # Qwen's file, joined and checked once (a few seconds)
            from ...models import embedded

            if embedded.is_available(embedded.QWEN_MODEL_NAME):
                embedded.gguf_path(embedded.QWEN_MODEL_NAME)
        for name in servers:  # a server that cannot start says why in its cells, at the run
            with contextlib.suppress(Exception):
                from ...models import embedded

                if embedded.is_available(name):
                    embedded.ensure_server(name)
        freeze_start_up_objects()


def freeze_start_up_objects() -> None:
    """Move everything start-up made (Gradio, LiteLLM, the classifier, the
    split: ~560,000 objects the cyclic collector tracks) out of the collector's
    reach, once, when the warm-up has loaded it all.

    Why: those objects live as long as the process, yet every full collection
    walked them all while holding the GIL. With 24 visitors streaming, one such
    collection came about every 12 s and stopped every stream for 0.37–0.45 s of
    CPU on the development VM; after the freeze a full collection walks only
    what visitors made since (25–60 ms; docs/performance.md). Objects made later
    are collected as before; cyclic garbage left from start-up itself (one
    collection runs first) is all the freeze keeps.
    """
    gc.collect()
    gc.freeze()


def is_warm() -> bool:
    return _warmed.is_set()


def warm_up_in_background(servers: tuple[str, ...] = ()) -> threading.Thread:
    thread = threading.Thread(target=warm_up, args=(tuple(servers),), name="orbench-warm-up", daemon=True)
    thread.start()
    return thread
