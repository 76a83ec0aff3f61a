// The built-in filters by family (core/chat/jinja/filters*.cpp only): the
// helpers they share (filters_common.cpp) and each filter's function, which
// filters.cpp's table names. Each takes the renderer, the filtered value and
// the call's arguments, as FilterFn does.
#pragma once

#include "filters.hpp"
#include "value.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace hetero::jinja::filters {

// --- shared helpers (filters_common.cpp) ---
// markupsafe.soft_str: strings (Markup included) as they are, others through str().
Value soft_str(const Value& v);
int64_t int_param(const Value& v, const char* what);
Value generator(List items);
// make_attrgetter: "a.b.0" walks items and attributes as Jinja2 does.
Value attr_path(Renderer& r, const Value& item, const Value& attribute, const Value* fallback = nullptr);
Value lower_if_string(const Value& v);

// --- strings (filters_string.cpp) ---
Value f_capitalize(Renderer&, const Value&, CallArgs&);
Value f_center(Renderer&, const Value&, CallArgs&);
Value f_escape(Renderer&, const Value&, CallArgs&);
Value f_forceescape(Renderer&, const Value&, CallArgs&);
Value f_format(Renderer&, const Value&, CallArgs&);
Value f_indent(Renderer&, const Value&, CallArgs&);
Value f_lower(Renderer&, const Value&, CallArgs&);
Value f_upper(Renderer&, const Value&, CallArgs&);
Value f_replace(Renderer&, const Value&, CallArgs&);
Value f_safe(Renderer&, const Value&, CallArgs&);
Value f_string(Renderer&, const Value&, CallArgs&);
Value f_title(Renderer&, const Value&, CallArgs&);
Value f_tojson(Renderer&, const Value&, CallArgs&);
Value f_trim(Renderer&, const Value&, CallArgs&);
Value f_truncate(Renderer&, const Value&, CallArgs&);
Value f_wordcount(Renderer&, const Value&, CallArgs&);

// --- sequences, sorting included (filters_list.cpp) ---
Value f_batch(Renderer&, const Value&, CallArgs&);
Value f_length(Renderer&, const Value&, CallArgs&);
Value f_first(Renderer&, const Value&, CallArgs&);
Value f_last(Renderer&, const Value&, CallArgs&);
Value f_join(Renderer&, const Value&, CallArgs&);
Value f_list(Renderer&, const Value&, CallArgs&);
Value f_map(Renderer&, const Value&, CallArgs&);
Value f_select(Renderer&, const Value&, CallArgs&);
Value f_reject(Renderer&, const Value&, CallArgs&);
Value f_selectattr(Renderer&, const Value&, CallArgs&);
Value f_rejectattr(Renderer&, const Value&, CallArgs&);
Value f_min(Renderer&, const Value&, CallArgs&);
Value f_max(Renderer&, const Value&, CallArgs&);
Value f_reverse(Renderer&, const Value&, CallArgs&);
Value f_slice(Renderer&, const Value&, CallArgs&);
Value f_sort(Renderer&, const Value&, CallArgs&);
Value f_dictsort(Renderer&, const Value&, CallArgs&);
Value f_sum(Renderer&, const Value&, CallArgs&);
Value f_unique(Renderer&, const Value&, CallArgs&);

// --- numbers (filters_number.cpp) ---
Value f_abs(Renderer&, const Value&, CallArgs&);
Value f_int(Renderer&, const Value&, CallArgs&);
Value f_float(Renderer&, const Value&, CallArgs&);
Value f_round(Renderer&, const Value&, CallArgs&);

// --- mappings and attributes (filters_dict.cpp) ---
Value f_attr(Renderer&, const Value&, CallArgs&);
Value f_default(Renderer&, const Value&, CallArgs&);
Value f_items(Renderer&, const Value&, CallArgs&);

}  // namespace hetero::jinja::filters
