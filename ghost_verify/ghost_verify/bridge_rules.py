"""Each bridge's rules as ``bridge_rederive`` applies them: inputs, roles, conversion.

A bridge whose outputs name their samples on /source_samples (SPEC 5 v1.3) is re-derived by
one pass (``ghost_verify.bridge_rederive``); what differs between bridges is here: the run
configuration key, the inputs (default topic -> the bridge's method), the field naming a
sample, the samples each output is made of (its own, by method, and those it holds), and the
bridge's own pure rules, imported only when a bag holds the bridge's inputs (``ghost_px4``,
``ghost_ardupilot``, ``ghost_mavros`` stay optional for the auditor; none imports rclpy):

- ``px4_bridge`` (``ghost_px4.bridge``): samples named by ``timestamp``; a belief is made of
  its EKF2 sample (odometry or local position, by ``source``) holding the other kind, a fix of
  its GNSS sample holding the local position, a status of the belief's sample holding the
  status, land detector and mission result.
- ``ap_bridge`` (``ghost_ardupilot.bridge``): samples named by ``header.stamp`` (ns); a
  belief is made of an /ap/odometry/filtered alone, or of an /ap/pose/filtered holding the
  /ap/twist/filtered (``source``: both with ``auto``, where a pose belief after an odometry
  the bridge had is ``superseded``), a fix of an /ap/navsat holding the EKF origin, a status of
  the belief's sample holding the /ap/status.
- ``mavros_bridge`` (``ghost_mavros.bridge.rederive``): samples named by ``header.stamp``; a
  belief is made of a /mavros/local_position/odom alone, a status of it holding the state and
  extended state, a fix of its own sample (``fix_source``) and, anchored (no ``origin``), the
  ``anchor`` (the first usable fix) and the ``anchor_odometry`` held then: ``fixed``, kept for
  good and never replaced by a later sample.
"""

from __future__ import annotations

from collections.abc import Mapping
import importlib
from typing import Any

from ghost_core.graph import AP_OUT_TOPICS, MAVROS_TOPICS, PX4_OUT_TOPICS

__all__ = ['BRIDGES', 'BridgeRules', 'load_rules']

#: px4_bridge's inputs by the ``ghost_px4.bridge.Px4Bridge`` method that takes them.
_PX4_METHODS = {
    '/fmu/out/vehicle_odometry': 'odometry',
    '/fmu/out/vehicle_local_position': 'local_position',
    '/fmu/out/vehicle_gps_position': 'gps',
    '/fmu/out/vehicle_status': 'status',
    '/fmu/out/vehicle_land_detected': 'land_detected',
    '/fmu/out/mission_result': 'mission_result',
}
assert set(_PX4_METHODS) <= set(PX4_OUT_TOPICS)
#: ap_bridge's inputs by the ``ghost_ardupilot.bridge.ApBridge`` method that takes them.
_AP_METHODS = {
    '/ap/odometry/filtered': 'odometry', '/ap/pose/filtered': 'pose',
    '/ap/twist/filtered': 'twist', '/ap/navsat': 'navsat',
    '/ap/gps_global_origin/filtered': 'origin', '/ap/status': 'status',
}
assert set(_AP_METHODS) == set(AP_OUT_TOPICS)
#: mavros_bridge's inputs by the ``ghost_mavros.bridge.MavrosBridge`` method that takes them
#: (one fix source of the two, by ``fix_source``).
_MAVROS_METHODS = {
    '/mavros/local_position/odom': 'odometry', '/mavros/global_position/raw/fix': 'navsat',
    '/mavros/gpsstatus/gps1/raw': 'gpsraw', '/mavros/state': 'state',
    '/mavros/extended_state': 'extended_state',
}
assert set(_MAVROS_METHODS) == set(MAVROS_TOPICS)


class BridgeRules:
    """One bridge's rules, with its recorded configuration (``load_rules`` makes one)."""

    #: The bridge's node name, also its run configuration key.
    name = ''
    #: The module holding the bridge's pure rules.
    module_name = ''
    #: The package an auditor needs installed, and the autopilot.
    package = ''
    autopilot = ''
    #: What its samples are called (``PX4 samples``), and its inputs (``fmu/out messages``).
    samples = ''
    inputs = ''
    #: Its inputs: default topic -> method.
    methods: Mapping[str, str] = {}

    def __init__(self, module: Any, config: Any) -> None:
        self.module = module
        self.config = config
        self.stamp_field = str(module.SOURCE_STAMP_FIELD)
        #: Per output stream: the method of each sample it may be made of -> the roles of
        #: those it holds (a role is the method of its sample unless ``held_method`` says).
        self.roles: dict[str, dict[str, tuple[str, ...]]] = {}
        self.held_method: dict[str, str] = {}
        #: Roles of samples kept for good, not the latest of their kind (never claimed late).
        self.fixed: frozenset[str] = frozenset()
        #: The default topics of the inputs the bridge reads with this configuration.
        self.read: tuple[str, ...] = tuple(self.methods)

    @classmethod
    def config_of(cls, module: Any, parameters: object) -> Any:
        """The bridge's configuration from its recorded form; ValueError naming what is wrong."""
        return module.BridgeConfig.from_dict(parameters)

    def method(self, role: str) -> str:
        """The input method of the samples a role names."""
        return self.held_method.get(role, role)

    def config_dict(self) -> dict[str, object]:
        """The configuration as the run recorded it."""
        return dict(self.config.to_dict())

    def sample_stamp(self, message: Any) -> int:
        """The stamp that names ``message`` on /source_samples."""
        raise NotImplementedError

    def keeps(self, method: str, message: Any) -> bool:
        """Whether the bridge holds ``message`` as its latest ``method`` sample."""
        return True

    def superseded(self, stream: str, own: str) -> str | None:
        """The method whose first sample ends outputs of ``stream`` made of ``own``, if any."""
        return None

    def derive(self, stream: str, own: str, message: Any,
               held: Mapping[str, Any | None]) -> dict[str, Any] | str:
        """The message the rules give for these samples, or why none."""
        raise NotImplementedError


class _Px4(BridgeRules):
    name, module_name, package = 'px4_bridge', 'ghost_px4.bridge', 'ghost_px4'
    autopilot = 'PX4'
    samples, inputs, methods = 'PX4 samples', 'fmu/out messages', _PX4_METHODS

    def __init__(self, module: Any, config: Any) -> None:
        super().__init__(module, config)
        source = 'odometry' if config.source == 'vehicle_odometry' else 'local_position'
        other = 'local_position' if source == 'odometry' else 'odometry'
        self.roles = {'state/nav': {source: (other,)},
                      'observations': {'gps': ('local_position',)},
                      'vehicle_status': {source: tuple(module.STATUS_METHODS)}}

    def sample_stamp(self, message: Any) -> int:
        return int(message.timestamp)

    def keeps(self, method: str, message: Any) -> bool:
        # the bridge keeps only an odometry with an attitude
        return method != 'odometry' or self.module.attitude_of(message) is not None

    def derive(self, stream: str, own: str, message: Any,
               held: Mapping[str, Any | None]) -> dict[str, Any] | str:
        module = self.module
        if stream == 'observations':
            fix = module.fix_of(self.config, message, held.get('local_position'))
            if isinstance(fix, module.Dropped):
                return str(fix.reason)
            return dict(module.fix_message(fix))
        stamp = module.live.belief_time_ns(message.timestamp, message.timestamp_sample)
        if stream == 'vehicle_status':
            status = module.status_of(stamp, *(held.get(name) for name in module.STATUS_METHODS))
            return dict(module.to_msg_dict(status))
        other = 'local_position' if own == 'odometry' else 'odometry'
        belief = module.belief_of(self.config, message, held.get(other))
        if isinstance(belief, module.Dropped):
            return str(belief.reason)
        return dict(module.odometry_message(stamp, belief))


class _Ap(BridgeRules):
    name, module_name, package = 'ap_bridge', 'ghost_ardupilot.bridge', 'ghost_ardupilot'
    autopilot = 'ArduPilot'
    samples, inputs, methods = 'AP_DDS samples', '/ap messages', _AP_METHODS

    def __init__(self, module: Any, config: Any) -> None:
        super().__init__(module, config)
        beliefs = {'odometry': ('odometry',), 'pose_twist': ('pose',),
                   'auto': ('odometry', 'pose')}[config.source]
        self.roles = {
            'state/nav': {method: ('twist',) if method == 'pose' else () for method in beliefs},
            'observations': {'navsat': ('origin',)},
            'vehicle_status': dict.fromkeys(beliefs, ('status',))}

    def sample_stamp(self, message: Any) -> int:
        return int(self.module.stamp_ns(message))

    def superseded(self, stream: str, own: str) -> str | None:
        # source auto: beliefs from pose only until the first odometry the bridge receives
        return 'odometry' if own == 'pose' and self.config.source == 'auto' else None

    def derive(self, stream: str, own: str, message: Any,
               held: Mapping[str, Any | None]) -> dict[str, Any] | str:
        module = self.module
        if stream == 'observations':
            fix = module.fix_of(self.config, message, held.get('origin'))
            if isinstance(fix, module.Dropped):
                return str(fix.reason)
            return dict(module.fix_message(fix))
        stamp = self.sample_stamp(message)
        if stream == 'vehicle_status':
            return dict(module.to_msg_dict(module.status_of(stamp, held.get('status'))))
        belief = (module.belief_of_odometry(message) if own == 'odometry' else
                  module.belief_of_pose(message, held.get('twist'),
                                        self.config.max_twist_age_ns))
        if isinstance(belief, module.Dropped):
            return str(belief.reason)
        return dict(module.odometry_message(stamp, belief))


class _Mavros(BridgeRules):
    name, module_name, package = 'mavros_bridge', 'ghost_mavros.bridge', 'ghost_mavros'
    autopilot = 'MAVROS'
    samples, inputs, methods = 'MAVROS samples', '/mavros messages', _MAVROS_METHODS

    def __init__(self, module: Any, config: Any) -> None:
        super().__init__(module, config)
        fix = config.fix_source
        anchored = config.frame.origin is None
        self.roles = {'state/nav': {'odometry': ()},
                      'observations': {fix: ('anchor', 'anchor_odometry') if anchored else ()},
                      'vehicle_status': {'odometry': tuple(module.STATUS_METHODS)}}
        self.held_method = {'anchor': fix, 'anchor_odometry': 'odometry'}
        self.fixed = frozenset(self.held_method)
        other = 'gpsraw' if fix == 'navsat' else 'navsat'
        self.read = tuple(topic for topic, method in self.methods.items() if method != other)

    @classmethod
    def config_of(cls, module: Any, parameters: object) -> Any:
        expected: dict[str, type | tuple[type, ...]] = {
                    'fix_source': str, 'autopilot': str, 'origin': (list, type(None)),
                    'gnss_height': bool, 'gps_uere_m': (int, float), 'gps_delay_ns': int}
        if not isinstance(parameters, Mapping) or set(parameters) != set(expected):
            raise ValueError(f'mavros_bridge.parameters is not an object with keys '
                             f'{sorted(expected)}')
        for key, kind in expected.items():
            if not isinstance(parameters[key], kind) or isinstance(parameters[key], bool) != (
                    kind is bool):
                raise ValueError(f'mavros_bridge.parameters.{key} is {parameters[key]!r}')
        origin = parameters['origin']
        geo = None if origin is None else module.px4.GeoOrigin(*(float(v) for v in origin))
        frame = module.rules.FixFrame(geo, parameters['gnss_height'],
                                      float(parameters['gps_uere_m']),
                                      parameters['gps_delay_ns'])
        return module.MavrosConfig(parameters['fix_source'], parameters['autopilot'], frame)

    def sample_stamp(self, message: Any) -> int:
        return int(self.module.rules.stamp_ns(message.header))

    def derive(self, stream: str, own: str, message: Any,
               held: Mapping[str, Any | None]) -> dict[str, Any] | str:
        named = [(own, message)]
        if stream == 'observations' and held.get('anchor') is not None:
            named += [(own, held['anchor']), ('odometry', held.get('anchor_odometry'))]
        elif stream == 'vehicle_status':
            named += [(method, held[method]) for method in self.module.STATUS_METHODS
                      if held.get(method) is not None]
        found: dict[str, Any] | str = self.module.rederive(self.config, stream, named)
        return found


#: The bridges re-derived, by name (their run configuration key).
BRIDGES: Mapping[str, type[BridgeRules]] = {rules.name: rules
                                            for rules in (_Px4, _Ap, _Mavros)}


def load_rules(name: str, parameters: object) -> BridgeRules:
    """The rules of bridge ``name`` with its recorded ``parameters``.

    ImportError when its package is not installed; ValueError naming what is wrong with the
    parameters.
    """
    kind = BRIDGES[name]
    module = importlib.import_module(kind.module_name)
    return kind(module, kind.config_of(module, parameters))
