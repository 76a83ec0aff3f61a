// Every provider built in this tree, loaded once for the whole test binary.
#pragma once

#include <hetero/registry.hpp>

namespace hetero::test {

inline Registry& build_tree_registry() {
    static Registry reg([] {
        RegistryOptions o;
        o.use_default_dirs = false;
        o.plugin_dirs = {HETERO_BUILD_PLUGIN_DIR};
        return o;
    }());
    return reg;
}

}  // namespace hetero::test
