r"""Pre-defined neural network models (``mx.gluon.model_zoo.vision``).

AlexNet, DenseNet, Inception V3, ResNet V1/V2, SqueezeNet, VGG, MobileNet and
MobileNetV2, with MXNet 1.9.1's constructors, parameter names and architectures::

    from mxtorch.gluon.model_zoo import vision
    resnet18 = vision.resnet18_v1()
    net = vision.get_model('mobilenetv2_1.0', classes=10)

``pretrained=True`` loads ``<root>/<name>-<short sha1>.params``, a file the user already
has (MXNet's model-zoo file); mxtorch never downloads it. Pretrained models expect
N x 3 x H x W RGB images in [0, 1] normalized with mean (0.485, 0.456, 0.406) and std
(0.229, 0.224, 0.225), H and W at least 224.
"""
from .alexnet import *  # noqa: F403
from .densenet import *  # noqa: F403
from .inception import *  # noqa: F403
from .resnet import *  # noqa: F403
from .squeezenet import *  # noqa: F403
from .vgg import *  # noqa: F403
from .mobilenet import *  # noqa: F403
from .densenet import get_densenet
from .squeezenet import get_squeezenet

_models = {'resnet18_v1': resnet18_v1,
           'resnet34_v1': resnet34_v1,
           'resnet50_v1': resnet50_v1,
           'resnet101_v1': resnet101_v1,
           'resnet152_v1': resnet152_v1,
           'resnet18_v2': resnet18_v2,
           'resnet34_v2': resnet34_v2,
           'resnet50_v2': resnet50_v2,
           'resnet101_v2': resnet101_v2,
           'resnet152_v2': resnet152_v2,
           'vgg11': vgg11,
           'vgg13': vgg13,
           'vgg16': vgg16,
           'vgg19': vgg19,
           'vgg11_bn': vgg11_bn,
           'vgg13_bn': vgg13_bn,
           'vgg16_bn': vgg16_bn,
           'vgg19_bn': vgg19_bn,
           'alexnet': alexnet,
           'densenet121': densenet121,
           'densenet161': densenet161,
           'densenet169': densenet169,
           'densenet201': densenet201,
           'squeezenet1.0': squeezenet1_0,
           'squeezenet1.1': squeezenet1_1,
           'inceptionv3': inception_v3,
           'mobilenet1.0': mobilenet1_0,
           'mobilenet0.75': mobilenet0_75,
           'mobilenet0.5': mobilenet0_5,
           'mobilenet0.25': mobilenet0_25,
           'mobilenetv2_1.0': mobilenet_v2_1_0,
           'mobilenetv2_0.75': mobilenet_v2_0_75,
           'mobilenetv2_0.5': mobilenet_v2_0_5,
           'mobilenetv2_0.25': mobilenet_v2_0_25}


def get_model(name, **kwargs):
    """Returns a pre-defined model by name

    Parameters
    ----------
    name : str
        Name of the model.
    pretrained : bool
        Whether to load the pretrained weights for model.
    classes : int
        Number of classes for the output layer.
    ctx : Context, default CPU
        The context in which to load the pretrained weights.
    root : str, default '$MXNET_HOME/models'
        Location for keeping the model parameters.

    Returns
    -------
    gluon.HybridBlock
        The model.
    """
    name = name.lower()
    if name not in _models:
        raise ValueError(
            'Model %s is not supported. Available options are\n\t%s' % (
                name, '\n\t'.join(sorted(_models.keys()))))
    return _models[name](**kwargs)
