"""mx.image, mx.io.ImageRecordIter, image datasets and vision transforms vs MXNet 1.9.1."""
import os

import numpy as np
import pytest

import mxtorch as mx
from mxtorch import image, recordio
from mxtorch.base import MXNetError
from mxtorch.format import image_codec as _codec
from mxtorch.io.image_record import ImageRecordIter
from mxtorch.gluon.data import vision
from mxtorch.gluon.data.vision import transforms as T

FIX = os.path.join(os.path.dirname(__file__), "fixtures_data")
needs_codec = pytest.mark.skipif(not _codec.available(),
                                 reason="needs Pillow or OpenCV (pip install pillow)")


@pytest.fixture(scope="module")
def expected():
    return np.load(os.path.join(FIX, "mx_expected.npz"))


def _bytes(name):
    return open(os.path.join(FIX, name), "rb").read()


@needs_codec
def test_imdecode_matches_mxnet(expected):
    png, jpg = _bytes("img0.png"), _bytes("img3.jpg")
    np.testing.assert_array_equal(image.imdecode(png).asnumpy(), expected["decoded0"])
    np.testing.assert_array_equal(image.imdecode(png, to_rgb=0).asnumpy(), expected["decoded_bgr0"])
    gray = image.imdecode(png, 0).asnumpy().astype(int)
    assert gray.shape == (6, 8, 1)
    assert np.abs(gray - expected["decoded_gray0"]).max() <= 1
    assert np.abs(image.imdecode(jpg).asnumpy().astype(int) - expected["decoded3"]).max() <= 2
    np.testing.assert_array_equal(image.imread(os.path.join(FIX, "img0.png")).asnumpy(),
                                  expected["decoded0"])
    with pytest.raises(ValueError, match="buf must be of type bytes"):
        image.imdecode("not bytes")


def test_missing_codec_error(monkeypatch):
    monkeypatch.setattr(_codec, "_cv2", lambda: None)
    monkeypatch.setattr(_codec, "_pil", lambda: None)
    with pytest.raises(MXNetError, match="install Pillow"):
        image.imdecode(b"\x89PNG")
    with pytest.raises(MXNetError, match="install Pillow"):
        recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), np.zeros((2, 2, 3), np.uint8))


@needs_codec
def test_pack_img_roundtrip():
    img = np.random.RandomState(0).randint(0, 256, (5, 7, 3)).astype(np.uint8)
    s = recordio.pack_img(recordio.IRHeader(0, [1.0, 2.0], 4, 0), img, quality=3, img_fmt=".png")
    header, out = recordio.unpack_img(s)
    np.testing.assert_array_equal(out, img)  # BGR in, BGR out (cv2 convention)
    np.testing.assert_array_equal(header.label, [1.0, 2.0])
    _, decoded = recordio.unpack(s)
    np.testing.assert_array_equal(image.imdecode(decoded).asnumpy(), img[:, :, ::-1])


@needs_codec
def test_image_record_iter_matches_mxnet(expected):
    rec = os.path.join(FIX, "mx_img.rec")
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 6, 8), batch_size=3, mean_r=10,
                         mean_g=20, mean_b=30, std_r=2, std_g=3, std_b=4)
    assert it.provide_data[0].shape == (3, 3, 6, 8) and it.provide_label[0].shape == (3,)
    for _ in range(2):
        batches = list(it)
        assert len(batches) == 2
        for j, b in enumerate(batches):
            np.testing.assert_allclose(b.data[0].asnumpy(), expected["iter_data%d" % j],
                                       atol=1e-4)
            np.testing.assert_array_equal(b.label[0].asnumpy(), expected["iter_label%d" % j])
            assert b.pad == int(expected["iter_pad%d" % j])
        it.reset()
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 6, 8), batch_size=3, round_batch=False)
    for j, b in enumerate(it):
        real = min(3, 4 - 3 * j)  # MXNet leaves the tail of a short batch uninitialized
        np.testing.assert_allclose(b.data[0].asnumpy()[:real],
                                   expected["iter_nr_data%d" % j][:real])
        np.testing.assert_array_equal(b.label[0].asnumpy(), expected["iter_nr_label%d" % j])
        assert b.pad == int(expected["iter_nr_pad%d" % j])


@needs_codec
def test_image_iter_and_record_dataset(expected):
    rec = os.path.join(FIX, "mx_img.rec")
    it = image.ImageIter(3, (3, 6, 8), path_imgrec=rec)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 2]
    np.testing.assert_array_equal(batches[1].label[0].asnumpy(), [7, 1, 3])
    np.testing.assert_array_equal(batches[0].data[0].asnumpy()[1],
                                  expected["decoded1"].transpose(2, 0, 1))
    ds = vision.ImageRecordDataset(rec)
    img, label = ds[2]
    assert label == 5.0
    np.testing.assert_array_equal(img.asnumpy(), expected["decoded2"])
    it = image.ImageIter(2, (3, 4, 4), path_imgrec=rec, path_imgidx=rec[:-3] + "idx",
                         last_batch_handle="discard")
    assert [b.data[0].shape for b in it] == [(2, 3, 4, 4), (2, 3, 4, 4)]


@needs_codec
def test_image_folder_dataset(tmp_path):
    for cls in ("cat", "dog"):
        os.makedirs(tmp_path / cls)
        (tmp_path / cls / "a.png").write_bytes(_bytes("img0.png"))
    (tmp_path / "dog" / "notes.txt").write_text("x")
    with pytest.warns(UserWarning, match="Ignoring"):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["cat", "dog"] and len(ds) == 2 and ds[1][1] == 1
    assert ds[0][0].shape == (6, 8, 3)


def test_crop_resize_helpers():
    src = mx.nd.array(np.arange(6 * 8 * 3).reshape(6, 8, 3), dtype="uint8")
    assert image.scale_down((640, 480), (720, 120)) == (640, 106)
    out, box = image.center_crop(src, (4, 2))
    assert box == (2, 2, 4, 2)
    np.testing.assert_array_equal(out.asnumpy(), src.asnumpy()[2:4, 2:6])
    np.testing.assert_array_equal(image.fixed_crop(src, 1, 2, 3, 2).asnumpy(),
                                  src.asnumpy()[2:4, 1:4])
    assert image.resize_short(src, 3).shape == (3, 4, 3)
    up = image.imresize(src, 16, 12, interp=0).asnumpy()  # nearest doubles every pixel
    np.testing.assert_array_equal(up[::2, ::2], src.asnumpy())
    down = image.imresize(src.astype("float32"), 4, 3, interp=3).asnumpy()  # area = 2x2 mean
    np.testing.assert_allclose(down, src.asnumpy().astype(np.float32)
                               .reshape(3, 2, 4, 2, 3).mean(axis=(1, 3)))
    f = mx.nd.ones((2, 2, 3)) * 10
    np.testing.assert_allclose(image.color_normalize(f, mx.nd.array([1, 2, 3]),
                                                     mx.nd.array([3, 4, 7])).asnumpy()[0, 0],
                               [3, 2, 1])
    augs = image.CreateAugmenter((3, 4, 4), resize=5, rand_mirror=True, mean=True, std=True)
    assert [type(a).__name__ for a in augs] == ["ResizeAug", "CenterCropAug",
                                                "HorizontalFlipAug", "CastAug",
                                                "ColorNormalizeAug"]
    x = src
    for a in augs:
        x = a(x)
    assert x.shape == (4, 4, 3) and x.dtype == np.float32


def test_transforms():
    mx.random.seed(0)
    x = np.random.RandomState(0).randint(0, 256, (4, 5, 3)).astype(np.uint8)
    nx = mx.nd.array(x, dtype="uint8")
    t = T.ToTensor()(nx)
    np.testing.assert_allclose(t.asnumpy(), x.transpose(2, 0, 1) / 255.0, rtol=1e-6)
    n = T.Normalize((0.5, 0.4, 0.3), (0.2, 0.1, 0.5))(t).asnumpy()
    np.testing.assert_allclose(n, (x.transpose(2, 0, 1) / 255.0 - np.array([.5, .4, .3])[:, None,
                               None]) / np.array([.2, .1, .5])[:, None, None], rtol=1e-5)
    batch = T.ToTensor()(mx.nd.stack(nx, nx))
    assert batch.shape == (2, 3, 4, 5)
    assert T.Resize((3, 2))(nx).shape == (2, 3, 3)
    assert T.Resize(2, keep_ratio=True)(nx).shape == (2, 2, 3)
    assert T.CenterCrop((3, 2))(nx).shape == (2, 3, 3)
    assert T.RandomResizedCrop(3)(nx).shape == (3, 3, 3)
    np.testing.assert_array_equal(T.CropResize(1, 1, 2, 3)(nx).asnumpy(), x[1:4, 1:3])
    flips = {T.RandomFlipLeftRight()(nx).asnumpy().tobytes() for _ in range(20)}
    assert flips == {x.tobytes(), x[:, ::-1].tobytes()}
    assert T.Cast("float16")(nx).dtype == np.float16
    assert T.RandomBrightness(0)(nx).asnumpy().tolist() == x.tolist()
    for blk in (T.RandomContrast(0.3), T.RandomSaturation(0.3), T.RandomHue(0.1),
                T.RandomColorJitter(0.2, 0.2, 0.2, 0.1), T.RandomLighting(0.1)):
        out = blk(nx)
        assert out.shape == (4, 5, 3) and out.dtype == np.uint8
    comp = T.Compose([T.Resize((3, 2)), T.CenterCrop(2), T.ToTensor(), T.Normalize(0.5, 0.25)])
    out = comp(nx)
    assert out.shape == (3, 2, 2) and out.dtype == np.float32
    with pytest.raises(MXNetError, match="_image_to_tensor"):
        T.ToTensor()(mx.nd.ones((3, 3)))


def _ramp_image():
    xlin = np.linspace(0, 0.5, 7)[:, None]
    ylin = np.linspace(0, 0.5, 9)[None, :]
    return mx.nd.array((xlin + ylin)[None])


@pytest.mark.parametrize("zoom_in,zoom_out,row", [
    (False, False, [0.09414, 0.18137, 0.2686, 0.35584, 0.44307, 0.5303, 0.61753, 0.70477,
                    0.70651]),
    (True, False, [0.20578, 0.26901, 0.33225, 0.39549, 0.45873, 0.52197, 0.5852, 0.64844,
                   0.71168]),
    (False, True, [0.0, 0.06047, 0.1808, 0.30114, 0.42147, 0.5418, 0.66213, 0.48596, 0.0]),
])
def test_imrotate_matches_mxnet(zoom_in, zoom_out, row):
    # rows of the output of MXNet 1.9.1 on the same batch (angles 20 and -35 degrees)
    img = _ramp_image()
    out = image.imrotate(mx.nd.stack(img, img), mx.nd.array([20, -35]), zoom_in=zoom_in,
                         zoom_out=zoom_out)
    assert out.shape == (2, 1, 7, 9)
    np.testing.assert_allclose(out.asnumpy()[0, 0, 2], row, atol=2e-5)


def test_imrotate_single_image_and_errors():
    img = _ramp_image()
    out = image.imrotate(img, 90)
    np.testing.assert_allclose(out.asnumpy()[0, 3], [0, 0.25, 1 / 3, 5 / 12, 0.5, 7 / 12,
                                                     2 / 3, 0.75, 0], atol=1e-5)
    with pytest.raises(ValueError, match="cannot be both True"):
        image.imrotate(img, 5, zoom_in=True, zoom_out=True)
    with pytest.raises(TypeError, match="scalar"):
        image.imrotate(img, mx.nd.array([1, 2]))
    with pytest.raises(TypeError, match="float32"):
        image.imrotate(img.astype("float64"), 5)
    with pytest.raises(ValueError, match="number of images"):
        image.imrotate(mx.nd.stack(img, img), mx.nd.array([1, 2, 3]))


def test_random_rotate_draws_angles_in_limits():
    img = _ramp_image()
    np.random.seed(3)
    out = image.random_rotate(mx.nd.stack(img, img, img), (-5, 5))
    np.random.seed(3)
    angles = np.random.uniform(-5, 5, size=3)
    expected = image.imrotate(mx.nd.stack(img, img, img), mx.nd.array(angles))
    np.testing.assert_allclose(out.asnumpy(), expected.asnumpy())
    assert image.random_rotate(img, (0, 0)).shape == (1, 7, 9)


IMG = np.array([[[99, 206, 239], [189, 230, 118], [144, 73, 8]],
                [[228, 231, 190], [155, 112, 158], [208, 7, 204]]], np.uint8)


@pytest.mark.parametrize("op,factor,expected", [
    # values from MXNet 1.9.1: float32 math, then clamped and truncated to uint8
    ("brightness", 0.7, [[[69, 144, 167], [132, 161, 82], [100, 51, 5]],
                         [[159, 161, 133], [108, 78, 110], [145, 4, 142]]]),
    ("contrast", 0.6, [[[120, 184, 204], [174, 198, 131], [147, 104, 65]],
                       [[197, 199, 174], [153, 128, 155], [185, 65, 183]]]),
    # MXNet 1.9.1's saturation mixes with 0.114 * blue only (its gray sum keeps one term)
    ("saturation", 1.4, [[[127, 255, 255], [255, 255, 159], [201, 101, 10]],
                         [[255, 255, 255], [209, 149, 213], [255, 0, 255]]]),
    ("hue", 0.3, [[[239, 98, 233], [117, 211, 230], [7, 144, 45]],
                  [[190, 231, 225], [158, 145, 111], [208, 171, 6]]]),
])
def test_image_color_operators_match_mxnet(op, factor, expected):
    fn = getattr(mx.nd.image, f"random_{op}")
    out = fn(mx.nd.array(IMG, dtype="uint8"), min_factor=factor, max_factor=factor)
    assert out.dtype == np.uint8
    assert out.asnumpy().tolist() == expected


def test_image_lighting_normalize_to_tensor_match_mxnet():
    img = mx.nd.array(IMG, dtype="uint8")
    out = mx.nd.image.adjust_lighting(img, alpha=(0.5, -1.0, 2.0))
    assert out.asnumpy().tolist() == [[[80, 188, 227], [170, 212, 106], [125, 55, 0]],
                                      [[209, 213, 178], [136, 94, 146], [189, 0, 192]]]
    # MXNet: normalize keeps the input dtype; uint8 results are truncated
    out = mx.nd.image.normalize(img.transpose((2, 0, 1)), mean=(10, 20, 30), std=(3, 2, 1.5))
    assert out.dtype == np.uint8
    assert out.asnumpy()[:, 0].tolist() == [[29, 59, 44], [93, 105, 26], [139, 58, 242]]
    x = mx.sym.image.to_tensor(mx.sym.var("x"))
    assert x.infer_type(x=np.uint8)[1] == [np.float32]
    assert x.infer_shape(x=(2, 4, 5, 3))[1] == [(2, 3, 4, 5)]
    with pytest.raises(MXNetError, match="mean must have either 1 or 3"):
        mx.nd.image.normalize(mx.nd.ones((3, 2, 2)), mean=(1, 2, 3, 4))


def test_image_augmenters_take_one_hwc_image_and_pass_gradients_through():
    with pytest.raises(MXNetError, match=r"shape \(height, width, channels\)"):
        mx.nd.image.flip_top_bottom(mx.nd.ones((2, 4, 4, 3)))
    with pytest.raises(MXNetError, match="1 or 3 elements"):
        mx.nd.image.random_brightness(mx.nd.ones((4, 4, 2)), min_factor=1, max_factor=1)
    with pytest.raises(MXNetError, match="must be >= 0"):
        mx.nd.image.random_contrast(mx.nd.ones((4, 4, 3)), min_factor=-1, max_factor=1)
    x = mx.nd.array(np.arange(6.0).reshape(2, 3, 1))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.image.flip_left_right(x)
    y.backward(mx.nd.array([[[1], [2], [3]], [[4], [5], [6]]]))
    assert y.asnumpy()[0, :, 0].tolist() == [2, 1, 0]
    # MXNet: the gradient of an augmenter is the head gradient copied, not flipped
    assert x.grad.asnumpy()[:, :, 0].tolist() == [[1, 2, 3], [4, 5, 6]]


@pytest.mark.parametrize("interp,row", [
    # OpenCV's codes, as MXNet passes them: 2 bicubic, 3 area, 4 lanczos4 (MXNet 1.9.1)
    (2, [0.06855, 0.76658, 0.20602]),
    (3, [0.14493, 0.6069, 0.27151]),
    (4, [0.04035, 0.76354, 0.15217]),
])
def test_image_resize_interpolations_match_mxnet(interp, row):
    f = np.random.RandomState(5)
    f.randint(0, 256, (2, 3, 3))
    img = mx.nd.array(f.uniform(0, 1, (4, 5, 1)))
    out = mx.nd.image.resize(img, size=(3, 6), interp=interp)
    assert out.shape == (6, 3, 1)
    np.testing.assert_allclose(out.asnumpy()[0, :, 0], row, atol=2e-5)


def test_image_resize_uint8_follows_opencv():
    # values from MXNet 1.9.1 (OpenCV 3.4): pixel-area shrink by 7/3 x 5/2, a linear halving
    # (which OpenCV turns into a 2x2 mean rounded half up), nearest, lanczos4
    img = mx.nd.array(np.arange(35).reshape(5, 7, 1) * 7 % 256, dtype="uint8")
    out = mx.nd.image.resize(img, size=(3, 2), interp=3)
    assert out.asnumpy()[:, :, 0].tolist() == [[44, 60, 76], [162, 178, 194]]
    img = mx.nd.array((np.arange(16).reshape(4, 4, 1) * 3 + 1) % 256, dtype="uint8")
    assert mx.nd.image.resize(img, size=(2, 2)).asnumpy()[:, :, 0].tolist() == \
        [[9, 15], [33, 39]]
    assert mx.nd.image.resize(img, size=(7, 3), interp=0).asnumpy()[:, :, 0].tolist() == \
        [[1, 1, 4, 4, 7, 7, 10], [13, 13, 16, 16, 19, 19, 22], [25, 25, 28, 28, 31, 31, 34]]
    assert mx.nd.image.resize(img, size=(6, 5), interp=4).asnumpy()[:, :, 0].tolist() == \
        [[0, 2, 4, 6, 8, 10], [9, 10, 12, 14, 17, 18], [19, 20, 23, 24, 27, 28],
         [29, 30, 33, 35, 37, 38], [37, 39, 41, 43, 45, 47]]
    with pytest.raises(MXNetError, match="float16"):
        mx.nd.image.resize(mx.nd.ones((4, 4, 3), dtype="float16"), size=2)


def test_rotation_transforms():
    img = _ramp_image()
    np.testing.assert_allclose(T.Rotate(20)(img).asnumpy(), image.imrotate(img, 20).asnumpy())
    assert T.RandomRotation((-5, 5), rotate_with_proba=0)(img) is img
    np.random.seed(4)
    out = T.RandomRotation((-5, 5))(mx.nd.stack(img, img))
    np.random.seed(4)
    np.random.random()
    angles = np.random.uniform(-5, 5, size=2)
    np.testing.assert_allclose(out.asnumpy(), image.imrotate(mx.nd.stack(img, img),
                                                             mx.nd.array(angles)).asnumpy())
    with pytest.raises(ValueError, match="ordered"):
        T.RandomRotation((5, -5))
    with pytest.raises(TypeError, match="float32"):
        T.Rotate(10)(img.astype("float64"))


# ---------------------------------------------------------------- detection (mx.image.det)
from helpers import DET_LABELS, det_images, make_det_dataset  # noqa: E402

_DET_OBJECTS = np.array([[3, .2, .2, .4, .9], [1, .1, .1, .3, .3], [0, .6, .6, .9, .8]])


def _det_image():
    return mx.nd.array(det_images()[2], dtype="uint8")


@pytest.mark.parametrize("make,shape,first_column,label", [
    (lambda: image.DetRandomCropAug(min_object_covered=0.2, area_range=(0.2, 1.0)),
     (8, 8, 3), [47, 116, 184],
     [[3, .2, .125, .4, 1], [1, .1, 0, .3, .25], [0, .6, .625, .9, .875]]),
    (lambda: image.DetRandomPadAug(area_range=(1.5, 3.0), pad_val=(1, 2, 3)),
     (15, 15, 3), [1, 1, 1],
     [[3, .57333, .33333, .68, .8], [1, .52, .26667, .62667, .4],
      [0, .78667, .6, .94667, .73333]]),
    (lambda: image.DetHorizontalFlipAug(1.0), (10, 8, 3), [32, 136, 9],
     [[3, .6, .2, .8, .9], [1, .7, .1, .9, .3], [0, .1, .6, .4, .8]]),
])
def test_det_augmenters_match_mxnet(make, shape, first_column, label):
    # values from MXNet 1.9.1 after random.seed(11)
    import random
    aug = make()
    random.seed(11)
    out, new_label = aug(_det_image(), _DET_OBJECTS.copy())
    assert out.shape == shape
    assert out.asnumpy()[0, :3, 0].tolist() == first_column
    np.testing.assert_allclose(new_label, label, atol=1e-5)


def test_multi_rand_crop_augmenter_matches_mxnet():
    import random
    augs = image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5],
                                              area_range=[(0.1, 1.0), (0.5, 1.0)])
    assert len(augs.aug_list) == 2
    random.seed(2)
    expected = [((9, 7, 3), [[3, .08571, .22222, .31429, 1], [1, 0, .11111, .2, .33333],
                             [0, .54286, .66667, .88571, .88889]]),
                ((7, 8, 3), [[3, .2, .14286, .4, 1], [1, .1, 0, .3, .28571],
                             [0, .6, .71429, .9, 1]]),
                ((6, 6, 3), [[3, .1, 0, .36667, .83333], [0, .63333, .33333, 1, .66667]])]
    for shape, label in expected:
        out, new_label = augs(_det_image(), _DET_OBJECTS.copy())
        assert out.shape == shape
        np.testing.assert_allclose(new_label, label, atol=1e-5)


def test_det_augmenter_arguments_and_dumps():
    with pytest.raises(TypeError, match="Borrowing from invalid Augmenter"):
        image.DetBorrowAug(image.DetHorizontalFlipAug(0.5))
    with pytest.raises(ValueError, match="Allow DetAugmenter in list only"):
        image.DetRandomSelectAug([image.HorizontalFlipAug(0.5)])
    borrow = image.DetBorrowAug(image.CastAug())
    assert borrow.dumps() == ["detborrowaug", '["castaug", {"type": "float32"}]']
    img = _det_image()
    out, label = borrow(img, _DET_OBJECTS)
    assert out.dtype == np.float32 and label is _DET_OBJECTS
    # an empty list always skips; invalid ranges disable the augmenter with a warning
    assert image.DetRandomSelectAug([])(img, _DET_OBJECTS)[0] is img
    with pytest.warns(UserWarning, match="invalid area_range"):
        crop = image.DetRandomCropAug(area_range=(0.5, 0.1))
    assert crop(img, _DET_OBJECTS)[0] is img
    with pytest.warns(UserWarning, match="invalid parameters"):
        image.DetRandomPadAug(area_range=(1.0, 1.0))
    with pytest.raises(TypeError, match="base class"):
        image.DetAugmenter()(img, _DET_OBJECTS)
    augs = image.CreateDetAugmenter((3, 16, 16), resize=20, rand_crop=0.5, rand_pad=0.5,
                                    rand_mirror=True, mean=True, std=True, brightness=0.1,
                                    hue=0.1, pca_noise=0.1, rand_gray=0.1)
    assert [a.dumps()[0] if isinstance(a.dumps(), list) else a.dumps()[2:22]
            for a in augs] == [
        "detborrowaug", "detrandomselectaug", "dethorizontalflipaug", "detrandomselectaug",
        "detborrowaug", "detborrowaug", "detborrowaug", "detborrowaug", "detborrowaug",
        "detborrowaug", "detborrowaug"]
    assert mx.image.det is mx.image.detection


@needs_codec
def test_image_det_iter_matches_mxnet(tmp_path):
    import random
    paths = make_det_dataset(tmp_path)
    it = image.ImageDetIter(2, (3, 5, 7), path_imgrec=paths["rec"], path_imgidx=paths["idx"])
    assert it.label_shape == (3, 5)
    assert it.provide_label == [("label", (2, 3, 5))]
    batches = list(it)
    assert [b.pad for b in batches] == [0, 1]
    np.testing.assert_allclose(batches[0].label[0].asnumpy()[1],
                               [[1, 0, 0, .5, .5], [2, .5, .5, 1, 1], [-1] * 5])
    np.testing.assert_allclose(batches[1].label[0].asnumpy()[:, 0], [[3, .2, .2, .4, .9],
                                                                     [0, .1, .2, .5, .6]])
    # random crop, mirror and pad from the list file, as MXNet draws them after seeding
    random.seed(1)
    np.random.seed(1)
    it = image.ImageDetIter(2, (3, 16, 16), path_imglist=paths["lst"], path_root=str(tmp_path),
                            rand_crop=1, rand_pad=1, rand_mirror=True, area_range=(0.3, 2.0),
                            min_object_covered=0.3)
    first, second = list(it)
    np.testing.assert_allclose(first.label[0].asnumpy(), [
        [[0, .28571, .03333, .74286, .43333], [-1] * 5, [-1] * 5],
        [[1, .5, .22222, .75, .66667], [2, 0, .66667, .5, .88889], [-1] * 5]], atol=1e-5)
    np.testing.assert_allclose(second.label[0].asnumpy(), [
        [[3, .41818, 0, .56364, .55556], [0, .70909, .22222, .92727, .44444], [-1] * 5],
        [[0, .11111, .15, .44444, .45], [-1] * 5, [-1] * 5]], atol=1e-5)
    assert first.data[0].asnumpy()[:, 0, 0, :4].tolist() == [[122, 133, 154, 170],
                                                            [127, 127, 127, 127]]
    assert second.data[0].asnumpy()[:, 0, 0, :4].tolist() == [[127, 127, 129, 131],
                                                             [127, 128, 128, 124]]


@needs_codec
def test_image_det_iter_reshape_sync_and_errors(tmp_path):
    paths = make_det_dataset(tmp_path)
    imglist = [[np.array(DET_LABELS[0]), "img0.png"], [np.array(DET_LABELS[1]), "img1.png"]]
    small = image.ImageDetIter(1, (3, 4, 4), imglist=imglist, path_root=str(tmp_path),
                               last_batch_handle="discard")
    big = image.ImageDetIter(1, (3, 4, 4), path_imglist=paths["lst"], path_root=str(tmp_path))
    assert small.label_shape == (2, 5) and big.label_shape == (3, 5)
    assert big.sync_label_shape(small) is small
    assert small.label_shape == (3, 5) and small.provide_label[0][1] == (1, 3, 5)
    with pytest.raises(ValueError, match="reduce label count from 3 to 1"):
        small.reshape(label_shape=(1, 5))
    with pytest.raises(ValueError, match="object width inconsistent: 5 vs 6"):
        small.reshape(label_shape=(3, 6))
    small.reshape(data_shape=(3, 6, 6))
    assert small.provide_data == [("data", (1, 3, 6, 6))] and small.data_shape == (3, 6, 6)
    with pytest.raises(ValueError, match="3 channels"):
        small.reshape(data_shape=(1, 6, 6))
    with pytest.raises(RuntimeError, match="Label shape is invalid"):
        small._parse_label(np.array([2, 5, 0, .1]))
    with pytest.raises(RuntimeError, match="inconsistent with annotation width 5"):
        small._parse_label(np.array([2, 5, 0, .1, .2, .5, .6, 1]))
    with pytest.raises(RuntimeError, match="no valid label"):
        small._parse_label(np.array([2, 5, 0, .5, .2, .1, .6]))
    with pytest.raises(RuntimeError, match="Invalid label occurs"):
        small._check_valid_label(np.array([[-1, .1, .1, .2, .2]]))
    # samples whose only box is empty are skipped
    bad = [[np.array([2, 5, 0, .5, .2, .1, .6]), "img0.png"], [np.array(DET_LABELS[0]),
                                                                "img1.png"]]
    with pytest.raises(RuntimeError, match="no valid label"):
        image.ImageDetIter(1, (3, 4, 4), imglist=bad, path_root=str(tmp_path))


@needs_codec
def test_image_det_iter_draw_next(tmp_path):
    paths = make_det_dataset(tmp_path)
    it = image.ImageDetIter(1, (3, 10, 10), path_imglist=paths["lst"], path_root=str(tmp_path),
                            mean=True, std=True)
    drawn = list(it.draw_next(color=(255, 0, 0), thickness=1, mean=True, std=True))
    assert len(drawn) == 3 and drawn[0].shape == (10, 10, 3) and drawn[0].dtype == np.uint8
    # image 0's box [.1, .2, .5, .6] -> pixels x 1..5, y 2..6, drawn red (BGR order)
    assert drawn[0][2, 1:6].tolist() == [[0, 0, 255]] * 5
    assert drawn[0][2:7, 5].tolist() == [[0, 0, 255]] * 5


# ---------------------------------------------------------------- _cvcopyMakeBorder
_BORDER_SRC = np.arange(1, 7, dtype=np.float32).reshape(2, 3, 1)


@pytest.mark.parametrize("kind,expected", [
    # values from MXNet 1.9.1 (OpenCV's copyMakeBorder): top=1, bot=2, left=3, right=2
    (0, [[9, 9, 9, 9, 9, 9, 9, 9], [9, 9, 9, 1, 2, 3, 9, 9], [9, 9, 9, 4, 5, 6, 9, 9],
         [9, 9, 9, 9, 9, 9, 9, 9], [9, 9, 9, 9, 9, 9, 9, 9]]),
    (1, [[1, 1, 1, 1, 2, 3, 3, 3], [1, 1, 1, 1, 2, 3, 3, 3], [4, 4, 4, 4, 5, 6, 6, 6],
         [4, 4, 4, 4, 5, 6, 6, 6], [4, 4, 4, 4, 5, 6, 6, 6]]),
    (2, [[3, 2, 1, 1, 2, 3, 3, 2], [3, 2, 1, 1, 2, 3, 3, 2], [6, 5, 4, 4, 5, 6, 6, 5],
         [6, 5, 4, 4, 5, 6, 6, 5], [3, 2, 1, 1, 2, 3, 3, 2]]),
    (3, [[4, 5, 6, 4, 5, 6, 4, 5], [1, 2, 3, 1, 2, 3, 1, 2], [4, 5, 6, 4, 5, 6, 4, 5],
         [1, 2, 3, 1, 2, 3, 1, 2], [4, 5, 6, 4, 5, 6, 4, 5]]),
    (4, [[5, 6, 5, 4, 5, 6, 5, 4], [2, 3, 2, 1, 2, 3, 2, 1], [5, 6, 5, 4, 5, 6, 5, 4],
         [2, 3, 2, 1, 2, 3, 2, 1], [5, 6, 5, 4, 5, 6, 5, 4]]),
    (16, [[9, 9, 9, 9, 9, 9, 9, 9], [9, 9, 9, 1, 2, 3, 9, 9], [9, 9, 9, 4, 5, 6, 9, 9],
          [9, 9, 9, 9, 9, 9, 9, 9], [9, 9, 9, 9, 9, 9, 9, 9]]),
])
def test_copy_make_border_types_match_mxnet(kind, expected):
    out = mx.nd._internal._cvcopyMakeBorder(mx.nd.array(_BORDER_SRC), top=1, bot=2, left=3,
                                            right=2, type=kind, value=9)
    assert out.asnumpy()[:, :, 0].tolist() == expected
    out = image.copyMakeBorder(mx.nd.array(_BORDER_SRC), 1, 2, 3, 2, type=kind, value=9)
    assert out.asnumpy()[:, :, 0].tolist() == expected


def test_copy_make_border_margins_past_the_image_and_fill_values():
    src = mx.nd.array(_BORDER_SRC)
    out = mx.nd._internal._cvcopyMakeBorder(src, top=3, bot=0, left=7, right=0, type=4)
    assert out.asnumpy()[0, :, 0].tolist() == [5, 6, 5, 4, 5, 6, 5, 4, 5, 6]
    assert out.asnumpy()[:, 0, 0].tolist() == [5, 2, 5, 2, 5]
    out = mx.nd._internal._cvcopyMakeBorder(src, top=0, bot=0, left=7, right=0, type=2)
    assert out.asnumpy()[0, :, 0].tolist() == [1, 1, 2, 3, 3, 2, 1, 1, 2, 3]
    # uint8: the fill saturates and rounds as cv::Scalar does; float keeps it
    u8 = mx.nd.array(np.arange(12).reshape(2, 2, 3), dtype="uint8")
    out = mx.nd._internal._cvcopyMakeBorder(u8, 1, 0, 0, 0, type=0, values=(300.4, -5, 7.6))
    assert out.dtype == np.uint8 and out.asnumpy()[0].tolist() == [[255, 0, 8]] * 2
    out = mx.nd._internal._cvcopyMakeBorder(u8, 1, 0, 0, 0, type=0, value=2.5)
    assert out.asnumpy()[0].tolist() == [[2, 2, 2]] * 2
    f32 = mx.nd.array(np.arange(12).reshape(2, 2, 3))
    out = mx.nd._internal._cvcopyMakeBorder(f32, 1, 0, 0, 0, type=0, values=(300.4, -5, 7.6))
    np.testing.assert_allclose(out.asnumpy()[0], [[300.4, -5, 7.6]] * 2, rtol=1e-6)
    assert image.copyMakeBorder(f32, 1, 2, 3, 4).shape == (5, 9, 3)
    sym = mx.sym._internal._cvcopyMakeBorder(mx.sym.var("x"), top=1, bot=2, left=3, right=4)
    assert sym.infer_shape(x=(2, 3, 3))[1] == [(5, 10, 3)]


@pytest.mark.parametrize("src,attrs,match", [
    (np.ones((2, 2, 3)), dict(type=7), "Unknown/unsupported border type 7"),
    (np.ones((2, 2, 3)), dict(top=-1), "margins must be >= 0"),
    (np.ones((2, 2)), {}, r"expects an HWC image, got shape \(2, 2\)"),
    (np.ones((2, 2, 3), np.float16), {}, "unsupported dtype"),
])
def test_copy_make_border_errors(src, attrs, match):
    margins = dict(top=1, bot=0, left=0, right=0)
    margins.update(attrs)
    with pytest.raises(MXNetError, match=match):
        mx.nd._internal._cvcopyMakeBorder(mx.nd.array(src, dtype=src.dtype), **margins)


# ---------------------------------------------------------------- imdecode's formats
def _encoded(fmt, mode="RGB"):
    """A 4x5 ramp encoded by Pillow as ``fmt``."""
    import io
    from PIL import Image
    arr = (np.arange(60) * 4 % 256).astype(np.uint8).reshape(4, 5, 3)
    out = io.BytesIO()
    Image.fromarray(arr).convert(mode).save(out, format=fmt)
    return arr, out.getvalue()


_EPS = (b"%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 5 4\n%%EndComments\n"
        b"0 0 moveto 5 4 lineto stroke\n%%EOF\n")


@needs_codec
@pytest.mark.parametrize("fmt", ["PNG", "BMP", "TIFF"])
def test_imdecode_lossless_formats_opencv_decodes(fmt):
    """MXNet 1.9.1's OpenCV decodes JPEG, PNG, BMP and TIFF."""
    pytest.importorskip("PIL")
    arr, buf = _encoded(fmt)
    np.testing.assert_array_equal(image.imdecode(buf).asnumpy(), arr)
    np.testing.assert_array_equal(image.imdecode(buf, to_rgb=0).asnumpy(), arr[:, :, ::-1])


@needs_codec
@pytest.mark.parametrize("fmt,mode", [("PPM", "RGB"), ("PPM", "L"), ("WEBP", "RGB"),
                                      ("GIF", "RGB"), ("ICO", "RGB"), ("TGA", "RGB"),
                                      ("PCX", "RGB"), ("JPEG2000", "RGB"), ("EPS", "RGB")])
def test_imdecode_refuses_formats_mxnet_cannot_decode(monkeypatch, fmt, mode):
    """PPM/PGM, WebP, GIF, ... fail in MXNet 1.9.1 (its OpenCV 3.4 build has no such
    decoder) with its message; Pillow is never asked to open them."""
    pytest.importorskip("PIL")
    from PIL import Image
    try:
        _, buf = _encoded(fmt, mode)
    except (OSError, KeyError) as err:  # Pillow built without that encoder
        pytest.skip(str(err))
    opened = []
    real_open = Image.open
    monkeypatch.setattr(Image, "open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    msg = r"Decoding failed\. Invalid image file\."
    with pytest.raises(MXNetError, match=msg):
        image.imdecode(buf)
    with pytest.raises(MXNetError, match=msg):
        mx.nd.imdecode(buf)
    with pytest.raises(MXNetError, match=msg):
        recordio.unpack_img(recordio.pack(recordio.IRHeader(0, 1.0, 0, 0), buf))
    assert opened == []


@needs_codec
def test_imdecode_eps_never_reaches_ghostscript(monkeypatch):
    pytest.importorskip("PIL")
    from PIL import EpsImagePlugin
    ran = []
    monkeypatch.setattr(EpsImagePlugin, "Ghostscript", lambda *a, **k: ran.append(a))
    monkeypatch.setattr(EpsImagePlugin.EpsImageFile, "_open",
                        lambda self: ran.append("eps") or (_ for _ in ()).throw(OSError()))
    with pytest.raises(MXNetError, match="Invalid image file"):
        image.imdecode(_EPS)
    with pytest.raises(MXNetError, match="Input cannot be an empty buffer"):
        image.imdecode(b"")
    assert ran == []


def test_detection_namespace_keeps_mxnet_reexports():
    from mxtorch.image.detection import ImageIter, RandomOrderAug
    assert ImageIter is mx.image.ImageIter and RandomOrderAug is mx.image.RandomOrderAug


_HWC = np.arange(24, dtype=np.float32).reshape(2, 4, 3) * 5 + 50


@pytest.mark.parametrize("name,flipped", [("random_flip_left_right", _HWC[:, ::-1]),
                                          ("random_flip_top_bottom", _HWC[::-1])])
def test_random_flips_flip_half_the_time(name, flipped):
    """_image_random_flip_left_right/_top_bottom: the image or its flip, each with
    probability 0.5 (MXNet 1.9.1 flipped 97 and 105 of 200 calls)."""
    mx.random.seed(3)
    x = mx.nd.array(_HWC)
    outs = [getattr(mx.nd.image, name)(x).asnumpy() for _ in range(200)]
    same = [bool((o == _HWC).all()) for o in outs]
    assert all(s or (o == flipped).all() for s, o in zip(same, outs))
    assert 70 <= 200 - sum(same) <= 130


def test_random_color_jitter_and_lighting_draw_their_factors():
    """_image_random_color_jitter with only brightness scales the image by one factor from
    [1 - b, 1 + b]; _image_random_lighting adds the AlexNet PCA offset for alphas from
    N(0, alpha_std) (recovered here through adjust_lighting's three basis offsets)."""
    mx.random.seed(5)
    x = mx.nd.array(_HWC)
    factors = []
    for _ in range(300):
        out = mx.nd.image.random_color_jitter(x, brightness=0.3, contrast=0, saturation=0,
                                              hue=0).asnumpy() / _HWC
        np.testing.assert_allclose(out, out.mean(), rtol=1e-5)
        factors.append(out.mean())
    factors = np.array(factors)
    assert 0.7 <= factors.min() < 0.75 and 1.25 < factors.max() <= 1.3
    assert abs(factors.mean() - 1.0) < 0.03 and abs(factors.var() - 0.03) < 0.008  # 0.6^2/12
    basis = np.stack([mx.nd.image.adjust_lighting(x, alpha=a).asnumpy()[0, 0] - _HWC[0, 0]
                      for a in ((1, 0, 0), (0, 1, 0), (0, 0, 1))], axis=1)
    np.testing.assert_allclose(basis[:, 0], [-31.47355, -32.211166, -32.366455], rtol=1e-5)
    alphas = []
    for _ in range(300):
        d = mx.nd.image.random_lighting(x, alpha_std=0.1).asnumpy() - _HWC
        np.testing.assert_allclose(d, np.broadcast_to(d[0, 0], d.shape), atol=1e-4)
        alphas.append(np.linalg.solve(basis, d[0, 0]))
    alphas = np.array(alphas)
    assert np.abs(alphas.mean(0)).max() < 0.025 and np.abs(alphas.std(0) - 0.1).max() < 0.015
    np.testing.assert_array_equal(mx.nd.image.random_lighting(x, alpha_std=0).asnumpy(), _HWC)


_CV_IMG = np.array([[[10, 200], [50, 0], [255, 30]], [[90, 120], [0, 255], [40, 80]]], np.uint8)


@pytest.mark.parametrize("interp,channel0", [
    # real MXNet 1.9.1 (OpenCV's resize): nearest, bilinear, bicubic to 3 x 4
    (0, [[10, 10, 50, 255], [10, 10, 50, 255], [90, 90, 0, 40]]),
    (1, [[10, 35, 127, 255], [50, 34, 71, 148], [90, 34, 15, 40]]),
    (2, [[0, 12, 139, 255], [52, 21, 66, 156], [104, 29, 0, 23]]),
])
def test_cvimresize_matches_mxnet(interp, channel0):
    """_cvimresize (mx.image.imresize's operator): HWC, uint8 results saturated."""
    out = mx.nd._internal._cvimresize(mx.nd.array(_CV_IMG, dtype="uint8"), w=4, h=3,
                                      interp=interp)
    assert out.dtype == np.uint8 and out.shape == (3, 4, 2)
    assert out.asnumpy()[..., 0].tolist() == channel0


def test_cvimresize_float_and_errors():
    img = mx.nd.array(_CV_IMG.astype(np.float32) / 255)
    out = mx.nd._internal._cvimresize(img, w=2, h=4, interp=1)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy()[..., 1], [[0.58824, 0.08824], [0.59191, 0.1875],
                                                       [0.59926, 0.38603], [0.60294, 0.48529]],
                               rtol=1e-4)
    with pytest.raises(MXNetError, match="_cvimresize"):
        mx.nd._internal._cvimresize(mx.nd.ones((2, 2, 3), dtype="uint8"), w=0, h=3)
    with pytest.raises(MXNetError, match="_cvimresize"):
        mx.nd._internal._cvimresize(mx.nd.ones((2, 2), dtype="uint8"), w=2, h=3)
