"""Loaders of the shared labelled corpora (:func:`core.shared_data.data_dir`), one module
per corpus; used by tests and benchmarks, never copied into the repository."""
