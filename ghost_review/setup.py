"""Install ghost_review, the flight review of Ghost, as an ament_python package."""

from setuptools import find_packages, setup

PACKAGE_NAME = 'ghost_review'

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
    description='Flight review: what Ghost decided, when and why, as HTML, CSV and a layout.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'ghost_review = ghost_review.cli:main',
        ],
    },
)
