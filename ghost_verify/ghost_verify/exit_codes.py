"""The exit codes of every ghost_verify command (verify_*, trace_decisions, ghost_keygen).

One home: the commands, the fleet runner and the help texts read them from here.
"""

__all__ = ['EXIT_BAD_BAG', 'EXIT_OK', 'EXIT_USAGE', 'EXIT_VIOLATED']

#: Every verdict holds (or the command did what it was asked).
EXIT_OK = 0
#: A verdict does not hold.
EXIT_VIOLATED = 1
#: A usage error: a bad option or value, an output that cannot be written.
EXIT_USAGE = 2
#: The bag cannot be read as a Ghost bag.
EXIT_BAD_BAG = 3
