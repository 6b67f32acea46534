"""ghost_review: what Ghost decided, when and why, for one flight or a fleet (HTML, CSV)."""

__all__ = ['cli', 'config', 'csv_out', 'episodes', 'errors', 'flight', 'index', 'px4', 'report',
           'review', 'svg']
