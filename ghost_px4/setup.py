"""ghost_px4: PX4 for Ghost (ULog import and playback, the uXRCE-DDS bridge)."""

from setuptools import find_packages, setup

package_name = 'ghost_px4'
NODES = ('px4_bridge', 'px4_log_player', 'mission_setpoints')

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
    description='PX4 for Ghost: ULog import and playback, PX4 conversions, the live bridge.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            f'{node} = ghost_px4.nodes.{node}:main' for node in NODES
        ] + ['ghost_import = ghost_px4.ulog_import:main'],
    },
)
