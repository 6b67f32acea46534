"""Render docs/parameters.md from the parameters the nodes declare (so the page cannot drift).

python -m ghost_nodes.param_docs > docs/parameters.md
"""

import importlib

from ghost_nodes.node_base import COMMON_PARAMS, ParamSpec

__all__ = ['NODES', 'render']

NODES = ('scenario', 'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter', 'recorder', 'monitor', 'px4_bridge',
         'command_gate', 'px4_log_player', 'mission_setpoints')

_HEADER = """\
# Node parameters

Generated from the nodes' declarations by `python -m ghost_nodes.param_docs`
(a test checks this page is current). Defaults below are the declared ones; `config/ghost.yaml`
sets the values the graph runs with, and `config/scenarios/<name>.yaml` overrides them per
scenario. Every value is validated at start-up (the node exits with one line naming the
parameter) and on `ros2 param set` (refused with the reason). Read-only parameters can only be
set at start-up.

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


def render() -> str:
    """The whole Markdown page."""
    rows = []
    owners = [('every node', COMMON_PARAMS)] + [
        (node, getattr(importlib.import_module(f'ghost_nodes.nodes.{node}'), 'PARAMS', ()))
        for node in NODES]
    for node, specs in owners:
        for spec in specs:
            rows.append(
                f'| `{node}` | `{spec.name}` | {type(spec.default).__name__} | '
                f'`{_default(spec.default)}` | {_allowed(spec)} | '
                f'{"yes" if spec.read_only else "no"} | '
                f'{spec.description.replace("|", "/")} |')
    return _HEADER + '\n'.join(rows) + '\n'


if __name__ == '__main__':
    print(render(), end='')
