# -DHETERO_SANITIZE=ON: ASan + UBSan on everything (CI runs the unit tests so).
if(HETERO_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
# -DHETERO_SANITIZE_THREAD=ON: ThreadSanitizer on everything (CI runs the
# multi-threaded tests so: the CPU provider's thread pool, the session's
# per-device workers). It cannot be combined with ASan.
if(HETERO_SANITIZE_THREAD)
  if(HETERO_SANITIZE)
    message(FATAL_ERROR "HETERO_SANITIZE_THREAD and HETERO_SANITIZE cannot be combined")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
