"""Evidence bundles the tests build warehouses from: hand-computed, DSG-1k, routing; and the
OneIG-Bench hand release (a question bank's source)."""
