"""The shell scanner's loops: `for NAME in WORDS` stands for one command per value."""

from __future__ import annotations

from fp8lint.documents.shell import MAX_LOOP_RUNS, parse

LOOP = """\
RECIPES=(fp8 te_mxfp8)
for recipe in "${RECIPES[@]}"; do
  python3 -m MaxText.train base.yml quantization=$recipe steps=10
  echo done-$recipe
done
python3 after.py $recipe
"""


def test_a_loop_body_is_one_command_per_value() -> None:
    script = parse(LOOP)
    texts = [[w.text for w in c] for c in script.commands]
    assert texts[0][-2:] == ["quantization=fp8", "steps=10"]
    assert texts[1][-2:] == ["quantization=te_mxfp8", "steps=10"]
    assert texts[2] == ["echo", "done-fp8"]
    assert texts[3] == ["echo", "done-te_mxfp8"]
    # after `done` the loop variable is what it always was: not assigned, unknown
    after = script.commands[4]
    assert [w.text for w in after][:2] == ["python3", "after.py"]
    assert after[2].known is False


def test_a_bare_loop_variable_points_at_its_value_in_the_list() -> None:
    text = "for tp in 2 4; do\n  torchrun x.py --tensor-model-parallel-size $tp\ndone\n"
    script = parse(text)
    values = [c[-1] for c in script.commands]
    assert [w.text for w in values] == ["2", "4"]
    assert [text[w.start : w.end] for w in values] == ["2", "4"]
    assert all(w.known for w in values)


def test_loops_over_unknown_or_too_many_values_stay_unknown() -> None:
    for head in ("for r in $(cat recipes.txt)", "for r", "for r in " + "x " * (MAX_LOOP_RUNS + 1)):
        script = parse(head + "; do\n  run.py --fp8-recipe $r\ndone\n")
        (command,) = script.commands
        assert command[-1].known is False, head


def test_nested_loops_multiply_and_commands_without_the_variable_run_once() -> None:
    text = "for a in 1 2; do\nfor b in x y; do\nrun $a $b\necho hi\ndone\ndone\n"
    commands = [[w.text for w in c] for c in parse(text).commands]
    assert commands == [
        ["run", "1", "x"],
        ["run", "1", "y"],
        ["run", "2", "x"],
        ["run", "2", "y"],
        ["echo", "hi"],
    ]


def test_a_while_loop_inside_a_for_loop_closes_only_itself() -> None:
    text = (
        "for r in a b; do\n  while read x; do\n    echo $x\n  done\n  run --recipe $r\ndone\n"
        "select s in p q; do echo $s; done\nrun --recipe $r\n"
    )
    runs = [[w.text for w in c] for c in parse(text).commands if c[0].text == "run"]
    assert runs[:2] == [["run", "--recipe", "a"], ["run", "--recipe", "b"]]
    assert len(runs) == 3  # after the loop, `$r` is unknown again: one command


def test_here_document_bodies() -> None:
    from fp8lint.documents.shell import heredoc_bodies

    text = "cat <<EOF\nbody\nEOF\nx <<< word\ny=$((1<<3))\ncat <<-'E'\n\tb2\n\tE\nz <<\"Q\"\nopen\n"
    bodies = [text[a:b] for a, b in heredoc_bodies(text)]
    assert bodies == ["body\n", "\tb2\n", "open\n"]  # `<<<` and `1<<3` are not here-documents
    assert heredoc_bodies("echo fp8\n") == ()
