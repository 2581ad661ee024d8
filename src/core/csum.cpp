#include "ofld/core/csum.hpp"
