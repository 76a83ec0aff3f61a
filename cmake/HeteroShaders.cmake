# Compiles GLSL compute shaders to SPIR-V at build time and embeds the SPIR-V
# in a target as uint32_t arrays, so a provider ships as one .so.
#
#   hetero_add_shader(<target> <name> <source.comp> [DEFINES A=1 B ...] [DEPENDS files...])
#
# defines `extern const uint32_t hetero_spv_<name>[]` and
# `extern const size_t hetero_spv_<name>_words` in the generated source.

if(CMAKE_SCRIPT_MODE_FILE)
  # Script mode: turn SPV (a .spv file) into CPP defining the array NAME.
  file(READ "${SPV}" hex HEX)
  string(LENGTH "${hex}" hex_len)
  math(EXPR words "${hex_len} / 8")
  # SPIR-V words are little-endian in the file; swap bytes into uint32 literals.
  string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," body "${hex}")
  string(REGEX REPLACE "(([^,]*,){8})" "\\1\n" body "${body}")
  file(WRITE "${CPP}"
    "// Generated from ${SRC}; do not edit.\n#include <cstddef>\n#include <cstdint>\n"
    "extern const uint32_t hetero_spv_${NAME}[];\nextern const size_t hetero_spv_${NAME}_words;\n"
    "alignas(4) const uint32_t hetero_spv_${NAME}[] = {\n${body}\n};\n"
    "const size_t hetero_spv_${NAME}_words = ${words};\n")
  return()
endif()

find_program(HETERO_GLSLANG glslangValidator REQUIRED)
set(HETERO_SHADERS_MODULE ${CMAKE_CURRENT_LIST_FILE})
# Shaders include the SDK's language-neutral headers (hetero/sdk/block_layout.h).
get_filename_component(HETERO_SHADERS_SDK_INCLUDE ${CMAKE_CURRENT_LIST_DIR}/../sdk/include ABSOLUTE)

function(hetero_add_shader target name source)
  cmake_parse_arguments(ARG "" "" "DEFINES;DEPENDS" ${ARGN})
  set(out_dir ${CMAKE_CURRENT_BINARY_DIR}/spirv)
  set(spv ${out_dir}/${name}.spv)
  set(cpp ${out_dir}/${name}.spv.cpp)
  set(defs)
  foreach(d IN LISTS ARG_DEFINES)
    list(APPEND defs -D${d})
  endforeach()
  get_filename_component(src_abs ${source} ABSOLUTE)
  get_filename_component(src_dir ${src_abs} DIRECTORY)
  add_custom_command(
    OUTPUT ${spv}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out_dir}
    COMMAND ${HETERO_GLSLANG} -V --target-env vulkan1.2 -S comp -I${src_dir} -I${HETERO_SHADERS_SDK_INCLUDE} ${defs} -o ${spv} ${src_abs}
    DEPENDS ${src_abs} ${ARG_DEPENDS}
    COMMENT "SPIR-V ${name}"
    VERBATIM)
  add_custom_command(
    OUTPUT ${cpp}
    COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DCPP=${cpp} -DNAME=${name} -DSRC=${source} -P ${HETERO_SHADERS_MODULE}
    DEPENDS ${spv} ${HETERO_SHADERS_MODULE}
    VERBATIM)
  target_sources(${target} PRIVATE ${cpp})
endfunction()
