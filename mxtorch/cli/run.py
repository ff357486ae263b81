"""``mxtorch run SCRIPT [ARGS...]``: run an unchanged MXNet script on mxtorch.

For the run, ``import mxnet`` and every ``mxnet.<sub>`` import resolve to ``mxtorch`` and
``mxtorch.<sub>`` (the very same module objects), ``sys.argv`` is ``[SCRIPT, ARGS...]``,
the script's directory leads ``sys.path`` and the script runs as ``__main__``.

Packages built on MXNet import unchanged under the alias, with one adjustment: GluonCV 0.10
probes for its optional PyTorch half and raises RuntimeError for any torch >= 2, which every
mxtorch install has. While the alias is installed, ``gluoncv.check`` loads from its own file
and its ``_require_pytorch_version`` then reports a torch outside GluonCV's range as the
ImportError it gives for a missing torch, so GluonCV takes its documented MXNet-only path
(``gluoncv._found_pytorch`` is False; its ``gluoncv.torch`` models need torch < 2 anyway).
No file of GluonCV is changed and nothing else sees the difference.

MXNet-era code also uses NumPy names that NumPy 1.24 and 2.0 removed (``np.float``,
``np.float_``, ``np.NaN``...): they are put back for the run (:mod:`.numpy_compat`;
``--no-numpy-aliases`` turns that off).
"""
from __future__ import annotations

import argparse
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import runpy
import sys
from types import ModuleType

from . import numpy_compat

__all__ = ["MXNetAliasFinder", "install_alias", "remove_alias", "run_script"]

_ALIAS = "mxnet"
_TARGET = "mxtorch"
_GLUONCV_CHECK = "gluoncv.check"


class _GluonCVCheckLoader(importlib.abc.Loader):
    """Runs ``gluoncv.check`` from its file, then makes its PyTorch probe optional."""

    def __init__(self, loader: importlib.abc.Loader):
        self.loader = loader

    def create_module(self, spec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        probe = module._require_pytorch_version

        def _require_pytorch_version(*args, **kwargs):
            # GluonCV: a RuntimeError here aborts `import gluoncv`; an ImportError means
            # "no PyTorch half" and GluonCV goes on with MXNet (here, mxtorch) alone.
            try:
                return probe(*args, **kwargs)
            except RuntimeError as err:
                raise ImportError(f"gluoncv's PyTorch half is not used: {err}") from err

        # a ModuleType gains GluonCV's function: mypy does not know the attribute
        module._require_pytorch_version = _require_pytorch_version  # type: ignore[attr-defined]


def _gluoncv_check_spec(finder, fullname: str, path, target):
    """The spec of GluonCV's own ``gluoncv.check`` with its loader wrapped (None if absent)."""
    for other in sys.meta_path:
        if other is finder or not hasattr(other, "find_spec"):
            continue
        spec = other.find_spec(fullname, path, target)
        if spec is not None:
            if spec.loader is None or not hasattr(spec.loader, "exec_module"):
                return None
            spec.loader = _GluonCVCheckLoader(spec.loader)
            return spec
    return None


class _AliasLoader(importlib.abc.Loader):
    """Loader that hands back the already-imported mxtorch module for an mxnet name."""

    def __init__(self, target: str):
        self.target = target
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec) -> ModuleType:
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the alias spec on the shared module; put mxtorch's back
        # so that reload() and pickling keep working with the real names.
        if self._spec is not None:
            module.__spec__ = self._spec


class MXNetAliasFinder(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder mapping ``mxnet`` and ``mxnet.x.y`` to ``mxtorch[.x.y]``
    (and loading ``gluoncv.check`` with its PyTorch probe made optional, see above)."""

    def find_spec(self, fullname: str, path=None, target=None):
        if fullname == _GLUONCV_CHECK:
            return _gluoncv_check_spec(self, fullname, path, target)
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        real = _TARGET + fullname[len(_ALIAS):]
        if importlib.util.find_spec(real) is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(real))


_FINDER = MXNetAliasFinder()


def install_alias() -> None:
    """Make ``import mxnet`` (and its submodules) resolve to mxtorch in this process."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    # Modules already imported under mxtorch get their mxnet names right away.
    for name, module in list(sys.modules.items()):
        if module is not None and (name == _TARGET or name.startswith(_TARGET + ".")):
            sys.modules.setdefault(_ALIAS + name[len(_TARGET):], module)


def remove_alias() -> None:
    """Undo :func:`install_alias`: drop the finder and every ``mxnet`` alias entry."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n == _ALIAS or n.startswith(_ALIAS + ".")]:
        module = sys.modules[name]
        if getattr(module, "__name__", "").startswith(_TARGET):
            del sys.modules[name]


def run_script(script: str, args: list[str], module: bool = False,
               numpy_aliases: bool = True) -> None:
    """Run ``script`` (a path, or a module name when ``module``) as ``__main__`` with
    ``sys.argv[1:] = args`` and the ``mxnet`` alias installed (and NumPy's removed names
    back, with ``numpy_aliases``); restore sys state and NumPy after."""
    import mxtorch  # noqa: F401  (imported first so the aliases cover the whole package)
    saved_argv, saved_path = sys.argv[:], sys.path[:]
    install_alias()
    if numpy_aliases:
        numpy_compat.install()
    try:
        if module:
            sys.argv = [script] + list(args)
            sys.path.insert(0, os.getcwd())
            runpy.run_module(script, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [script] + list(args)
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv[:] = saved_argv
        sys.path[:] = saved_path
        remove_alias()
        numpy_compat.remove()


def _handle(args: argparse.Namespace) -> int:
    """Entry point of ``mxtorch run``."""
    if not args.module and not os.path.isfile(args.script):
        print(f"mxtorch run: no such script: {args.script}", file=sys.stderr)
        return 2
    run_script(args.script, args.script_args, module=args.module,
               numpy_aliases=args.numpy_aliases)
    return 0


def add_parser(sub) -> None:
    """Register the ``run`` subcommand."""
    p = sub.add_parser("run", help="run an unchanged MXNet script on mxtorch",
                       description="Run SCRIPT with `import mxnet` resolving to mxtorch. "
                                   "Arguments after SCRIPT are passed to it unchanged.")
    p.add_argument("-m", dest="module", action="store_true",
                   help="SCRIPT is a module name, run like `python -m`")
    p.add_argument("--no-numpy-aliases", dest="numpy_aliases", action="store_false",
                   help="do not put back the NumPy names removed in 1.24/2.0 (np.float, "
                        "np.float_, np.NaN ...) that MXNet-era code uses")
    p.add_argument("script", metavar="SCRIPT", help="path of the MXNet script")
    p.add_argument("script_args", nargs="*", metavar="ARGS",
                   help="arguments for the script (passed unchanged, options included)")
    p.set_defaults(handler=_handle)
