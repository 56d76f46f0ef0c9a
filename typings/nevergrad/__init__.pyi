# Local stub: nevergrad ships no types. Only what tunecore.search.nevergrad uses.
from nevergrad import errors as errors
from nevergrad import optimization as optimization
from nevergrad import optimizers as optimizers
from nevergrad import p as p
