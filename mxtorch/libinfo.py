"""Information about the installation (``mx.libinfo``): its version and where its native
libraries, headers and configuration files are.

MXNet's native library is ``libmxnet.so``, the C++ engine behind its Python API. mxtorch
has no engine of its own: every operator runs on PyTorch, so "the library" here is
torch's native libraries (``libtorch_cpu``, ``libtorch_cuda`` on a CUDA build,
``libtorch``, ``libc10``) and "the include path" is torch's C++ headers. MXNet's
environment variables still take precedence: ``MXNET_LIBRARY_PATH``,
``MXNET_INCLUDE_PATH`` and ``MXNET_CONF_PATH``. Nothing found raises ``RuntimeError``
listing the candidates, as MXNet does.

Finding torch's files reads its package location only; torch is not imported.
"""
from __future__ import annotations

import importlib.util
import logging
import os
import platform

_LOG = logging.getLogger(__name__)

__all__ = ["find_lib_path", "find_include_path", "find_conf_path", "__version__",
           "__mxtorch_version__"]

# MXNet: ``mx.__version__`` is the version of MXNet's API (packages built on MXNet check
# it: GluonCV wants >=1.4.0,<2.0.0); mxtorch's own release is ``__mxtorch_version__``
__version__ = "1.9.1"
__mxtorch_version__ = "0.1.0"

# torch's native libraries that compute mxtorch's operators, in order of importance
_TORCH_LIBS = ("torch_cpu", "torch_cuda", "torch", "c10", "c10_cuda")


def _torch_dir() -> str | None:
    """torch's package folder, found without importing it."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    return list(spec.submodule_search_locations)[0]


def _lib_file_names(prefix: str) -> list[str]:
    """The file names a library called ``prefix`` has on this platform."""
    if os.name == "nt":
        # torch names its DLLs without the 'lib' prefix (torch_cpu.dll)
        return [prefix + ".dll"] + ([prefix[3:] + ".dll"] if prefix.startswith("lib") else [])
    if platform.system() == "Darwin":
        return [prefix + ".dylib", prefix + ".so"]
    return [prefix + ".so"]


def _env_path(var: str, check) -> str | None:
    """The path in environment variable ``var`` when it exists and is absolute (MXNet
    warns about and ignores a relative or missing one)."""
    value = os.environ.get(var)
    if not value:
        return None
    if not check(value):
        _LOG.warning("%s '%s' doesn't exist", var, value)
        return None
    if not os.path.isabs(value):
        _LOG.warning("%s should be an absolute path, instead of: %s", var, value)
        return None
    return value


def _search_dirs() -> list[str]:
    """Folders searched for a named library: ``LD_LIBRARY_PATH`` (POSIX), torch's ``lib``
    folder, mxtorch's package folder and the ``lib``/``build`` folders of its checkout."""
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = []
    if os.name == "posix" and os.environ.get("LD_LIBRARY_PATH"):
        dirs += [p.strip() for p in os.environ["LD_LIBRARY_PATH"].split(":") if p.strip()]
    torch_dir = _torch_dir()
    if torch_dir:
        dirs.append(os.path.join(torch_dir, "lib"))
    dirs += [here, os.path.join(here, "..", "lib"), os.path.join(here, "..", "build")]
    return dirs


def find_lib_path(prefix="libmxnet"):
    """Find the native libraries mxtorch computes with.

    With the default ``prefix`` ('libmxnet', MXNet's own library) the answer is torch's
    core libraries: ``libtorch_cpu``, ``libtorch_cuda`` (CUDA builds), ``libtorch``,
    ``libc10`` and ``libc10_cuda``, those that exist. Any other prefix (a custom-operator
    library, say) is looked up by file name in ``LD_LIBRARY_PATH``, torch's ``lib`` folder
    and mxtorch's folders. ``MXNET_LIBRARY_PATH``, when it names an existing file by an
    absolute path, is the answer whatever the prefix, as in MXNet.

    Parameters
    ----------
    prefix : str, default 'libmxnet'
        The library's file name without its extension.

    Returns
    -------
    lib_path : list of str
        The paths of the libraries found.

    Raises
    ------
    RuntimeError
        When no library is found (the message lists the candidates).
    """
    from_env = _env_path("MXNET_LIBRARY_PATH", os.path.isfile)
    if from_env:
        return [from_env]
    if prefix == "libmxnet":
        torch_dir = _torch_dir()
        lib_dir = os.path.join(torch_dir, "lib") if torch_dir else "torch/lib"
        candidates = [os.path.join(lib_dir, name) for lib in _TORCH_LIBS
                      for name in _lib_file_names("lib" + lib)]
    else:
        candidates = [os.path.join(d, name) for d in _search_dirs()
                      for name in _lib_file_names(prefix)]
    found = [p for p in candidates if os.path.isfile(p)]
    if not found:
        raise RuntimeError("Cannot find the MXNet library.\nList of candidates:\n"
                           + "\n".join(candidates))
    return found


def find_include_path():
    """Find the C++ headers of the library mxtorch computes with: torch's ``include``
    folder (``MXNET_INCLUDE_PATH`` first, when it names an existing folder by an absolute
    path).

    Returns
    -------
    incl_path : str
        Path to the header files.

    Raises
    ------
    RuntimeError
        When there is no such folder.
    """
    from_env = _env_path("MXNET_INCLUDE_PATH", os.path.isdir)
    if from_env:
        return from_env
    torch_dir = _torch_dir()
    incl_path = os.path.join(torch_dir, "include") if torch_dir else "torch/include"
    if os.path.isdir(incl_path):
        return incl_path
    raise RuntimeError("Cannot find the MXNet include path in " + incl_path + "\n")


def find_conf_path(prefix="tvmop"):
    """Find the configuration file of MXNet's TVM-generated operators.

    mxtorch generates no operators with TVM, so only a file the user points at with
    ``MXNET_CONF_PATH``, or a ``<prefix>.conf`` in the ``lib`` or ``build`` folder of the
    checkout, is found.

    Parameters
    ----------
    prefix : str, default 'tvmop'
        The file name without '.conf'.

    Returns
    -------
    conf_path : str or list of str
        The ``MXNET_CONF_PATH`` file, else the list of files found (MXNet returns the list).

    Raises
    ------
    RuntimeError
        When no file is found (the message lists the candidates).
    """
    from_env = _env_path("MXNET_CONF_PATH", os.path.isfile)
    if from_env:
        return from_env
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "..", folder, prefix + ".conf")
                  for folder in ("lib", "build")]
    # MXNet: a list, although its docstring promises a string
    conf_path = [p for p in candidates if os.path.isfile(p)]
    if not conf_path:
        raise RuntimeError("Cannot find the TVM op config.\nList of candidates:\n"
                           + "\n".join(candidates))
    return conf_path
