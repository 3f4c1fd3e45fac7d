"""Evidence bundles the tests build warehouses from: hand-computed, DSG-1k, routing."""
