"""`fp8lint simulate`: replay an amax trace through a delayed-scaling recipe.

The recurrence is Transformer Engine's (see `fp8lint.simulate.recurrence`); the inputs are
described in `fp8lint.simulate.traces`; the summaries, the sweep and the renderers are in
`fp8lint.simulate.report`.  This module only holds the command line, and imports nothing
heavy: `fp8lint.cli` imports it to build its parser.

Exit codes: 0 when the recipe clips nothing on the trace, 1 when it clips at least one
micro-batch, 2 on usage or input errors (a missing `simulate` extra included: the replay
needs numpy and pyarrow, which the `simulate` extra brings: `pip install -e '.[simulate]'`
in a checkout).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

ALGO_CHOICES = ("most_recent", "max")
FORMAT_CHOICES = ("hybrid", "e4m3", "e5m2")


def te_defaults() -> dict[str, Any]:
    """Transformer Engine's `DelayedScaling()` defaults (`frameworks.te`, where they are
    written once), used when neither --config nor a flag says; imported only when needed."""
    from fp8lint.frameworks.shared.te_recipes import delayed_defaults

    te = delayed_defaults()

    return {
        "margin": te["margin"],
        "history": te["amax_history_len"],
        "algo": te["amax_compute_algo"],
        "fmt": te["fp8_format"].lower(),
    }


class SimulateError(Exception):
    """A usage or input problem: printed as `fp8lint: error: ...`, exit 2."""


def configure_parser(parser: argparse.ArgumentParser) -> None:
    """The arguments of `fp8lint simulate`."""
    parser.description = (
        "Replay an amax trace through Transformer Engine's delayed-scaling recurrence: count "
        "the micro-batches that clip, what they lose, the binades lost at the bottom, and "
        "sweep margin x history x algorithm for the cheapest setting that clips nothing. "
        "Exit 0 when nothing clips, 1 when something does, 2 on errors. "
        "Needs numpy and pyarrow: install the simulate extra "
        "(in a checkout: pip install -e '.[simulate]')."
    )
    parser.add_argument(
        "trace",
        nargs="?",
        metavar="TRACE",
        help="amax trace: CSV (step,tensor,amax[,pass]), JSON list of {step, tensor, amax}, "
        "or a TE debug statistics log with cur_amax lines",
    )
    parser.add_argument(
        "--input-format",
        choices=("auto", "csv", "json", "te-log"),
        default="auto",
        help="trace format (default: from the extension, then the content)",
    )
    parser.add_argument(
        "--pass",
        dest="pass_",
        choices=("auto", "fwd", "bwd"),
        default="auto",
        help="pass of every tensor (default auto: a pass column, else a :fwd/:bwd/:grad name "
        "suffix, else bwd when the name contains `grad`)",
    )
    recipe = parser.add_argument_group(
        "recipe",
        "read from --config, each flag overriding it; without --config, flags not "
        "given take Transformer Engine's DelayedScaling defaults (0, 1024, max, hybrid)",
    )
    recipe.add_argument(
        "--config",
        metavar="FILE",
        help="a config fp8lint reads; its first delayed-scaling site gives the recipe",
    )
    recipe.add_argument("--margin", type=int, help="margin (binades of headroom)")
    recipe.add_argument(
        "--history", "--amax-history-len", dest="history", type=int, help="amax_history_len"
    )
    recipe.add_argument(
        "--algo", "--amax-compute-algo", dest="algo", choices=ALGO_CHOICES, help="amax_compute_algo"
    )
    recipe.add_argument(
        "--fp8-format",
        "--format",  # the old spelling, kept working; it read like an output format
        dest="fmt",
        choices=FORMAT_CHOICES,
        help="FP8 format: hybrid = E4M3 forward (448), E5M2 backward (57344)",
    )
    recipe.add_argument(
        "--fnuz",
        action="store_true",
        help="AMD fnuz types (MI300): E4M3 max 240 instead of 448",
    )
    synth = parser.add_argument_group(
        "synthetic trace",
        "instead of TRACE: log2 amax = log2 base + drift*k/steps + spread*N(0,1), times "
        "spike-size with probability spike-rate; one forward and one backward tensor",
    )
    synth.add_argument("--synthetic", action="store_true", help="generate the trace")
    synth.add_argument("--steps", type=int, default=2000, help="micro-batches (default 2000)")
    synth.add_argument(
        "--spread", type=float, default=0.1, help="std of log2 amax, in binades (default 0.1)"
    )
    synth.add_argument(
        "--drift", type=float, default=0.0, help="binades of drift over the trace (default 0)"
    )
    synth.add_argument("--spike-size", type=float, default=4.0, help="spike factor g (default 4)")
    synth.add_argument(
        "--spike-rate", type=float, default=0.002, help="spikes per micro-batch (default 0.002)"
    )
    synth.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--output-format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--plot",
        metavar="PNG",
        help="write a plot of amax, 2^margin x reference amax and the clipped steps "
        "(needs matplotlib: the plot extra, pip install -e '.[plot]' in a checkout)",
    )
    parser.add_argument(
        "--no-sweep", action="store_true", help="skip the margin x history x algo sweep"
    )


def main(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except SimulateError as exc:
        print(f"fp8lint: error: {exc}", file=sys.stderr)
        return 2


EXTRA_HINT = "install the simulate extra (in a checkout: pip install -e '.[simulate]')"


def _require_extra() -> None:
    """numpy and pyarrow come with the `simulate` extra; `check` never imports them."""
    try:
        import numpy  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as exc:
        raise SimulateError(
            f"`fp8lint simulate` needs numpy and pyarrow ({exc.name or 'one'} is missing): "
            f"{EXTRA_HINT}"
        ) from None


def _run(args: argparse.Namespace) -> int:
    _require_extra()
    from fp8lint.simulate import report
    from fp8lint.simulate.recurrence import DelayedSetting
    from fp8lint.simulate.traces import SyntheticSpec, TraceError, load, synthetic

    if args.synthetic == (args.trace is not None):
        raise SimulateError("give a TRACE file or --synthetic (exactly one)")
    if args.plot:
        try:
            report.pyplot()
        except report.PlotUnavailable as exc:
            raise SimulateError(str(exc)) from None
    values, origin = _recipe(args)
    try:
        setting = DelayedSetting(values["margin"], values["history"], values["algo"])
    except ValueError as exc:
        raise SimulateError(str(exc)) from None
    try:
        if args.synthetic:
            spec = SyntheticSpec(
                steps=args.steps,
                spread=args.spread,
                drift=args.drift,
                spike_size=args.spike_size,
                spike_rate=args.spike_rate,
                seed=args.seed,
            )
            trace = synthetic(spec)
        else:
            trace = load(args.trace, args.input_format, args.pass_)
        result = report.run(
            trace, setting, values["fmt"], fnuz=args.fnuz, origin=origin, sweep=not args.no_sweep
        )
    except TraceError as exc:
        raise SimulateError(str(exc)) from None
    if args.output_format == "json":
        print(json.dumps(report.render_json(result), indent=2))
    else:
        sys.stdout.write(report.render_text(result))
    if args.plot:
        try:
            left = report.plot(result, args.plot)
        except OSError as exc:
            raise SimulateError(f"{args.plot}: cannot write the plot: {exc}") from None
        print(wrote_plot(args.plot, len(left)), file=sys.stderr)
    return 1 if result.overall.clipped else 0


def wrote_plot(path: str, left_out: int) -> str:
    """The one line `--plot` ends with: a count of the tensors it left out, never their names
    (a real trace has hundreds; the text report lists them all)."""
    from fp8lint.simulate.report import MAX_PLOTTED

    if not left_out:
        return f"Wrote {path}."
    tensors = "tensor" if left_out == 1 else "tensors"
    return f"Wrote {path}: the first {MAX_PLOTTED} tensors, {left_out} more {tensors} left out."


def _recipe(args: argparse.Namespace) -> tuple[dict[str, Any], str]:
    """margin, history, algo and format: flags over --config over TE's defaults."""
    flags = {"margin": args.margin, "history": args.history, "algo": args.algo, "fmt": args.fmt}
    if args.config:
        values, origin = recipe_from_config(
            args.config, needed=[k for k, v in flags.items() if v is None]
        )
    else:
        values, origin = te_defaults(), "Transformer Engine's DelayedScaling defaults"
    overridden = [k for k, v in flags.items() if v is not None]
    values.update({k: v for k, v in flags.items() if v is not None})
    if overridden:
        names = {
            "margin": "--margin",
            "history": "--history",
            "algo": "--algo",
            "fmt": "--fp8-format",
        }
        given = ", ".join(names[k] for k in overridden)
        origin = f"{origin}; {given} from the command line" if args.config else "command line"
        if not args.config and len(overridden) < 4:
            origin += ", the rest TE's DelayedScaling defaults"
    return values, origin


def recipe_from_config(path: str, needed: list[str] | None = None) -> tuple[dict[str, Any], str]:
    """The delayed-scaling recipe of the first site that has one (FP8 on preferred)."""
    from fp8lint.documents import kind_for
    from fp8lint.engine import FileProblem, display_path, lint_text, read_text
    from fp8lint.frameworks.registry import label
    from fp8lint.settings import RunSettings

    shown = display_path(path)
    kind = kind_for(path)
    if kind is None:
        raise SimulateError(f"{shown}: not a file type fp8lint reads")
    try:
        text = read_text(path, RunSettings().max_bytes)
    except FileProblem as exc:
        raise SimulateError(f"{shown}: {exc.message}") from None
    if text is None:
        raise SimulateError(f"{shown}: no FP8 settings found")
    # the recipe is read from the sites: no fix is needed
    diags, sites = lint_text(shown, text, kind, RunSettings(plan_fixes=False))
    for d in diags:
        if d.code == "FP8001":
            raise SimulateError(f"{d.path}:{d.line}:{d.column}: {d.message}")
    delayed = [s for s in sites if s.is_delayed]
    if not delayed:
        recipes = sorted({s.recipe.value.value for s in sites if s.recipe.value is not None})
        what = f"uses {', '.join(recipes)}" if recipes else "has no readable recipe"
        raise SimulateError(
            f"{shown}: no delayed-scaling site (the config {what}); `fp8lint simulate` replays "
            "delayed scaling only: current, block and MXFP8 scaling do not clip by construction"
        )
    site = next((s for s in delayed if s.is_on), delayed[0])
    values: dict[str, Any] = {
        "margin": site.margin.value,
        "history": site.amax_history_len.value,
        "algo": site.amax_compute_algo.value.value if site.amax_compute_algo.value else None,
        "fmt": site.fmt.value.value if site.fmt.value else None,
    }
    flag = {"margin": "--margin", "history": "--history", "algo": "--algo", "fmt": "--format"}
    for key in needed if needed is not None else list(values):
        if values[key] is None:
            raise SimulateError(
                f"{shown}:{site.anchor().line}: the {key if key != 'fmt' else 'format'} of this "
                f"recipe cannot be read statically; pass {flag[key]}"
            )
    state = "" if site.is_on else ", FP8 off there"
    origin = f"from {shown}:{site.anchor().line}, {label(site.framework)}{state}"
    return values, origin
