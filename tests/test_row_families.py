"""Every row family has one name in every back-end (issue 22): the Pyomo components, the
PuLP constraint names (``family__index``) and the highspy row tags count the same rows per
family as ``Prep.row_counts`` predicts from the index sets, over the options that add or drop
families; and ``formulations/`` imports neither the algorithm registry nor the validator."""

from __future__ import annotations

import ast
from pathlib import Path

import pyomo.environ as pyo
import pytest
from oasis_opt.formulations import compact_highspy, compact_pulp, compact_pyomo
from oasis_opt.formulations.common import LEAN, PLAIN, SPEC_OPTIONS, Options, prepare

from oasis_opt.generator import generate

OPTIONS = {
    "default": None,
    "server": Options(packing="server"),
    "summed": Options(chained=False),
    "lean": LEAN,
    "spec": SPEC_OPTIONS,
    "plain": PLAIN,
    "symmetry": Options(packing="server", symmetry="load"),
    # the class and energy rows (issue 22 round 9, off by default), on PLAIN and patterns
    "class-energy": Options(packing="server", ps_dominance=False, completion_cuts=False,
                            ps_cuts=False, chained=False, class_rows=True, energy_rows=True),
    "pattern-energy": Options(class_rows=True, energy_rows=True),
}


def pyomo_counts(m: pyo.ConcreteModel) -> dict[str, int]:
    return {c.local_name: len(c) for c in m.component_objects(pyo.Constraint, active=True)
            if len(c)}


@pytest.mark.parametrize("options", list(OPTIONS))
@pytest.mark.parametrize(("preset", "seed"), [("small", 2), ("hard", 1), ("mixed", 0),
                                              ("uniform-1r", 1)])
def test_rows_per_family_agree(preset, seed, options):
    instance = generate(preset, seed=seed)
    prep = prepare(instance, OPTIONS[options])
    predicted = prep.row_counts()
    assert compact_highspy.build(instance, prep=prep).row_counts() == predicted
    assert compact_pulp.row_counts(compact_pulp.build(instance, prep=prep)) == predicted
    assert pyomo_counts(compact_pyomo.build(instance, prep=prep)) == predicted
    assert prep.model_size()["rows"] == sum(predicted.values())


def test_formulations_import_neither_registry_nor_validator():
    """The one-way import graph: ``formulations/`` is given seeds and checks by its callers."""
    root = Path(__file__).resolve().parent.parent / "formulations"
    banned = {"oasis_opt.algorithms", "oasis_opt.validate", "oasis_opt.offline"}
    for path in root.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
                assert not names & banned, (path.name, node.module)
            elif isinstance(node, ast.Import):
                assert not {a.name for a in node.names} & banned, path.name
