"""The rule API.  A rule is one class in one module of the catalog (`rules/` at the top of the
repository, installed as `fp8lint.rules`), plus one page `FP8xxx.md` beside it.  It carries
its code, name, default severity, declared options and its own valid/invalid examples, which
the test suite runs automatically (tests/rules/test_rule_examples.py), Fixit style:

- a `valid` example must produce no finding of the rule;
- an `invalid` example must produce findings at exactly its `lines`; when a finding offers a
  fix that `--fix` would apply (or `--fix --unsafe-fixes`, with `unsafe=True`), the example
  must declare `fixed`, the text the verified fix loop makes of it: the loop must produce
  exactly that, a second run must change nothing, and the fixed text must no longer carry the
  finding.  Declaring `fixed` where no fix applies fails too.

The page's examples are tested the same way (tests/rules/test_pages.py): every code block
under "## Example" must be flagged by the page's rule, every block under "## Use instead"
must not be.  The fence's info string gives the file kind by its language (`yaml`, `json`,
`toml`, `python`, `bash`/`sh`) and optionally the file name and the fix:

    ```yaml title="model_config.yaml"       the block is linted as a file of that name
    ```yaml fix="safe"                      (Use instead) exactly what `--fix` makes of the
                                            Example block at the same position;
                                            fix="unsafe": with `--unsafe-fixes`

The severity line under each page's title and the README's rule table are generated from the
class attributes below (`python scripts/gen_docs.py`); a test fails when they drift.

Rules see only `Fp8Site` records (never a file format) and yield `Finding`s.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from fp8lint.diagnostics import Applicability, Severity
from fp8lint.model import (
    FixOp,
    FixPlan,
    Fp8Site,
    RemoveEntry,
    RenameKey,
    Setting,
    SetValue,
    Span,
)
from fp8lint.settings import TARGETS_OPTION, Targets

__all__ = [
    "Example",
    "Finding",
    "FixOp",
    "FixPlan",
    "Option",
    "RemoveEntry",
    "RenameKey",
    "Rule",
    "SetValue",
    "amax_over",
    "converted_by",
    "enabled_related",
    "explain",
    "pow2",
    "targets",
    "term",
    "where",
]


@dataclass(frozen=True)
class Option:
    """A rule option, declared so that configuration can be validated against it."""

    name: str
    type: type
    default: Any
    help: str


@dataclass(frozen=True)
class Example:
    """A config a rule must accept (valid) or flag (invalid: at `lines`).

    `fixed` is what the fix loop makes of an invalid example whose finding has a fix that
    `--fix` applies, or `--fix --unsafe-fixes` when `unsafe` is true: required exactly when
    such a fix exists, so that every fix the catalog offers is pinned to its output.
    """

    filename: str
    text: str
    lines: tuple[int, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    fixed: str | None = None
    unsafe: bool = False


@dataclass(frozen=True)
class Finding:
    span: Span
    message: str
    severity: Severity | None = None  # None: the rule's default
    related: tuple[tuple[Span, str], ...] = ()
    headroom_binades: float | None = None
    fix: FixPlan | None = None
    key: str = ""  # stable identity (config key / flag / call); default: the source line
    # the why, in one short line (the full text format's `= note:`); `message` stays one
    # short line saying what is wrong and naming the key
    note: str = ""


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    # findings of another severity than `severity`, and when, for the docs: "warning with
    # delayed scaling" renders as "info (warning with delayed scaling)"
    severity_note: ClassVar[str] = ""
    # the applicability of the fix the rule's findings usually offer (None: no fix).  A fix
    # may still be demoted for one finding (to advice: a value shared through an anchor);
    # the docs and the page's "Fix safety" section state this one, and the tests hold the
    # examples to it
    fix: ClassVar[Applicability | None] = None
    default_enabled: ClassVar[bool] = True
    options: ClassVar[tuple[Option, ...]] = ()
    valid: ClassVar[tuple[Example, ...]] = ()
    invalid: ClassVar[tuple[Example, ...]] = ()
    # whether the rule reads records of files no known family claims (framework
    # UNIDENTIFIED); the engine runs no other rule on them, so no rule and no fix touches
    # keys whose meaning is not known
    reads_unidentified: ClassVar[bool] = False

    def check(self, site: Fp8Site, options: Mapping[str, Any]) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        return {o.name: o.default for o in cls.options}


# -- helpers shared by rules ------------------------------------------------------------


def targets(options: Mapping[str, Any]) -> Targets:
    """The framework versions the run assumes (`target-versions`; the defaults outside a run,
    as in a rule's own examples)."""
    found = options.get(TARGETS_OPTION)
    return found if isinstance(found, Targets) else Targets()


def where(setting: Setting[Any], site: Fp8Site) -> Span:
    """The span a finding about `setting` points at: where it is written, or the FP8 switch."""
    if setting.written and setting.span is not None:
        return setting.span
    return site.anchor()


def explain(setting: Setting[Any], shown: str | None = None) -> str:
    """`value (key)` / `value (who's default, no key given)`: the long form, for notes."""
    value = shown if shown is not None else _plain(setting.value)
    return f"{value} ({setting.describe()}{_shared(setting)})"


def short_key(key: str, limit: int = 40) -> str:
    """A key short enough for a one-line message: a long dotted path keeps its last two parts
    (`…overrides.sequence_parallel`); the span and the note's full form say where it is."""
    if len(key) <= limit or "." not in key:
        return key
    return "…" + ".".join(key.split(".")[-2:])


def term(setting: Setting[Any], shown: str | None = None) -> str:
    """A setting for a one-line message: the key and its value, `` `--fp8-margin` 0 ``;
    `(default)` when it was not written, and where a shared value is defined."""
    value = shown if shown is not None else _plain(setting.value)
    key = short_key(setting.key) if setting.key else setting.key
    if setting.provenance == "default":
        return f"`{key}` {value} (default)" if key else f"{value} (default)"
    if setting.provenance == "preset":
        return f"{value} (preset `{key}`)" if key else f"{value} (preset)"
    named = f"`{key}` {value}" if key else value
    return named + (f" ({_shared(setting)[2:]})" if _shared(setting) else "")


def _shared(setting: Setting[Any]) -> str:
    """`, via alias `*h` at line 5`: where a value read through a YAML alias, a `<<` merge
    or an interpolation is defined (empty when it is written where it is read)."""
    if not (setting.written and setting.via):
        return ""
    at, note = setting.via[-1], setting.note or ""
    if note.startswith("via "):
        return f", {note} defined at line {at.line}"
    if note.startswith("merged"):
        return f", merged in with `<<` from line {at.line}"
    if note.startswith("set through"):  # a shell variable, assigned at `at`
        return f", {note} assigned at line {at.line}"
    if setting.span is not None and at.start_offset == setting.span.start_offset:
        return ", anchored and shared"  # defined here, and read elsewhere through an alias
    return f", from line {at.line}"


def _plain(value: Any) -> str:
    if hasattr(value, "label"):
        return str(value.label)
    if hasattr(value, "value"):
        return str(value.value)
    return str(value)


def enabled_related(site: Fp8Site, setting: Setting[Any]) -> tuple[tuple[Span, str], ...]:
    """Point at the line that enabled FP8 when the finding is about a default."""
    if not setting.written and site.enable_span is not None:
        return ((site.enable_span, "FP8 is enabled here"),)
    return ()


def converted_by(setting: Setting[Any]) -> str:
    """What leaves a module in FP8, for a message: the filter key that does not exclude it
    (written, or its default), the code that converts it, or just "converted"."""
    if not setting.key:
        return "converted"
    if "filter" not in setting.key.lower():
        return f"`{setting.key}`"  # e.g. a TE Linear assigned as the head
    return f"not excluded by {'' if setting.written else 'the default '}`{setting.key}`"


def amax_over(margin: int) -> str:
    """ "any amax above" / "an amax over 4x": what clips under `margin` binades of headroom."""
    return "any amax above" if margin == 0 else f"an amax over {pow2(margin)}x"


def pow2(exponent: int) -> str:
    """2^exponent for a message: digits while short, `2^n` once they would not be."""
    if -16 <= exponent <= 40:
        return f"{2.0**exponent:g}"
    return f"2^{exponent}"


# the severity policy's line between a short run and a pre-training one
# (../shared/reference/fp8-evidence.md, FP8-DS-ZERO-HEADROOM: info under ~10k steps)
SHORT_RUN_STEPS = 10_000


def short_run(site: Fp8Site) -> str | None:
    """Why the run is known to be short (a fine-tune, or fewer than `SHORT_RUN_STEPS`
    planned steps), in words for a note; None when it is long or its length is unknown."""
    if site.fine_tune.value is True:
        return f"a fine-tune ({term(site.fine_tune)})"
    steps = _count(site.train_steps.value)
    if steps is not None and steps < SHORT_RUN_STEPS:
        return f"a short run ({term(site.train_steps)})"
    return None


def _count(value: object) -> int | None:
    """A positive integer read from a file (never a bool), or None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


# Fishman et al. 2024: per-tensor FP8 on SwiGLU diverged after about 2x10^11 tokens
LONG_RUN_TOKENS = 2 * 10**11


def planned_tokens(site: Fp8Site) -> int | None:
    """Steps x global batch x sequence length, when all three are written or known."""
    steps = _count(site.train_steps.value)
    batch = _count(site.global_batch_size.value)
    seq = _count(site.seq_length.value)
    return steps * batch * seq if steps and batch and seq else None


# the NVFP4 pre-training recipe's own scale (arXiv 2509.25149: 12B on 10T tokens diverged
# without its techniques; fp4-evidence §6): from here a planned run is "long"
LONG_PRETRAINING_TOKENS = 10**11


def min_tokens_option() -> Option:
    """The `min-tokens` option of the rules whose finding is a warning only on a long run."""
    return Option(
        "min-tokens",
        int,
        LONG_PRETRAINING_TOKENS,
        "planned tokens (steps x global batch x sequence) from which a run is long",
    )


def long_fp4_pretraining(site: Fp8Site, options: Mapping[str, Any]) -> bool:
    """Whether `site` is known to be a long pre-training run with an FP4 backward: planned
    tokens at least `min-tokens`, not a fine-tune, and no backward override (one written but
    unreadable may be one)."""
    override = site.backward_override
    if site.fine_tune.value is True or override.value or (override.written and not override.known):
        return False
    tokens = planned_tokens(site)
    return tokens is not None and tokens >= int(options.get("min-tokens", LONG_PRETRAINING_TOKENS))


# GPU names a file may write, by the compute capability TE's recipe gates test
# (`pytorch/quantization.py` L150-212 at NVIDIA/TransformerEngine@d0067d0da: MXFP8 and NVFP4
# need SM 10.x; SM 12.x is refused for MXFP8 and not listed for NVFP4 training)
_GPU_SM: tuple[tuple[tuple[str, ...], str], ...] = (
    (("gb10", "rtx5090", "rtx5080", "rtxpro6000", "sm120", "sm121", "sm_120", "sm_121"), "sm120"),
    (("b200", "b300", "gb200", "gb300", "b100", "sm100", "sm103", "sm_100", "sm_103"), "sm100"),
    (("h100", "h200", "h800", "h20", "gh200", "sm90", "sm_90"), "sm90"),
    (("l40", "l4", "rtx4090", "sm89", "sm_89"), "sm89"),
    (("a100", "a800", "a10", "a30", "sm80", "sm_80"), "sm80"),
)


def gpu_sm(site: Fp8Site) -> str | None:
    """The compute-capability family (`sm80`, `sm89`, `sm90`, `sm100`, `sm120`) of the GPU the
    file names, or None when it names none or one not listed here (never guessed)."""
    if not site.gpu.known or not site.gpu.value:
        return None
    name = "".join(ch for ch in site.gpu.value.lower() if ch.isalnum() or ch == "_")
    name = name.removeprefix("nvidia")
    for names, sm in _GPU_SM:
        if name in names:
            return sm
    return None
