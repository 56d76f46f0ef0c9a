"""`ray.tune.examples.pbt_dcgan_mnist`: its `common` module (the DCGAN
models, the MNIST loader and the training step Ray's DCGAN PBT examples
import)."""
