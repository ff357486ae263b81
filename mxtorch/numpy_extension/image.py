"""``mx.npx.image``: the image operators (``to_tensor``, ``normalize``, ``resize``, ...)
in NumPy mode: the registry's ``_image_*`` operators (MXNet's ``_npx__image_*`` aliases)
with ``mx.np.ndarray`` results."""
from ..ops import registry as _reg
from ._op import _make

__all__ = sorted(_reg.namespace_names("image"))

for _short, _opname in _reg.namespace_names("image").items():
    globals()[_short] = _make(_short, _opname)
del _short, _opname
