"""Install ghost_bag, Ghost's one home for reading and writing rosbag2 MCAP bags."""

from setuptools import find_packages, setup

PACKAGE_NAME = 'ghost_bag'

setup(
    name=PACKAGE_NAME,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={PACKAGE_NAME: ['py.typed']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE_NAME]),
        ('share/' + PACKAGE_NAME, ['package.xml']),
    ],
    # Run-time dependencies are declared in package.xml (rosdep keys, or PyPI-only pins in
    # requirements-ros.txt); the writer's (rosbags, numpy) by the packages that write.
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='Ghost developers',
    maintainer_email='dev@ghost-project.org',
    description='Read and write rosbag2 MCAP bags: layout, damage-diagnosing reader, writer, '
                'run manifest.',
    license='Apache-2.0',
    tests_require=['pytest'],
)
