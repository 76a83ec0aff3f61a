// hetero_jinja_render: renders chat templates with hetero's Jinja engine,
// for the differential test against Python's Jinja2 (jinja_differential.py).
//
//   hetero_jinja_render TEMPLATE CONTEXT.json      prints the rendered text
//   hetero_jinja_render --batch JOBS.json          JOBS: [{"template": path, "context": path}, ...];
//                                                  prints [{"ok": bool, "output" or "error": text}, ...]
#include <hetero/chat/jinja_chat_template.hpp>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

namespace {

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

nlohmann::json render_one(const std::string& template_path, const std::string& context_path) {
    try {
        hetero::JinjaChatTemplate t(read_file(template_path));
        return {{"ok", true}, {"output", t.render_json(read_file(context_path))}};
    } catch (const hetero::ChatTemplateError& e) {
        return {{"ok", false}, {"error", e.what()}};
    }
}

}  // namespace

int main(int argc, char** argv) {
    try {
        if (argc == 3 && std::string(argv[1]) == "--batch") {
            const nlohmann::json jobs = nlohmann::json::parse(read_file(argv[2]));
            nlohmann::json results = nlohmann::json::array();
            for (const auto& job : jobs) results.push_back(render_one(job.at("template"), job.at("context")));
            std::cout << results.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
            return 0;
        }
        if (argc == 3) {
            const nlohmann::json r = render_one(argv[1], argv[2]);
            if (!r["ok"].get<bool>()) {
                std::cerr << r["error"].get<std::string>() << "\n";
                return 1;
            }
            std::cout << r["output"].get<std::string>();
            return 0;
        }
        std::cerr << "usage: hetero_jinja_render TEMPLATE CONTEXT.json | --batch JOBS.json\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "hetero_jinja_render: " << e.what() << "\n";
        return 2;
    }
}
