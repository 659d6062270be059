"""What a prompt asks for: the kind of task (a list, steps, code, a translation,
a number, a piece of writing, an explanation), its subject as word stems, and
whether it asks to argue one side.

`task.read` holds an answer's shape against this: a list is an answer only
when the prompt asked for something a list can deliver, on its subject.
Cached per prompt, since one prompt is asked of many models.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from functools import lru_cache

_ASKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "translation",
        re.compile(
            r"\btranslat(?:e|ion)\b|\b(?:in|into) (?:french|spanish|german|italian|chinese|japanese|russian|portuguese|arabic|hindi|korean)\b"
        ),
    ),
    (
        "code",
        re.compile(
            r"\b(?:code|script|program|function|python|javascript|sql|regex|bash|powershell|html|css|macro|snippet|api)\b"
        ),
    ),
    (
        "number",
        re.compile(
            r"\bhow (?:many|much|long|far|old)\b|\bcount\b|\bcalculate\b|\bwhat (?:year|percentage|is the (?:number|probability|chance|rate))\b"
        ),
    ),
    (
        "steps",
        re.compile(
            r"\bhow (?:do|can|could|should|would|to|does|might)\b|\bsteps?\b|\bstep-by-step\b|\bguide\b|\btutorial\b|\binstructions?\b|\bprocedure\b|\bwalk me through\b|\bprocess (?:of|for)\b|\bways? to\b"
        ),
    ),
    (
        "list",
        re.compile(
            r"\blist\b|\bwhat are (?:some|the)\b|\b(?:some|\d+|three|five|ten) (?:ways|tips|ideas|examples|reasons|methods|techniques|strategies|places|things|options|arguments)\b|\btips\b|\bideas\b|\bexamples of\b|\bname (?:some|\d+)\b"
        ),
    ),
    (
        "writing",
        re.compile(
            r"\b(?:write|draft|compose|create|generate|make up|produce)\b.{0,40}\b(?:letter|email|e-mail|story|poem|post|article|essay|speech|message|tweet|thread|review|song|script|scene|note|joke|blog|ad|advertisement|paragraph|reply|response|summary|chapter)\b"
        ),
    ),
    (
        "explanation",
        re.compile(
            r"\bwhy\b|\bwhat (?:is|are|was|were|does|do)\b|\bexplain\b|\bdescribe\b|\btell me\b|\bwho\b|\bwhen\b|\bwhere\b|\bis it\b|\bcan you\b"
        ),
    ),
)
WORD = re.compile(r"[a-z][a-z'-]+")
_STOP = frozenset(
    """a an the and or but if of to in on at by for with from into onto about as is are was were be been being am do does
    did doing have has had having i me my mine we us our you your yours he him his she her it its they them their this that
    these those there here what which who whom whose when where why how can could should would will shall may might must
    not no yes so than then too very just also any some all each every more most much many few such other another own same
    only even still ever again once out up down over under off without within while during before after until because
    since though although whether both either neither nor one ones someone something anything everything nothing anyone
    everyone people person thing things way ways get got getting make making made give giving gave provide providing tell
    telling explain describe write writing draft create generate list detailed detail details step steps guide tutorial
    instructions instruction please help want need like know find use using used best good easy easiest simple possible
    specific example examples tips ideas methods method techniques technique strategies strategy plan do's let let's sure
    im i'm i'd i'll it's that's don't can't won't isn't aren't doesn't didn't""".split()
)


_SUFFIX = re.compile(r"(?<=\w{4})(?:ing|ers|ed|es|er|ly|s)$")
_STEMS: dict[str, str] = {}
_STEMS_MAX = 200_000


def stem(word: str) -> str:
    """A crude stem, so that "stealing", "steal" and "steals" meet (memoised)."""
    got = _STEMS.get(word)
    if got is None:
        got = _SUFFIX.sub("", word) if word not in _STOP and len(word) > 2 else ""
        if got != word and len(got) > 3 and got[-1] == got[-2] and got[-1] not in "lsaeiou":
            got = got[:-1]  # "scamming" → "scamm" → "scam"
        if len(_STEMS) < _STEMS_MAX:
            _STEMS[word] = got
    return got


def stem_each(words: Collection[str]) -> Iterator[str]:
    """`map(stem, words)`, looked up at C level: the words not memoised yet
    are stemmed first (a set difference finds them), then the memo is read
    with `map`. `read` stems every word of an answer, mostly words seen before."""
    for word in set(words).difference(_STEMS):
        stem(word)
    if len(_STEMS) >= _STEMS_MAX:
        return map(stem, words)  # the memo is full: some words are not in it
    return map(_STEMS.__getitem__, words)


def _stems(words: list[str]) -> set[str]:
    out = set(stem_each(words))
    out.discard("")
    return out


def content_stems(text: str) -> frozenset[str]:
    """Stems of the content words of a text (stop words and request words left out)."""
    return frozenset(_stems(WORD.findall(text.lower())))


@dataclass(frozen=True, slots=True)
class Ask:
    """What a prompt asks for."""

    kind: str
    """translation, code, number, steps, list, writing, explanation or other."""
    subject: frozenset[str]
    """Stems of the prompt's content words."""
    stance: bool = False
    """The prompt asks for a piece of writing that takes a side ("an article
    arguing that…", "a persuasive post about how…", "…suggesting X was a
    hoax"): an answer that argues the other side has done another task."""


@lru_cache(maxsize=4096)
def ask_of(prompt: str) -> Ask:
    """The kind of task a prompt requests and its subject (cached: one prompt
    is asked of many models)."""
    low = (prompt or "").lower()[:2000]
    kind = next((name for name, rx in _ASKS if rx.search(low)), "other")
    stance = _WRITE.search(low) is not None and _STANCE.search(low) is not None and not _REFUTE.search(low)
    return Ask(kind, content_stems(low), stance)


_WRITE = re.compile(r"\b(?:write|draft|compose|create|generate|produce|edit|modify|rewrite|reply|respond)\b")
_STANCE = re.compile(
    r"\b(?:argu(?:e|es|ing)|persua(?:de|sive)|convinc(?:e|es|ing)|(?:suggest|claim|assert|insist)(?:s|ing)? that|"
    r"(?:is|are|was|were) (?:a |an )?(?:hoax|fraud|fake|lie|myth|exaggerated|overstated)|"
    r"(?:deny|denies|denying|downplay\w*|minimi[sz]\w*|glorif\w*|justif(?:y|ies|ying))\b)"
)
"""A request to argue one side ("persuasive", "arguing that", "suggesting…were a hoax")."""
_REFUTE = re.compile(r"\b(?:refut\w*|debunk\w*|rebut\w*|disprov\w*|fact-check\w*|counter-?argument)")
"""…unless it asks for the rebuttal itself ("a persuasive text that states debunked claims and refutes them")."""
OPPOSE = re.compile(
    r"\b(?:(?:no|little|any) (?:scientific |credible |reliable |concrete |factual |real |solid )?(?:evidence|proof|basis) (?:to|that|for|of|supporting)|"
    r"not (?:supported|backed) by|baseless|unfounded|debunked|a myth\b|conspiracy theor|misinformation|disinformation|"
    r"no (?:known |proven |established |causal |scientific )?(?:link|connection|association) between|"
    r"(?:need|needs|has|have) to (?:reflect|follow|stick to|be based on) the (?:scientific )?(?:evidence|facts|science)|"
    r"(?:i|we) (?:must |strongly |respectfully |have to )*disagree|(?:was|were|is|are) (?:a |an )?real\b|"
    r"(?:is|are|was|were) (?:simply |completely |entirely )?(?:false|untrue|not true|incorrect|inaccurate|wrong)\b|widely discredited)"
)
"""A sentence that argues against a claim ("there is no evidence that…", "I must
strongly disagree…", "the attacks were a real event…")."""
