# ctest layers.namespaces_match_folders (docs/ARCHITECTURE.md: Layers): the
# code of a layer folder lives in that layer's namespace, and no namespace or namespace alias
# is named after another layer. Checked in src/<layer>/ and include/ofld/<layer>/:
#   * `namespace ofld::X…` must have X = the folder's layer (core also holds ofld::csum, the
#     checksum arithmetic, by its historic name);
#   * `namespace ofld::<layer>::Y` must not have Y = the name of another layer;
#   * `namespace Y = …` (an alias) must not be named after a layer unless it is that layer.
# Argument (-D): SRC, the source tree.
cmake_minimum_required(VERSION 3.20)
if(NOT DEFINED SRC)
  message(FATAL_ERROR "namespace_check: SRC not set")
endif()
set(layers core wire offload gso gro tunnel io tools daemon lab cli)
# Known exceptions, each one named: core's checksum arithmetic is ofld::csum; the lab's
# demo.cpp (helper D's, ofld demo) is still in ofld::daemon — not renamed this round.
set(allowed_core csum)
set(allowed_lab daemon)
set(bad "")
foreach(layer ${layers})
  file(GLOB files ${SRC}/src/${layer}/*.cpp ${SRC}/src/${layer}/*.hpp
       ${SRC}/include/ofld/${layer}/*.hpp)
  foreach(f ${files})
    # Namespace blocks (`namespace N {` ending the line) and aliases; one-line forward
    # declarations of a lower layer's names (`namespace ofld::gro { class Engine; }`) are fine.
    file(STRINGS ${f} lines REGEX "^[ ]*namespace ([A-Za-z_:]+ *\\{ *$|[a-z_]+ *= *[A-Za-z_:]+)")
    foreach(l ${lines})
      file(RELATIVE_PATH rel ${SRC} ${f})
      if(l MATCHES "^[ ]*namespace ofld::([a-z_]+)(::([a-z_]+))?")
        set(top ${CMAKE_MATCH_1})
        set(sub ${CMAKE_MATCH_3})
        if(NOT top STREQUAL layer AND NOT top IN_LIST allowed_${layer})
          list(APPEND bad "${rel}: '${l}' — folder ${layer}, namespace ofld::${top}")
        endif()
        if(sub AND sub IN_LIST layers AND NOT sub STREQUAL top)
          list(APPEND bad "${rel}: '${l}' — a namespace named after layer ${sub}")
        endif()
      elseif(l MATCHES "^[ ]*namespace ([a-z_]+) *= *([A-Za-z_:]+)")
        set(alias ${CMAKE_MATCH_1})
        set(target ${CMAKE_MATCH_2})
        if(alias IN_LIST layers AND NOT target MATCHES "^(::)?(ofld::)?${alias}$")
          list(APPEND bad "${rel}: '${l}' — alias named after layer ${alias}")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()
if(bad)
  list(JOIN bad "\n  " msg)
  message(FATAL_ERROR "namespaces that do not match their folders:\n  ${msg}")
endif()
message(STATUS "namespaces match their folders")
