// ofld/version.hpp — the version of libofld. Stable API.
#pragma once

namespace ofld {

/// Version of the libofld that the program runs with, "MAJOR.MINOR.PATCH" (the CMake
/// project version; the shared library's SONAME is libofld.so.MAJOR.MINOR while MAJOR is 0).
/// Static storage; never null.
const char* version() noexcept;

}  // namespace ofld
