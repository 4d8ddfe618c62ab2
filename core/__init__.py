"""The kernel every other package builds on; it imports nothing of the project.

- :mod:`core.exceptions`: the project's exceptions and their exit codes;
- :mod:`core.defaults`: every default value, in one place;
- :mod:`core.settings`: the typed settings (defaults < file < environment);
- :mod:`core.domains`: host, registered domain and URL normalisation;
- :mod:`core.universities`: the universities file parser;
- :mod:`core.shared_data`: where the shared labelled data sets are;
- :mod:`core.folders`: the user's folders (XDG) and the checkout, when run from one.
"""
