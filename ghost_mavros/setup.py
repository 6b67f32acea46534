"""ghost_mavros: MAVROS for Ghost (the mavros_bridge node), on PX4 or ArduPilot."""

from setuptools import find_packages, setup

package_name = 'ghost_mavros'

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
    description="MAVROS for Ghost: MAVROS's topics turned into Ghost's inputs.",
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': ['mavros_bridge = ghost_mavros.nodes.mavros_bridge:main'],
    },
)
