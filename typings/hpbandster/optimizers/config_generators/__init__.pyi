# Local stub: only what tunecore.search.bohb uses (hpbandster 0.7.x).
