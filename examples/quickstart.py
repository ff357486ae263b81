"""A short first run: NDArray arithmetic and autograd with `import mxtorch as mx`."""
import mxtorch as mx

x = mx.nd.array([[1, 2], [3, 4]])
x.attach_grad()
with mx.autograd.record():
    y = mx.nd.relu(x * x - 2)
y.backward()
print("y =", y)
print("dy/dx =", x.grad)
