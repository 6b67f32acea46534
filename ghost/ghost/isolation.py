"""Isolation: a simulated graph gets a ROS domain of its own, so two runs never hear each other.

Two Ghost graphs on one DDS domain match each other's writers: every reader then has two
producers per topic and the recorded evidence mixes both runs. ``ghost_run`` therefore runs its
graph on a free domain when the user has not chosen one (``claim_free_domain``), and warns when
the user's chosen domain already carries a Ghost graph (``ghost_publishers_on_domain``).

A domain is claimed in two steps, both needed:

* a lock: ``fcntl.flock`` on ``<lock dir>/<NN>.lock``, held by the claiming process for its whole
  run (the kernel drops it when the process ends, however it ends). This is what makes two
  ``ghost_run`` started in the same second pick different domains: a probe cannot, since neither
  graph exists yet when both probe;
* a probe that no one else is on the domain: the UDP ports of the domain's block in the default
  port mapping (``7400 + 250 * domain + offset``, offset < 250), read from ``/proc/net/udp*``,
  which shows every participant on the machine at once, whatever its user, process or state of
  discovery; then a short rclpy discovery probe (``participants_on_domain``), for participants
  that use other ports. DDS discovery alone is not enough here: a new participant finds an
  existing one after 0 to 3 s on localhost (measured: the existing one may answer only with its
  next periodic announcement, every 3 s).

The candidates are 1..N: 0 is the default domain every other ROS user is on, and N is the last
domain whose whole port block lies below the kernel's ephemeral port range (100 with Linux's
default 32768-60999; ROS 2's documentation gives 0-101 as the safe range on Linux), so no
client socket of an unrelated program can sit in it. The pure parts (candidates, ports, lock
file names) are plain functions.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
import errno
import fcntl
import os
from pathlib import Path
import time
from typing import Any, IO

__all__ = ['ClaimedDomain', 'DomainClaimError', 'PORT_BASE', 'DOMAIN_GAIN',
           'bound_udp_ports', 'candidate_domains', 'claim_free_domain', 'default_lock_dir',
           'domain_of_port', 'domain_ports_in_use', 'ephemeral_low', 'ghost_publishers_on_domain',
           'lock_path', 'max_domain', 'participants_on_domain', 'try_lock_domain']

#: RTPS default port mapping (DDSI-RTPS 9.6.1.1): port = PB + DG * domain + d + PG * participant.
PORT_BASE = 7400
DOMAIN_GAIN = 250
#: The largest domain id whose ports fit in 16 bits with the default mapping.
_MAX_VALID_DOMAIN = 232
_DEFAULT_EPHEMERAL_LOW = 32768


class DomainClaimError(RuntimeError):
    """No free domain could be claimed (all candidates locked or in use)."""


def max_domain(ephemeral_low: int = _DEFAULT_EPHEMERAL_LOW) -> int:
    """The last domain whose whole port block lies below ``ephemeral_low`` (capped at 232)."""
    return max(0, min(_MAX_VALID_DOMAIN, (ephemeral_low - PORT_BASE) // DOMAIN_GAIN - 1))


def ephemeral_low(path: Path = Path('/proc/sys/net/ipv4/ip_local_port_range')) -> int:
    """The first port of the kernel's ephemeral range (Linux's default when unreadable)."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return _DEFAULT_EPHEMERAL_LOW


def candidate_domains(last: int, first: int = 1) -> list[int]:
    """The domains to try, in order: ``first``..``last`` (0, the default domain, never)."""
    return list(range(max(1, first), last + 1))


def domain_of_port(port: int) -> int | None:
    """The domain whose default-mapping port block holds ``port``, or None below the base."""
    if port < PORT_BASE:
        return None
    return (port - PORT_BASE) // DOMAIN_GAIN


def bound_udp_ports(tables: Iterable[str]) -> set[int]:
    """The local ports in the text of ``/proc/net/udp`` / ``udp6`` tables."""
    ports: set[int] = set()
    for table in tables:
        for line in table.splitlines()[1:]:
            fields = line.split()
            if len(fields) > 1 and ':' in fields[1]:
                try:
                    ports.add(int(fields[1].rsplit(':', 1)[1], 16))
                except ValueError:
                    continue
    return ports


def _read_udp_tables() -> list[str]:
    tables = []
    for name in ('/proc/net/udp', '/proc/net/udp6'):
        try:
            tables.append(Path(name).read_text())
        except OSError:
            continue
    return tables


def domain_ports_in_use(domain_id: int, tables: Iterable[str] | None = None) -> list[int]:
    """The UDP ports of ``domain_id``'s block bound on this machine (empty: no one is there)."""
    ports = bound_udp_ports(_read_udp_tables() if tables is None else tables)
    return sorted(p for p in ports if domain_of_port(p) == domain_id)


def default_lock_dir() -> Path:
    """Where this user's domain locks live: one fixed folder per user, whatever the session."""
    return Path('/tmp') / f'ghost-domains-{os.getuid()}'  # noqa: S108 (per-user, mode 0700)


def lock_path(lock_dir: Path, domain_id: int) -> Path:
    """The lock file of one domain."""
    return lock_dir / f'{domain_id:03d}.lock'


@dataclass
class ClaimedDomain:
    """A domain held by this process until ``release()`` (or until the process ends)."""

    domain_id: int
    lock_file: Path
    _stream: IO[str] | None

    def release(self) -> None:
        """Drop the lock (the lock file stays: removing it would race with a new claimer)."""
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def __enter__(self) -> 'ClaimedDomain':
        return self

    def __exit__(self, *_exc: object) -> None:
        self.release()


def try_lock_domain(lock_dir: Path, domain_id: int) -> ClaimedDomain | None:
    """Take the domain's lock without waiting; None when another process holds it.

    ``DomainClaimError`` when the lock file cannot be opened (e.g. a folder of another user).
    """
    path = lock_path(lock_dir, domain_id)
    try:
        lock_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        stream = path.open('a+')
    except OSError as err:
        raise DomainClaimError(f'cannot open the domain lock {path}: {err}') from err
    try:
        fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as err:
        stream.close()
        if err.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return None
        raise
    stream.seek(0)
    stream.truncate()
    stream.write(f'{os.getpid()}\n')
    stream.flush()
    return ClaimedDomain(domain_id, path, stream)


class _DiscoveryRange:
    """Set ROS_AUTOMATIC_DISCOVERY_RANGE for an rclpy init (rcl reads it from the environment)."""

    def __init__(self, value: str | None) -> None:
        self._value = value
        self._saved: str | None = None

    def __enter__(self) -> None:
        self._saved = os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE')
        if self._value is not None:
            os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = self._value

    def __exit__(self, *_exc: object) -> None:
        if self._saved is None:
            os.environ.pop('ROS_AUTOMATIC_DISCOVERY_RANGE', None)
        else:
            os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = self._saved


_PROBE_NODE = '_ghost_domain_probe'
# What the graph API names an endpoint's node before the node's own announcement has arrived.
_UNKNOWN_NAME = '_NODE_NAME_UNKNOWN_'


def _probe(domain_id: int, window_s: float, discovery_range: str | None,
           look: Callable[[Any], bool]) -> None:
    import rclpy

    # Kept around the node's creation too: the middleware creates its participant with it.
    with _DiscoveryRange(discovery_range):
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain_id)
        try:
            node = rclpy.create_node(_PROBE_NODE, context=context, enable_rosout=False,
                                     start_parameter_services=False)
        except BaseException:
            rclpy.try_shutdown(context=context)
            raise
    try:
        # The graph cache is filled by the middleware's own threads: no spinning needed.
        deadline = time.monotonic() + window_s
        while not look(node) and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def participants_on_domain(domain_id: int, window_s: float = 0.5,
                           discovery_range: str | None = 'LOCALHOST') -> list[str]:
    """The ROS nodes a fresh participant discovers on ``domain_id`` within ``window_s``."""
    seen: list[str] = []

    def look(node: Any) -> bool:
        seen[:] = sorted(_fqn(name, ns) for name, ns in node.get_node_names_and_namespaces()
                         if name != _PROBE_NODE)
        return bool(seen)

    _probe(domain_id, window_s, discovery_range, look)
    return seen


def ghost_publishers_on_domain(domain_id: int, topics: Sequence[str], window_s: float = 4.0,
                               discovery_range: str | None = 'LOCALHOST',
                               settle_s: float = 0.5) -> list[str]:
    """The nodes publishing any of ``topics`` on ``domain_id``, as discovered within ``window_s``.

    Returns once nothing new has been seen for ``settle_s`` after a first named hit, so a busy
    domain costs little more than its discovery; an empty domain costs the whole window. A
    publisher whose node is not known yet (its endpoints arrive before its node's name) counts
    as ``<unnamed>`` only if no name arrives within the window. The window is long (4 s): on
    a loaded machine discovery took more than 1.5 s, and a missed graph is a missed warning;
    it is only spent in full on a domain whose ports are bound by something that is not Ghost.
    """
    seen: set[str] = set()
    unnamed = [False]
    last_new = [0.0]

    def look(node: Any) -> bool:
        before = len(seen)
        for topic in topics:
            for info in node.get_publishers_info_by_topic(topic):
                if info.node_name == _UNKNOWN_NAME:
                    unnamed[0] = True
                elif info.node_name != _PROBE_NODE:
                    seen.add(_fqn(info.node_name, info.node_namespace))
        now = time.monotonic()
        if len(seen) > before:
            last_new[0] = now
        return bool(seen) and now - last_new[0] > settle_s

    _probe(domain_id, window_s, discovery_range, look)
    return sorted(seen) if seen or not unnamed[0] else ['<unnamed>']


def _fqn(name: str, namespace: str) -> str:
    return f'{namespace.rstrip("/")}/{name}'


def _candidates_default() -> list[int]:
    return candidate_domains(max_domain(ephemeral_low()))


def claim_free_domain(candidates: Sequence[int] | None = None, lock_dir: Path | None = None,
                      probe_budget_s: float = 1.5, probe_window_s: float = 0.5,
                      discovery_range: str | None = 'LOCALHOST',
                      ports_in_use: Callable[[int], list[int]] = domain_ports_in_use,
                      participants: Callable[..., list[str]] | None = None) -> ClaimedDomain:
    """Claim the first candidate domain that is unlocked and has no participant on it.

    The lock is taken before the domain is probed, so no other claimer can probe or take it
    meanwhile. The rclpy probes together take at most ``probe_budget_s``; once it is spent, the
    lock and the port check decide alone. ``participants=None`` uses ``participants_on_domain``;
    pass ``lambda *_a, **_k: []`` to skip DDS discovery (pure tests).
    """
    order = _candidates_default() if candidates is None else list(candidates)
    directory = default_lock_dir() if lock_dir is None else lock_dir
    probe = participants_on_domain if participants is None else participants
    budget_end = time.monotonic() + probe_budget_s
    for domain_id in order:
        claim = try_lock_domain(directory, domain_id)
        if claim is None:
            continue
        if ports_in_use(domain_id):
            claim.release()
            continue
        left = budget_end - time.monotonic()
        if left > 0.05 and probe(domain_id, min(probe_window_s, left),
                                 discovery_range=discovery_range):
            claim.release()
            continue
        return claim
    raise DomainClaimError(
        f'no free ROS domain among {order[0] if order else "-"}..{order[-1] if order else "-"}: '
        f'each is locked by another ghost_run (locks in {directory}) or has DDS participants; '
        'set ROS_DOMAIN_ID to choose one')

