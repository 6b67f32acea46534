"""Install ghost_core, the pure-Python core of Ghost, as an ament_python package."""

from setuptools import find_packages, setup

PACKAGE_NAME = 'ghost_core'

setup(
    name=PACKAGE_NAME,
    version='0.1.0',
    packages=find_packages(exclude=['test']),
    package_data={PACKAGE_NAME: ['py.typed']},
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + PACKAGE_NAME]),
        ('share/' + PACKAGE_NAME, ['package.xml']),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='Ghost developers',
    maintainer_email='dev@ghost-project.org',
    description='Pure-Python core of Ghost: contracts, content addresses, reference policies.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={'console_scripts': []},
)
