"""What each dashboard page reads: one module per page of ``dashboard/views/`` (the same
name), each listing in ``__all__`` exactly the readers its page calls, and
:mod:`dashboard.readers.common` for those several pages share (universities, runs,
collections, the category labels and colours, the two share definitions side by side).

A reader that only passes a store reader through is one line,
``name = cached(store_reader)`` (:func:`dashboard.cache.cached`); a reader that computes
something in pandas is a function of its page's module, cached with
``st.cache_data(ttl=TTL_SECONDS)``. Each figure is read in one place: a page module
imports a shared reader from ``common``, never defines it again.
"""
