"""tunecore's benchmarks. Run them all with `nox -s bench` (or `./dev bench`)."""
