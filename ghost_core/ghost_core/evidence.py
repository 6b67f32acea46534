"""The evidence rules (SPEC 5, amendments v1.3): what a verifier trusts, and its bounds.

A verifier trusts the recorder's log times, the installed message definitions and the
manifest's signature; nothing a node says about itself (its receive times, its lateness
claims, its timeouts, its configuration). Every Ghost message names the inputs it was made
from (by stamp or content address), and the recorder's log times decide whether the node can
have had them:

- a named input the recorder logged more than ``TRANSPORT_BOUND_NS`` after the message that
  names it is ``named_input_from_the_future``; one the bag does not hold is
  ``named_input_missing``;
- an input the recorder logged more than ``TRANSPORT_BOUND_NS`` before a message that should
  have used it (a fix of the cycle, the prediction targeting it, an outcome of the window,
  a newer vehicle status) and that the message does not name is ``input_claimed_late``.

``TRANSPORT_BOUND_NS`` bounds how far apart the recorder's and a node's view of one message
can be: DDS orders one topic from one writer, not two topics, so the recorder may log a
node's input slightly after the node's output (both sit in queues of the same machine). It is
measured under load by ``bench/transport_bound.py`` (docs/performance.md) and is far below
the 1 s arrival-order window the re-derivation once searched.

Pure: the standard library only.
"""

from __future__ import annotations

__all__ = ['TRANSPORT_BOUND_NS']

#: How much later than a message the recorder may log an input the message names, and how
#: much earlier than a message it may log an input the message leaves out (nanoseconds).
TRANSPORT_BOUND_NS = 250_000_000
