"""The searchers' one table (see `tunecore.core.registry`): a new searcher
is its module plus one line here. Ray's `create_searcher` and `tunecore run
--search` read it. Each is named by its import path, so a searcher's
package is imported only when chosen. (What a snapshot stores of a
searcher is the core's wrappers, `BuiltinSearcher`, whatever the library.)"""

from tunecore.core.registry import Entry, Registry

SEARCHERS = Registry(
    "searcher",
    (
        Entry(
            "random",
            "tunecore.core.search:BasicVariantGenerator",
            ("variant_generator", "random"),
            default=True,
        ),
        Entry("optuna", "tunecore.search.optuna:OptunaSearch", ("optuna",)),
        Entry("hyperopt", "tunecore.search.hyperopt:HyperOptSearch", ("hyperopt",)),
        Entry("bayesopt", "tunecore.search.bayesopt:BayesOptSearch", ("bayesopt",)),
        Entry("bohb", "tunecore.search.bohb:TuneBOHB", ("bohb",), in_cli=False),
        Entry("nevergrad", "tunecore.search.nevergrad:NevergradSearch", ("nevergrad",)),
        Entry("zoopt", "tunecore.search.zoopt:ZOOptSearch", ("zoopt",)),
        # HEBO and Ax need torch, which the command line's environment may lack.
        Entry("hebo", "tunecore.search.hebo:HEBOSearch", ("hebo",), in_cli=False),
        Entry("ax", "tunecore.search.ax:AxSearch", ("ax",), in_cli=False),
    ),
)
