"""The Alembic environment of the project (``env.py`` and ``versions/``)."""
