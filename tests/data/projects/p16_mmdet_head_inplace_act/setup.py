from setuptools import find_packages, setup

setup(name="mmdet_lite", version="0.0.1", packages=find_packages(exclude=("configs", "tools")))
