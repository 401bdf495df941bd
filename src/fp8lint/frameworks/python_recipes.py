"""Python recipe code, read from its syntax tree: Transformer Engine recipes and the autocast
that uses them, NeMo 2 `MegatronMixedPrecision` and its presets, Megatron-Bridge
`MixedPrecisionConfig` and its registered names, `MegatronStrategy` topology, Accelerate's FP8
handlers, and torchao's `convert_to_float8_training`.

The file is parsed, never imported or run.  A value is read only when it is a literal, or a
name (or `obj.attr`) that is bound exactly once, in a scope the use can see, to a literal;
anything else is an unknown setting with a note saying why.

The tree is CPython's own `ast` (the parser is C, and positions come with every node), the
way pyupgrade detects on a tree and edits text: fixes are text edits on the recorded spans,
so nothing needs a concrete syntax tree.  Columns in `ast` count UTF-8 bytes; `_Reader._pos`
turns them into characters.

Names, fields and defaults: ../shared/reference/fp8-config-surface.md §1 (TE), §3.2/§3.3
(NeMo 2, Megatron-Bridge), §4.1 (Accelerate), §6.1 (torchao).
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, cast

from fp8lint.documents.text import ParseError, SourceFile
from fp8lint.documents.tree import Pos
from fp8lint.frameworks import accelerate
from fp8lint.frameworks.base import Arg, default, invalid_note, written
from fp8lint.frameworks.torchtitan import RECIPES as TORCHAO_RECIPES
from fp8lint.frameworks.transformer_config import (
    BRIDGE_DEFAULTS,
    MODEL_TO_CONFIG,
    NEMO2_DEFAULTS,
    Profile,
    as_int,
    build_site,
)
from fp8lint.model import (
    AmaxAlgo,
    AmaxScope,
    EditInfo,
    Fp8Format,
    Fp8Site,
    Framework,
    Recipe,
    Setting,
    SourceNote,
    Span,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

TE = "Transformer Engine"

# -- Transformer Engine ----------------------------------------------------------------------
TE_CLASSES: dict[str, Recipe] = {
    "DelayedScaling": Recipe.DELAYED,
    "Float8CurrentScaling": Recipe.TENSORWISE,
    "MXFP8BlockScaling": Recipe.MXFP8,
    "Float8BlockScaling": Recipe.BLOCKWISE,
    "NVFP4BlockScaling": Recipe.NVFP4,
}
TE_DEFAULT_FORMAT: dict[str, Fp8Format] = {
    "DelayedScaling": Fp8Format.HYBRID,
    "Float8CurrentScaling": Fp8Format.HYBRID,
    "MXFP8BlockScaling": Fp8Format.E4M3,
    "Float8BlockScaling": Fp8Format.E4M3,
    "NVFP4BlockScaling": Fp8Format.E4M3,
}
_COMMON = frozenset({"fp8_format", "fp8_dpa", "fp8_mha"})
# the keywords each recipe class has (others are dropped by TE's pydantic dataclass)
TE_KEYWORDS: dict[str, frozenset[str]] = {
    "DelayedScaling": _COMMON
    | {
        "margin",
        "amax_history_len",
        "amax_compute_algo",
        "reduce_amax",
        "interval",
        "override_linear_precision",
    },
    "Float8CurrentScaling": _COMMON,
    "MXFP8BlockScaling": _COMMON | {"margin"},
    "Float8BlockScaling": _COMMON,
    "NVFP4BlockScaling": _COMMON,
}
TE_FORMATS: dict[str, Fp8Format] = {
    "HYBRID": Fp8Format.HYBRID,
    "E4M3": Fp8Format.E4M3,
    "E5M2": Fp8Format.E5M2,
}
ALGOS: dict[str, AmaxAlgo] = {"max": AmaxAlgo.MAX, "most_recent": AmaxAlgo.MOST_RECENT}
# modules a bare recipe class name must be imported from to count
_TE_MODULE = re.compile(r"transformer_engine|recipe")

AUTOCASTS = frozenset({"fp8_autocast", "autocast"})
# activation recompute through PyTorch's own checkpoint, outside TE's `te.checkpoint` (which
# manages the FP8 state of the recompute itself: TE #1190, fixed by PR #1254)
TORCH_CHECKPOINTS = frozenset(
    {"torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential"}
)
_TORCH_CHECKPOINT_NOTE = (
    "activation recompute through torch.utils.checkpoint, outside TE's own te.checkpoint"
)
# a TE linear assigned to one of these names is the output head (`self.lm_head = te.Linear(...)`)
TE_HEAD_TARGETS = frozenset({"lm_head", "output_layer", "output", "head", "output_proj"})
TE_LINEARS = frozenset({"Linear", "LayerNormLinear"})
_TE_HEAD_NOTE = (
    "a Transformer Engine Linear used as the output head runs in FP8 inside fp8_autocast"
)
_RECIPE_KEYS = ("fp8_recipe", "recipe")
_GROUP_KEYS = ("fp8_group", "amax_reduction_group")

# amax-reduction group getters (Megatron `parallel_state`), by function name
GROUP_GETTERS: dict[str, AmaxScope] = {
    "get_data_parallel_group": AmaxScope.DP_ONLY,
    "get_amax_reduction_group": AmaxScope.TP_DP_CP,
    "get_tensor_model_parallel_group": AmaxScope.TP,
    "get_tensor_and_data_parallel_group": AmaxScope.TP_DP,
    "get_model_parallel_group": AmaxScope.CUSTOM,
}

# -- NeMo 2, Megatron-Bridge, Accelerate ------------------------------------------------------
NEMO2_CLASS = "MegatronMixedPrecision"
BRIDGE_CLASS = "MixedPrecisionConfig"
STRATEGY_CLASS = "MegatronStrategy"
ACCELERATE_CLASSES = frozenset({"FP8RecipeKwargs", "TERecipeKwargs"})
ACCELERATE_KEYS = frozenset(
    {
        "backend",
        "fp8_format",
        "margin",
        "interval",
        "amax_history_len",
        "amax_compute_algo",
        "override_linear_precision",
        "use_autocast_during_eval",
        "use_mxfp8_block_scaling",
    }
)
TOPOLOGY_KEYS = (
    "tensor_model_parallel_size",
    "pipeline_model_parallel_size",
    "context_parallel_size",
    "sequence_parallel",
    "expert_model_parallel_size",
    "expert_tensor_parallel_size",
)
# `run.Config(Cls, ...)` / `fdl.Partial(Cls, ...)`: the keywords are Cls's
CONFIG_WRAPPERS = frozenset({"Config", "Partial"})
CLASSES = frozenset(TE_CLASSES) | {NEMO2_CLASS, BRIDGE_CLASS, STRATEGY_CLASS} | ACCELERATE_CLASSES

TE_KEYS = {
    "margin": "margin",
    "amax_history_len": "amax_history_len",
    "amax_compute_algo": "amax_compute_algo",
    "fmt": "fp8_format",
    "reduce_amax": "reduce_amax",
    "interval": "interval",
}
NEMO2_PROFILE = Profile(
    framework=Framework.NEMO2,
    label="NeMo 2 MegatronMixedPrecision",
    defaults=NEMO2_DEFAULTS,
    spell=lambda n: n,
    kind="NeMo 2 MegatronMixedPrecision(...)",
)
BRIDGE_PROFILE = Profile(
    framework=Framework.BRIDGE,
    label="Megatron-Bridge MixedPrecisionConfig",
    defaults=BRIDGE_DEFAULTS,
    spell=lambda n: n,
    kind="Megatron-Bridge MixedPrecisionConfig(...)",
)

# Named presets (NeMo `llm/recipes/precision/mixed_precision.py`, Bridge
# `training/mixed_precision.py`): the TransformerConfig fields each one fixes.
_DELAYED: dict[str, Any] = {
    "fp8": "hybrid",
    "fp8_recipe": "delayed",
    "fp8_margin": 0,
    "fp8_amax_history_len": 1024,
    "fp8_amax_compute_algo": "max",
    "fp8_param_gather": True,
}
_CURRENT: dict[str, Any] = {
    "fp8": "hybrid",
    "fp8_recipe": "tensorwise",
    "first_last_layers_bf16": True,
    "num_layers_at_start_in_bf16": 1,
    "num_layers_at_end_in_bf16": 1,
    "fp8_param_gather": True,
}
_MXFP8: dict[str, Any] = {"fp8": "hybrid", "fp8_recipe": "mxfp8", "fp8_param_gather": True}
_SUBCHANNEL: dict[str, Any] = {
    "fp8": "hybrid",
    "fp8_recipe": "blockwise",
    "fp8_param_gather": False,
}
PRESETS: dict[str, dict[str, Any]] = {
    "bf16_with_fp8_mixed": _DELAYED,
    "fp16_with_fp8_mixed": _DELAYED,
    "bf16_with_fp8_delayed_scaling_mixed": _DELAYED,
    "fp16_with_fp8_delayed_scaling_mixed": _DELAYED,
    "bf16_with_fp8_current_scaling_mixed": _CURRENT,
    "fp16_with_fp8_current_scaling_mixed": _CURRENT,
    "nemotron_h_bf16_with_fp8_current_scaling_mixed": {
        **_CURRENT,
        "num_layers_at_start_in_bf16": 2,
        "num_layers_at_end_in_bf16": 2,
    },
    "nanov2_bf16_with_fp8_current_scaling_mixed": {
        **_CURRENT,
        "fp8_recipe": "blockwise",
        "num_layers_at_start_in_bf16": 2,
        "num_layers_at_end_in_bf16": 2,
    },
    "bf16_with_mxfp8_mixed": _MXFP8,
    "fp16_with_mxfp8_mixed": _MXFP8,
    "bf16_with_fp8_subchannel_scaling_mixed": _SUBCHANNEL,
    "fp16_with_fp8_subchannel_scaling_mixed": _SUBCHANNEL,
}
BRIDGE_ONLY_PRESETS = frozenset(
    {"bf16_with_fp8_delayed_scaling_mixed", "fp16_with_fp8_delayed_scaling_mixed"}
)
# Bridge's MXFP8 presets write `fp8 = "e4m3"` where NeMo 2's write "hybrid"
_BRIDGE_PRESET_CHANGES: dict[str, dict[str, Any]] = {
    "bf16_with_mxfp8_mixed": {"fp8": "e4m3"},
    "fp16_with_mxfp8_mixed": {"fp8": "e4m3"},
}
# TransformerConfig field -> the model fields it sets
_PRESET_MODEL_FIELDS: dict[str, tuple[str, ...]] = {
    "fp8": ("enabled", "fmt"),
    "fp8_recipe": ("recipe",),
    "fp8_margin": ("margin",),
    "fp8_amax_history_len": ("amax_history_len",),
    "fp8_amax_compute_algo": ("amax_compute_algo",),
    "fp8_param_gather": ("fp8_param_gather",),
    "first_last_layers_bf16": ("first_last_layers_bf16",),
    "num_layers_at_start_in_bf16": ("num_layers_at_start_in_bf16",),
    "num_layers_at_end_in_bf16": ("num_layers_at_end_in_bf16",),
}

# -- torchao float8 training ----------------------------------------------------------------
# `convert_to_float8_training(module, *, module_filter_fn=None, config=None)` swaps every
# `nn.Linear` the filter accepts (all of them without one) for `Float8Linear`; `config=None`
# is `Float8LinearConfig()`, whose cast configs are dynamic tensorwise (E4M3 forward, E5M2
# gradients).  `Float8LinearConfig.from_recipe_name` names the other recipes (§6.1).
TORCHAO = "torchao"
TORCHAO_CONVERT = "convert_to_float8_training"
TORCHAO_CONFIG = "Float8LinearConfig"
TORCHAO_RECIPE_ENUM = "Float8LinearRecipeName"
# the names torchao 0.9 gave the pre-0.9 recipes
TORCHAO_RENAMED = {
    "all_tensorwise": "tensorwise",
    "all_axiswise": "rowwise",
    "lw_axiswise_with_gw_hp": "rowwise_with_gw_hp",
}
# a filter string naming the output head (`fqn != "output"`, `"lm_head" not in fqn`)
HEAD_NAMES = frozenset({"output", "lm_head", "head"})
_NO_FILTER = "torchao converts every nn.Linear when no module_filter_fn is given"
_UNREADABLE_FILTER = "module_filter_fn is not a filter fp8lint can read"

_MAX_FOLLOW = 8  # how many `a = b` links a value is followed through
_LONE_CR = re.compile(r"\r(?!\n)")


# Every site this source builds starts from one of these names; a file that mentions FP8 only
# in passing (a comment, a log line, a dtype) is not worth a parse.
_SITE_NAMES = re.compile(
    r"DelayedScaling|Float8CurrentScaling|MXFP8BlockScaling|Float8BlockScaling|"
    r"NVFP4BlockScaling|MegatronMixedPrecision|MixedPrecisionConfig|RecipeKwargs|"
    r"convert_to_float8_training|_mixed\b"
)


def parse_python(file: SourceFile) -> list[Fp8Site]:
    """Every FP8 site of a Python file: one per recipe, plugin, preset or handler built."""
    if not _SITE_NAMES.search(file.text):
        return []
    tree = _parse(file)
    try:
        reader = _Reader(file, tree)
        reader.collect()
        sites = reader.sites()
    except RecursionError:
        raise ParseError("nesting too deep to read", 1, 1) from None
    return sorted(
        sites, key=lambda s: (s.span.line, s.span.column, s.span.end_line, s.span.end_column)
    )


_TOO_DEEP = re.compile(r"too many nested|too many levels|too complex|stack overflow")


def _parse(file: SourceFile) -> ast.Module:
    """The file's syntax tree from CPython's parser (compiling to a tree only, never running
    anything), or a `ParseError` with CPython's own message and position.

    CPython bounds the depth of the tree itself (brackets nest at most 200 deep; a deeper
    chain of operators is a `RecursionError` during construction), and the walk below is
    iterative, so no separate depth check is needed."""
    source = file.text[1:] if file.text.startswith("\ufeff") else file.text
    try:
        with warnings.catch_warnings():  # `"\d"` warns while parsing; the file is not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(source, filename=file.path)
    except (RecursionError, MemoryError):
        raise ParseError("nesting too deep to read", 1, 1) from None
    except SyntaxError as err:
        if _TOO_DEEP.search(err.msg or ""):
            raise ParseError("nesting too deep to read", err.lineno or 1, err.offset or 1) from None
        raise ParseError(
            f"Python syntax error: {err.msg} (as Python "
            f"{sys.version_info.major}.{sys.version_info.minor} reads it)",
            err.lineno or 1,
            err.offset or 1,
        ) from None
    except ValueError as err:  # null bytes on older Pythons, over-long integers
        raise ParseError(f"Python syntax error: {err}", 1, 1) from None
    return tree


# ------------------------------------------------------------------------------- collection


@dataclass(eq=False)
class _Binding:
    """One binding of a name: the expression assigned (None when not a plain assignment:
    a parameter, loop target, import or unpacking), and the scope it was made in."""

    value: ast.AST | None
    scope: _Scope


@dataclass(eq=False)
class _AttrSet:
    """`base.name = value`, a field set on an object after it was built."""

    base: str
    name: str
    target: ast.Attribute
    value: ast.expr


@dataclass(eq=False)
class _Scope:
    kind: str  # module, function, class, comprehension
    parent: _Scope | None
    bindings: dict[str, list[_Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    attr_sets: list[_AttrSet] = field(default_factory=list)


@dataclass(frozen=True)
class _Val:
    """A read argument, and the expression it resolved to (after following names)."""

    arg: Arg
    node: ast.AST


@dataclass(frozen=True)
class _Target:
    """What a call builds: the class or preset name, and the expression that names it."""

    name: str
    callee: ast.expr
    origin: str  # dotted origin, for telling Bridge presets from NeMo 2 ones


@dataclass(frozen=True)
class _CallArg:
    """One argument of a call, in the order written: `key=value`, `*x`, `**x` or a value."""

    node: ast.AST  # the whole argument, `key=` and stars included
    value: ast.expr
    keyword: str | None
    star: str  # "", "*" or "**"


def _call_args(call: ast.Call) -> list[_CallArg]:
    """`ast` keeps positional and keyword arguments apart; put them back in source order."""
    out = [
        _CallArg(a, a.value, None, "*") if isinstance(a, ast.Starred) else _CallArg(a, a, None, "")
        for a in call.args
    ]
    out.extend(_CallArg(k, k.value, k.arg, "" if k.arg else "**") for k in call.keywords)
    if call.args and call.keywords:
        out.sort(key=lambda a: (_where(a.node), a.star == "**"))
    return out


def _where(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _kids(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes`, minus the `Load`/`Store` contexts (a third of all nodes, and
    nothing to read), as a list."""
    kind = type(node)
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f != "ctx")
    out: list[ast.AST] = []
    for name in names:
        value = getattr(node, name, None)
        if isinstance(value, ast.AST):
            out.append(value)
        elif isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
    return out


def _dotted(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _dotted_text(node: ast.AST) -> str | None:
    parts = _dotted(node)
    return ".".join(parts) if parts else None


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _module_text(node: ast.ImportFrom) -> str:
    return "." * node.level + (node.module or "")


def _is_literal(node: ast.AST) -> bool:
    """Numbers, strings, bytes, True/False/None, a signed number, and tuples or lists of
    them: what `ast.literal_eval` reads and fp8lint treats as written values."""
    if isinstance(node, ast.Constant):
        return node.value is not Ellipsis
    if isinstance(node, ast.UnaryOp):
        return (
            isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
            and not isinstance(node.operand.value, bool)
        )
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_is_literal(e) for e in node.elts)
    return False


def _is_string(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _canonical_text(value: Any) -> str:
    """A literal as lower-case text with normalized spaces: `(false, false, true)`."""
    return " ".join(repr(value).split()).lower()


def _names_head(text: str) -> bool:
    """A filter string naming the output head: `output`, `lm_head`, `model.lm_head`."""
    name = text.strip().strip(".")
    return name in HEAD_NAMES or name.rsplit(".", 1)[-1] in HEAD_NAMES


def _names_router(text: str) -> bool:
    """A filter string naming an MoE router: `router`, `router.gate`, `mlp.gate`."""
    lowered = text.strip().lower()
    return "router" in lowered or "gate" in lowered.split(".")


_WORD_SPLIT = re.compile(r"[^a-z0-9_]+")


def _moe_word(text: str) -> bool:
    """A name or module path of a mixture-of-experts model.  `gate` counts only as a whole
    part (`mlp.gate`, `self.gate`), not inside `gate_proj` (dense SwiGLU) or `aggregate`."""
    return any(
        "router" in part or "moe" in part or "expert" in part or part == "gate"
        for part in _WORD_SPLIT.split(text.lower())
    )


class _Reader:
    """One parsed file: the bindings, calls and strings it holds, then the sites they make."""

    def __init__(self, file: SourceFile, module: ast.Module) -> None:
        self.file = file
        self.module = module
        self.module_scope = _Scope("module", None)
        self.calls: list[tuple[ast.Call, _Scope]] = []
        self.strings: list[tuple[ast.Constant, _Scope]] = []
        self.imports: dict[str, tuple[str, str]] = {}  # local name -> (module, original name)
        self.star_modules: list[str] = []
        self.local_defs: set[str] = set()
        self.attr_bindings: dict[str, list[_Binding]] = {}  # `self.recipe` etc., file-wide
        self.assigned_to: dict[int, tuple[str, _Scope]] = {}  # id(call) -> (target, scope)
        self.skip_strings: set[int] = set()
        self._moe: bool | None = None  # whether the file mentions an MoE model (torchao)
        self._bom = 1 if file.text.startswith("\ufeff") else 0
        self._starts = file.line_starts
        self._ascii = file.text.isascii()

    # -- positions ---------------------------------------------------------------------------
    def _pos(self, line: int, byte_column: int) -> Pos:
        """`ast`'s 1-based line and UTF-8 byte column as a `Pos` with a character index."""
        starts = self._starts
        line0 = min(max(line - 1, 0), len(starts) - 1)
        begin = starts[line0] + (self._bom if line0 == 0 else 0)
        column = byte_column
        if not self._ascii:
            end = starts[line0 + 1] if line0 + 1 < len(starts) else len(self.file.text)
            text = self.file.text[begin:end]
            if not text.isascii():
                head = text.encode("utf-8", errors="surrogatepass")[:byte_column]
                column = len(head.decode("utf-8", errors="ignore"))
        return Pos(line0, column, min(begin + column, len(self.file.text)))

    def _range(self, node: ast.AST) -> tuple[Pos, Pos]:
        start = self._pos(node.lineno, node.col_offset)  # type: ignore[attr-defined]
        end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None)
        return start, self._pos(end_line, node.col_offset if end_col is None else end_col)  # type: ignore[attr-defined]

    def span(self, node: ast.AST) -> Span:
        return self.span_between(node, node)

    def span_between(self, first: ast.AST, last: ast.AST) -> Span:
        return self.file.span(self._range(first)[0], self._range(last)[1])

    def text(self, node: ast.AST) -> str:
        start, end = self._range(node)
        return self.file.text[start.index : end.index]

    def edit_info(self, call: ast.Call, keys: dict[str, str]) -> EditInfo:
        """Where a fix adds a keyword to `call`: after its last argument, one per line when
        the call is laid out that way, or inside the parentheses of an empty call."""
        args = _call_args(call)
        values = {a.keyword: self.span(a.value) for a in args if a.keyword is not None}
        if not args:
            close = self._range(call)[1]
            at = self.file.pos_of_index(max(close.index - 1, 0))
            return EditInfo.model_construct(
                syntax="python", flow=True, insert_into=self.file.span(at, at), keys=keys
            )
        after = self.span(args[-1].node)
        opening_line = self._range(call.func)[1].line + 1
        multiline = after.line != opening_line
        return EditInfo.model_construct(
            syntax="python",
            flow=not multiline,
            insert_after=after,
            indent=" " * (after.column - 1) if multiline else "",
            keys=keys,
            values=values,
        )

    # -- the walk ----------------------------------------------------------------------------
    def collect(self) -> None:
        """Walk the tree once, iteratively (deep files cannot overflow the stack here)."""
        stack: list[tuple[ast.AST, _Scope]] = [(self.module, self.module_scope)]
        visit = self._VISIT
        while stack:
            node, scope = stack.pop()
            method = visit.get(type(node))
            if method is None:
                children = [(n, scope) for n in _kids(node)]
            else:
                children = method(self, node, scope)
            stack.extend(reversed(children))
        # `ast` lists a dict's keys before its values; keep the calls in source order
        self.calls.sort(key=lambda c: _where(c[0]))

    def _children(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        return [(n, scope) for n in _kids(node)]

    def _visit_function(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        self._bind(scope, node.name, node)
        self.local_defs.add(node.name)
        inner = _Scope("function", scope)
        self._bind_params(inner, node.args)
        outer: list[ast.AST] = [*node.decorator_list, node.args]
        if node.returns is not None:
            outer.append(node.returns)
        return [(n, scope) for n in outer] + [(n, inner) for n in node.body]

    def _visit_lambda(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Lambda)
        inner = _Scope("function", scope)
        self._bind_params(inner, node.args)
        return [(node.args, scope), (node.body, inner)]

    def _visit_class(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.ClassDef)
        self._bind(scope, node.name, node)
        self.local_defs.add(node.name)
        inner = _Scope("class", scope)
        heads: list[ast.AST] = [*node.decorator_list, *node.bases, *node.keywords]
        return [(n, scope) for n in heads] + [(n, inner) for n in node.body]

    def _visit_comprehension(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        inner = _Scope("comprehension", scope)
        return [(n, inner) for n in _kids(node)]

    def _visit_comp_for(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.comprehension)
        self._bind_target(scope, node.target, None)
        return self._children(node, scope)

    def _visit_assign(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Assign)
        for target in node.targets:
            self._bind_target(scope, target, node.value)
        if len(node.targets) == 1:
            self._note_assigned(scope, node.targets[0], node.value)
        return self._children(node, scope)

    def _visit_ann_assign(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.AnnAssign)
        if node.value is not None:
            self._bind_target(scope, node.target, node.value)
            self._note_assigned(scope, node.target, node.value)
        return self._children(node, scope)

    def _visit_rebind(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        """`x += 1` and `for x in ...`: a binding whose value fp8lint does not follow."""
        assert isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor))
        self._bind_target(scope, node.target, None)
        return self._children(node, scope)

    def _visit_with(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, (ast.With, ast.AsyncWith))
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(scope, item.optional_vars, None)
        return self._children(node, scope)

    def _visit_named(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.NamedExpr)
        self._bind_target(scope, node.target, node.value)
        return self._children(node, scope)

    def _visit_import(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Import)
        for alias in node.names:
            if alias.asname is not None:
                local = alias.asname
                self.imports[local] = (alias.name, "")
            else:
                local = alias.name.split(".", 1)[0]
                self.imports.setdefault(local, (local, ""))
            self._bind(scope, local, None)
        return []

    def _visit_import_from(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.ImportFrom)
        module = _module_text(node)
        for alias in node.names:
            if alias.name == "*":
                self.star_modules.append(module)
                continue
            local = alias.asname or alias.name
            self.imports[local] = (module, alias.name)
            self._bind(scope, local, None)
        return []

    def _visit_global(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Global)
        scope.globals.update(node.names)
        return []

    def _visit_call(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Call)
        self.calls.append((node, scope))
        return self._children(node, scope)

    def _visit_constant(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Constant)
        if isinstance(node.value, str) and id(node) not in self.skip_strings:
            self.strings.append((node, scope))
        return []

    def _visit_fstring(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.JoinedStr)
        self.skip_strings.update(id(v) for v in node.values)  # the text parts of an f-string
        return self._children(node, scope)

    def _visit_expr(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Expr)
        self.skip_strings.add(id(node.value))  # a docstring or bare string statement
        return self._children(node, scope)

    def _visit_compare(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Compare)
        self.skip_strings.add(id(node.left))  # `name == "preset"` dispatches, not sets
        self.skip_strings.update(id(c) for c in node.comparators)
        return self._children(node, scope)

    def _visit_dict(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Dict)
        self.skip_strings.update(id(k) for k in node.keys if k is not None)
        return self._children(node, scope)

    def _visit_subscript(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, ast.Subscript)
        if not isinstance(node.slice, (ast.Slice, ast.Tuple)):
            self.skip_strings.add(id(node.slice))
        return self._children(node, scope)

    def _visit_sequence(self, node: ast.AST, scope: _Scope) -> list[tuple[ast.AST, _Scope]]:
        assert isinstance(node, (ast.List, ast.Tuple, ast.Set))
        self.skip_strings.update(id(e) for e in node.elts)  # `choices=[...]`
        return self._children(node, scope)

    _VISIT: ClassVar[dict[type, Any]] = {
        ast.FunctionDef: _visit_function,
        ast.AsyncFunctionDef: _visit_function,
        ast.Lambda: _visit_lambda,
        ast.ClassDef: _visit_class,
        ast.ListComp: _visit_comprehension,
        ast.SetComp: _visit_comprehension,
        ast.DictComp: _visit_comprehension,
        ast.GeneratorExp: _visit_comprehension,
        ast.comprehension: _visit_comp_for,
        ast.Assign: _visit_assign,
        ast.AnnAssign: _visit_ann_assign,
        ast.AugAssign: _visit_rebind,
        ast.For: _visit_rebind,
        ast.AsyncFor: _visit_rebind,
        ast.With: _visit_with,
        ast.AsyncWith: _visit_with,
        ast.NamedExpr: _visit_named,
        ast.Import: _visit_import,
        ast.ImportFrom: _visit_import_from,
        ast.Global: _visit_global,
        ast.Call: _visit_call,
        ast.Constant: _visit_constant,
        ast.JoinedStr: _visit_fstring,
        ast.Expr: _visit_expr,
        ast.Compare: _visit_compare,
        ast.Dict: _visit_dict,
        ast.Subscript: _visit_subscript,
        ast.List: _visit_sequence,
        ast.Tuple: _visit_sequence,
        ast.Set: _visit_sequence,
    }

    def _bind(self, scope: _Scope, name: str, value: ast.AST | None) -> None:
        target = self.module_scope if name in scope.globals else scope
        target.bindings.setdefault(name, []).append(_Binding(value, scope))

    def _bind_params(self, scope: _Scope, params: ast.arguments) -> None:
        every = [*params.posonlyargs, *params.args, *params.kwonlyargs]
        every.extend(p for p in (params.vararg, params.kwarg) if p is not None)
        for param in every:
            self._bind(scope, param.arg, None)

    def _bind_target(self, scope: _Scope, target: ast.AST, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self._bind(scope, target.id, value)
        elif isinstance(target, ast.Attribute):
            key = _dotted_text(target)
            if key is not None:
                self.attr_bindings.setdefault(key, []).append(_Binding(value, scope))
            base = _dotted_text(target.value)
            if base is not None and value is not None:
                scope.attr_sets.append(_AttrSet(base, target.attr, target, value))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._bind_target(scope, element, None)
        elif isinstance(target, ast.Starred):
            self._bind_target(scope, target.value, None)

    def _note_assigned(self, scope: _Scope, target: ast.AST, value: ast.AST) -> None:
        key = _dotted_text(target)
        if key is not None and isinstance(value, ast.Call):
            self.assigned_to[id(value)] = (key, scope)

    # -- following names -------------------------------------------------------------------
    def _bindings_of(self, node: ast.AST, scope: _Scope) -> list[_Binding] | None:
        if isinstance(node, ast.Name):
            current: _Scope | None = scope
            while current is not None:
                # a class body's names are not visible from the functions inside it
                if (current is scope or current.kind != "class") and node.id in current.bindings:
                    return current.bindings[node.id]
                current = current.parent
            return None
        key = _dotted_text(node)
        return self.attr_bindings.get(key) if key is not None else None

    def resolve(
        self, node: ast.AST, scope: _Scope
    ) -> tuple[ast.AST, tuple[ast.AST, ...], str | None]:
        """Follow a name bound exactly once; (final expression, values passed, why it stopped)."""
        final, via, why, _scope = self.follow(node, scope)
        return final, via, why

    def follow(
        self, node: ast.AST, scope: _Scope
    ) -> tuple[ast.AST, tuple[ast.AST, ...], str | None, _Scope]:
        """`resolve`, plus the scope the final expression was written in."""
        via: list[ast.AST] = []
        for _ in range(_MAX_FOLLOW):
            if not isinstance(node, (ast.Name, ast.Attribute)):
                break
            bound = self._bindings_of(node, scope)
            if not bound:
                return node, tuple(via), None, scope
            if len(bound) > 1:
                shown = _short(self.text(node))
                return (
                    node,
                    tuple(via),
                    (
                        f"`{shown}` is not a literal fp8lint can read (it is assigned "
                        f"{len(bound)} times)"
                    ),
                    scope,
                )
            value = bound[0].value
            if value is None or isinstance(value, _DEFS):
                return (value or node), tuple(via), None, bound[0].scope
            via.append(value)
            node, scope = value, bound[0].scope
        return node, tuple(via), None, scope

    def literal(self, node: ast.AST) -> tuple[bool, Any]:
        """(True, value) for a literal: numbers, strings, True/False/None, tuples of them."""
        if not _is_literal(node):
            return False, None
        try:
            return True, ast.literal_eval(node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False, None

    def value_of(
        self,
        key: str,
        whole: ast.AST,
        value: ast.expr,
        scope: _Scope,
        span: Span | None = None,
    ) -> _Val:
        """An `Arg` for `key=value` (whole is the text that wrote it), following names."""
        raw = self.text(value)
        final, via_nodes, why = self.resolve(value, scope)
        via = tuple(self.span(v) for v in via_nodes)
        arg_span = span or self.span(whole)
        ok, parsed = self.literal(final)
        return _Val(
            Arg(
                key=key,
                value=parsed if ok else None,
                span=arg_span,
                value_span=self.span(value),
                known=ok,
                raw=raw,
                note=None if ok else why or f"`{_short(raw)}` is not a literal fp8lint can read",
                via=via,
            ),
            final,
        )

    def keywords(self, call: ast.Call, scope: _Scope) -> dict[str, _Val]:
        out: dict[str, _Val] = {}
        for k in call.keywords:
            if k.arg is None:
                continue  # `**kwargs` splats are not read
            out[k.arg] = self.value_of(k.arg, k, k.value, scope)
        return out

    def overrides(self, call: ast.Call) -> list[tuple[str, _Val]]:
        """`p.field = value` after `p = <call>`, in the scope `p` was bound in (bound once)."""
        found = self.assigned_to.get(id(call))
        if found is None:
            return []
        key, scope = found
        if "." in key:
            bound = self.attr_bindings.get(key, [])
        else:
            target = self.module_scope if key in scope.globals else scope
            bound = target.bindings.get(key, [])
        if len(bound) != 1:
            return []
        sets = [s for s in scope.attr_sets if s.base == key]
        counts: dict[str, int] = {}
        for s in sets:
            counts[s.name] = counts.get(s.name, 0) + 1
        out: dict[str, _Val] = {}
        for s in sets:
            dotted = f"{key}.{s.name}"
            val = self.value_of(
                dotted, s.target, s.value, scope, span=self.span_between(s.target, s.value)
            )
            if counts[s.name] > 1:
                val = _Val(
                    replace(
                        val.arg,
                        known=False,
                        value=None,
                        note=f"`{dotted}` is set {counts[s.name]} times; fp8lint "
                        "does not guess which one applies",
                    ),
                    val.node,
                )
            out[s.name] = val
        return list(out.items())

    # -- what a call builds ----------------------------------------------------------------
    def _origin(self, node: ast.AST) -> str:
        parts = _dotted(node) or []
        if not parts:
            return ""
        module, original = self.imports.get(parts[0], ("", ""))
        head = ".".join(p for p in (module, original) if p)
        return ".".join([head or parts[0], *parts[1:]])

    def target(self, call: ast.Call) -> _Target | None:
        callee: ast.expr = call.func
        name = _last_name(callee)
        if name is None:
            return None
        if name in CONFIG_WRAPPERS or (
            isinstance(callee, ast.Name) and self.imports.get(name, ("", ""))[1] in CONFIG_WRAPPERS
        ):
            first = next((a for a in call.args if not isinstance(a, ast.Starred)), None)
            if first is None:
                return None
            callee = first
            name = _last_name(callee)
            if name is None:
                return None
            found = self._named(callee, name)
            return found if found is not None and found.name in CLASSES else None
        return self._named(callee, name)

    def _named(self, callee: ast.expr, name: str) -> _Target | None:
        origin = self._origin(callee)
        if isinstance(callee, ast.Name):
            if name in self.local_defs:
                return None  # the file defines it: not the framework's
            module, original = self.imports.get(name, ("", ""))
            real = original or name
            if real in TE_CLASSES:
                imported = bool(original) and bool(_TE_MODULE.search(module))
                starred = not original and any(_TE_MODULE.search(m) for m in self.star_modules)
                if not (imported or starred):
                    return None
            elif real == TORCHAO_CONVERT:
                imported = bool(original) and TORCHAO in module
                starred = not original and any(TORCHAO in m for m in self.star_modules)
                if not (imported or starred):
                    return None
            name = real
        elif name == TORCHAO_CONVERT and name in self.local_defs and TORCHAO not in origin:
            return None  # `self.convert_to_float8_training(...)`: the file's own method
        if name in CLASSES or name in AUTOCASTS or name in PRESETS or name == TORCHAO_CONVERT:
            return _Target(name, callee, origin)
        return None

    # -- sites ---------------------------------------------------------------------------
    def sites(self) -> list[Fp8Site]:
        targets: list[tuple[ast.Call, _Scope, _Target]] = []
        for call, scope in self.calls:
            found = self.target(call)
            if found is not None:
                targets.append((call, scope, found))

        topology = self._topology([(c, s) for c, s, t in targets if t.name == STRATEGY_CLASS])
        te_calls = {id(c): (c, s, t) for c, s, t in targets if t.name in TE_CLASSES}
        links, unlinked = self._autocasts(
            [(c, s, t) for c, s, t in targets if t.name in AUTOCASTS], te_calls
        )

        out: list[Fp8Site] = []
        for call, scope, tgt in targets:
            if tgt.name in TE_CLASSES:
                site = self._te_site(call, scope, tgt)
                scope_setting = self._amax_scope(call, links.get(id(call), []), unlinked)
                out.append(site.model_copy(update={"amax_scope": scope_setting}))
            elif tgt.name in (NEMO2_CLASS, BRIDGE_CLASS):
                out.append(self._mixed_precision_site(call, scope, tgt, topology))
            elif tgt.name in PRESETS:
                bridge = tgt.name in BRIDGE_ONLY_PRESETS or "bridge" in tgt.origin.lower()
                out.append(
                    self._preset_site(
                        tgt.name, self.text(call.func), call, bridge, topology, self.overrides(call)
                    )
                )
            elif tgt.name in ACCELERATE_CLASSES:
                out.append(self._accelerate_site(call, scope, tgt))
            elif tgt.name == TORCHAO_CONVERT:
                out.append(self._torchao_site(call, scope))
        for node, _scope in self.strings:
            ok, value = self.literal(node)
            if not ok or not isinstance(value, str):
                continue
            name = value.strip().replace("-", "_")
            if name in PRESETS:
                out.append(self._preset_site(name, value, node, True, topology, []))
        te_autocast = any(t.name in AUTOCASTS and self._te_autocast(t) for _c, _s, t in targets)
        return self._te_module_facts(out, te_autocast)

    # -- what the rest of the file does with TE ----------------------------------------------
    def _te_module_facts(self, sites: list[Fp8Site], te_autocast: bool) -> list[Fp8Site]:
        """Set, on the file's TE recipe sites, what the model code around them shows: a
        recompute through `torch.utils.checkpoint` (delayed recipes only) and a TE linear
        used as the output head (when a TE autocast puts it under FP8)."""
        if not any(s.framework is Framework.TE for s in sites):
            return sites
        recompute = self._torch_checkpoint()
        head = self._te_head() if te_autocast else None
        if recompute is None and head is None:
            return sites
        out: list[Fp8Site] = []
        for site in sites:
            updates: dict[str, Setting[Any]] = {}
            if site.framework is Framework.TE:
                if recompute is not None and site.is_delayed:
                    updates["recompute_granularity"] = recompute
                if head is not None:
                    updates["output_head_fp8"] = head
            out.append(site.model_copy(update=updates) if updates else site)
        return out

    def _from(self, callee: ast.AST) -> str | None:
        """The dotted origin of a callee named through an import (or a full module chain);
        None when the file defines its first name itself or it is not a plain dotted name."""
        parts = _dotted(callee)
        if not parts or parts[0] in self.local_defs:
            return None
        return self._origin(callee)

    def _torch_checkpoint(self) -> Setting[str] | None:
        """Full recompute from the file's first `torch.utils.checkpoint.checkpoint(...)` or
        `checkpoint_sequential(...)` call, however imported; TE's own checkpoint is not one."""
        found = [
            call.func for call, _scope in self.calls if self._from(call.func) in TORCH_CHECKPOINTS
        ]
        if not found:
            return None
        first = min(found, key=lambda n: (self.span(n).line, self.span(n).column))
        return Setting[str].model_construct(
            value="full",
            known=True,
            provenance="written",
            key="torch.utils.checkpoint",
            span=self.span(first),
            note=_TORCH_CHECKPOINT_NOTE,
        )

    def _is_te_linear(self, callee: ast.AST) -> bool:
        """`te.Linear`, `transformer_engine.pytorch.Linear`, or `Linear` imported from
        `transformer_engine.pytorch` (and `LayerNormLinear` the same ways)."""
        origin = self._from(callee)
        if origin is None:
            return False
        parts = origin.split(".")
        if parts[-1] not in TE_LINEARS:
            return False
        if parts[0] == "transformer_engine":
            return "pytorch" in parts[1:-1]
        # `te.Linear` with no import of `te` in sight: TE's conventional alias
        return parts[0] == "te" and len(parts) == 2 and "te" not in self.imports

    def _te_head(self) -> Setting[bool] | None:
        """The file's first `<head> = te.Linear(...)`: the output head built as a TE linear."""
        found: list[tuple[ast.Call, str]] = []
        for call, _scope in self.calls:
            assigned = self.assigned_to.get(id(call))
            if assigned is None:
                continue
            target = assigned[0]
            if target.rsplit(".", 1)[-1] in TE_HEAD_TARGETS and self._is_te_linear(call.func):
                found.append((call, target))
        if not found:
            return None
        call, target = min(found, key=lambda f: (self.span(f[0]).line, self.span(f[0]).column))
        return Setting[bool].model_construct(
            value=True,
            known=True,
            provenance="written",
            key=f"{target} = {self.text(call.func)}(...)",
            span=self.span(call),
            note=_TE_HEAD_NOTE,
        )

    def _topology(self, strategies: list[tuple[ast.Call, _Scope]]) -> dict[str, Arg]:
        """The topology keywords of the file's one `MegatronStrategy` (none if several)."""
        if len(strategies) != 1:
            return {}
        call, scope = strategies[0]
        kw = self.keywords(call, scope)
        for name, val in self.overrides(call):
            kw[name] = val
        return {k: kw[k].arg for k in TOPOLOGY_KEYS if k in kw}

    # -- Transformer Engine ----------------------------------------------------------------
    def _te_site(self, call: ast.Call, scope: _Scope, tgt: _Target) -> Fp8Site:
        cls = tgt.name
        call_span = self.span(call)
        kw = self.keywords(call, scope)
        kw.update(self.overrides(call))
        allowed = TE_KEYWORDS[cls]
        invalid: list[SourceNote] = []
        values: dict[str, Setting[Any]] = {
            "enabled": Setting[bool].model_construct(
                value=True, known=True, provenance="derived", key=cls, span=call_span
            ),
            "recipe": Setting[Recipe].model_construct(
                value=TE_CLASSES[cls],
                known=True,
                provenance="written",
                key=cls,
                span=self.span(tgt.callee),
                raw=self.text(tgt.callee),
            ),
        }

        val = kw.get("fp8_format")
        values["fmt"] = (
            self._te_format(val, invalid)
            if val is not None
            else default(TE_DEFAULT_FORMAT[cls], TE, "fp8_format", call_span)
        )

        te_defaults: dict[str, Any] = {}
        if cls == "DelayedScaling":
            te_defaults = {
                "margin": 0,
                "amax_history_len": 1024,
                "amax_compute_algo": AmaxAlgo.MAX,
                "reduce_amax": True,
            }
        for key in ("margin", "amax_history_len", "interval"):
            val = kw.get(key) if key in allowed else None
            if val is not None:
                values[key] = self._te_int(val, invalid)
            elif key in te_defaults:
                values[key] = default(te_defaults[key], TE, key, call_span)
        val = kw.get("amax_compute_algo") if "amax_compute_algo" in allowed else None
        if val is not None:
            values["amax_compute_algo"] = self._te_algo(val, invalid)
        elif "amax_compute_algo" in te_defaults:
            values["amax_compute_algo"] = default(AmaxAlgo.MAX, TE, "amax_compute_algo", call_span)
        for key in ("reduce_amax", "fp8_dpa", "fp8_mha"):
            val = kw.get(key) if key in allowed else None
            if val is not None:
                values[key] = self._te_bool(val, invalid)
            elif key in te_defaults:
                values[key] = default(te_defaults[key], TE, key, call_span)
        val = (
            kw.get("override_linear_precision") if "override_linear_precision" in allowed else None
        )
        if val is not None:
            arg = val.arg
            text = _canonical_text(arg.value) if arg.known else None
            values["override_linear_precision"] = written(arg, text)
        return Fp8Site.model_construct(
            path=self.file.path,
            framework=Framework.TE,
            kind=f"Transformer Engine {cls}(...)",
            span=call_span,
            invalid=invalid,
            edit=self.edit_info(call, TE_KEYS),
            **cast("dict[str, Any]", values),  # keys are Setting fields
        )

    def _unreadable(self, arg: Arg) -> Setting[Any]:
        return Setting[Any].model_construct(
            known=False, span=arg.value_span, key=arg.key, raw=arg.raw
        )

    def _te_int(self, val: _Val, invalid: list[SourceNote]) -> Setting[Any]:
        arg = val.arg
        if not arg.known:
            return written(arg, None)
        value = arg.value
        # an int, or an integral float (pydantic accepts it), within int64
        number = as_int(value) if isinstance(value, (int, float)) else None
        if number is not None:
            return written(arg, number)
        invalid.append(invalid_note(arg, "expected an integer"))
        return self._unreadable(arg)

    def _te_bool(self, val: _Val, invalid: list[SourceNote]) -> Setting[Any]:
        arg = val.arg
        if not arg.known:
            return written(arg, None)
        value = arg.value
        if isinstance(value, bool):
            return written(arg, value)
        if isinstance(value, int) and value in (0, 1):
            return written(arg, bool(value))
        invalid.append(invalid_note(arg, "expected True or False"))
        return self._unreadable(arg)

    def _te_format(self, val: _Val, invalid: list[SourceNote]) -> Setting[Any]:
        arg = val.arg
        parts = _dotted(val.node)
        if parts is not None and len(parts) >= 2 and parts[-2] == "Format":
            member = parts[-1]
            if member.upper() in TE_FORMATS:
                return written(
                    replace(arg, known=True, value=member, note=None), TE_FORMATS[member.upper()]
                )
            invalid.append(invalid_note(arg, "expected Format.HYBRID, Format.E4M3 or Format.E5M2"))
            return self._unreadable(arg)
        if not arg.known:
            return written(arg, None)
        if isinstance(arg.value, str) and arg.value.strip().upper() in TE_FORMATS:
            return written(arg, TE_FORMATS[arg.value.strip().upper()])
        invalid.append(invalid_note(arg, "expected Format.HYBRID, Format.E4M3 or Format.E5M2"))
        return self._unreadable(arg)

    def _te_algo(self, val: _Val, invalid: list[SourceNote]) -> Setting[Any]:
        arg = val.arg
        if arg.known:
            if isinstance(arg.value, str) and arg.value.strip().lower() in ALGOS:
                return written(arg, ALGOS[arg.value.strip().lower()])
            invalid.append(invalid_note(arg, "expected `max`, `most_recent` or a callable"))
            return self._unreadable(arg)
        if isinstance(val.node, _FUNCTIONS):
            return written(
                arg,
                None,
                "custom callable: TE calls it on the amax history, so "
                "fp8lint cannot tell which amax it picks",
            )
        return written(arg, None, f"{arg.note}; it may be a custom callable" if arg.note else None)

    # -- autocast linkage ----------------------------------------------------------------
    def _autocasts(
        self,
        autocasts: list[tuple[ast.Call, _Scope, _Target]],
        te_calls: dict[int, tuple[ast.Call, _Scope, _Target]],
    ) -> tuple[dict[int, list[Setting[Any]]], list[tuple[ast.Call, str]]]:
        """Which recipe each autocast uses, and the amax group it gives it."""
        links: dict[int, list[Setting[Any]]] = {}
        unlinked: list[tuple[ast.Call, str]] = []
        for call, scope, tgt in autocasts:
            te_named = self._te_autocast(tgt)
            args = _call_args(call)
            keyed = {a.keyword: a for a in args if a.keyword is not None}
            if not te_named and not any(k in keyed for k in _RECIPE_KEYS + _GROUP_KEYS):
                continue  # `torch.autocast(...)` and friends
            positional = [a for a in args if a.keyword is None and not a.star]
            recipe_arg = next((keyed[k] for k in _RECIPE_KEYS if k in keyed), None)
            if recipe_arg is None and te_named and len(positional) > 2:
                recipe_arg = positional[2]
            if recipe_arg is None:
                continue  # TE's hardware-dependent default recipe, not one of this file's
            group_arg = next((keyed[k] for k in _GROUP_KEYS if k in keyed), None)
            group_key = "fp8_group" if tgt.name == "fp8_autocast" else "amax_reduction_group"
            if group_arg is None and te_named and len(positional) > 3:
                group_arg = positional[3]
            if group_arg is not None and group_arg.keyword is not None:
                group_key = group_arg.keyword
            setting = self._group(call, scope, group_arg, group_key)
            final, _via, _why = self.resolve(recipe_arg.value, scope)
            if isinstance(final, ast.Call) and id(final) in te_calls:
                links.setdefault(id(final), []).append(setting)
            else:
                unlinked.append((call, _short(self.text(recipe_arg.value))))
        return links, unlinked

    @staticmethod
    def _te_autocast(tgt: _Target) -> bool:
        """`fp8_autocast`, or an `autocast` named through Transformer Engine (not torch's)."""
        return (
            tgt.name == "fp8_autocast"
            or "transformer_engine" in tgt.origin
            or ((_dotted(tgt.callee) or [""])[0] == "te")
        )

    def _group(
        self, call: ast.Call, scope: _Scope, group: _CallArg | None, key: str
    ) -> Setting[Any]:
        if group is None:
            return default(
                AmaxScope.WORLD,
                TE,
                key,
                self.span(call),
                f"no `{key}` given: TE reduces the amax over the world group",
            )
        val = self.value_of(key, group.node, group.value, scope)
        arg, node = val.arg, val.node
        if arg.known and arg.value is None:
            return written(
                arg, AmaxScope.WORLD, "`None` is the world group: every rank shares one amax"
            )
        if isinstance(node, ast.Call):
            name = _last_name(node.func) or ""
            scope_value = GROUP_GETTERS.get(name)
            if scope_value is None and name.endswith("get_data_parallel_group"):
                scope_value = AmaxScope.DP_ONLY
            if scope_value is not None:
                kw = self.keywords(node, scope)
                known = replace(arg, known=True, value=self.text(node), note=None)
                flag_name = (
                    "tp_only_amax_red"
                    if scope_value is AmaxScope.TP_DP_CP
                    else "with_context_parallel"
                    if scope_value is AmaxScope.TP_DP
                    else None
                )
                flag = kw.get(flag_name) if flag_name else None
                if flag is not None:
                    if not flag.arg.known:
                        return written(replace(arg, known=False, note=flag.arg.note), None)
                    if flag.arg.value is True:
                        scope_value = (
                            AmaxScope.TP_CP
                            if scope_value is AmaxScope.TP_DP_CP
                            else AmaxScope.TP_DP_CP
                        )
                return written(known, scope_value)
        return written(
            replace(arg, known=False),
            None,
            f"fp8lint cannot tell which ranks `{_short(arg.raw or '')}` holds",
        )

    def _amax_scope(
        self, call: ast.Call, linked: list[Setting[Any]], unlinked: list[tuple[ast.Call, str]]
    ) -> Setting[Any]:
        call_span = self.span(call)
        if linked:
            first = linked[0]
            known_values = {s.value for s in linked if s.known}
            if len(linked) == 1 or (len(known_values) == 1 and all(s.known for s in linked)):
                extra = tuple(s.span for s in linked[1:] if s.span is not None)
                return first.model_copy(update={"via": first.via + extra})
            narrow = next(
                (
                    s
                    for s in linked
                    if s.known and s.value is not None and s.value.includes_tp is False
                ),
                None,
            )
            pick = narrow or next((s for s in linked if not s.known), first)
            return pick.model_copy(
                update={
                    "note": f"this recipe is used by {len(linked)} autocasts with different amax "
                    "groups" + (f"; {pick.note}" if pick.note else ""),
                }
            )
        if unlinked:
            other, shown = unlinked[0]
            line = self.span(other).line
            return Setting[AmaxScope].model_construct(
                known=False,
                key="fp8_group",
                span=call_span,
                note=f"the autocast on line {line} passes a recipe fp8lint cannot trace "
                f"(`{shown}`), so the amax group of this recipe is unknown",
            )
        return default(
            AmaxScope.WORLD,
            TE,
            "fp8_group",
            call_span,
            "no autocast seen in this file; TE's default group is the world",
        )

    # -- NeMo 2 and Megatron-Bridge ------------------------------------------------------
    def _mixed_precision_site(
        self, call: ast.Call, scope: _Scope, tgt: _Target, topology: dict[str, Arg]
    ) -> Fp8Site:
        kw = {k: v.arg for k, v in self.keywords(call, scope).items()}
        for name, val in self.overrides(call):
            kw[name] = val.arg
        fields: dict[str, Arg] = {}
        for key, arg in kw.items():
            if key == "fp8_params":
                if "fp8_param_gather" not in kw:
                    fields["fp8_param_gather"] = arg
                continue
            fields[key] = arg
        for key, arg in topology.items():
            fields.setdefault(key, arg)
        profile = NEMO2_PROFILE if tgt.name == NEMO2_CLASS else BRIDGE_PROFILE
        profile = replace(profile, edit=self.edit_info(call, MODEL_TO_CONFIG))
        return build_site(fields, profile, self.file.path, self.span(call))

    def _preset_site(
        self,
        name: str,
        written_as: str,
        node: ast.AST,
        bridge: bool,
        topology: dict[str, Arg],
        overrides: Sequence[tuple[str, _Val]],
    ) -> Fp8Site:
        span = self.span(node)
        preset = dict(PRESETS[name])
        if bridge:
            preset.update(_BRIDGE_PRESET_CHANGES.get(name, {}))
        fields = {
            k: Arg(key=written_as, value=v, span=span, value_span=span) for k, v in preset.items()
        }
        overridden: set[str] = set()
        for key, val in overrides:
            real = "fp8_param_gather" if key == "fp8_params" else key
            fields[real] = val.arg
            overridden.add(real)
        for key, arg in topology.items():
            fields.setdefault(key, arg)
        base = BRIDGE_PROFILE if bridge else NEMO2_PROFILE
        kind = (
            f"Megatron-Bridge preset `{written_as}`" if bridge else f"NeMo 2 preset {written_as}()"
        )
        site = build_site(fields, replace(base, kind=kind), self.file.path, span)
        updates: dict[str, Any] = {}
        for key in preset:
            if key in overridden:
                continue
            for model_field in _PRESET_MODEL_FIELDS.get(key, ()):
                setting: Setting[Any] = getattr(site, model_field)
                updates[model_field] = setting.model_copy(
                    update={"provenance": "preset", "raw": None, "key": written_as}
                )
        return site.model_copy(update=updates)

    # -- Accelerate ------------------------------------------------------------------------
    def _accelerate_site(self, call: ast.Call, scope: _Scope, tgt: _Target) -> Fp8Site:
        cls = tgt.name
        call_span = self.span(call)
        kw = self.keywords(call, scope)
        for name, val in self.overrides(call):
            kw[name] = val
        cfg: dict[str, Arg] = {}
        for key, val in kw.items():
            if key not in ACCELERATE_KEYS:
                continue
            arg = val.arg
            if key == "override_linear_precision" and arg.known:
                arg = replace(arg, raw=_canonical_text(arg.value))
            cfg[key] = arg
        if cls == "TERecipeKwargs":
            callee_span = self.span(tgt.callee)
            cfg["backend"] = Arg(
                key="backend",
                value="TE",
                span=callee_span,
                value_span=callee_span,
                note="TERecipeKwargs always builds a Transformer Engine recipe",
            )
        enabled = Setting[bool].model_construct(
            value=True, known=True, provenance="derived", key=cls, span=call_span
        )
        return accelerate.build(
            cfg,
            self.file.path,
            call_span,
            f"Accelerate {cls}(...)",
            enabled,
            edit=self.edit_info(call, accelerate.KEYS),
        )

    # -- torchao float8 training -------------------------------------------------------------
    def _torchao_site(self, call: ast.Call, scope: _Scope) -> Fp8Site:
        call_span = self.span(call)
        args = _call_args(call)
        keyed = {a.keyword: a for a in args if a.keyword is not None}
        splat = next((a for a in args if a.star == "**"), None)
        invalid: list[SourceNote] = []
        values: dict[str, Setting[Any]] = {
            "enabled": Setting[bool].model_construct(
                value=True, known=True, provenance="derived", key=TORCHAO_CONVERT, span=call_span
            ),
        }
        recipe = self._torchao_recipe(call_span, keyed.get("config"), splat, scope, invalid)
        values["recipe"] = recipe
        if recipe.known and isinstance(recipe.value, Recipe):
            tensorwise = recipe.value is Recipe.TENSORWISE
            values["fmt"] = default(
                Fp8Format.HYBRID if tensorwise else Fp8Format.E4M3,
                TORCHAO,
                recipe.key,
                recipe.span,
                "tensorwise casts gradients to E5M2 (E4M3 forward)"
                if tensorwise
                else f"{recipe.value.value} casts every operand to E4M3, gradients included",
            )
        head, router = self._torchao_filter(call_span, keyed.get("module_filter_fn"), splat, scope)
        values["output_head_fp8"] = head
        if self._mentions_moe():
            values["router_fp8"] = router
        return Fp8Site.model_construct(
            path=self.file.path,
            framework=Framework.TORCHAO,
            kind=f"torchao {TORCHAO_CONVERT}(...)",
            span=call_span,
            invalid=invalid,
            **cast("dict[str, Any]", values),  # keys are Setting fields
        )

    def _unknown_at(
        self, arg: _CallArg, key: str, note: str, via: tuple[Span, ...] = ()
    ) -> Setting[Any]:
        return self._written_at(arg, key, None, note, via, known=False)

    def _written_at(
        self,
        arg: _CallArg,
        key: str,
        value: Any,
        note: str,
        via: tuple[Span, ...] = (),
        known: bool = True,
    ) -> Setting[Any]:
        """A setting written by keyword argument `arg` (its value and its whole entry)."""
        return Setting[Any].model_construct(
            value=value,
            known=known,
            provenance="written",
            span=self.span(arg.value),
            key=key,
            raw=self.text(arg.value),
            note=note,
            via=via,
            entry=self.span(arg.node),
        )

    def _torchao_recipe(
        self,
        call_span: Span,
        arg: _CallArg | None,
        splat: _CallArg | None,
        scope: _Scope,
        invalid: list[SourceNote],
    ) -> Setting[Any]:
        """The recipe of `config=`: absent or None is `Float8LinearConfig()`, tensorwise."""
        if arg is None:
            if splat is not None:
                shown = _short(self.text(splat.value))
                return self._unknown_at(splat, "config", f"`config` may come from `**{shown}`")
            return default(
                Recipe.TENSORWISE,
                TORCHAO,
                "config",
                call_span,
                "no `config` given: torchao uses Float8LinearConfig(), which is tensorwise",
            )
        final, via_nodes, why, where = self.follow(arg.value, scope)
        via = tuple(self.span(v) for v in via_nodes)
        ok, value = self.literal(final)
        if ok and value is None:
            return default(
                Recipe.TENSORWISE,
                TORCHAO,
                "config",
                self.span(arg.value),
                "`config=None`: torchao uses Float8LinearConfig(), which is tensorwise",
            )
        if isinstance(final, ast.Call):
            parts = _dotted(final.func) or []
            if parts and parts[0] not in self.local_defs:
                if parts[-1] == TORCHAO_CONFIG:
                    return self._torchao_config(arg, final, via)
                if parts[-2:] == [TORCHAO_CONFIG, "from_recipe_name"]:
                    return self._torchao_recipe_name(arg, final, where, via, invalid)
        shown = _short(self.text(arg.value))
        return self._unknown_at(
            arg, "config", why or f"`{shown}` is not a Float8LinearConfig fp8lint can read", via
        )

    def _torchao_config(self, arg: _CallArg, call: ast.Call, via: tuple[Span, ...]) -> Setting[Any]:
        """`Float8LinearConfig(...)`: tensorwise unless it sets cast configs (or may)."""
        casts = [
            a
            for a in _call_args(call)
            if a.star or a.keyword is None or a.keyword.startswith("cast_config")
        ]
        set_later = [n for n, _ in self.overrides(call) if n.startswith("cast_config")]
        if casts or set_later:
            return self._unknown_at(
                arg,
                "config",
                "this Float8LinearConfig sets its own cast configs; fp8lint reads only the "
                "default config and from_recipe_name(...)",
                via,
            )
        return Setting[Any].model_construct(
            value=Recipe.TENSORWISE,
            known=True,
            provenance="default",
            span=self.span(call),
            key="config",
            default_of=TORCHAO,
            note="Float8LinearConfig() without cast configs is tensorwise",
            via=via,
        )

    def _torchao_recipe_name(
        self,
        arg: _CallArg,
        call: ast.Call,
        scope: _Scope,
        via: tuple[Span, ...],
        invalid: list[SourceNote],
    ) -> Setting[Any]:
        """`Float8LinearConfig.from_recipe_name("rowwise")` (or a `Float8LinearRecipeName`)."""
        args = _call_args(call)
        given = next((a for a in args if a.keyword is None and not a.star), None) or next(
            (a for a in args if a.keyword == "recipe_name"), None
        )
        if given is None:
            return self._unknown_at(arg, "config", "from_recipe_name() names no recipe", via)
        val = self.value_of("recipe_name", given.node, given.value, scope)
        name_arg = replace(val.arg, via=via + val.arg.via)
        parts = _dotted(val.node)
        name: str | None = None
        if parts is not None and len(parts) >= 2 and parts[-2] == TORCHAO_RECIPE_ENUM:
            name = parts[-1].lower()
            name_arg = replace(name_arg, known=True, value=name, note=None)
        elif name_arg.known and isinstance(name_arg.value, str):
            name = name_arg.value
        elif not name_arg.known:
            return written(name_arg, None)
        if name is None or name not in TORCHAO_RECIPES:
            invalid.append(
                invalid_note(name_arg, "expected tensorwise, rowwise or rowwise_with_gw_hp")
            )
            return self._unreadable(name_arg)
        renamed = TORCHAO_RENAMED.get(name)
        note = f"`{name}` is the pre-0.9 name of `{renamed}`" if renamed else None
        return written(name_arg, TORCHAO_RECIPES[name], note)

    def _torchao_filter(
        self, call_span: Span, arg: _CallArg | None, splat: _CallArg | None, scope: _Scope
    ) -> tuple[Setting[Any], Setting[Any]]:
        """Whether `module_filter_fn` leaves the output head, and the MoE router, in FP8."""
        key = "module_filter_fn"
        no_router = "nothing filters the MoE router gate when no module_filter_fn is given"
        if arg is None and splat is not None:
            shown = _short(self.text(splat.value))
            unknown = self._unknown_at(splat, key, f"`{key}` may come from `**{shown}`")
            return unknown, unknown
        if arg is None:
            return (
                default(True, TORCHAO, key, call_span, _NO_FILTER),
                default(True, TORCHAO, key, call_span, no_router),
            )
        final, via_nodes, _why, _where = self.follow(arg.value, scope)
        via = tuple(self.span(v) for v in via_nodes)
        ok, value = self.literal(final)
        if ok and value is None:
            span = self.span(arg.value)
            return (
                default(True, TORCHAO, key, span, _NO_FILTER),
                default(True, TORCHAO, key, span, no_router),
            )
        strings = self._filter_strings(final)
        if strings is None:
            unknown = self._unknown_at(arg, key, _UNREADABLE_FILTER, via)
            return unknown, unknown

        def found(value: bool, note: str) -> Setting[Any]:
            return self._written_at(arg, key, value, note, via)

        heads = sorted({s for s in strings if _names_head(s)})
        head = (
            found(False, "the filter names " + ", ".join(f'"{s}"' for s in heads))
            if heads
            else self._unknown_at(arg, key, _UNREADABLE_FILTER, via)
        )
        routers = sorted({s for s in strings if _names_router(s)})
        router = (
            found(False, "the filter names " + ", ".join(f'"{s}"' for s in routers))
            if routers
            else found(True, "the filter names no router or gate module")
        )
        return head, router

    def _filter_strings(self, node: ast.AST) -> list[str] | None:
        """The string literals of a lambda or `def` filter; None for any other callable."""
        if not isinstance(node, _FUNCTIONS):
            return None
        body: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else [*node.body]
        return [
            n.value
            for part in body
            for n in ast.walk(part)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]

    def _mentions_moe(self) -> bool:
        """Whether a name, or a string without spaces (a module path, not prose), in the file
        names a mixture-of-experts part: router, gate, moe, experts."""
        if self._moe is None:
            self._moe = any(_moe_word(word) for word in _words(self.module))
        return self._moe


def _words(tree: ast.AST) -> Iterator[str]:
    """Every identifier of a tree (names, attributes, definitions, parameters, keywords,
    imports) and every string literal that has no spaces."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.Attribute):
            yield node.attr
        elif isinstance(node, ast.Constant):
            if isinstance(node.value, str) and node.value.split() == [node.value]:
                yield node.value
        elif isinstance(node, (*_DEFS, ast.alias)):
            yield node.name
            if isinstance(node, ast.alias) and node.asname:
                yield node.asname
        elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
            yield node.arg
