# Local stub: only what tunecore.search.hyperopt uses.
JOB_STATE_DONE: int
JOB_STATE_ERROR: int
STATUS_OK: str
STATUS_FAIL: str
