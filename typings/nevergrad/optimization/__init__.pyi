from nevergrad.optimization import base as base
from nevergrad.optimization.base import Optimizer as Optimizer
