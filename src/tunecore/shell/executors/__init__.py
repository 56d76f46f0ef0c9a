"""Executors run trials on workers: `RayExecutor` (the default, in
`tunecore.shell.executors.ray`) and `InProcessExecutor` (threads, no Ray, in
`.inprocess`), both `Executor`s (`.base`). Nothing is imported here: a Ray
worker loads this package for its `TrialActor` (`.actor`) and the
`TrialHost` in it (`.host`), and should not load the executors that drive
it."""
