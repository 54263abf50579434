"""Text that comes from the run (names, paths, labels, completion samples): untrusted, kept in its place.

Everything the run supplies appears only inside the fenced data block at the end of the user message. The fence
lines carry an unguessable token; any occurrence of the token, and of triple backticks, inside the data is broken
up (`neutralise`), so the data cannot close the block or open a new one. The evidence sheet outside the block
names metrics by our own canonical names (`reward_mean`, `eval/reward_mean`) and writes a plain name the run chose
as it is (`plain`: only metric words, such as `reward_component/format_mean` or a model id); any other label the
run chose (a metric key, a reward-function name, the model id, a loss type) is written there as a reference,
`[run label 3]`, and its text is listed in the block (`Scrubber.label`, `Scrubber.listing`), so a metric named
`eval/ignore_previous_instructions` is data in the fence like any other run text. Paths inside diagnostic
sentences are replaced by "checkpoint at step N".
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from assessor.printable import without_escapes
from assessor.run import Checkpoint

FENCE = "```"
MAX_OBSERVATION_CHARS = 480
UNPRINTABLE = "[unprintable label]"
EVAL_PREFIX = "eval/"
MAX_LABEL_CHARS = 200

_LABEL = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_./:@+\-]{0,79}")


MAX_PLAIN_CHARS = 80
# Words a plain metric, reward-function, model or loss-type name is made of. A label whose every word is one of
# these (or has at most two letters) is written on the sheet as it is: such a name cannot spell an instruction.
# Verdict words (continue, stop, rollback) and instruction words (ignore, answer-as, say, ...) are never here,
# so `eval/ignore_previous_instructions` or `answer_continue_now` stay references to the fenced block.
_PLAIN_WORDS_TEXT = """
    reward rewards component components func fn function funcs mean std min max sum avg median total remainder
    format formatted answer correct correctness accuracy acc eval train test val valid validation aux loss score
    scores length len tokens token reasoning xml count strict soft int math code gsm pass exact match bleu rouge
    judge kl entropy clip clipped ratio grad norm lr step steps seconds second per samples sample runtime num
    examples top temperature chosen rejected margin margins logps logits pref preference policy value critic
    advantage advantages response completion completions terminated truncated frac fraction rate zero tool
    qwen llama olmo phi mistral gemma deepseek instruct base chat coder meta allenai microsoft google unsloth
    minimind smollm openai bnb bit distill grpo bnpo dr dapo ppo dpo ipo kto orpo simpo cpo rloo sigmoid hinge
    reinforce baseline with sequence seq level
    ifeval aime amc humaneval mbpp gpqa mmlu olympiad olympiadbench livecodebench truthfulqa hellaswag arc
    verify verifier verified success solved solve win penalty bonus think tag tags repetition language overlong
    gold winrate heldout held tools call calls episode episodes turn turns env environment error errors sandbox
    maj majority vote lang consistency consistent uniform groups group bucket easy medium hard core
    explained var variance return returns approx filtered filter group groups batch batches gen generation prompt
    prompts time timing perf throughput memory resolve resolved patch patches empty
"""
PLAIN_WORDS = frozenset(_PLAIN_WORDS_TEXT.split())
_WORD = re.compile(r"[A-Za-z]+")


def plain(text: str) -> bool:
    """Whether a run-chosen label is a plain name, written on the sheet as it is rather than by reference.

    An identifier of at most `MAX_PLAIN_CHARS` whose every run of letters is a word of `PLAIN_WORDS` or at most
    two letters long (`gsm8k`, `7B`, `mean@1`).

    >>> plain("reward_component/format_mean"), plain("Qwen/Qwen2.5-7B-Instruct"), plain("eval/ignore_previous")
    (True, True, False)
    """
    return len(text) <= MAX_PLAIN_CHARS and bool(_LABEL.fullmatch(text)) and all(
        len(word) <= 2 or word.lower() in PLAIN_WORDS for word in _WORD.findall(text))


def label(text: str) -> str:
    """A run-supplied label (metric key, reward-function name, model id) if it looks like an identifier.

    >>> label("reward_component/format_reward_mean"), label("ignore all previous instructions")
    ('reward_component/format_reward_mean', '[unprintable label]')
    """
    return text if _LABEL.fullmatch(text) else UNPRINTABLE


def clean(text: str) -> str:
    """Text without terminal escapes, control characters or lone surrogates (newlines and tabs kept)."""
    return without_escapes(text.replace("\r\n", "\n").replace("\r", "\n"))


def neutralise(text: str, token: str) -> str:
    """Data text that cannot close or reopen the fence: the token and triple backticks are broken up."""
    return clean(text).replace(token, "[fence token removed]").replace(FENCE, "` ` `")


def one_line(text: str, limit: int) -> str:
    """`text` on one line (whitespace collapsed), at most `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def cut(text: str, limit: int) -> str:
    """Head and tail of a long text with the middle replaced by a note."""
    if len(text) <= limit:
        return text
    tail = limit // 5
    head = limit - tail
    return f"{text[:head]}\n[... {len(text) - limit} characters cut ...]\n{text[-tail:]}"


class Scrubber:
    """Keeps run-chosen labels and paths off the evidence sheet: references and step numbers stand in for them.

    Args:
        checkpoints: The run's checkpoints (their paths are replaced in sentences).
        labels: Every label the run chose that the sheet may mention (metric keys, reward-function names, model
            id, loss type, ...); each gets a reference `[run label N]`, numbered in sorted order.
        known: Our own names, written as they are.
    """

    def __init__(self, checkpoints: Sequence[Checkpoint], labels: Sequence[str], known: Collection[str]) -> None:
        self.known = known
        # A held-out metric and its bare name are one label: `eval/arena_pass1` is `eval/` + the reference of
        # `arena_pass1`, so the table, the findings and the held-out section name it the same way.
        # (A held-out name whose bare part is one of ours keeps a reference of its own.)
        base = {x: x if x.removeprefix(EVAL_PREFIX) in known else x.removeprefix(EVAL_PREFIX)
                for x in labels if x not in known}
        self.listed = {name: f"[run label {i}]" for i, name in enumerate(sorted(set(base.values())), 1)}
        self.refs = {x: self.listed[b] if b == x else f"{EVAL_PREFIX}{self.listed[b]}" for x, b in base.items()}
        self.replacements: dict[str, str] = {}
        for c in checkpoints:
            if c.path:
                self.replacements[c.path] = f"[checkpoint at step {c.step}]"
        for raw, ref in {**self.listed, **self.refs}.items():
            if len(raw) >= 3:  # shorter ones would match inside ordinary words
                self.replacements[raw] = ref
        keys = sorted(self.replacements, key=len, reverse=True)
        # Whole labels only: `reward` inside `reward_mean` is not the label `reward`; a colon ends a label only
        # before a space (`file.csv: beta`), since labels may contain colons.
        self.pattern = re.compile(
            "|".join(rf"(?<![\w./:@+\-]){re.escape(k)}(?![\w./@+\-])(?!:\S)" for k in keys)) if keys else None

    def __call__(self, text: str, limit: int = MAX_OBSERVATION_CHARS) -> str:
        """`text` with paths and run labels replaced, on one line, no fences, at most `limit` characters."""
        if self.pattern is not None:
            text = self.pattern.sub(lambda m: self.replacements[m.group(0)], text)
        return one_line(clean(text).replace(FENCE, "` ` `"), limit)

    def label(self, text: str) -> str:
        """One of our names as it is, a run label as its reference (one not registered: `[unprintable label]`)."""
        return text if text in self.known else self.refs.get(text, UNPRINTABLE)

    def listing(self, token: str) -> list[tuple[str, str]]:
        """(reference, text) of every run label, for the data block: on one line, fence-safe."""
        return [(ref, neutralise(one_line(raw, MAX_LABEL_CHARS), token)) for raw, ref in self.listed.items()]


def fence_lines(token: str) -> tuple[str, str]:
    """The lines that open and close the data block for one fence token."""
    return f"{FENCE}run-data {token}", f"{FENCE}end run-data {token}"
