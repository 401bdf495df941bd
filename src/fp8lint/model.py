"""The normalized FP8 configuration model.

Every source (YAML, JSON, Python, later shell and TOML) produces `Fp8Site` records; rules
read nothing else.  Each field is a `Setting` that carries its value, where it came from
(the span and the key or flag), and whether it was written in the file or is a framework
default.  This module imports pydantic, so it is only imported once a file has passed the
cheap prefilter.

The models use `defer_build`, and the YAML/JSON/TOML/shell sources, whose values already have
the field types, build records with `model_construct`: linting those files builds no
validator.  Outside input goes through `model_validate`, which builds on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from fp8lint.constructed import Constructed
from fp8lint.diagnostics import Applicability

if TYPE_CHECKING:
    from typing_extensions import Self

T = TypeVar("T")

# frozen records, with the validator built on first use rather than at import
_RECORD = ConfigDict(frozen=True, defer_build=True)


class Span(BaseModel):
    """A region of a source file: 1-based lines and columns, end exclusive; byte offsets."""

    model_config = _RECORD

    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    start_offset: int = 0
    end_offset: int = 0


def _span_maker() -> Callable[[str, int, int, int, int, int, int], Span]:
    """A `Span` builder for the sources' hot path: what `Span.model_construct` does for these
    seven fields, without its per-field loop (a 20,000-file tree builds ~100,000 spans; the
    generic loop was a third of linting the YAML).  It is checked against `model_construct`
    once, at import, and that is used instead if pydantic ever builds models differently."""
    new, put = object.__new__, object.__setattr__
    names = frozenset(Span.model_fields)

    def fast(
        path: str, line: int, column: int, end_line: int, end_column: int, start: int, end: int
    ) -> Span:
        span = new(Span)
        put(
            span,
            "__dict__",
            {
                "path": path,
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
                "start_offset": start,
                "end_offset": end,
            },
        )
        put(span, "__pydantic_fields_set__", set(names))
        put(span, "__pydantic_extra__", None)
        put(span, "__pydantic_private__", None)
        return span

    def generic(
        path: str, line: int, column: int, end_line: int, end_column: int, start: int, end: int
    ) -> Span:
        return Span.model_construct(
            path=path,
            line=line,
            column=column,
            end_line=end_line,
            end_column=end_column,
            start_offset=start,
            end_offset=end,
        )

    probe = ("p", 1, 2, 3, 4, 5, 6)
    made, reference = fast(*probe), generic(*probe)
    same = (
        not Span.__pydantic_post_init__
        and names
        == {"path", "line", "column", "end_line", "end_column"}
        | {
            "start_offset",
            "end_offset",
        }
        and made == reference
        and all(
            getattr(made, slot, None) == getattr(reference, slot, None)
            for slot in BaseModel.__slots__
        )
    )
    return fast if same else generic


make_span = _span_maker()


class Framework:
    """The family names whose semantics rules and the engine ask about (`Fp8Site.framework`).

    A site's `framework` is the name of the family package whose semantics apply to it
    (`fp8lint.frameworks.NAME`): a plain string, so a new family needs no entry here.  Labels
    and everything else about a family live in its `FAMILY` descriptor."""

    TE = "te"
    MEGATRON = "megatron"
    NEMO1 = "nemo1"
    NEMO2 = "nemo2"
    BRIDGE = "bridge"
    ACCELERATE = "accelerate"
    DEEPSPEED_MSAMP = "deepspeed"
    TORCHAO = "torchao"
    # FP8-looking keys of a file no family claims: read by FP8406 only, never fixed
    UNIDENTIFIED = "unidentified"
    LEVANTER = "levanter"
    NANOTRON = "nanotron"
    MAXTEXT = "maxtext"


class Recipe(str, Enum):
    DELAYED = "delayed"
    TENSORWISE = "tensorwise"
    MXFP8 = "mxfp8"
    BLOCKWISE = "blockwise"
    NVFP4 = "nvfp4"
    ROWWISE = "rowwise"
    CUSTOM = "custom"
    MSAMP = "msamp"

    @property
    def per_tensor(self) -> bool:
        """Recipes that put one scale on a whole tensor, so one outlier sets it."""
        return self in (Recipe.DELAYED, Recipe.TENSORWISE)


class Fp8Format(str, Enum):
    E4M3 = "e4m3"
    HYBRID = "hybrid"
    E5M2 = "e5m2"

    @property
    def forward(self) -> str:
        return "e5m2" if self is Fp8Format.E5M2 else "e4m3"

    @property
    def backward(self) -> str:
        return "e4m3" if self is Fp8Format.E4M3 else "e5m2"

    @property
    def max_forward(self) -> float:
        return FP8_MAX[self.forward]

    @property
    def max_backward(self) -> float:
        return FP8_MAX[self.backward]


FP8_MAX: dict[str, float] = {"e4m3": 448.0, "e5m2": 57344.0, "e4m3fnuz": 240.0}


class AmaxAlgo(str, Enum):
    MAX = "max"
    MOST_RECENT = "most_recent"


class AmaxScope(str, Enum):
    """Which ranks share one amax (the all-reduce group of delayed scaling)."""

    TP_DP_CP = "tp-dp-cp"
    TP_DP = "tp-dp"
    TP_CP = "tp-cp"
    TP = "tp"
    WORLD = "world"
    DP_ONLY = "dp-only"
    LOCAL = "local"
    CUSTOM = "custom"

    @property
    def label(self) -> str:
        return {
            "tp-dp-cp": "TP x DP x CP",
            "tp-dp": "TP x DP",
            "tp-cp": "TP x CP",
            "tp": "TP only",
            "world": "the world group",
            "dp-only": "data-parallel only",
            "local": "none (per-rank amax)",
            "custom": "a custom group",
        }[self.value]

    @property
    def includes_tp(self) -> bool | None:
        if self in (AmaxScope.DP_ONLY, AmaxScope.LOCAL):
            return False
        if self is AmaxScope.CUSTOM:
            return None
        return True


Provenance = Literal["written", "default", "preset", "derived", "absent"]


class Setting(Constructed, BaseModel, Generic[T]):
    """One value of the model, with its evidence.

    `value` is the effective value (None when it is unknown: an unresolved interpolation, a
    name bound to something that is not a literal, an environment variable).  `raw` is the
    text as written, when it was written.
    """

    model_config = _RECORD

    value: T | None = None
    known: bool = False
    provenance: Provenance = "absent"
    span: Span | None = None
    key: str = ""
    raw: str | None = None
    default_of: str | None = None
    note: str | None = None
    via: tuple[Span, ...] = ()
    entry: Span | None = None  # the whole `key: value` / `key=value`, for fixes that delete it

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Self:
        """The shared absent value stays itself: pydantic deep-copies a field's default on each
        construct, and `Fp8Site` has fifty of them (frozen, and holding nothing)."""
        if self is _UNSET:
            return self
        return super().__deepcopy__(memo)

    @property
    def written(self) -> bool:
        return self.provenance == "written"

    def describe(self) -> str:
        """How a message names this value: written key or named default."""
        if self.provenance == "default":
            who = self.default_of or "the framework"
            if self.key:
                return f"{who}'s default, no `{self.key}` given"
            return f"{who}'s default"
        if self.provenance == "preset":
            return f"preset `{self.key}`" if self.key else "a named preset"
        if self.key:
            return f"`{self.key}`"
        return "this setting"


@contextmanager
def _origin_left_unbuilt() -> Iterator[None]:
    """Parametrize `Setting` without building `Setting` itself.

    pydantic rebuilds a generic model's origin whenever it parametrizes it, `defer_build` or
    not; that first validator (with pydantic's plugin discovery) is ~10 ms of a one-file lint,
    and nothing validates a bare `Setting`.
    """
    setattr(Setting, "model_rebuild", classmethod(lambda cls, **kwargs: None))  # noqa: B010
    try:
        yield
    finally:
        delattr(Setting, "model_rebuild")


# every parametrization the model and the sources use; pydantic caches them weakly, so they
# are kept here, and the `Fp8Site` annotations below reuse them
with _origin_left_unbuilt():
    _PARAMETRIZED = (
        Setting[Any],
        Setting[bool],
        Setting[int],
        Setting[str],
        Setting[Recipe],
        Setting[Fp8Format],
        Setting[AmaxAlgo],
        Setting[AmaxScope],
    )
_UNSET: Setting[Any] = Setting[Any].model_construct()


def _unset() -> Any:
    """A `Setting` field's default: one shared absent value (frozen), never validated, so
    building an `Fp8Site` does not build any schema.  Not a default factory: pydantic inspects
    a factory's signature on every construct, which made 4,000 YAML documents spend seven of
    their twelve seconds on defaults (`bench/hostile.py`)."""
    return Field(default=_UNSET)


class SourceNote(Constructed, BaseModel):
    """A fact a source found that is not a model value: a misspelled or dead key."""

    model_config = _RECORD

    kind: str
    key: str
    span: Span
    message: str  # one short line: what is wrong and the key
    replacement: str | None = None
    why: str = ""  # the finding's note: why it matters, one short line
    # the framework release that brought the check, `transformer-engine 2.15` (gated on the
    # run's `target-versions`); None: every release fp8lint reads
    since: str | None = None


class PrecisionOverride(Constructed, BaseModel):
    """A per-layer precision choice read from a config that does not set the recipe itself
    (a TE debug-tool feature, a `--te-precision-config-file` matcher): which layers, which
    GEMMs and tensors, and what they run in instead of the recipe's FP8."""

    model_config = _RECORD

    feature: str  # the feature or matcher name as written: `DisableFP8GEMM`, `PerTensorScaling`
    layers: str  # the layer selector, as written: `layer_types: [qkv, fc2]`
    gemms: tuple[str, ...] = ()  # fprop / dgrad / wgrad; empty: every GEMM of the layer
    tensors: tuple[str, ...] = ()  # activation / weight / gradient, where the feature names them
    precision: str  # "high precision", "FP8 per-tensor current scaling", ...
    enabled: bool | None = True
    span: Span


class EditInfo(Constructed, BaseModel):
    """How a fix can write into a site: filled by the source, read only by `fixes`.

    `keys` maps a model field to the key this site spells it with (`--fp8-margin`,
    `fp8_margin`, `margin`); `values` maps every scalar key already written in the site's
    container to its value span (NeMo 1.x spreads the format over two booleans).
    """

    model_config = _RECORD

    syntax: Literal["yaml", "json", "python", "shell"]
    flow: bool = False
    insert_after: Span | None = None
    insert_into: Span | None = None
    indent: str = ""
    keys: dict[str, str] = {}
    values: dict[str, Span] = {}
    # why no fix writes into the container: an edit there would change another key too (a
    # YAML mapping an alias reads), or the text is data (a here-document's body)
    read_only: str | None = None


class Fp8Site(Constructed, BaseModel):
    """One FP8 configuration site: a YAML document, a recipe call, a MODEL_ARGS block."""

    model_config = ConfigDict(arbitrary_types_allowed=True, defer_build=True)

    path: str
    framework: str  # the family whose semantics apply (`Framework` names the common ones)
    # the family whose reader built the site (ms-swift's sites have Megatron's semantics);
    # None: the same as `framework`
    family: str | None = None
    kind: str
    span: Span
    enable_span: Span | None = None
    enabled: Setting[bool] = _unset()
    recipe: Setting[Recipe] = _unset()
    fmt: Setting[Fp8Format] = _unset()
    margin: Setting[int] = _unset()
    amax_history_len: Setting[int] = _unset()
    amax_compute_algo: Setting[AmaxAlgo] = _unset()
    interval: Setting[int] = _unset()
    reduce_amax: Setting[bool] = _unset()
    amax_scope: Setting[AmaxScope] = _unset()
    tp_only_amax_red: Setting[bool] = _unset()
    first_last_layers_bf16: Setting[bool] = _unset()
    num_layers_at_start_in_bf16: Setting[int] = _unset()
    num_layers_at_end_in_bf16: Setting[int] = _unset()
    fp8_wgrad: Setting[bool] = _unset()
    override_linear_precision: Setting[str] = _unset()
    fp8_param_gather: Setting[bool] = _unset()
    fp8_output_proj: Setting[bool] = _unset()
    fp8_dpa: Setting[bool] = _unset()
    fp8_mha: Setting[bool] = _unset()
    fp4: Setting[str] = _unset()
    # which modules run in FP8 (torchao/torchtitan filters; Megatron keeps the head in BF16)
    output_head_fp8: Setting[bool] = _unset()
    router_fp8: Setting[bool] = _unset()
    # activation recompute: "full" / "selective" / None, and Megatron's EP all-to-all overlap
    recompute_granularity: Setting[str] = _unset()
    # the condition recompute runs under, in words ("when `--grad_checkpoint` is given"), and
    # whether anything can make it run (False: every value the file gives the switch is false)
    recompute_condition: Setting[str] = _unset()
    # `autocast(enabled=args.fp8)`: FP8 is on only when the condition holds (a CLI flag)
    enabled_condition: Setting[str] = _unset()
    recompute_reachable: Setting[bool] = _unset()
    moe_a2a_overlap: Setting[bool] = _unset()
    quantizer_factory: Setting[str] = _unset()
    # FP4 besides `fp4` (the format): `--fp4-recipe`, `--fp4-param-gather`, its factory
    fp4_recipe: Setting[str] = _unset()
    fp4_param_gather: Setting[bool] = _unset()
    fp4_quantizer_factory: Setting[str] = _unset()
    # how the optimizer holds the parameters (Megatron's launch checks read them):
    # `--use-distributed-optimizer`; FSDP (`--use-torch-fsdp2` or `--use-megatron-fsdp`);
    # `--optimizer-cpu-offload`; MXFP8 parameter all-gather through the gradient buffer
    distributed_optimizer: Setting[bool] = _unset()
    fsdp: Setting[bool] = _unset()
    optimizer_cpu_offload: Setting[bool] = _unset()
    reuse_grad_buf_for_mxfp8_param_ag: Setting[bool] = _unset()
    # generalized tensor parallelism: the shards of each weight (> TP turns GTP on)
    weight_shards: Setting[int] = _unset()
    expert_weight_shards: Setting[int] = _unset()
    # what selective recompute recomputes (`--recompute-modules`, space-separated names)
    recompute_modules: Setting[str] = _unset()
    # MoE: routing-map padding to the quantized GEMM's alignment, the token dispatcher, one
    # grouped weight for all experts, and batch-invariant mode (BF16 only)
    moe_router_padding: Setting[bool] = _unset()
    moe_token_dispatcher: Setting[str] = _unset()
    moe_single_grouped_weight: Setting[bool] = _unset()
    batch_invariant: Setting[bool] = _unset()
    # MoE all-to-all payloads quantized to MXFP8 (`--moe-dispatch-fwd-dtype`,
    # `--moe-combine-bwd-dtype`), and what consumes them: the flex dispatcher's backend, TE's
    # op fuser, grouped GEMM
    moe_dispatch_fwd_dtype: Setting[str] = _unset()
    moe_combine_bwd_dtype: Setting[str] = _unset()
    moe_flex_backend: Setting[str] = _unset()
    te_op_fuser: Setting[bool] = _unset()
    moe_grouped_gemm: Setting[bool] = _unset()
    # the layer implementation and the inference CUDA-graph scope (Megatron's inference checks)
    transformer_impl: Setting[str] = _unset()
    inference_graph_scope: Setting[str] = _unset()
    # NVFP4's switches (TE `NVFP4BlockScaling` fields, or the `NVTE_NVFP4_*` variables behind
    # their defaults): RHT, stochastic rounding, 2D weight scales, row-scaled activations,
    # 4over6; TE's `NVTE_BACKWARD_OVERRIDE`; blockwise FP32 scales (`NVTE_FP8_BLOCK_SCALING_...`)
    nvfp4_disable_rht: Setting[bool] = _unset()
    nvfp4_disable_sr: Setting[bool] = _unset()
    nvfp4_disable_2d: Setting[bool] = _unset()
    nvfp4_row_scaled: Setting[bool] = _unset()
    nvfp4_4over6: Setting[str] = _unset()
    backward_override: Setting[str] = _unset()
    block_scaling_fp32_scales: Setting[bool] = _unset()
    # overlap of the grad reduce and the param all-gather (also with the optimizer step),
    # virtual pipeline stages, CUDA graphs
    overlap_grad_reduce: Setting[bool] = _unset()
    overlap_param_gather: Setting[bool] = _unset()
    overlap_param_gather_with_optimizer_step: Setting[bool] = _unset()
    virtual_pipeline: Setting[int] = _unset()
    cuda_graph: Setting[bool] = _unset()
    # optimizer (`adam`, `muon`, ...), the precision-aware optimizer and its moments' dtypes,
    # the checkpoint format; packing (THD / padding-free), PEFT (`lora`; unset: full training)
    optimizer: Setting[str] = _unset()
    precision_aware_optimizer: Setting[bool] = _unset()
    exp_avg_dtype: Setting[str] = _unset()
    exp_avg_sq_dtype: Setting[str] = _unset()
    ckpt_format: Setting[str] = _unset()
    packing: Setting[bool] = _unset()
    peft: Setting[str] = _unset()
    # the GPU the file names (the perf launchers' `-g b200`), as written, never from a name
    # (`fp8lint.rule.gpu_sm`); the experts' GEMM backend (AutoModel `model.backend.experts`)
    gpu: Setting[str] = _unset()
    expert_backend: Setting[str] = _unset()
    # topology
    tensor_parallel: Setting[int] = _unset()
    pipeline_parallel: Setting[int] = _unset()
    context_parallel: Setting[int] = _unset()
    expert_parallel: Setting[int] = _unset()
    expert_tensor_parallel: Setting[int] = _unset()
    sequence_parallel: Setting[bool] = _unset()
    world_size: Setting[int] = _unset()
    # shape
    hidden_size: Setting[int] = _unset()
    ffn_hidden_size: Setting[int] = _unset()
    num_attention_heads: Setting[int] = _unset()
    num_query_groups: Setting[int] = _unset()
    num_layers: Setting[int] = _unset()
    gated_mlp: Setting[bool] = _unset()
    num_experts: Setting[int] = _unset()
    # the MoE experts' FFN size (Megatron `--moe-ffn-hidden-size`; unset: the FFN size)
    moe_ffn_hidden_size: Setting[int] = _unset()
    seq_length: Setting[int] = _unset()
    micro_batch_size: Setting[int] = _unset()
    # run length: the planned optimizer steps (`--train-iters`), and whether the run
    # fine-tunes (`--finetune`); the severity policy reads them (short runs, fine-tunes)
    train_steps: Setting[int] = _unset()
    global_batch_size: Setting[int] = _unset()
    fine_tune: Setting[bool] = _unset()
    # findings a source made about keys (misspellings, keys the framework ignores)
    notes: list[SourceNote] = []
    # values a source could not read as the type the field needs (for FP8401)
    invalid: list[SourceNote] = []
    edit: EditInfo | None = None
    # the files (and script lines) an effective configuration was merged from, base first
    layers: list[str] = []
    # per-layer precision choices (TE debug-tool features, TE precision-config matchers)
    precision_overrides: list[PrecisionOverride] = []

    @property
    def is_on(self) -> bool:
        return self.enabled.value is True

    @property
    def is_delayed(self) -> bool:
        return self.recipe.value is Recipe.DELAYED

    @property
    def fp4_on(self) -> bool | None:
        """FP4 on (a TE NVFP4 autocast, or an FP4 format written), off, or unknown."""
        if self.is_on and self.recipe.value is Recipe.NVFP4:
            return True
        if not self.fp4.known:
            return None
        return bool(self.fp4.value)

    @property
    def quantized(self) -> bool:
        """FP8 or FP4 training is on: the site is live."""
        return self.is_on or self.fp4_on is True

    @property
    def active_recipe(self) -> Recipe | None:
        """The recipe in force: FP8's when FP8 is on, else FP4's (NVFP4 or CUSTOM), else None."""
        if self.is_on:
            return self.recipe.value if self.recipe.known else None
        if self.fp4_on is not True:
            return None
        fp4_recipe = self.fp4_recipe
        if not fp4_recipe.known and fp4_recipe.written:
            return None
        name = (fp4_recipe.value or "nvfp4").lower()
        return {"nvfp4": Recipe.NVFP4, "custom": Recipe.CUSTOM}.get(name)

    def anchor(self) -> Span:
        """Where a finding about the whole site points: the line that enabled FP8."""
        return self.enable_span or self.enabled.span or self.span


SETTING_FIELDS: tuple[str, ...] = tuple(
    name for name, info in Fp8Site.model_fields.items() if "Setting" in str(info.annotation)
)


# -- fix plans: what a rule proposes, in model terms (frameworks write them as edits) -------


@dataclass(frozen=True)
class SetValue:
    """Give model field `field` the value `value`: rewrite it where it is written, or add
    the key next to the site's other FP8 settings when it is a default."""

    field: str
    value: Any


@dataclass(frozen=True)
class RemoveEntry:
    """Delete a whole `key: value` entry (a dead or ignored key).  `field` names the model
    field whose value may change with it (it falls back to its default), if any."""

    span: Span
    key: str
    field: str | None = None


@dataclass(frozen=True)
class RenameKey:
    """Rename a misspelled key, keeping its value; `field` is the setting it then sets."""

    span: Span
    old: str
    new: str
    field: str | None = None


FixOp = SetValue | RemoveEntry | RenameKey


@dataclass(frozen=True)
class FixPlan:
    """What a rule proposes, in terms of the model; the site's framework writer turns it into
    text edits in its own syntax.

    A plan that sets a value (a format, a recipe, a history, a margin, a parallel setting)
    changes the training run, so it is never safe: only removals of keys that have no effect
    and renames of misspelled keys may be.  The rule that tries otherwise fails at once."""

    applicability: Applicability
    message: str
    ops: tuple[FixOp, ...] = ()

    def __post_init__(self) -> None:
        if self.applicability is Applicability.SAFE and any(
            isinstance(op, SetValue) for op in self.ops
        ):
            raise ValueError(f"a fix that sets a value changes the run: {self.message!r}")
