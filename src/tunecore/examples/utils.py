"""`ray.tune.examples.utils`, Ray's own module: `get_iris_data(test_size=
0.2)` (scikit-learn's iris, labels one-hot) and `set_keras_threads(threads)`
(TensorFlow's thread pools). It reports nothing to Tune, so Ray's code runs
as it is: importing this module gives Ray's module object, with Ray's
behaviour (its `OneHotEncoder(sparse=False)` is refused by scikit-learn 1.4
and later, on Ray as here).

Needs TensorFlow and scikit-learn: `pip install tensorflow scikit-learn
'ray[tune]'` (importing Ray's module imports `ray.tune`, which needs fsspec).
"""

from tunecore.examples._extra import stand_in

stand_in(
    __name__,
    ("TensorFlow, scikit-learn and Ray Tune's dependencies", "tensorflow scikit-learn 'ray[tune]'"),
)
