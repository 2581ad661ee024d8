// ofld::version(): OFLD_VERSION_STRING comes from the build (CMakeLists.txt, project version).
#include "ofld/version.hpp"

#ifndef OFLD_VERSION_STRING
#error "OFLD_VERSION_STRING must be defined by the build"
#endif

namespace ofld {

const char* version() noexcept { return OFLD_VERSION_STRING; }

}  // namespace ofld
