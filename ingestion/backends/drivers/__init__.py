"""Resumable runs that call a backend through its interface and append what it returns to a
bundle folder: generation, judging, transcription, question construction, shards and the
cost calibration. Drivers never import an implementation; the registry hands them one."""
