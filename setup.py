"""Builds the opscope package's extension module with CMake, for pip (see pyproject.toml).

The module is the CMake target opscope_python (src/python/CMakeLists.txt), built against the
interpreter that runs pip; this copies it, with the package's Python files, into the wheel.
The CMake build goes under pip's build folder, or into OPSCOPE_CMAKE_BUILD_DIR when set (a
tree already configured, e.g. the tests' build/, to reuse what it has built).
"""
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("OPSCOPE_CMAKE_BUILD_DIR") or os.path.join(
            os.path.abspath(self.build_temp), "cmake")
        if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
            configure = [
                "cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja",
                "-DCMAKE_BUILD_TYPE=Release", "-DOPSCOPE_BUILD_TESTS=OFF",
                "-DOPSCOPE_BUILD_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}",
            ]
            if shutil.which("ccache"):
                configure.append("-DCMAKE_CXX_COMPILER_LAUNCHER=ccache")
            subprocess.run(configure, check=True)
        jobs = os.environ.get("OPSCOPE_JOBS", "2")
        subprocess.run(["cmake", "--build", build_dir, "-j", jobs, "--target", "opscope_python"],
                       check=True)
        built = os.path.join(build_dir, "python", "opscope",
                             "_opscope" + sysconfig.get_config_var("EXT_SUFFIX"))
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built, target)


setup(
    packages=["opscope"],
    package_dir={"opscope": "src/python/opscope"},
    package_data={"opscope": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("opscope._opscope", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    # setuptools' own build folder beside the command line's CMake tree, not inside it.
    options={"build": {"build_base": "build-pip"}},
    zip_safe=False,
)
