"""Build hook of the ofld Python package.

The package calls libofld's C API (include/ofld/ofld.h): with ctypes for most entry points,
and through a small pybind11 module, ofld._native (ofld/_native.cpp), for the batch calls whose
cost is per frame (GRO receive/take, GSO; docs/python.md has the measurement). What it needs at
run time is libofld.so. At build time this copies the library into the package under its SONAME
(libofld.so.MAJOR.MINOR), where ofld._native finds it ($ORIGIN) and ctypes loads it, so that the
installed package works without LD_LIBRARY_PATH:
  * OFLD_LIBRARY=/path/to/libofld.so.X (a built or installed library), or else
  * OFLD_BUILD_DIR (default: ../build/release next to this directory): the library is built
    there with CMake (`cmake --build DIR --target ofld_shared`), configuring the tree first if
    needed.
  * OFLD_NO_BUNDLE=1: bundle nothing; the package then uses the system's libofld.so (Debian
    package or `cmake --install`), and the extension links it from the default search path.
Build requirements, all Debian packages (nothing from PyPI): python3-setuptools,
python3-pybind11 + pybind11-dev, python3-dev, a C++ compiler.
"""
import glob
import os
import shutil
import subprocess

from pybind11.setup_helpers import Pybind11Extension
from setuptools import setup
from setuptools.command.build_ext import build_ext

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
    subprocess.check_call(["cmake", "--build", build, "--target", "ofld_shared"])
    libs = sorted(glob.glob(os.path.join(build, "libofld.so.*.*.*")))
    return os.path.realpath(libs[-1]) if libs else None


def _soname(path):
    out = subprocess.run(["objdump", "-p", path], check=True, capture_output=True, text=True)
    for line in out.stdout.splitlines():
        if line.split()[:1] == ["SONAME"]:
            return line.split()[1]
    raise SystemExit(f"ofld: {path} has no SONAME")


class BuildExtWithLibrary(build_ext):
    """Bundle libofld (unless OFLD_NO_BUNDLE) and link ofld._native against it."""

    def run(self):
        pkg_dir = os.path.join(self.build_lib, "ofld")
        os.makedirs(pkg_dir, exist_ok=True)
        if not os.environ.get("OFLD_NO_BUNDLE"):
            lib = _find_or_build_library()
            if not lib:
                raise SystemExit("ofld: libofld.so not found and not buildable (set OFLD_LIBRARY)")
            soname = _soname(lib)
            shutil.copyfile(lib, os.path.join(pkg_dir, soname))
            # the link-time name (-lofld) resolves to the bundled copy
            link = os.path.join(self.build_temp, "ofld-link")
            os.makedirs(link, exist_ok=True)
            for name in ("libofld.so", soname):
                dst = os.path.join(link, name)
                if os.path.lexists(dst):
                    os.remove(dst)
                os.symlink(os.path.join(os.path.abspath(pkg_dir), soname), dst)
            for ext in self.extensions:
                ext.library_dirs.insert(0, os.path.abspath(link))
        super().run()


include = os.path.join(SRC, "include")
native = Pybind11Extension(
    "ofld._native", ["ofld/_native.cpp"],
    include_dirs=[include] if os.path.exists(os.path.join(include, "ofld", "ofld.h")) else [],
    libraries=["ofld"], runtime_library_dirs=["$ORIGIN"], cxx_std=17,
    extra_compile_args=["-O2", "-Wall", "-Wextra"])

setup(ext_modules=[native], cmdclass={"build_ext": BuildExtWithLibrary})
