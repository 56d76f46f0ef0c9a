# Local stub: scikit-learn ships no types. Only what examples/asha_sklearn.py uses.
