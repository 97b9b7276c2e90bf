"""What a turn means for the conversation so far: what one call has read (`Conversation`)
and the problem the customer came with, the first sentence that says something. The
corrections a turn makes are people_corrections. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from gateway.context.people_hits import Hit
from gateway.context.people_patterns import (
    CLAUSE_END,
    CORRECTION,
    HELP,
    NEW_PROBLEM,
    NONSPACE,
    OPENER,
    SENTENCE_END,
    TOPIC_CHANGE,
    WORD,
)
from gateway.context.people_text import FOLD, next_word
from gateway.context.people_words import FILLER, HELP_WITH

PROBLEM_WORDS = 18  # of its sentence: the problem is a line of the facts block, not a turn
# The customer introducing themselves: a problem is looked for past these.
_INTRO_KINDS = frozenset({"name", "city", "phone", "email", "address"})
INTRO_LEAD_WORDS = 2  # words before an introduction in its sentence that it skips too
WORD_KINDS = ("name", "city")  # what a bare corrected word may be ("scratch that, Boston")
# Cues that also open a sentence that corrects nothing ("Actually, my order 55123 never
# came"): the clause corrects only a value of a kind the conversation already has.
_DISCOURSE = ("actually", "na verdade", "en realidad")


@dataclass
class Conversation:
    """What one call has read so far: which kinds came last, and whether the problem is
    known (one per conversation, unless the customer brings "outra coisa")."""

    recent: list[str] = field(default_factory=list)
    problem: bool = False
    # The words of the names and cities heard so far, by kind: "o correto é Beatriz
    # Pereira" corrects the name "Beatriz", not the city said after it.
    words: dict[str, set[str]] = field(default_factory=dict)

    def last_of(self, kinds: Sequence[str]) -> str:
        return next((k for k in reversed(self.recent) if k in kinds), "")

    def heard(self, kind: str, value: str) -> None:
        self.recent.append(kind)
        self.lend(kind, value)

    def lend(self, kind: str, value: str) -> None:
        """Keep a name's or city's words, for `sharing`, without making its kind heard."""
        if kind in WORD_KINDS:
            self.words.setdefault(kind, set()).update(value_words(value))

    def sharing(self, value: str) -> str:
        """The one kind of WORD_KINDS whose values heard so far share a word with value."""
        said = value_words(value)
        kinds = [k for k in WORD_KINDS if said & self.words.get(k, set())]
        return kinds[0] if len(kinds) == 1 else ""


def value_words(value: str) -> set[str]:
    """Folded as the turn is: "Tânia" (stored as said) shares a word with "Tania"."""
    return {w for w in value.translate(FOLD).casefold().split() if len(w) >= 3}


def _after_opener(folded: str, pos: int) -> int:
    """Past greetings and fillers ("oi, boa tarde, tudo bem?") from pos."""
    for _ in range(40):
        m = OPENER.search(folded[pos : pos + 80])
        if m is None or m.end() == 0 or _inside_word(folded, pos + m.end()):
            break
        if _going_to(folded[pos : pos + m.end()], folded, pos + m.end()):
            break
        pos += m.end()
    return pos


def _going_to(opener: str, folded: str, end: int) -> bool:
    """ "how's it going to be delivered?" asks the question itself: no greeting."""
    return opener.rstrip(" \t,").lower().endswith("going") and next_word(folded, end) == "to"


def _inside_word(folded: str, end: int) -> bool:
    """An opener that ends on an apostrophe inside a word: "there" of "there's a charge"
    is no greeting (FOLD makes a curly apostrophe straight)."""
    return folded[end - 1 : end] == "'" and folded[end : end + 1].isalpha()


def _asked(folded: str, pos: int, stop: int) -> int:
    """Past a request for help that says not with what ("preciso de ajuda", "I need some
    help do you...", "necesito ayuda con algo el paquete..."), else pos: one followed by a
    word of HELP_WITH ("tengo un problema con la factura") is the problem itself."""
    asked = HELP.search(folded[pos:stop])
    if asked is None:
        return pos
    end = pos + asked.end()
    following = folded[end:stop].split(maxsplit=1)
    if folded[end : end + 1].isspace() and following and following[0].lower() in HELP_WITH:
        return pos
    return end


def _words(folded: str, start: int, end: int, hits: Sequence[Hit]) -> Iterator[str]:
    """The words of folded[start:end], less the customer introducing themselves (their
    name, city or contact details and the words that say so), read as they are asked for."""
    skip = [(h.cue, h.end) for h in hits if h.kind in _INTRO_KINDS]
    for m in WORD.finditer(folded[start:end]):
        if not any(s <= start + m.start() < e for s, e in skip):
            yield (m.group(0) or "").lower().strip("'.-")


def _says(words: Iterable[str], least: int = 1) -> bool:
    """At least `least` words, one of them saying something (not a filler): read only as
    far as it takes, so a long message costs what its first words do."""
    says = False
    for count, w in enumerate(words, 1):
        says = says or (len(w) >= 3 and w not in FILLER)
        if says and count >= least:
            return True
    return False


def _span_end(folded: str, pos: int) -> int:
    """Up to PROBLEM_WORDS words from pos, ending at a sentence's end once there are 5;
    a sentence longer than that ends at its last comma past the 8th word, if any; and
    before a change of subject ("e outra coisa", "anyway") past the 3rd word."""
    window = folded[pos : pos + PROBLEM_WORDS * 40]
    end = comma = pos
    for count, m in enumerate(NONSPACE.finditer(window), 1):
        word, end = m.group(0) or "", pos + m.end()
        comma = end if word[-1] == "," and count >= 8 else comma
        if count >= 5 and word[-1] in ".!?":
            break
        if count == PROBLEM_WORDS:
            end = comma if comma > pos else end
            break
    change = TOPIC_CHANGE.search(window)
    if change and pos + change.start() < end and len(window[: change.start()].split()) >= 3:
        end = pos + change.start()
    while end > pos and folded[end - 1] in ".,;:!?-":
        end -= 1
    return end


def _corrected(folded: str, pos: int, stop: int, hits: Sequence[Hit], seen: Conversation) -> int:
    """Past a clause that opens with a correction cue up to the value it corrects and the
    end of that value's clause ("correction danderson at hotmail dot com and then..."),
    else pos: a customer correcting a detail is not stating the problem."""
    after = [h for h in hits if h.kind != "problem" and pos <= h.start < stop]
    value = min(after, key=lambda h: h.start, default=None)
    cue = CORRECTION.search(folded[pos:stop]) if value else None
    if value is None or cue is None or cue.start() > 0:
        return pos
    said = " ".join((cue.group(0) or "").lower().split())
    known = [*seen.recent, *(h.kind for h in hits if h.start < pos)]
    if any(d in said for d in _DISCOURSE) and value.kind not in known:
        return pos
    clause = CLAUSE_END.search(folded[value.end : stop])
    return value.end + clause.end() if clause else stop


def _lead(text: str) -> bool:
    """A word or two before an introduction, in the same clause: no clause mark."""
    return len(text.split()) <= INTRO_LEAD_WORDS and not any(c in ",;:" for c in text)


def _problem(
    folded: str, pos: int, hits: Sequence[Hit], seen: Conversation
) -> tuple[int, int] | None:
    """The first sentence from pos that says something (3+ words, one not filler), from
    the first clause that does: past greetings, the customer introducing themselves,
    asking for help without saying with what ("preciso de ajuda") and filler clauses, a
    run of these at a clause's start skipped too where nothing punctuates them."""
    intros = [(h.cue, h.end) for h in hits if h.kind in _INTRO_KINDS]
    ahead = [(h.cue, h.end) for h in hits if h.kind in _INTRO_KINDS and not h.correction]
    for _ in range(40):
        pos = _after_opener(folded, pos)
        found = SENTENCE_END.search(folded[pos : pos + 2000])
        stop = pos + found.end() if found else len(folded)
        # an introduction under way, or one a word or two on in this clause ("boa trade
        # aqui quem fala é Beatriz": a greeting misspelt; not "Reembolso urgente, sou a Ana")
        jump = max(
            [end for cue, end in intros if cue <= pos < end]
            + [end for cue, end in ahead if pos < cue < stop and _lead(folded[pos:cue])],
            default=pos,
        )
        asked = _asked(folded, pos, stop)
        if jump > pos or asked > pos:
            pos = max(jump, asked)
            continue
        if stop <= pos:
            return None
        corrected = _corrected(folded, pos, stop, hits, seen)
        if corrected > pos:
            pos = corrected
            continue
        clause = CLAUSE_END.search(folded[pos:stop])
        cut = pos + clause.end() if clause else stop
        if not _says(_words(folded, pos, cut, hits)):
            pos = cut
            continue
        if _says(_words(folded, pos, stop, hits), least=3):
            return pos, _span_end(folded, pos)
        pos = stop
    return None


def problems(folded: str, hits: list[Hit], seen: Conversation) -> None:
    """The customer's problem: the first sentence that says something in the first turn
    that has one, and in a later turn only after "outra coisa", "another issue"."""
    if not seen.problem:
        span = _problem(folded, 0, hits, seen)
    else:
        cue = NEW_PROBLEM.search(folded)
        span = _problem(folded, cue.end(), hits, seen) if cue else None
    if span:
        hits.append(Hit("problem", *span, span[0]))
        seen.problem = True
