# Warnings are errors on the project's own code.
function(hetero_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wno-unused-parameter)
  # GCC 12's -Wrestrict / -Wstringop-overflow report false positives inside
  # libstdc++'s std::string and std::vector at -O3 (GCC bugs 105329, 105651).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict -Wno-stringop-overflow>)
  endif()
endfunction()
