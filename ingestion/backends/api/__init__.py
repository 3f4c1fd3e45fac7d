"""What every backend and driver agrees on, in plain Python: the four interfaces and their frozen
records, the registry of implementations by name, cache keys, the generator settings of the
registry seed, safe ids, answer parsing and the question-writing contract."""
