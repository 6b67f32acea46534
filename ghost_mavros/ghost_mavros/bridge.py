"""The MAVROS bridge's state: the latest sample of each kind, and what each message gives.

``MavrosBridge`` holds the latest MAVROS sample of each kind the rules need
(``ghost_mavros.rules``) and returns, for each message received, the outputs to publish (or a
drop), each naming the MAVROS samples it was made from (``Output.sources``: the input method
and the sample's ``header.stamp`` in ns, SPEC 5 v1.3), as px4_bridge's do:

- odometry: a belief (``state/nav``) from it alone; before it, when ``StatusReporter`` says so
  (the first, a change, once a second of belief time), the vehicle status stamped with the
  belief's stamp, naming the belief's sample and the state and extended state held. A belief
  not stamped after the previous one is dropped.
- fix (``fix_source`` navsat: raw/fix; gpsraw: gps1/raw): an observation, naming its own
  sample and, when anchored (no origin given), the anchor fix and the odometry held then.
  A fix not stamped after the previous one is dropped.
- state / extended_state: held (nothing published).

No rclpy or mavros_msgs here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ghost_core.graph import relative_topic
from ghost_core.wire import to_msg_dict
from ghost_mavros import rules
from ghost_px4 import convert as px4
from ghost_px4.bridge import Dropped, Output, Result, Source
from ghost_px4.live import FRAME_ID
from ghost_px4.status import StatusReporter

__all__ = ['BRIDGE_CONFIG_KEY', 'FIX_SOURCES', 'IN_TOPICS', 'MavrosBridge', 'MavrosConfig',
           'SOURCE_STAMP_FIELD', 'STATUS_METHODS', 'TOPIC_TYPES', 'rederive',
           'source_samples_message', 'fixes_note']

#: Where the recorder's run configuration (manifest.json's ``config``) holds the bridge's.
BRIDGE_CONFIG_KEY = 'mavros_bridge'
#: Which MAVROS topic the fixes come from (the ``fix_source`` parameter).
FIX_SOURCES = ('navsat', 'gpsraw')
#: The bridge's inputs (relative to its namespace) by the method that takes them.
IN_TOPICS: Mapping[str, str] = {
    method: relative_topic(topic) for method, topic in (
        ('odometry', '/mavros/local_position/odom'),
        ('navsat', '/mavros/global_position/raw/fix'),
        ('gpsraw', '/mavros/gpsstatus/gps1/raw'),
        ('state', '/mavros/state'), ('extended_state', '/mavros/extended_state'))}
#: Each input's type, as the recorder records it.
TOPIC_TYPES: Mapping[str, str] = {
    'odometry': 'nav_msgs/msg/Odometry', 'navsat': 'sensor_msgs/msg/NavSatFix',
    'gpsraw': 'mavros_msgs/msg/GPSRAW', 'state': 'mavros_msgs/msg/State',
    'extended_state': 'mavros_msgs/msg/ExtendedState'}
#: The inputs a vehicle status is made of (besides the belief whose stamp it takes).
STATUS_METHODS = ('state', 'extended_state')
#: The field that names a MAVROS sample on its topic (SourceSamples.stamp_fields).
SOURCE_STAMP_FIELD = 'header.stamp'


@dataclass(frozen=True, slots=True)
class MavrosConfig:
    """The bridge's parameters (ghost_mavros.node_parameters), in the units it works in."""

    fix_source: str
    autopilot: str
    frame: rules.FixFrame

    def __post_init__(self) -> None:
        if self.fix_source not in FIX_SOURCES:
            raise ValueError(f'mavros_bridge fix_source {self.fix_source!r} is not one of '
                             f'{", ".join(FIX_SOURCES)}')
        if self.autopilot not in rules.AUTOPILOTS:
            raise ValueError(f'mavros_bridge autopilot {self.autopilot!r} is not one of '
                             f'{", ".join(rules.AUTOPILOTS)}')
        if self.frame.delay_ns < 0 or not self.frame.gps_uere_m > 0:
            raise ValueError(f'mavros_bridge gps_delay_ms must be >= 0 and gps_uere_m > 0, '
                             f'got {self.frame.delay_ns / 1e6:g} ms, {self.frame.gps_uere_m!r}')

    @classmethod
    def from_parameters(cls, params: Mapping[str, Any]) -> MavrosConfig:
        """From the node's parameter values (fix_source, autopilot, origin, ...)."""
        frame = rules.FixFrame(rules.origin_of(str(params['origin'])),
                               bool(params['gnss_height']), float(params['gps_uere_m']),
                               int(round(float(params['gps_delay_ms']) * 1e6)))
        return cls(str(params['fix_source']), str(params['autopilot']), frame)

    def to_dict(self) -> dict[str, object]:
        """The form recorded in the run configuration."""
        origin = self.frame.origin
        return {'fix_source': self.fix_source, 'autopilot': self.autopilot,
                'origin': None if origin is None else [origin.lat_deg, origin.lon_deg,
                                                       origin.alt_m],
                'gnss_height': self.frame.gnss_height, 'gps_uere_m': self.frame.gps_uere_m,
                'gps_delay_ns': self.frame.delay_ns}

    @property
    def named_autopilot(self) -> str | None:
        """The autopilot the parameters name (None: 'auto', named from the mode)."""
        return {'px4': rules.PX4, 'ardupilot': rules.ARDUPILOT}.get(self.autopilot)


def _stamp(ns: int) -> dict[str, int]:
    return {'sec': ns // 1_000_000_000, 'nanosec': ns % 1_000_000_000}


def source_samples_message(output: Output, output_topic: str,
                           topics: Mapping[str, str]) -> dict[str, Any]:
    """The ghost_interfaces/SourceSamples of ``output``, as a message dict.

    ``output_topic`` is the output's fully qualified topic, ``topics`` each input method's
    fully qualified topic (as the node resolved its subscriptions).
    """
    return {
        'header': {'stamp': _stamp(output.stamp_ns), 'frame_id': FRAME_ID},
        'output_topic': output_topic,
        'source_topics': [topics[method] for method, _ in output.sources],
        'stamp_fields': [SOURCE_STAMP_FIELD] * len(output.sources),
        'stamps': [int(stamp) for _, stamp in output.sources],
        'schema_version': 1,
    }


class MavrosBridge:
    """The latest MAVROS sample of each kind, and the rule for each message (the module)."""

    def __init__(self, config: MavrosConfig) -> None:
        self.config = config
        self._held: dict[str, Any] = {}
        self._anchor: rules.Anchor | None = None
        self._anchor_sources: tuple[Source, ...] = ()
        self._last_belief_ns: int | None = None
        self._last_fix_ns: int | None = None
        self._reporter = StatusReporter()
        #: The autopilot named so far (the parameter, else /mavros/state's mode).
        self.autopilot = config.named_autopilot

    def _source(self, method: str) -> tuple[Source, ...]:
        held = self._held.get(method)
        return () if held is None else ((method, rules.stamp_ns(held.header)),)

    def odometry(self, msg: Any) -> Result:
        """A /mavros/local_position/odom: the status when due, then the belief; or a drop."""
        try:
            message = rules.belief_of(msg)
        except rules.Rejected as err:
            return (Dropped('belief', str(err)),)
        stamp = rules.stamp_ns(msg.header)
        if self._last_belief_ns is not None and stamp <= self._last_belief_ns:
            return (Dropped('belief', 'header.stamp not strictly increasing'),)
        self._last_belief_ns = stamp
        self._held['odometry'] = msg
        primary: Source = ('odometry', stamp)
        status = rules.status_of(stamp, *(self._held.get(name) for name in STATUS_METHODS))
        out: list[Output | Dropped] = []
        if self._reporter.due(status):
            out.append(Output('vehicle_status', stamp, to_msg_dict(status),
                              (primary, *(source for name in STATUS_METHODS
                                          for source in self._source(name))), status=status))
        out.append(Output('state/nav', stamp, message, (primary,)))
        return tuple(out)

    def fix(self, method: str, msg: Any) -> Result:
        """A raw/fix ('navsat') or gps1/raw ('gpsraw') sample: an observation, or a drop."""
        try:
            fix = (rules.navsat_fix if method == 'navsat' else rules.gpsraw_fix)(
                self.config.frame, msg)
            own: Source = (method, rules.stamp_ns(msg.header))
            if self.config.frame.origin is None and self._anchor is None:
                self._anchor = rules.anchor_of(fix, self._held.get('odometry'))
                if self._anchor is not None:
                    self._anchor_sources = (own, *self._source('odometry'))
            message = rules.fix_message(self.config.frame, fix, self._anchor)
        except (rules.Rejected, ValueError) as err:
            return (Dropped('fix', str(err)),)
        if self._last_fix_ns is not None and fix.stamp_ns <= self._last_fix_ns:
            return (Dropped('fix', 'header.stamp not strictly increasing'),)
        self._last_fix_ns = fix.stamp_ns
        return (Output('observations', fix.stamp_ns, message, (own, *self._anchor_sources)),)

    def state(self, msg: Any) -> Result:
        """A /mavros/state: held; names the autopilot from its mode (autopilot 'auto')."""
        self._held['state'] = msg
        if self.config.autopilot == 'auto':
            self.autopilot = rules.autopilot_of_mode(str(msg.mode)) or self.autopilot
        return ()

    def extended_state(self, msg: Any) -> Result:
        """A /mavros/extended_state: the landed state held (nothing published)."""
        self._held['extended_state'] = msg
        return ()


def fixes_note(config: MavrosConfig, fix_topic: str) -> str:
    """What the node says at start of the fixes (read from ``fix_topic``): frame, delay, height."""
    origin = config.frame.origin
    where = ('anchored at the first usable fix and the belief held then (set origin to check a '
             'constant offset too)' if origin is None
             else f'about the EKF origin {origin.lat_deg:.7f}, {origin.lon_deg:.7f}, '
                  f'{origin.alt_m:g} m')
    height = ('compared (gnss_height: the EKF height follows GNSS)' if config.frame.gnss_height
              else f'marked not measured (variance {px4.UNMEASURED_VARIANCE_M2:g} m²)')
    delay = config.frame.delay_ns / 1e6
    return (f'fixes from {fix_topic} {where}, delayed {delay:g} ms; '
            f'vertical axis {height}')


def rederive(config: MavrosConfig, stream: str,
             named: Sequence[tuple[str, Any]]) -> dict[str, Any] | str:
    """The message ``stream`` gets from exactly the MAVROS samples ``named`` (method, message).

    ``named`` in the order the output's source_samples names them (``MavrosBridge``'s rules);
    no state, so an auditor re-derives each recorded output alone. A string: why the rules
    give no message (the bridge dropped such a sample).
    """
    methods = [method for method, _ in named]
    by_method = {method: message for method, message in reversed(named)}
    try:
        if stream == 'state/nav' and methods == ['odometry']:
            return rules.belief_of(named[0][1])
        if stream == 'vehicle_status' and methods[:1] == ['odometry'] and set(
                methods[1:]) <= set(STATUS_METHODS):
            return dict(to_msg_dict(rules.status_of(
                rules.stamp_ns(named[0][1].header),
                *(by_method.get(name) for name in STATUS_METHODS))))
        if stream == 'observations' and methods in (
                [config.fix_source], [config.fix_source, config.fix_source, 'odometry']):
            rule = rules.navsat_fix if config.fix_source == 'navsat' else rules.gpsraw_fix
            anchor = (None if len(named) == 1 else
                      rules.anchor_of(rule(config.frame, named[1][1]), named[2][1]))
            return rules.fix_message(config.frame, rule(config.frame, named[0][1]), anchor)
    except (rules.Rejected, ValueError) as err:
        return str(err)
    return f'{stream} is not made of {", ".join(methods) or "nothing"}'
