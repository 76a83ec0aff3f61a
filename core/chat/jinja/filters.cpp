// The filter table: the names Jinja2 knows, each bound to its family's
// function (filters_string.cpp, filters_list.cpp, filters_number.cpp,
// filters_dict.cpp) or to the refusal of a filter this engine leaves out.
#include "filters.hpp"

#include "errors.hpp"
#include "filters_parts.hpp"
#include "named_table.hpp"

#include <utility>

namespace hetero::jinja {

namespace {

using namespace filters;

// Jinja2 filters chat templates do not use; Renderer::filter names them in its error.
Value f_unsupported(Renderer&, const Value&, CallArgs&) { throw RenderError("TemplateRuntimeError", "filter not supported"); }

const std::pair<const char*, FilterFn> kFilters[] = {
    {"abs", f_abs},
    {"attr", f_attr},
    {"batch", f_batch},
    {"capitalize", f_capitalize},
    {"center", f_center},
    {"count", f_length},
    {"d", f_default},
    {"default", f_default},
    {"dictsort", f_dictsort},
    {"e", f_escape},
    {"escape", f_escape},
    {"filesizeformat", f_unsupported},
    {"first", f_first},
    {"float", f_float},
    {"forceescape", f_forceescape},
    {"format", f_format},
    {"groupby", f_unsupported},
    {"indent", f_indent},
    {"int", f_int},
    {"join", f_join},
    {"last", f_last},
    {"length", f_length},
    {"list", f_list},
    {"lower", f_lower},
    {"items", f_items},
    {"map", f_map},
    {"min", f_min},
    {"max", f_max},
    {"pprint", f_unsupported},
    {"random", f_unsupported},
    {"reject", f_reject},
    {"rejectattr", f_rejectattr},
    {"replace", f_replace},
    {"reverse", f_reverse},
    {"round", f_round},
    {"safe", f_safe},
    {"select", f_select},
    {"selectattr", f_selectattr},
    {"slice", f_slice},
    {"sort", f_sort},
    {"string", f_string},
    {"striptags", f_unsupported},
    {"sum", f_sum},
    {"title", f_title},
    {"trim", f_trim},
    {"truncate", f_truncate},
    {"unique", f_unique},
    {"upper", f_upper},
    {"urlencode", f_unsupported},
    {"urlize", f_unsupported},
    {"wordcount", f_wordcount},
    {"wordwrap", f_unsupported},
    {"xmlattr", f_unsupported},
    {"tojson", f_tojson},
};

}  // namespace

FilterFn find_filter(std::string_view name) { return find_by_name(kFilters, name); }

bool has_filter(std::string_view name) { return find_filter(name) != nullptr; }

bool filter_unsupported(std::string_view name) { return find_filter(name) == f_unsupported; }

}  // namespace hetero::jinja
