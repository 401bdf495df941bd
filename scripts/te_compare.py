#!/usr/bin/env python3
"""Check `fp8lint simulate` against real Transformer Engine delayed scaling, step by step.

What it does
    For each delayed-scaling setting (margin, amax_history_len, amax_compute_algo), it builds
    a fresh `te.Linear`, feeds it a synthetic input stream whose amax follows fp8lint's
    synthetic generator (log-normal with spikes, plus a few all-zero micro-batches that
    exercise the "amax 0 keeps the scale" rule), runs forward under FP8 autocast with a
    `DelayedScaling` recipe and backward with a gradient stream of its own, and after every
    micro-batch reads TE's scales:

      fp8_meta["scaling_fwd"].scale[0]   input    (FP8FwdTensors.GEMM1_INPUT)
      fp8_meta["scaling_fwd"].scale[1]   weight   (FP8FwdTensors.GEMM1_WEIGHT)
      fp8_meta["scaling_bwd"].scale[0]   grad out (FP8BwdTensors.GRAD_OUTPUT1)

    It replays the amaxes it fed (measured on the tensors as TE sees them) through
    `fp8lint.simulate.recurrence.replay` and compares the scales: TE's scale after
    micro-batch k must equal the simulator's scale for micro-batch k + 1, within --rtol
    (TE keeps scales in float32, the simulator in float64).

Requirements
    An NVIDIA GPU with FP8 support (Hopper or newer; Ada works for delayed scaling), PyTorch
    and Transformer Engine (`pip install transformer_engine[pytorch]`), and fp8lint on the
    path (`pip install -e .` from the repository root).  torch and TE are imported only when
    the script runs; the test suite never runs it.

Usage
    python scripts/te_compare.py                       # the default settings below
    python scripts/te_compare.py --setting 0,1,most_recent --setting 2,16,max --steps 300
    python scripts/te_compare.py --format e4m3 --json-out te_compare.json
    NVTE_UNFUSED_FP8_UPDATE=1 python scripts/te_compare.py --unfused   # TE's Python path

Exit status: 0 when every scale matches, 1 when some differ, 2 when the environment cannot
run the check (no GPU, no TE, no FP8 support).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

DEFAULT_SETTINGS = ("0,1,most_recent", "0,1024,max", "1,16,max", "2,4,max", "0,16,most_recent")
SLOTS = (
    ("input", "scaling_fwd", 0),
    ("weight", "scaling_fwd", 1),
    ("grad_output", "scaling_bwd", 0),
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--setting",
        action="append",
        metavar="M,L,ALGO",
        help=f"margin,amax_history_len,amax_compute_algo (repeatable; default {DEFAULT_SETTINGS})",
    )
    p.add_argument("--format", choices=("hybrid", "e4m3"), default="hybrid")
    p.add_argument("--steps", type=int, default=200, help="micro-batches per setting")
    p.add_argument("--spread", type=float, default=0.5, help="std of log2 amax (binades)")
    p.add_argument("--spike-size", type=float, default=4.0)
    p.add_argument("--spike-rate", type=float, default=0.03)
    p.add_argument(
        "--zero-every", type=int, default=37, help="all-zero micro-batch period (0: none)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--features", type=int, default=128, help="in = out features (multiple of 16)")
    p.add_argument("--tokens", type=int, default=32, help="rows per micro-batch (multiple of 16)")
    p.add_argument("--rtol", type=float, default=1e-5)
    p.add_argument("--unfused", action="store_true", help="simulate TE's unfused (Python) update")
    p.add_argument("--json-out", help="write every step's scales to this JSON file")
    return p.parse_args(argv)


def amax_streams(args: argparse.Namespace) -> tuple[list[float], list[float]]:
    """Target amaxes for the input (forward) and the output gradient (backward)."""
    from fp8lint.simulate.traces import SyntheticSpec, synthetic

    spec = SyntheticSpec(
        steps=args.steps,
        spread=args.spread,
        spike_size=args.spike_size,
        spike_rate=args.spike_rate,
        seed=args.seed,
    )
    fwd, bwd = (t.amax for t in synthetic(spec).tensors)
    if args.zero_every > 0:
        for k in range(args.zero_every - 1, args.steps, args.zero_every):
            fwd[k] = 0.0
            bwd[k] = 0.0
    return list(fwd), list(bwd)


def run_te(args: argparse.Namespace, setting: tuple[int, int, str]) -> dict[str, Any]:
    import torch
    import transformer_engine.pytorch as te
    from transformer_engine.common.recipe import DelayedScaling, Format

    margin, history, algo = setting
    fmt = Format.HYBRID if args.format == "hybrid" else Format.E4M3
    recipe = DelayedScaling(
        margin=margin, fp8_format=fmt, amax_history_len=history, amax_compute_algo=algo
    )
    if hasattr(te, "autocast"):  # TE >= 2.9

        def fp8_region() -> Any:
            return te.autocast(enabled=True, recipe=recipe)
    else:

        def fp8_region() -> Any:
            return te.fp8_autocast(enabled=True, fp8_recipe=recipe)

    torch.manual_seed(args.seed)
    layer = te.Linear(args.features, args.features, bias=False, params_dtype=torch.bfloat16)
    layer = layer.cuda()
    fwd_targets, bwd_targets = amax_streams(args)
    measured: dict[str, list[float]] = {name: [] for name, _, _ in SLOTS}
    te_scales: dict[str, list[float]] = {name: [] for name, _, _ in SLOTS}
    weight_amax = float(layer.weight.detach().abs().max().float())
    shape = (args.tokens, args.features)
    for a_in, a_grad in zip(fwd_targets, bwd_targets, strict=True):
        x = _with_amax(torch, shape, a_in).requires_grad_(True)
        g = _with_amax(torch, shape, a_grad)
        measured["input"].append(float(x.detach().abs().max().float()))
        measured["grad_output"].append(float(g.abs().max().float()))
        measured["weight"].append(weight_amax)
        with fp8_region():
            y = layer(x)
        y.backward(g)
        torch.cuda.synchronize()
        for name, key, index in SLOTS:
            te_scales[name].append(float(layer.fp8_meta[key].scale[index]))
        layer.weight.grad = None
    return {"measured": measured, "te": te_scales}


def _with_amax(torch: Any, shape: tuple[int, int], amax: float) -> Any:
    """A bf16 CUDA tensor whose largest magnitude is `amax` (all zeros when amax is 0)."""
    r = torch.randn(shape, device="cuda", dtype=torch.float32)
    if amax == 0.0:
        return torch.zeros(shape, device="cuda", dtype=torch.bfloat16)
    return (r / r.abs().max() * amax).to(torch.bfloat16)


def compare(
    args: argparse.Namespace, setting: tuple[int, int, str], te_run: dict[str, Any]
) -> dict[str, Any]:
    from fp8lint.simulate.recurrence import DelayedSetting, fp8_max, replay

    s = DelayedSetting(*setting)
    out: dict[str, Any] = {"setting": list(setting), "slots": {}}
    for name, key, _ in SLOTS:
        backward = key == "scaling_bwd"
        amax = te_run["measured"][name]
        # a trailing zero amax changes nothing and exposes the scale after the last update
        sim = replay([*amax, 0.0], s, fp8_max(args.format, backward), unfused=args.unfused)
        sim_after = sim.scale[1:]
        rows = []
        worst = 0.0
        for k, (t, m) in enumerate(zip(te_run["te"][name], sim_after, strict=True)):
            rel = abs(t - m) / max(abs(m), 1e-30)
            worst = max(worst, rel)
            rows.append({"step": k, "amax": amax[k], "te_scale": t, "sim_scale": m, "rel": rel})
        bad = [r for r in rows if not r["rel"] <= args.rtol]
        out["slots"][name] = {
            "worst_rel_diff": worst,
            "mismatches": len(bad),
            "first_mismatches": bad[:5],
            "clipped_micro_batches": len(sim.clipped),
            "steps": rows,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import torch
        import transformer_engine.pytorch as te
    except ImportError as exc:
        print(f"te_compare: cannot import torch / Transformer Engine: {exc}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("te_compare: no CUDA device", file=sys.stderr)
        return 2
    try:
        from transformer_engine.pytorch.quantization import FP8GlobalStateManager
    except ImportError:  # TE < 2.9
        from transformer_engine.pytorch.fp8 import FP8GlobalStateManager
    ok, why = FP8GlobalStateManager.is_fp8_available()
    if not ok:
        print(f"te_compare: FP8 not available on this device: {why}", file=sys.stderr)
        return 2
    if args.unfused and os.environ.get("NVTE_UNFUSED_FP8_UPDATE") != "1":
        print(
            "te_compare: --unfused needs NVTE_UNFUSED_FP8_UPDATE=1 in the environment",
            file=sys.stderr,
        )
        return 2
    print(
        f"torch {torch.__version__}, Transformer Engine {getattr(te, '__version__', '?')}, "
        f"{torch.cuda.get_device_name()}"
    )
    results = []
    failed = False
    for text in args.setting or DEFAULT_SETTINGS:
        m, h, algo = text.split(",")
        setting = (int(m), int(h), algo.strip())
        if hasattr(FP8GlobalStateManager, "reset"):
            FP8GlobalStateManager.reset()
        result = compare(args, setting, run_te(args, setting))
        results.append(result)
        parts = []
        for name, slot in result["slots"].items():
            failed |= slot["mismatches"] > 0
            parts.append(
                f"{name}: {slot['mismatches']} mismatches, worst rel {slot['worst_rel_diff']:.1e}, "
                f"{slot['clipped_micro_batches']} clipped"
            )
        print(f"margin {setting[0]}, history {setting[1]}, {setting[2]}: " + "; ".join(parts))
        for name, slot in result["slots"].items():
            for r in slot["first_mismatches"]:
                print(
                    f"    {name} step {r['step']}: amax {r['amax']:.6g} TE {r['te_scale']:.9g} "
                    f"sim {r['sim_scale']:.9g}"
                )
    if args.json_out:
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump({"format": args.format, "rtol": args.rtol, "results": results}, fh, indent=1)
    print("MATCH" if not failed else "MISMATCH")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
