# Concatenates the OpenCL C sources (in the order given) into one C++ raw
# string, the source of one program, so the provider carries its kernels
# inside the .so.
#   cmake -DOUT=<file.cpp> -DNAME=<C++ name> -DSOURCES="a.cl;b.cl" -P embed_kernels.cmake
set(text "")
foreach(src IN LISTS SOURCES)
  file(READ "${src}" body)
  get_filename_component(name "${src}" NAME)
  string(APPEND text "// ---- ${name}\n${body}\n")
endforeach()
if(text MATCHES "\\)hetero_cl\"")
  message(FATAL_ERROR "kernel sources contain the raw-string delimiter")
endif()
file(WRITE "${OUT}.tmp"
  "// Generated from plugins/opencl/kernels/*.cl; do not edit.\n"
  "#include \"kernel_source.hpp\"\n"
  "namespace hetero::opencl {\n"
  "const char* const ${NAME} = R\"hetero_cl(\n${text})hetero_cl\";\n"
  "}\n")
# Only touch the output when it changed, so an unchanged tree does not rebuild.
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
