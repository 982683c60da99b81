"""Job tables: one schema, loaders for real traces and plain CSV, synthetic workloads, instances."""
