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
    for name, op in registry.canonical_ops().items():
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
