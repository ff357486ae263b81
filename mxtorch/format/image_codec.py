"""Image encode/decode through OpenCV (``cv2``) or Pillow (``PIL``), whichever is installed.

Neither is a dependency of mxtorch: the first call that needs a codec raises an
MXNetError naming the package to install when both are missing. Arrays are HWC uint8;
``*_bgr`` functions use OpenCV's BGR channel order (as ``mx.recordio`` does), ``decode``
takes ``to_rgb`` like ``mx.image.imdecode``.
"""
from __future__ import annotations

import io
from types import ModuleType

import numpy as np

from ..base import MXNetError

_NO_CODEC = ("%s needs an image codec: install Pillow (`pip install pillow`) or OpenCV "
             "(`pip install opencv-python-headless`)")


def _cv2() -> ModuleType | None:
    """OpenCV module or None."""
    try:
        import cv2
    except ImportError:
        return None
    module: ModuleType = cv2  # untyped when OpenCV ships no stubs
    return module


def _pil() -> ModuleType | None:
    """PIL.Image module or None."""
    try:
        from PIL import Image
    except ImportError:
        return None
    return Image


def available() -> bool:
    """True when OpenCV or Pillow can be imported."""
    return _cv2() is not None or _pil() is not None


# MXNet: the OpenCV 3.4 that MXNet 1.9.1's builds link decodes JPEG, PNG, BMP and TIFF
# only (PPM, WebP, GIF, JPEG 2000, EPS, ... fail as invalid). Pillow and a newer OpenCV
# are given only these, so no other decoder (Pillow's EPS -> Ghostscript) ever runs.
_SIGNATURES = ((b"\xff\xd8\xff", "JPEG"), (b"\x89PNG\r\n\x1a\n", "PNG"), (b"BM", "BMP"),
               (b"II*\x00", "TIFF"), (b"MM\x00*", "TIFF"))


def image_format(buf: bytes, what: str) -> str:
    """The format of encoded image ``buf`` (by signature); MXNet's error for any other."""
    if not buf:
        raise MXNetError("%s: Check failed: len > 0: Input cannot be an empty buffer" % what)
    for magic, fmt in _SIGNATURES:
        if buf.startswith(magic):
            return fmt
    raise MXNetError("%s: Check failed: !res.empty(): Decoding failed. Invalid image file."
                     % what)


def _pil_decode(buf: bytes, flag: int, what: str) -> np.ndarray:
    """Decode with Pillow to an RGB(A)/gray array shaped like OpenCV's result, in RGB order."""
    image_mod = _pil()
    if image_mod is None:
        raise MXNetError(_NO_CODEC % what)
    fmt = image_format(buf, what)
    try:
        img = image_mod.open(io.BytesIO(buf), formats=[fmt])
        img.load()
    except Exception as err:  # Pillow raises many types
        raise MXNetError("%s: failed to decode image: %s" % (what, err)) from err
    if flag == 0:
        return np.asarray(img.convert("L"))
    if flag > 0 or img.mode not in ("L", "RGBA", "LA"):
        return np.asarray(img.convert("RGB"))
    if img.mode == "LA":
        img = img.convert("RGBA")
    return np.asarray(img)


def decode_bgr(buf: bytes, flag: int = -1, what: str = "unpack_img") -> np.ndarray:
    """``cv2.imdecode(buf, flag)``: BGR(A) channel order, 2-D for gray."""
    cv2 = _cv2()
    if cv2 is not None:
        image_format(buf, what)
        decoded: np.ndarray | None = cv2.imdecode(np.frombuffer(buf, dtype=np.uint8), flag)
        if decoded is None:
            raise MXNetError("%s: failed to decode image" % what)
        return decoded
    img = _pil_decode(buf, flag, what)
    if img.ndim == 3:
        order = [2, 1, 0, 3][:img.shape[2]]
        img = img[:, :, order]
    return np.ascontiguousarray(img)


def decode(buf: bytes, flag: int = 1, to_rgb: bool = True, what: str = "imdecode") -> np.ndarray:
    """Decode to HWC uint8 (HxWx1 for gray) in RGB order when ``to_rgb``, else BGR."""
    cv2 = _cv2()
    if cv2 is not None:
        img = decode_bgr(buf, flag, what)
        if img.ndim == 3 and to_rgb and img.shape[2] >= 3:
            img = img[:, :, [2, 1, 0] + ([3] if img.shape[2] == 4 else [])]
    else:
        img = _pil_decode(buf, flag, what)
        if img.ndim == 3 and not to_rgb:
            img = img[:, :, [2, 1, 0] + ([3] if img.shape[2] == 4 else [])]
    if img.ndim == 2:
        img = img[:, :, None]
    return np.ascontiguousarray(img)


def encode_bgr(img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """``cv2.imencode(img_fmt, img)`` of a BGR (or gray) uint8 image."""
    img = np.asarray(img)
    fmt = img_fmt.upper()
    cv2 = _cv2()
    if cv2 is not None:
        params = None
        if fmt in (".JPG", ".JPEG"):
            params = [cv2.IMWRITE_JPEG_QUALITY, quality]
        elif fmt == ".PNG":
            params = [cv2.IMWRITE_PNG_COMPRESSION, quality]
        ret, buf = cv2.imencode(img_fmt, img, params)
        if not ret:
            raise MXNetError("failed to encode image")
        encoded: bytes = buf.tobytes()
        return encoded
    return _pil_encode(img, quality, fmt)


def _pil_encode(img: np.ndarray, quality: int, fmt: str) -> bytes:
    """Encode a BGR/gray array with Pillow."""
    image_mod = _pil()
    if image_mod is None:
        raise MXNetError(_NO_CODEC % "pack_img")
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if img.ndim == 3:
        img = img[:, :, [2, 1, 0] + ([3] if img.shape[2] == 4 else [])]
    pil_img = image_mod.fromarray(np.ascontiguousarray(img.astype(np.uint8)))
    out = io.BytesIO()
    if fmt in (".JPG", ".JPEG"):
        pil_img.save(out, format="JPEG", quality=int(quality))
    elif fmt == ".PNG":
        pil_img.save(out, format="PNG", compress_level=int(quality))
    else:
        raise MXNetError("failed to encode image: unsupported format %s" % fmt)
    return out.getvalue()
