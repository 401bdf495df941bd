"""FP8702: an NVFP4 technique (RHT, stochastic rounding, 2D weight scales) switched off is a
warning only on a known long pre-training run; NVIDIA's own configs with them off (NeMo-RL's
GRPO recipe, JAX-Toolbox's 50-step MaxText example) stay info or quiet; unknown switches stay
silent."""

from __future__ import annotations

from fp8lint.diagnostics import Severity
from fp8lint.documents.text import SourceFile
from fp8lint.engine import lint_text, parse_file
from fp8lint.rules import rule_by_code
from fp8lint.settings import RunSettings

LAUNCH = (
    "torchrun pretrain_gpt.py --fp4-format e2m1 --fp4-recipe nvfp4 --num-layers 32 \\\n"
    "  --first-last-layers-bf16 --num-layers-at-end-in-bf16 4 \\\n"
    "  --train-iters 500000 --global-batch-size 1024 --seq-length 8192{extra}\n"
)
TE = "from transformer_engine.common.recipe import NVFP4BlockScaling\nr = NVFP4BlockScaling({})\n"


def _findings(name: str, text: str, kind: str = "shell") -> list[tuple[Severity, int, str]]:
    rule = rule_by_code("FP8702")
    assert rule is not None
    out = []
    for site in parse_file(SourceFile(name, text), kind):
        for f in rule().check(site, rule.option_defaults()):
            out.append((f.severity or rule.severity, f.span.line, f.message))
    return out


def _launch(env: str, extra: str = "") -> str:
    return "#!/bin/bash\n" + env + LAUNCH.format(extra=extra)


def test_long_pretraining_with_a_switch_off_warns_at_the_switch() -> None:
    for var, what in [
        ("NVTE_NVFP4_DISABLE_RHT", "RHT"),
        ("NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING", "stochastic rounding"),
        ("NVTE_NVFP4_DISABLE_2D_QUANTIZATION", "2D weight scaling"),
    ]:
        ((severity, line, message),) = _findings("a.sh", _launch(f"export {var}=1\n"))
        assert severity is Severity.WARNING and line == 2
        assert message == f"NVFP4 with {what} off: `{var}` 1"


def test_one_finding_names_every_switch_off() -> None:
    env = (
        "export NVTE_NVFP4_DISABLE_2D_QUANTIZATION=1\nexport NVTE_NVFP4_DISABLE_RHT=1\n"
        "export NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING=1\n"
    )
    ((severity, line, message),) = _findings("b.sh", _launch(env))
    assert severity is Severity.WARNING and line == 2  # the first one written
    assert message.startswith("NVFP4 with RHT, stochastic rounding and 2D weight scaling off: ")
    assert message.endswith("`NVTE_NVFP4_DISABLE_2D_QUANTIZATION` 1 and 2 more")


def test_on_unknown_or_unwritten_stays_silent() -> None:
    assert _findings("c.sh", _launch("export NVTE_NVFP4_DISABLE_RHT=0\n")) == []
    assert _findings("d.sh", _launch('export NVTE_NVFP4_DISABLE_RHT="$RHT"\n')) == []
    assert _findings("e.sh", _launch("")) == []


def test_fp8_sites_are_not_checked() -> None:
    fp8 = "#!/bin/bash\nexport NVTE_NVFP4_DISABLE_RHT=1\n"
    fp8 += "torchrun pretrain_gpt.py --fp8-format hybrid --train-iters 500000"
    fp8 += " --global-batch-size 1024 --seq-length 8192\n"
    assert _findings("f.sh", fp8) == []


def test_short_fine_tune_override_and_unknown_length_are_info() -> None:
    rht = "export NVTE_NVFP4_DISABLE_RHT=1\n"
    short = "#!/bin/bash\n" + rht + "torchrun pretrain_gpt.py --fp4-format e2m1 --train-iters 50\n"
    assert [f[0] for f in _findings("g.sh", short)] == [Severity.INFO]
    assert [f[0] for f in _findings("h.sh", _launch(rht, " --finetune"))] == [Severity.INFO]
    override = rht + "export NVTE_BACKWARD_OVERRIDE=dequantized\n"
    assert [f[0] for f in _findings("i.sh", _launch(override))] == [Severity.INFO]
    unread = rht + 'export NVTE_BACKWARD_OVERRIDE="$MODE"\n'
    assert [f[0] for f in _findings("j.sh", _launch(unread))] == [Severity.INFO]
    unknown = "#!/bin/bash\n" + rht + "torchrun pretrain_gpt.py --fp4-format e2m1\n"
    assert [f[0] for f in _findings("k.sh", unknown)] == [Severity.INFO]


def test_min_tokens_option_moves_the_line() -> None:
    text = _launch("export NVTE_NVFP4_DISABLE_RHT=1\n")
    settings = RunSettings(options={"FP8702": {"min-tokens": 10**16}})
    diags, _ = lint_text("l.sh", text, "shell", settings)
    assert [d.severity for d in diags if d.code == "FP8702"] == [Severity.INFO]


def test_te_recipe_keywords() -> None:
    ((severity, line, message),) = _findings("r.py", TE.format("disable_rht=True"), "python")
    assert severity is Severity.INFO and line == 2  # a recipe call says nothing of the length
    assert message == "NVFP4 with RHT off: `disable_rht` True"
    assert _findings("s.py", TE.format("disable_stochastic_rounding=False"), "python") == []
    assert _findings("t.py", TE.format(""), "python") == []


def test_maxtext_nvfp4_example_is_info_only() -> None:
    """JAX-Toolbox `docs/frameworks/maxtext/nvfp4/nvfp4_example.sh` (bcbbfa57): 50 steps of
    Llama3-8B with `te_nvfp4_no_rht`; nothing above info (FP8403 took its NVFP4 autocast
    for FP8 as well before)."""
    text = (
        "#!/bin/bash\n"
        'RUN_SETTINGS="-m maxtext.trainers.pre_train.train maxtext/configs/base.yml '
        "hardware=gpu model_name=llama3-8b steps=50 dtype=bfloat16 max_target_length=8192 "
        'per_device_batch_size=4 quantization=te_nvfp4_no_rht"\n'
        "python3 ${RUN_SETTINGS}\n"
    )
    diags, sites = lint_text("nvfp4_example.sh", text, "shell", RunSettings())
    assert len(sites) == 1 and sites[0].nvfp4_disable_rht.value is True
    assert [(d.code, d.severity) for d in diags if d.severity is not Severity.INFO] == []
    assert [d.code for d in diags if d.code == "FP8702"] == ["FP8702"]


def test_nemo_rl_grpo_nvfp4_recipe_gets_no_warning() -> None:
    """NeMo-RL's GRPO NVFP4 recipe (fp4-evidence §2.5, §6.4): RHT, SR and 2D off with a
    dequantized backward, in `env_vars`."""
    text = (
        "policy:\n  model_name: Qwen/Qwen3-30B-A3B-Base\n  megatron_cfg:\n    enabled: true\n"
        "    fp4_cfg:\n      enabled: true\n      fp4: e2m1\n      fp4_recipe: nvfp4\n"
        "    first_last_layers_bf16: true\n    num_layers_at_start_in_bf16: 2\n"
        "    num_layers_at_end_in_bf16: 4\n    env_vars:\n"
        '      NVTE_NVFP4_DISABLE_RHT: "1"\n      NVTE_NVFP4_DISABLE_2D_QUANTIZATION: "1"\n'
        '      NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING: "1"\n'
        "      NVTE_BACKWARD_OVERRIDE: dequantized\n"
    )
    diags, _ = lint_text("grpo-nvfp4.yaml", text, "yaml", RunSettings())
    assert [d.code for d in diags if d.severity is not Severity.INFO] == []
