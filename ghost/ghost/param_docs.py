"""Render docs/parameters.md from the parameters the nodes declare (so the page cannot drift).

The tables are data (``ghost_nodes.node_parameters``, ``ghost_px4.node_parameters``): no
node module, and so no rclpy, is imported.

python -m ghost.param_docs > docs/parameters.md
"""

import math

from ghost_core.parameters import ParamSpec
from ghost_core.profiles import ACCURACY_PROFILES, DEAD_RECKONING_BIAS_M_S2, DEFAULT_PROFILE
from ghost_nodes.node_parameters import COMMON_PARAMS, PARAMETERS

__all__ = ['NODES', 'render']

#: The nodes in the page's order.
NODES = ('scenario', 'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter', 'recorder', 'monitor', 'px4_bridge',
         'command_gate', 'px4_log_player', 'mission_setpoints')

_HEADER = """\
# Node parameters

Generated from the nodes' declarations by `python -m ghost.param_docs`
(a test checks this page is current). `default` is the declared value; `config/ghost.yaml`
sets the values the graph runs with (its column shows each one it sets to another value), and
`config/scenarios/<name>.yaml` overrides them per scenario. Every value is validated at
start-up (the node exits with one line naming the parameter) and on `ros2 param set` (refused
with the reason). Read-only parameters can only be set at start-up.

`allowed` is what a value must satisfy. Numeric ranges are declared in the parameter's
descriptor (`integer_range` / `floating_point_range`), so `ros2 param describe` shows them and
rclpy itself refuses a value outside them, at start-up and on `ros2 param set`. rclpy ranges are
inclusive: an open end (`(0, inf)`: > 0) is declared as the closed range (`[0, inf]`) and the
edge value itself is refused by Ghost's check; the descriptor's `additional_constraints` says
so. Integer bounds are exact (> 0 is `[1, ...]`). String choices are Ghost's check, listed in
`additional_constraints`.

`period_s` is shared: it sits in the `/**` section of `config/ghost.yaml` so the predictor and
the evaluator always agree, and must equal the estimator's publication period.

`decision_policy` and `action_emitter` have no parameters: the reference policy and emission
contract are fixed (SPEC section 5); a different policy is a different node.

| node | parameter | type | default | `ghost.yaml` | allowed | read-only | meaning |
|---|---|---|---|---|---|---|---|
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


def render() -> str:
    """The whole Markdown page."""
    rows = []
    # The page documents the PX4 nodes too (ghost_px4, present wherever the docs are built).
    from ghost_px4.node_parameters import PARAMETERS as PX4_PARAMETERS

    tables = {**PARAMETERS, **PX4_PARAMETERS}
    owners = [('every node', COMMON_PARAMS)] + [(node, tables[node]) for node in NODES]
    shipped = _shipped()
    for node, specs in owners:
        for spec in specs:
            value = shipped.get(node, shipped.get('every node', {})).get(spec.name, spec.default)
            rows.append(
                f'| `{node}` | `{spec.name}` | {type(spec.default).__name__} | '
                f'`{_default(spec.default)}` | '
                f'{"" if value == spec.default else f"`{_default(value)}`"} | {_allowed(spec)} | '
                f'{"yes" if spec.read_only else "no"} | '
                f'{spec.description.replace("|", "/")} |')
    return _HEADER + '\n'.join(rows) + '\n' + _profiles()


def _shipped() -> dict[str, dict[str, object]]:
    """The values config/ghost.yaml sets, by node ('every node': its ``/**`` section)."""
    import yaml

    from ghost.replay import default_params_files

    document = yaml.safe_load(default_params_files()[0].read_text(encoding='utf-8')) or {}
    common = dict(document.get('/**', {}).get('ros__parameters', {}))
    values: dict[str, dict[str, object]] = {'every node': common}
    for key, section in document.items():
        if key != '/**':
            node = key.rsplit('/', 1)[-1]
            values[node] = {**common, **section.get('ros__parameters', {})}
    return values


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
    print(render(), end='')
