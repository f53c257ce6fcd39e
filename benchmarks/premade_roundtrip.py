"""Model_dirs written here restore in tf.estimator 2.15 and predict the same.

For each premade fixture case (`tests/fixtures/tf215_premade/<case>/case.json`),
this package trains the case's estimator for 20 steps on the case's rows in a
fresh model_dir and predicts the held-out rows. Then tf.estimator 2.15 (the
reference venv, `_ref_venv.py`; KERAS_ESTIMATOR_REF_VENV reuses one) builds
the same estimator on that model_dir, restores it and predicts the same rows.
The script prints, per case, the largest difference over every float
prediction key and whether every string key is equal; it exits 1 if any case
differs by more than 1e-5.

    python benchmarks/premade_roundtrip.py [--only CASE ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(REPO))

FIXTURES = REPO / "tests" / "fixtures" / "tf215_premade"
GENERATOR = REPO / "tests" / "fixtures" / "make_tf215_premade_fixtures.py"

# Run by 2.15's python: restore <model_dir> with the generator's recipe for
# <case> and write its predictions of the eval rows to <out>.
REFERENCE = """
import sys, importlib.util, numpy as np
spec = importlib.util.spec_from_file_location("gen", sys.argv[1])
gen = importlib.util.module_from_spec(spec); spec.loader.exec_module(gen)
name, model_dir, out = sys.argv[2:5]
case = gen.CASES[name]
_, _, eval_x, _, _, _ = gen.case_data(case)
est = gen.make_estimator(case, model_dir)
rows = list(est.predict(gen._eval_input_fn(eval_x)))
arrays = {k: np.stack([r[k] for r in rows]) for k in rows[0]}
np.savez(out, **{k: v.astype(bytes) if v.dtype == object else v for k, v in arrays.items()})
"""


def _ours(name: str, model_dir: str) -> dict[str, np.ndarray]:
    from tests.canned.test_premade_fixtures import _case, _dataset, _estimator

    case = _case(name)
    est = _estimator(case, model_dir)
    est.train(lambda: _dataset(case["train_input"], repeat=True), steps=20)
    rows = list(est.predict(lambda: _dataset(case["eval_input"], labels=False)))
    return {k: np.stack([r[k] for r in rows]) for k in rows[0]}


def _compare(ours: dict[str, np.ndarray], theirs: dict[str, np.ndarray]) -> tuple[float, bool]:
    if sorted(ours) != sorted(theirs):
        raise AssertionError(f"prediction keys differ: {sorted(ours)} vs {sorted(theirs)}")
    worst, strings_equal = 0.0, True
    for key, value in ours.items():
        other = theirs[key].reshape(value.shape)
        if value.dtype.kind in "SOU":
            strings_equal &= bool(np.array_equal(value.astype(bytes), other.astype(bytes)))
        else:
            worst = max(worst, float(np.max(np.abs(value.astype(np.float64) - other))))
    return worst, strings_equal


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args(argv)
    import _ref_venv

    reference = _ref_venv.ensure_reference_python()
    names = args.only or sorted(
        p.name for p in FIXTURES.iterdir() if (p / "case.json").is_file()
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    failed = []
    print(f"{'case':<36} {'max |ours - 2.15|':>18}  strings equal")
    summary = {}
    for name in names:
        with tempfile.TemporaryDirectory() as tmp:
            model_dir = os.path.join(tmp, "model")
            ours = _ours(name, model_dir)
            out = os.path.join(tmp, "theirs.npz")
            completed = subprocess.run(
                [reference, "-c", REFERENCE, str(GENERATOR), name, model_dir, out],
                env=env, capture_output=True, text=True, timeout=600, check=False,
            )
            if completed.returncode != 0:
                print(f"{name:<36} 2.15 could not restore it:\n{completed.stderr[-2000:]}")
                failed.append(name)
                continue
            theirs = dict(np.load(out))
        worst, strings_equal = _compare(ours, theirs)
        print(f"{name:<36} {worst:>18.2e}  {strings_equal}")
        summary[name] = {"max_abs_difference": worst, "strings_equal": strings_equal}
        if worst > 1e-5 or not strings_equal:
            failed.append(name)
    print(json.dumps({"results": summary, "failed": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
