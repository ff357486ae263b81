"""DESIGN/STYLE invariants that cost nothing to check: torch stays inside the engine-facing
modules, and every registered operator has a test that names it."""
import ast
import os

import mxtorch
from mxtorch.ops import registry

ROOT = os.path.dirname(mxtorch.__file__)
# Modules allowed to import torch (STYLE.md "engine isolation"; ndarray/ holds NDArray).
ALLOWED = ("ops/", "ndarray/ndarray.py", "ndarray/indexing.py",
           "ndarray/cached_op.py", "executor.py", "graph/", "autograd.py",
           "context.py", "random.py", "kvstore/", "numpy/", "numpy_extension/",
           "runtime.py", "profiler/",
           "torch.py", "rtc.py")  # mx.th calls torch's functions, mx.rtc torch's NVRTC


def _imports_torch(path: str) -> bool:
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "torch"
                                                 for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[0] == "torch" and node.level == 0:
            return True
    return False


def test_torch_only_in_engine_modules():
    offenders = []
    for dirpath, _, files in os.walk(ROOT):
        for fn in files:
            if not fn.endswith(".py"):
                continue
            path = os.path.join(dirpath, fn)
            rel = os.path.relpath(path, ROOT).replace(os.sep, "/")
            if rel.startswith(ALLOWED) or rel in ("cli/info.py", "cli/convert.py",
                                                  "launch.py"):
                continue
            if _imports_torch(path):
                offenders.append(rel)
    assert not offenders, f"torch imported outside the engine layer: {offenders}"


def test_format_is_pure():
    for fn in os.listdir(os.path.join(ROOT, "format")):
        if fn.endswith(".py"):
            assert not _imports_torch(os.path.join(ROOT, "format", fn)), fn


def test_attribute_defaults_round_trip_through_strings():
    """Every default prints as MXNet prints it (str) and parses back to itself."""
    from mxtorch.base import attr_to_str
    from mxtorch.ops.params import REQUIRED
    bad = []
    for name, op in registry.canonical_ops().items():
        for p in op.params.values():
            if p.default is REQUIRED or p.default is None:
                continue
            value = p.convert(name, p.default)
            again = p.convert(name, attr_to_str(value))
            if again != value and not (value != value and again != again):  # NaN
                bad.append(f"{name}.{p.name}: {value!r} -> {attr_to_str(value)!r} -> {again!r}")
    assert not bad, bad


def test_every_operator_has_a_doc_and_unique_names():
    seen = {}
    for name, op in registry.all_ops().items():
        assert seen.setdefault(name, op) is op
    for op in registry.canonical_ops().values():
        assert isinstance(op.doc, str)


def test_dtype_attributes_accept_numpy_types():
    """A dtype attribute parses a NumPy type object and a np.dtype as its name (MXNet's
    front end turns both into the name), and restricted ones reject other dtypes."""
    import numpy as np
    from mxtorch.base import MXNetError
    checked = 0
    for name, op in registry.canonical_ops().items():
        for p in op.params.values():
            if not p.type_name.startswith("dtype"):
                continue
            for dt in p.choices or ("float32", "int32"):
                if dt == "bfloat16":
                    continue
                assert p.convert(name, getattr(np, dt)) == dt, (name, p.name, dt)
                assert p.convert(name, np.dtype(dt)) == dt, (name, p.name, dt)
                checked += 1
            if p.choices and "complex64" not in p.choices:
                try:
                    p.convert(name, np.complex64)
                except MXNetError as err:
                    assert name in str(err) and p.name in str(err)
                else:
                    raise AssertionError(f"{name}.{p.name} accepted complex64")
    assert checked > 50


# Graph passes and front ends read an operator's properties from its OpDef (channels_last,
# fusion_role, same_dtype_fn, ...), never from its name. Where a name is data, not a
# property, the comparison is listed here: (file, enclosing function).
NAME_DATA = {
    ("graph/partition.py", "select"),              # the user's op_names (MXNet's selector)
    ("graph/ir_json.py", "_upgrade_op_attrs"),     # MXNet's legacy JSON upgrade table
    ("graph/ir_json.py", "_strip_amp"),            # MXNet drops amp casts from saved JSON
    ("graph/ir_json.py", "skip"),
}
NAME_SCANNED = ("graph/", "ndarray/", "profiler/", "symbol/")


def _op_names_in(node) -> bool:
    """Whether ``node`` is an operator's name string or a literal collection of them."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and registry.find(node.value) is not None
    if isinstance(node, ast.Call) and len(node.args) == 1:   # frozenset({...})
        return _op_names_in(node.args[0])
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(
        _op_names_in(e) for e in node.elts)


def _is_op_name(node, local_names: set) -> bool:
    """``x.op.name``, ``op.name``, ``opdef.name`` or a local variable assigned one."""
    if isinstance(node, ast.Name):
        return node.id in local_names
    return isinstance(node, ast.Attribute) and node.attr == "name" and (
        isinstance(node.value, ast.Attribute) and node.value.attr == "op"
        or isinstance(node.value, ast.Name) and node.value.id in ("op", "opdef"))


def _name_comparisons(path: str) -> list[tuple[str, int]]:
    """(enclosing function, line) of each comparison that decides on an operator name."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    tables = {t.id for st in tree.body if isinstance(st, ast.Assign) and _op_names_in(st.value)
              for t in st.targets if isinstance(t, ast.Name)}
    found = []

    def visit(node, func: str, local_names: set) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            func, local_names = node.name, set()
        if isinstance(node, ast.Assign) and _is_op_name(node.value, set()):
            local_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_is_op_name(s, local_names) or _op_names_in(s)
                   and any(_is_op_name(o, local_names) for o in sides)
                   or isinstance(s, ast.Name) and s.id in tables for s in sides):
                found.append((func, node.lineno))
        for child in ast.iter_child_nodes(node):
            visit(child, func, local_names)
    visit(tree, "<module>", set())
    return found


def test_passes_read_operator_properties_not_names():
    offenders = []
    for dirpath, _, files in os.walk(ROOT):
        for fn in files:
            rel = os.path.relpath(os.path.join(dirpath, fn), ROOT).replace(os.sep, "/")
            if not fn.endswith(".py") or not rel.startswith(NAME_SCANNED):
                continue
            offenders += [f"{rel}:{line} ({func})" for func, line
                          in _name_comparisons(os.path.join(dirpath, fn))
                          if (rel, func) not in NAME_DATA]
    assert not offenders, ("an operator property keyed by name (declare it on the OpDef): "
                           f"{offenders}")


def test_name_scan_finds_a_name_keyed_property():
    """The scan above sees the forms a name-keyed property takes."""
    import tempfile
    src = ('_ADD = frozenset({"elemwise_add", "_npi_add"})\n'
           'def f(n):\n    return n.op.name in _ADD\n'
           'def g(n):\n    name = n.op.name\n    return name == "Pooling"\n'
           'def h(opdef):\n    return opdef.name == "Custom"\n'
           'def ok(n):\n    return n.parsed.act_type == "relu" or n.name in ("x",)\n')
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(src)
    try:
        assert [func for func, _ in _name_comparisons(f.name)] == ["f", "g", "h"]
    finally:
        os.unlink(f.name)


# Operators no test names yet (each should get a test against NumPy or MXNet's values in
# its tests/test_ops_*.py file, and leave this list). Only ever shrinks.
UNTESTED_OPS: set = set()
# How tests reach an operator: mx.nd.contrib.X is _contrib_X, mx.np.X is _npi_X, ...
_NAMESPACE_PREFIXES = ("_contrib_", "_linalg_", "_random_", "_sample_", "_image_", "_npi_",
                       "_npx_", "_np_", "_sparse_")


def _names_in_tests() -> set:
    """Every string literal, attribute name (mx.nd.X, sym.X, F.X) and one-placeholder
    f-string filled with a literal of its file (f"broadcast_{suffix}") in tests/."""
    found = set()
    here = os.path.dirname(__file__)
    for fn in os.listdir(here):
        if not fn.endswith(".py") or fn == os.path.basename(__file__):
            continue
        with open(os.path.join(here, fn), encoding="utf-8") as f:
            tree = ast.parse(f.read())
        literals, patterns = set(), []
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.add(node.value)
            elif isinstance(node, ast.Attribute):
                found.add(node.attr)
            elif isinstance(node, ast.JoinedStr) and len(node.values) in (2, 3) and \
                    sum(isinstance(v, ast.FormattedValue) for v in node.values) == 1:
                first, last = node.values[0], node.values[-1]
                patterns.append((first.value if isinstance(first, ast.Constant) else "",
                                 last.value if isinstance(last, ast.Constant) else ""))
        found |= literals
        found |= {pre + lit + post for pre, post in patterns for lit in literals}
    return found


def test_every_operator_has_a_test():
    """Each registered operator is named by some test (as mx.nd.X / mx.sym.X / F.X, in a
    check_op table, or by its graph name), except the explicit UNTESTED_OPS list."""
    seen = _names_in_tests()
    untested = set()
    for name, op in registry.canonical_ops().items():
        names = {name, *op.aliases}
        names |= {n[len(p):] for n in names for p in _NAMESPACE_PREFIXES if n.startswith(p)}
        if not names & seen:
            untested.add(name)
    assert untested <= UNTESTED_OPS, f"operators without a test: {sorted(untested - UNTESTED_OPS)}"
    assert not UNTESTED_OPS - untested, \
        f"tested now, drop from UNTESTED_OPS: {sorted(UNTESTED_OPS - untested)}"
