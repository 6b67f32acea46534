"""ghost_nodes: the closed loop as ROS 2 nodes."""

from setuptools import find_packages, setup

package_name = 'ghost_nodes'
NODES = ('scenario', 'self_assessor', 'forward_predictor', 'outcome_evaluator', 'calibrator',
         'decision_policy', 'action_emitter', 'recorder', 'input_player', 'monitor',
         'command_gate')

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
    ],
    package_data={package_name: ['py.typed']},
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='Ghost developers',
    maintainer_email='dev@ghost-project.org',
    description='The closed loop as ROS 2 nodes.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            f'{node} = ghost_nodes.nodes.{node}:main' for node in NODES
        ] + ['ghost_agent = ghost_nodes.agent_process:main'],
    },
)
