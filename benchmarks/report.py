"""One command for every side-by-side benchmark: REPORT.md and a plot of the ratios.

Runs each benchmark script of this folder that compares keras_estimator with
what it replaces (tf.estimator 2.15 in its own venv, tf.estimator 2.8 for
BoostedTrees, plain Keras `fit`), reads the JSON line each prints last, and
writes:

* `benchmarks/REPORT.md`: per configuration, the ratio (ours over the other,
  higher is better for us) as the median over rounds with the lowest and
  highest round, then each script's own table;
* `benchmarks/report.png`: the same ratios as points with their spread, on a
  log axis with the break-even line at 1.

    python benchmarks/report.py [--quick] [--only core premade ...]

`--quick` runs fewer steps and rounds (minutes instead of tens of minutes);
the plot needs matplotlib (`pip install -e .[bench]`).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


@dataclasses.dataclass(frozen=True)
class Ratio:
    """One configuration's speed ratio, ours over `baseline`, per round."""

    benchmark: str
    configuration: str
    baseline: str
    rounds: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.rounds)


def _core(result: dict[str, Any]) -> list[Ratio]:
    rows = [
        ("ours_vs_ref_train", "MLP 4-64-64-3 train", "tf.estimator 2.15"),
        ("ours_hook_vs_ref_hook_train", "MLP train, a hook fetching every step",
         "tf.estimator 2.15"),
        ("ours_logging_hook_vs_ref_logging_hook_train",
         "MLP train, LoggingTensorHook(every_n_iter=1)", "tf.estimator 2.15"),
        ("predict_speedup_vs_ref", "MLP single-example predict()", "tf.estimator 2.15"),
        ("ours_vs_keras_fit_train", "MLP 4-64-64-3 train", "Keras fit"),
    ]
    per_round = result["ratios_per_round"]
    return [
        Ratio("core", label, baseline, [r[key] for r in per_round if r.get(key)])
        for key, label, baseline in rows
        if any(r.get(key) for r in per_round)
    ]


def _compute_bound(result: dict[str, Any]) -> list[Ratio]:
    ratios = []
    for name, figures in result["results"].items():
        ratios.append(Ratio("compute_bound", f"{name} train", "tf.estimator 2.15",
                            figures["ours_vs_reference"]))
        ratios.append(Ratio("compute_bound", f"{name} train", "Keras fit",
                            figures["ours_vs_keras_fit"]))
    return ratios


def _per_case(benchmark: str, baseline: str, key: str) -> Callable[..., list[Ratio]]:
    def extract(result: dict[str, Any]) -> list[Ratio]:
        return [
            Ratio(benchmark, f"{name} train", baseline, figures[key])
            for name, figures in result["results"].items()
        ]

    return extract


def _rnn(result: dict[str, Any]) -> list[Ratio]:
    return [
        Ratio("rnn", f"RNNClassifier {name} train", "tf.estimator 2.15",
              [ours["steps_per_second"] / result["tf215"][name]["steps_per_second"]])
        for name, ours in result["ours"].items()
    ]


def _repeated_calls(result: dict[str, Any]) -> list[Ratio]:
    rows = [
        ("evaluate_call_ms", "evaluate() of 20 batches, per call"),
        ("predict_call_ms", "single-example predict(), per call"),
        # Its figure is ours / 2.15 in time: the report's ratio is speed.
        ("cold_start_ms", "cold start: Estimator() to the end of train(steps=1)"),
    ]
    ratios = []
    for model, figures in result["models"].items():
        for key, label in rows:
            for suffix, clock in (("_ms", "wall"), ("_cpu_ms", "CPU")):
                per_round = figures["ratios_per_round"][key.replace("_ms", suffix)]
                if key == "cold_start_ms":
                    per_round = [1 / r for r in per_round]
                ratios.append(Ratio("repeated_calls", f"{model} {label} ({clock} time)",
                                    "tf.estimator 2.15", per_round))
    return ratios


def _cold_start(result: dict[str, Any]) -> list[Ratio]:
    # The script's figures are ours / 2.15 in time: the report's ratio is speed.
    ratios = []
    for model, figures in result["cold_start"].items():
        per_round = figures["ratios_per_round"]
        for key, label in (
            ("package", "first use of the package (import and first names)"),
            ("cold_start", "cold start: Estimator() to the end of train(steps=1)"),
        ):
            for suffix, clock in (("_cpu_ms", "CPU"), ("_ms", "wall")):
                ratios.append(Ratio("cold_start", f"{model} {label} ({clock} time)",
                                    "tf.estimator 2.15",
                                    [1 / r for r in per_round[key + suffix]]))
    for program, figures in result["programs"].items():
        ratios.append(Ratio("cold_start", f"{program}, whole program (CPU time)",
                            "tf.estimator 2.15",
                            [1 / r for r in figures["ratios_per_round"]["cpu_s"]]))
    return ratios


@dataclasses.dataclass(frozen=True)
class Benchmark:
    name: str
    script: str
    quick: tuple[str, ...]  # the script's arguments for --quick; else its defaults
    extract: Callable[[dict[str, Any]], list[Ratio]]


BENCHMARKS = (
    Benchmark("core", "bench_core.py",
              ("--train-steps", "2000", "--rounds", "3", "--predict-calls", "30"), _core),
    Benchmark("compute_bound", "bench_compute_bound.py",
              ("--train-steps", "60", "--rounds", "3"), _compute_bound),
    Benchmark("premade", "bench_premade.py", ("--train-steps", "600", "--rounds", "3"),
              _per_case("premade", "tf.estimator 2.15", "ratios")),
    Benchmark("kmeans_sdca", "quality_kmeans_sdca.py",
              ("--train-steps", "300", "--rounds", "3"),
              _per_case("kmeans_sdca", "tf.estimator 2.15", "ratios")),
    Benchmark("rnn", "quality_rnn.py", ("--train-steps", "300"), _rnn),
    Benchmark("boosted_trees", "bench_boosted_trees.py", ("--rounds", "2"),
              _per_case("boosted_trees", "tf.estimator 2.8", "speedups")),
    Benchmark("repeated_calls", "bench_repeated_calls.py",
              ("--rounds", "3", "--eval-calls", "10", "--predict-calls", "30"),
              _repeated_calls),
    Benchmark("cold_start", "bench_cold_start.py",
              ("--rounds", "3", "--models", "mlp", "--phases", "--programs",
               "tf1_style_script.py", "census_wide_deep.py", "migrate_canned_estimators.py"),
              _cold_start),
    # Seconds of the command line's start-up, not a ratio: shown in its section.
    Benchmark("cli", "bench_cli.py", ("--rounds", "5"), lambda result: []),
)


def _run(benchmark: Benchmark, quick: bool) -> tuple[dict[str, Any], str, float]:
    args = benchmark.quick if quick else ()
    command = [sys.executable, str(HERE / benchmark.script), *args]
    print(f"[report] {' '.join(command[1:])}", file=sys.stderr, flush=True)
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True,
                               timeout=4 * 3600, check=False)
    seconds = time.perf_counter() - start
    if completed.returncode != 0:
        raise RuntimeError(f"{benchmark.script} failed:\n{completed.stderr[-3000:]}")
    lines = completed.stdout.strip().splitlines()
    return json.loads(lines[-1]), "\n".join(lines[:-1]), seconds


def _commit() -> str:
    """The checkout's commit, with "+ changes" when its tracked files differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              check=False).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return commit + (" + changes" if git("status", "--porcelain", "--untracked-files=no") else "")


def _load() -> str:
    return ", ".join(f"{value:.1f}" for value in os.getloadavg())


def _markdown(ratios: list[Ratio], outputs: dict[str, tuple[str, float]], quick: bool,
              context: dict[str, str]) -> str:
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# Benchmark report",
        "",
        f"Written by `python benchmarks/report.py{' --quick' if quick else ''}` on {when}, "
        f"from commit {context['commit']}, in one run of {context['minutes']} minutes; "
        f"load average {context['load_before']} at its start and {context['load_after']} "
        "at its end; "
        f"{os.cpu_count()} CPU cores, Python {platform.python_version()}, no GPU. "
        "A ratio is ours over the other's train steps per second (predict: its "
        "time per call over ours; cold start: its time over ours), taken within each round; higher is better for "
        "keras_estimator, 1 is break-even. Median over rounds, with the lowest and "
        "highest round.",
        "",
        "![ratios](report.png)",
        "",
        "| benchmark | configuration | against | ratio | range | rounds |",
        "|---|---|---|---:|---:|---:|",
    ]
    for ratio in ratios:
        lines.append(
            f"| {ratio.benchmark} | {ratio.configuration} | {ratio.baseline} "
            f"| {ratio.median:.2f}x | {min(ratio.rounds):.2f}-{max(ratio.rounds):.2f} "
            f"| {len(ratio.rounds)} |"
        )
    for name, (text, seconds) in outputs.items():
        lines += ["", f"## {name} ({seconds / 60:.1f} min)", "", "```", text.strip(), "```"]
    return "\n".join(lines) + "\n"


def _plot(ratios: list[Ratio], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    colors = {"tf.estimator 2.15": "tab:blue", "tf.estimator 2.8": "tab:green",
              "Keras fit": "tab:orange"}
    figure, axis = plt.subplots(figsize=(9, 0.32 * len(ratios) + 1.5))
    for index, ratio in enumerate(reversed(ratios)):
        color = colors.get(ratio.baseline, "tab:gray")
        axis.plot([min(ratio.rounds), max(ratio.rounds)], [index, index], color=color,
                  linewidth=2, alpha=0.5)
        axis.plot(ratio.median, index, "o", color=color)
    axis.set_yticks(range(len(ratios)))
    axis.set_yticklabels([f"{r.configuration} vs {r.baseline}" for r in reversed(ratios)],
                         fontsize=8)
    axis.set_xscale("log")
    axis.axvline(1.0, color="black", linewidth=0.8)
    axis.set_xlabel("speed ratio, keras_estimator / other (median and range of rounds)")
    axis.grid(axis="x", which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps and rounds")
    names = [b.name for b in BENCHMARKS]
    parser.add_argument("--only", nargs="*", choices=names, help="benchmarks to run")
    parser.add_argument("--out", type=Path, default=HERE / "REPORT.md")
    args = parser.parse_args(argv)
    selected = [b for b in BENCHMARKS if not args.only or b.name in args.only]
    ratios: list[Ratio] = []
    outputs: dict[str, tuple[str, float]] = {}
    context = {"commit": _commit(), "load_before": _load()}
    started = time.perf_counter()
    for benchmark in selected:
        result, text, seconds = _run(benchmark, args.quick)
        ratios += benchmark.extract(result)
        outputs[f"{benchmark.name}: `{benchmark.script}`"] = (text, seconds)
    context["minutes"] = f"{(time.perf_counter() - started) / 60:.0f}"
    context["load_after"] = _load()
    _plot(ratios, args.out.with_name("report.png"))
    args.out.write_text(_markdown(ratios, outputs, args.quick, context))
    for ratio in ratios:
        print(f"{ratio.benchmark:<14} {ratio.configuration:<45} vs {ratio.baseline:<18} "
              f"{ratio.median:6.2f}x ({min(ratio.rounds):.2f}-{max(ratio.rounds):.2f})")
    print(f"wrote {args.out} and {args.out.with_name('report.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
