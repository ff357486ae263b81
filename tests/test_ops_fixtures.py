"""Every single-operator case real MXNet 1.9.1 computed (../shared/fixtures ops/cases.json):
forward outputs, gradients through mx.autograd, and BatchNorm's moving statistics."""
import numpy as np
import pytest

import mxtorch as mx
from helpers import op_cases

CASES, DATA = op_cases()


def _fn(op):
    return getattr(mx.nd, op) if hasattr(mx.nd, op) else getattr(mx.nd._internal, op)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_case(case):
    tol = case["tolerance"]
    inputs = [mx.nd.array(DATA[i["key"]], dtype=i["dtype"]) for i in case["inputs"]]
    grads = case.get("grads") or {}
    for arr, spec in zip(inputs, case["inputs"]):
        if spec["name"] in grads:
            arr.attach_grad()
    train = case["mode"] == "train"
    names = [i["name"] for i in case["inputs"]]
    kwargs = dict(case["attrs"])
    with mx.autograd.record(train_mode=train):
        outs = _fn(case["op"])(*inputs, **kwargs)
    outs = outs if isinstance(outs, list) else [outs]
    assert len(outs) == len(case["outputs"]), "number of outputs"
    for o, spec in zip(outs, case["outputs"]):
        assert o.shape == tuple(spec["shape"]), f"output shape {o.shape} vs {spec['shape']}"
        assert np.dtype(o.dtype) == np.dtype(spec["dtype"]), f"dtype {o.dtype}"
        if case.get("notes", "").startswith("uninitialised"):
            continue
        np.testing.assert_allclose(o.asnumpy(), DATA[spec["key"]], rtol=tol["rtol"],
                                   atol=tol["atol"], err_msg=f"{case['id']} forward")
    if grads:
        heads = [mx.nd.array(DATA[k]) for k in case["head_grads"]]
        mx.autograd.backward(outs, heads)
        gtol = case.get("grad_tolerance", tol)
        for arr, name in zip(inputs, names):
            if name in grads:
                np.testing.assert_allclose(arr.grad.asnumpy(), DATA[grads[name]],
                                           rtol=gtol["rtol"], atol=gtol["atol"],
                                           err_msg=f"{case['id']} grad of {name}")
    for name, key in (case.get("aux_after") or {}).items():
        np.testing.assert_allclose(inputs[names.index(name)].asnumpy(), DATA[key],
                                   rtol=tol["rtol"], atol=tol["atol"],
                                   err_msg=f"{case['id']} aux {name}")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_infer_shape_and_json_attrs(case):
    """Registry invariants on every real-MXNet case: inferred output shapes equal the real
    ones, and the attributes MXNet wrote into symbol JSON parse to the same values."""
    from mxtorch.ops import registry
    op = registry.get(case["op"])
    given, json_attrs = dict(case["attrs"]), dict(case["attrs_json"])
    if op.key_var_num_args:  # filled in by the front ends when not given
        given.setdefault(op.key_var_num_args, len(case["inputs"]))
        json_attrs.setdefault(op.key_var_num_args, str(len(case["inputs"])))
    attrs = op.parse_attrs(given)
    assert op.parse_attrs(json_attrs) == attrs
    _, outs = op.infer_shape(attrs, [tuple(i["shape"]) for i in case["inputs"]])
    assert [tuple(o) for o in outs] == [tuple(o["shape"]) for o in case["outputs"]]
