"""Smoke run of the generated-code benchmark (bench/codegen.py --quick at tiny size).

No DDS. No timing is asserted: timings are benchmark numbers, not test results. What is
asserted is that every generator has its row, both forms were timed, and the two forms of each
gave the same results on every input (else the row would compare different work).
"""

import json
import math
from pathlib import Path
import subprocess
import sys

BENCH = Path(__file__).resolve().parents[1]
GENERATORS = ('contracts', 'wire parse', 'wire write', 'hash_form (rclpy)', 'hash_form (dict)',
              'from_msg_dict', 'cdr decode', 'cdr decode+json', 'msg_fields')


def test_codegen_times_both_forms_of_every_generator_on_the_same_results(tmp_path) -> None:
    """codegen.py --quick: a row per generator, both forms agree, the table is printed."""
    out = tmp_path / 'codegen.json'
    done = subprocess.run([sys.executable, str(BENCH / 'codegen.py'), '--quick', '--repeats', '1',
                           '--bag-cycles', '10', '--json', str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())['codegen']
    assert result['keep_ratio'] == 1.5
    assert result['bag_messages'] == 60
    rows = {row['generator']: row for row in result['rows']}
    assert tuple(rows) == GENERATORS
    for name, row in rows.items():
        assert row['forms_agree'] is True, (name, row.get('error'))
        assert row['calls'] >= 1
        for key in ('generated_us', 'plain_us', 'ratio'):
            assert math.isfinite(row[key]) and row[key] > 0, (name, key)
        assert row['package_form'] in ('generated', 'plain')
        assert row['generation_pays'] is (row['ratio'] >= 1.5)
    assert all(f' {name} |' in done.stdout for name in GENERATORS), done.stdout
