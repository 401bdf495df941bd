"""Python fixes are libcst transformations: exact fixed text, and edits that are exactly the
region where the transformed module's code differs from the file."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from fp8lint.diagnostics import Diagnostic
from fp8lint.documents import python as py
from fp8lint.documents.text import SourceFile
from fp8lint.engine import fix_text, lint_text
from fp8lint.fixes import apply_edits
from fp8lint.settings import RunSettings


def fixed(text: str, unsafe: bool = True) -> str:
    result = fix_text("t.py", text, "python", RunSettings(), unsafe)
    assert result.failure is None, result.failure
    again = fix_text("t.py", result.text, "python", RunSettings(), unsafe)
    assert again.text == result.text and not again.fixed  # a second run changes nothing
    return result.text


def fixes(text: str) -> list[Diagnostic]:
    diags, _ = lint_text("t.py", text, "python", RunSettings())
    return [d for d in diags if d.fix is not None and d.fix.edits]


def changed_statements(before: str, after: str) -> list[int]:
    """Which top-level statements differ between the two modules (libcst's own view)."""
    a, b = cst.parse_module(before), cst.parse_module(after)
    assert b.code == after
    assert len(a.body) == len(b.body)
    return [i for i, (x, y) in enumerate(zip(a.body, b.body, strict=True)) if not x.deep_equals(y)]


def test_multiline_call_gets_the_keywords_one_per_line() -> None:
    before = textwrap.dedent("""\
        from transformer_engine.common.recipe import DelayedScaling

        def recipe():
            return DelayedScaling(
                margin=0,
                amax_history_len=1,
            )
        """)
    assert fixed(before) == textwrap.dedent("""\
        from transformer_engine.common.recipe import DelayedScaling

        def recipe():
            return DelayedScaling(
                margin=0,
                amax_history_len=1024,
                amax_compute_algo="max",
            )
        """)


def test_comments_and_trailing_commas_stay_where_they_belong() -> None:
    before = textwrap.dedent("""\
        from transformer_engine.common.recipe import DelayedScaling
        r = DelayedScaling(
            # headroom first
            margin=0,  # no headroom
            amax_history_len=1,  # short history
        )  # the recipe
        s = DelayedScaling(margin=0, amax_history_len=1,)  # flow, trailing comma
        """)
    assert fixed(before) == textwrap.dedent("""\
        from transformer_engine.common.recipe import DelayedScaling
        r = DelayedScaling(
            # headroom first
            margin=0,  # no headroom
            amax_history_len=1024,  # short history
            amax_compute_algo="max",
        )  # the recipe
        s = DelayedScaling(margin=0, amax_history_len=1024, amax_compute_algo="max",)  # flow, trailing comma
        """)  # noqa: E501


@pytest.mark.parametrize(
    ("imports", "callee", "fmt"),
    [
        ("import transformer_engine.common.recipe as r\n", "r.DelayedScaling", "r.Format"),
        (
            "from transformer_engine.common.recipe import DelayedScaling as DS, Format as F\n",
            "DS",
            "F",
        ),
    ],
)
def test_calls_through_aliases(imports: str, callee: str, fmt: str) -> None:
    before = imports + f"recipe = {callee}(fp8_format={fmt}.E4M3, amax_history_len=1)\n"
    assert fixed(before) == imports + (
        f"recipe = {callee}(fp8_format={fmt}.HYBRID, amax_history_len=1024, "
        'amax_compute_algo="max")\n'
    )


def test_an_existing_keyword_is_replaced_in_place() -> None:
    before = (
        "from transformer_engine.common.recipe import DelayedScaling\n"
        "r = DelayedScaling(amax_compute_algo = 'most_recent' , margin=0, amax_history_len=(16))\n"
    )
    assert fixed(before) == (
        "from transformer_engine.common.recipe import DelayedScaling\n"
        "r = DelayedScaling(amax_compute_algo = 'max' , margin=0, amax_history_len=(1024))\n"
    )


def test_a_missing_keyword_is_inserted_into_an_empty_call() -> None:
    before = textwrap.dedent("""\
        from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision
        plugin = MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid")
        """)
    text = fixed(before, unsafe=True)
    assert text.startswith(before.splitlines()[0] + "\n")
    call = text.splitlines()[1]
    assert call.startswith('plugin = MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid", ')
    assert "fp8_amax_history_len=1024" in call and call.endswith(")")


def test_format_member_keeps_its_qualifier() -> None:
    before = textwrap.dedent("""\
        import transformer_engine.common.recipe as recipe
        r = recipe.DelayedScaling(fp8_format=recipe.Format.E4M3, amax_history_len=1024,
                                  amax_compute_algo="max")
        """)
    assert fixed(before) == before.replace("Format.E4M3", "Format.HYBRID")


def test_dead_keyword_and_attribute_override_are_removed() -> None:
    before = textwrap.dedent("""\
        from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision
        plugin = MegatronMixedPrecision(
            precision="bf16-mixed",
            fp8="hybrid",
            fp8_recipe="tensorwise",
            fp8_margin=2,
        )
        plugin.fp8_amax_history_len = 8; plugin.fp8_wgrad = True
        """)
    assert fixed(before) == textwrap.dedent("""\
        from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision
        plugin = MegatronMixedPrecision(
            precision="bf16-mixed",
            fp8="hybrid",
            fp8_recipe="tensorwise",
        )
        plugin.fp8_wgrad = True
        """)


def test_value_bound_to_a_name_is_advice_only() -> None:
    """`HIST = 1` may be read anywhere (another call, another module): rewriting it would
    change those too, so neither `--fix` nor `--unsafe-fixes` edits it (issue 20)."""
    before = (
        "from transformer_engine.common.recipe import DelayedScaling\n"
        "HIST = 1\n"
        "r = DelayedScaling(amax_history_len=HIST)\n"
    )
    assert fix_text("t.py", before, "python", RunSettings(), False).text == before
    assert fixed(before, unsafe=True) == before
    result = fix_text("t.py", before, "python", RunSettings(), True)
    (d,) = [d for d in result.remaining if d.code == "FP8101"]
    assert d.fix is not None and d.fix.applicability.value == "display-only"
    assert "the value at line 2 is shared" in d.fix.message


@pytest.mark.parametrize(
    "text",
    [
        "from transformer_engine.common.recipe import DelayedScaling, Format\n"
        "\ndef f():\n    return DelayedScaling(\n        fp8_format=Format.E4M3,  # fwd\n"
        "        amax_history_len=1,\n    )\n",
        "from transformer_engine.common.recipe import DelayedScaling\r\n"
        "r = DelayedScaling(\r\n    margin=0,\r\n    amax_history_len=1\r\n)\r\n",
        "\ufefffrom transformer_engine.common.recipe import DelayedScaling\n"
        "x = '🙂'; r = DelayedScaling(amax_history_len=1)\n",
        "from transformer_engine.common.recipe import DelayedScaling\r\n"
        "class T:\r\n    def f(self):\r\n        if True:\r\n"
        "            return DelayedScaling(\r\n                margin=0,\r\n"
        "                amax_history_len=1,\r\n            )\r\n",
    ],
    ids=["function", "crlf", "bom-astral", "nested-crlf"],
)
def test_each_edit_is_the_changed_region_of_the_transformed_module(text: str) -> None:
    found = fixes(text)
    assert found
    for d in found:
        assert d.fix is not None
        after = apply_edits(text, list(d.fix.edits))
        source = after.removeprefix("\ufeff")
        # the result is a module libcst reproduces exactly, changed in one statement only
        assert len(changed_statements(text.removeprefix("\ufeff"), source)) == 1
        for e in d.fix.edits:  # the region is minimal: its ends differ from the old text
            old = text[e.start : e.end]
            assert not (old and e.content and old[0] == e.content[0] and old[-1] == e.content[-1])


R = "from transformer_engine.common.recipe import DelayedScaling\n"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (  # the comment after the last argument stays on that argument's line
            R + "r = DelayedScaling(\n    margin=0,\n    amax_history_len=1,  # short\n)\n",
            R + "r = DelayedScaling(\n    margin=0,\n    amax_history_len=1024,  # short\n"
            '    amax_compute_algo="max",\n)\n',
        ),
        (  # no trailing comma: the same
            R + "r = DelayedScaling(\n    margin=0,\n    amax_history_len=1  # short\n)\n",
            R + "r = DelayedScaling(\n    margin=0,\n    amax_history_len=1024,  # short\n"
            '    amax_compute_algo="max"\n)\n',
        ),
        (  # a tab-indented call gets a tab-indented line
            R + "r = DelayedScaling(\n\tmargin=0,\n\tamax_history_len=1,\n)\n",
            R + "r = DelayedScaling(\n\tmargin=0,\n\tamax_history_len=1024,\n"
            '\tamax_compute_algo="max",\n)\n',
        ),
    ],
    ids=["comment", "comment-no-comma", "tabs"],
)
def test_an_added_keyword_keeps_comments_and_indentation(before: str, after: str) -> None:
    """Issue 20: the comment used to move to the inserted line, and a tab became a space."""
    assert fixed(before) == after


# -- a fix rewrites the statement line that holds it, not its whole top-level statement ------


class _Counting(cst.CSTTransformer):
    """Turns the integer `1` into `1024`, noting every kind of node it visits."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen.add(type(node).__name__)
        return True

    def leave_Integer(self, original: cst.Integer, updated: cst.Integer) -> cst.Integer:
        return updated.with_changes(value="1024") if updated.value == "1" else updated


NESTED = (
    "class TestRecipes:\n"
    "    def test_one(self):\n"
    "        if True:\n"
    "            r = make(\n"
    "                margin=0,\n"
    "                amax_history_len=1,  # short\n"
    "            )\n"
    "\n"
    "    def test_two(self):\n"
    "        pass\n"
)


@pytest.mark.parametrize("indent", ["    ", "\t"], ids=["spaces", "tabs"])
def test_a_nested_line_is_rewritten_alone_with_its_blocks_indentation(indent: str) -> None:
    text = NESTED.replace("    ", indent)
    doc = py.deep(lambda: py.parse(SourceFile("t.py", text)))
    call = next(n for n in _walk(doc.module) if isinstance(n, cst.Call))
    counting = _Counting()
    edits = py.deep(lambda: doc.rewrite(0, counting, [call]))
    # only the statement line was visited: not the class, its methods or the `if`
    assert not counting.seen & {"ClassDef", "FunctionDef", "If", "IndentedBlock"}
    ((start, end, content),) = edits
    after = text[:start] + content + text[end:]
    assert after == text.replace("amax_history_len=1,", "amax_history_len=1024,")


def test_a_change_outside_a_statement_line_rewrites_the_whole_statement() -> None:
    """A recipe in a `with` header is in no statement line: the statement is rewritten."""
    text = (
        "def f():\n"
        "    with autocast(recipe=make(\n"
        "        amax_history_len=1,\n"
        "    )):\n"
        "        pass\n"
    )
    doc = py.deep(lambda: py.parse(SourceFile("t.py", text)))
    call = [n for n in _walk(doc.module) if isinstance(n, cst.Call)][1]
    counting = _Counting()
    ((start, end, content),) = py.deep(lambda: doc.rewrite(0, counting, [call]))
    assert "FunctionDef" in counting.seen
    assert text[:start] + content + text[end:] == text.replace("=1,", "=1024,")


def test_a_nested_recipe_in_a_with_header_and_a_removed_line_are_fixed() -> None:
    before = textwrap.dedent("""\
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision

        class TestPlugins:
            def test_plugin(self):
                plugin = MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid",
                                                fp8_recipe="tensorwise")
                plugin.fp8_amax_history_len = 8
                return plugin

            def test_autocast(self):
                with te.fp8_autocast(fp8_recipe=DelayedScaling(
                    margin=0,
                    amax_history_len=1,
                )):
                    pass
        """)
    after = fixed(before)
    assert "plugin.fp8_amax_history_len" not in after
    assert "        return plugin\n" in after
    assert "amax_history_len=1024," in after and 'amax_compute_algo="max",' in after


def _walk(node: cst.CSTNode) -> list[cst.CSTNode]:
    out = [node]
    for child in node.children:
        out.extend(_walk(child))
    return out


def _parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts libcst parses from now on, in order."""
    seen: list[str] = []
    real = cst.parse_module

    def counting(source: str, *args: object, **kwargs: object) -> cst.Module:
        seen.append(source)
        return real(source, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cst, "parse_module", counting)
    return seen


RECIPE = textwrap.dedent("""\
    from transformer_engine.common.recipe import DelayedScaling

    def recipe():
        return DelayedScaling(margin=0, amax_history_len=1)
    """)


def test_the_fix_loop_parses_each_fixed_text_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _parses(monkeypatch)
    result = fix_text("t.py", RECIPE, "python", RunSettings(), True)
    assert result.failure is None and result.fixed
    # the file, then the fixed text: its check's parse is what its lint reads
    assert seen == [RECIPE, result.text]


def test_a_lint_that_leaves_code_out_parses_its_own_text(monkeypatch: pytest.MonkeyPatch) -> None:
    text = RECIPE + "\n\ndef unrelated(x):\n    return x + 1\n"
    seen = _parses(monkeypatch)
    result = fix_text("t.py", text, "python", RunSettings(), True)
    assert result.failure is None and result.fixed
    assert "amax_history_len=1024" in result.text and result.text.endswith("return x + 1\n")
    # the whole fixed text is checked; the lint reads it without `unrelated`, parsed anew
    assert len(seen) == 3 and seen[1] == result.text
    assert "unrelated" not in seen[0] and "unrelated" not in seen[2]
