"""Property tests for the autofix: generated configs in every format, valid and risky, with
random comments, blank lines, indentation, quoting and line endings.

What must hold for any input: `fix_text` does not raise; a failed fix returns the input
unchanged; a successful fix parses, settles (fixing twice = fixing once), never adds a
finding and removes at least one finding of every code it claims to have fixed; one round
of edits leaves every byte outside the edit spans as it was; CRLF files stay CRLF.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fp8lint.diagnostics import Diagnostic, TextEdit
from fp8lint.engine import fix_text, lint_text
from fp8lint.fixes import apply_edits
from fp8lint.settings import RunSettings

SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


@dataclass(frozen=True)
class Case:
    path: str
    kind: str
    text: str

    def __repr__(self) -> str:  # readable in hypothesis' falsifying-example output
        return f"Case({self.path!r}, {self.kind!r}, {self.text!r})"


# --------------------------------------------------------------------------- building blocks

_comment_words = st.sampled_from(["fp8 run", "tuned", "see #123", "TODO", "x: y", "", "é ok"])
comment = _comment_words.map(lambda w: f"# {w}".rstrip())
maybe_trailing = st.one_of(st.just(""), _comment_words.map(lambda w: f"  # {w}".rstrip()))


def _finish(text: str, crlf: bool, final_newline: bool) -> str:
    if not final_newline:
        text = text.rstrip("\n")
    if crlf:
        text = text.replace("\n", "\r\n")
    return text


def _quoted(draw: st.DrawFn, word: str) -> str:
    q = draw(st.sampled_from(["", "", "'", '"']))
    return f"{q}{word}{q}"


@st.composite
def _layout(draw: st.DrawFn) -> tuple[bool, bool]:
    """(CRLF for the whole file, final newline present)."""
    return draw(st.booleans()), draw(st.booleans())


# --------------------------------------------------------------------------- 1. Megatron YAML


@st.composite
def megatron_yaml(draw: st.DrawFn) -> Case:
    algo = st.sampled_from(["max", "most_recent"])
    flags = {
        "--fp8-format": st.sampled_from(["hybrid", "e4m3"]).map(lambda v: ("s", v)),
        "--fp8-margin": st.integers(-2, 6).map(lambda v: ("i", str(v))),
        "--fp8-amax-history-len": st.integers(1, 2048).map(lambda v: ("i", str(v))),
        "--fp8-amax-compute-algo": algo.map(lambda v: ("s", v)),
        "--fp8-interval": st.integers(1, 4).map(lambda v: ("i", str(v))),
        "--tensor-model-parallel-size": st.sampled_from([1, 2, 4, 8]).map(lambda v: ("i", str(v))),
        "--sequence-parallel": st.just(("b", "true")),
        "--fp8-recipe": st.sampled_from(["delayed", "tensorwise"]).map(lambda v: ("s", v)),
        "--first-last-layers-bf16": st.just(("b", "true")),
        "--hidden-size": st.just(("i", "4096")),
        "--num-layers": st.sampled_from(["12", "24"]).map(lambda v: ("i", v)),
        "--bf16": st.just(("b", "true")),
    }
    names = draw(st.permutations(list(flags)))
    chosen = [n for n in names if draw(st.booleans())]
    if "--fp8-format" not in chosen and draw(st.integers(0, 3)) > 0:
        chosen.insert(draw(st.integers(0, len(chosen))), "--fp8-format")
    indent = " " * draw(st.sampled_from([2, 4]))
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(draw(comment))
    if draw(st.integers(0, 4)) == 0:
        lines.append("---")
    if draw(st.booleans()):
        lines += ["ENV_VARS:", f"{indent}CUDA_DEVICE_MAX_CONNECTIONS: 1"]
    lines.append("MODEL_ARGS:" + draw(maybe_trailing))
    for name in chosen:
        typ, value = draw(flags[name])
        if typ == "s":
            value = _quoted(draw, value)
        if draw(st.integers(0, 5)) == 0:
            lines.append("")
        if draw(st.integers(0, 5)) == 0:
            lines.append(indent + draw(comment))
        lines.append(f"{indent}{name}: {value}{draw(maybe_trailing)}")
    if draw(st.booleans()):
        lines.append("TEST_TYPE: regular")
    crlf, final = draw(_layout())
    return Case("model_config.yaml", "yaml", _finish("\n".join(lines) + "\n", crlf, final))


# --------------------------------------------------------------------------- 2. NeMo 1.x YAML


@st.composite
def nemo1_yaml(draw: st.DrawFn) -> Case:
    cap = draw(st.booleans())

    def b(v: bool) -> str:
        s = "true" if v else "false"
        return s.capitalize() if cap else s

    fmt = draw(st.sampled_from(["e4m3", "hybrid", "both", "neither"]))
    entries: dict[str, st.SearchStrategy[str]] = {
        "transformer_engine": st.just(b(True)),
        "fp8": st.just(b(True)),
        "fp8_margin": st.integers(-2, 6).map(str),
        "fp8_amax_history_len": st.integers(1, 2048).map(str),
        "fp8_amax_compute_algo": st.sampled_from(["max", "most_recent"]),
        "mcore_gpt": st.booleans().map(b),
        "reduce_amax": st.booleans().map(b),
        "tensor_model_parallel_size": st.sampled_from(["1", "2", "4", "8"]),
        "sequence_parallel": st.booleans().map(b),
        "hidden_size": st.just("4096"),
    }
    if fmt in ("e4m3", "both"):
        entries["fp8_e4m3"] = st.just(b(True))
    elif draw(st.booleans()):
        entries["fp8_e4m3"] = st.just(b(False))
    if fmt in ("hybrid", "both"):
        entries["fp8_hybrid"] = st.just(b(True))
    elif draw(st.booleans()):
        entries["fp8_hybrid"] = st.just(b(False))
    must = {"transformer_engine", "fp8"}
    names = draw(st.permutations(list(entries)))
    chosen = [n for n in names if n in must or draw(st.booleans())]
    values = {}
    anchors: list[str] = []  # values defined once elsewhere and referred to with an alias
    for n in chosen:
        v = draw(entries[n])
        if n == "fp8_amax_compute_algo":
            v = _quoted(draw, v)
        if n in ("fp8_margin", "fp8_amax_history_len") and draw(st.integers(0, 3)) == 0:
            anchors.append(f"  {n[4:]}: &{n} {v}")
            v = f"*{n}"
        values[n] = v
    flow = draw(st.integers(0, 3)) == 0
    if not flow and draw(st.booleans()):  # a nested block inside `model:`
        at = draw(st.integers(0, len(values)))
        items = list(values.items())
        items.insert(at, ("optim", "\n{indent}  name: fused_adam\n{indent}  lr: 1e-4"))
        values = dict(items)
    lines: list[str] = []
    if draw(st.booleans()):
        lines.append(draw(comment))
    lines += ["name: megatron_gpt", "trainer:", "  devices: 8"]
    if anchors:
        lines += ["common:", *anchors]
    if flow:
        inner = ", ".join(f"{k}: {v}" for k, v in values.items())
        lines.append(f"model: {{{inner}}}" + draw(maybe_trailing))
    else:
        indent = " " * draw(st.sampled_from([2, 4]))
        lines.append("model:" + draw(maybe_trailing))
        for k, v in values.items():
            if draw(st.integers(0, 5)) == 0:
                lines.append("")
            if draw(st.integers(0, 5)) == 0:
                lines.append(indent + draw(comment))
            if k == "optim":
                lines.append(f"{indent}optim:" + v.format(indent=indent))
            else:
                lines.append(f"{indent}{k}: {v}{draw(maybe_trailing)}")
    if draw(st.booleans()):
        lines += ["exp_manager:", "  explicit_log_dir: null"]
    crlf, final = draw(_layout())
    return Case("megatron_gpt_config.yaml", "yaml", _finish("\n".join(lines) + "\n", crlf, final))


# --------------------------------------------------------------------------- 3. Accelerate JSON


@st.composite
def accelerate_json(draw: st.DrawFn) -> Case:
    options: dict[str, st.SearchStrategy[tuple[str, object]]] = {
        "backend": st.just(("backend", "TE")),
        "fmt": st.sampled_from(["HYBRID", "E4M3"]).map(lambda v: ("fp8_format", v)),
        "hist": st.tuples(
            st.sampled_from(["amax_history_len", "amax_history_length"]), st.integers(1, 2048)
        ),
        "algo": st.tuples(
            st.sampled_from(["amax_compute_algo", "amax_compute_algorithm"]),
            st.sampled_from(["max", "most_recent"]),
        ),
        "margin": st.integers(-2, 6).map(lambda v: ("margin", v)),
        "interval": st.integers(1, 4).map(lambda v: ("interval", v)),
    }
    names = draw(st.permutations(list(options)))
    chosen = [n for n in names if n == "backend" or draw(st.booleans())]
    fp8_config = dict(draw(options[n]) for n in chosen)
    top: dict[str, object] = {}
    if draw(st.booleans()):
        top["compute_environment"] = "LOCAL_MACHINE"
    top["mixed_precision"] = "fp8"
    top["fp8_config"] = fp8_config
    if draw(st.booleans()):
        top["num_processes"] = 8
    indent = draw(st.sampled_from([None, 0, 2, 4]))
    text = json.dumps(top, indent=indent)
    crlf, final = draw(_layout())
    return Case("accelerate_config.json", "json", _finish(text + "\n", crlf, final))


# --------------------------------------------------------------------------- 4. Python


def _call(draw: st.DrawFn, name: str, kwargs: list[str]) -> str:
    if not kwargs:
        return f"{name}()"
    if draw(st.booleans()):
        return f"{name}(" + ", ".join(kwargs) + ")"
    indent = " " * draw(st.sampled_from([4, 8]))
    trailing = draw(st.booleans())
    rows = []
    for i, k in enumerate(kwargs):
        comma = "," if i < len(kwargs) - 1 or trailing else ""
        rows.append(f"{indent}{k}{comma}{draw(maybe_trailing)}")
    return f"{name}(\n" + "\n".join(rows) + "\n)"


@st.composite
def te_python(draw: st.DrawFn) -> Case:
    q = draw(st.sampled_from(["'", '"']))
    options = {
        "margin": st.integers(-2, 6).map(lambda v: f"margin={v}"),
        "amax_history_len": st.integers(1, 2048).map(lambda v: f"amax_history_len={v}"),
        "amax_compute_algo": st.sampled_from(["max", "most_recent"]).map(
            lambda v: f"amax_compute_algo={q}{v}{q}"
        ),
        "fp8_format": st.sampled_from(["HYBRID", "E4M3"]).map(lambda v: f"fp8_format=Format.{v}"),
        "interval": st.integers(1, 4).map(lambda v: f"interval={v}"),
    }
    names = draw(st.permutations(list(options)))
    empty = draw(st.integers(0, 5)) == 0
    kwargs = [] if empty else [draw(options[n]) for n in names if draw(st.booleans())]
    constants = []  # some values through a module-level name (a shared definition)
    for i, kw in enumerate(kwargs):
        key, _, value = kw.partition("=")
        if key in ("margin", "amax_history_len") and draw(st.integers(0, 3)) == 0:
            constants.append(f"{key.upper()} = {value}")
            kwargs[i] = f"{key}={key.upper()}"
    lines = []
    if draw(st.booleans()):
        lines.append(draw(comment))
    lines.append("from transformer_engine.common.recipe import DelayedScaling, Format")
    lines += constants
    if draw(st.booleans()):
        lines.append("")
    lines.append("r = " + _call(draw, "DelayedScaling", kwargs) + draw(maybe_trailing))
    crlf, final = draw(_layout())
    return Case("recipe.py", "python", _finish("\n".join(lines) + "\n", crlf, final))


@st.composite
def nemo2_python(draw: st.DrawFn) -> Case:
    q = draw(st.sampled_from(["'", '"']))
    kwargs = [f"precision={q}bf16-mixed{q}", f"fp8={q}hybrid{q}"]
    if draw(st.booleans()):
        kwargs.append(f"fp8_recipe={q}{draw(st.sampled_from(['tensorwise', 'delayed']))}{q}")
    if draw(st.booleans()):
        kwargs.append("first_last_layers_bf16=True")
    for key in ("num_layers_at_start_in_bf16", "num_layers_at_end_in_bf16"):
        if draw(st.booleans()):
            kwargs.append(f"{key}={draw(st.integers(0, 2))}")
    if draw(st.booleans()):
        kwargs.append(f"fp8_margin={draw(st.integers(-2, 6))}")
    if draw(st.booleans()):
        kwargs.append(f"fp8_amax_history_len={draw(st.integers(1, 2048))}")
    kwargs = list(draw(st.permutations(kwargs)))
    lines = ["from nemo.lightning.pytorch.plugins import MegatronMixedPrecision"]
    if draw(st.booleans()):
        lines.append("")
    lines.append("plugin = " + _call(draw, "MegatronMixedPrecision", kwargs))
    crlf, final = draw(_layout())
    return Case("precision.py", "python", _finish("\n".join(lines) + "\n", crlf, final))


any_config = st.one_of(
    megatron_yaml(), nemo1_yaml(), accelerate_json(), te_python(), nemo2_python()
)


# --------------------------------------------------------------------------- helpers


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]


def _pos(text: str, index: int) -> tuple[int, int]:
    starts = _line_starts(text)
    line = max(i for i, s in enumerate(starts) if s <= index)
    return line + 1, index - starts[line] + 1


def _overlap(a: TextEdit, b: TextEdit) -> bool:
    if a.start == a.end == b.start == b.end:
        return True
    return a.start < b.end and b.start < a.end


def first_round(diags: list[Diagnostic], unsafe: bool) -> list[TextEdit]:
    """The edits one round of the fix loop applies: applicable fixes in report order, each
    taken only when none of its edits overlaps an edit already taken."""
    taken: list[TextEdit] = []
    for d in diags:
        if d.fix is None or not d.fix.applies(unsafe):
            continue
        assert d.fix is not None
        if any(_overlap(e, t) for e in d.fix.edits for t in taken):
            continue
        taken.extend(d.fix.edits)
    return sorted(taken, key=lambda e: (e.start, e.end))


def codes(case: Case, text: str) -> Counter[str]:
    diags, _ = lint_text(case.path, text, case.kind, RunSettings())
    return Counter(d.code for d in diags)


unsafe_flag = st.booleans()


# --------------------------------------------------------------------------- properties


@SETTINGS
@given(case=any_config, unsafe=unsafe_flag)
def test_fix_is_idempotent_and_parses(case: Case, unsafe: bool) -> None:
    result = fix_text(case.path, case.text, case.kind, RunSettings(), unsafe)
    if result.failure is not None:
        assert result.text == case.text
        assert result.fixed == []
        return
    if result.text == case.text:
        assert result.fixed == []
        return
    assert result.fixed, "the text changed but no finding is reported fixed"
    after = codes(case, result.text)
    assert after["FP8001"] == 0, result.text
    again = fix_text(case.path, result.text, case.kind, RunSettings(), unsafe)
    assert again.failure is None, again.failure
    assert again.text == result.text
    assert again.fixed == []


@SETTINGS
@given(case=any_config, unsafe=unsafe_flag)
def test_one_round_touches_only_the_edit_spans(case: Case, unsafe: bool) -> None:
    text = case.text
    diags, _ = lint_text(case.path, text, case.kind, RunSettings())
    for d in diags:  # every concrete edit is in bounds and its line/column match its index
        for e in d.fix.edits if d.fix else ():
            assert 0 <= e.start <= e.end <= len(text), e
            assert (e.line, e.column) == _pos(text, e.start), e
            assert (e.end_line, e.end_column) == _pos(text, e.end), e
    edits = first_round(diags, unsafe)
    new = apply_edits(text, edits)
    last = at = 0
    for e in edits:
        keep = text[last : e.start]
        assert new[at : at + len(keep)] == keep
        at += len(keep)
        assert new[at : at + len(e.content)] == e.content
        at += len(e.content)
        last = e.end
    assert new[at:] == text[last:]
    assert len(new) == len(text) + sum(len(e.content) - (e.end - e.start) for e in edits)


@SETTINGS
@given(case=any_config, unsafe=unsafe_flag)
def test_fix_never_adds_findings_and_removes_what_it_fixed(case: Case, unsafe: bool) -> None:
    result = fix_text(case.path, case.text, case.kind, RunSettings(), unsafe)
    if result.failure is not None or result.text == case.text:
        return
    before, after = codes(case, case.text), codes(case, result.text)
    grown = {c: (before[c], n) for c, n in after.items() if n > before[c]}
    assert not grown, grown
    for code in {d.code for d in result.fixed}:
        assert after[code] < before[code], (code, before[code], after[code])
    # `remaining` is what the fixed text reports
    assert Counter(d.code for d in result.remaining) == after


@SETTINGS
@given(case=any_config, unsafe=unsafe_flag)
def test_line_endings_survive(case: Case, unsafe: bool) -> None:
    result = fix_text(case.path, case.text, case.kind, RunSettings(), unsafe)
    if "\r\n" in case.text and re.search(r"(?<!\r)\n", case.text) is None:
        assert re.search(r"(?<!\r)\n", result.text) is None, result.text
        assert "\r\r" not in result.text.replace("\r\r\n", "")  # no doubled CR either
    if "\r" not in case.text:
        assert "\r" not in result.text


@SETTINGS
@given(case=any_config)
def test_unsafe_mode_fixes_at_least_as_much_as_safe(case: Case) -> None:
    """`--unsafe-fixes` only widens the set of fixes: with no unsafe fix offered anywhere,
    both modes give the same text."""
    diags, _ = lint_text(case.path, case.text, case.kind, RunSettings())
    safe = fix_text(case.path, case.text, case.kind, RunSettings(), False)
    wide = fix_text(case.path, case.text, case.kind, RunSettings(), True)
    if not any(d.fix and d.fix.applies(True) and not d.fix.applies(False) for d in diags):
        assert (safe.text, safe.failure) == (wide.text, wide.failure)


# --------------------------------------------------------------------------- fixed examples


def test_strategies_reach_fixable_findings() -> None:
    """The generators are worth something only if they produce fixable input: a few
    hand-picked members of each family do get fixed."""
    cases = [
        Case(
            "m.yaml",
            "yaml",
            "MODEL_ARGS:\r\n  --tensor-model-parallel-size: 2\r\n  --fp8-format: hybrid  # x",
        ),
        Case(
            "n.yaml",
            "yaml",
            "model:\n  transformer_engine: True\n  fp8: True\n  fp8_e4m3: True\n"
            "  fp8_hybrid: False\n",
        ),
        Case(
            "r.py",
            "python",
            "from transformer_engine.common.recipe import DelayedScaling, Format\n"
            "r = DelayedScaling(\n    margin=-1,\n    amax_compute_algo='most_recent',\n)\n",
        ),
        Case(
            "p.py",
            "python",
            "from nemo.lightning.pytorch.plugins import MegatronMixedPrecision\n"
            'p = MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid", '
            'fp8_recipe="tensorwise", first_last_layers_bf16=True, '
            "num_layers_at_start_in_bf16=0)\n",
        ),
    ]
    for case in cases:  # every one of these fixes changes numerics: unsafe
        result = fix_text(case.path, case.text, case.kind, RunSettings(), True)
        assert result.failure is None, (case, result.failure)
        assert result.fixed and result.text != case.text, case
    crlf = fix_text(cases[0].path, cases[0].text, "yaml", RunSettings(), True).text
    assert crlf == (
        "MODEL_ARGS:\r\n  --tensor-model-parallel-size: 2\r\n  --fp8-format: hybrid  # x"
        "\r\n  --fp8-amax-history-len: 1024\r\n  --fp8-amax-compute-algo: max"
    )
