"""Start-up of the command line and of the package, side by side in one run.

    python benchmarks/bench_cli.py [--rounds 5]

Times, as fresh processes (wall clock, median and range over rounds):

- `keras-estimator --help`;
- `keras-estimator check` on a small program (tests/cli/programs/check_differs.py);
- `python -c "import keras_estimator"`;
- `python -c "import keras_estimator; keras_estimator.Estimator"` (the first
  use of a name, which imports TensorFlow and Keras);
- `python -c "import tensorflow"`: what every command paid when the package
  imported TensorFlow on import.

Prints a table and each command's ratio to `import tensorflow`, then one JSON
line with every figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "tests" / "cli" / "programs" / "check_differs.py"
CLI = [sys.executable, "-m", "keras_estimator._src.cli.main"]

COMMANDS = {
    "keras-estimator --help": [*CLI, "--help"],
    "keras-estimator check": [*CLI, "check", str(PROGRAM)],
    "import keras_estimator": [sys.executable, "-c", "import keras_estimator"],
    "first use of a name": [
        sys.executable,
        "-c",
        "import keras_estimator; keras_estimator.Estimator",
    ],
    "import tensorflow": [sys.executable, "-c", "import tensorflow"],
}


def _time_once(argv: list[str]) -> float:
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    start = time.perf_counter()
    subprocess.run(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
        cwd=ROOT, timeout=300, check=False,
    )
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for round_index in range(args.rounds):
        order = list(COMMANDS)
        if round_index % 2:
            order.reverse()
        for name in order:
            times[name].append(_time_once(COMMANDS[name]))

    baseline = statistics.median(times["import tensorflow"])
    print(f"{'command':<26} {'median s':>9} {'range s':>15} {'/ import tf':>12}")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:<26} {median:9.3f} {min(values):7.3f}-{max(values):<7.3f}"
            f" {median / baseline:12.3f}"
        )
    print(json.dumps({name: statistics.median(v) for name, v in times.items()}))


if __name__ == "__main__":
    main()
