"""Graph readiness from endpoint reports: both ends of every edge must have matched."""

import pytest

from ghost_nodes.readiness import EndpointReport, missing_edges, parse_report


def _report(node: str, writers: dict[str, int] | None = None,
            readers: dict[str, int] | None = None) -> EndpointReport:
    return EndpointReport(node, writers or {}, readers or {})


EXPECTED = {'/decisions': 2}


def test_both_ends_matched_is_ready() -> None:
    reports = [_report('/decision_policy', writers={'/decisions': 2}),
               _report('/action_emitter', readers={'/decisions': 1}),
               _report('/recorder', readers={'/decisions': 1})]
    assert missing_edges(EXPECTED, reports) == {}


def test_writer_matched_but_a_reader_has_not_matched_the_writer() -> None:
    # The CI failure mode: the graph lists the recorder, its reader has not matched yet.
    reports = [_report('/decision_policy', writers={'/decisions': 2}),
               _report('/action_emitter', readers={'/decisions': 1}),
               _report('/recorder', readers={'/decisions': 0})]
    assert missing_edges(EXPECTED, reports) == {
        '/decisions': '1/2 readers matched a writer'}


def test_readers_matched_but_the_writer_has_not_matched_them_all() -> None:
    reports = [_report('/decision_policy', writers={'/decisions': 1}),
               _report('/action_emitter', readers={'/decisions': 1}),
               _report('/recorder', readers={'/decisions': 1})]
    assert missing_edges(EXPECTED, reports) == {
        '/decisions': 'writers matched 1/2 readers'}


def test_no_reports_names_both_ends() -> None:
    assert missing_edges({'/a': 1, '/b': 3}, []) == {
        '/a': 'writers matched 0/1 readers, 0/1 readers matched a writer',
        '/b': 'writers matched 0/3 readers, 0/3 readers matched a writer'}


def test_report_round_trip() -> None:
    report = _report('/calibrator', {'/self_assessment/calibrated': 2},
                     {'/self_assessment': 1, '/prediction_outcomes': 0})
    assert parse_report(report.to_json()) == report


@pytest.mark.parametrize(('text', 'message'), [
    ('not json', 'not JSON'),
    ('[]', 'lacks a node name'),
    ('{"node": 3}', 'lacks a node name'),
    ('{"node": "/n", "writers": {"/t": -1}, "readers": {}}', 'writers must map'),
    ('{"node": "/n", "writers": {}, "readers": {"/t": 1.5}}', 'readers must map'),
    ('{"node": "/n", "writers": {}}', 'readers must map'),
])
def test_malformed_reports_are_rejected_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_report(text)
