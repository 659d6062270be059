"""Cold start: import the engine and LiteLLM (the ~7 s part of it) in a
background thread after launch, and join Qwen's GGUF from its pieces if this is
the first start, so the first visitor's run does not wait for it and does not
stall everyone else's."""

from __future__ import annotations

import contextlib
import logging
import threading

from .. import data

log = logging.getLogger(__name__)

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
            from .. import verdicts
            from ..engine import llm

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
        with contextlib.suppress(Exception):  # Qwen's file, joined and checked once (a few seconds)
            from .. import local_model

            if local_model.is_available(local_model.QWEN_MODEL_NAME):
                local_model.gguf_path(local_model.QWEN_MODEL_NAME)


def is_warm() -> bool:
    return _warmed.is_set()


def warm_up_in_background() -> threading.Thread:
    thread = threading.Thread(target=warm_up, name="orbench-warm-up", daemon=True)
    thread.start()
    return thread
