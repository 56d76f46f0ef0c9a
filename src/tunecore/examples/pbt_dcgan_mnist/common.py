"""`ray.tune.examples.pbt_dcgan_mnist.common`, Ray's own module: the DCGAN
`Generator` and `Discriminator`, `weights_init`, the MNIST classifier `Net`
and `inception_score` it scores samples with, `get_data_loader(data_dir=
"~/data")`, `train_func`, `plot_images`, `demo_gan` and the training
constants. It reports nothing to Tune (the scripts importing it do, through
tunecore once rewritten), so Ray's code runs as it is: importing this
module gives Ray's module object.

Needs torch, torchvision, matplotlib and scipy:
`pip install 'tunecore[torchvision,plot]' scipy 'ray[tune]'` (importing
Ray's module imports `ray.tune`, which needs fsspec; torch brings it).
"""

from tunecore.examples._extra import stand_in

stand_in(
    __name__,
    (
        "torch, torchvision, matplotlib, scipy and Ray Tune's dependencies",
        "'tunecore[torchvision,plot]' scipy 'ray[tune]'",
    ),
)
