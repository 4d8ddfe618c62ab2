"""Common Crawl as a citing source: the web graph (graph.py) and the URL index (index.py)."""
