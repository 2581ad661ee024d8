# ctest layers.upward_include_refused (docs/ARCHITECTURE.md: Layers): compiles two probes with
# one layer's own include directories (the INCLUDE_DIRECTORIES of its target):
#   UPWARD — includes a header of a layer above; it must fail, and for the reason that the
#            header is not visible (not some unrelated error);
#   DOWNWARD — includes a header of a layer beneath; it must compile (so the check can fail).
# Arguments (-D): CXX, INCLUDE_DIRS (|-separated), UPWARD, DOWNWARD (header names), WORK (a
# scratch directory), LAYER (for messages).
foreach(v CXX INCLUDE_DIRS UPWARD DOWNWARD WORK LAYER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "layer_probe: ${v} not set")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK})
set(flags -std=c++20 -fsyntax-only)
string(REPLACE "|" ";" INCLUDE_DIRS "${INCLUDE_DIRS}")
foreach(d ${INCLUDE_DIRS})
  list(APPEND flags -I${d})
endforeach()

function(probe header out_rc out_err)
  string(MAKE_C_IDENTIFIER ${header} id)
  set(src ${WORK}/${LAYER}_${id}.cpp)
  file(WRITE ${src} "#include \"${header}\"\nint main() { return 0; }\n")
  execute_process(COMMAND ${CXX} ${flags} ${src} RESULT_VARIABLE rc ERROR_VARIABLE err
                  OUTPUT_QUIET)
  set(${out_rc} ${rc} PARENT_SCOPE)
  set(${out_err} "${err}" PARENT_SCOPE)
endfunction()

probe(${DOWNWARD} rc err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "layer ${LAYER}: including ${DOWNWARD} (a layer beneath) failed:\n${err}")
endif()
message(STATUS "layer ${LAYER}: ${DOWNWARD} (beneath) compiles")

probe(${UPWARD} rc err)
if(rc EQUAL 0)
  message(FATAL_ERROR "layer ${LAYER}: including ${UPWARD} (a layer above) compiled; "
                      "the layer's include directories expose layers above it")
endif()
if(NOT err MATCHES "${UPWARD}: No such file or directory|'${UPWARD}' file not found")
  message(FATAL_ERROR "layer ${LAYER}: including ${UPWARD} failed, but not because the header "
                      "is invisible:\n${err}")
endif()
message(STATUS "layer ${LAYER}: ${UPWARD} (above) refused: not visible")
