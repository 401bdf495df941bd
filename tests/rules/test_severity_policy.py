"""Severity follows the evidence (issue 19): run length and fine-tunes, the derived MoE risk,
test code, and fixes that change numerics.  Each configuration is written here in the shape
the framework uses; none is copied from a repository."""

from __future__ import annotations

import pytest

from fp8lint.diagnostics import ANY_VALUE, Applicability, Severity
from fp8lint.model import FixPlan, SetValue

from ..conftest import lint

MEGATRON = "MODEL_ARGS:\n  --fp8-format: hybrid\n"  # FP8101: zero headroom by default


def found(name: str, text: str, code: str) -> list[tuple[int, Severity]]:
    return [(d.line, d.severity) for d in lint(name, text) if d.code == code]


# ----------------------------------------------------------------- class 2: run length


@pytest.mark.parametrize(
    ("extra", "severity"),
    [
        ("", Severity.WARNING),  # length unknown: the warning stands
        ("  --train-iters: 500000\n", Severity.WARNING),  # pre-training
        ("  --train-iters: 1000\n", Severity.INFO),  # a functional test's length
        ("  --finetune: true\n", Severity.INFO),
        ("  --train-iters: 9999\n  --finetune: false\n", Severity.INFO),
    ],
)
def test_zero_headroom_is_info_on_short_runs_and_fine_tunes(extra: str, severity: Severity) -> None:
    assert found("model_config.yaml", MEGATRON + extra, "FP8101") == [(2, severity)]


def test_run_length_is_read_from_a_launch_script_too() -> None:
    script = (
        "torchrun pretrain_gpt.py --fp8-format hybrid --train-iters 1024 "
        "--tensor-model-parallel-size 1\n"
    )
    assert found("run.sh", script, "FP8101") == [(1, Severity.INFO)]


SWIGLU = (
    "MODEL_ARGS:\n  --fp8-format: hybrid\n  --fp8-recipe: tensorwise\n  --swiglu: true\n"
    "  --seq-length: 4096\n"
)


def test_long_run_outlier_rule_needs_a_run_that_may_be_long() -> None:
    assert found("m.yaml", SWIGLU, "FP8201") == [(3, Severity.INFO)]  # length unknown
    long = SWIGLU + "  --train-iters: 100000\n  --global-batch-size: 1024\n"
    assert found("m.yaml", long, "FP8201") == [(3, Severity.INFO)]  # 4.2e11 tokens
    short = SWIGLU + "  --train-iters: 10000\n  --global-batch-size: 1024\n"
    assert found("m.yaml", short, "FP8201") == []  # 4.2e10 tokens
    assert found("m.yaml", SWIGLU + "  --finetune: true\n", "FP8201") == []


# ------------------------------------------------------ class 3: a derived MoE risk is info


def test_moe_with_delayed_scaling_is_info() -> None:
    moe = (
        "MODEL_ARGS:\n  --num-experts: 8\n  --fp8-format: hybrid\n"
        "  --fp8-amax-history-len: 1024\n  --fp8-amax-compute-algo: max\n"
    )
    assert found("moe.yaml", moe, "FP8204") == [(2, Severity.INFO)]


# -------------------------------------------------------------- class 4: test code


TESTS = """import pytest
from megatron.bridge.training.mixed_precision import MixedPrecisionConfig


def test_rejects_a_bad_recipe():
    with pytest.raises(ValueError):
        MixedPrecisionConfig(fp8="hybrid", fp8_recipe="nonsense")


def test_reads_a_margin():
    cfg = MixedPrecisionConfig(fp8="hybrid", fp8_recipe="delayed", fp8_margin=-1)
    assert cfg.fp8_margin == -1
"""


def test_test_code_is_an_expected_failure_or_a_fixture() -> None:
    diags = lint("tests/unit_tests/test_mixed_precision.py", TESTS)
    # inside pytest.raises: the test expects the error, so no FP8401
    assert not [d for d in diags if d.line == 7]
    # inside a test function: info, and its fix is never applied by a plain --fix
    (margin,) = [d for d in diags if d.code == "FP8104"]
    assert margin.severity is Severity.INFO and "test function" in margin.note
    assert margin.fix is not None and margin.fix.applicability is not Applicability.SAFE
    # the same construction in a recipe module is an error
    recipe = TESTS.replace("def test_reads_a_margin():", "def build():")
    assert [d.severity for d in lint("recipe.py", recipe) if d.code == "FP8104"] == [Severity.ERROR]


# ------------------------------------------------- class 5: numerics fixes are never safe


def test_a_plan_that_sets_a_value_cannot_be_safe() -> None:
    with pytest.raises(ValueError, match="changes the run"):
        FixPlan(Applicability.SAFE, "use hybrid", (SetValue("fmt", "hybrid"),))
    FixPlan(Applicability.UNSAFE, "use hybrid", (SetValue("fmt", "hybrid"),))


def test_no_rule_offers_a_safe_fix_that_changes_numerics() -> None:
    """Over every rule's own invalid examples: the only fixes a plain `--fix` applies are an
    unused suppression's removal and the rename of a wizard key (a warning), never a value
    written by a rule, and never an info finding's fix."""
    from fp8lint.documents import kind_for
    from fp8lint.engine.lint import lint_text
    from fp8lint.model import SETTING_FIELDS
    from fp8lint.rules import all_rules
    from fp8lint.settings import RunSettings

    safe: set[str] = set()
    for rule in all_rules():
        for ex in rule.invalid:
            kind = kind_for(ex.filename)
            assert kind is not None
            diags, _ = lint_text(ex.filename, ex.text, kind, RunSettings())
            for d in diags:
                if d.fix is None or d.fix.applicability is not Applicability.SAFE:
                    continue
                assert d.severity is not Severity.INFO, (rule.code, ex.filename)
                set_to = {k: v for k, v in d.fix.intent if k in SETTING_FIELDS}
                assert all(v is ANY_VALUE for v in set_to.values()), (d.code, set_to)
                safe.add(d.code)
    assert safe <= {"FP8002", "FP8402"}, safe
