"""Build hook of the ofld Python package.

The package is pure Python (ctypes over libofld's C API, include/ofld/ofld.h); what it needs
at run time is libofld.so. At build time this copies the library into the package, so that
the installed package works without LD_LIBRARY_PATH:
  * OFLD_LIBRARY=/path/to/libofld.so.X (a built or installed library), or else
  * OFLD_BUILD_DIR (default: ../build/release next to this directory): the library is built
    there with CMake (`cmake --build DIR --target ofld`), configuring the tree first if needed.
  * OFLD_NO_BUNDLE=1: bundle nothing; the package then loads the system's libofld.so.
"""
import glob
import os
import shutil
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


def _find_or_build_library():
    lib = os.environ.get("OFLD_LIBRARY")
    if lib:
        return os.path.realpath(lib)
    build = os.environ.get("OFLD_BUILD_DIR", os.path.join(SRC, "build", "release"))
    if not os.path.exists(os.path.join(SRC, "CMakeLists.txt")):
        return None
    if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
        subprocess.check_call(["cmake", "-S", SRC, "-B", build, "-G", "Ninja",
                               "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
    subprocess.check_call(["cmake", "--build", build, "--target", "ofld"])
    libs = sorted(glob.glob(os.path.join(build, "libofld.so.*.*.*")))
    return os.path.realpath(libs[-1]) if libs else None


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        if os.environ.get("OFLD_NO_BUNDLE"):
            return
        lib = _find_or_build_library()
        if not lib:
            raise SystemExit("ofld: libofld.so not found and not buildable (set OFLD_LIBRARY)")
        dest = os.path.join(self.build_lib, "ofld", "libofld.so")
        shutil.copyfile(lib, dest)


setup(cmdclass={"build_py": BuildPyWithLibrary})
