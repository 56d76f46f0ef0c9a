"""The names of the files tunecore writes in a trial's directory, as Ray Tune
names them. Their own module because the worker needs them too (it keeps
them out of a trial's artifacts, `shell.trainable.output_files`) and
should not load the driver's storage to learn four names."""

PARAMS_FILE = "params.json"
RESULT_FILE = "result.json"
PROGRESS_FILE = "progress.csv"
ERROR_FILE = "error.txt"
