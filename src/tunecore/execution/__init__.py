"""`ray.tune.execution`: only the module scripts import names from
(`placement_groups`); the rest of Ray's package is its trial runner."""
