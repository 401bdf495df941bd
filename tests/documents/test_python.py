"""Python documents: the scan that bounds what reaches libcst, parse errors, pruning, spans,
literals, names however imported, and the minimal edit of a transformation."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
import zlib
from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fp8lint.documents import python as py
from fp8lint.documents.text import ParseError, SourceFile
from fp8lint.engine import parse_file
from fp8lint.frameworks import python_sites
from fp8lint.model import Recipe

RECIPE = "from transformer_engine.common.recipe import DelayedScaling\n"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "real"


def parse(src: str, relevant: re.Pattern[str] | None = None) -> py.PyModule:
    return py.deep(lambda: py.parse(SourceFile("m.py", src), relevant))


def error(src: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(src)
    return info.value


# -- the scan: nesting bounds ---------------------------------------------------------------


def test_brackets_nest_up_to_cpythons_limit() -> None:
    ok = "x = " + "(" * 200 + "1" + ")" * 200 + "\n"
    parse(ok)
    deep = "y = 1\nx = " + "[" * 201 + "]" * 201 + "\n"
    err = error(deep)
    assert err.message == "nesting too deep to read"
    assert (err.line, err.column) == (2, 5 + 200)  # at the bracket past the limit


def test_brackets_inside_strings_and_comments_do_not_count() -> None:
    src = "x = '" + "(" * 300 + "'  # " + "[" * 300 + "\ny = '''\n" + "{" * 300 + "\n'''\n"
    assert py.scan(src).broken is False
    parse(src)


def test_brackets_inside_an_f_string_count() -> None:
    src = "x = f'{" + "(" * 250 + "1" + ")" * 250 + "}'\n"
    assert error(src).message == "nesting too deep to read"


def test_operator_chains_are_bounded() -> None:
    parse("x = " + "-" * 900 + "1\n")  # legal, and within the bound
    err = error("a = 1\nx = " + "-" * 1001 + "1\n")
    assert err.message == "nesting too deep to read" and err.line == 2
    assert error("x = a" + ".b" * 1001 + "\n").message == "nesting too deep to read"
    assert error("x = f" + "()" * 1001 + "\n").message == "nesting too deep to read"
    # commas end a chain: a long flat list is no chain
    parse("x = [" + ", ".join(["-1"] * 3000) + "]\n")


def test_boolean_chains_have_their_own_bound() -> None:
    parse("y = " + "1 and " * 8000 + "1\n")
    assert error("y = " + "1 or " * 10_001 + "1\n").message == "nesting too deep to read"


def test_nested_indentation_beyond_pythons_limit() -> None:
    src = "x = 1\n" + "".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass\n"
    assert error(src).message == "nesting too deep to read"


def test_legal_deep_indentation_is_read_on_any_calling_thread(tmp_path: Path) -> None:
    """libcst's parser needs megabytes of stack for 99 nested blocks: `deep` gives it its
    own thread, so a caller on a small stack does not crash (run in a child: a crash would
    take the test run with it)."""
    body = "".join(" " * i + "if x:\n" for i in range(99)) + " " * 99 + "r = DelayedScaling()\n"
    script = textwrap.dedent(f"""\
        import threading
        from fp8lint.documents.text import SourceFile
        from fp8lint.engine import parse_file
        out = []
        def work():
            out.append(len(parse_file(SourceFile("m.py", {RECIPE + body!r}), "python")))
        threading.stack_size(512 * 1024)
        t = threading.Thread(target=work)
        t.start()
        t.join()
        print(out)
        """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[1]"


def test_one_deep_thread_serves_every_parse() -> None:
    """A thread per file left a malloc arena behind per file, and a worker's memory grew
    with the files it parsed: every `deep` call of a process runs on one thread."""
    import threading

    seen = {py.deep(threading.get_ident) for _ in range(5)}
    assert len(seen) == 1 and threading.get_ident() not in seen


def test_a_caller_that_stops_waiting_abandons_the_deep_thread() -> None:
    """A file's time limit (or Ctrl-C) interrupts the wait, not the work: the next call must
    not receive the abandoned work's result, so it gets a new thread."""
    import threading
    import time

    release = threading.Event()

    def slow() -> str:
        release.wait(120)  # set in `finally`: the wait ends as soon as the test does
        return "stale"

    class Stop(BaseException):
        pass

    def interrupt_soon() -> None:
        time.sleep(0.2)
        import signal

        signal.pthread_kill(main, signal.SIGUSR1)

    import signal

    main = threading.get_ident()
    previous = signal.signal(signal.SIGUSR1, lambda *_: (_ for _ in ()).throw(Stop()))
    try:
        first = py.deep(threading.get_ident)
        threading.Thread(target=interrupt_soon).start()
        with pytest.raises(Stop):
            py.deep(slow)
    finally:
        signal.signal(signal.SIGUSR1, previous)
        release.set()
    assert py.deep(lambda: "fresh") == "fresh"
    assert py.deep(threading.get_ident) != first


# -- parse errors ----------------------------------------------------------------------------


def test_null_byte_is_an_error_at_its_position() -> None:
    err = error("x = 1\ny = '\x00'\n")
    assert "null byte" in err.message
    assert (err.line, err.column) == (2, 6)


@pytest.mark.parametrize(
    ("src", "line", "column"),
    [
        ("x = 1\nr = f(margin=1 amax_history_len=2)\n", 2, 14),
        ("a = 1\nb = f(\n", 2, 6),
        ("a = 1\nb = 'abc\n", 2, 5),
        ("a = 1\nb = (1,\n  2]\n", 3, 4),
        ("def f(:\n    pass\n", 1, 7),
    ],
)
def test_syntax_errors_have_a_line_and_column(src: str, line: int, column: int) -> None:
    err = error(src)
    assert err.message.startswith("Python syntax error: ")
    assert (err.line, err.column) == (line, column)


def test_syntax_newer_than_the_interpreter_is_read() -> None:
    # PEP 695 (Python 3.12): libcst's grammar reads it whatever Python runs fp8lint
    src = RECIPE + "type Margin = int\ndef f[T](x: T) -> T:\n    return x\nr = DelayedScaling()\n"
    (site,) = parse_file(SourceFile("m.py", src), "python")
    assert site.recipe.value is Recipe.DELAYED


def test_over_long_input_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(py, "MAX_CHARS", 1000)
    err = error("x = 1\n" * 400)
    assert err.message.startswith("too long to read as Python")
    assert (err.line, err.column) == (1, 1)


# -- pruning ---------------------------------------------------------------------------------

PADDING = textwrap.dedent("""\
    def pad_{i}(a: int = 1) -> int:
        values = [1, 2, 3]
        if a > 2:
            values.append(a)
        return len(values)


    class Pad{i}:
        def __init__(self) -> None:
            self.size_{i} = 4

    """)
PRUNED_SOURCES = [
    # the recipe and its autocast live in a function the padding does not touch
    RECIPE
    + "".join(PADDING.format(i=i) for i in range(3))
    + "import transformer_engine.pytorch as te\n"
    + "def train():\n    r = DelayedScaling(margin=1)\n"
    + "    with te.fp8_autocast(fp8_recipe=r, fp8_group=None):\n        pass\n",
    # a value followed through a name defined by an otherwise unrelated definition
    RECIPE
    + PADDING.format(i=0)
    + "def margin():\n    return 2\n"
    + "MARGIN = 3\nr = DelayedScaling(margin=MARGIN, amax_compute_algo=margin)\n",
    # an attribute set in one class and read as a recipe argument in another
    RECIPE
    + "class Config:\n    def __init__(self):\n        self.history = 16\n"
    + PADDING.format(i=1)
    + "class Model:\n    def recipe(self):\n"
    + "        return DelayedScaling(amax_history_len=self.history)\n",
    # a global set inside a definition that mentions nothing else
    RECIPE
    + "HIST = 16\ndef reset():\n    global HIST\n    HIST = 1\n"
    + "r = DelayedScaling(amax_history_len=HIST)\n",
    # an aliased import used only inside a definition
    RECIPE
    + "from torch.utils.checkpoint import checkpoint as ckpt\n"
    + PADDING.format(i=2)
    + "def forward(block, x):\n    return ckpt(block, x)\n"
    + "r = DelayedScaling()\n",
    # torchao: a filter defined apart from the call, and MoE words only in the padding
    "from torchao.float8 import convert_to_float8_training\n"
    + "def keep(mod, fqn):\n    return fqn != 'output'\n"
    + "def route(x):\n    return x.router\n"
    + PADDING.format(i=3)
    + "convert_to_float8_training(m, module_filter_fn=keep)\n",
]


def _dumps(src: str, relevant: re.Pattern[str] | None, monkeypatch: pytest.MonkeyPatch) -> list:
    monkeypatch.setattr(python_sites, "RELEVANT", relevant)
    return [s.model_dump(mode="json") for s in parse_file(SourceFile("m.py", src), "python")]


def _sources() -> list[str]:
    out = list(PRUNED_SOURCES)
    for base in (EXAMPLES, CORPUS):
        if base.is_dir():
            out.extend(p.read_text(encoding="utf-8") for p in sorted(base.rglob("*.py")))
    return out


@pytest.mark.parametrize("src", _sources(), ids=lambda s: str(zlib.crc32(s.encode()) % 10**6))
def test_left_out_definitions_and_bodies_never_change_the_sites(
    src: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pruned = _dumps(src, python_sites.RELEVANT, monkeypatch)
    monkeypatch.setattr(py.PyModule, "focus", lambda self, statements: None)
    whole = _dumps(src, None, monkeypatch)  # every definition, every body analysed
    assert pruned == whole
    if src in PRUNED_SOURCES:
        assert whole, "every constructed source has a site"


def test_padding_is_left_out_and_lines_keep_their_numbers() -> None:
    src = PRUNED_SOURCES[0]
    doc = parse(src, python_sites.RELEVANT)
    assert "pad_0" not in doc.text and "class Pad1" not in doc.text
    assert doc.text.count("\n") == src.count("\n")
    assert "def train():" in doc.text
    kept = [line for line in doc.text.splitlines() if line]
    assert all(line in src.splitlines() for line in kept)


def test_definitions_that_matter_are_kept() -> None:
    for i, src in enumerate(PRUNED_SOURCES[1:5], 1):
        doc = parse(src, python_sites.RELEVANT)
        needed = ["def margin", "self.history = 16", "global HIST", "return ckpt"][i - 1]
        assert needed in doc.text, (i, doc.text)


def test_nothing_is_left_out_of_a_file_that_does_not_tokenize() -> None:
    src = RECIPE + PADDING.format(i=0) + "x = (1,\n"
    shape = py.scan(src)
    assert shape.broken
    assert py.prune(src, shape, python_sites.RELEVANT)[0] == src


# -- spans -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "src",
    [
        RECIPE + "x = 1\n\x0cr = DelayedScaling(margin=3)\n",  # a form feed libcst drops
        RECIPE + "def f():\n\x0c    return DelayedScaling(margin=3)\n",
        RECIPE.replace("\n", "\r") + "r = DelayedScaling(margin=3)\r",  # lone CR, to the end
        "\ufeff" + RECIPE + "r = DelayedScaling(margin=3)  # é🙂\n",
        RECIPE + "s = '🙂'; r = DelayedScaling(x='é', margin=3)\r\n",
    ],
    ids=["form-feed", "form-feed-indent", "lone-cr", "bom", "astral"],
)
def test_spans_point_at_the_text(src: str) -> None:
    (site,) = parse_file(SourceFile("m.py", src), "python")
    span = site.margin.span
    assert span is not None
    assert src.encode()[span.start_offset : span.end_offset] == b"3"
    line = re.split(r"\r\n|\r|\n", src)[span.line - 1]
    assert line[span.column - 1 : span.end_column - 1] == "3"


# -- values and names ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "value"),
    [
        ("1_000", 1000),
        ("0x1F", 31),
        ("-1.5", -1.5),
        ("+2", 2),
        ("1e400", float("inf")),
        ("'a' 'b'", "ab"),
        ("b'x'", b"x"),
        ("(True, None, -1)", (True, None, -1)),
        ("[1, 'x']", [1, "x"]),
        ("()", ()),
    ],
)
def test_literals(code: str, value: object) -> None:
    assert py.literal(cst.parse_expression(code)) == (True, value)


@pytest.mark.parametrize(
    "code",
    ["x", "f()", "-x", "--1", "-True", "-1j", "...", "{1: 2}", "{1}", "f'{x}'", "[*x]", "9" * 5000],
)
def test_not_literals(code: str) -> None:
    assert py.literal(cst.parse_expression(code)) == (False, None)


def test_imported_names_however_imported() -> None:
    src = textwrap.dedent("""\
        import transformer_engine.common.recipe as r
        from transformer_engine.common.recipe import DelayedScaling as DS
        import transformer_engine as te
        from torch.utils import checkpoint
        a = r.DelayedScaling()
        b = DS()
        c = te.common.recipe.Float8CurrentScaling()
        d = checkpoint.checkpoint(f)
        def g(te):
            return te.Linear()
        """)
    doc = parse(src)
    calls = [c for cs in doc.facts.calls.values() for c in cs]
    found = {doc.source(c.func): doc.imported_names(c.func) for c in calls}
    assert found == {
        "r.DelayedScaling": ("transformer_engine.common.recipe.DelayedScaling",),
        "DS": ("transformer_engine.common.recipe.DelayedScaling",),
        "te.common.recipe.Float8CurrentScaling": (
            "transformer_engine.common.recipe.Float8CurrentScaling",
        ),
        "checkpoint.checkpoint": ("torch.utils.checkpoint.checkpoint",),
        "te.Linear": (),  # a parameter, not the import
    }


def test_follow_reads_a_name_bound_once_in_the_scope_of_the_use() -> None:
    src = textwrap.dedent("""\
        A = 1
        B: int
        B = 2
        C = 3
        C += 1
        def f():
            A = 5
            return g(A, B, C)
        class K:
            A = 7
            def m(self):
                return g(A)
        """)
    doc = parse(src)
    inner, method = sorted(doc.facts.calls["g"], key=doc.where)
    a, b, c = (arg.value for arg in inner.args)
    assert py.literal(doc.follow(a).node) == (True, 5)
    assert py.literal(doc.follow(b).node) == (True, 2)  # `B: int` binds no value
    assert "assigned 2 times" in (doc.follow(c).why or "")
    # a class body's names are not seen from its methods: the module's A
    assert py.literal(doc.follow(method.args[0].value).node) == (True, 1)


# -- edits -----------------------------------------------------------------------------------


@given(st.text(alphabet="ab_1 ,\n", max_size=30), st.text(alphabet="ab_1 ,\n", max_size=30))
def test_minimal_edit_applies_and_keeps_the_common_ends(old: str, new: str) -> None:
    start, end, content = py.minimal_edit(old, new)
    assert old[:start] + content + old[end:] == new
    assert old[:start] == new[:start]
    assert old[end:] == new[len(new) - (len(old) - end) :]


def test_minimal_edit_does_not_split_a_word() -> None:
    assert py.minimal_edit("f(a=1)", "f(a=1024)") == (4, 5, "1024")
    assert py.minimal_edit("Format.E4M3", "Format.HYBRID") == (7, 11, "HYBRID")
    assert py.minimal_edit("x = 1\n", "x = 1\ny = 2\n") == (6, 6, "y = 2\n")


# -- the module callers import ------------------------------------------------------------------


def test_parse_and_facts_call_what_python_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """`python` re-exports its parts, and `parse` and `PyModule.facts` look the steps up there:
    bench/python_cost.py times them by replacing `python.scan`, `prune` and `collect`."""
    called: list[str] = []
    for name in ("scan", "prune", "collect"):
        step = getattr(py, name)

        def spy(*args: object, _step: Callable[..., object] = step, _name: str = name) -> object:
            called.append(_name)
            return _step(*args)

        monkeypatch.setattr(py, name, spy)
    module = parse(RECIPE + "def f():\n    pass\nr = DelayedScaling()\n", python_sites.RELEVANT)
    assert module.facts.calls["DelayedScaling"]
    assert called == ["scan", "prune", "collect"]
