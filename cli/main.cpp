// hetero: run LLMs across the execution providers found at run time.
#include "commands.hpp"
#include "progress_bar.hpp"
#include "restart_output.hpp"

#include <hetero/crash_report.hpp>
#include <hetero/error.hpp>
#include <hetero/sdk/temp_files.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    // SIGINT / SIGTERM during a write (convert, gen-model, a cache) must not
    // leave its temporary file; commands with their own handlers replace this.
    hetero::sdk::remove_temp_files_on_signal();
    // A provider plugin that crashes is named before the process dies.
    hetero::report_plugin_crashes();
    hetero::cli::set_program_arguments(argv);
    CLI::App app{"hetero: run large language models across heterogeneous execution providers"};
    app.set_version_flag("--version", std::string("hetero ") + HETERO_VERSION);
    app.require_subcommand(1);
    hetero::cli::install_progress_bar();
    // The subcommands, in the order --help lists them.
    using namespace hetero::cli;
    for (void (*add)(CLI::App&) : {add_run_command, add_providers_command, add_plan_command, add_convert_command, add_quantize_command,
                                   add_bench_command, add_profile_command, add_simulate_command, add_perplexity_command,
                                   add_calibrate_command, add_chat_command, add_serve_command, add_embed_command})
        add(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "hetero: error: %s (see hetero --help)\n", e.what());
        return 2;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "hetero: error: %s\n", e.what());
        return 1;
    }
    return hetero::cli::exit_code();
}
