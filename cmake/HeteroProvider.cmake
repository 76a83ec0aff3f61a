# hetero_add_provider(<name> SOURCES ...) builds libhetero-ep-<name>.so into the
# build tree's plugin dir and installs it into <prefix>/lib/hetero/plugins.
# Providers link nothing from core; only hetero_ep_init is exported.
function(hetero_add_provider name)
  cmake_parse_arguments(ARG "" "" "SOURCES" ${ARGN})
  set(target hetero-ep-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE hetero_sdk)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    LIBRARY_OUTPUT_DIRECTORY ${HETERO_BUILD_PLUGIN_DIR}
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # No STB_GNU_UNIQUE symbols: they would pin the plugin in memory after dlclose.
  target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
  target_link_options(${target} PRIVATE -Wl,--no-undefined -Wl,-z,defs)
  hetero_warnings(${target})
  install(TARGETS ${target} LIBRARY DESTINATION ${HETERO_PLUGIN_SUBDIR})
endfunction()
