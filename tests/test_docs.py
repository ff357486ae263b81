"""Operator docstrings (mx.ndarray_doc / mx.symbol_doc, built from the OpDefs) and
mx.libinfo, against MXNet 1.9.1's layout and behaviour."""
import doctest
import logging
import os

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import libinfo, ndarray_doc, symbol_doc


def _params(doc):
    """The lines of a docstring's Parameters section, up to the blank line."""
    lines = doc[doc.index("Parameters\n----------\n"):].split("\n")[2:]
    return lines[:lines.index("")]


def test_ndarray_function_doc_has_mxnet_layout():
    doc = mx.nd.FullyConnected.__doc__
    assert doc.startswith("Applies a linear transformation")
    lines = _params(doc)
    assert [ln for ln in lines if not ln.startswith(" ")] == [
        "data : NDArray", "weight : NDArray", "bias : NDArray", "num_hidden : int, required",
        "no_bias : boolean, optional, default=0", "flatten : boolean, optional, default=1"]
    tail = doc[doc.index("\nout : NDArray, optional"):]
    assert tail.startswith("\nout : NDArray, optional\n    The output NDArray to hold the "
                           "result.\n\nReturns\n-------\nout : NDArray or list of NDArrays")


def test_symbol_function_doc_has_mxnet_types_and_defaults():
    doc = mx.sym.Convolution.__doc__
    lines = _params(doc)
    # the type strings MXNet 1.9.1 prints for these attributes
    for line in ["data : Symbol", "kernel : Shape(tuple), required",
                 "stride : Shape(tuple), optional, default=[]",
                 "no_bias : boolean, optional, default=0",
                 "cudnn_tune : {None, 'fastest', 'limited_workspace', 'off'},optional, "
                 "default='None'",
                 "layout : {None, 'NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC'},optional, "
                 "default='None'"]:
        assert line in lines
    assert "NDArray" not in "\n".join(lines)
    assert "\nname : string, optional.\n    Name of the resulting symbol.\n\nReturns\n" \
           "-------\nSymbol\n    The result symbol." in doc
    lrelu = _params(mx.nd.LeakyReLU.__doc__)
    assert "act_type : {'elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu'},optional, " \
           "default='leaky'" in lrelu
    assert "upper_bound : float, optional, default=0.333999991" in lrelu   # a C float
    border = _params(mx.nd._internal._cvcopyMakeBorder.__doc__)
    assert "type : int, optional, default='0'" in border
    assert "values : tuple of float, optional, default=[]" in border


def test_variable_inputs_and_own_parameter_sections():
    doc = mx.sym.Concat.__doc__
    assert "This function support variable length of positional input." in doc
    assert _params(doc)[0] == "data : Symbol[]"
    # an operator whose description has its own Parameters section keeps it
    assert mx.nd.BatchNorm.__doc__.count("Parameters\n----------") == 1


def test_extra_doc_classes_are_appended():
    assert "Examples\n--------" in mx.sym.FullyConnected.__doc__
    assert "SymbolDoc.get_output_shape(fc, x=(2, 3))" in mx.sym.FullyConnected.__doc__
    assert "mx.nd.stack(a, b, axis=1)" in mx.nd.stack.__doc__
    # a symbol-only example is not on the NDArray function and vice versa
    assert "SymbolDoc" not in mx.nd.FullyConnected.__doc__
    assert "mx.nd.stack(a, b" not in mx.sym.stack.__doc__
    assert symbol_doc._build_doc("Nope", "d", [], [], []).endswith("The result symbol.")


def _run_doctests(base, globs):
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    ran = 0
    for cls in base.__subclasses__():
        for test in finder.find(cls, globs=dict(globs)):
            result = runner.run(test)
            assert result.failed == 0, cls.__name__
            ran += result.attempted
    return ran


def test_doc_examples_run():
    globs = {n: getattr(mx.sym, n) for n in dir(mx.sym) if not n.startswith("_")}
    globs.update(SymbolDoc=symbol_doc.SymbolDoc, mx=mx, np=np, test_utils=mx.test_utils)
    assert _run_doctests(symbol_doc.SymbolDoc, globs) >= 15
    assert _run_doctests(ndarray_doc.NDArrayDoc, {"mx": mx, "np": np}) >= 8


def test_get_output_shape():
    fc = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=3, name="fc")
    assert symbol_doc.SymbolDoc.get_output_shape(fc, x=(5, 2)) == {"fc_output": (5, 3)}


# ---------------------------------------------------------------- mx.libinfo
def test_version():
    # MXNet's API version (what packages built on MXNet check); mxtorch's own release apart
    assert mx.__version__ == libinfo.__version__ == "1.9.1"
    assert mx.__mxtorch_version__ == libinfo.__mxtorch_version__ == "0.1.0"


def test_find_lib_path_gives_torch_libraries(monkeypatch):
    monkeypatch.delenv("MXNET_LIBRARY_PATH", raising=False)
    paths = libinfo.find_lib_path()
    assert paths and all(os.path.isfile(p) for p in paths)
    assert os.path.basename(paths[0]).startswith("libtorch_cpu")
    with pytest.raises(RuntimeError, match="Cannot find the MXNet library.\nList of "
                                           "candidates:\n.*libno_such_lib"):
        libinfo.find_lib_path("libno_such_lib")
    # a library found by prefix in LD_LIBRARY_PATH
    monkeypatch.setenv("LD_LIBRARY_PATH", os.path.dirname(paths[0]))
    name = os.path.splitext(os.path.basename(paths[0]))[0]
    assert paths[0] in libinfo.find_lib_path(name)


def test_library_environment_variables(monkeypatch, tmp_path, caplog):
    lib = tmp_path / "libcustom.so"
    lib.write_bytes(b"")
    monkeypatch.setenv("MXNET_LIBRARY_PATH", str(lib))
    assert libinfo.find_lib_path() == [str(lib)]
    monkeypatch.setenv("MXNET_LIBRARY_PATH", "relative/libcustom.so")
    with caplog.at_level(logging.WARNING):
        assert libinfo.find_lib_path() != ["relative/libcustom.so"]
    assert "doesn't exist" in caplog.text
    monkeypatch.setenv("MXNET_INCLUDE_PATH", str(tmp_path))
    assert libinfo.find_include_path() == str(tmp_path)
    monkeypatch.delenv("MXNET_INCLUDE_PATH")
    incl = libinfo.find_include_path()
    assert os.path.isdir(os.path.join(incl, "torch"))
    conf = tmp_path / "tvmop.conf"
    conf.write_text("{}")
    monkeypatch.setenv("MXNET_CONF_PATH", str(conf))
    assert libinfo.find_conf_path() == str(conf)
    monkeypatch.delenv("MXNET_CONF_PATH")
    with pytest.raises(RuntimeError, match="Cannot find the TVM op config"):
        libinfo.find_conf_path("no_such_conf")
