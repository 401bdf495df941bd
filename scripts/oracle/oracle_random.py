"""The seeded random set: combinations of the FP8/FP4 knobs over the same small model, in
the four surfaces.  The same --seed and --count give the same files.

The draws lean on what users write and what goes wrong: the right words in the wrong case,
numbers as floats or strings, recipes with the format they need or not, FP8 weights with and
without a distributed optimizer, BF16 layer counts around num-layers / PP, FP4 beside FP8,
MoE router padding with each dispatcher, and TE recipe arguments of the wrong type.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TypeVar

from oracle_cases import (
    LAUNCH,
    MODEL_CONFIG,
    MOE_FIELDS,
    MOE_FLAGS,
    TE_RECIPE,
    TRANSFORMER_CONFIG,
    Case,
    Knobs,
    Value,
    render,
    yaml_scalar,
)

T = TypeVar("T")
SURFACE_WEIGHTS = ((LAUNCH, 35), (MODEL_CONFIG, 25), (TRANSFORMER_CONFIG, 22), (TE_RECIPE, 18))
FACTORY8 = "oracle_quantizers.fp8_factory"
FACTORY4 = "oracle_quantizers.fp4_factory"
ABSENT = object()  # a draw that leaves the knob out

# (value, weight); ABSENT leaves the knob at its default
FP8_FORMATS: Sequence[tuple[object, int]] = (
    ("hybrid", 30),
    ("e4m3", 30),
    ("HYBRID", 6),
    ("E4M3", 6),
    ("Hybrid", 3),
    ("e5m2", 3),
)
FP8_RECIPES: Sequence[tuple[object, int]] = (
    (ABSENT, 20),
    ("delayed", 15),
    ("tensorwise", 20),
    ("mxfp8", 20),
    ("blockwise", 10),
    ("custom", 6),
    ("Delayed", 3),
    ("MXFP8", 3),
    ("current", 2),
    ("nvfp4", 1),
)
AMAX_ALGOS: Sequence[tuple[object, int]] = (
    (ABSENT, 50),
    ("max", 25),
    ("most_recent", 15),
    ("MAX", 4),
    ("Max", 2),
    ("mean", 2),
)
MARGINS: Sequence[tuple[object, int]] = (
    (ABSENT, 55),
    (0, 15),
    (1, 10),
    (2, 8),
    (0.5, 4),
    ("1.0", 3),
    (-1, 2),
)
HISTORIES: Sequence[tuple[object, int]] = (
    (ABSENT, 45),
    (1, 10),
    (16, 15),
    (1024, 15),
    (16.0, 4),
    ("16", 3),
    (16.5, 3),
    (0, 2),
)
INTERVALS: Sequence[tuple[object, int]] = ((ABSENT, 85), (1, 8), (2, 5), (1.5, 2))
BF16_COUNTS: Sequence[tuple[object, int]] = (
    (ABSENT, 30),
    (0, 10),
    (1, 25),
    (2, 15),
    (3, 8),
    (5, 5),
    (-1, 3),
    (1.5, 2),
    ("1", 2),
)
FP4_FORMATS: Sequence[tuple[object, int]] = (("e2m1", 80), ("E2M1", 10), ("nvfp4", 5), ("fp4", 3))
FP4_RECIPES: Sequence[tuple[object, int]] = (
    (ABSENT, 45),
    ("nvfp4", 30),
    ("custom", 12),
    ("NVFP4", 6),
    ("mxfp4", 5),
)
NOT_FLAGS = (
    "--fp8-hybrid",
    "--fp8-e4m3",
    "--fp8-dot-product-attention",
    "--fp8-multi-head-attention",
    "--tp-only-amax-red",
)


def pick(rng: random.Random, table: Sequence[tuple[object, int]]) -> object:
    values = [v for v, _ in table]
    weights = [w for _, w in table]
    return rng.choices(values, weights)[0]


def chance(rng: random.Random, p: float) -> bool:
    return rng.random() < p


def put(knobs: Knobs, key: str, value: object) -> None:
    if value is not ABSENT:
        knobs[key] = value  # type: ignore[assignment]


def _layout(rng: random.Random) -> tuple[int, int, int]:
    """(num_layers, pipeline size, tensor size); at most 8 ranks in all."""
    layers = rng.choice((2, 4, 4, 8))
    pp = rng.choice([p for p in (1, 1, 1, 2, 4) if layers % p == 0 and p <= layers])
    tp = rng.choice((1, 1, 2))
    return layers, pp, tp


def cli_knobs(rng: random.Random, model_config: bool) -> Knobs:
    k: Knobs = {}
    layers, pp, tp = _layout(rng)
    if layers != 4:
        k["--num-layers"] = layers
    if pp > 1:
        k["--pipeline-model-parallel-size"] = pp
    if tp > 1:
        k["--tensor-model-parallel-size"] = tp
        if chance(rng, 0.5):
            k["--sequence-parallel"] = True
    mode = pick(rng, (("fp8", 70), ("fp4", 15), ("both", 5), ("none", 10)))
    if mode in ("fp8", "both"):
        put(k, "--fp8-format", pick(rng, FP8_FORMATS))
        recipe = pick(rng, FP8_RECIPES)
        put(k, "--fp8-recipe", recipe)
        if recipe == "custom" and chance(rng, 0.7):
            k["--fp8-quantizer-factory"] = FACTORY8
        put(k, "--fp8-amax-compute-algo", pick(rng, AMAX_ALGOS))
        put(k, "--fp8-margin", pick(rng, MARGINS))
        put(k, "--fp8-amax-history-len", pick(rng, HISTORIES))
        put(k, "--fp8-interval", pick(rng, INTERVALS))
        if chance(rng, 0.1):
            k["--no-fp8-wgrad"] = True
        if chance(rng, 0.08):
            k["--fp8-output-proj"] = True
    if mode in ("fp4", "both"):
        put(k, "--fp4-format", pick(rng, FP4_FORMATS))
        recipe = pick(rng, FP4_RECIPES)
        put(k, "--fp4-recipe", recipe)
        if recipe == "custom" and chance(rng, 0.7):
            k["--fp4-quantizer-factory"] = FACTORY4
    if chance(rng, 0.25):
        k["--fp8-param-gather"] = True
    if chance(rng, 0.08 if mode != "fp4" else 0.4):
        k["--fp4-param-gather"] = True
    if chance(rng, 0.75 if "--fp8-param-gather" in k else 0.4):
        k["--use-distributed-optimizer"] = True
    if chance(rng, 0.25):
        k["--first-last-layers-bf16"] = True
        put(k, "--num-layers-at-start-in-bf16", pick(rng, BF16_COUNTS))
        put(k, "--num-layers-at-end-in-bf16", pick(rng, BF16_COUNTS))
    if chance(rng, 0.3):
        k.update(MOE_FLAGS)
        k["--moe-token-dispatcher-type"] = rng.choice(("alltoall", "alltoall", "allgather"))
        if chance(rng, 0.4):
            k["--moe-router-padding-for-quantization"] = True
        elif chance(rng, 0.15):
            k["--moe-router-padding-for-fp8"] = True
        if chance(rng, 0.4):
            k["--moe-grouped-gemm"] = True
    if chance(rng, 0.08):
        k["--recompute-granularity"] = "selective"
        modules = ["layernorm"]
        if "--moe-grouped-gemm" in k and chance(rng, 0.5):
            modules.append("moe_act")
        k["--recompute-modules"] = modules
    if chance(rng, 0.06):
        k[rng.choice(NOT_FLAGS)] = True
    if model_config and chance(rng, 0.04):
        k[
            rng.choice(("--use-distributed-optimizer", "--fp8-param-gather", "--sequence-parallel"))
        ] = False
    return k


def tc_knobs(rng: random.Random) -> Knobs:
    k: Knobs = {}
    layers, pp, tp = _layout(rng)
    if layers != 4:
        k["num_layers"] = layers
    if pp > 1:
        k["pipeline_model_parallel_size"] = pp
        k["pipeline_dtype"] = "bfloat16"
    if tp > 1:
        k["tensor_model_parallel_size"] = tp
    mode = pick(rng, (("fp8", 70), ("fp4", 15), ("both", 5), ("none", 10)))
    if mode in ("fp8", "both"):
        fmt = pick(rng, (*FP8_FORMATS, (True, 3), ("", 2)))
        put(k, "fp8", fmt)
        recipe = pick(rng, FP8_RECIPES)
        put(k, "fp8_recipe", recipe)
        if recipe == "custom" and chance(rng, 0.7):
            k["fp8_quantizer_factory"] = FACTORY8
        put(k, "fp8_amax_compute_algo", pick(rng, AMAX_ALGOS))
        put(k, "fp8_margin", pick(rng, MARGINS))
        put(k, "fp8_amax_history_len", pick(rng, HISTORIES))
        for name in (
            "fp8_wgrad",
            "fp8_dot_product_attention",
            "fp8_multi_head_attention",
            "tp_only_amax_red",
        ):
            if chance(rng, 0.1):
                k[name] = rng.choice((True, False))
        if chance(rng, 0.06):
            k["fp8_output_proj"] = True
    if mode in ("fp4", "both"):
        put(k, "fp4", pick(rng, (*FP4_FORMATS, (True, 3))))
        recipe = pick(rng, FP4_RECIPES)
        put(k, "fp4_recipe", recipe)
        if recipe == "custom" and chance(rng, 0.7):
            k["fp4_quantizer_factory"] = FACTORY4
    if chance(rng, 0.2):
        k["fp8_param"] = True
    if chance(rng, 0.08 if mode != "fp4" else 0.4):
        k["fp4_param"] = True
    if chance(rng, 0.25):
        k["first_last_layers_bf16"] = True
        put(k, "num_layers_at_start_in_bf16", pick(rng, BF16_COUNTS))
        put(k, "num_layers_at_end_in_bf16", pick(rng, BF16_COUNTS))
    if chance(rng, 0.25):
        k.update(MOE_FIELDS)
        k["moe_token_dispatcher_type"] = rng.choice(("alltoall", "alltoall", "allgather"))
        if chance(rng, 0.5):
            k["moe_router_padding_for_quantization"] = True
    return k


TE_FORMATS: Sequence[tuple[object, int]] = (
    ("Format.HYBRID", 30),
    ("Format.E4M3", 30),
    ("Format.E5M2", 6),
    ('"hybrid"', 3),
    ("Format.E2M1", 2),
)
BACKWARD: Sequence[tuple[object, int]] = (
    ("None", 20),
    ('"high_precision"', 8),
    ('"dequantized"', 8),
    ('"fp32"', 2),
    ('"HIGH_PRECISION"', 2),
)
BOOLS: Sequence[tuple[object, int]] = (("True", 10), ("False", 10), ('"yes"', 1), ("2", 1))
MM: Sequence[tuple[object, int]] = (
    ("MMParams()", 5),
    ("MMParams(use_split_accumulator=True)", 5),
    ("MMParams(use_split_accumulator=False)", 3),
)
TE_POOLS: dict[str, dict[str, Sequence[tuple[object, int]]]] = {
    "DelayedScaling": {
        "fp8_format": TE_FORMATS,
        "margin": (("0", 10), ("1", 8), ("2", 5), ("0.5", 2), ("-1", 1), ('"1"', 1)),
        "amax_history_len": (("1", 5), ("16", 8), ("1024", 8), ("16.5", 2), ("0", 1)),
        "amax_compute_algo": (('"max"', 10), ('"most_recent"', 8), ('"MAX"', 2), ('"mean"', 1)),
        "reduce_amax": BOOLS,
        "fp8_dpa": BOOLS,
        "fp8_mha": BOOLS,
        "backward_override": BACKWARD,
    },
    "Float8CurrentScaling": {
        "fp8_format": TE_FORMATS,
        "fp8_dpa": BOOLS,
        "fp8_mha": BOOLS,
        "backward_override": BACKWARD,
        "fp8_gemm_fprop": MM,
    },
    "MXFP8BlockScaling": {
        "fp8_format": TE_FORMATS,
        "margin": (("0", 10), ("1", 3), ("0.5", 1)),
        "fp8_dpa": BOOLS,
        "backward_override": BACKWARD,
        "enable_2d_quantization": BOOLS,
    },
    "Float8BlockScaling": {
        "fp8_format": TE_FORMATS,
        "x_block_scaling_dim": (("1", 10), ("2", 6), ("3", 1)),
        "w_block_scaling_dim": (("1", 6), ("2", 10), ("0", 1)),
        "grad_block_scaling_dim": (("1", 10), ("2", 4)),
        "fp8_gemm_fprop": MM,
        "fp8_gemm_wgrad": MM,
        "fp8_dpa": (("False", 10), ("True", 3)),
        "fp8_mha": (("False", 10), ("True", 2)),
        "backward_override": BACKWARD,
    },
    "NVFP4BlockScaling": {
        "fp4_format": (("Format.E2M1", 10), ("Format.E4M3", 2)),
        "fp8_format": (("Format.E4M3", 10), ("Format.HYBRID", 2)),
        "nvfp4_4over6": (('"none"', 5), ('"weights"', 5), ('"all"', 3), ('"both"', 1)),
        "nvfp4_4over6_err_mode": (('"MAE"', 5), ('"MSE"', 5), ('"mae"', 1)),
        "disable_rht": BOOLS,
        "backward_override": BACKWARD,
    },
    "CustomRecipe": {
        "quantization_alignment": (("128", 5), ("32", 5), ("0", 2), ("-1", 1)),
        "fp8_format": TE_FORMATS,
        "backward_override": BACKWARD,
    },
}


def te_source(rng: random.Random) -> str:
    cls = rng.choice(list(TE_POOLS))
    pool = TE_POOLS[cls]
    names = rng.sample(list(pool), k=min(len(pool), rng.randint(1, 4)))
    args = [f"{name}={pick(rng, pool[name])}" for name in sorted(names)]
    if cls == "CustomRecipe":
        args.insert(0, "qfactory=qfactory")
    return f"recipe = {cls}({', '.join(args)})"


def label_of(knobs: Knobs | str) -> str:
    """The knobs in one line: flags as on a command line, fields as `key=value`."""
    if isinstance(knobs, str):
        return knobs.split("=", 1)[1].strip()
    parts = []
    for key, value in knobs.items():
        if not key.startswith("--"):
            parts.append(f"{key}={yaml_scalar(value)}")
        elif value is True:
            parts.append(key)
        elif isinstance(value, list):
            parts.append(f"{key} {' '.join(value)}")
        else:
            parts.append(f"{key} {yaml_scalar(value)}")
    return " ".join(parts)


def random_cases(seed: int, count: int) -> list[Case]:
    rng = random.Random(seed)
    surfaces = [s for s, _ in SURFACE_WEIGHTS]
    weights = [w for _, w in SURFACE_WEIGHTS]
    cases: list[Case] = []
    for n in range(1, count + 1):
        surface = rng.choices(surfaces, weights)[0]
        knobs: Knobs | str
        if surface == TE_RECIPE:
            knobs = te_source(rng)
        elif surface == TRANSFORMER_CONFIG:
            knobs = tc_knobs(rng)
        else:
            knobs = cli_knobs(rng, surface == MODEL_CONFIG)
        title = f"oracle random case {n} (seed {seed})"
        shown: dict[str, Value] = {"source": knobs} if isinstance(knobs, str) else knobs
        cases.append(
            Case(
                id=f"random-{n:04d}-{surface}",
                surface=surface,
                text=render(surface, knobs, title),
                label=label_of(knobs),
                knobs=shown,
            )
        )
    return cases
