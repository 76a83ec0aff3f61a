// Lists the providers an installed libhetero finds on its own: the plugins
// beside it (<prefix>/lib/hetero/plugins) and HETERO_PLUGIN_PATH.
#include <hetero/registry.hpp>

#include <cstdio>

int main() {
    hetero::Registry registry;
    if (registry.providers().empty()) {
        std::fprintf(stderr, "no provider found\n%s", registry.describe_search().c_str());
        return 1;
    }
    for (const hetero::Provider* p : registry.providers()) std::printf("%s %s\n", p->name().c_str(), p->path().c_str());
    return 0;
}
