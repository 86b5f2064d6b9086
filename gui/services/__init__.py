"""I/O without Qt: the engine process and its client, model files, system facts."""
