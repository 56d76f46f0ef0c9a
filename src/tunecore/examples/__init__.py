"""`ray.tune.examples`' importable trainables: `pbt_function`, the toy
problem Ray's PBT and PB2 examples tune (`from
ray.tune.examples.pbt_function import pbt_function`). Ray's other helper
modules (MNIST, DCGAN, Transformers models) are not provided: importing
one says so."""
