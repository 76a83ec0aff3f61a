// Each subcommand registers itself on the app and runs from its callback.
#pragma once

#include <CLI/CLI.hpp>

namespace hetero::cli {

void add_run_command(CLI::App& app);
void add_providers_command(CLI::App& app);
void add_plan_command(CLI::App& app);
void add_convert_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_bench_command(CLI::App& app);  // also gen-model
void add_profile_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_perplexity_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_embed_command(CLI::App& app);

// The process exit code a command asks for (0 unless set; e.g. 130 after SIGINT).
int& exit_code();

}  // namespace hetero::cli
