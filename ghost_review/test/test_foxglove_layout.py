"""docs/foxglove-layout.json parses and names only topics and fields a Ghost bag has.

The topics and their message types come from ghost_core.graph, the fields from
ghost_core.msg_fields (generated from the .msg files), so a renamed field fails here.
"""

import json
from pathlib import Path

import pytest

from ghost_core.graph import DIAGNOSTICS_TOPIC, GATE_TOPIC, GHOST_TOPICS
from ghost_core.msg_fields import MESSAGE_FIELDS

pytestmark = pytest.mark.bag

LAYOUT = Path(__file__).resolve().parents[2] / 'docs' / 'foxglove-layout.json'
#: Topic -> message (short name); the gate's type is the one ghost.bringup records it with.
MESSAGES = {**{topic: type_name.rsplit('/', 1)[-1] for topic, type_name in GHOST_TOPICS.items()},
            GATE_TOPIC: 'GateEmission'}
#: Topics a panel reads whole (no field path): the monitor's DiagnosticArray.
WHOLE_TOPICS = {DIAGNOSTICS_TOPIC, *MESSAGES}
PATH_KEYS = ('value',)
TOPIC_KEYS = ('topicPath', 'topicToRender')


def _strings(node: object, keys: tuple[str, ...]) -> list[str]:
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key in keys and isinstance(value, str):
                found.append(value)
            else:
                found.extend(_strings(value, keys))
    elif isinstance(node, list):
        for item in node:
            found.extend(_strings(item, keys))
    return found


def field_problem(path: str) -> str | None:
    """Why a message path does not resolve on a Ghost bag, or None."""
    topic, _, fields = path.partition('.')
    message = MESSAGES.get(topic)
    if message is None:
        return f'{path}: {topic} is not a Ghost topic with a ghost_interfaces message'
    for name in fields.split('.'):
        types = dict(MESSAGE_FIELDS.get(message, ()))
        if name not in types:
            return f'{path}: {message} has no field {name!r}'
        message = types[name]
    return None


def test_the_layout_parses_and_has_the_panels_the_docs_promise() -> None:
    layout = json.loads(LAYOUT.read_text(encoding='utf-8'))
    kinds = {panel.split('!')[0] for panel in layout['configById']}
    assert {'StateTransitions', 'Plot', 'DiagnosticSummary', 'RawMessages'} <= kinds
    assert GATE_TOPIC in json.dumps(layout)


def test_every_path_and_topic_exists_in_a_ghost_bag() -> None:
    layout = json.loads(LAYOUT.read_text(encoding='utf-8'))
    paths = _strings(layout['configById'], PATH_KEYS)
    topics = _strings(layout['configById'], TOPIC_KEYS)
    assert paths and topics
    assert [problem for path in paths if (problem := field_problem(path))] == []
    assert set(topics) <= WHOLE_TOPICS


def test_the_check_refuses_a_wrong_field() -> None:
    assert field_problem('/decisions.decision.kind') is None
    assert field_problem('/decisions.decision.knid') is not None
    assert field_problem('/nowhere.x') is not None
