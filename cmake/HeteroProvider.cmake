# hetero_add_provider(<name> SOURCES <file>... [EXPORTS <symbol>...]
#                     [DESTINATION <dir>] [COMPONENT <component>] [NO_INSTALL])
#
# Builds an execution provider: the MODULE libhetero-ep-<name>.so, linked with
# hetero::provider (the C ABI and SDK headers, hidden visibility, no
# STB_GNU_UNIQUE symbols with GCC, -Wl,--no-undefined and a version script
# exporting hetero_ep_init alone), so that it links nothing from the core,
# resolves every symbol at link time and exports one symbol. <name> is the
# provider's name in its ABI table: [a-z0-9_]+. The target is called
# hetero-ep-<name>; add include dirs, definitions and libraries to it as usual.
# EXPORTS names further extern "C" symbols the plugin exports on purpose
# (diagnostics its own tests look up with dlsym); the core never uses them.
#
# Installs it into DESTINATION, by default the plugin dir relative to the
# install prefix: ${HETERO_PLUGIN_SUBDIR} (lib/hetero/plugins), where a
# libhetero installed under the same prefix looks. NO_INSTALL skips that.
#
# The same file serves hetero's own build (plugins/*) and an installed hetero
# (find_package(hetero) includes it).
include_guard(GLOBAL)

function(hetero_add_provider name)
  cmake_parse_arguments(ARG "NO_INSTALL" "DESTINATION;COMPONENT" "SOURCES;EXPORTS" ${ARGN})
  if(NOT name MATCHES "^[a-z0-9_]+$")
    message(FATAL_ERROR "hetero_add_provider: the provider name '${name}' must match [a-z0-9_]+ "
                        "(it is the name in the ABI table and the <name> of libhetero-ep-<name>.so)")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "hetero_add_provider(${name}): no SOURCES given")
  endif()
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "hetero_add_provider(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET hetero::provider)
    message(FATAL_ERROR "hetero_add_provider(${name}): the target hetero::provider does not exist (call find_package(hetero) first)")
  endif()

  set(target hetero-ep-${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE hetero::provider)
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME hetero-ep-${name}
    SUFFIX ".so"
    C_VISIBILITY_PRESET hidden
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(ARG_EXPORTS)
    # The version script hetero::provider links with, plus these symbols.
    list(JOIN ARG_EXPORTS ";\n    " exports)
    set(map ${CMAKE_CURRENT_BINARY_DIR}/${target}.map)
    file(CONFIGURE OUTPUT ${map} CONTENT "{\n  global:\n    hetero_ep_init;\n    ${exports};\n  local:\n    *;\n};\n")
    set_target_properties(${target} PROPERTIES HETERO_PROVIDER_VERSION_SCRIPT ${map})
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${map})
  endif()

  if(DEFINED HETERO_BUILD_PLUGIN_DIR)
    # hetero's own build: plugins land where the uninstalled core looks
    # (build/lib/hetero/plugins), warnings are errors, one package per provider.
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${HETERO_BUILD_PLUGIN_DIR})
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${PROJECT_SOURCE_DIR}/sdk/hetero-ep.map)
    hetero_warnings(${target})
    if(NOT ARG_COMPONENT)
      set(ARG_COMPONENT ep_${name})
    endif()
  endif()

  if(ARG_NO_INSTALL)
    return()
  endif()
  if(NOT ARG_DESTINATION)
    if(DEFINED HETERO_PLUGIN_SUBDIR)
      set(ARG_DESTINATION ${HETERO_PLUGIN_SUBDIR})
    else()
      set(ARG_DESTINATION lib/hetero/plugins)
    endif()
  endif()
  if(ARG_COMPONENT)
    install(TARGETS ${target} LIBRARY DESTINATION ${ARG_DESTINATION} COMPONENT ${ARG_COMPONENT})
  else()
    install(TARGETS ${target} LIBRARY DESTINATION ${ARG_DESTINATION})
  endif()
endfunction()
