class Global:
    precision: float
    float_precisions: list[int | None]
    """Each dimension's decimal places (None: not continuous), set by the
    last `Dimension2` built, for the whole process."""

gl: Global
