"""Text helpers shared by every offline layer: the normalised opening of an
answer, its tokens and n-grams, sentence and word-boundary helpers."""

from __future__ import annotations

import re
from itertools import chain, pairwise

HEAD_CHARS = 400
"""Only the opening of an answer is read: that is where refusals are stated."""

_QUOTES = str.maketrans({"’": "'", "‘": "'", "`": "'", "“": '"', "”": '"', "\u00a0": " "})


def normalise(text: str, limit: int = HEAD_CHARS) -> str:
    """Lower-cased opening with straight quotes and single spaces."""
    head = text[: limit + 40]
    if not head.isascii():
        head = head.translate(_QUOTES)
    if "*" in head or "_" in head:
        head = head.replace("*", "").replace("__", "")
    head = " ".join(head.split()).lower()
    if head[:1] in _DECOR:
        head = head.lstrip(_DECOR_CHARS)
    return head[:limit]


_DECOR_CHARS = "\"'>#-: "
_DECOR = frozenset(_DECOR_CHARS)

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?|[.,!?:;]")
MAX_TOKENS = 64
_SENTENCE_END = re.compile(r"[.!?] ")


def _first_sentences(head: str, count: int = 2) -> str:
    """The first `count` sentences of a normalised (single-spaced) opening."""
    end = 0
    for _ in range(count):
        m = _SENTENCE_END.search(head, end)
        if m is None:
            return head
        end = m.end()
    return head[: end - 1]


def _word_search(rx: re.Pattern[str], s: str) -> bool:
    """rx.search(s) starting at a word boundary (the patterns leave out a leading
    \\b so that the regex engine can skip ahead to their first letter)."""
    for m in rx.finditer(s):
        i = m.start()
        if i == 0 or not s[i - 1].isalnum():
            return True
    return False


def _opening(text: str) -> tuple[str, list[str], dict[str, None]]:
    """(normalised opening, its first MAX_TOKENS tokens, their unigrams and
    bigrams in order without repeats). Bigrams are "a b": tokens hold no spaces."""
    head = normalise(text)
    toks = _TOKEN.findall(head)[:MAX_TOKENS]
    grams = dict.fromkeys(chain(toks, map(" ".join, pairwise(toks))))
    return head, toks, grams


def word_set(words: str) -> frozenset[str]:
    """A gate: the set of the space-separated words given."""
    return frozenset(words.split())


def phrase_set(phrases: str) -> frozenset[str]:
    """A gate of unigrams and bigrams ("rather not"), separated by "|"."""
    return frozenset(p.strip() for p in phrases.split("|") if p.strip())


def grams_of(text: str) -> set[str]:
    """Unigrams and bigrams of an already normalised text (all of it)."""
    toks = _TOKEN.findall(text)
    return {*toks, *map(" ".join, pairwise(toks))}
