"""DESIGN.md's layer picture, enforced on the source: every import of an mxtorch module
(at module level and inside functions alike) points down the layers, and no two parts of
mxtorch import each other, directly or round a longer loop.

A *part* is a subpackage (``mxtorch.graph``) or a top-level module (``mxtorch.autograd``).
Imports inside one part are its own business; imports between parts are checked here.
"""
import ast
import os

import mxtorch

ROOT = os.path.dirname(mxtorch.__file__)

# DESIGN.md's layers, lowest first. A part may import parts of its own layer or below.
LAYERS = [
    # the foundation every layer uses: errors, dtype names, contexts, naming scopes
    ("foundation", {"base", "error", "log", "libinfo", "engine", "runtime", "context",
                    "attribute", "name", "util", "registry", "symbol_doc", "ndarray_doc"}),
    # bytes <-> plain data (dicts, lists, NumPy arrays); builds no NDArray or Symbol
    ("format", {"format"}),
    # the one operator registry over torch
    ("operators", {"ops"}),
    # the graph IR and its compilation to a torch.fx program
    ("graph", {"graph"}),
    # the user API (mx.nd, mx.sym, mx.autograd, ...) over the graph and the registry
    ("user API", {"ndarray", "autograd", "random", "symbol", "executor", "numpy",
                  "numpy_extension", "operator", "torch", "rtc", "profiler", "monitor",
                  "visualization", "capi", "kvstore", "optimizer", "lr_scheduler",
                  "initializer", "metric", "io", "recordio", "image", "callback", "model",
                  "feedforward", "executor_manager", "module", "gluon", "rnn", "contrib",
                  "notebook", "test_utils", "test_utils_data", "test_utils_stats",
                  "test_utils_symbol"}),
    # the package itself (``import mxtorch``) and the programs built on it
    ("package and tools", {"mxtorch", "cli", "demo", "__main__", "launch"}),
]

# (importer part, imported part): why it cannot move yet. The test fails when an entry is
# no longer needed, so the list only shrinks.
ALLOWED = {
    ("base", "capi"): "mx.base._LIB is MXNet's handle on its C library; base.py resolves it "
                      "on first use (module __getattr__) to capi.py's entry points, which "
                      "are written over NDArray and Symbol",
    ("format", "ndarray"): "optimizer .states pickles hold NDArrays: pickle_safe.py builds "
                           "and writes them itself (a factory handed down by optimizer/ and "
                           "kvstore/ would remove it)",
    ("ops", "ndarray"): "the Custom operator calls the user's CustomOp.forward/backward with "
                        "NDArrays (ops/custom.py wraps the tensors)",
    ("autograd", "ndarray"): "NDArray records through autograd's tape (state, note, attach), "
                             "while autograd.grad/backward hand back NDArrays; the tape is "
                             "not yet a module of its own below both",
    ("autograd", "symbol"): "autograd.get_symbol returns a Symbol of the recorded graph",
    ("ndarray", "numpy"): "NDArray.as_np_ndarray returns mx.np.ndarray, a subclass of "
                          "NDArray defined above it",
    ("io", "image"): "mx.io.ImageRecordIter/ImageDetRecordIter are built on mx.image's "
                     "augmenters, whose iterators subclass mx.io.DataIter",
    ("model", "feedforward"): "MXNet's mx.model exposes FeedForward (module __getattr__); "
                              "mxtorch defines it in feedforward.py, which uses mx.model",
    ("test_utils", "mxtorch"): "mx.test_utils is MXNet's test helper and a client of the "
                               "whole package (import mxtorch as mx), as MXNet's is",
    ("test_utils_data", "mxtorch"): "get_im2rec_path looks for tools/ beside the package's "
                                    "__init__ file",
    ("test_utils_symbol", "test_utils"): "mx.test_utils re-exports the symbol helpers, "
                                         "which use its default_context()",
}


def _module_name(path):
    rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
    return rel[: -len(".__init__")] if rel.endswith(".__init__") else rel


def _part(module):
    parts = module.split(".")
    return "mxtorch" if len(parts) == 1 else parts[1]


def _exists(module):
    path = os.path.join(os.path.dirname(ROOT), *module.split("."))
    return os.path.isdir(path) or os.path.exists(path + ".py")


def _imports(path, module=None):
    """Every mxtorch module ``path`` imports, anywhere in the file, with the line."""
    module = module or _module_name(path)
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "mxtorch":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "mxtorch":
                continue
            for alias in node.names:   # ``from . import ndarray`` imports mxtorch.ndarray
                sub = f"{target}.{alias.name}"
                yield (sub if _exists(sub) else target), node.lineno


def _edges():
    """``{(importer part, imported part): [where, ...]}`` over the whole package."""
    edges = {}
    for dirpath, _, files in os.walk(ROOT):
        for fn in sorted(files):
            if not fn.endswith(".py"):
                continue
            path = os.path.join(dirpath, fn)
            src = _part(_module_name(path))
            for target, line in _imports(path):
                dst = _part(target)
                if dst != src:
                    rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
                    where = edges.setdefault((src, dst), [])
                    if f"{rel}:{line} -> {target}" not in where:
                        where.append(f"{rel}:{line} -> {target}")
    return edges


def _layer_of():
    rank = {}
    for i, (_, parts) in enumerate(LAYERS):
        for p in parts:
            assert p not in rank, f"{p} is in two layers"
            rank[p] = i
    return rank


def _cycles(pairs):
    """The strongly connected components (more than one part) of the import graph."""
    graph = {}
    for a, b in pairs:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on_stack.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                on_stack.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on_stack:
                low[v] = min(low[v], index[w])
    return out


def test_every_part_has_a_layer():
    rank = _layer_of()
    found = {_part(_module_name(os.path.join(d, f)))
             for d, _, fs in os.walk(ROOT) for f in fs if f.endswith(".py")}
    assert not found - set(rank), f"parts missing from LAYERS: {sorted(found - set(rank))}"


def test_imports_point_down_the_layers():
    rank = _layer_of()
    bad = []
    for (src, dst), where in sorted(_edges().items()):
        if rank[dst] > rank[src] and (src, dst) not in ALLOWED:
            bad.append(f"{src} ({LAYERS[rank[src]][0]}) imports {dst} "
                       f"({LAYERS[rank[dst]][0]}): {where}")
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_no_import_cycles_between_parts():
    edges = [pair for pair in _edges() if pair not in ALLOWED]
    cycles = _cycles(edges)
    if cycles:
        detail = _edges()
        lines = []
        for comp in cycles:
            lines.append(" <-> ".join(comp))
            lines += [f"  {a} -> {b}: {detail[(a, b)][0]}" for a, b in edges
                      if a in comp and b in comp]
        raise AssertionError("import cycles:\n" + "\n".join(lines))


def test_allow_list_is_still_needed():
    edges = _edges()
    stale = sorted(pair for pair in ALLOWED if pair not in edges)
    assert not stale, f"ALLOWED entries no longer imported, remove them: {stale}"


def test_the_checker_sees_function_level_and_relative_imports(tmp_path):
    src = tmp_path / "probe.py"
    src.write_text("from ..graph import compile\nfrom . import registry as _reg\n"
                   "def f():\n    from ..ndarray.ndarray import NDArray\n"
                   "    import mxtorch.symbol\n")
    found = dict(_imports(str(src), "mxtorch.ops.probe"))
    assert found == {"mxtorch.graph.compile": 1, "mxtorch.ops.registry": 2,
                     "mxtorch.ndarray.ndarray": 4, "mxtorch.symbol": 5}
    assert _cycles([("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]) == [["a", "b", "c"]]
    assert _cycles([("a", "b"), ("b", "d")]) == []


def test_the_hand_tuned_backend_is_reached_only_through_the_registry():
    # DESIGN.md: the hand-tuned CPU kernels are one backend that no core module imports;
    # mxtorch.graph.backends loads it by name on first use
    tuned = "mxtorch.graph.backends.cpu_tuned"
    backends_dir = os.path.join(ROOT, "graph", "backends") + os.sep
    bad = []
    for dirpath, _, files in os.walk(ROOT):
        for fn in sorted(files):
            path = os.path.join(dirpath, fn)
            if not fn.endswith(".py") or path.startswith(backends_dir):
                continue
            rel = os.path.relpath(path, ROOT)
            bad += [f"{rel}:{line} -> {target}" for target, line in _imports(path)
                    if target == tuned or target.startswith(tuned + ".")]
    assert not bad, "modules outside graph/backends/ reaching the tuned backend:\n" + \
        "\n".join(bad)
