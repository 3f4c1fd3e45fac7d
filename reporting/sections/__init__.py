"""The report's sections, one module per area of the warehouse (scoring, reliability, structure,
routing) plus the agreement marts: each turns marts into charts and small tables."""
