"""ghost_ardupilot: ArduPilot for Ghost (DataFlash import, ArduPilot's own events)."""

from setuptools import find_packages, setup

package_name = 'ghost_ardupilot'
NODES = ('ap_bridge', 'ap_log_player', 'ap_mission')

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
    description='ArduPilot for Ghost: DataFlash logs imported as input bags or played as '
                "AP_DDS would, ArduPilot's own EKF flags and events, the AP_DDS bridge.",
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [f'{node} = ghost_ardupilot.nodes.{node}:main' for node in NODES],
    },
)
