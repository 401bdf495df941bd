"""The Python source: model code around a TE recipe.  Recompute through torch.utils.checkpoint
(FP8501) and a TE linear used as the output head (FP8202)."""

from __future__ import annotations

import textwrap

import pytest

from fp8lint.diagnostics import Diagnostic
from fp8lint.documents.text import SourceFile
from fp8lint.engine import lint_text, parse_file
from fp8lint.model import Fp8Site, Framework
from fp8lint.settings import RunSettings

TE = "import transformer_engine.pytorch as te\n"
DELAYED = "from transformer_engine.common.recipe import DelayedScaling\nrecipe = DelayedScaling()\n"
CURRENT = (
    "from transformer_engine.common.recipe import Float8CurrentScaling\n"
    "recipe = Float8CurrentScaling()\n"
)


def lint(src: str) -> list[Diagnostic]:
    diags, _ = lint_text("m.py", textwrap.dedent(src), "python", RunSettings())
    return diags


def codes(src: str, code: str) -> list[int]:
    """The lines `code` fires on."""
    return [d.line for d in lint(src) if d.code == code]


def te_sites(src: str) -> list[Fp8Site]:
    sites = parse_file(SourceFile("m.py", textwrap.dedent(src)), "python")
    return [s for s in sites if s.framework == Framework.TE]


def line_of(src: str, needle: str) -> int:
    lines = textwrap.dedent(src).splitlines()
    return next(i for i, line in enumerate(lines, 1) if needle in line)


# -- recompute through torch.utils.checkpoint -> FP8501 -------------------------------------

CHECKPOINTED = (
    TE
    + DELAYED
    + "import torch.utils.checkpoint\n"
    + "\n"
    + "def forward(block, x):\n"
    + "    with te.fp8_autocast(enabled=True, fp8_recipe=recipe):\n"
    + "        return torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)\n"
)


def test_torch_checkpoint_with_delayed_scaling_fires_at_the_call() -> None:
    assert codes(CHECKPOINTED, "FP8501") == [line_of(CHECKPOINTED, "checkpoint(block")]
    (site,) = te_sites(CHECKPOINTED)
    rec = site.recompute_granularity
    assert rec.value == "full" and rec.known and rec.provenance == "written"
    assert rec.key == "torch.utils.checkpoint"
    assert rec.note == (
        "activation recompute through torch.utils.checkpoint, outside TE's own te.checkpoint"
    )
    assert rec.span is not None
    callee = "torch.utils.checkpoint.checkpoint"
    line = textwrap.dedent(CHECKPOINTED).splitlines()[rec.span.line - 1]
    assert line[rec.span.column - 1 : rec.span.end_column - 1] == callee


def test_te_checkpoint_does_not_count() -> None:
    for call in ("te.checkpoint", "te.distributed.checkpoint"):
        src = TE + DELAYED + f"def forward(block, x):\n    return {call}(block, x)\n"
        assert codes(src, "FP8501") == []
        assert te_sites(src)[0].recompute_granularity.known is False
    src = (
        DELAYED
        + "from transformer_engine.pytorch import checkpoint\n"
        + "def forward(block, x):\n    return checkpoint(block, x)\n"
    )
    assert codes(src, "FP8501") == []


def test_current_scaling_is_immune() -> None:
    src = CHECKPOINTED.replace(DELAYED, CURRENT)
    assert codes(src, "FP8501") == []
    assert te_sites(src)[0].recompute_granularity.known is False


def test_aliased_import() -> None:
    src = (
        DELAYED
        + "from torch.utils.checkpoint import checkpoint as ckpt\n"
        + "\n"
        + "def forward(block, x):\n"
        + "    return ckpt(block, x)\n"
    )
    assert codes(src, "FP8501") == [line_of(src, "ckpt(block")]


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import torch.utils.checkpoint as cp\n", "cp.checkpoint(block, x)"),
        ("from torch.utils.checkpoint import checkpoint\n", "checkpoint(block, x)"),
        ("from torch.utils import checkpoint\n", "checkpoint.checkpoint(block, x)"),
        ("import torch\n", "torch.utils.checkpoint.checkpoint_sequential(blocks, 2, x)"),
        (
            "from torch.utils.checkpoint import checkpoint_sequential as seq\n",
            "seq(blocks, 2, x)",
        ),
    ],
)
def test_import_spellings(imports: str, call: str) -> None:
    src = DELAYED + imports + f"\ndef forward(block, blocks, x):\n    return {call}\n"
    assert codes(src, "FP8501") == [line_of(src, call)]


def test_first_checkpoint_call_is_the_span() -> None:
    src = (
        DELAYED
        + "from torch.utils.checkpoint import checkpoint\n"
        + "def a(f, x):\n    return checkpoint(f, x)\n"
        + "def b(f, x):\n    return checkpoint(f, x)\n"
    )
    assert codes(src, "FP8501") == [5]


@pytest.mark.parametrize(
    "src",
    [
        # a `checkpoint` the file defines, or names without importing it from torch
        DELAYED + "def checkpoint(f, x):\n    return f(x)\n\ny = checkpoint(g, 1)\n",
        DELAYED + "def forward(checkpoint, f, x):\n    return checkpoint(f, x)\n",
        DELAYED + "from deepspeed.checkpointing import checkpoint\ny = checkpoint(g, 1)\n",
        DELAYED + "from megatron.core import tensor_parallel\n"
        "y = tensor_parallel.checkpoint(g, False, 1)\n",
        DELAYED + "y = self.checkpoint(g, 1)\n",
        # mentioned, not called
        DELAYED + "import torch.utils.checkpoint\nfn = torch.utils.checkpoint.checkpoint\n",
    ],
)
def test_other_checkpoints_do_not_count(src: str) -> None:
    assert codes(src, "FP8501") == []


def test_checkpoint_without_a_te_recipe_builds_nothing() -> None:
    src = "from torch.utils.checkpoint import checkpoint\ny = checkpoint(f, 1)\n"
    assert lint(src) == []
    assert te_sites(src) == []


# -- a TE linear as the output head -> FP8202 -----------------------------------------------

HEAD = (
    TE
    + DELAYED
    + "import torch\n"
    + "\n"
    + "class Model(torch.nn.Module):\n"
    + "    def __init__(self):\n"
    + "        super().__init__()\n"
    + "        self.lm_head = te.Linear(4096, 32000)\n"
    + "\n"
    + "    def forward(self, x):\n"
    + "        with te.fp8_autocast(enabled=True, fp8_recipe=recipe):\n"
    + "            return self.lm_head(x)\n"
)


def test_te_linear_head_under_autocast_fires_at_the_assignment() -> None:
    assert codes(HEAD, "FP8202") == [line_of(HEAD, "self.lm_head = te.Linear")]
    (site,) = te_sites(HEAD)
    head = site.output_head_fp8
    assert head.value is True and head.known and head.provenance == "written"
    assert head.key == "self.lm_head = te.Linear(...)"
    assert head.note == (
        "a Transformer Engine Linear used as the output head runs in FP8 inside fp8_autocast"
    )
    assert head.span is not None
    line = textwrap.dedent(HEAD).splitlines()[head.span.line - 1]
    assert line[head.span.column - 1 : head.span.end_column - 1] == "te.Linear(4096, 32000)"


def test_torch_linear_head_does_not_fire() -> None:
    src = HEAD.replace("te.Linear(4096, 32000)", "torch.nn.Linear(4096, 32000)")
    assert codes(src, "FP8202") == []
    assert te_sites(src)[0].output_head_fp8.known is False


def test_head_without_autocast_does_not_fire() -> None:
    src = HEAD.replace("with te.fp8_autocast(enabled=True, fp8_recipe=recipe):", "if True:")
    assert "autocast" not in src
    assert codes(src, "FP8202") == []
    assert te_sites(src)[0].output_head_fp8.known is False


def test_torch_autocast_does_not_put_the_head_under_fp8() -> None:
    src = HEAD.replace("te.fp8_autocast(enabled=True, fp8_recipe=recipe)", "torch.autocast('cuda')")
    assert codes(src, "FP8202") == []


def test_current_scaling_head_fires_and_mxfp8_does_not() -> None:
    current = HEAD.replace(DELAYED, CURRENT)
    assert codes(current, "FP8202") == [line_of(current, "self.lm_head = te.Linear")]
    mxfp8 = HEAD.replace(
        DELAYED,
        "from transformer_engine.common.recipe import MXFP8BlockScaling\n"
        "recipe = MXFP8BlockScaling()\n",
    )
    assert codes(mxfp8, "FP8202") == []
    assert te_sites(mxfp8)[0].output_head_fp8.value is True  # the rule skips MXFP8 itself


@pytest.mark.parametrize(
    ("imports", "assignment", "key"),
    [
        (TE, "output_layer = te.LayerNormLinear(8, 8)", "output_layer = te.LayerNormLinear(...)"),
        (
            "import transformer_engine\n",
            "self.output = transformer_engine.pytorch.Linear(8, 8)",
            "self.output = transformer_engine.pytorch.Linear(...)",
        ),
        (
            "from transformer_engine.pytorch import Linear as TELinear\n",
            "model.head = TELinear(8, 8)",
            "model.head = TELinear(...)",
        ),
        (
            "from transformer_engine.pytorch import Linear\n",
            "self.output_proj = Linear(8, 8)",
            "self.output_proj = Linear(...)",
        ),
    ],
)
def test_head_spellings(imports: str, assignment: str, key: str) -> None:
    src = (
        DELAYED
        + imports
        + "from transformer_engine.pytorch import fp8_autocast\n"
        + f"{assignment}\n"
        + "with fp8_autocast(enabled=True, fp8_recipe=recipe):\n    pass\n"
    )
    assert codes(src, "FP8202") == [line_of(src, assignment)]
    assert te_sites(src)[0].output_head_fp8.key == key


@pytest.mark.parametrize(
    "assignment",
    [
        "self.proj = te.Linear(8, 8)",  # not the head's name
        "self.lm_head = te.LayerNormMLP(8, 8)",  # not a linear
        "self.lm_head = torch.nn.Linear(8, 8)",
        "self.lm_head = Linear(8, 8)",  # `Linear` from torch.nn (imported below)
    ],
)
def test_not_a_te_head(assignment: str) -> None:
    src = (
        TE
        + DELAYED
        + "import torch\nfrom torch.nn import Linear\n"
        + f"{assignment}\n"
        + "with te.fp8_autocast(enabled=True, fp8_recipe=recipe):\n    pass\n"
    )
    assert codes(src, "FP8202") == []


# -- reachability: the condition recompute runs under ------------------------------------------

GUARDED = (
    TE
    + DELAYED
    + "import argparse\n"
    + "import torch.utils.checkpoint as cp\n"
    + "parser = argparse.ArgumentParser()\n"
    + "parser.add_argument('--grad_checkpoint', action='store_true')\n"
    + "args = parser.parse_args()\n"
    + "def forward(block, x):\n"
    + "    if args.grad_checkpoint:\n"
    + "        return cp.checkpoint(block, x)\n"
    + "    return block(x)\n"
)

DORMANT = (
    TE
    + DELAYED
    + "import torch.utils.checkpoint as cp\n"
    + "class Net:\n"
    + "    def __init__(self, dim, depth=12, use_checkpoint=False):\n"
    + "        self.use_checkpoint = use_checkpoint\n"
    + "    def forward(self, x):\n"
    + "        for blk in self.blocks:\n"
    + "            if self.use_checkpoint:\n"
    + "                x = cp.checkpoint(blk, x)\n"
    + "            else:\n"
    + "                x = blk(x)\n"
    + "        return x\n"
    + "net = Net(32, 2)\n"
)


def fp8501(src: str) -> list[Diagnostic]:
    return [d for d in lint(src) if d.code == "FP8501"]


def test_recompute_behind_a_launch_flag_is_a_warning_naming_the_flag() -> None:
    (d,) = fp8501(GUARDED)
    assert d.severity.value == "warning" and d.line == line_of(GUARDED, "cp.checkpoint")
    assert "when `--grad_checkpoint` is given" in d.message
    (site,) = te_sites(GUARDED)
    assert site.recompute_reachable.value is True
    assert site.recompute_condition.span is not None
    assert site.recompute_condition.span.line == line_of(GUARDED, "if args.grad_checkpoint")


def test_recompute_behind_a_switch_nothing_sets_is_at_most_info() -> None:
    (d,) = fp8501(DORMANT)
    assert d.severity.value == "info"
    assert "only when `self.use_checkpoint` is true" in d.message
    (site,) = te_sites(DORMANT)
    assert site.recompute_reachable.value is False


@pytest.mark.parametrize(
    "call",
    ["Net(32, 2, use_checkpoint=True)", "Net(32, 2, True)", "Net(*sizes)", "Net(**cfg)"],
)
def test_a_switch_the_file_can_set_keeps_the_warning(call: str) -> None:
    src = DORMANT.replace("net = Net(32, 2)", f"net = {call}")
    (d,) = fp8501(src)
    assert d.severity.value == "warning"
    assert "when `self.use_checkpoint` is true" in d.message


def test_an_assignment_anywhere_keeps_the_warning() -> None:
    src = DORMANT + "def enable(model):\n    model.use_checkpoint = True\n"
    assert [d.severity.value for d in fp8501(src)] == ["warning"]


def test_a_reachable_checkpoint_wins_over_a_dormant_one() -> None:
    src = DORMANT + "def plain(block, x):\n    return cp.checkpoint(block, x)\n"
    (d,) = fp8501(src)
    assert d.severity.value == "warning" and d.line == line_of(src, "return cp.checkpoint")
    assert "when" not in d.message.split("with delayed")[0]


def test_config_key_condition_is_named() -> None:
    src = GUARDED.replace("if args.grad_checkpoint:", 'if cfg["activation_checkpointing"]:')
    (d,) = fp8501(src)
    assert d.severity.value == "warning"
    assert 'when `cfg["activation_checkpointing"]` is true' in d.message


# -- Hugging Face gradient checkpointing counts as recompute -----------------------------------


@pytest.mark.parametrize(
    ("code", "needle"),
    [
        ("model.gradient_checkpointing_enable()\n", "gradient_checkpointing_enable"),
        (
            "from transformers import TrainingArguments\n"
            "targs = TrainingArguments(output_dir='o', gradient_checkpointing=True)\n",
            "gradient_checkpointing=True",
        ),
    ],
)
def test_hugging_face_gradient_checkpointing_is_recompute(code: str, needle: str) -> None:
    src = TE + DELAYED + code
    (d,) = fp8501(src)
    assert d.severity.value == "warning" and d.line == line_of(src, needle)
    (site,) = te_sites(src)
    assert "Hugging Face gradient checkpointing" in (site.recompute_granularity.note or "")


def test_hugging_face_switch_from_a_flag_or_off() -> None:
    off = TE + DELAYED + "targs = TrainingArguments(gradient_checkpointing=False)\n"
    assert fp8501(off) == []
    flag = (
        TE
        + DELAYED
        + "import argparse\np = argparse.ArgumentParser()\n"
        + "p.add_argument('--gc', dest='use_gc', action='store_true')\nargs = p.parse_args()\n"
        + "targs = TrainingArguments(gradient_checkpointing=args.use_gc)\n"
    )
    (d,) = fp8501(flag)
    assert d.severity.value == "warning" and "when `--gc` is given" in d.message


def test_main_guard_and_literal_tests_are_not_conditions() -> None:
    body = "        return cp.checkpoint(block, x)\n"
    base = TE + DELAYED + "import torch.utils.checkpoint as cp\ndef f(block, x):\n"
    guarded = base + "    if __name__ == '__main__':\n" + body
    (d,) = fp8501(guarded)
    assert d.severity.value == "warning" and "when" not in d.message.split("with delayed")[0]
    looping = base + "    while True:\n" + body
    assert [x.severity.value for x in fp8501(looping)] == ["warning"]
    dead = base + "    if False:\n" + body
    assert [x.severity.value for x in fp8501(dead)] == ["info"]


FLAGGED = """\
import argparse

import transformer_engine.pytorch as te
from transformers import AutoModelForCausalLM


def train_epoch(model, loader, use_fp8):
    for batch in loader:
        with te.fp8_autocast(enabled=use_fp8):
            loss = model(**batch).loss
        loss.backward()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grad_checkpoint", action="store_true")
    parser.add_argument("--use_fp8", action="store_true")
    args = parser.parse_args()
    model = AutoModelForCausalLM.from_pretrained("m")
    if args.grad_checkpoint:
        model.gradient_checkpointing_enable()
    train_epoch(model, [], args.use_fp8)
"""


def test_fp8_switched_on_by_a_flag_with_hf_checkpointing_is_flagged_with_both_flags() -> None:
    """Issue 19, class 11: TE's default recipe under `enabled=use_fp8` (an argparse flag's
    name) and reachable HF gradient checkpointing: FP8501, conditioned on both flags."""
    (d,) = [d for d in lint(FLAGGED) if d.code == "FP8501"]
    assert d.severity.value == "warning"
    assert d.message.endswith("when `--grad_checkpoint` is given and `--use_fp8` is given")
    # a switch fp8lint cannot tie to a flag stays unknown: nothing is said
    other = FLAGGED.replace("enabled=use_fp8", "enabled=os.environ.get('FP8') == '1'")
    assert "FP8501" not in [d.code for d in lint(other)]
