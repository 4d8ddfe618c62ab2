"""One module per subcommand of ``webometrics``; each has ``ORDER`` and ``register``."""
