"""Render docs/parameters.md and config/ghost.yaml from the nodes' declarations.

The declarations are data (``ghost_core.agent_parameters``, ``ghost_nodes.node_parameters``,
``ghost_px4.node_parameters``) and the one home of every default: the page and the shipped
parameter file are generated from them, so neither can hold a second value. No node module,
and so no rclpy, is imported.

python -m ghost.param_docs > docs/parameters.md
python -m ghost.param_docs --config > config/ghost.yaml
"""

import math
import sys
import textwrap

from ghost_core.parameters import ParamSpec
from ghost_core.profiles import ACCURACY_PROFILES, DEAD_RECKONING_BIAS_M_S2, DEFAULT_PROFILE
from ghost_nodes.node_parameters import COMMON_PARAMS, PARAMETERS

__all__ = ['NODES', 'SHARED', 'declarations', 'render', 'render_config']

#: The nodes in the page's order.
NODES = ('scenario', 'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter', 'recorder', 'monitor', 'px4_bridge',
         'command_gate', 'px4_log_player', 'mission_setpoints', 'mavros_bridge')

_HEADER = """\
# Node parameters

Generated from the nodes' declarations by `python -m ghost.param_docs`
(a test checks this page is current). `default` is the declared value, the one home of each
default: `config/ghost.yaml` is generated from the same declarations
(`python -m ghost.param_docs --config`), so a node run alone (`ros2 run ghost_nodes
calibrator`) and the shipped graph run with the same values. `config/scenarios/<name>.yaml`
sets the values each scenario is stated with (SPEC section 7: M = 4, K = 2), and your own
`params_file` (loaded last) what your vehicle needs. Every value is validated at
start-up (the node exits with one line naming the parameter) and on `ros2 param set` (refused
with the reason). Read-only parameters can only be set at start-up.

`allowed` is what a value must satisfy. Numeric ranges are declared in the parameter's
descriptor (`integer_range` / `floating_point_range`), so `ros2 param describe` shows them and
rclpy itself refuses a value outside them, at start-up and on `ros2 param set`. rclpy ranges are
inclusive: an open end (`(0, inf)`: > 0) is declared as the closed range (`[0, inf]`) and the
edge value itself is refused by Ghost's check; the descriptor's `additional_constraints` says
so. Integer bounds are exact (> 0 is `[1, ...]`). String choices are Ghost's check, listed in
`additional_constraints`.

`period_s` and `input_qos` are shared: they sit in the `/**` section of `config/ghost.yaml`, so
that one value set there reaches every node that declares them (`period_s`: the predictor and
the monitor; it must equal the estimator's publication period).

`decision_policy` and `action_emitter` have no parameters: the reference policy and emission
contract are fixed (SPEC section 5); a different policy is a different node.

| node | parameter | type | default | allowed | read-only | meaning |
|---|---|---|---|---|---|---|
"""


def _default(value: object) -> str:
    if isinstance(value, list):
        shown = ', '.join(str(v) for v in value if v != '')
        return f'[{shown}]'
    if value == '':
        return "''"
    return str(value)


def _allowed(spec: ParamSpec) -> str:
    allowed = spec.allowed()
    return f'`{allowed}`' if allowed else ''


def declarations() -> list[tuple[str, tuple[ParamSpec, ...]]]:
    """(node, its own parameters) in the page's order, 'every node' first."""
    # The PX4 and MAVROS nodes too (ghost_px4, ghost_mavros: present wherever the docs are
    # built).
    from ghost_mavros.node_parameters import PARAMETERS as MAVROS_PARAMETERS
    from ghost_px4.node_parameters import PARAMETERS as PX4_PARAMETERS

    tables = {**PARAMETERS, **PX4_PARAMETERS, **MAVROS_PARAMETERS}
    return [('every node', COMMON_PARAMS)] + [(node, tables[node]) for node in NODES]


def render() -> str:
    """The whole Markdown page."""
    rows = []
    for node, specs in declarations():
        for spec in specs:
            rows.append(
                f'| `{node}` | `{spec.name}` | {type(spec.default).__name__} | '
                f'`{_default(spec.default)}` | {_allowed(spec)} | '
                f'{"yes" if spec.read_only else "no"} | '
                f'{spec.description.replace("|", "/")} |')
    return _HEADER + '\n'.join(rows) + '\n' + _profiles()


#: Parameters several nodes declare with one meaning: config/ghost.yaml sets them in its
#: ``/**`` section, so that one value a user sets there reaches them all.
SHARED = ('period_s', 'input_qos')

_CONFIG_HEADER = """\
# Ghost's node parameters with their declared defaults. GENERATED from the declarations
# (ghost_core.agent_parameters, ghost_nodes.node_parameters, ghost_px4.node_parameters,
# ghost_mavros.node_parameters) by
#   python -m ghost.param_docs --config > config/ghost.yaml
# and a test checks it is current: change a default in its declaration, never here. Loaded
# first by the launch file and ghost_run for every node; then config/scenarios/<name>.yaml
# when a scenario runs, then the launch arguments / ghost_run flags, then your params_file
# (put your vehicle's values there). docs/parameters.md documents every parameter. Not
# listed: graph_status and executor, which the bringup sets on each process.
# Sections are keyed /**/<node>: that matches the node in any namespace (namespace:=uav1); a
# bare '<node>:' key only matches it in the root namespace.
"""


def _yaml(value: object) -> str:
    """A parameter value as YAML (flow style for lists)."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return '[' + ', '.join(_yaml(item) for item in value) + ']'
    import yaml

    text = str(value)
    plain = text.replace('_', '').replace('/', '').replace('.', '').isalnum()
    return text if plain and yaml.safe_load(text) == text else "'" + text.replace(
        "'", "''") + "'"


def _entry(name: str, value: object) -> list[str]:
    """The lines of one parameter; a list longer than a line in block style."""
    line = f'    {name}: {_yaml(value)}'
    if len(line) <= 99 or not isinstance(value, list):
        return [line]
    return [f'    {name}:', *(f'      - {_yaml(item)}' for item in value)]


def _comment(text: str) -> list[str]:
    return textwrap.wrap(text, 99, initial_indent='    # ', subsequent_indent='    # ',
                         break_long_words=False, break_on_hyphens=False)


def render_config() -> str:
    """config/ghost.yaml: every node's parameters (but the common ones) at their defaults."""
    shared: dict[str, ParamSpec] = {}
    sections = []
    for node, specs in declarations()[1:]:
        lines = []
        for spec in specs:
            if spec.name in SHARED:
                first = shared.setdefault(spec.name, spec)
                if first.default != spec.default:
                    raise ValueError(f'{node}.{spec.name}: shared parameter declared with '
                                     f'{spec.default!r} and {first.default!r}')
                continue
            lines += [*_comment(spec.description), *_entry(spec.name, spec.default)]
        if lines:
            sections.append(f'/**/{node}:\n  ros__parameters:\n' + '\n'.join(lines) + '\n')
    common = [line for name in SHARED for line in (
        *_comment(shared[name].description), *_entry(name, shared[name].default))]
    return (_CONFIG_HEADER + '/**:\n  ros__parameters:\n' + '\n'.join(common) + '\n'
            + ''.join(sections))


def _profiles() -> str:
    """The accuracy profiles section (ghost_core.profiles), with their derived numbers."""
    root2 = math.sqrt(2.0)
    lines = [
        '',
        '## Accuracy profiles (`self_assessor` `accuracy_profile`)',
        '',
        'One parameter chooses what the mission needs; each threshold parameter left at 0 and '
        "`unconfirmed_horizon_s` left at -1 take the profile's value. Thresholds are on the "
        "largest 1-sigma std of a block, per axis: PX4's eph is sqrt(σN² + σE²), so a "
        'per-axis σ is eph/√2 (the eph columns). The unconfirmed horizon is how long inertial '
        'dead reckoning takes to use up the KNOWN position threshold, sqrt(2 σ_known / b) with a '
        f'residual accelerometer bias b = {DEAD_RECKONING_BIAS_M_S2:g} m/s² (rounded down to '
        '0.1 s), and at least three periods of the slowest fix rate the profile expects. PX4 '
        'declares its own position invalid 5 s after the last aiding (EKF2_NOAID_TOUT) and its '
        'failsafe acts after that, so the gnss horizon leads it. The default profile is '
        f'`{DEFAULT_PROFILE}`.',
        '',
        '| profile | meant for | position KNOWN / UNKNOWN beyond (σ m; eph m) | velocity '
        'KNOWN / UNKNOWN beyond (σ m/s; evh) | orientation KNOWN / UNKNOWN beyond (rad) | '
        'slowest fix | unconfirmed horizon |',
        '|---|---|---|---|---|---|---|',
    ]
    for profile in ACCURACY_PROFILES.values():
        p, v, o = profile.position, profile.velocity, profile.orientation
        lines.append(
            f'| `{profile.name}` | {profile.meaning} | {p.known_max_std:g} / '
            f'{p.uncertain_max_std:g} ({p.known_max_std * root2:.2f} / '
            f'{p.uncertain_max_std * root2:.2f}) | {v.known_max_std:g} / {v.uncertain_max_std:g} '
            f'({v.known_max_std * root2:.2f} / {v.uncertain_max_std * root2:.2f}) | '
            f'{o.known_max_std:g} / {o.uncertain_max_std:g} | {profile.slowest_fix_hz:g} Hz | '
            f'{profile.unconfirmed_horizon_s:g} s |')
    return '\n'.join(lines) + '\n'


if __name__ == '__main__':
    print(render_config() if sys.argv[1:] == ['--config'] else render(), end='')
