"""Tests of the ask/tell searchers (tunecore.search integrations), driven directly."""
