"""`keras-estimator check`: which tf.estimator names a program uses, and how each fares.

Programs are read with `ast`, never run. Each use of a name of a
tf.estimator namespace (`tf.estimator`, `tf.compat.v1.estimator` and their
`experimental` / `export` / `inputs` / `tpu` submodules, `tf.keras.estimator`,
the hooks of `tf.compat.v1.train`, `tf.keras.layers.DenseFeatures`), however
the program reached it (`import tensorflow as tf`, `import
tensorflow.compat.v1 as tf`, `from tensorflow.estimator import X`, `import
tensorflow_estimator as tfe`, ...), gets a status:

* `supported`: the name is in `base.public_names` and no entry of
  `known_differences` says otherwise;
* `differs` / `unsupported`: an entry of `known_differences` matches (also
  TF1 idioms outside the estimator namespaces: `tf.contrib`, sessions, ...);
* `unsupported` too for a name a tf.estimator namespace never had.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from keras_estimator._src.base import public_names
from keras_estimator._src.cli import known_differences as known
from keras_estimator._src.cli.errors import CliError

Status = known.Status


@dataclasses.dataclass(frozen=True)
class Finding:
    """One use of a tf.estimator-era name or idiom in a program."""

    file: str
    line: int
    col: int
    name: str
    status: Status
    note: str

    def as_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "status": self.status.value}


# ------------------------------------------------------------- namespaces


def _estimator_namespaces() -> dict[str, str]:
    """Dotted TF path (`tf.compat.v1.estimator.inputs`) -> public_names namespace.

    The roots are the namespaces `install()` replaces; their submodules come
    from `public_names.submodules_of`.
    """
    roots = {
        "tf.estimator": public_names.ESTIMATOR,
        "tf.compat.v1.estimator": public_names.V1,
        "tf.keras.estimator": public_names.TF_KERAS_ESTIMATOR,
        "tf.compat.v1.keras.estimator": public_names.TF_KERAS_ESTIMATOR,
    }
    paths: dict[str, str] = {}
    pending = list(roots.items())
    while pending:
        path, namespace = pending.pop()
        paths[path] = namespace
        for name, submodule in public_names.submodules_of(namespace).items():
            pending.append((f"{path}.{name}", submodule))
    return paths


ESTIMATOR_NAMESPACES = _estimator_namespaces()

# TensorFlow namespaces of which only the names public_names lists are
# tf.estimator's (the rest, optimizers say, is TensorFlow's own).
PARTIAL_NAMESPACES = {
    "tf.compat.v1.train": public_names.V1_TRAIN,
    "tf.keras.layers": public_names.FEATURE_COLUMN,
    "tf.compat.v1.keras.layers": public_names.FEATURE_COLUMN,
}

_NAMES = {
    namespace: {row.name for row in public_names.entries_in(namespace)}
    for namespace in public_names.NAMESPACES
}


def canonical(dotted: str) -> str:
    """A module path as programs spell it: `tf.` for TensorFlow, v2 as v1-less."""
    parts = dotted.split(".")
    if parts[0] in ("tensorflow", "tf"):
        parts[0] = "tf"
    if parts[0] == "tensorflow_estimator" and parts[1:2] == ["estimator"]:
        # tensorflow_estimator's top-level `estimator` was the v1 API.
        parts[:2] = ["tf", "compat", "v1", "estimator"]
    if parts[:3] == ["tf", "compat", "v2"]:
        parts[1:3] = []
    return ".".join(parts)


# ---------------------------------------------------------- classification


@dataclasses.dataclass(frozen=True)
class _Name:
    """A name of an estimator namespace that a chain reaches."""

    full: str  # e.g. tf.compat.v1.estimator.inputs.numpy_input_fn
    short: str  # e.g. numpy_input_fn
    known: bool  # whether the namespace has it


def _estimator_name(dotted: str) -> _Name | None:
    """The estimator-namespace name `dotted` starts with, if any."""
    parts = dotted.split(".")
    for end in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:end])
        namespace = ESTIMATOR_NAMESPACES.get(prefix)
        partial = PARTIAL_NAMESPACES.get(prefix)
        if namespace is None and partial is None:
            continue
        name = parts[end]
        if name.startswith("__"):
            return None
        if namespace is not None:
            if name in public_names.submodules_of(namespace):
                return None  # a longer prefix would have matched: a bare submodule
            return _Name(f"{prefix}.{name}", name, name in _NAMES[namespace])
        assert partial is not None
        if name in _NAMES[partial]:
            return _Name(f"{prefix}.{name}", name, True)
        return None
    return None


def _registry_match(dotted: str) -> tuple[str, known.KnownDifference] | None:
    """The longest registry pattern (not `estimator:`) that `dotted` falls under."""
    best: tuple[str, known.KnownDifference] | None = None
    for entry in known.KNOWN_DIFFERENCES:
        pattern = entry.pattern
        if pattern.startswith(known.ESTIMATOR_PREFIX) or entry.keyword:
            continue
        if pattern.endswith(".*"):
            stem = pattern[:-2]
            hit = dotted == stem or dotted.startswith(stem + ".")
            name = dotted
        else:
            hit = dotted == pattern or dotted.startswith(pattern + ".")
            name = pattern
        if hit and (best is None or len(pattern) > len(best[1].pattern)):
            best = (name, entry)
    return best


def _estimator_entry(short: str) -> known.KnownDifference | None:
    for entry in known.KNOWN_DIFFERENCES:
        if entry.keyword is None and entry.pattern == known.ESTIMATOR_PREFIX + short:
            return entry
    return None


def classify(dotted: str) -> tuple[str, Status, str] | None:
    """(name, status, note) for a canonical dotted name, or None if not ours."""
    matched = _registry_match(dotted)
    if matched is not None:
        name, entry = matched
        return name, entry.status, entry.note
    found = _estimator_name(dotted)
    if found is not None:
        if not found.known:
            return found.full, Status.UNSUPPORTED, _unknown_note(found)
        difference = _estimator_entry(found.short)
        if difference is not None:
            return found.full, difference.status, difference.note
        return found.full, Status.SUPPORTED, ""
    parts = dotted.split(".")
    if parts[0] == "tensorflow_estimator" and len(parts) > 1:
        return (
            dotted,
            Status.UNSUPPORTED,
            "tensorflow_estimator here has only `estimator` (the v1 API); "
            "fix: use tf.estimator / tf.compat.v1.estimator",
        )
    return None


def _unknown_note(found: _Name) -> str:
    """Why `found` is unknown, with the name meant where one is close."""
    path = found.full.rsplit(".", 1)[0]
    note = known.UNKNOWN_NAME.format(namespace=path)
    elsewhere = sorted(
        other
        for other, namespace in ESTIMATOR_NAMESPACES.items()
        if other != path and found.short in _NAMES[namespace]
    )
    if elsewhere:
        names = " or ".join(f"{other}.{found.short}" for other in elsewhere)
        return f"{note}; fix: use {names}"
    close = difflib.get_close_matches(
        found.short, sorted(_NAMES[ESTIMATOR_NAMESPACES[path]]), n=1, cutoff=0.75
    )
    if close:
        return f"{note}; fix: did you mean {path}.{close[0]}?"
    return f"{note}; fix: check the spelling"


def _keyword_entries(short: str) -> list[known.KnownDifference]:
    wanted = {known.ESTIMATOR_PREFIX + short, known.ESTIMATOR_PREFIX + "*"}
    return [e for e in known.KNOWN_DIFFERENCES if e.keyword and e.pattern in wanted]


# ------------------------------------------------------------ the AST walk


def _bindings(tree: ast.AST) -> dict[str, str]:
    """Local name -> canonical path, for every TensorFlow import in `tree`."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = canonical(alias.name)
                else:
                    top = alias.name.split(".")[0]
                    bound[top] = canonical(top)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    local = alias.asname or alias.name
                    bound[local] = canonical(f"{node.module}.{alias.name}")
    return {
        local: path
        for local, path in bound.items()
        if path.split(".")[0] in ("tf", "tensorflow_estimator")
    }


def _chain(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None if it does not end in a plain name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


class _Checker(ast.NodeVisitor):
    def __init__(self, file: str, bindings: dict[str, str]) -> None:
        self.file = file
        self.bindings = bindings
        self.findings: list[Finding] = []
        # Names the program binds to a `tf.Graph()` it makes.
        self.graphs: set[str] = set()
        # How many of the program's own `with <graph>.as_default():` blocks
        # enclose the node being visited.
        self.in_graph = 0

    def _add(self, node: ast.AST, name: str, status: Status, note: str) -> None:
        if self.in_graph and name in known.RUN_IN_A_PROGRAMS_GRAPH:
            status, note = Status.SUPPORTED, known.IN_A_PROGRAMS_GRAPH_NOTE
        self.findings.append(
            Finding(
                self.file,
                getattr(node, "lineno", 0),
                getattr(node, "col_offset", 0) + 1,
                name,
                status,
                note,
            )
        )

    def _resolve(self, node: ast.AST) -> str | None:
        parts = _chain(node)
        if parts is None or parts[0] not in self.bindings:
            return None
        return canonical(".".join([self.bindings[parts[0]], *parts[1:]]))

    def _makes_a_graph(self, node: ast.AST) -> bool:
        """`tf.Graph()` (any alias), or a name the program bound to one."""
        if isinstance(node, ast.Name):
            return node.id in self.graphs
        return isinstance(node, ast.Call) and self._resolve(node.func) in (
            "tf.Graph",
            "tf.compat.v1.Graph",
        )

    def visit_Assign(self, node: ast.Assign) -> None:
        if self._makes_a_graph(node.value):
            self.graphs.update(t.id for t in node.targets if isinstance(t, ast.Name))
        self.generic_visit(node)

    def _visit_with(self, node: ast.With | ast.AsyncWith) -> None:
        opens_a_graph = False
        for item in node.items:
            self.visit(item.context_expr)
            expr = item.context_expr
            if (
                isinstance(expr, ast.Call)
                and isinstance(expr.func, ast.Attribute)
                and expr.func.attr == "as_default"
                and self._makes_a_graph(expr.func.value)
            ):
                opens_a_graph = True
                if isinstance(item.optional_vars, ast.Name):
                    self.graphs.add(item.optional_vars.id)
        self.in_graph += opens_a_graph
        for statement in node.body:
            self.visit(statement)
        self.in_graph -= opens_a_graph

    visit_With = _visit_with
    visit_AsyncWith = _visit_with

    # Imports: what they import is one use.
    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._classify_import(node, canonical(alias.name))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.module and node.level == 0:
            for alias in node.names:
                if alias.name != "*":
                    self._classify_import(
                        node, canonical(f"{node.module}.{alias.name}")
                    )

    def _classify_import(self, node: ast.AST, dotted: str) -> None:
        result = classify(dotted)
        if result is not None:
            self._add(node, *result)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr == "session" and isinstance(node.value, ast.Name):
            if node.value.id.endswith("run_context"):
                entry = known.RUN_CONTEXT_SESSION
                self._add(node, f"{node.value.id}.session", entry.status, entry.note)
                return
        dotted = self._resolve(node)
        if dotted is None:
            self.generic_visit(node)
            return
        result = classify(dotted)
        if result is not None:
            self._add(node, *result)
        # The sub-chains are prefixes of this one: nothing more to find.

    def visit_Call(self, node: ast.Call) -> None:
        dotted = self._resolve(node.func)
        if dotted is not None:
            if dotted in ("tf.group", "tf.compat.v1.group") and any(
                _calls_apply_gradients(arg) for arg in node.args
            ):
                entry = known.APPLY_GRADIENTS_IN_GROUP
                self._add(node, entry.pattern, entry.status, entry.note)
            found = _estimator_name(dotted)
            if found is not None and found.known:
                self._check_keywords(node, found)
        self.generic_visit(node)

    def _check_keywords(self, node: ast.Call, found: _Name) -> None:
        for keyword in node.keywords:
            if keyword.arg is None:
                continue
            value = keyword.value
            literal_none = isinstance(value, ast.Constant) and value.value is None
            for entry in _keyword_entries(found.short):
                if entry.keyword != keyword.arg:
                    continue
                if entry.keyword_value is not None:
                    if not (
                        isinstance(value, ast.Constant)
                        and value.value is entry.keyword_value
                    ):
                        continue
                elif literal_none:
                    continue
                shown = ast.unparse(value) if len(ast.unparse(value)) <= 20 else "..."
                self._add(
                    keyword,
                    f"{found.full}({keyword.arg}={shown})",
                    entry.status,
                    entry.note,
                )
                break


def _calls_apply_gradients(node: ast.AST) -> bool:
    return any(
        isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Attribute)
        and sub.func.attr == "apply_gradients"
        for sub in ast.walk(node)
    )


def check_source(source: str, file: str = "<string>") -> list[Finding]:
    """The findings of one program's source; raises SyntaxError."""
    tree = ast.parse(source, file)
    checker = _Checker(file, _bindings(tree))
    checker.visit(tree)
    return sorted(checker.findings, key=lambda f: (f.line, f.col, f.name))


def _programs(paths: Sequence[str]) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            found = False
            for directory, subdirs, files in os.walk(path):
                subdirs[:] = sorted(d for d in subdirs if not d.startswith("."))
                for name in sorted(files):
                    if name.endswith(".py"):
                        found = True
                        yield os.path.join(directory, name)
            if not found:
                raise CliError(f"no .py files under {path}")
        elif os.path.isfile(path):
            yield path
        else:
            raise CliError(f"no such file: {path}")


def check_files(paths: Sequence[str]) -> list[Finding]:
    """The findings of every program in `paths` (files, or folders of .py files)."""
    findings: list[Finding] = []
    for path in list(_programs(paths)):
        try:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
        except (OSError, UnicodeDecodeError) as error:
            raise CliError(f"cannot read {path}: {error}") from None
        try:
            findings.extend(check_source(source, path))
        except SyntaxError as error:
            raise CliError(
                f"cannot parse {path}: {error.msg} (line {error.lineno})"
            ) from None
    return findings


# ----------------------------------------------------------------- output


def summary(findings: Sequence[Finding]) -> dict[str, int]:
    counts = {status.value: 0 for status in Status}
    for finding in findings:
        counts[finding.status.value] += 1
    return counts


def format_table(findings: Sequence[Finding]) -> str:
    """The findings as aligned columns, then a count of each status."""
    if not findings:
        return "no tf.estimator names or idioms found"
    rows = [("LOCATION", "NAME", "STATUS", "NOTE")] + [
        (f"{f.file}:{f.line}", f.name, f.status.value, f.note or "-") for f in findings
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(
            cell.ljust(width) for cell, width in zip(row[:3], widths, strict=True)
        )
        + "  "
        + row[3]
        for row in rows
    ]
    counts = summary(findings)
    lines.append("")
    lines.append(
        f"{len(findings)} uses: {counts['supported']} supported, "
        f"{counts['differs']} differ, {counts['unsupported']} unsupported"
    )
    return "\n".join(lines)


def main(paths: Sequence[str], as_json: bool, out: TextIO | None = None) -> int:
    """Runs the command; 1 when any use is unsupported, else 0."""
    out = out or sys.stdout
    findings = check_files(paths)
    if as_json:
        json.dump(
            {
                "findings": [f.as_json() for f in findings],
                "summary": summary(findings),
            },
            out,
            indent=2,
        )
        out.write("\n")
    else:
        out.write(format_table(findings) + "\n")
    return 1 if any(f.status is Status.UNSUPPORTED for f in findings) else 0
