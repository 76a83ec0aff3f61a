/* hetero-plugin-probe FILE [KEY=VALUE ...]: loads one provider plugin the way
 * the registry does (dlopen, hetero_ep_init, create with the options,
 * destroy) in a process of its own, so that a plugin that crashes, hangs or
 * exits while loading takes only this process down. Prints "ok" when loading
 * returned, whatever it answered (refusals are the registry's to report);
 * the registry reads the verdict from that line, the exit status and the
 * time taken. */
#include <hetero/ep_api.h>

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void host_log(void* user, int level, const char* provider, const char* message) {
    (void)user;
    (void)level;
    (void)provider;
    (void)message;
}

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hetero-plugin-probe FILE [KEY=VALUE ...]\n");
        return 2;
    }
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (lib) {
        hetero_ep_init_fn init = (hetero_ep_init_fn)dlsym(lib, HETERO_EP_ENTRY_SYMBOL);
        if (init) {
            static const hetero_host_api host = {
                .struct_size = sizeof(hetero_host_api), .abi_version = HETERO_ABI_VERSION, .host_ctx = NULL, .log = &host_log};
            const char* reason = NULL;
            const hetero_ep_api* api = init(&host, HETERO_ABI_VERSION, &reason);
            if (api && HETERO_ABI_MAJOR_OF(api->abi_version) == HETERO_ABI_VERSION_MAJOR && api->struct_size >= offsetof(hetero_ep_api, destroy) + sizeof(void*) &&
                api->create && api->destroy) {
                hetero_option options[64];
                size_t n = 0;
                for (int i = 2; i < argc && n < 64; ++i) {
                    char* eq = strchr(argv[i], '=');
                    if (!eq) continue;
                    *eq = '\0';
                    options[n].key = argv[i];
                    options[n].value = eq + 1;
                    ++n;
                }
                hetero_ep* ep = NULL;
                if (api->create(options, n, &ep) == HETERO_OK && ep) api->destroy(ep);
            }
        }
    }
    printf("ok\n");
    fflush(stdout);
    if (lib) dlclose(lib); /* a destructor that crashes is reported too */
    return 0;
}
