"""`ray.tune.examples`' helper modules, which Ray's example scripts,
tutorials and users' scripts import (`from ray.tune.examples.mnist_pytorch
import ConvNet, get_data_loaders, train_func, test_func`, rewritten to
`tunecore.examples...`):

- `pbt_function`: the toy problem Ray's PBT and PB2 examples tune;
- `mnist_pytorch`, `mnist_pytorch_trainable`, `cifar10_pytorch`:
  tunecore's own, with Ray's API and behaviour, reporting through tunecore
  (Ray's call Ray Tune's `tune.report`, which has no trial under
  tunecore); they need the `torchvision` extra;
- `pbt_dcgan_mnist.common`, `utils`: Ray's own modules (they report
  nothing), given as they are.

Ray Train's example packages (`ray.train.examples.pytorch`, `.tf`,
`.horovod`, `.pytorch_geometric`, rewritten to
`tunecore.examples.pytorch` & co.) are Ray Train's, passed through
(`tunecore._ray_train_modules`): their training functions run in Ray
Train's workers. Ray Tune's other example modules are scripts, or train Lightning, Transformers
or Keras models on data they download: importing one says so
(`tunecore._not_provided`).
"""
