# Compile every core source for Cortex-M0+ (RP2040) with Debian's
# arm-none-eabi-gcc and picolibc headers, warnings as errors, then print the
# code size. Run by ctest via `cmake -P`. The nanopb runtime (pb_encode.c,
# pb_decode.c, pb_common.c) is not in Debian's packages, so it is part of the
# figure only when TS_NANOPB_RUNTIME_DIR names a nanopb source tree; the Zephyr
# build links it from the west module.
string(REPLACE "|" ";" INCLUDES "${INCLUDES}")
string(REPLACE "|" ";" SOURCES "${SOURCES}")
file(REMOVE_RECURSE ${OUT_DIR})
file(MAKE_DIRECTORY ${OUT_DIR}/nanopb)
# Only nanopb's own headers, not the host's /usr/include.
file(GLOB _pb_headers ${NANOPB_INCLUDE_DIR}/pb.h ${NANOPB_INCLUDE_DIR}/pb_*.h)
file(COPY ${_pb_headers} DESTINATION ${OUT_DIR}/nanopb)

set(_flags --specs=picolibc.specs -mcpu=cortex-m0plus -mthumb -Os -std=c99
    -Wall -Wextra -Werror -ffreestanding -ffunction-sections -fdata-sections)
foreach(_inc ${INCLUDES} ${OUT_DIR}/nanopb)
  list(APPEND _flags -I${_inc})
endforeach()

set(_objects)
foreach(_src ${SOURCES} ${GENERATED})
  get_filename_component(_name ${_src} NAME_WE)
  set(_obj ${OUT_DIR}/${_name}.o)
  execute_process(COMMAND ${ARM_GCC} ${_flags} -c ${_src} -o ${_obj}
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err OUTPUT_VARIABLE _out)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "freestanding compile failed for ${_src}:\n${_out}${_err}")
  endif()
  list(APPEND _objects ${_obj})
endforeach()

execute_process(COMMAND ${ARM_SIZE} -t ${_objects}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _size ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "arm-none-eabi-size failed: ${_err}")
endif()
string(REPLACE "${OUT_DIR}/" "" _size "${_size}")
if(WITH_RUNTIME)
  set(_what "nanopb runtime included")
else()
  set(_what "nanopb runtime not included")
endif()
set(_report "firmware core for cortex-m0plus (-Os, bytes; ${_what}):\n${_size}")
file(WRITE ${OUT_DIR}/size.txt "${_report}")
message("${_report}")
