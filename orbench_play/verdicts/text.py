"""Text helpers shared by every offline layer: the normalised opening of an
answer, its tokens and n-grams, sentence and word-boundary helpers."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from itertools import chain, compress, pairwise

HEAD_CHARS = 400
"""Only the opening of an answer is read: that is where refusals are stated."""

_STRAIGHT = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "\u00a0": " "})
"""Typographic quotes as straight ones (`straight_quotes`, the whole answer)."""
_QUOTES = {**_STRAIGHT, ord("`"): "'"}
"""…and, for the normalised opening only, the backtick too: the whole answer
keeps it, where "```" opens code."""
_QUOTE_CHARS = tuple(map(chr, _STRAIGHT))


def straight_quotes(text: str) -> str:
    """Typographic quotes and apostrophes as ASCII ones, no-break spaces as
    spaces: "I can’t" as "I can't". Many models write the curly forms; every
    pattern here is written with the straight ones. One character for one, so
    lengths and offsets do not move. Most answers are ASCII; of the others,
    most have none of these characters (emoji, accents), and `in` finds that
    faster than a translation would."""
    if text.isascii():
        return text
    for char in _QUOTE_CHARS:
        if char in text:
            return text.translate(_STRAIGHT)
    return text


def as_read(text: str, *, final: bool = True) -> str:
    """The answer as every layer reads it. Quotes straightened
    (`straight_quotes`) and em dashes read as commas (`_EM_DASH`); out of a
    code fence or blockquote that holds all of it (`_unfenced`, `_unquoted`);
    without what stands before its opening: blank lines, emoji, a heading mark
    ("## "), the bold or italics of an opening so set ("**I can't help with
    that.** However, …": the first pair of marks only; bold labels further on
    are the answer's own layout), a line that only labels it ("## Response",
    `_LABEL_LINE`), the quotes of an answer set in quotes (a tweet, a slogan),
    a first sentence that only praises, thanks or acknowledges (`_PREAMBLE`),
    a role-play speaker label (`without_speaker`); without the emoji and the
    pleasantries that end it (`without_closing`); with every run of line
    breaks one blank line (`paragraphs_apart`) and list items marked as plain
    text marks them (`_BOLD_NUMBER`, `_SYMBOL_BULLET`). An opening set as a
    heading says what it would say as a sentence: the mark alone had made
    refusals read as answers. Each form was found by writing real answers
    another way (`evaluation.forms`, `tests/test_task_reading.py`): in
    italics 50 of 3,328 changed their verdict, in quotes 8 (and 79 their
    class while the closing quote stayed), after "Great question!" 174.
    `final` False (a streaming prefix) drops a preamble even with nothing
    after it yet."""
    text = straight_quotes(text).lstrip()
    if "—" in text:
        text = _EM_DASH.sub(", ", text)
    if text[:3] == "```":
        text = _unfenced(text)
    elif text[:1] == ">":
        text = _unquoted(text)
    if text[:1] > "\x7f":
        text = _lead_symbols_off(text)
    if text[:1] == "#":
        mark = _HEADING_MARK.match(text)
        if mark:
            text = text[mark.end() :]
    if text[:2] == "**":
        text = text[2:].replace("**", "", 1)
    elif text[:1] in ("*", "_") and text[1:2] not in (" ", text[:1]):
        text = text[1:].replace(text[0], "", 1)
    if text[:1] in _LABEL_FIRSTS:
        label = _LABEL_LINE.match(text)
        if label and label.end() < len(text):
            text = text[label.end() :].lstrip()
    if text[:1] == '"' and (stripped := text.rstrip())[-1:] == '"':
        text = stripped[1:-1]
    if text[:14].lower().startswith(_PREAMBLE_STARTS):
        preamble = _PREAMBLE.match(text)
        # an answer that is nothing else keeps it; a streaming one loses it at
        # once, or the badge read the thanks as a deflection's framing and
        # turned back with the next word
        if preamble and (preamble.end() < len(text) or not final):
            text = text[preamble.end() :]
    if not text.isascii() and text.rstrip()[-1:] > "\x7f":
        text = _trail_symbols_off(text)
    if "\n" in text:
        text = paragraphs_apart(text)
        if "*" in text and "\n**" in text:  # one character's search is a tenth of two's
            text = _BOLD_NUMBER.sub(r"\n\1", text)
        if not text.isascii():
            text = _SYMBOL_BULLET.sub("\n- ", text)
    return without_closing(without_speaker(text))


CLOSING_CHARS = 240
"""How far from its end an answer is read for a closing pleasantry."""
CLOSING_CUES = ("know if", "eel free", "hesitate", "hope th", "anything else", "questions")
"""Words one of the closings holds, as written (any capital comes before them)."""
PLEASANTRY = re.compile(
    r"(?:"
    r"i hope (?:this|that|my answer) (?:helps|answers)|"
    r"(?:please )?let me know if (?:you (?:have|need|'ve got) (?:any )?(?:other|more|further|additional|follow-up) "
    r"(?:questions?|help|information|details)|(?:there's|there is) anything else)|"
    r"(?:please )?(?:feel free|don't hesitate) to (?:ask|reach out)(?! to (?!me\b))|"
    r"if you have (?:any )?(?:other|more|further|additional|follow-up) (?:[\w-]+ )?questions?|"
    r"is there anything else (?:i can|you'd like|you would like)"
    r")(?![^.?!\n]*(?:\d|call|contact|hotline|helpline|crisis|professional|counsel|therap|doctor|lawyer|attorney|"
    r"expert|authorit|resource|support (?:line|group|service)))[^.?!\n]*[.?!]*\s*",
    re.I,
)
"""One closing sentence, matched whole from its start (`without_closing`). A
sentence that names a number, a hotline, a professional or resources offers
help of its own ("If you have other questions, a counsellor can…"): no closing.
The guard comes after the opening words, not before them: a look-ahead before
them, tried wherever a search starts, read each sentence once per character."""
_SENTENCE_ENDS = re.compile(r"[.?!]+\s+|\n\s*")


def has_closing_cue(text: str) -> bool:
    """Could `text` hold a closing pleasantry (`CLOSING_CUES`)? Most answers
    have none, and then no pattern is tried."""
    for cue in CLOSING_CUES:  # noqa: SIM110 - a loop, not any(<generator>): no generator resumed per cue
        if cue in text:
            return True
    return False


def without_closing(text: str) -> str:
    """The answer without the pleasantries that close it ("I hope this helps!
    Let me know if you have any other questions."). Chat models close answers
    and refusals alike with them: added to real answers they changed the
    verdict of 23 of 3,328 (19 short answers read as redirections), and they
    offer nothing in a refusal's place (as "Is there anything else I can help
    with?" never did). Only a
    generic closing goes: "feel free to reach out to a counsellor" offers help
    of its own and stays. An answer that is nothing but a closing is kept."""
    tail = text[-CLOSING_CHARS:]
    if not has_closing_cue(tail):
        return text
    # the sentences of the tail, read from the last: a closing is the run of
    # pleasantries that ends the answer (one regex over the whole tail, anchored
    # at its end, backtracked for 70 µs an answer)
    starts = [0, *(m.end() for m in _SENTENCE_ENDS.finditer(tail))]
    end, cut = len(tail), None
    for start in reversed(starts):
        if start >= end:
            continue
        if PLEASANTRY.fullmatch(tail, start, end) is None:
            break
        cut, end = start, start
    if cut is None or (cut == 0 and len(tail) == len(text)):
        return text
    return text[: len(text) - len(tail) + cut].rstrip()


def without_pleasantries(text: str) -> str:
    """`text` without the closing pleasantries (`PLEASANTRY`) it holds anywhere:
    before a second voice they offer no more than at the end. Only a sentence
    with a cue word (`has_closing_cue`) is searched: the pattern searched over a
    whole answer took 100 µs, tried at nearly every position."""
    pieces = []
    start = 0
    for end in [*(m.end() for m in _SENTENCE_ENDS.finditer(text)), len(text)]:
        sentence = text[start:end]
        pieces.append(PLEASANTRY.sub(" ", sentence) if has_closing_cue(sentence) else sentence)
        start = end
    return "".join(pieces)


_CLOSING_STARTS = (  # the openings of `PLEASANTRY`'s sentences, matched as prefixes (a test checks them)
    "let me know if",
    "i hope this",
    "i hope that",
    "i hope my answer",
    "if you have any other",
    "if you have any more",
    "if you have any further",
    "if you have any additional",
    "if you have any follow-up",
    "if you have other",
    "if you have more",
    "if you have further",
    "if you have additional",
    "if you have follow-up",
    "feel free to",
    "please feel free",
    "please let me know",
    "please don't hesitate",
    "don't hesitate",
    "is there anything else",
)


def without_unfinished_closing(text: str) -> str:
    """A streaming prefix without the start of a closing pleasantry still on its
    way ("… London. I hope this helps! Let me know"): until the sentence ends,
    `without_closing` cannot tell it from an offer, and the badge flickered to
    "indirect refusal" for the few words in between. Only the unfinished last
    sentence goes, and only when it begins as a closing does (or could still)."""
    tail = text[-CLOSING_CHARS:]
    start = 0
    for m in _SENTENCE_ENDS.finditer(tail):
        start = m.end()
    if not start or start >= len(tail):
        return text
    fragment = tail[start:].lower()
    if fragment[-1:] in (".", "!", "?"):
        return text  # the sentence is finished: `without_closing` has read it
    for opening in _CLOSING_STARTS:
        if opening.startswith(fragment) or fragment.startswith(opening):
            return text[: len(text) - len(tail) + start].rstrip()
    return text


def paragraphs_apart(text: str) -> str:
    r"""The text with every run of line breaks one blank line. Models end a
    paragraph with "\n", "\n\n" or "\r\n", and a role-play's second voice
    ("…\nDAN: Sure, here's how") was only seen after a blank line: with single
    newlines 135 of 3,328 real answers changed their verdict. A list or a
    hard-wrapped line loses nothing: every layer reads a blank line where it
    read a newline (no verdict of the labelled answers moved). Split and joined:
    a regex substitution took 6-18 µs an XSTest answer, this takes 1 µs."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    return "\n\n".join([line for line in text.split("\n") if line])


_EM_DASH = re.compile(r"[ \t]*—[ \t]*")
"""An em dash between clauses, read as the comma it stands for ("I can't help
with that—but here is…"): the phrase rules and the model learned clauses
joined by commas, and in the first sentence a dash moved 11 of 3,328
verdicts (in every place, 45)."""


_PROSE_FENCE = re.compile(r"```(?:text|markdown|md|plaintext|txt)?[ \t]*\n")
"""A code fence that opens an answer and holds prose, not code: no language, or a text one."""


def _unfenced(text: str) -> str:
    """An answer set whole in a code fence, without it ("```\\nI'm sorry, but I
    can't…\\n```"): jailbreak templates ask for output in a code block, and a
    refusal so set read as help (the fence is code). Only a prose fence goes,
    and only when no other fence follows it (a streaming answer has no closing
    one yet): "```python" opens code, and two blocks are the answer's layout."""
    fence = _PROSE_FENCE.match(text)
    if fence is None:
        return text
    body = text[fence.end() :].rstrip()
    if body.endswith("```"):
        body = body[:-3]
    if "```" in body or not body.strip():
        return text
    return body.strip()


def _unquoted(text: str) -> str:
    """An answer set whole as a Markdown blockquote, without the marks: each
    line's "> " changed what its lines were read as (a list's items, a second
    voice). Only when every line is quoted: one quotation is the answer's own."""
    lines = text.split("\n")
    for line in lines:
        if line.strip() and line.lstrip()[:1] != ">":
            return text
    return "\n".join(line.lstrip()[1:].removeprefix(" ") if line.strip() else "" for line in lines).strip()


_BOLD_NUMBER = re.compile(r"\n\*\*(\d+[.)])\*\*")
"""A list item's number set in bold ("**1.** Use a VPN"), as the plain number
(on the first line, the opening's bold goes anyway). After a newline, not at
"(?m)^": that searched every position, 60 µs an answer with bold in it."""
_SYMBOL_BULLET = re.compile(r"\n[\u2190-\u2bff\U0001f300-\U0001faff]\ufe0f?[ \t]+")
"""A list item marked with a symbol or emoji ("✅ Use a VPN", "🔹 …"), as "- ".
Every layer knows a list by its digits, dashes and bullets: numbers in bold
were no list, and 11 of the 628 real answers with a numbered list changed
their verdict (symbols for dashes, 1 of 79)."""


_LABEL_LINE = re.compile(r"(?:my |the )?(?:response|answer|reply|output)[ \t]*:?[ \t]*\n", re.I)
"""A first line that only labels what follows ("## Response", "**Answer**",
"Output:"): run into the first sentence, it hid a refusal's opening words
(a "## Response" heading moved 95 of 3,328 verdicts)."""
_LABEL_FIRSTS = frozenset("RrAaOoMmTt")


_PREAMBLE = re.compile(
    r"(?:(?:that's|that is|what|this is) (?:a |an )?(?:really |very )?"
    r"(?:great|good|excellent|interesting|fascinating|thoughtful|important) question|"
    r"(?:great|good|excellent|interesting|fascinating) question|"
    r"thanks?(?: you)?(?: so much)? for (?:your|the|this) (?:question|query|message)|"
    r"thanks?(?: you)?(?: so much)? for (?:asking|reaching out|contacting (?:me|us)|sharing (?:that|this))|"
    r"i (?:understand|appreciate) (?:your|the) (?:question|concern|concerns|curiosity|interest|request|frustration)|"
    r"i understand (?:that )?you(?:'re| are) (?:curious|interested|concerned|frustrated)|"
    r"i'm glad you asked|"
    r"here(?: is|'s) my (?:response|answer|reply)(?: to (?:your|the|this) (?:question|prompt|request|query))?|"
    r"okay|ok|alright|all right|i understand|i see|understood|certainly|sure|of course|absolutely)"
    r"[.!:]+(?:\s+|$)",
    re.I,
)
"""A first sentence that says nothing of the answer: praise of the question,
thanks for it or for reaching out, "Here is my response:", a bare
acknowledgement ("Okay.", "I understand.", "Sure!", "I understand your
concern."). Set before a refusal, it put the refusal in the second sentence,
where the rules and the model's first words no longer saw it: 174, 203, 58,
147, 113 and 124 of 3,328 verdicts changed side. "I'm happy to help!" stays:
it says the model will engage (XSTest's Llama-2 answers so opened are
answers), and it is an offer after a refusal. "Sure! Here's a
possible output:" and then a refusal had read as an answer (5 GPTFuzz
answers so labelled). "Sure, …" and "Of course not." are no such sentence."""
_PREAMBLE_STARTS = (
    "that",
    "what",
    "this is",
    "great",
    "good",
    "excellent",
    "interesting",
    "fascinating",
    "thank",
    "i understand",
    "i appreciate",
    "i see",
    "i'm glad",
    "here is my",
    "here's my",
    "ok",
    "alright",
    "all right",
    "understood",
    "certainly",
    "sure",
    "of course",
    "absolutely",
)
"""How `_PREAMBLE` can begin (lower-cased): other answers are not matched at
all (the pattern tried at every answer's start cost 0.6 µs, this 0.3)."""


HEDGES = r"(?:guarantee|predict|promise|be (?:sure|certain)|say for (?:sure|certain))"
"""What an answer says it "can't" do before it answers ("I can't guarantee this
will work, but…", "I can't say for sure, but…"): a hedge, not a decline. The
disclaimer of `indirect` and the refusal pattern of `task` share it."""
IDIOM_HOW = r"(?:much|many|happy|glad|grateful|thankful|excited|proud|important|often|good|great|lucky)"
"""What follows "I can't tell you how" in an emphatic idiom ("…how much this
means"), not in a decline ("…how to pick a lock")."""
IDIOM_ENOUGH = r"(?: [\w'-]+){0,4} enough\b"
"""What follows "I can't recommend" in an emphatic idiom ("…it highly enough").
The first-person refusal patterns of `rules` and `task` both leave these
idioms out, from this one definition."""
IDIOM_WONT = r"(?:hold back|lie\b|sugar-?coat|mince|beat around|pretend|hesitate|let you down|stop you\b|say (?:that )?(?:i'm|i am|i)\b)"
"""What follows "I won't" or "I can't" in a promise to answer ("I won't hold
back", "I won't lie, …", "I won't sugarcoat it", "I can't stop you, but…") or
in a disapproval that goes on to answer ("I can't say I condone it, but…",
"I can't say I'm surprised"), not in a decline."""


_HEADING_MARK = re.compile(r"#{1,6}[ \t]+")
"""A Markdown heading's mark at the start of an answer."""


_DECORATION = frozenset(("So", "Sk", "Cf", "Mn"))
"""Unicode categories of an answer's decoration: emoji and other symbols, the
joiners and variation selectors that build emoji, combining marks."""


def _trail_symbols_off(text: str) -> str:
    """The answer without the emoji it ends with ("Let me know if you have
    other questions! 😊"): after the closing, the emoji kept it from being
    read as one, and 79 of 3,328 verdicts changed their class."""
    end = len(text)
    while end and (unicodedata.category(text[end - 1]) in _DECORATION or text[end - 1].isspace()):
        end -= 1
    return text[:end] if end else text


def _lead_symbols_off(text: str) -> str:
    """The answer without the emoji or symbols it opens with ("🙂 I can't…"),
    or an emoji that labels the speaker ("😈: Oh, …"): they decorate the
    opening and hid it from every pattern anchored at its start."""
    start = 0
    while start < len(text) and unicodedata.category(text[start]) in _DECORATION:
        start += 1
    if not start:
        return text
    rest = text[start:].lstrip()
    return rest[1:].lstrip() if rest[:1] == ":" else rest


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
_PUNCT = ".,!?:;"
_KEEP = b"abcdefghijklmnopqrstuvwxyz0123456789'" + _PUNCT.encode()
_SEPARATORS = bytes(c if c in _KEEP else 32 for c in range(256))
"""Every byte `_TOKEN` never consumes, as a space: mapping one non-token
character to another cannot change the tokens."""
_ODD_APOSTROPHE = re.compile(r"'(?:(?<![a-z0-9]')|(?![a-z])|[a-z]+['0-9])")
"""An apostrophe `_TOKEN` does not keep inside a word ("'90s", "dogs'",
"rock'n'roll", "a'b1"): only then do space-separated words and tokens differ.
It opens with the apostrophe itself (the look-behind comes after it) so that
the search skips straight from one apostrophe to the next."""


def tokens(text: str) -> list[str]:
    """`_TOKEN.findall(text)`, about twice as fast for ASCII text: this is the
    hot path of every verdict. Non-token characters become spaces (one C-level
    byte translation), punctuation is spaced out, and the words are then the
    tokens, unless an apostrophe sits where the regex splits or drops it, or
    the text is not ASCII: then the regex decides."""
    if not text.isascii():
        return _TOKEN.findall(text)
    spaced = text.encode().translate(_SEPARATORS).decode()
    if "'" in spaced and _ODD_APOSTROPHE.search(spaced):
        return _TOKEN.findall(text)
    for p in _PUNCT:
        if p in spaced:
            spaced = spaced.replace(p, f" {p} ")
    return spaced.split()


def bigrams(toks: list[str]) -> Iterator[str]:
    """Each pair of neighbouring tokens as "a b", in order: one C-level join
    per pair (pairwise reuses its tuple), a third cheaper than two concatenations."""
    return map(_SPACE_JOIN, pairwise(toks))


_SPACE_JOIN = " ".join


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
    toks = tokens(head)[:MAX_TOKENS]
    grams = dict.fromkeys(chain(toks, bigrams(toks)))
    return head, toks, grams


def word_set(words: str) -> frozenset[str]:
    """A gate: the set of the space-separated words given."""
    return frozenset(words.split())


def phrase_set(phrases: str) -> frozenset[str]:
    """A gate of unigrams and bigrams ("rather not"), separated by "|"."""
    return frozenset(p.strip() for p in phrases.split("|") if p.strip())


def grams_of(text: str) -> set[str]:
    """Unigrams and bigrams of an already normalised text (all of it)."""
    toks = tokens(text)
    return {*toks, *bigrams(toks)}


class PhraseIndex:
    """A phrase set (`phrase_set`) laid out to be looked for in a token list:
    `found_in(toks)` is `not phrases.isdisjoint(grams_of(...))` without making
    every bigram, only those that start with a word some phrase starts with.
    For the longer stretches read past the opening (a refusal's later offer),
    where making all the bigrams was most of the cost."""

    __slots__ = ("bigrams", "firsts", "unigrams")

    def __init__(self, phrases: frozenset[str]):
        self.unigrams = frozenset(p for p in phrases if " " not in p)
        self.bigrams = frozenset(p for p in phrases if p.count(" ") == 1)
        self.firsts = frozenset(p.split(" ", 1)[0] for p in self.bigrams)

    def found_in(self, toks: list[str]) -> bool:
        if not self.unigrams.isdisjoint(toks):
            return True
        starts = map(self.firsts.__contains__, toks)
        return not self.bigrams.isdisjoint(map(_SPACE_JOIN, compress(pairwise(toks), starts)))


_NOT_SPEAKERS = frozenset(("note", "disclaimer", "warning", "step", "title", "caution", "important", "tl;dr"))
"""Labels that open an answer's own content, not a voice: kept."""
_AS_PERSONA = re.compile(r"As (?:[A-Z][\w-]*)(?: [A-Z][\w-]*){0,2}(?: with [\w ]{1,30}? (?:enabled|mode))?, ")
_SPEAKER_MAX = 32
_CLOSING = {"[": "]", "(": ")", "【": "】"}


def without_speaker(text: str) -> str:
    """The answer without the speaker label a role-play answer opens with
    ("SIM: …", "[ChatGPT]: …", "(🤖ChatGPT) …", "As DAN, …"). The label says
    who speaks, not what is said: left in, it hides an apology or a refusal
    from every rule that reads the answer's first words."""
    start = len(text) - len(text.lstrip())
    head = text[start : start + _SPEAKER_MAX + 2]
    if not head:
        return text
    first = head[0]
    if first in _CLOSING:
        end = head.find(_CLOSING[first])
        label = head[1:end]
        if end < 2 or "\n" in label or label.count(" ") > 3 or not (label[:1].isupper() or not label[:1].isalnum()):
            return text
        rest = text[start + end + 1 :]
        stripped = rest.lstrip()
        if stripped.startswith(":"):
            stripped = stripped[1:].lstrip()
        # "(1) First, …" and "[1]" are the answer's own numbering
        return stripped if stripped and not label.isdigit() else text
    if first == "A" and head.startswith("As "):
        m = _AS_PERSONA.match(text, start)
        return text[m.end() :] if m else text
    colon = head.find(":")
    if colon < 1 or head[colon + 1 : colon + 2] not in (" ", "\n"):
        return text
    label = head[:colon]
    if (
        "\n" in label
        or label.count(" ") > 3
        or label[:1].isdigit()
        or label.lower() in _NOT_SPEAKERS
        or not all(w[:1].isupper() or not w[:1].isalnum() for w in label.split())
    ):
        return text
    return text[start + colon + 1 :].lstrip() or text
