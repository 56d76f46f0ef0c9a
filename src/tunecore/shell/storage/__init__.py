"""Where an experiment's bytes live, below the mirror: the experiment
directory's layout (`layout`), the `Store` protocol (`store`), one module
per backend (`local_store`, `arrow_store`) and the choice between them a
`RunConfig` makes (`resolve`), files opened without following links
(`own_files`), the background file queue (`file_queue`) and the token that
tells a worker whose directory is not the driver's (`shared_storage`).
Nothing here imports `shell.mirror` (an import-linter contract).
"""
