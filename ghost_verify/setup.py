"""Install ghost_verify, the bag verifier of Ghost, as an ament_python package."""

from setuptools import find_packages, setup

PACKAGE_NAME = 'ghost_verify'

setup(
    name=PACKAGE_NAME,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={PACKAGE_NAME: ['py.typed']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE_NAME]),
        ('share/' + PACKAGE_NAME, ['package.xml']),
    ],
    # Run-time dependencies (mcap, mcap-ros2-support, pyyaml, cryptography; no bag writer) are
    # declared in package.xml (rosdep keys, or PyPI-only pins in requirements-ros.txt).
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='Ghost developers',
    maintainer_email='dev@ghost-project.org',
    description='Re-check BAUD-v1, ERUR-v1 and the SHA-256 chain from a rosbag2 MCAP bag.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'verify_baud = ghost_verify.cli:verify_baud_main',
            'verify_erur = ghost_verify.cli:verify_erur_main',
            'trace_decisions = ghost_verify.cli:trace_decisions_main',
            'verify_all = ghost_verify.cli:verify_all_main',
            'ghost_verify = ghost_verify.cli:verify_all_main',
            'ghost_keygen = ghost_verify.keygen:main',
        ],
    },
)
