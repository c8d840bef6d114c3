"""Build hook: the wheel carries the runtime folders (dbt project, templates, expectations, spark_conf) under
flows/_data/, where flows/__init__.py finds them when the package runs outside a checkout.

The folders stay at the top level of the repository (dbt, Prefect and the docs refer to them there);
everything else about the package is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# (folder, glob patterns of the files the code reads at run time); dbt's target/ and logs/ never ship
RUNTIME_FILES = {
    "dbt_project": [
        "dbt_project.yml",
        "profiles.yml",
        "models/**/*.sql",
        "models/**/*.yml",
        "macros/**/*.sql",
        "seeds/*.csv",
        "seeds/*.yml",
        "tests/**/*.sql",
    ],
    "templates": ["**/*.j2"],
    "expectations": ["*.json"],
    "spark_conf": ["log4j2.properties"],  # a local Spark session's JVM logging (flows/warehouse/engines.py)
}


class BuildPyWithRuntimeFiles(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install runs from the checkout, which has the folders
        data = Path(self.build_lib) / "flows" / "_data"
        shutil.rmtree(data, ignore_errors=True)  # a reused build/ must not keep files removed since
        for folder, patterns in RUNTIME_FILES.items():
            for pattern in patterns:
                for source in sorted((ROOT / folder).glob(pattern)):
                    target = data / source.relative_to(ROOT)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)


setup(cmdclass={"build_py": BuildPyWithRuntimeFiles})
