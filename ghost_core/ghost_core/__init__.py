"""ghost_core: the pure-Python heart of Ghost (contracts, content addresses, policies).

Import from the module that is the home of each name (ghost_core.assessment,
ghost_core.contracts, ...): this package re-exports nothing.
"""

__all__: list[str] = []
