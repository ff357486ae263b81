"""The MLP, data and training loops shared by the dist workers and the 1-process reference."""
import numpy as np

import mxtorch as mx

BATCH = 8          # per-worker batch
STEPS = 6          # global steps per epoch
EPOCHS = 2
N_IN, N_HID, N_OUT = 10, 16, 3
OPT = {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-4}


def dataset(num_workers):
    """Global data: step s uses rows [s*B*W, (s+1)*B*W); worker r takes the r-th B rows."""
    rs = np.random.RandomState(7)
    n = STEPS * BATCH * num_workers
    x = rs.uniform(-1, 1, (n, N_IN)).astype(np.float32)
    y = rs.randint(0, N_OUT, n).astype(np.float32)
    return x, y


def shard(arr, rank, num_workers):
    """The rows of ``arr`` that worker ``rank`` trains on, in step order."""
    parts = arr.reshape(STEPS, num_workers, BATCH, *arr.shape[1:])[:, rank]
    return parts.reshape(STEPS * BATCH, *arr.shape[1:])


def init_arrays(seed):
    """Initial MLP weights (each worker draws different ones; rank 0's must win)."""
    rs = np.random.RandomState(seed)
    shapes = {"fc1_weight": (N_HID, N_IN), "fc1_bias": (N_HID,),
              "fc2_weight": (N_OUT, N_HID), "fc2_bias": (N_OUT,)}
    return {k: rs.normal(0, 0.3, s).astype(np.float32) for k, s in shapes.items()}


def mlp_symbol():
    """FC-relu-FC-SoftmaxOutput."""
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=N_HID, name="fc1"),
                          act_type="relu")
    out = mx.sym.FullyConnected(h, num_hidden=N_OUT, name="fc2")
    return mx.sym.SoftmaxOutput(out, name="softmax")


def train_module(x, y, batch, kvstore, init_seed):
    """Module.fit; returns the module (trained params via get_params)."""
    it = mx.io.NDArrayIter(x, y, batch_size=batch, shuffle=False, label_name="softmax_label")
    mod = mx.mod.Module(mlp_symbol(), context=mx.cpu())
    args = {k: mx.nd.array(v) for k, v in init_arrays(init_seed).items()}
    mod.fit(it, kvstore=kvstore, optimizer="sgd", optimizer_params=dict(OPT),
            arg_params=args, num_epoch=EPOCHS)
    return mod


def gluon_net(init_seed):
    """A Dense-relu-Dense net with the weights of ``init_arrays(init_seed)``."""
    net = mx.gluon.nn.Sequential(prefix="mlp_")
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(N_HID, activation="relu", in_units=N_IN))
        net.add(mx.gluon.nn.Dense(N_OUT, in_units=N_HID))
    net.initialize(mx.init.Zero())
    values = init_arrays(init_seed)
    params = net.collect_params()
    for (fc, layer) in (("fc1", net[0]), ("fc2", net[1])):
        layer.weight.set_data(mx.nd.array(values[fc + "_weight"]))
        layer.bias.set_data(mx.nd.array(values[fc + "_bias"]))
    return net, params


def train_gluon(x, y, batch, kvstore, init_seed, num_workers=1, on_step=None):
    """Trainer loop; ``step(batch * num_workers)`` gives the global-batch mean gradient."""
    net, params = gluon_net(init_seed)
    trainer = mx.gluon.Trainer(params, "sgd", dict(OPT), kvstore=kvstore)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    steps = len(x) // batch
    for epoch in range(EPOCHS):
        for s in range(steps):
            if on_step is not None:
                on_step(epoch * steps + s)
            xb = mx.nd.array(x[s * batch:(s + 1) * batch])
            yb = mx.nd.array(y[s * batch:(s + 1) * batch])
            with mx.autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(batch * num_workers)
    return net, trainer


def gluon_arrays(net):
    """The trained gluon weights as {fcN_weight/bias: numpy}."""
    return {"fc1_weight": net[0].weight.data().asnumpy(), "fc1_bias": net[0].bias.data().asnumpy(),
            "fc2_weight": net[1].weight.data().asnumpy(), "fc2_bias": net[1].bias.data().asnumpy()}
