# Local stub: pyarrow ships no types. Only what tunecore uses (pyarrow.fs).
__version__: str
