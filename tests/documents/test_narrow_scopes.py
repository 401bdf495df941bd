"""Names resolved by a scope analysis of less than the module (the imports alone, or one
top-level statement after them) get exactly the answer of libcst's analysis of the whole
module, for every name and attribute chain, whatever binds them."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, QualifiedNameSource, ScopeProvider

from fp8lint.documents import python as py
from fp8lint.documents.pyfacts import children
from fp8lint.documents.pylocals import FunctionLocals
from fp8lint.documents.text import SourceFile

BINDINGS = textwrap.dedent(
    """\
    import pytest
    import transformer_engine.pytorch as te
    import torch.distributed
    from transformer_engine.common import recipe
    from transformer_engine.common.recipe import DelayedScaling as DS, Format
    from .local import helper
    from somewhere import *

    try:
        from transformer_engine.common.recipe import MXFP8BlockScaling
    except ImportError:
        MXFP8BlockScaling = None

    if torch.distributed.is_available():
        import megatron.core as mc

    shadowed = recipe.Float8CurrentScaling()
    for loop_name in range(3):
        pass


    def uses(recipe, *args, fmt=Format.HYBRID, **kw):
        r = recipe.DelayedScaling(fp8_format=fmt)
        with te.fp8_autocast(fp8_recipe=r) as ctx:
            pass
        total = [DS() for DS in args]
        if (walrus := DS()) is not None:
            pass
        try:
            pass
        except ValueError as DelayedScaling:
            pass
        return r, ctx, total, walrus, mc.ModelParallelConfig, star_name


    def nested_import():
        from transformer_engine.common.recipe import Float8BlockScaling as helper
        import transformer_engine.common.recipe as te
        return helper(), te.DelayedScaling()


    def imports_late(flag):
        early = te.Recipe, torch.distributed, DS
        import transformer_engine.pytorch as te
        import torch.distributed
        from transformer_engine.common.recipe import Float8CurrentScaling as DS
        if flag:
            from transformer_engine.common import recipe as helper
            return helper.DelayedScaling(), early
        return te.fp8_autocast, torch.distributed.is_available, DS(), early


    def rebinds_globally():
        global later
        later = DS()


    def reads_later():
        return later, loop_name, shadowed, MXFP8BlockScaling()


    class Config:
        recipe = DS(margin=1)
        fmt = Format.E4M3

        def method(self, te=None):
            inner = lambda DS: DS.margin
            return recipe.DelayedScaling(), self.fmt, te, inner, Format.HYBRID

        def uses(self, x=fmt):
            return uses(self), x, closures, twice(), Config

        class Nested:
            def deeper(self):
                return DS(), nested_import(), Nested


    def matching(value):
        match value:
            case {"k": Format, **rest}:
                return Format, rest
            case [recipe, *others]:
                return recipe, others
            case DS(margin=m) as found:
                return found, m


    def closures():
        fmt = Format.HYBRID

        def inner():
            nonlocal fmt
            fmt = DS()
            return fmt

        return inner


    def blocks(flag):
        with te.fp8_autocast() as ac:
            if flag:
                x = DS()
            elif flag is None:
                y = recipe
            else:
                for item in range(2):
                    x = item
                else:
                    z = Format
        try:
            w = x
        except (ValueError, TypeError) as err:
            w = err
        finally:
            v = y
        match flag:
            case 1:
                q = x
            case _:
                q = DS
        while flag:
            x = x - 1
        if flag: shadow = DS; other = 1
        return x, y, z, w, v, q, ac, item, shadow, other


    def twice():
        return 1


    def twice():
        return recursive(twice)


    def recursive(n):
        return recursive(n - 1) if n else uses


    @pytest.mark.parametrize("fmt", [Format.E4M3, Format.HYBRID])
    def test_decorated(fmt, recipe=DS(), *, te: te.Recipe = None):
        return fmt, recipe, te, twice


    def plain_locals(recipe, *extra, flag=False, **opts):
        r = recipe.DelayedScaling(margin=1)
        r2: "DS" = DS()
        declared: int
        count = 0
        count += 1
        a, (b, *c) = DS(), (1, 2, 3)
        holder.attr = a
        holder = opts
        items[0] = b
        for i, j in extra:
            pass
        with te.fp8_autocast(fp8_recipe=r) as (ac1, ac2):
            pass
        try:
            pass
        except ValueError as problem:
            pass

        def helper_fn(x=r, *, fmt=Format.E4M3):
            return x, r, recipe, fmt

        class Local:
            value = r

        if (found := r.margin):
            pass
        twice_here = twice_here = 1
        gone = 1
        del gone
        match flag:
            case {"r": captured}:
                pass
        squares = [(w := k) for k in range(3)]
        lam = lambda q=r: q + r
        return (
            r, r2, declared, count, a, b, c, holder, items, i, j, ac1, ac2, problem,
            helper_fn, Local, found, twice_here, gone, captured, w, squares, lam, recipe, DS,
        )


    handler = lambda DS=DS, *rest: (DS, rest, Format)
    squares = [loop_var for loop_var in range(3) if DS and recipe]
    r = DS()
    r.margin = 2
    twice_top = DS()
    twice_top = None
    counted = 0
    counted += 1
    typed: DS = DS()
    [wal := DS() for _ in range(2)]
    wal = recipe.DelayedScaling()
    comp_shadow = DS()
    comp_list = [comp_shadow for comp_shadow in range(2)]
    MXFP8BlockScaling = MXFP8BlockScaling or DS
    uses = uses

    if __name__ == "__main__":
        strategy = DS(margin=0)
        with te.fp8_autocast(fp8_recipe=strategy) as main_ctx:
            main_typed: DS = DS()
            main_typed += 1
        for main_item in range(2):
            if main_item: main_once = DS(); strategy = None
        try:
            main_tried = recipe.DelayedScaling()
        except ValueError as main_err:
            main_tried = main_err
        finally:
            main_done = twice_top
        match strategy:
            case None:
                main_matched = DS
        while False:
            main_looped = DS
        else:
            main_left = uses
        main_a, main_b = DS(), strategy
    """
)


def _collect(
    module: cst.Module, kinds: tuple[type, ...], skip: tuple[type, ...] = ()
) -> list[cst.CSTNode]:
    """The nodes of `kinds`, and under them too unless they are statement lines, not
    entering the nodes of `skip`."""
    out: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            out.append(node)
            if isinstance(node, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
                continue
        if not isinstance(node, skip):
            stack.extend(reversed(children(node)))
    return out


def _lines(module: cst.Module) -> list[cst.CSTNode]:
    """The statement lines outside every function and class body."""
    lines = (cst.SimpleStatementLine, cst.SimpleStatementSuite)
    return _collect(module, lines, (cst.FunctionDef, cst.ClassDef, cst.BaseExpression))


def _names(module: cst.Module) -> list[cst.CSTNode]:
    return _collect(module, (cst.Name, cst.Attribute))


@pytest.mark.parametrize("small", [0, 10_000], ids=["cut-per-name", "whole-functions"])
@pytest.mark.parametrize("relevant", [None, py.re.compile("DelayedScaling|autocast")])
def test_every_name_gets_the_whole_module_answer(
    relevant: object, small: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(py, "_SMALL_UNIT", small)  # both ways a function is analysed

    def check() -> tuple[int, int]:
        doc = py.parse(SourceFile("recipe.py", BINDINGS), relevant)  # type: ignore[arg-type]
        whole = MetadataWrapper(doc.module, unsafe_skip_copy=True).resolve(ScopeProvider)
        narrowed = plain = 0
        for node in _names(doc.module):
            scope = whole.get(node)
            if scope is None:
                continue
            found = doc._narrow_scope(node)
            narrowed += found is not None
            plain += isinstance(found, FunctionLocals)
            want = sorted(
                q.name
                for q in scope.get_qualified_names_for(node)
                if q.source is QualifiedNameSource.IMPORT
            )
            assert list(doc.imported_names(node)) == want, doc.module.code_for_node(node)
            if isinstance(node, cst.Name):
                declared = doc.facts.declared_only
                expected = [
                    id(a.node)
                    for a in sorted(scope[node.value], key=lambda a: getattr(a, "_index", 0))
                    if hasattr(a, "node") and id(a.node) not in declared
                ]
                # a definition analysed as its signature stands for itself (`bindings`)
                got = [id(doc._stubbed.get(id(a.node), a.node)) for a in doc.assignments(node)]
                assert got == expected, node.value
        return narrowed, plain

    narrowed, plain = py.deep(check)
    assert narrowed > 50  # most questions were answered by the narrower analyses
    assert plain > 30  # and many from the function's own bindings, with no analysis at all


def test_names_bound_at_module_level_or_declared_global_use_the_module_analysis() -> None:
    doc = py.deep(lambda: py.parse(SourceFile("recipe.py", BINDINGS)))
    facts = doc.facts
    assert {"shadowed", "loop_name", "MXFP8BlockScaling", "r"} <= facts.module_bound
    assert {"Config", "uses", "twice", "recursive"} <= set(facts.module_defined)
    assert len(facts.module_defined["twice"]) == 2
    assert "later" in facts.declared_global
    assert {"te", "recipe", "DS", "Format", "helper", "mc"} <= facts.module_imported
    assert "fmt" not in facts.module_bound and "fmt" in facts.bound  # a body's own name


def test_own_bindings_are_read_plainly_and_the_unusual_ones_are_left_to_libcst() -> None:
    doc = py.deep(lambda: py.parse(SourceFile("recipe.py", BINDINGS)))
    facts = doc.facts
    unit = next(i for i, (f, _) in enumerate(facts.units) if f.name.value == "plain_locals")
    own = facts.unit_scopes[unit]
    plainly = {"recipe", "extra", "flag", "opts", "r", "r2", "declared", "count", "a", "b"}
    plainly |= {"c", "holder", "i", "j", "ac1", "ac2", "problem", "helper_fn", "Local"}
    plainly |= {"found", "squares", "lam"}
    readable = doc._locals(unit)
    assert {n for n in plainly if n in readable} == plainly
    # `del`, a match capture, a walrus in a comprehension: libcst answers for them
    assert {"gone", "captured", "w"} <= own.unsure
    assert "twice_here" in own.own and "twice_here" not in readable  # two in one statement
    assert "items" not in own.bound and "x" in own.bound and "k" in own.bound  # nested only
    assert [type(b.node).__name__ for b in readable["count"]] == ["Name", "Name"]
    # `recipe` in the nested function's body: the function's own parameter, seen from inside
    helper = next(
        f
        for f in cst.ensure_type(facts.units[unit][0].body, cst.IndentedBlock).body
        if isinstance(f, cst.FunctionDef)
    )
    returned = cst.ensure_type(helper.body.body[0], cst.SimpleStatementLine).body[0]
    inside = cst.ensure_type(cst.ensure_type(returned, cst.Return).value, cst.Tuple).elements[2]
    seen = doc._narrow_scope(inside.value)
    assert isinstance(seen, FunctionLocals) and seen is not readable
    assert [b.node for b in seen["recipe"]] == [b.node for b in readable["recipe"]]
    assert type(readable["recipe"][0].node) is cst.Param
    late = next(i for i, (f, _) in enumerate(facts.units) if f.name.value == "imports_late")
    imports = doc._locals(late)
    assert "te" in imports and "DS" in imports and "helper" in imports  # read from the imports
    assert "torch" in facts.unit_scopes[late].unsure  # `import torch.distributed`: libcst's


def test_names_used_at_module_level_are_read_from_a_slice_of_the_module() -> None:
    """`recipe = DelayedScaling(...)` at the top of a module, or in its `if __name__ ==
    "__main__":` block, and `with fp8_autocast(fp8_recipe=recipe)` there: the analysis of
    the imports, definitions and statements that bind or use the name at module level
    (their blocks cut to what holds it) answers for every such use and target, a use in a
    comprehension that binds the name too (the answers are checked against libcst's
    above), and the whole module is never analysed."""
    doc = py.deep(lambda: py.parse(SourceFile("recipe.py", BINDINGS)))
    targets: dict[str, list[cst.CSTNode]] = {}
    for stmt in _lines(doc.module):
        if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    found = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    found = [small.target]
                else:
                    continue
                for t in found:
                    if isinstance(t, cst.Name):
                        targets.setdefault(t.value, []).append(t)
    main = ("strategy", "main_typed", "main_once", "main_tried", "main_matched", "main_left")
    shared = ("twice_top", "counted", "typed", "wal", "MXFP8BlockScaling", "uses", "r", *main)
    for name in shared:
        assert name in doc.facts.module_bound or name in doc.facts.module_defined
        for target in targets[name]:
            assert py.deep(lambda t=target: doc._narrow_scope(t)) is not None, name
    used = [
        n
        for n in _names(doc.module)
        if isinstance(n, cst.Name) and n.value in shared and id(n) in doc.facts.module_use
    ]
    stored = {id(t) for name in shared for t in targets[name]}
    assert len([n for n in used if id(n) not in stored]) >= 8  # uses, not only targets
    for n in used:
        assert py.deep(lambda n=n: doc._narrow_scope(n)) is not None, n.value
    assert len(py.deep(lambda: doc.assignments(targets["twice_top"][0]))) == 2
    assert len(py.deep(lambda: doc.assignments(targets["strategy"][0]))) == 2  # in a block
    assert not py.deep(lambda: doc.bound_once_where(targets["strategy"][0]))
    assert py.deep(lambda: doc.bound_once_where(targets["main_once"][0]))  # `if x: a = 1`
    assert py.deep(lambda: doc.bound_once_where(targets["r"][0]))
    comp = next(
        n
        for n in _names(doc.module)
        if isinstance(n, cst.Name)
        and n.value == "comp_shadow"
        and doc.facts.statement[id(n)] == doc.facts.statement[id(targets["comp_shadow"][0])] + 1
    )
    assert type(py.deep(lambda: doc._narrow_scope(comp))).__name__ == "ComprehensionScope"
    assert doc._scopes is None  # the whole module's analysis never ran
    # a slice cuts a block to the statements that hold the name: `strategy`'s holds neither
    # the loop's other statements nor the `try`
    module = doc._globals["strategy"][1]
    assert "main_tried" not in module.code and "main_looped" not in module.code
    assert "main_once = DS(); strategy = None" in module.code


def test_children_are_the_node_fields_libcst_types_as_nodes() -> None:
    """`children` keeps, in field order, every field value (and sequence element) that is a
    libcst node, the fields of whitespace and punctuation left out: the same as an
    `isinstance` check of each, which its per-type cache stands for."""
    from dataclasses import fields

    from fp8lint.documents.pyfacts import _SKIP_FIELDS

    module = cst.parse_module(BINDINGS)
    stack: list[cst.CSTNode] = [module]
    seen = 0
    while stack:
        node = stack.pop()
        want: list[cst.CSTNode] = []
        for f in fields(node):
            if f.name in _SKIP_FIELDS or f.name.startswith("whitespace"):
                continue
            value = getattr(node, f.name)
            if isinstance(value, cst.CSTNode):
                want.append(value)
            elif isinstance(value, (list, tuple)):
                want.extend(v for v in value if isinstance(v, cst.CSTNode))
        got = children(node)
        assert [id(n) for n in got] == [id(n) for n in want], node
        seen += 1
        stack.extend(got)
    assert seen > 1000


def test_a_name_only_the_module_imports_bind_is_read_from_them() -> None:
    """`DS` and `te`, bound by module-level imports and nothing else, are answered from the
    imports read plainly (libcst's `ImportAssignment` names them), as libcst's analysis of
    the whole module does; `torch` (`import torch.distributed`, a dotted name) and a name
    one statement imports twice are left to libcst's analysis of the imports."""
    source = (
        "import torch.distributed\nimport transformer_engine.pytorch as te\n"
        "from transformer_engine.common.recipe import DelayedScaling as DS, Format, Format\n"
        "try:\n    from transformer_engine.common.recipe import DelayedScaling as DS\n"
        "except ImportError:\n    pass\n\n\ndef f():\n"
        "    with te.autocast(recipe=DS(), fmt=Format.E4M3):\n"
        "        torch.distributed.barrier()\n"
    )
    doc = py.deep(lambda: py.parse(SourceFile("recipe.py", source)))
    whole = py.deep(
        lambda: MetadataWrapper(doc.module, unsafe_skip_copy=True).resolve(ScopeProvider)
    )
    uses = [
        n
        for n in _names(doc.module)
        if isinstance(n, cst.Name)
        and n.value in {"DS", "te", "torch", "Format"}
        and doc.facts.unit_of.get(id(n)) is not None
    ]
    assert len(uses) == 4
    answered = {}
    for n in uses:
        found = py.deep(lambda n=n: doc._narrow_scope(n))
        answered[n.value] = isinstance(found, FunctionLocals)
        want = sorted(
            q.name
            for q in whole[n].get_qualified_names_for(n)
            if q.source is QualifiedNameSource.IMPORT
        )
        assert list(py.deep(lambda n=n: doc.imported_names(n))) == want, n.value
        got = [id(a.node) for a in py.deep(lambda n=n: doc.assignments(n))]
        assert got == [id(a.node) for a in sorted(whole[n][n.value], key=lambda a: a._index)]
    assert answered == {"te": True, "DS": True, "torch": False, "Format": False}
