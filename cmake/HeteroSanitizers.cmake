# -DHETERO_SANITIZE=ON: ASan + UBSan on everything (CI runs the unit tests so).
if(HETERO_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
