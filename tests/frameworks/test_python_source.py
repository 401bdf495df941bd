"""The Python source: recipes, presets and handlers read from code that is never run."""

from __future__ import annotations

import textwrap

import pytest

from fp8lint.documents.text import ParseError, SourceFile
from fp8lint.engine import parse_file
from fp8lint.model import AmaxAlgo, AmaxScope, Fp8Format, Fp8Site, Framework, Recipe

TE_IMPORT = "from transformer_engine.common.recipe import {names}\n"


def parse(src: str, path: str = "recipe.py") -> list[Fp8Site]:
    return parse_file(SourceFile(path, textwrap.dedent(src)), "python")


def one(src: str) -> Fp8Site:
    sites = parse(src)
    assert len(sites) == 1, [s.kind for s in sites]
    return sites[0]


# -- Transformer Engine recipes -------------------------------------------------------------


def test_delayed_scaling_defaults() -> None:
    site = one(TE_IMPORT.format(names="DelayedScaling") + "r = DelayedScaling()\n")
    assert site.framework == Framework.TE
    assert site.kind == "Transformer Engine DelayedScaling(...)"
    assert site.path == "recipe.py"
    assert (site.span.line, site.span.column, site.span.end_column) == (2, 5, 21)
    assert site.enabled.value is True and site.enabled.provenance == "derived"
    assert site.enabled.key == "DelayedScaling"
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "written"
    recipe_span = site.recipe.span
    assert recipe_span is not None
    assert (recipe_span.line, recipe_span.column, recipe_span.end_column) == (2, 5, 19)
    assert site.fmt.value is Fp8Format.HYBRID and site.fmt.provenance == "default"
    assert site.fmt.default_of == "Transformer Engine"
    assert site.margin.value == 0 and site.margin.provenance == "default"
    assert site.amax_history_len.value == 1024 and site.amax_history_len.provenance == "default"
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.reduce_amax.value is True and site.reduce_amax.provenance == "default"
    assert site.interval.known is False and site.interval.value is None
    assert site.invalid == [] and site.notes == []


@pytest.mark.parametrize(
    ("cls", "recipe", "fmt"),
    [
        ("DelayedScaling", Recipe.DELAYED, Fp8Format.HYBRID),
        ("Float8CurrentScaling", Recipe.TENSORWISE, Fp8Format.HYBRID),
        ("MXFP8BlockScaling", Recipe.MXFP8, Fp8Format.E4M3),
        ("Float8BlockScaling", Recipe.BLOCKWISE, Fp8Format.E4M3),
        ("NVFP4BlockScaling", Recipe.NVFP4, Fp8Format.E4M3),
    ],
)
def test_each_recipe_class_and_its_default_format(cls: str, recipe: Recipe, fmt: Fp8Format) -> None:
    site = one(TE_IMPORT.format(names=cls) + f"r = {cls}()\n")
    assert site.recipe.value is recipe
    assert site.recipe.key == cls
    assert site.fmt.value is fmt and site.fmt.provenance == "default"
    assert site.kind == f"Transformer Engine {cls}(...)"


def test_current_scaling_has_no_history_and_ignores_delayed_keywords() -> None:
    site = one(
        TE_IMPORT.format(names="Float8CurrentScaling")
        + "r = Float8CurrentScaling(amax_history_len=16, fp8_dpa=True)\n"
    )
    assert site.amax_history_len.known is False and site.amax_history_len.value is None
    assert site.margin.known is False
    assert site.fp8_dpa.value is True and site.fp8_dpa.provenance == "written"


def test_import_alias() -> None:
    site = one(TE_IMPORT.format(names="DelayedScaling as DS") + "r = DS(margin=2)\n")
    assert site.recipe.value is Recipe.DELAYED
    assert site.recipe.raw == "DS"
    assert site.recipe.key == "DelayedScaling"
    assert site.margin.value == 2 and site.margin.provenance == "written"


def test_module_alias_and_attribute_chains() -> None:
    sites = parse("""\
        import transformer_engine as te
        import transformer_engine.common.recipe as recipe
        a = recipe.DelayedScaling(amax_history_len=4)
        b = te.common.recipe.Float8CurrentScaling()
        c = transformer_engine.common.recipe.MXFP8BlockScaling()
        """)
    assert [s.recipe.value for s in sites] == [Recipe.DELAYED, Recipe.TENSORWISE, Recipe.MXFP8]
    assert sites[0].amax_history_len.value == 4
    assert sites[1].recipe.raw == "te.common.recipe.Float8CurrentScaling"


def test_format_enum_members_and_strings() -> None:
    sites = parse("""\
        import transformer_engine.common.recipe as recipe
        from transformer_engine.common.recipe import Format
        a = recipe.DelayedScaling(fp8_format=Format.E4M3)
        b = recipe.DelayedScaling(fp8_format=recipe.Format.E5M2)
        c = recipe.DelayedScaling(fp8_format="HYBRID")
        d = recipe.DelayedScaling(fp8_format="E3M4")
        """)
    assert [s.fmt.value for s in sites[:2]] == [Fp8Format.E4M3, Fp8Format.E5M2]
    assert sites[0].fmt.provenance == "written" and sites[0].fmt.raw == "Format.E4M3"
    assert sites[0].fmt.key == "fp8_format"
    # a string is no `Format` member: TE's pydantic dataclass refuses even "HYBRID"
    for site in sites[2:]:
        assert site.fmt.known is False
        assert [n.kind for n in site.invalid] == ["invalid-value"]
        assert site.invalid[0].key == "fp8_format"
    assert "(`Format.HYBRID`)" in sites[2].invalid[0].message
    assert "(`Format." not in sites[3].invalid[0].message


def test_name_bound_once_to_a_literal_is_followed() -> None:
    site = one("""\
        from transformer_engine.common.recipe import DelayedScaling
        HIST = 16
        r = DelayedScaling(amax_history_len=HIST, margin=-1)
        """)
    assert site.amax_history_len.value == 16 and site.amax_history_len.known is True
    assert site.amax_history_len.raw == "HIST"
    assert [(v.line, v.column) for v in site.amax_history_len.via] == [(2, 8)]
    assert site.margin.value == -1 and site.margin.raw == "-1"


def test_name_assigned_twice_is_unknown() -> None:
    site = one("""\
        from transformer_engine.common.recipe import DelayedScaling
        HIST = 16
        if fast:
            HIST = 1
        r = DelayedScaling(amax_history_len=HIST)
        """)
    assert site.amax_history_len.known is False
    assert site.amax_history_len.value is None
    assert site.amax_history_len.provenance == "written"
    assert site.amax_history_len.note is not None
    assert site.amax_history_len.note.startswith("`HIST` is not a literal fp8lint can read")
    assert "2 times" in site.amax_history_len.note


def test_parameters_and_calls_are_unknown_and_function_scope_shadows() -> None:
    sites = parse("""\
        from transformer_engine.common.recipe import DelayedScaling
        HIST = 16
        def build(margin):
            HIST = 32
            return DelayedScaling(amax_history_len=HIST, margin=margin, interval=get())
        r = DelayedScaling(amax_history_len=HIST)
        """)
    inner, outer = sites
    assert inner.amax_history_len.value == 32
    assert inner.margin.known is False
    assert inner.margin.note == "`margin` is not a literal fp8lint can read"
    assert inner.interval.known is False
    assert inner.interval.note == "`get()` is not a literal fp8lint can read"
    assert outer.amax_history_len.value == 16


def test_value_span_is_exact() -> None:
    src = (
        "from transformer_engine.common.recipe import DelayedScaling\n"
        "r = DelayedScaling(\n"
        "    margin=0,\n"
        "    amax_history_len=16,\n"
        ")\n"
    )
    site = parse_file(SourceFile("r.py", src), "python")[0]
    span = site.amax_history_len.span
    assert span is not None
    assert (span.line, span.column, span.end_line, span.end_column) == (4, 22, 4, 24)
    assert src.encode()[span.start_offset : span.end_offset] == b"16"
    assert (site.span.line, site.span.column, site.span.end_line, site.span.end_column) == (
        2,
        5,
        5,
        2,
    )


def test_offsets_are_bytes_and_columns_are_characters() -> None:
    src = (
        'x = "é"; from transformer_engine.common.recipe import DelayedScaling as D; '
        "r = D(margin=3)\n"
    )
    site = parse_file(SourceFile("r.py", src), "python")[0]
    span = site.margin.span
    assert span is not None
    assert span.column == src.index("3") + 1
    assert src.encode()[span.start_offset : span.end_offset] == b"3"


def test_columns_after_a_bom_and_astral_characters_on_crlf_lines() -> None:
    # ast counts UTF-8 bytes (4 for the emoji) and never sees the BOM; spans count characters
    src = (
        "\ufeffx = '🙂é'; from transformer_engine.common.recipe import DelayedScaling as D\r\n"
        "y = 'ß'; r = D(margin=3, amax_history_len=16)\r\n"
    )
    site = parse_file(SourceFile("r.py", src), "python")[0]
    margin, history = site.margin.span, site.amax_history_len.span
    assert margin is not None and history is not None
    line2 = src.split("\r\n")[1]
    assert (margin.line, margin.column) == (2, line2.index("3") + 1)
    data = src.encode()
    assert data[margin.start_offset : margin.end_offset] == b"3"
    assert data[history.start_offset : history.end_offset] == b"16"
    assert (site.span.line, site.span.column) == (2, line2.index("D(") + 1)


def test_float_margin_is_an_invalid_value() -> None:
    site = one(
        TE_IMPORT.format(names="DelayedScaling")
        + "r = DelayedScaling(margin=1.5, amax_history_len='16')\n"
    )
    assert site.margin.known is False and site.margin.value is None
    # TE's pydantic dataclass coerces a string of an integer (lax mode): not a mistake
    assert site.amax_history_len.known is True and site.amax_history_len.value == 16
    assert [(n.kind, n.key) for n in site.invalid] == [("invalid-value", "margin")]
    note = site.invalid[0]
    assert note.message == "`margin` is 1.5; expected an integer"
    assert (note.span.line, note.span.column, note.span.end_column) == (2, 27, 30)


def test_custom_amax_callable_and_override_linear_precision() -> None:
    site = one(
        TE_IMPORT.format(names="DelayedScaling")
        + "r = DelayedScaling(amax_compute_algo=lambda h: h.max(), "
        "override_linear_precision=(False,False,  True), reduce_amax=False)\n"
    )
    assert site.amax_compute_algo.known is False
    assert site.amax_compute_algo.note is not None
    assert site.amax_compute_algo.note.startswith("custom callable")
    assert site.override_linear_precision.value == "(false, false, true)"
    assert site.reduce_amax.value is False and site.reduce_amax.provenance == "written"


def test_most_recent_algo_is_read() -> None:
    site = one(
        TE_IMPORT.format(names="DelayedScaling")
        + "r = DelayedScaling(amax_compute_algo='most_recent')\n"
    )
    assert site.amax_compute_algo.value is AmaxAlgo.MOST_RECENT
    assert site.amax_compute_algo.provenance == "written"


def test_local_class_with_the_same_name_is_not_a_recipe() -> None:
    assert (
        parse("""\
        class DelayedScaling:
            pass
        r = DelayedScaling(margin=1)
        """)
        == []
    )
    assert parse("r = DelayedScaling(margin=1)\n") == []  # never imported


def test_star_import_and_attribute_overrides() -> None:
    site = one("""\
        from transformer_engine.common.recipe import *
        r = DelayedScaling()
        r.amax_history_len = 8
        """)
    assert site.amax_history_len.value == 8
    assert site.amax_history_len.key == "r.amax_history_len"
    assert site.amax_history_len.provenance == "written"


# -- autocast linkage -----------------------------------------------------------------------


def test_autocast_groups_attach_to_the_right_recipe() -> None:
    sites = parse("""\
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        from megatron.core import parallel_state as mpu
        r1 = DelayedScaling(amax_history_len=16)
        r2 = DelayedScaling(amax_history_len=32)
        with te.fp8_autocast(enabled=True, fp8_recipe=r1, fp8_group=mpu.get_data_parallel_group()):
            pass
        with te.autocast(recipe=r2, amax_reduction_group=None):
            pass
        """)
    first, second = sites
    assert first.amax_history_len.value == 16
    assert first.amax_scope.value is AmaxScope.DP_ONLY
    assert first.amax_scope.provenance == "written"
    assert first.amax_scope.key == "fp8_group"
    assert first.amax_scope.raw == "mpu.get_data_parallel_group()"
    assert first.amax_scope.span is not None and first.amax_scope.span.line == 6
    assert second.amax_scope.value is AmaxScope.WORLD
    assert second.amax_scope.key == "amax_reduction_group"
    assert second.amax_scope.provenance == "written"


def test_tp_only_amax_reduction_group_and_inline_recipe() -> None:
    site = one("""\
        import transformer_engine.pytorch as te
        import transformer_engine.common.recipe as recipe
        from megatron.core import parallel_state
        with te.fp8_autocast(
            fp8_recipe=recipe.DelayedScaling(),
            fp8_group=parallel_state.get_amax_reduction_group(tp_only_amax_red=True),
        ):
            pass
        """)
    assert site.amax_scope.value is AmaxScope.TP_CP
    assert site.amax_scope.known is True


@pytest.mark.parametrize(
    ("group", "scope"),
    [
        ("mpu.get_amax_reduction_group()", AmaxScope.TP_DP_CP),
        ("mpu.get_tensor_model_parallel_group()", AmaxScope.TP),
        ("mpu.get_tensor_and_data_parallel_group()", AmaxScope.TP_DP),
        ("mpu.get_model_parallel_group()", AmaxScope.CUSTOM),
    ],
)
def test_group_getters(group: str, scope: AmaxScope) -> None:
    site = one(f"""\
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        r = DelayedScaling()
        with te.fp8_autocast(fp8_recipe=r, fp8_group={group}):
            pass
        """)
    assert site.amax_scope.value is scope


def test_unreadable_group_and_missing_group() -> None:
    sites = parse("""\
        import torch.distributed as dist
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        a = DelayedScaling()
        b = DelayedScaling()
        group = dist.new_group([0, 1])
        with te.fp8_autocast(fp8_recipe=a, fp8_group=group):
            pass
        with te.fp8_autocast(enabled=True, fp8_recipe=b):
            pass
        """)
    a, b = sites
    assert a.amax_scope.known is False and a.amax_scope.value is None
    assert a.amax_scope.note == "fp8lint cannot tell which ranks `group` holds"
    assert b.amax_scope.value is AmaxScope.WORLD
    assert b.amax_scope.provenance == "default"
    assert b.amax_scope.key == "fp8_group"
    assert b.amax_scope.span is not None and b.amax_scope.span.line == 9


def test_no_autocast_means_the_world_group() -> None:
    site = one(TE_IMPORT.format(names="DelayedScaling") + "r = DelayedScaling()\n")
    assert site.amax_scope.value is AmaxScope.WORLD
    assert site.amax_scope.provenance == "default"
    assert site.amax_scope.note == "no autocast seen in this file; TE's default group is the world"


def test_untraceable_autocast_recipe_makes_the_scope_unknown() -> None:
    site = one("""\
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        r = DelayedScaling()
        with te.fp8_autocast(fp8_recipe=get_recipe(), fp8_group=None):
            pass
        """)
    assert site.amax_scope.known is False
    assert site.amax_scope.note is not None and "line 4" in site.amax_scope.note


def test_self_attribute_recipe_and_torch_autocast() -> None:
    site = one("""\
        import torch
        import transformer_engine.pytorch as te
        from transformer_engine.common.recipe import DelayedScaling
        class Model:
            def __init__(self):
                self.fp8_recipe = DelayedScaling()
            def forward(self, x):
                with torch.autocast(device_type="cuda"):
                    with te.fp8_autocast(fp8_recipe=self.fp8_recipe, fp8_group=None):
                        return x
        """)
    assert site.amax_scope.value is AmaxScope.WORLD
    assert site.amax_scope.provenance == "written"


# -- NeMo 2 and Megatron-Bridge -------------------------------------------------------------


def test_megatron_mixed_precision_takes_nemo2_defaults() -> None:
    site = one("""\
        from nemo import lightning as nl
        plugin = nl.MegatronMixedPrecision(precision="bf16-mixed", fp8="hybrid")
        """)
    assert site.framework == Framework.NEMO2
    assert site.kind == "NeMo 2 MegatronMixedPrecision(...)"
    assert site.enabled.value is True and site.enabled.provenance == "written"
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.amax_history_len.value == 1
    assert site.amax_history_len.provenance == "default"
    assert site.amax_history_len.default_of == "NeMo 2 MegatronMixedPrecision"
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "default"
    assert site.amax_compute_algo.value is AmaxAlgo.MOST_RECENT
    assert site.num_layers_at_start_in_bf16.value == 0


def test_run_config_form_and_fp8_params_rename() -> None:
    site = one("""\
        import nemo_run as run
        from nemo.lightning.pytorch.plugins.mixed_precision import MegatronMixedPrecision
        plugin = run.Config(
            MegatronMixedPrecision,
            precision="bf16-mixed",
            fp8="e4m3",
            fp8_recipe="tensorwise",
            fp8_amax_history_len=128,
            fp8_params=True,
        )
        """)
    assert site.framework == Framework.NEMO2
    assert site.fmt.value is Fp8Format.E4M3
    assert site.recipe.value is Recipe.TENSORWISE
    assert site.amax_history_len.value == 128 and site.amax_history_len.provenance == "written"
    assert site.fp8_param_gather.value is True
    assert site.fp8_param_gather.key == "fp8_params"
    assert (site.span.line, site.span.end_line) == (3, 10)


def test_fp8_none_is_disabled() -> None:
    site = one("plugin = MegatronMixedPrecision(precision='bf16-mixed', fp8=None)\n")
    assert site.enabled.value is False and site.enabled.known is True


def test_bridge_mixed_precision_config() -> None:
    site = one("""\
        from megatron.bridge.training.mixed_precision import MixedPrecisionConfig
        cfg = MixedPrecisionConfig(bf16=True, fp8="hybrid")
        """)
    assert site.framework == Framework.BRIDGE
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.provenance == "default"
    assert site.recipe.default_of == "Megatron-Bridge MixedPrecisionConfig"


def test_plugin_attribute_override() -> None:
    site = one("""\
        plugin = MegatronMixedPrecision(precision="bf16-mixed")
        plugin.fp8 = "hybrid"
        plugin.fp8_amax_history_len = 512
        """)
    assert site.enabled.value is True and site.enabled.key == "plugin.fp8"
    assert site.amax_history_len.value == 512
    span = site.amax_history_len.span
    assert span is not None and (span.line, span.column) == (3, 31)


def test_nemo_preset_call() -> None:
    site = one("""\
        from nemo.collections.llm.recipes.precision.mixed_precision import bf16_with_fp8_mixed
        plugins = bf16_with_fp8_mixed()
        """)
    assert site.framework == Framework.NEMO2
    assert site.kind == "NeMo 2 preset bf16_with_fp8_mixed()"
    assert site.amax_history_len.value == 1024
    assert site.amax_history_len.provenance == "preset"
    assert site.amax_history_len.key == "bf16_with_fp8_mixed"
    assert site.amax_history_len.describe() == "preset `bf16_with_fp8_mixed`"
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.recipe.value is Recipe.DELAYED and site.recipe.provenance == "preset"
    assert site.enabled.value is True and site.enabled.provenance == "preset"
    assert site.fmt.value is Fp8Format.HYBRID
    assert site.fp8_param_gather.value is True and site.fp8_param_gather.provenance == "preset"
    # fields the preset leaves alone keep the plugin's defaults
    assert site.fp8_wgrad.value is True and site.fp8_wgrad.provenance == "default"
    assert (site.span.line, site.span.column, site.span.end_column) == (2, 11, 32)


def test_preset_followed_by_attribute_assignment() -> None:
    site = one("""\
        def recipe():
            p = bf16_with_fp8_mixed()
            p.fp8_amax_history_len = 1
            return p
        """)
    assert site.amax_history_len.value == 1
    assert site.amax_history_len.provenance == "written"
    assert site.amax_history_len.key == "p.fp8_amax_history_len"
    assert site.margin.value == 0 and site.margin.provenance == "preset"


def test_current_scaling_presets() -> None:
    sites = parse("""\
        a = llm.nemotron_h_bf16_with_fp8_current_scaling_mixed()
        b = nanov2_bf16_with_fp8_current_scaling_mixed()
        """)
    a, b = sites
    assert a.recipe.value is Recipe.TENSORWISE
    assert (a.num_layers_at_start_in_bf16.value, a.num_layers_at_end_in_bf16.value) == (2, 2)
    assert b.recipe.value is Recipe.BLOCKWISE
    assert b.first_last_layers_bf16.value is True


def test_bridge_preset_string() -> None:
    site = one("""\
        cfg = ConfigContainer(
            mixed_precision="bf16_with_fp8_current_scaling_mixed",
        )
        """)
    assert site.framework == Framework.BRIDGE
    assert site.recipe.value is Recipe.TENSORWISE and site.recipe.provenance == "preset"
    assert site.first_last_layers_bf16.value is True
    assert site.first_last_layers_bf16.provenance == "preset"
    assert site.num_layers_at_start_in_bf16.value == 1
    assert site.num_layers_at_end_in_bf16.value == 1
    assert site.fp8_param_gather.value is True
    assert site.recipe.key == "bf16_with_fp8_current_scaling_mixed"
    assert (site.span.line, site.span.column) == (2, 21)


def test_bridge_preset_hyphen_spelling_and_bridge_only_names() -> None:
    sites = parse("""\
        cfg.mixed_precision = "bf16-with-mxfp8-mixed"
        mp = bf16_with_fp8_delayed_scaling_mixed()
        """)
    a, b = sites
    assert a.framework == Framework.BRIDGE
    assert a.recipe.value is Recipe.MXFP8 and a.fmt.value is Fp8Format.E4M3
    assert a.recipe.key == "bf16-with-mxfp8-mixed"
    assert b.framework == Framework.BRIDGE
    assert b.amax_history_len.value == 1024 and b.amax_history_len.provenance == "preset"


def test_preset_names_in_comparisons_choices_and_docstrings_are_not_sites() -> None:
    assert (
        parse('''\
        """Use bf16_with_fp8_mixed for speed."""
        parser.add_argument("--precision", choices=["bf16_with_fp8_mixed", "bf16-mixed"])
        if args.precision == "bf16_with_fp8_mixed":
            pass
        table = {"bf16_with_fp8_mixed": 1}
        ''')
        == []
    )


def test_megatron_strategy_topology_is_attached() -> None:
    sites = parse("""\
        import nemo_run as run
        from nemo import lightning as nl
        from transformer_engine.common.recipe import DelayedScaling
        strategy = run.Config(
            nl.MegatronStrategy,
            tensor_model_parallel_size=4,
            pipeline_model_parallel_size=2,
            context_parallel_size=2,
            sequence_parallel=True,
        )
        plugins = bf16_with_fp8_mixed()
        te_recipe = DelayedScaling()
        """)
    preset, te_site = sites
    assert preset.tensor_parallel.value == 4
    assert preset.tensor_parallel.provenance == "written"
    assert preset.tensor_parallel.key == "tensor_model_parallel_size"
    assert preset.tensor_parallel.span is not None and preset.tensor_parallel.span.line == 6
    assert preset.pipeline_parallel.value == 2
    assert preset.context_parallel.value == 2
    assert preset.sequence_parallel.value is True
    assert preset.expert_parallel.value == 1 and preset.expert_parallel.provenance == "default"
    assert te_site.tensor_parallel.known is False and te_site.tensor_parallel.value is None


# -- Accelerate --------------------------------------------------------------------------------


def test_accelerate_most_recent_is_dropped() -> None:
    site = one("""\
        from accelerate.utils import FP8RecipeKwargs
        kwargs = [FP8RecipeKwargs(backend="te", amax_compute_algo="most_recent",
                                  amax_history_len=32)]
        """)
    assert site.framework == Framework.ACCELERATE
    assert site.kind == "Accelerate FP8RecipeKwargs(...)"
    assert site.recipe.value is Recipe.DELAYED
    assert site.amax_compute_algo.value is AmaxAlgo.MAX
    assert site.amax_compute_algo.provenance == "default"
    assert [n.kind for n in site.notes] == ["ignored"]
    assert site.notes[0].key == "amax_compute_algo"
    assert site.amax_history_len.value == 32
    assert site.enabled.value is True and site.enabled.provenance == "derived"


def test_te_recipe_kwargs_and_missing_backend() -> None:
    a, b = parse("""\
        from accelerate.utils import TERecipeKwargs, FP8RecipeKwargs
        a = TERecipeKwargs(fp8_format="E4M3", override_linear_precision=(False, False, True))
        b = FP8RecipeKwargs(margin=1)
        """)
    assert a.kind == "Accelerate TERecipeKwargs(...)"
    assert a.recipe.value is Recipe.DELAYED and a.recipe.key == "backend"
    assert a.fmt.value is Fp8Format.E4M3
    assert a.override_linear_precision.value == "(false, false, true)"
    assert b.recipe.known is False and b.recipe.value is None
    assert b.margin.value == 1


# -- the file as a whole -----------------------------------------------------------------------


def test_sites_are_sorted_by_position() -> None:
    sites = parse("""\
        import transformer_engine.common.recipe as recipe
        x = [recipe.DelayedScaling(margin=2), recipe.DelayedScaling(margin=1)]
        y = recipe.Float8CurrentScaling()
        """)
    assert [(s.span.line, s.span.column) for s in sites] == [(2, 6), (2, 39), (3, 5)]
    assert [s.margin.value for s in sites[:2]] == [2, 1]


def test_syntax_error_is_a_parse_error_with_its_line() -> None:
    with pytest.raises(ParseError) as info:
        parse("x = 1\nr = DelayedScaling(margin=1 amax_history_len=2)\n")
    assert info.value.line == 2
    assert info.value.column == 27
    assert info.value.message.startswith("Python syntax error")


def test_unclosed_bracket() -> None:
    with pytest.raises(ParseError) as info:
        parse("a = 1\nb = DelayedScaling(\n")
    assert (info.value.line, info.value.column) == (2, 19)


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    for body in (
        "x = " + "(" * 3000 + "1" + ")" * 3000 + "\n",
        "x = " + "-" * 5000 + "1\n",
        "x = " + "1 + " * 50000 + "1\n",
        "x = " + "a." * 50000 + "b\n",
    ):
        src = "from transformer_engine.common.recipe import DelayedScaling\n" + body
        with pytest.raises(ParseError) as info:
            parse_file(SourceFile("deep.py", src), "python")
        assert "nest" in info.value.message


def test_nesting_within_the_limit_is_read() -> None:
    # 900 nested unary minuses and an 8000-term `and` (flat in the tree) are legal Python
    # CPython reads: the recipe that uses the value is still read (the value is no literal)
    src = (
        "from transformer_engine.common.recipe import DelayedScaling\n"
        "x = " + "-" * 900 + "1\n"
        "y = " + "1 and " * 8000 + "1\n"
        "r = DelayedScaling(margin=x)\n"
    )
    (site,) = parse_file(SourceFile("deep.py", src), "python")
    assert site.margin.known is False
    assert site.amax_history_len.value == 1024


def test_file_without_site_names_is_not_parsed() -> None:
    # mentions FP8 but builds nothing fp8lint reads: not parsed, so no syntax error either
    assert parse("# fp8 notes\nx = (\n") == []


def test_file_with_no_fp8_and_splats() -> None:
    assert parse("import os\nprint(os.getcwd())\n") == []
    site = one(TE_IMPORT.format(names="DelayedScaling") + "r = DelayedScaling(**cfg)\n")
    assert site.amax_history_len.value == 1024
