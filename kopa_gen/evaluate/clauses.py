"""Reading which statement of a Korean (or English) reply commits to an answer, for text mode's sentence rules
(kopa_gen/evaluate/response.py) where the reply has no `최종 답:` line.

A reply is read as evidence and statements. Evidence never commits: fenced code blocks, pasted JSON, markdown
table rows. The rest is split into sentences, and each sentence into clauses at contrastive connectives
('…지만', '…는데', '…아니라', '…아니고', '…대신'), conditions ('…(으)면', '…라면', '…경우') and reasons ('…이므로',
'…니까', '…때문에'). A Hangul name in parentheses after a Latin word glosses it ('Yang Young-soo (양영수)') and is
read as part of the sentence; other asides are not. A clause has a role:

    negated      '아니다', '않', 'not': states what the answer is not; a denial that the value is a guess, an
                 estimate or an example ('추정치가 아닌 공시 수치입니다', 'not an estimate') negates nothing
    example      '예를 들어', '예시', '…처럼', '같은 형식': a value offered as a format, not an answer
    refusal      '보류', '드릴 수 없', '답할 수 없', '단정할 수 없', '특정하지 못', '찾지 못', '확인하지 못'; it withholds
                 (and takes back what came before) when it says the value is not established: '확인이 필요',
                 '검증이 필요', '확정하지 못', '추측일 뿐', '추정입니다', '모르겠', '철회'
    possible     '…일 수도 있', '…일지도', '가능성', 'maybe'; presumed ('…일 것입니다', '…일 겁니다', '…인 것
                 같습니다', '…이겠지만', '…일까요'); guessed, assumed or estimated ('추측', '추정', '짐작', '가정하면');
                 a question ('22,000원?'): a possibility, not a commitment. A sentence that says it guesses
                 ('추측이지만 22,000원입니다') commits to nothing; doubt does not make a guess ('확실하지는 않지만
                 X입니다' commits to X). What follows an assumed condition ('만약 …', '…다면', '…라면', '가정하면')
                 is hypothetical: a possibility too
    condition    the condition of a conditional ('10월만 보면', '보통주 기준이면')
    domain       the set a choice is made from ('한 주 전체 33시간 가운데', 'A, B, C 중')
    retracted    what the reply first thought ('507번이 가장 짧다고 봤는데')
    correction   '다시 확인해 보니', '정정', '잘못', '잠깐', 'actually': it replaces what came before
    plain        everything else

Which statement commits: the first sentence with a candidate in a plain (or correction) clause, its last such
clause (a later clause after '지만' / '아니라' replaces an earlier one: '창녕군이라고 생각했지만 다시 보니
하동군입니다', 'X가 아니라 Y입니다', '확실하지는 않지만 X입니다'); a later sentence replaces it only with a
correction. Comparisons are context: a candidate before '보다' / '대비' / '에 비해', or after '전년' / '전기말',
and the change between them ('…보다 약 1,061억 원 늘었습니다'). What never passes: a reply that withholds its
answer, a hedge between candidates (a possibility naming another one, also inside parentheses: '하동군(혹은
창녕군)'), two conditional answers ('…만 보면 A, …포함하면 B'), a value for another reading of the question ('중식을
물으신 거라면 815.1 Kcal', '연결 기준을 원하셨다면 …', also in an aside: `another_reading`), and a tentative answer
alone ('아마도 임기리입구일 겁니다'): text mode fails what does not commit.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from kopa_gen.language.normalize import find_dates, find_numbers

Role = Literal[
    "plain", "negated", "example", "refusal", "possible", "condition", "correction", "retracted", "domain"
]

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|?[ \t]*$", re.MULTILINE)
_JSON_BLOCK = re.compile(r"(?s)[{\[]\s*\"[^\"\n]{1,60}\"\s*:.*?[}\]](?=\s*(?:\n|$))")
_ASIDE = re.compile(r"\([^()]*\)|（[^（）]*）|\[[^\[\]]*\]")
# after a digit a period is no sentence end: '2026. 10. 16.', '1. 보통주' (an enumerator), '324.' before a line
_SENTENCE_END = re.compile(r"(?<!\d)[.!?。](?=\s|$)|\n|;")
# a clause ends after a contrastive or conditional connective (kept with the clause it ends)
_SPLIT = re.compile(
    r"(?:(?<!까)지만|는데|은데|인데|으나|(?<=[가-힣])나,|아니라|아니고|대신|반면|(?<=[가-힣])(?:으면|면|라면)(?=[\s,])"
    r"|(?=(?:그\s?중|이\s?중|그\s가운데)(?:에서|에)?\s)|(?<=\S)\s+(?:중|가운데)(?:에서|에)?(?=\s)"
    r"|(?<=[가-힣])(?:이고|이며|고|며),|(?<=[가-힣])(?:으므로|므로|니까|(?:기\s?)?때문에)(?=[\s,])"
    r"|경우(?:에는|엔|에)?(?=[\s,])|(?:^|(?<=\s))(?:but|however|although|though|if)(?=\s))",
    re.IGNORECASE,
)
# '33시간 가운데', 'A, B, C 중': the set a choice is made from
_DOMAIN_END = re.compile(r"\s(?:중|가운데)(?:에서|서|에)?\s*$")
_CONDITION_END = re.compile(r"(?:으면|면|라면|경우(?:에는|엔|에)?|(?<![a-z])if)\s*,?\s*$", re.IGNORECASE)
_NEGATION = re.compile(
    r"아니(?:다|라|며|고|었|에요|예요|요|오|ㅂ)|아닙|아닌|아님|않|(?<![a-z])(?:not|isn't|no)(?![a-z])",
    re.IGNORECASE,
)
_EXAMPLE = re.compile(
    r"예를\s*들(?:어|면)|예시|예컨대|처럼|같은\s*형식|형식으로|형식은|형식:|양식|형태로\s*답|e\.g\.|for example|such as",
    re.IGNORECASE,
)
# withholding outright (a later clause or sentence saying so withdraws an answer given before it)
_WITHHOLD = re.compile(
    r"보류|드릴\s*수\s*(?:가\s*)?없|답(?:변)?(?:을|하기)?\s*(?:할|드릴)?\s*수\s*없|단정(?:할|하기)\s*(?:수\s*)?(?:없|어렵)"
    r"|특정하지\s*못|특정할\s*수\s*없|확정할\s*수\s*없|확정하기\s*어렵|알\s*수\s*없|모르겠|철회"
    r"|결론을\s*(?:낼|내릴)\s*수\s*없|(?:드리기|답하기|답변하기|말씀드리기)\s*어렵"
    r"|(?:재?확인|검증)(?:이|은)?\s*필요|확인(?:해|하여)\s*(?:보셔야|보시기|보시길|주시기)|확정하지\s*못"
    r"|(?:추측|추정|가정|짐작)(?:치)?(?:일|에)\s*(?:뿐|불과)|(?:추측|추정|짐작)(?:치)?(?:입니다|이다|임|이에요|예요)"
    r"|cannot (?:answer|determine)|unable to (?:answer|determine)",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"보류|드릴\s*수\s*(?:가\s*)?없|답(?:변)?(?:을|하기)?\s*(?:할|드릴)?\s*수\s*없|단정(?:할|하기)\s*(?:수\s*)?(?:없|어렵)"
    r"|특정하지\s*못|특정할\s*수\s*없|찾지\s*못|확인하지\s*못|확인할\s*수\s*없|조회(?:할|되지)\s*(?:수\s*)?(?:없|않)"
    r"|알\s*수\s*없|모르겠|cannot (?:answer|determine|find)|unable to",
    re.IGNORECASE,
)
_POSSIBLE = re.compile(
    r"수도\s*있|수\s*있을|일지도|지도\s*모르|가능성|아마도?|혹시|(?<![a-z])(?:maybe|possibly|might|perhaps)(?![a-z])"
    # presumed ('…일 것입니다', '…일 겁니다', '…인 것 같습니다', '…이겠지만', '…일까요'), guessed, assumed, estimated
    r"|일\s*(?:것|겁|거(?=\s|$|[.!?예야요]))|(?:것|거)\s*같|(?:이|였|었)겠|일까(?!지)|추측|추정|짐작|어림"
    r"|가정(?:하|한|해|컨대|일|이라|이지만|으로)"
    r"|(?<![a-z])(?:guess|guessing|presumably|probably|assum(?:e|ing)|estimated?)(?![a-z])"
    r"|\?\s*$",  # a question asks, it does not answer ('22,000원?')
    re.IGNORECASE,
)
# a clause that says the reply guesses, assumes or estimates ('추측이지만 22,000원입니다'): unlike doubt ('확실하지는
# 않지만 X입니다', which commits to X), it says the value was not found, so nothing in its sentence commits
_GUESS = re.compile(
    r"추측|추정|짐작|어림|가정(?:하|한|해|컨대|일|이라|이지만|으로)|(?<![a-z])(?:guess|guessing|assum(?:e|ing))(?![a-z])",
    re.IGNORECASE,
)
# a denial that the value is a guess, an estimate or an example ('추정치가 아닌 공시 수치입니다', '추측이 아니라
# 확인된 값', 'not an estimate') confirms the value: it neither negates its clause nor makes it a guess
_DENIED_DOUBT = re.compile(
    r"(?:추정|추측|짐작|어림|예상|잠정|근사|가정|예시)(?:치|값|수치)?\s*(?:이|가|은|는)?\s*"
    r"(?:아닌(?=\s)|아니(?:라|고|며|다|에요|예요|요)|아닙니다|아님)"
    r"|(?<![a-z])not\s+(?:an?\s+)?(?:estimate|estimated|guess|guessing|approximation|example)(?![a-z])",
    re.IGNORECASE,
)
# a condition the reply assumes rather than knows ('만약 시간표가 맞다면', '본사가 그 면에 있다면', '가정하면'): what
# is stated under it is hypothetical, not committed
_HYPOTHETICAL = re.compile(
    r"만약|만일|가령|가정|(?:다|라)면\s*,?\s*$|(?<![a-z])(?:if|suppose|assuming)(?![a-z])", re.I
)
# a condition on what the question meant ('연결 기준을 원하셨다면', '중식을 물으신 거라면', 'if you meant'): a value
# under it answers another reading of the question, so the reply hedges between answers
INTENT = re.compile(
    r"(?:(?:원하|물으|물어보|뜻하|의미하|의도하|찾으|궁금하)(?:시|셨|신)\S*|(?:원|뜻|의미)한다면)"
    r"(?:\s*(?:거|것|게)\S*)?\s*,?\s*$"
    r"|(?<![a-z])if you (?:meant|mean|want|wanted|asked|are asking|were asking|are looking)",
    re.IGNORECASE,
)
CORRECTION = re.compile(
    r"다시\s*(?:확인|보니|보면|살펴|계산|세어)|정정|바로잡|잘못\s*(?:봤|보았|읽|계산|말씀)|착오|잠깐|"
    r"(?:^|\s)아니[,.]?\s|(?<![a-z])(?:actually|correction)(?![a-z])",
    re.IGNORECASE,
)
_DIGIT = re.compile(r"\d")
_HEDGE = re.compile(r"또는|혹은|아니면|이거나|(?<![a-z])or(?![a-z])|수도\s*있|경우도|일지도|/", re.IGNORECASE)
# comparison context around a candidate
_REF_AFTER = re.compile(
    r"^\s*(?:\([^)]*\)\s*)?(?:보다|대비|에\s*비해|에\s*비하여|와\s*비교|과\s*비교|than\b)"
)
_REF_BEFORE = re.compile(
    r"(?:전년|전기말|전기|작년|지난해|전년도|전월|전분기|직전|previous|last year)\s*(?:의|도)?\s*$"
)
_CHANGE = re.compile(
    r"늘|줄|증가|감소|많|적|높|낮|상승|하락|올|내렸|내린|커|작|(?:more|less|up|down)(?![a-z])"
)


@dataclass(frozen=True)
class Clause:
    text: str
    start: int  # offset of the clause in its sentence
    role: Role


@dataclass(frozen=True)
class Sentence:
    text: str  # without asides
    clauses: list[Clause]
    asides: list[str]
    correction: bool


@dataclass
class Reading:
    """What a reply commits to: the committed clause's candidates (comparison context dropped), the candidates
    only offered as possibilities, or why it commits to nothing."""

    chosen: list[object] = field(default_factory=list)
    sentence: str = ""
    clause: str = ""
    possible: list[object] = field(default_factory=list)
    problem: str | None = None  # why it fails outright (withheld, hedged, conditional answers)
    options: list[tuple[str, object]] = field(default_factory=list)
    """Every candidate the committed sentence states, with the text that labels it (its clause up to it, and
    the condition before that clause): what tells labelled values apart."""


def evidence_free(text: str) -> str:
    """The reply without what is pasted evidence: code blocks, JSON, table rows."""
    text = _FENCE.sub("\n", text)
    text = _JSON_BLOCK.sub("\n", text)
    return _TABLE_ROW.sub("", text)


def without_asides(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _ASIDE.sub(" ", text)
    return text


def asides(text: str) -> list[str]:
    return [m.group()[1:-1] for m in _ASIDE.finditer(text)]


_BLOCK_START = re.compile(r"^\s*(?:[-*+•#>|]|\d+[.)]|\(|최종|정답|답변|final|answer)", re.IGNORECASE)
_LINE_DONE = re.compile(r"[.!?。:：)\]]\s*$|^\s*$")


def unwrap(text: str) -> str:
    """Lines a writer wrapped inside a sentence, joined: a line that does not end a sentence, followed by one
    that starts no list item, heading, quote or table row."""
    lines = text.split("\n")
    out = lines[:1]
    for line in lines[1:]:
        previous = out[-1]
        wrapped = not _LINE_DONE.search(previous) and not _BLOCK_START.match(previous)
        if wrapped and line.strip() and not _BLOCK_START.match(line):
            out[-1] = previous.rstrip() + " " + line.lstrip()
        else:
            out.append(line)
    return "\n".join(out)


def sentence_texts(text: str) -> list[str]:
    text = unwrap(text)
    out, start = [], 0
    for m in _SENTENCE_END.finditer(text):
        out.append(text[start : m.end()])
        start = m.end()
    out.append(text[start:])
    return [s.strip() for s in out if s.strip()]


_RETRACTED = re.compile(
    r"(?:다고|라고|이라고|인\s?줄|줄|것으로|걸로)\s*(?:봤|보았|생각했|생각하였|알았|여겼|판단했|읽었)"
    r"|생각하기\s*쉽|(?<![a-z])(?:i thought)(?![a-z])",
    re.IGNORECASE,
)


def _undoubted(text: str) -> str:
    """`text` with its denials of doubt blanked (same length, so offsets hold)."""
    return _DENIED_DOUBT.sub(lambda m: " " * len(m.group()), text)


def _role(text: str) -> Role:
    text = _undoubted(text)
    if _EXAMPLE.search(text):
        return "example"
    if _RETRACTED.search(text):
        return "retracted"
    if _REFUSAL.search(text) or _WITHHOLD.search(text):
        return "refusal"
    if CORRECTION.search(text):
        return "correction"
    if _NEGATION.search(text):
        return "negated"
    if _POSSIBLE.search(text):
        return "possible"
    if _CONDITION_END.search(text):
        return "condition"
    if _DOMAIN_END.search(text):
        return "domain"
    return "plain"


def clauses_of(sentence: str) -> list[Clause]:
    out: list[Clause] = []
    start = 0
    for m in _SPLIT.finditer(sentence):
        piece = sentence[start : m.end()]
        if piece.strip():
            out.append(Clause(piece, start, _role(piece)))
        start = m.end()
    if sentence[start:].strip():
        out.append(Clause(sentence[start:], start, _role(sentence[start:])))
    return out


# a Hangul name in parentheses right after a Latin word glosses it ('Yang Young-soo (양영수)'): it is what the
# sentence says, not an aside
_GLOSS = re.compile(
    r"(?<=[A-Za-z.])\s*[(（]\s*(?!(?:주식회사|유한회사)\s*[)）])([가-힣ㆍ·]{2,}(?:\s[가-힣ㆍ·]+){0,3})\s*[)）]"
)


def sentences(text: str) -> list[Sentence]:
    out = []
    for raw in sentence_texts(evidence_free(text)):
        main = without_asides(_GLOSS.sub(r" \1 ", raw))
        clauses = clauses_of(main)
        out.append(Sentence(main, clauses, asides(raw), any(c.role == "correction" for c in clauses)))
    return out


T = TypeVar("T")


def is_context(clause: str, start: int, end: int) -> bool:
    """A candidate at [start, end) of a clause that is comparison context: the term compared against ('전년
    163,890,562,000원보다'), or the change ('…보다 약 1,061억 원 늘었습니다')."""
    if _REF_AFTER.match(clause[end:]) or _REF_BEFORE.search(clause[:start]):
        return True
    before = clause[:start]
    at = max(before.rfind("보다"), before.rfind("대비"), before.rfind("에 비해"))
    return at >= 0 and _CHANGE.search(clause[end:]) is not None


def read(text: str, find: Callable[[str], Sequence[T]], where: Callable[[T], tuple[int, int]]) -> Reading:
    """Which candidates `text` commits to (module docstring). `find` lists the candidates of a piece of text,
    `where` gives a candidate's [start, end) in that piece."""
    reading = Reading()
    state: tuple[Sentence, Clause, list[T], list[tuple[str, object]]] | None = None
    withheld = False
    correcting = False  # a correction ('아, 잠깐만요.') applies to the next statement
    for s in sentences(text):
        local: tuple[Clause, list[T]] | None = None
        options: list[tuple[str, object]] = []
        local_withheld = False
        conditional: list[T] = []
        conditions = 0
        guessed = any(c.role != "negated" and _GUESS.search(_undoubted(c.text)) for c in s.clauses)
        for k, clause in enumerate(s.clauses):
            every = list(find(clause.text))
            # comparison context gives way to what is compared; alone, it is what the clause states
            found = [c for c in every if not is_context(clause.text, *where(c))] or every
            condition = s.clauses[k - 1].text if k > 0 and s.clauses[k - 1].role == "condition" else ""
            role = clause.role
            if k > 0 and _CONDITION_END.search(s.clauses[k - 1].text):
                before = s.clauses[k - 1].text
                if INTENT.search(before) and (found or _states_value(clause.text)):
                    reading.problem = f"answers another reading of the question too ({before.strip()!r} …)"
                    return reading
                if found and _HYPOTHETICAL.search(before) and role in ("plain", "correction"):
                    role = "possible"  # stated only under an assumption ('만약 … 맞다면 지구과학입니다')
            if guessed and role in ("plain", "correction"):
                role = "possible"
            if role == "condition":
                conditions += 1
                conditional += found
            elif role == "possible":
                reading.possible += found
            elif role == "refusal":
                if _WITHHOLD.search(clause.text):
                    local, local_withheld = None, True
            elif role in ("plain", "correction") and found:
                local, local_withheld = (clause, found), False
                options += [(condition + clause.text[: where(c)[0]], c) for c in found]
                if condition:
                    conditional += found
            if role == "condition" and found:
                options += [(clause.text[: where(c)[0]], c) for c in found]
        if conditions >= 2 and len(conditional) >= 2:
            reading.problem = "states different answers under different conditions"
            return reading
        correcting = correcting or s.correction
        if local_withheld:
            withheld, state = True, None
        elif local is not None and (state is None or correcting):
            state, withheld, correcting = (s, local[0], local[1], options), False, False
    if withheld:
        reading.problem = "withholds its answer"
        return reading
    every_aside = [a for s in sentences(text) for a in s.asides]
    hedged = [a for a in every_aside if _HEDGE.search(a) and (find(a) or _DIGIT.search(a))]
    if hedged:
        reading.problem = f"hedges between candidates ({hedged[0].strip()!r})"
    other_reading = next((r for a in every_aside if (r := another_reading(a, find)) is not None), None)
    if other_reading is not None:
        reading.problem = f"answers another reading of the question too ({other_reading!r} …)"
    if state is not None:
        reading.sentence, reading.clause, reading.chosen = state[0].text, state[1].text, list(state[2])
        reading.options = state[3]
    # a tentative answer alone ('아마도 X일 겁니다', 'X일 것 같습니다', 'X?') commits to nothing
    return reading


def another_reading(text: str, find: Callable[[str], Sequence[object]]) -> str | None:
    """The condition under which `text` answers another reading of the question ('중식을 물으신 거라면 815.1
    Kcal', '연결 기준을 원하셨다면 16,563,773,361,000원입니다', '득표수를 물으신 거라면 47,339표'), or None: a reply
    that answers two readings has not chosen one. What it answers may be of another kind than the answer (a vote
    count beside a percentage): any candidate `find` sees, or any amount."""
    for raw in sentence_texts(text):
        pieces = clauses_of(without_asides(raw))
        for before, clause in itertools.pairwise(pieces):
            if not (_CONDITION_END.search(before.text) and INTENT.search(before.text)):
                continue
            if find(clause.text) or _states_value(clause.text):
                return before.text.strip()
    return None


def _states_value(text: str) -> bool:
    """Whether `text` states an amount or a date (a value of any kind)."""
    return any(m.quantity for m in find_numbers(text)) or bool(find_dates(text))


def withholds(text: str) -> bool:
    """Whether a clause withholds or takes back an answer ('답변을 보류합니다', '위 답은 철회합니다')."""
    return _WITHHOLD.search(text) is not None


def role_of(text: str) -> Role:
    """The role a piece of text would have as a clause."""
    return _role(text)
