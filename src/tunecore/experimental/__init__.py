"""`ray.tune.experimental`: the verbosity names of Ray's console output."""
