"""MaxText command lines: `python3 -m MaxText.train MaxText/configs/base.yml key=value ...`
(also `maxtext.trainers.pre_train.train` and `MaxText/train.py`), where every argument after
the config file is a `key=value` override of it.

Only the syntax lives here: the overrides become `Arg`s keyed by their MaxText name and
`maxtext.site_from_args` builds the site, with the one table of `quantization` modes (what each
mode trains with, and its sources, are in `maxtext`).  No fix is offered: MaxText has no
recipe knobs to write.
"""

from __future__ import annotations

import os
import re

from fp8lint.documents.shell import Script, Word
from fp8lint.documents.text import SourceFile
from fp8lint.frameworks.maxtext import config as maxtext
from fp8lint.frameworks.shared.base import Arg
from fp8lint.frameworks.shared.shell_args import word_value
from fp8lint.model import Fp8Site

ENTRY = re.compile(
    r"(^|[./])(MaxText|maxtext)([./][\w.]*)?[./]train(\.py)?$|(^|/)MaxText/train\.py$"
)
OVERRIDE = re.compile(r"(?P<key>[A-Za-z_][A-Za-z0-9_.]*)=(?P<value>.*)", re.DOTALL)


def _entry(command: list[Word]) -> int | None:
    for i, word in enumerate(command):
        if ENTRY.search(word.text):
            return i
    return None


def _overrides(file: SourceFile, words: list[Word]) -> dict[str, Arg]:
    """`key=value` words as `Arg`s; the value span is exact when the word is written as is."""
    out: dict[str, Arg] = {}
    for w in words:
        m = OVERRIDE.fullmatch(w.text)
        if m is None:
            continue
        key, value = m.group("key"), m.group("value")
        span = file.span_of_indices(w.start, w.end)
        exact = file.text[w.start : w.end] == w.text
        value_span = file.span_of_indices(w.start + m.start("value"), w.end) if exact else span
        known = w.known and "$" not in value
        out[key] = Arg(
            key=key,
            value=word_value(Word(value, w.start, w.end)) if known else None,
            span=span,
            value_span=value_span,
            known=known,
            raw=value,
        )
    return out


def from_command(file: SourceFile, command: list[Word], script: Script) -> list[Fp8Site] | None:
    """A MaxText training command: a site when its `quantization=` asks for FP8 (or cannot be
    read); claimed but siteless when it trains without FP8."""
    idx = _entry(command)
    if idx is None:
        return None
    args = _overrides(file, command[idx + 1 :])
    first, last = command[0], command[-1]
    span = file.span_of_indices(first.start, max(last.end, first.end))
    kind = f"MaxText command line (`{os.path.basename(command[idx].text)}`)"
    site = maxtext.site_from_args(file.path, args, span, kind)
    return [site] if site is not None else []
